//! In-process steps, timed in microseconds: what cordon computes for each command before
//! bubblewrap starts, and the per-command re-check of a session's scan.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cordon_policy::{FakeHost, Invocation, Plan, Policy, Profile, RealHost};

use cordon_test_support::error::Error;

/// How many variables the synthetic host environment holds.
pub const HOST_ENV_SIZE: usize = 60;

/// The length the floor's command line is built up to.
pub const FLOOR_COMMAND_BYTES: usize = 10 * 1024;

/// How many glob rules the Seatbelt profile carries.
const SEATBELT_GLOBS: usize = 1000;

/// One timed step: name and median per call.
pub struct Timed {
    pub what: String,
    pub median: Duration,
    pub samples: usize,
}

/// Times `f` in `runs` batches of enough calls to last about 100 µs; the median per call.
fn time<T>(what: impl Into<String>, runs: usize, mut f: impl FnMut() -> T) -> Timed {
    // Warm up, and size the batch from the warm calls.
    let start = Instant::now();
    for _ in 0..5 {
        black_box(f());
    }
    let once = start.elapsed() / 5;
    let batch = (Duration::from_micros(100).as_nanos() / once.as_nanos().max(1)).clamp(1, 10_000);
    let batch = u32::try_from(batch).unwrap_or(1);
    let mut per_call: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                black_box(f());
            }
            start.elapsed() / batch
        })
        .collect();
    per_call.sort();
    Timed {
        what: what.into(),
        median: per_call[per_call.len() / 2],
        samples: runs,
    }
}

/// A host environment shaped like a developer's shell: allowlisted names, toolchain settings,
/// desktop and agent sockets, cloud and registry tokens, loader and injection variables.
pub fn host_env(home: &Path) -> Vec<(OsString, OsString)> {
    let home = home.display().to_string();
    let mut env: Vec<(String, String)> = vec![
        (
            "PATH",
            format!("{home}/.cargo/bin:{home}/.local/bin:/usr/local/bin:/usr/bin:/bin"),
        ),
        ("HOME", home.clone()),
        ("SHELL", "/bin/bash".into()),
        ("USER", "dev".into()),
        ("LOGNAME", "dev".into()),
        ("TERM", "xterm-256color".into()),
        ("LANG", "en_US.UTF-8".into()),
        ("LANGUAGE", "en_US:en".into()),
        ("LC_ALL", "en_US.UTF-8".into()),
        ("LC_CTYPE", "en_US.UTF-8".into()),
        ("LC_TIME", "en_GB.UTF-8".into()),
        ("TZ", "Europe/Berlin".into()),
        ("PWD", format!("{home}/src/project")),
        ("OLDPWD", format!("{home}/src")),
        ("TMPDIR", "/tmp".into()),
        ("COLUMNS", "120".into()),
        ("LINES", "40".into()),
        ("EDITOR", "vim".into()),
        ("PAGER", "less".into()),
        ("LESS", "-R".into()),
        ("CARGO_HOME", format!("{home}/.cargo")),
        ("RUSTUP_HOME", format!("{home}/.rustup")),
        ("RUST_LOG", "info".into()),
        ("RUST_BACKTRACE", "1".into()),
        ("CARGO_TERM_COLOR", "always".into()),
        ("NODE_ENV", "development".into()),
        ("NVM_DIR", format!("{home}/.nvm")),
        ("PYENV_ROOT", format!("{home}/.pyenv")),
        ("VIRTUAL_ENV", format!("{home}/src/project/.venv")),
        ("GOPATH", format!("{home}/go")),
        ("JAVA_HOME", "/usr/lib/jvm/default".into()),
        ("MANPATH", "/usr/share/man".into()),
        (
            "GITHUB_TOKEN",
            "ghp_0123456789abcdef0123456789abcdef0123".into(),
        ),
        (
            "GH_TOKEN",
            "ghp_fedcba9876543210fedcba9876543210fedc".into(),
        ),
        ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE".into()),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
        ),
        ("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEXAMPLE".into()),
        ("OPENAI_API_KEY", "sk-example".into()),
        ("ANTHROPIC_API_KEY", "sk-ant-example".into()),
        ("NPM_TOKEN", "npm_example".into()),
        (
            "DATABASE_URL",
            "postgres://dev:hunter2@localhost/dev".into(),
        ),
        ("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent.socket".into()),
        (
            "GPG_AGENT_INFO",
            "/run/user/1000/gnupg/S.gpg-agent:0:1".into(),
        ),
        ("DISPLAY", ":0".into()),
        ("WAYLAND_DISPLAY", "wayland-0".into()),
        ("XDG_RUNTIME_DIR", "/run/user/1000".into()),
        ("XDG_SESSION_ID", "3".into()),
        (
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/run/user/1000/bus".into(),
        ),
        ("LD_LIBRARY_PATH", "/opt/lib".into()),
        ("LD_PRELOAD", "/opt/lib/libhook.so".into()),
        ("PYTHONPATH", format!("{home}/lib/python")),
        ("NODE_OPTIONS", "--max-old-space-size=4096".into()),
        ("http_proxy", "http://proxy.internal:3128".into()),
        ("HTTPS_PROXY", "http://proxy.internal:3128".into()),
        ("NO_PROXY", "localhost,127.0.0.1".into()),
        ("HISTFILE", format!("{home}/.bash_history")),
        ("PROMPT_COMMAND", "history -a".into()),
        ("SHLVL", "2".into()),
        ("KUBECONFIG", format!("{home}/.kube/config")),
        ("DOCKER_HOST", "unix:///run/user/1000/docker.sock".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    env.truncate(HOST_ENV_SIZE);
    env.into_iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

/// A command line of about [`FLOOR_COMMAND_BYTES`] that the floor allows, so it reads all of it:
/// pipelines, substitutions, `sh -c`, wrappers, a here-document.
fn floor_command() -> String {
    let pieces = [
        "cd crates/cordon-floor && cargo test --workspace -- --nocapture 2>&1 | grep -E '^(test|error)' | sed -e 's/ ok$/ OK/' > \"$TMPDIR/out.txt\"",
        "git status --porcelain | awk '{print $2}' | xargs -r rustfmt --check --edition 2024",
        "for f in $(git ls-files '*.rs'); do wc -l \"$f\"; done | sort -n | tail -5",
        "timeout 60 env RUST_LOG=debug sh -c 'cargo run -q -p cordon -- explain -- /bin/true | head -40'",
        "if [ -f Cargo.lock ]; then cat <<'EOF' > notes.txt\nlock present\nEOF\nfi",
        "nice -n 5 find . -name '*.tmp' -newer Cargo.toml -print | while read -r p; do rm -f \"$p\"; done",
    ];
    let mut out = String::new();
    let mut i = 0;
    while out.len() < FLOOR_COMMAND_BYTES {
        if !out.is_empty() {
            out.push_str(" && ");
        }
        out.push_str(pieces[i % pieces.len()]);
        i += 1;
    }
    out
}

/// The length of [`floor_command`], for the report.
pub fn floor_command_len() -> usize {
    floor_command().len()
}

/// Glob rules for the Seatbelt profile: credential-shaped names at any depth.
fn seatbelt_globs(base: &Path) -> Vec<cordon_seatbelt::GlobRule> {
    (0..SEATBELT_GLOBS)
        .map(|i| {
            let pattern = match i % 4 {
                0 => format!("**/.env.local{i}"),
                1 => format!("**/secrets{i}/**"),
                2 => format!("keys/*.pem{i}"),
                _ => format!("**/id_rsa{i}*"),
            };
            cordon_seatbelt::GlobRule::new(base, pattern)
        })
        .collect()
}

/// What the steps are timed against.
pub struct Inputs<'a> {
    pub home: &'a Path,
    pub workspace: &'a Path,
    pub stage: &'a Path,
    pub bwrap_version: &'a str,
    pub bwrap_help: &'a str,
    pub snapshot: &'a cordon_scan::Snapshot,
}

/// Times every step; fails if a step does not give the result the bench assumes.
pub fn run(inputs: &Inputs<'_>, runs: usize) -> Result<Vec<Timed>, Error> {
    let fail = |what: &str, e: &dyn std::fmt::Display| Error::Bench(format!("{what}: {e}"));
    let host = RealHost::new(Some(inputs.home.as_os_str().to_owned()));
    let policy = Policy::for_profile(Profile::Shell);
    let invocation = Invocation::at(inputs.workspace);
    let plan = Plan::resolve(&policy, &invocation, &host).map_err(|e| fail("Plan::resolve", &e))?;
    let mut out = Vec::new();

    out.push(time(
        "Plan::resolve (Shell profile, real host)",
        runs,
        || Plan::resolve(&policy, &invocation, &host),
    ));

    let env_host = host_env(inputs.home);
    let mut env_policy = plan.env.clone();
    for name in ["CARGO_TERM_COLOR", "RUST_LOG", "GITHUB_TOKEN", "NODE_ENV"] {
        env_policy.pass.insert(name.to_owned());
    }
    let child = cordon_env::ChildEnv::build(env_host.iter().cloned(), &env_policy)
        .map_err(|e| fail("ChildEnv::build", &e))?;
    if child.get("GITHUB_TOKEN").is_some() || child.get("PATH").is_none() {
        return Err(Error::Bench(
            "ChildEnv::build did not filter the synthetic environment as expected".into(),
        ));
    }
    out.push(time(
        format!("ChildEnv::build ({} host variables)", env_host.len()),
        runs,
        || cordon_env::ChildEnv::build(env_host.iter().cloned(), &env_policy),
    ));

    out.push(time("seccomp filter: spec + compile to BPF", runs, || {
        cordon_seccomp::FilterSpec::for_host(true).and_then(|s| cordon_seccomp::compile(&s))
    }));

    let features = cordon_bwrap::Features::parse(inputs.bwrap_version, inputs.bwrap_help);
    let vars: BTreeMap<OsString, OsString> = child.vars.clone();
    let argv = [OsString::from("/bin/true")];
    out.push(time("Plan::guard (pins, placeholders)", runs, || {
        plan.guard(&host)
    }));
    let guarded = plan.guard(&host);
    let request = cordon_bwrap::Request {
        plan: &guarded,
        brokers: &[],
        features: &features,
        env: &vars,
        fds: cordon_bwrap::Descriptors { seccomp: 4 },
        stage: Some(inputs.stage),
        argv: &argv,
    };
    cordon_bwrap::build(&request).map_err(|e| fail("cordon_bwrap::build", &e))?;
    out.push(time("cordon_bwrap::build (argument list)", runs, || {
        cordon_bwrap::build(&request)
    }));

    let fake = FakeHost::typical();
    let fake_plan = Plan::resolve(&policy, &Invocation::at("/home/u/proj"), &fake)
        .map_err(|e| fail("Plan::resolve on the fake host", &e))?;
    let extras = cordon_seatbelt::SeatbeltExtras {
        deny_read: seatbelt_globs(Path::new("/home/u/proj")),
        deny_write: Vec::new(),
        proxy_port: None,
    };
    let tmpdir = PathBuf::from("/tmp/cordon-bench");
    let sb_request = cordon_seatbelt::Request {
        plan: &fake_plan,
        host: &fake,
        tmpdir: &tmpdir,
        extras: &extras,
        stage: None,
        argv: &argv,
    };
    cordon_seatbelt::build(&sb_request).map_err(|e| fail("cordon_seatbelt::build", &e))?;
    out.push(time(
        format!(
            "Seatbelt profile, {} globs (macOS)",
            super::thousands(SEATBELT_GLOBS as u64)
        ),
        runs,
        || cordon_seatbelt::build(&sb_request),
    ));

    let floor = cordon_floor::Floor::new(cordon_floor::FloorConfig::default());
    let command = floor_command();
    if floor.check(&command) != cordon_floor::Verdict::Allow {
        return Err(Error::Bench(format!(
            "the floor refused the bench's command line ({:?}); it must allow it to read all of it",
            floor.check(&command)
        )));
    }
    out.push(time(
        format!("floor verdict, {} KB command", command.len() / 1024),
        runs,
        || floor.check(&command),
    ));

    inputs
        .snapshot
        .check()
        .map_err(|e| fail("Snapshot::check", &e))?;
    out.push(time("Snapshot::check (1 root, per command)", runs, || {
        inputs.snapshot.check()
    }));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_synthetic_environment_has_its_stated_size_and_no_duplicates() {
        let env = host_env(Path::new("/home/dev"));
        assert_eq!(env.len(), HOST_ENV_SIZE);
        let names: std::collections::BTreeSet<_> = env.iter().map(|(k, _)| k).collect();
        assert_eq!(names.len(), env.len());
    }

    #[test]
    fn the_floor_reads_the_whole_command_and_allows_it() {
        let command = floor_command();
        assert!(command.len() >= FLOOR_COMMAND_BYTES);
        assert!(command.len() < FLOOR_COMMAND_BYTES + 200);
        let floor = cordon_floor::Floor::new(cordon_floor::FloorConfig::default());
        assert_eq!(floor.check(&command), cordon_floor::Verdict::Allow);
    }
}
