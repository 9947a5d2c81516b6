//! What every case gets: a fresh home with planted sentinel credentials, a workspace, a directory
//! outside the writable set, a random token, and a way to run `cordon run` as the column's user.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::columns::{Column, Ids, Who};
use super::matrix::{Outcome, Verdict};

/// `PATH` given to cordon in every column (root's own `PATH` may point into `/root`, which the
/// unprivileged user cannot read).
pub const STD_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// How long the harness lets one `cordon` invocation run before killing it (the cases' own
/// timeouts are far shorter; this only keeps a broken launcher from hanging the suite).
pub const HARD_DEADLINE: Duration = Duration::from_secs(90);

/// The same in a no-jail column, where nothing but the harness stops a payload (the project
/// file's limits and `--timeout` are cordon's): the longest payload needs a few seconds there.
pub const NO_JAIL_DEADLINE: Duration = Duration::from_secs(12);

/// Facts shared by every case of a run.
#[derive(Debug)]
pub struct Suite {
    /// Where the run's files live (removed at the end).
    pub base: PathBuf,
    /// The default build of the CLI.
    pub cordon: PathBuf,
    /// The `mutants` build (weakenings and the bubblewrap override).
    pub cordon_mutants: PathBuf,
    /// The weakening under test, when running mutants.
    pub mutant: Option<&'static str>,
    /// Whether the unprivileged columns drop privileges with `setpriv`.
    pub drop_with_setpriv: bool,
    /// A real `python3` (not a pyenv shim, which lives under `/root`).
    pub python: Option<PathBuf>,
}

/// Which build a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    Default,
    Mutants,
}

/// A file in a case's directory that keeps the directory until the suite ends.
pub const KEEP_UNTIL_END: &str = ".keep-until-end";

/// One case in one column.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub suite: &'a Suite,
    pub column: Column,
    pub ids: Ids,
    /// The case's directory (not visible to anything but the harness and the user).
    pub dir: PathBuf,
    /// The fresh home directory, with sentinel credentials.
    pub home: PathBuf,
    /// The workspace (the cwd and only writable root), `home/proj`.
    pub work: PathBuf,
    /// A directory outside the writable set that the user *can* write on the host.
    pub outside: PathBuf,
    /// A random token (canaries, sentinel markers).
    pub token: String,
}

/// What one `cordon` invocation returned.
#[derive(Debug, Clone, Default)]
pub struct RunOut {
    /// cordon's exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// The parsed `--json` object, when there was one.
    pub json: Option<Value>,
    /// The payload's stdout (from the JSON, else cordon's own stdout).
    pub out: String,
    /// The payload's stderr (from the JSON), then cordon's own stderr.
    pub err: String,
    /// Wall-clock time of the invocation.
    pub took: Duration,
    /// The harness killed it at [`HARD_DEADLINE`].
    pub hung: bool,
    /// The step markers a multi-step payload ([`Run::steps`]) prints after each step, whether
    /// or not the step succeeded: all of them must be in `out`, else a step never ran.
    pub steps: Vec<String>,
}

impl RunOut {
    /// stdout and stderr together, for searching.
    pub fn all(&self) -> String {
        format!("{}\n{}", self.out, self.err)
    }

    /// True when the JSON says the run was not jailed.
    pub fn unsandboxed(&self) -> bool {
        self.json
            .as_ref()
            .is_some_and(|j| j["sandboxed"] == Value::Bool(false))
    }

    /// One line for a detail.
    pub fn brief(&self) -> String {
        let mut s = format!("exit {:?}", self.code);
        if self.hung {
            s.push_str(" (hung: killed by the harness)");
        }
        if let Some(r) = self.json.as_ref().and_then(|j| j["refusal"].as_str()) {
            s.push_str(&format!(", refused: {}", cut(r, 160)));
        }
        s
    }
}

/// The first `n` characters of `s`, on one line.
pub fn cut(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n).collect::<String>())
    }
}

/// 16 random hex digits.
pub fn token() -> String {
    let mut bytes = [0u8; 8];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Changes the owner of `path` and everything below it (symlinks themselves, not their targets).
pub fn chown_r(path: &Path, ids: Ids) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(ids.uid), Some(ids.gid))?;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            chown_r(&entry?.path(), ids)?;
        }
    }
    Ok(())
}

/// Sentinel files planted in every home: one per kind of secret a careless jail would leak.
pub const SENTINELS: &[&str] = &[
    ".ssh/id_ed25519",
    ".ssh/config",
    ".aws/credentials",
    ".netrc",
    ".config/gh/hosts.yml",
    ".git-credentials",
    ".gnupg/private-keys-v1.d/key.key",
    ".docker/config.json",
    ".kube/config",
    ".npmrc",
    ".pypirc",
    ".bash_history",
];

impl<'a> Ctx<'a> {
    /// Lays out a fresh case directory for `column`.
    pub fn new(
        suite: &'a Suite,
        column: Column,
        ids: Ids,
        case_id: &str,
    ) -> Result<Ctx<'a>, String> {
        let slug: String = case_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let dir = suite.base.join("cases").join(format!(
            "{}-{}-{slug}",
            column.name().replace('/', "-"),
            suite.mutant.unwrap_or("real")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let home = dir.join("home");
        let work = home.join("proj");
        let outside = dir.join("outside");
        let shown = dir.display().to_string();
        let io = |e: std::io::Error| format!("cannot lay out {shown}: {e}");
        std::fs::create_dir_all(&work).map_err(io)?;
        std::fs::create_dir_all(&outside).map_err(io)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        let ctx = Ctx {
            suite,
            column,
            ids,
            dir,
            home,
            work,
            outside,
            token: token(),
        };
        for s in SENTINELS {
            ctx.plant(&ctx.home.join(s), &ctx.secret(s))?;
        }
        if column.landlock() {
            // The workspace root holds protected paths, so under Landlock nothing can be created
            // directly in it (a documented limit); an existing, empty canary can be written.
            ctx.plant(&ctx.canary_path(), "")?;
        }
        chown_r(&ctx.dir, ids).map_err(io)?;
        Ok(ctx)
    }

    /// The sentinel text planted at `what`: contains the token, so any leak is recognised.
    pub fn secret(&self, what: &str) -> String {
        format!("SENTINEL-{}-{}\n", self.token, what.replace('/', "_"))
    }

    /// The marker every sentinel contains.
    pub fn marker(&self) -> String {
        format!("SENTINEL-{}", self.token)
    }

    /// Writes `content` at `path` (creating parents), owned by the column's user.
    pub fn plant(&self, path: &Path, content: &str) -> Result<(), String> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(path, content)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        self.own(path)
    }

    /// Makes `path` (and its parents up to the case directory) owned by the column's user.
    pub fn own(&self, path: &Path) -> Result<(), String> {
        let mut p = path.to_path_buf();
        loop {
            if !p.starts_with(&self.dir) {
                break;
            }
            std::os::unix::fs::lchown(&p, Some(self.ids.uid), Some(self.ids.gid))
                .map_err(|e| format!("cannot chown {}: {e}", p.display()))?;
            if !p.pop() {
                break;
            }
        }
        Ok(())
    }

    /// Writes a file into the workspace (a payload script, a config).
    pub fn file(&self, rel: &str, content: &str) -> Result<PathBuf, String> {
        let path = self.work.join(rel);
        self.plant(&path, content)?;
        Ok(path)
    }

    /// `scratch/` in the workspace, made before the run: where a payload leaves the files the
    /// harness judges it by. Under Landlock nothing can be created directly in the workspace
    /// root (a documented limit), so a file judged there would be missing for that reason alone
    /// and the case would read blocked having tested nothing.
    pub fn scratch(&self) -> Result<PathBuf, String> {
        let dir = self.work.join("scratch");
        self.plant(&dir.join(".keep"), "")?;
        Ok(dir)
    }

    /// Where the canary goes.
    pub fn canary_path(&self) -> PathBuf {
        self.work.join("escape-canary")
    }

    /// The shell words that write the canary: every payload starts with them.
    pub fn canary_sh(&self) -> String {
        format!(
            "printf %s {} > '{}'",
            self.token,
            self.canary_path().display()
        )
    }

    /// Whether the payload proved it ran.
    pub fn canary(&self) -> bool {
        let holds = |p: &Path| std::fs::read_to_string(p).is_ok_and(|t| t == self.token);
        holds(&self.canary_path())
            || self
                .in_a_layer(Path::new("escape-canary"))
                .is_some_and(|p| holds(&p))
    }

    /// `rel` below the workspace as the payload wrote it: on the host, or, in a layered run
    /// (`--layer`), in a layer of this workspace's runs not yet committed (cordon's
    /// `layers/<workspace key>/jail-*/N/upper`).
    pub fn written(&self, rel: &str) -> Option<PathBuf> {
        let host = self.work.join(rel);
        if host.exists() {
            return Some(host);
        }
        self.in_a_layer(Path::new(rel))
    }

    /// This workspace's runs' layer directories in cordon's state (`layers/<workspace key>`).
    pub fn layer_runs(&self) -> Option<PathBuf> {
        let key = std::fs::canonicalize(&self.work)
            .map(|w| cordon_policy::CacheLayout::workspace_key(&w))
            .ok()?;
        Some(
            self.suite
                .base
                .join(format!("cache-{}", self.ids.uid))
                .join("cordon/layers")
                .join(key),
        )
    }

    fn in_a_layer(&self, rel: &Path) -> Option<PathBuf> {
        std::fs::read_dir(self.layer_runs()?)
            .ok()?
            .flatten()
            .find_map(|run| {
                std::fs::read_dir(run.path())
                    .ok()?
                    .flatten()
                    .find_map(|root| {
                        let p = root.path().join("upper").join(rel);
                        p.exists().then_some(p)
                    })
            })
    }

    /// The python interpreter payloads use.
    pub fn python(&self) -> String {
        self.suite
            .python
            .as_ref()
            .map_or_else(|| "python3".into(), |p| p.display().to_string())
    }

    /// The cordon binary a run of this column uses (the mutants build under a weakening).
    pub fn cordon_binary(&self) -> &Path {
        if self.suite.mutant.is_some() {
            &self.suite.cordon_mutants
        } else {
            &self.suite.cordon
        }
    }

    /// A `cordon run --json` of the column, not yet started.
    pub fn cordon(&self) -> Run<'_, 'a> {
        Run {
            ctx: self,
            build: Build::Default,
            args: Vec::new(),
            payload: Vec::new(),
            env: Vec::new(),
            stdin: None,
            posture: true,
            inherit: Vec::new(),
            cwd: None,
            path: STD_PATH.into(),
            binary: None,
            steps: Vec::new(),
        }
    }

    /// `cordon run --json -- /bin/sh -c '<canary>; script'`.
    pub fn sh(&self, script: &str) -> RunOut {
        self.cordon().sh(script).run()
    }

    /// `cordon run --json -- /bin/sh -c '<canary>; step 1; marker 1; step 2; marker 2 …'`: see
    /// [`Run::steps`].
    pub fn sh_steps(&self, steps: &[&str]) -> RunOut {
        self.cordon().steps(steps).run()
    }

    /// Runs `code` with python3 in the jail after the canary.
    pub fn py(&self, code: &str) -> RunOut {
        self.cordon().py(code).run()
    }

    /// An attack's verdict: no canary → INCONCLUSIVE; a step of a multi-step payload that did
    /// not run → INCONCLUSIVE (unless that already escaped); an unsandboxed run that ran →
    /// ESCAPED.
    pub fn judge(&self, out: &RunOut, escaped: bool, detail: impl Into<String>) -> Outcome {
        let detail = detail.into();
        if !self.canary() {
            return Outcome::new(
                Verdict::Inconclusive,
                format!(
                    "no canary (the payload did not prove it ran): {}; {}; stderr: {}",
                    out.brief(),
                    detail,
                    cut(&out.err, 300)
                ),
            );
        }
        let missing: Vec<usize> = out
            .steps
            .iter()
            .enumerate()
            .filter(|(_, m)| !out.out.lines().any(|l| l == m.as_str()))
            .map(|(i, _)| i + 1)
            .collect();
        if !missing.is_empty() && !escaped && !out.unsandboxed() {
            return Outcome::new(
                Verdict::Inconclusive,
                format!(
                    "step(s) {missing:?} of {} never ran (the shell stopped before them), so \
                     they were not attempted: {}; {detail}; stderr: {}",
                    out.steps.len(),
                    out.brief(),
                    cut(&out.err, 300)
                ),
            );
        }
        if out.unsandboxed() {
            return Outcome::new(Verdict::Escaped, format!("ran unsandboxed; {detail}"));
        }
        if escaped {
            Outcome::new(Verdict::Escaped, detail)
        } else {
            Outcome::new(Verdict::Blocked, detail)
        }
    }

    /// A control row's verdict.
    pub fn control(&self, out: &RunOut, works: bool, detail: impl Into<String>) -> Outcome {
        let detail = detail.into();
        if works && !out.unsandboxed() {
            Outcome::new(Verdict::Ok, detail)
        } else {
            Outcome::new(
                Verdict::Broken,
                format!(
                    "{detail}; {}; stdout: {}; stderr: {}",
                    out.brief(),
                    cut(&out.out, 200),
                    cut(&out.err, 300)
                ),
            )
        }
    }

    /// Runs `argv` on the host (outside any jail) as the column's user, with the standard
    /// environment: to learn whether a tool works at all before blaming the jail.
    pub fn on_host(&self, argv: &[&str], env: &[(&str, &str)]) -> bool {
        let mut cmd = self.as_user(argv.iter().map(OsString::from).collect());
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", STD_PATH)
            .envs(env.iter().copied())
            .current_dir(&self.work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let Ok(mut child) = cmd.spawn() else {
            return false;
        };
        wait_deadline(&mut child, Duration::from_secs(60)).is_some_and(|s| s.success())
    }

    /// A command that runs `argv` as the column's user.
    pub fn as_user(&self, argv: Vec<OsString>) -> Command {
        if self.column.who == Who::User && self.suite.drop_with_setpriv {
            let mut cmd = Command::new("/usr/bin/setpriv");
            cmd.arg(format!("--reuid={}", self.ids.uid))
                .arg(format!("--regid={}", self.ids.gid))
                .arg("--clear-groups")
                .arg("--")
                .args(argv);
            cmd
        } else {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            cmd
        }
    }
}

/// Runs argv[3:] (`cordon serve …`), sends it a first request (`/bin/true`), waits 100 ms for
/// the session to build its next jail, then sends argv[1] (the payload as a JSON array) and
/// prints that answer, exiting with its `exit_code` as `cordon run --json` would.
const SERVE_DRIVER: &str = r#"
import json, subprocess, sys, time
serve = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def ask(line):
    serve.stdin.write(line.encode() + b"\n")
    serve.stdin.flush()
    return serve.stdout.readline()
try:
    first = ask('["/bin/true"]')
except OSError:
    first = b""
if not first:
    # serve refused the session (bad options, a workspace the walk refuses): its exit code and
    # its stderr are the answer, as `cordon run`'s would be.
    sys.exit(serve.wait())
time.sleep(0.1)
answer = ask(sys.argv[1])
serve.stdin.close()
serve.wait()
sys.stdout.buffer.write(answer)
sys.stdout.flush()
try:
    code = json.loads(answer).get("exit_code", 125)
except ValueError:
    code = 125
sys.exit(code if isinstance(code, int) and 0 <= code < 256 else 125)
"#;

/// Commands of a `serve` column that ran, but not in a jail built ahead of them (the column
/// would then prove nothing about such jails): `mod.rs` fails the suite when this is not zero.
pub static SERVED_COLD: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// A `cordon` invocation being put together.
#[derive(Debug)]
pub struct Run<'c, 'a> {
    ctx: &'c Ctx<'a>,
    build: Build,
    args: Vec<OsString>,
    payload: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    posture: bool,
    /// `(fd, shell redirection target)` opened by a wrapper shell before cordon starts.
    inherit: Vec<String>,
    cwd: Option<PathBuf>,
    path: String,
    /// A copy of cordon placed by the case, run instead of the suite's build.
    binary: Option<PathBuf>,
    /// The markers [`Run::steps`] makes the payload print.
    steps: Vec<String>,
}

impl<'c, 'a> Run<'c, 'a> {
    /// Runs this copy of cordon (the build the column would use, placed by the case).
    pub fn placed_binary(mut self, path: &Path) -> Self {
        self.binary = Some(path.to_path_buf());
        self
    }

    /// Adds `cordon run` options (before `--`).
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The payload (after `--`).
    pub fn payload<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, argv: I) -> Self {
        self.payload = argv.into_iter().map(Into::into).collect();
        self
    }

    /// `/bin/sh -c '<canary>; script'`.
    pub fn sh(self, script: &str) -> Self {
        let full = format!("{}\n{script}", self.ctx.canary_sh());
        self.payload(["/bin/sh".into(), "-c".into(), OsString::from(full)])
    }

    /// `/bin/sh -c '<canary>; step 1; marker 1; step 2; marker 2 …'`: each step is followed by
    /// a line that prints its own marker whatever the step's exit status, and [`Ctx::judge`]
    /// wants every marker, so a step the shell never reached (a special built-in such as `:`
    /// whose redirection failed makes `sh` exit; so does `exec`, `set`, `.`, `export`, `eval`
    /// …) reads INCONCLUSIVE, never blocked.
    pub fn steps(self, steps: &[&str]) -> Self {
        let (script, markers) = marked(steps);
        self.sh(&script).expect_steps(markers)
    }

    /// The step markers a payload built with [`marked`] prints: [`Ctx::judge`] wants them all.
    pub fn expect_steps(mut self, markers: Vec<String>) -> Self {
        self.steps = markers;
        self
    }

    /// python3 running `code` (written to the workspace) after the canary.
    pub fn py(self, code: &str) -> Self {
        let name = format!(".escape-payload-{}.py", token());
        let written = self.ctx.file(&name, code);
        let py = self.ctx.python();
        match written {
            Ok(path) => {
                let script = format!("exec {py} '{}'", path.display());
                self.sh(&script)
            }
            Err(e) => self.sh(&format!("echo 'harness: {e}' >&2; exit 99")),
        }
    }

    /// An extra variable in cordon's own environment.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Replaces the `PATH` cordon gets.
    pub fn path(mut self, path: &str) -> Self {
        self.path = path.into();
        self
    }

    /// Feeds these bytes on stdin (default: `/dev/null`).
    pub fn stdin(mut self, bytes: &[u8]) -> Self {
        self.stdin = Some(bytes.to_vec());
        self
    }

    /// Runs the `mutants` build (for the bubblewrap override) without any weakening selected.
    pub fn mutants_build(mut self) -> Self {
        self.build = Build::Mutants;
        self
    }

    /// Leaves out the column's profile options (the case chooses).
    pub fn no_posture(mut self) -> Self {
        self.posture = false;
        self
    }

    /// cordon inherits a descriptor: `redirect` is a shell redirection such as `9<'/path'`,
    /// made by a wrapper shell running as root before dropping to the column's user.
    pub fn inherit(mut self, redirect: &str) -> Self {
        self.inherit.push(redirect.into());
        self
    }

    /// cordon's own working directory (default: the workspace).
    pub fn cwd(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    /// The command, ready to spawn: `cordon run --json`.
    pub fn command(&self) -> Command {
        self.command_as(None)
    }

    /// In a `serve` column, what [`Run::run`] starts: the payload as the second request of a
    /// `cordon serve` session ([`SERVE_DRIVER`]), when it can be one (no stdin to feed, no
    /// descriptor to inherit, arguments that are UTF-8, no bubblewrap override); else `cordon
    /// run --json`. Under a weakening the session is the mutants build's.
    fn served_payload(&self) -> Option<String> {
        // A case that needs the mutants build for its bubblewrap override stays `cordon run`;
        // a weakened launcher (the mutants run) builds jails ahead like the real one.
        // A layered session with the proxy network builds no jail ahead (cordon-launch's
        // warm.rs): such a case runs as `cordon run` in the serve-layer column.
        let proxied_layer = self.ctx.column.jail == super::columns::Jail::ServedLayer
            && self
                .args
                .windows(2)
                .any(|w| w[0] == "--network" && w[1] == "proxy");
        if !self.ctx.column.served()
            || self.stdin.is_some()
            || !self.inherit.is_empty()
            || self.build == Build::Mutants
            || proxied_layer
        {
            return None;
        }
        self.request_line()
    }

    /// The payload as a `cordon serve` request line (a JSON array), when its words are UTF-8.
    pub fn request_line(&self) -> Option<String> {
        let words: Option<Vec<&str>> = self.payload.iter().map(|w| w.to_str()).collect();
        serde_json::to_string(&words?).ok()
    }

    /// `cordon serve` with the column's options (and this run's), as the column's user, with the
    /// run's environment: requests go to its stdin ([`Run::request_line`]).
    pub fn serve_command(&self) -> Command {
        let mut argv = vec![self.binary().into(), OsString::from("serve")];
        self.options(&mut argv);
        self.finish(argv)
    }

    fn binary(&self) -> &Path {
        match (&self.binary, self.build, self.ctx.suite.mutant) {
            (Some(placed), _, _) => placed,
            (None, Build::Mutants, _) | (None, _, Some(_)) => &self.ctx.suite.cordon_mutants,
            (None, Build::Default, None) => &self.ctx.suite.cordon,
        }
    }

    /// The command: `cordon run --json …`, or with `served` (the request line) the serve driver
    /// around `cordon serve …`.
    fn command_as(&self, served: Option<String>) -> Command {
        let ctx = self.ctx;
        if ctx.column.unjailed() {
            return self.unjailed_command();
        }
        let binary = self.binary();
        let mut argv: Vec<OsString> = match &served {
            // Isolated mode: the host-side driver must not run what the case plants in the
            // environment for the jail's python (PYTHONSTARTUP, PYTHONPATH, …).
            Some(request) => vec![
                ctx.python().into(),
                "-I".into(),
                "-S".into(),
                "-c".into(),
                SERVE_DRIVER.into(),
                request.into(),
                binary.into(),
                "serve".into(),
            ],
            None => vec![binary.into(), "run".into(), "--json".into()],
        };
        self.options(&mut argv);
        if served.is_none() {
            argv.push("--".into());
            argv.extend(self.payload.iter().cloned());
        }
        self.finish(argv)
    }

    /// The column's profile and backend options, then the run's own.
    fn options(&self, argv: &mut Vec<OsString>) {
        let ctx = self.ctx;
        if self.posture {
            argv.extend(ctx.column.profile_args().iter().map(OsString::from));
        }
        if !self.args.iter().any(|a| a == "--backend") {
            argv.extend(ctx.column.backend_args().iter().map(OsString::from));
        }
        let mode = |a: &OsString| a == "--layer" || a == "--live" || a == "--review";
        if ctx.column.live() && !self.args.iter().any(mode) {
            argv.push("--live".into());
        }
        argv.extend(self.args.iter().cloned());
    }

    /// `argv` as the column's user, in the run's environment and directory.
    fn finish(&self, argv: Vec<OsString>) -> Command {
        let ctx = self.ctx;
        let mut cmd = if self.inherit.is_empty() {
            ctx.as_user(argv)
        } else {
            // A root shell opens the descriptors, then becomes setpriv/cordon.
            let inner = ctx.as_user(argv);
            let mut words: Vec<OsString> = vec![inner.get_program().into()];
            words.extend(inner.get_args().map(OsString::from));
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c")
                .arg(format!("exec {} && exec \"$@\"", self.inherit.join(" ")))
                .arg("escape-wrapper")
                .args(words);
            cmd
        };
        cmd.env_clear()
            .env("HOME", &ctx.home)
            .env("PATH", &self.path)
            .env("LANG", "C.UTF-8")
            .env(
                "XDG_CACHE_HOME",
                ctx.suite.base.join(format!("cache-{}", ctx.ids.uid)),
            )
            .env("ESCAPE_HOST_MARK", format!("HOSTENV-{}", ctx.token))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(self.cwd.as_deref().unwrap_or(&ctx.work));
        if let Some(m) = ctx.suite.mutant {
            cmd.env("CORDON_MUTANT", m);
        }
        cmd
    }

    /// In a no-jail column: the payload itself, run directly as the column's user (through the
    /// same descriptor-opening wrapper), in the same working directory and with the environment
    /// cordon would have been given. cordon's options (`--timeout`, `--env`, `--cwd` …) and the
    /// project file have no one to apply them: they are part of the jail.
    fn unjailed_command(&self) -> Command {
        let mut cmd = self.finish(self.payload.clone());
        // No weakened launcher to tell: nothing here is cordon.
        cmd.env_remove("CORDON_MUTANT");
        // Its own process group, so that the harness's deadline kills what it left running.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    }

    /// Starts it without waiting (stdout and stderr go to files in the case directory).
    pub fn spawn(&self) -> std::io::Result<Child> {
        let mut cmd = self.command();
        let out = std::fs::File::create(self.ctx.dir.join("spawned.out"))?;
        let err = std::fs::File::create(self.ctx.dir.join("spawned.err"))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        cmd.spawn()
    }

    /// Runs it to the end (or [`HARD_DEADLINE`]).
    pub fn run(self) -> RunOut {
        let start = Instant::now();
        let request = self.served_payload();
        let served = request.is_some();
        let mut cmd = self.command_as(request);
        cmd.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = match spawn_retrying_busy(&mut cmd) {
            Ok(c) => c,
            Err(e) => {
                return RunOut {
                    err: format!("harness: cannot start cordon: {e}"),
                    ..RunOut::default()
                };
            }
        };
        if let (Some(bytes), Some(mut pipe)) = (self.stdin.clone(), child.stdin.take()) {
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let read = |r: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut buf);
                }
                buf
            })
        };
        let out = read(
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let err = read(
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let unjailed = self.ctx.column.unjailed();
        let deadline = if unjailed {
            NO_JAIL_DEADLINE
        } else {
            HARD_DEADLINE
        };
        let status = wait_deadline(&mut child, deadline);
        let hung = status.is_none();
        if hung {
            // The payload's whole process group (its own: see `unjailed_command`); never a
            // group the harness did not make (no pid 0 or 1, which would mean every process).
            if unjailed
                && let Some(group) = i32::try_from(child.id())
                    .ok()
                    .filter(|pid| *pid > 1)
                    .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let stdout = out.join().unwrap_or_default();
        let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
        let json: Option<Value> = serde_json::from_slice(&stdout).ok();
        if served
            && let Some(j) = &json
            && matches!(
                j["status"].as_str(),
                Some("exited" | "signaled" | "timeout")
            )
            && j["built_ahead"] != Value::Bool(true)
            && let Ok(mut cold) = SERVED_COLD.lock()
        {
            cold.push(format!("{} ({})", self.ctx.dir.display(), j["status"]));
        }
        let (payload_out, payload_err) = match &json {
            Some(j) => (
                j["stdout"]["text"].as_str().unwrap_or("").to_owned(),
                format!("{}\n{stderr}", j["stderr"]["text"].as_str().unwrap_or("")),
            ),
            None => (String::from_utf8_lossy(&stdout).into_owned(), stderr),
        };
        RunOut {
            code: status.and_then(|s| s.code().or_else(|| s.signal().map(|n| 128 + n))),
            json,
            out: payload_out,
            err: payload_err,
            took: start.elapsed(),
            hung,
            steps: self.steps.clone(),
        }
    }
}

/// Waits for `child` at most `limit`; `None` when it is still running.
pub fn wait_deadline(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(10)),
            _ => return None,
        }
    }
}

/// Polls `cond` every 20 ms for at most `limit`.
pub fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// A shell script of `steps`, each followed by a line printing its own marker (whatever the
/// step's exit status), and those markers; see [`Run::steps`].
pub fn marked(steps: &[&str]) -> (String, Vec<String>) {
    let tok = token();
    let markers: Vec<String> = (1..=steps.len())
        .map(|i| format!("escape-step-{i}-{tok}"))
        .collect();
    let script = steps
        .iter()
        .zip(&markers)
        .map(|(step, marker)| format!("{step}\necho {marker}\n"))
        .collect();
    (script, markers)
}

/// Single-quotes a word for `/bin/sh`.
pub fn q(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Single-quotes a path for `/bin/sh`.
pub fn qp(path: &Path) -> String {
    q(&path.display().to_string())
}

/// `cmd.spawn()`, tried again for a second at most while it fails with `ETXTBSY`: a binary a
/// case copied just before (the stage placed in a hidden directory) is still open for writing
/// in a child another case's thread forked meanwhile, until that child execs.
pub fn spawn_retrying_busy(cmd: &mut Command) -> std::io::Result<Child> {
    const ETXTBSY: i32 = 26;
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// The markers `sh` printed for `steps`.
    fn printed(steps: &[&str]) -> Vec<bool> {
        let (script, markers) = marked(steps);
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .stderr(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        markers
            .iter()
            .map(|m| text.lines().any(|l| l == m.as_str()))
            .collect()
    }

    #[test]
    fn every_step_prints_its_marker_whatever_its_exit_status() {
        assert_eq!(
            printed(&[
                "true",
                "false",
                "ls /nonexistent-escape-dir",
                "exit_status_is_ignored=1"
            ]),
            [true; 4]
        );
    }

    #[test]
    fn a_special_builtin_whose_redirection_fails_ends_the_shell_and_its_markers() {
        // The writes/metadata defect: `: > file` where the file cannot be opened makes a POSIX
        // shell exit, so nothing after it runs; `true >` does not.
        let bad = "/nonexistent-escape-dir/victim";
        assert_eq!(
            printed(&["true", &format!(": > {bad}"), "true"]),
            [true, false, false]
        );
        assert_eq!(
            printed(&["true", &format!("true > {bad}"), "true"]),
            [true, true, true]
        );
    }
}
