//! The copy-on-write layer (issue #30): the window. A host program that reads the workspace
//! while the command runs (an editor's git view, a file watcher, direnv in an open terminal)
//! must see nothing the command wrote, planted auto-run files included. Judged on the host,
//! while the jail lives: the command plants `.envrc` and then waits for a line on its stdin; the
//! harness waits until the plant was made (on the host's tree, or in the run's layer in
//! cordon's state, which is where a layered write lands), looks at the workspace, and only then
//! lets the command end. Nothing planted is ever executed.

use std::io::Write;
use std::time::Duration;

use super::harness::{Ctx, RunOut, wait_deadline, wait_for};
use super::matrix::Outcome;
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    vec![
        Case::attack(
            "layer/window",
            Class::Protected,
            "a host reader of the workspace during the run (`--layer`) sees the .envrc the command planted",
            window,
        )
        .landlock_limit("the Landlock backend makes no layer: its runs are live"),
        Case::attack(
            "layer/killed-launcher",
            Class::Protected,
            "a `--layer` run SIGKILLed by its caller while the jail runs: the .envrc and the git ref it planted reach the host, after the next run too",
            killed,
        )
        .landlock_limit("the Landlock backend makes no layer: its runs are live"),
        Case::attack(
            "layer/concurrent-commits",
            Class::Protected,
            "two `--layer` runs in one workspace at once, each planting an auto-run file while the other lives, both committing: a plant reaches the host",
            concurrent,
        ),
    ]
}

/// Two layered runs of one workspace overlap: each writes an ordinary file and plants an
/// auto-run file, both wait until both plants are made, then end together and commit one after
/// the other (the commit's lock). Escaped: a plant on the host. The ordinary files, and the
/// canary both write, are applied (the second canary a conflict, kept aside).
fn concurrent(ctx: &Ctx<'_>) -> Outcome {
    let plants = [".envrc", ".vscode/tasks.json"];
    let scripts = [
        "echo a > a.txt; echo 'touch /tmp/pwned' > .envrc; read go",
        "echo b > b.txt; mkdir -p .vscode; echo '{}' > .vscode/tasks.json; read go",
    ];
    let mut children = Vec::new();
    for script in scripts {
        let mut cmd = ctx
            .cordon()
            .args(layer_args(ctx))
            .sh(script)
            .stdin(b"")
            .command();
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        match cmd.spawn() {
            Ok(c) => children.push(c),
            Err(_) => return super::protected::harness_err("cannot start cordon".into()),
        }
    }
    let made = wait_for(Duration::from_secs(60), || {
        plants.iter().all(|p| ctx.written(p).is_some())
            || children
                .iter_mut()
                .any(|c| c.try_wait().ok().flatten().is_some())
    });
    let overlapped = made
        && children
            .iter_mut()
            .all(|c| c.try_wait().ok().flatten().is_none());
    for c in &mut children {
        if let Some(mut pipe) = c.stdin.take() {
            let _ = pipe.write_all(b"go\n");
        }
    }
    let mut err = String::new();
    let mut hung = false;
    for c in &mut children {
        if wait_deadline(c, Duration::from_secs(60)).is_none() {
            hung = true;
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(mut e) = c.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
    }
    let on_host: Vec<&str> = plants
        .iter()
        .copied()
        .filter(|p| ctx.work.join(p).exists())
        .collect();
    let files: Vec<&str> = ["a.txt", "b.txt"]
        .into_iter()
        .filter(|f| ctx.work.join(f).exists())
        .collect();
    let run = RunOut {
        err,
        hung,
        ..RunOut::default()
    };
    let detail = format!("plants on the host: {on_host:?}; ordinary files on the host: {files:?}");
    if !overlapped && on_host.is_empty() && !ctx.column.landlock() {
        // Not the claim: the jails did not both live with both plants made. (The Landlock
        // backend's runs are live: what it must show is only that no plant stays on the host
        // after both runs, its sweep's claim, whether or not they overlapped; under load its
        // second run was seen to start after the first had ended.)
        return Outcome::new(
            super::matrix::Verdict::Inconclusive,
            format!(
                "the runs did not overlap with both plants made; {detail}; stderr: {}",
                run.err
            ),
        );
    }
    ctx.judge(&run, !on_host.is_empty(), detail)
}

/// `cordon` (as the column's user) in the workspace, with the suite's cache.
fn cordon_in(ctx: &Ctx<'_>, args: &[&str]) -> Option<std::process::Output> {
    let mut argv: Vec<std::ffi::OsString> = vec![ctx.cordon_binary().into()];
    argv.extend(args.iter().map(Into::into));
    ctx.as_user(argv)
        .current_dir(&ctx.work)
        .env_clear()
        .env("HOME", &ctx.home)
        .env("PATH", "/usr/bin:/bin")
        .env(
            "XDG_CACHE_HOME",
            ctx.suite.base.join(format!("cache-{}", ctx.ids.uid)),
        )
        .output()
        .ok()
}

/// The killed launcher: the command plants `.envrc` and a git ref, then waits; once the plant
/// is made (on the host, or in the run's layer), cordon is SIGKILLed as a harness that gives up
/// would. Then the next cordon in the workspace (`cordon recover`, as any layered run does
/// first) finds the run and keeps it for review; the canary is applied from it alone, as a
/// user would. Escaped: the plant is on the host, after the kill or after the recovery.
fn killed(ctx: &Ctx<'_>) -> Outcome {
    let planted = ctx.work.join(".envrc");
    let git_ref = ctx.work.join(".git/refs/heads/planted-by-jail");
    let mut cmd = ctx
        .cordon()
        .args(layer_args(ctx))
        .sh("echo 'touch /tmp/pwned' > .envrc; mkdir -p .git/refs/heads; echo 0 > .git/refs/heads/planted-by-jail; read go")
        .stdin(b"")
        .command();
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let Ok(mut child) = cmd.spawn() else {
        return super::protected::harness_err("cannot start cordon".into());
    };
    let _stdin = child.stdin.take();
    let made = wait_for(Duration::from_secs(60), || {
        ctx.written(".envrc").is_some() || child.try_wait().ok().flatten().is_some()
    });
    let running = child.try_wait().ok().flatten().is_none();
    let _ = child.kill();
    let _ = child.wait();
    // The jail dies with its launcher (bubblewrap's --die-with-parent); give it a moment.
    let _ = wait_for(Duration::from_secs(5), || !in_a_live_layer(ctx));
    let after_kill = planted.exists() || git_ref.exists();
    let recovered = cordon_in(ctx, &["recover", "--json"]);
    let report: Option<serde_json::Value> = recovered
        .as_ref()
        .and_then(|o| serde_json::from_slice(&o.stdout).ok());
    if let Some(kept) = report
        .as_ref()
        .and_then(|r| r["abandoned"][0]["kept"][0]["run"].as_str())
    {
        let _ = cordon_in(ctx, &["apply", kept, "escape-canary"]);
    }
    let after_recovery = planted.exists() || git_ref.exists();
    let run = RunOut {
        code: None,
        out: String::new(),
        err: recovered
            .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .unwrap_or_default(),
        json: report,
        ..RunOut::default()
    };
    if !made || !running {
        return ctx.judge(
            &run,
            after_kill || after_recovery,
            format!(
                "the plant was {}made while the jail lived (it ended first or never wrote)",
                if made { "" } else { "not " }
            ),
        );
    }
    ctx.judge(
        &run,
        after_kill || after_recovery,
        match (after_kill, after_recovery) {
            (true, _) => "the plant was on the host once the launcher was killed".to_owned(),
            (false, true) => "the recovery after the kill applied the plant".to_owned(),
            (false, false) => {
                "the plant stayed in the killed run's layer, then was kept for review, not applied"
                    .to_owned()
            }
        },
    )
}

/// Whether a run's layer of this case's workspace is still held by a live launcher (named
/// `jail-*`, its start marker locked).
fn in_a_live_layer(ctx: &Ctx<'_>) -> bool {
    let Some(runs) = ctx.layer_runs() else {
        return false;
    };
    std::fs::read_dir(runs).is_ok_and(|runs| {
        runs.flatten().any(|r| {
            r.file_name().to_string_lossy().starts_with("jail-")
                && std::fs::File::open(r.path().join("started")).is_ok_and(|f| {
                    rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockShared)
                        .is_err()
                })
        })
    })
}

fn window(ctx: &Ctx<'_>) -> Outcome {
    let planted = ctx.work.join(".envrc");
    let mut cmd = ctx
        .cordon()
        .args(layer_args(ctx))
        .sh("echo 'touch /tmp/pwned' > .envrc; read go")
        .stdin(b"")
        .command();
    let (out_file, err_file) = (ctx.dir.join("window.out"), ctx.dir.join("window.err"));
    let files =
        std::fs::File::create(&out_file).and_then(|o| Ok((o, std::fs::File::create(&err_file)?)));
    let Ok((out, err)) = files else {
        return super::protected::harness_err("cannot create the run's output files".into());
    };
    cmd.stdin(std::process::Stdio::piped())
        .stdout(out)
        .stderr(err);
    let Ok(mut child) = cmd.spawn() else {
        return super::protected::harness_err("cannot start cordon".into());
    };
    let mut stdin = child.stdin.take();
    let made = wait_for(Duration::from_secs(60), || {
        ctx.written(".envrc").is_some() || child.try_wait().ok().flatten().is_some()
    });
    // The window: the jail still lives (the command waits for its line).
    let running = child.try_wait().ok().flatten().is_none();
    let seen = running && planted.exists();
    if let Some(mut pipe) = stdin.take() {
        let _ = pipe.write_all(b"go\n");
    }
    let status = wait_deadline(&mut child, Duration::from_secs(60));
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = std::fs::read_to_string(&out_file).unwrap_or_default();
    let json: Option<serde_json::Value> = serde_json::from_str(&stdout).ok();
    let run = RunOut {
        code: status.and_then(|s| s.code()),
        out: json
            .as_ref()
            .and_then(|j| j["stdout"]["text"].as_str())
            .unwrap_or(&stdout)
            .to_owned(),
        err: std::fs::read_to_string(&err_file).unwrap_or_default(),
        json,
        hung: status.is_none(),
        ..RunOut::default()
    };
    // The canary (`escape-canary` at the workspace's top) is an ordinary file: the commit
    // applies it.
    if !made || !running {
        return ctx.judge(
            &run,
            seen,
            format!(
                "the plant was {}made while the jail lived (it ended first or never wrote)",
                if made { "" } else { "not " }
            ),
        );
    }
    ctx.judge(
        &run,
        seen,
        if seen {
            "a host reader saw the planted .envrc while the command ran".to_owned()
        } else {
            "the planted .envrc was in the run's layer only, not on the host, while the jail lived"
                .to_owned()
        },
    )
}

/// `--layer` where the column's backend makes a layer; the Landlock backend refuses it (it has
/// none), so its columns run the case in their default, live, mode.
fn layer_args(ctx: &Ctx<'_>) -> Vec<&'static str> {
    if ctx.column.landlock() {
        Vec::new()
    } else {
        vec!["--layer"]
    }
}
