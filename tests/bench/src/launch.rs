//! Whole launches of `/bin/true`, interleaved round-robin so machine noise hits every case alike.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cordon_launch::Forward;
use cordon_launch::{Launcher, Preparation, RunRequest, RunStatus};
use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};

use cordon_test_support::cmd::Cmd;
use cordon_test_support::error::Error;

pub const BWRAP: &str = "/usr/bin/bwrap";

pub const TRUE: &str = "/bin/true";
pub const SEED: &str = "bwrap (seed flags)";
pub const SAME: &str = "bwrap (same isolation)";
pub const CLI: &str = "cordon run (CLI)";
pub const CLI_DYNAMIC: &str = "cordon run (CLI, dynamically linked build)";
pub const SERVE: &str = "cordon serve --live (CLI session, one request line)";
/// `cordon serve` with its default, the layer: the jail built ahead takes it when the request
/// comes.
pub const SERVE_LAYER: &str = "cordon serve (CLI session, layered, one request line)";
/// How many launch cases each round runs.
pub const CASES: usize = 15;
/// `cordon run --layer`: the workspace under a copy-on-write layer, committed after (issue #30).
pub const CLI_LAYER: &str = "cordon run --layer (CLI, copy-on-write layer and its commit)";
/// `cordon run --live`: the workspace written through, as the layer's baseline.
pub const CLI_LIVE: &str = "cordon run --live (CLI, written through)";
pub const LIBRARY: &str = "Launcher::run_prepared (library, in process, live)";
pub const LIBRARY_BACK_TO_BACK: &str = "Launcher::run_prepared, back to back (no pause, live)";
pub const LIBRARY_COLD: &str = "Launcher::run (library, a layered jail built per command)";
pub const EXPLAIN: &str = "cordon explain (no spawn)";
pub const CLI_EMPTY: &str = "cordon run, empty workspace";
pub const CLI_LARGE: &str = "cordon run, 100,000-file workspace";
pub const LIBRARY_EMPTY: &str = "Launcher::run_prepared (live), empty workspace";
pub const LIBRARY_LARGE: &str = "Launcher::run_prepared (live), 100,000-file workspace";

enum Runner {
    Process(Command),
    Library(Box<Library>),
    Serve(Box<Serve>),
}

/// A `cordon serve` session: requests on its stdin, answers on its stdout.
struct Serve {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: std::io::BufReader<std::process::ChildStdout>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        // End of input ends the session.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pause after each `cordon serve` request, untimed: its next jail is built in it (as in an
/// agent's pause), and so overlaps no other row.
const SERVE_PAUSE: Duration = Duration::from_millis(20);

/// How a library case calls the launcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `run_prepared` once the session's next jail has been built (an agent between commands):
    /// the build is waited for outside the timed call, so it overlaps nothing timed.
    Warm,
    /// `run_prepared` twice in a row, the second timed: its jail is still being built.
    BackToBack,
    /// `run`: a jail built for each command, while the caller waits.
    Cold,
}

struct Library {
    mode: Mode,
    launcher: Launcher,
    plan: Plan,
    preparation: Preparation,
    host_env: Vec<(OsString, OsString)>,
}

struct Case {
    name: &'static str,
    runner: Runner,
    samples: Vec<Duration>,
}

impl Case {
    fn process(name: &'static str, mut command: Command, dir: &Path) -> Case {
        command
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Case {
            name,
            runner: Runner::Process(command),
            samples: Vec::new(),
        }
    }

    fn once(&mut self) -> Result<Duration, Error> {
        let start = Instant::now();
        match &mut self.runner {
            Runner::Process(command) => {
                let status = command
                    .status()
                    .map_err(|e| Error::Bench(format!("{}: {e}", self.name)))?;
                let took = start.elapsed();
                if !status.success() {
                    return Err(Error::Bench(format!("{} failed: {status}", self.name)));
                }
                Ok(took)
            }
            Runner::Serve(serve) => {
                use std::io::{BufRead, Write};
                let start = Instant::now();
                let mut answer = String::new();
                writeln!(serve.to, r#"["/bin/true"]"#)
                    .and_then(|()| serve.to.flush())
                    .and_then(|()| serve.from.read_line(&mut answer))
                    .map_err(|e| Error::Bench(format!("{}: {e}", self.name)))?;
                let took = start.elapsed();
                if !answer.contains(r#""exit_code":0"#) {
                    return Err(Error::Bench(format!(
                        "{} did not run /bin/true: {answer}",
                        self.name
                    )));
                }
                std::thread::sleep(SERVE_PAUSE);
                Ok(took)
            }
            Runner::Library(lib) => {
                let Library {
                    mode,
                    launcher,
                    plan,
                    preparation,
                    host_env,
                } = lib.as_ref();
                let argv = [OsString::from("/bin/true")];
                let req = RunRequest {
                    plan,
                    argv: &argv,
                    host_env,
                    forward: Forward::No,
                    inherit_stdin: false,
                };
                let call = |start: Instant| -> Result<Duration, Error> {
                    let result = match mode {
                        Mode::Cold => launcher.run(&req),
                        Mode::Warm | Mode::BackToBack => launcher.run_prepared(&req, preparation),
                    }
                    .map_err(|e| Error::Bench(format!("{}: {e}", self.name)))?;
                    let took = start.elapsed();
                    if result.status != RunStatus::Exited || result.exit_code != 0 {
                        return Err(Error::Bench(format!(
                            "{} did not run /bin/true: {:?} exit {} ({})",
                            self.name,
                            result.status,
                            result.exit_code,
                            result.refusal.unwrap_or_default()
                        )));
                    }
                    Ok(took)
                };
                let ready = || preparation.wait_for_waiting_jail(Duration::from_secs(5));
                match mode {
                    Mode::Cold => call(start),
                    Mode::Warm => {
                        // Untimed: the jail built by the previous call is ready, as it is after
                        // an agent's pause; and the one this call builds is waited for before
                        // the next case runs, so it slows no other row.
                        ready();
                        let took = call(Instant::now())?;
                        ready();
                        Ok(took)
                    }
                    Mode::BackToBack => {
                        ready();
                        call(Instant::now())?;
                        let took = call(Instant::now())?;
                        ready();
                        Ok(took)
                    }
                }
            }
        }
    }
}

/// Opens `path` for reading *without* close-on-exec, so a child inherits the descriptor.
fn inheritable(path: &Path) -> Result<OwnedFd, Error> {
    rustix::fs::open(path, rustix::fs::OFlags::RDONLY, rustix::fs::Mode::empty())
        .map_err(|e| Error::Bench(format!("cannot open {}: {e}", path.display())))
}

/// Where the launch cases run.
pub struct Places<'a> {
    /// The `cordon` binary to install (`cargo xtask dist`, static; also the library's stage).
    pub cordon: &'a Path,
    /// The dynamically linked `cargo build --release` binary.
    pub dynamic: &'a Path,
    /// An empty workspace.
    pub empty: &'a Path,
    /// The 100,000-file workspace.
    pub large: &'a Path,
    /// The same tree again, for the library's session (its placeholders stay while it lives).
    pub large_session: &'a Path,
    /// A directory for the descriptor files (outside both workspaces).
    pub files: &'a Path,
    /// Where each session case (library, `cordon serve`) gets an empty workspace of its own, as
    /// a harness's session has: another session's placeholders in the same workspace would
    /// change what its jails find there.
    pub sessions: &'a Path,
}

/// Times every launch case over `runs` rounds (after 10 warm-up rounds); medians by name.
pub fn run(p: &Places<'_>, runs: usize) -> Result<Vec<(&'static str, Duration)>, Error> {
    // The same isolation: cordon's own option list, without the stage bind. Live mode's list:
    // a layered one has the stage mount the overlay, which plain bubblewrap cannot.
    let explain = Cmd::new(p.cordon)
        .args(["explain", "--live", "--", "/bin/true"])
        .current_dir(p.empty)
        .read()?;
    let options = same_isolation_options(&explain)?;
    let spec =
        cordon_seccomp::FilterSpec::for_host(true).map_err(|e| Error::Bench(e.to_string()))?;
    let filter = cordon_seccomp::compile(&spec).map_err(|e| Error::Bench(e.to_string()))?;
    let seccomp_path = p.files.join("filter.bpf");
    std::fs::write(&seccomp_path, filter.bytes()).map_err(|e| Error::Bench(e.to_string()))?;
    let args_path = p.files.join("args");
    let mut nul = Vec::new();
    for o in &options {
        nul.extend_from_slice(o.as_bytes());
        nul.push(0);
    }
    std::fs::write(&args_path, nul).map_err(|e| Error::Bench(e.to_string()))?;

    // Warm the probe cache (and check the CLI works in both workspaces) before timing anything.
    for (cordon, dir) in [
        (p.cordon, p.empty),
        (p.cordon, p.large),
        (p.dynamic, p.empty),
    ] {
        Cmd::new(cordon)
            .args(["run", "--", "/bin/true"])
            .current_dir(dir)
            .run()?;
    }

    let mut seed = Command::new(BWRAP);
    seed.args([
        "--new-session",
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--unshare-net",
        "--tmpfs",
        "/tmp",
    ]);
    seed.arg("--bind")
        .arg(p.empty)
        .arg(p.empty)
        .args(["--", "/bin/true"]);

    let seccomp_fd = inheritable(&seccomp_path)?;
    let args_fd = inheritable(&args_path)?;
    let mut same = Command::new(BWRAP);
    same.arg("--args")
        .arg(args_fd.as_raw_fd().to_string())
        .arg("--seccomp")
        .arg(seccomp_fd.as_raw_fd().to_string())
        .args(["--", "/bin/true"]);
    let held = [seccomp_fd, args_fd];

    let cli_of = |cordon: &Path, dir: &Path, name: &'static str| {
        let mut c = Command::new(cordon);
        c.args(["run", "--", "/bin/true"]);
        Case::process(name, c, dir)
    };
    let cli = |dir: &Path, name: &'static str| cli_of(p.cordon, dir, name);
    let cli_mode = |flag: &str, name: &'static str| {
        let mut c = Command::new(p.cordon);
        c.args(["run", flag, "--", "/bin/true"]);
        Case::process(name, c, p.empty)
    };
    let mut explain_cmd = Command::new(p.cordon);
    explain_cmd.args(["explain", "--", "/bin/true"]);

    let mut cases = vec![
        Case::process(TRUE, Command::new("/bin/true"), p.empty),
        Case::process(SEED, seed, p.empty),
        Case::process(SAME, same, p.empty),
        cli(p.empty, CLI),
        cli_of(p.dynamic, p.empty, CLI_DYNAMIC),
        cli_mode("--live", CLI_LIVE),
        cli_mode("--layer", CLI_LAYER),
        serve(p.cordon, &own_workspace(p, "serve")?, SERVE, &["--live"])?,
        serve(
            p.cordon,
            &own_workspace(p, "serve-layer")?,
            SERVE_LAYER,
            &[],
        )?,
        library(p, &own_workspace(p, "warm")?, LIBRARY, Mode::Warm)?,
        library(
            p,
            &own_workspace(p, "back-to-back")?,
            LIBRARY_BACK_TO_BACK,
            Mode::BackToBack,
        )?,
        library(p, &own_workspace(p, "cold")?, LIBRARY_COLD, Mode::Cold)?,
        Case::process(EXPLAIN, explain_cmd, p.empty),
        cli(p.large, CLI_LARGE),
        library(p, p.large_session, LIBRARY_LARGE, Mode::Warm)?,
    ];
    for round in 0..runs + 10 {
        for case in &mut cases {
            // The descriptors are read by bubblewrap: rewind them before each use.
            for fd in &held {
                let _ = rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(0));
            }
            let took = case.once()?;
            if round >= 10 {
                case.samples.push(took);
            }
        }
    }
    drop(held);
    Ok(cases
        .iter_mut()
        .map(|c| (c.name, super::median(&mut c.samples)))
        .collect())
}

pub const PROXY_TRUE_DENY: &str = "cordon run --network deny -- /bin/true";
pub const PROXY_TRUE: &str = "cordon run --network proxy -- /bin/true";
pub const PROXY_CURL_ALLOW: &str = "cordon run --network allow -- curl (local server)";
pub const PROXY_CURL: &str = "cordon run --network proxy -- curl (same server, proxied)";

/// A local HTTP server on 127.0.0.1 that answers every request with a small body, on threads
/// of this process, for as long as the bench runs.
fn local_server() -> Result<u16, Error> {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::Bench(format!("local server: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| Error::Bench(format!("local server: {e}")))?
        .port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut buf = [0u8; 4096];
                let mut got = Vec::new();
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                    if got.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n",
                );
            });
        }
    });
    Ok(port)
}

/// The proxy network's rows: `/bin/true` with the network denied and in proxy mode, and a
/// `curl` of a local server with the network allowed and through the proxy, interleaved.
pub fn proxy(p: &Places<'_>, runs: usize) -> Result<Vec<(&'static str, Duration)>, Error> {
    let port = local_server()?;
    let url = format!("http://127.0.0.1:{port}/");
    let allow = format!("127.0.0.1:{port}");
    let dir = own_workspace(p, "proxy")?;
    let run = |name: &'static str, network: &[&str], argv: &[&str]| {
        let mut c = Command::new(p.cordon);
        c.arg("run").args(network).arg("--").args(argv);
        Case::process(name, c, &dir)
    };
    let proxy_mode = ["--network", "proxy", "--allow-host", allow.as_str()];
    let curl = ["curl", "-sSf", "-o", "/dev/null", url.as_str()];
    let mut cases = vec![
        run(PROXY_TRUE_DENY, &["--network", "deny"], &[TRUE]),
        run(PROXY_TRUE, &proxy_mode, &[TRUE]),
        run(PROXY_CURL_ALLOW, &["--network", "allow"], &curl),
        run(PROXY_CURL, &proxy_mode, &curl),
    ];
    for round in 0..runs + 5 {
        for case in &mut cases {
            let took = case.once()?;
            if round >= 5 {
                case.samples.push(took);
            }
        }
    }
    Ok(cases
        .iter_mut()
        .map(|c| (c.name, super::median(&mut c.samples)))
        .collect())
}

/// `cordon explain`'s bubblewrap options, minus `--seccomp FD`, the stage's bind and the binds
/// of the placeholders a run makes first (`# created for the run: P (...)`): plain bubblewrap
/// cannot bind what does not exist, and making them is part of what cordon's launch costs.
fn same_isolation_options(explain: &str) -> Result<Vec<String>, Error> {
    let made: Vec<&str> = explain
        .lines()
        .filter_map(|l| l.strip_prefix("# created for the run: "))
        .filter_map(|l| l.rsplit_once(" (").map(|(path, _)| path))
        .collect();
    let mut lines: Vec<&str> = explain
        .lines()
        .filter(|l| !l.starts_with("# "))
        .skip(1)
        .collect();
    let dash = lines
        .iter()
        .position(|l| *l == "--")
        .ok_or_else(|| Error::Bench("explain printed no `--`".into()))?;
    lines.truncate(dash);
    let mut options: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match lines[i] {
            "--seccomp" => i += 2,
            "--ro-bind" if lines.get(i + 2) == Some(&cordon_bwrap::STAGE_PATH) => i += 3,
            "--ro-bind" if lines.get(i + 1).is_some_and(|p| made.contains(p)) => i += 3,
            other => {
                options.push(other.to_owned());
                i += 1;
            }
        }
    }
    Ok(options)
}

/// An empty workspace of its own for the session case `name`.
fn own_workspace(p: &Places<'_>, name: &str) -> Result<PathBuf, Error> {
    super::make_dir(&p.sessions.join(name))
}

/// A `cordon serve` session in `dir`, proven to answer before timing.
fn serve(cordon: &Path, dir: &Path, name: &'static str, flags: &[&str]) -> Result<Case, Error> {
    let fail = |e: std::io::Error| Error::Bench(format!("{name}: {e}"));
    let mut child = Command::new(cordon)
        .arg("serve")
        .args(flags)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(fail)?;
    let (Some(to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Error::Bench(format!("{name}: no pipes")));
    };
    let mut case = Case {
        name,
        runner: Runner::Serve(Box::new(Serve {
            child,
            to,
            from: std::io::BufReader::new(from),
        })),
        samples: Vec::new(),
    };
    case.once()?;
    Ok(case)
}

/// A library case: one `Launcher`, one plan and one preparation (the session's walk of `dir`),
/// reused for every run, as a harness would.
fn library(p: &Places<'_>, dir: &Path, name: &'static str, mode: Mode) -> Result<Case, Error> {
    let home = std::env::var_os("HOME");
    let host = RealHost::new(home.clone());
    let mut plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at(dir),
        &host,
    )
    .map_err(|e| Error::Bench(format!("{name}: {e}")))?;
    if !matches!(mode, Mode::Cold) {
        // A jail is built ahead of its command in live mode only: a layered command takes its
        // layer when it comes (docs/limits.md), so its jail is built for it, as in `Cold`.
        plan.workspace_mode = cordon_policy::WorkspaceMode::Live;
    }
    let stage: PathBuf = std::fs::canonicalize(p.cordon)
        .map_err(|e| Error::Bench(format!("{}: {e}", p.cordon.display())))?;
    let launcher = Launcher::linux(Launcher::default_config(
        stage,
        home,
        std::env::var_os("XDG_CACHE_HOME"),
    ));
    let preparation = launcher
        .prepare(&plan)
        .map_err(|e| Error::Bench(format!("{name}: Launcher::prepare: {e}")))?;
    let mut case = Case {
        name,
        runner: Runner::Library(Box::new(Library {
            mode,
            launcher,
            plan,
            preparation,
            host_env: cordon_env::host_snapshot(),
        })),
        samples: Vec::new(),
    };
    // Probe (or read the cached probe) and prove it runs before timing.
    case.once()?;
    Ok(case)
}

/// How long `Launcher::prepare` (the session's walk) takes for `dir`, median of `rounds`.
pub fn prepare_time(p: &Places<'_>, dir: &Path, rounds: usize) -> Result<Duration, Error> {
    let home = std::env::var_os("HOME");
    let plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at(dir),
        &RealHost::new(home.clone()),
    )
    .map_err(|e| Error::Bench(format!("Launcher::prepare: {e}")))?;
    let stage: PathBuf = std::fs::canonicalize(p.cordon)
        .map_err(|e| Error::Bench(format!("{}: {e}", p.cordon.display())))?;
    let launcher = Launcher::linux(Launcher::default_config(
        stage,
        home,
        std::env::var_os("XDG_CACHE_HOME"),
    ));
    let mut samples = Vec::with_capacity(rounds);
    for round in 0..rounds + 1 {
        let start = Instant::now();
        launcher
            .prepare(&plan)
            .map_err(|e| Error::Bench(format!("Launcher::prepare: {e}")))?;
        if round >= 1 {
            samples.push(start.elapsed());
        }
    }
    Ok(super::median(&mut samples))
}
