//! `cordon run` and `cordon explain`: options → policy → plan → launcher.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use cordon_launch::{Forward, Launcher, RunRequest, RunStatus, SeatbeltBackend, SeatbeltConfig};
use cordon_policy::Overrides;
use cordon_policy::PlaceholderKind;
use cordon_policy::{Network, Plan, PolicyError};

use crate::cli::{ExplainArgs, JailOptions, NetworkArg, PlatformArg, RunArgs};
use crate::context::Context;
use crate::error::CliError;

/// The plan for these options, and the context it was made in. With `prepare_caches` (a run,
/// not `explain`), the plan comes from the launcher's planning (`Launcher::plan`), which makes
/// the workspace's private toolchain cache and applies its size bound; its warnings are
/// printed.
pub fn plan_for(options: &JailOptions, prepare_caches: bool) -> Result<(Context, Plan), CliError> {
    let ctx = Context::from_process(options.cwd.as_deref())?;
    let mut overrides = Overrides {
        profile: options.profile,
        network: options.network.map(|n| match n {
            NetworkArg::Deny => Network::Denied,
            NetworkArg::Allow => Network::Allowed,
            NetworkArg::Proxy => Network::Proxy,
        }),
        allow_hosts: options.allow_host.clone(),
        pass_env: options.pass_env.clone(),
        timeout_secs: options.timeout,
        home: options.home.map(|h| match h {
            crate::cli::HomeArg::Hidden => cordon_policy::HomeMode::Hidden,
            crate::cli::HomeArg::Visible => cordon_policy::HomeMode::Visible,
        }),
        ..Overrides::default()
    };
    for path in &options.read {
        let path = if path.starts_with("~") {
            path.clone()
        } else {
            std::path::absolute(path).map_err(CliError::CurrentDir)?
        };
        overrides.read.push(path);
    }
    for dir in &options.write {
        overrides
            .writable
            .push(std::path::absolute(dir).map_err(CliError::CurrentDir)?);
    }
    for pair in &options.env {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(PolicyError::InvalidOverride {
                key: "--env".into(),
                why: format!("{pair:?} is not KEY=VALUE"),
            }
            .into());
        };
        overrides.set_env.push((key.to_owned(), value.to_owned()));
    }
    let effective = ctx.effective(&overrides)?;
    let mut plan = if prepare_caches {
        // A cache that cannot be made is not a reason to refuse the command: it runs with the
        // read-only home it would have had without caches, and says so.
        let (plan, warnings) = ctx.plan_for_run(&effective.policy)?;
        for w in warnings {
            eprintln!("cordon: {w}");
        }
        plan
    } else {
        ctx.plan(&effective.policy)?
    };
    plan.workspace_mode = options.workspace_mode();
    Ok((ctx, plan))
}

pub fn launcher(ctx: &Context, options: &JailOptions) -> Result<Launcher, CliError> {
    let exe = std::env::current_exe().map_err(CliError::CurrentDir)?;
    let xdg_cache_home = std::env::var_os("XDG_CACHE_HOME");
    if SeatbeltBackend::is_platform_backend() {
        let config = SeatbeltConfig::new(exe, ctx.home.clone(), xdg_cache_home);
        return Ok(Launcher::macos(config));
    }
    linux_launcher(ctx, options, exe, xdg_cache_home)
}

fn linux_launcher(
    ctx: &Context,
    options: &JailOptions,
    exe: PathBuf,
    xdg_cache_home: Option<OsString>,
) -> Result<Launcher, CliError> {
    #[allow(unused_mut)] // changed only in a mutants build
    let mut config = Launcher::default_config(exe, ctx.home.clone(), xdg_cache_home);
    // The escape suite's mutants build: `CORDON_TEST_BWRAP=/a:/b` replaces the trusted
    // bubblewrap candidates (still checked and probed as usual), and `CORDON_MUTANT=<name>`
    // takes one defence away. Neither name exists in a default or release build.
    #[cfg(all(feature = "mutants", debug_assertions))]
    if let Ok(list) = std::env::var("CORDON_TEST_BWRAP") {
        config.candidates = list.split(':').map(str::to_owned).collect();
    }
    let launcher = Launcher::linux_with(config, options.backend.choice());
    #[cfg(all(feature = "mutants", debug_assertions))]
    if let Some(name) = std::env::var_os("CORDON_MUTANT") {
        let weakening = name
            .to_string_lossy()
            .parse::<cordon_launch::Weakening>()
            .map_err(CliError::Weakening)?;
        return Ok(launcher.weakened(weakening));
    }
    Ok(launcher)
}

/// Runs `cordon run`; returns the exit code.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    // The session reaper (cordon-launch's leftovers.rs) is needed by every jail: started now,
    // while this process has one thread, as a copy of it (no program start on the command's path).
    if let Ok(exe) = std::env::current_exe() {
        cordon_launch::start_session_forked(&exe);
    }
    // SIGTERM, SIGINT and SIGHUP end the jail, then cordon exits 128+N (docs/cli.md): set up
    // while this process still has one thread, so every thread it starts has them blocked.
    // The main thread finishes the run itself once its jail is killed; a second at most.
    cordon_launch::end_jails_on_signals(std::time::Duration::from_secs(1))
        .map_err(CliError::Signals)?;
    if let Some(code) = crate::check::gate_run(&args.options.command, args.json, out)? {
        return Ok(code);
    }
    let (ctx, plan) = plan_for(&args.options.jail, true)?;
    let launcher = launcher(&ctx, &args.options.jail)?;
    let host_env = cordon_env::host_snapshot();
    let result = launcher.run(&RunRequest {
        plan: &plan,
        argv: &args.options.command,
        host_env: &host_env,
        forward: if args.json {
            Forward::No
        } else {
            Forward::ToOwnStdio
        },
        inherit_stdin: true,
    })?;
    for w in &result.warnings {
        eprintln!("cordon: WARNING: {w}");
    }
    if args.json {
        serde_json::to_writer(&mut *out, &result)?;
        writeln!(out)?;
    } else {
        if let Some(reason) = &result.refusal {
            eprintln!("cordon: refused: {reason}");
        }
        if result.status == RunStatus::Timeout {
            match plan.limits.timeout_secs {
                Some(secs) => {
                    eprintln!("cordon: timed out after {secs} s; the whole process tree was killed")
                }
                None => eprintln!("cordon: timed out; the whole process tree was killed"),
            }
        }
        for (name, s) in [("stdout", &result.stdout), ("stderr", &result.stderr)] {
            if s.truncated {
                eprintln!(
                    "cordon: {name} truncated at {} of {} bytes",
                    plan.limits.output_cap_bytes, s.bytes
                );
            }
        }
    }
    Ok(u8::try_from(result.exit_code.clamp(0, 255)).unwrap_or(u8::MAX))
}

/// Runs `cordon explain`: prints the argument list, one per line, explicit values hidden; for
/// `--platform macos`, the Seatbelt profile first.
pub fn explain(args: &ExplainArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (ctx, plan) = plan_for(&args.options.jail, false)?;
    let host_env = cordon_env::host_snapshot();
    let exe = std::env::current_exe().map_err(CliError::CurrentDir)?;
    if let PlatformArg::Macos = args.platform {
        // The profile, a blank line, then sandbox-exec's arguments one per line. The
        // environment is not on sandbox-exec's command line, so nothing needs hiding.
        let config = SeatbeltConfig::new(exe, ctx.home.clone(), None);
        let shown = cordon_launch::seatbelt::explain(
            &plan,
            &args.options.command,
            &host_env,
            &ctx.host(),
            &config,
        )?;
        out.write_all(shown.profile.as_bytes())?;
        out.write_all(b"\n")?;
        for arg in &shown.args {
            out.write_all(arg.as_encoded_bytes())?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    let launcher = linux_launcher(
        &ctx,
        &args.options.jail,
        exe,
        std::env::var_os("XDG_CACHE_HOME"),
    )?;
    let shown = launcher.explain(&plan, &args.options.command, &host_env)?;
    // What a run makes on the host before the jail starts: each is bound read-only in the list
    // below and removed after the run (when still exactly what was made).
    for p in shown.placeholders.iter().filter(|p| p.created_for_the_run) {
        let what = match p.kind {
            PlaceholderKind::Dir => "an empty directory",
            PlaceholderKind::File(b"") => "an empty file",
            PlaceholderKind::File(_) => "a file reading \".\"",
        };
        out.write_all(b"# created for the run: ")?;
        out.write_all(p.path.as_os_str().as_encoded_bytes())?;
        writeln!(out, " ({what})")?;
    }
    for shadow in &shown.broker_shadows {
        out.write_all(b"# created for the run: ")?;
        out.write_all(shadow.as_os_str().as_encoded_bytes())?;
        writeln!(
            out,
            " (the git configuration broker's shadow: a copy of .git/config and links to the rest of .git, docs/git-config.md)"
        )?;
    }
    // The pipeline's features, every variable of the jail with who set it and why, and what a
    // run of this plan would refuse before making anything.
    writeln!(out, "# features: {}", shown.features.join(", "))?;
    if let Some(home) = plan.private_home() {
        out.write_all(b"# private home: ")?;
        out.write_all(home.as_os_str().as_encoded_bytes())?;
        writeln!(
            out,
            " (the workspace's, writable, at {})",
            plan.home.display()
        )?;
    }
    for row in &shown.env {
        out.write_all(b"# env ")?;
        out.write_all(row.name.as_encoded_bytes())?;
        writeln!(out, ": {}", row.source.reason())?;
    }
    for refusal in &shown.refusals {
        writeln!(out, "# refused: {refusal}")?;
    }
    let mut hide_next = false;
    let mut after_setenv = 0u8;
    for arg in &shown.args {
        let shown: OsString = if hide_next {
            hide_next = false;
            "<explicit value, hidden>".into()
        } else {
            arg.clone()
        };
        if after_setenv == 1 {
            hide_next = plan.env.set.contains_key(&*arg.to_string_lossy());
        }
        after_setenv = if arg == "--setenv" { 1 } else { 0 };
        out.write_all(shown.as_encoded_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
