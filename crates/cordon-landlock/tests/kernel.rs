//! Landlock rules from a real `Plan` against the real kernel.
//!
//! `main` builds a test-owned tree (a home with credentials, a git workspace, a read-only
//! directory) under `CARGO_TARGET_TMPDIR` (or `CORDON_LANDLOCK_TEST_DIR`), a private temporary
//! directory under the system's temporary directory, resolves a Shell-profile `Plan` for it
//! (host posture, network denied), turns it into `Rules` for the `landlock` backend and writes
//! their encoding to a file. Then it re-runs this binary once per case, naming the case in
//! `CORDON_LANDLOCK_KERNEL_CASE`: the child decodes the rules, creates the ruleset, applies it
//! to itself — as cordon's stage does — tries operations and prints one line per operation. The
//! parent checks each outcome, and afterwards checks on disk that nothing refused happened
//! anyway. Network and signal cases also run unrestricted (`baseline`) to show the refusal
//! comes from Landlock.
//!
//! Nothing is skipped: a kernel without Landlock, or with an ABI older than a case needs, fails
//! that case with the reason.

#![allow(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use cordon_landlock::{
    Abi, Access, FsLister, LandlockError, Options, PathRule, Rules, Ruleset, SkipReason,
};
use cordon_policy::{Invocation, Plan, Policy, PolicyBuilder, Posture, Profile, RealHost, Source};

const CASE_VAR: &str = "CORDON_LANDLOCK_KERNEL_CASE";
const ROOT_VAR: &str = "CORDON_LANDLOCK_KERNEL_ROOT";
const TMP_VAR: &str = "CORDON_LANDLOCK_KERNEL_TMP";
const SENTINEL_VAR: &str = "CORDON_LANDLOCK_KERNEL_SENTINEL";
const PORT_VAR: &str = "CORDON_LANDLOCK_KERNEL_PORT";
const PID_VAR: &str = "CORDON_LANDLOCK_KERNEL_PID";
const ABSTRACT_VAR: &str = "CORDON_LANDLOCK_KERNEL_ABSTRACT";
const RULES_VAR: &str = "CORDON_LANDLOCK_KERNEL_RULES";
const RESTRICT_VAR: &str = "CORDON_LANDLOCK_KERNEL_RESTRICT";

const CONFIG: &str = "[core]\n\tbare = false\n";
const ENVRC: &str = "export SAFE=1\n";
const HOOK: &str = "#!/bin/sh\nexit 0\n";
const OUTSIDE: &str = "read-only data\n";

fn main() -> ExitCode {
    if let Ok(case) = std::env::var(CASE_VAR) {
        child(&case);
        return ExitCode::SUCCESS;
    }
    parent()
}

// ---------------------------------------------------------------------------------------------
// The child: restrict, then try.

fn env_path(var: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(var).unwrap())
}

fn child(case: &str) {
    let root = env_path(ROOT_VAR);
    if std::env::var(RESTRICT_VAR).as_deref() != Ok("0") {
        let bytes = fs::read(env_path(RULES_VAR)).unwrap();
        let rules = Rules::decode(&bytes).unwrap();
        let abi = Abi::detect().unwrap();
        let (ruleset, report) = Ruleset::create(&rules, abi).unwrap();
        println!("report\t{report}");
        ruleset.restrict_self().unwrap();
        drop(ruleset);
    }
    let ws = root.join("ws");
    let home = root.join("home");
    match case {
        "masks" | "minimal" | "hidden home" => {
            out("read neighbour", fs::read(home.join("notes.txt")));
            out(
                "read neighbour dir file",
                fs::read(home.join(".config/tool.toml")),
            );
            out("read masked file", fs::read(home.join(".netrc")));
            out("read in masked dir", fs::read(home.join(".ssh/id_test")));
            out(
                "read via symlink in home",
                fs::read(home.join("ssh-link/id_test")),
            );
            out(
                "read via symlink in workspace",
                fs::read(ws.join("src/key-link")),
            );
            out("list masked dir", fs::read_dir(home.join(".ssh")));
            out(
                "read sibling created later",
                fs::read(home.join("later.txt")),
            );
            out("read outside tree", fs::read(root.join("outside/file.txt")));
            out("read host tmp sentinel", fs::read(env_path(SENTINEL_VAR)));
            out("exec /bin/true", run_ok(&mut Command::new("/bin/true")));
            out("create in home", create(&home.join("planted")));
        }
        "writes" => {
            let src = ws.join("src");
            out("write existing", write_existing(&src.join("main.rs")));
            out("create in subdir", create(&src.join("new.rs")));
            out("mkdir in subdir", fs::create_dir(src.join("sub")));
            out("create in new subdir", create(&src.join("sub/x")));
            out(
                "rename in subdir",
                fs::rename(src.join("new.rs"), src.join("renamed.rs")),
            );
            out(
                "move between subdirs",
                fs::rename(src.join("renamed.rs"), ws.join("target/moved.rs")),
            );
            out(
                "unlink in subdir",
                fs::remove_file(ws.join("target/moved.rs")),
            );
            out("mkfifo in subdir", mkfifo(&src.join("fifo")));
            out(
                "symlink in subdir",
                std::os::unix::fs::symlink("main.rs", src.join("l")),
            );
            out("mknod char device in subdir", mknod_null(&src.join("null")));
            out(
                "write existing top-level file",
                write_existing(&ws.join("README.md")),
            );
            out("create at top level", create(&ws.join("new-top")));
            out("mkdir at top level", fs::create_dir(ws.join("newdir")));
            out("unlink at top level", fs::remove_file(ws.join("README.md")));
            out("create outside", create(&root.join("outside/new")));
            out(
                "write outside",
                write_existing(&root.join("outside/file.txt")),
            );
            out("truncate outside", truncate(&root.join("outside/file.txt")));
            let tmp = env_path(TMP_VAR);
            out("create in temp dir", create(&tmp.join("x")));
            out("read back in temp dir", fs::read(tmp.join("x")));
            out("write /dev/null", write_existing(Path::new("/dev/null")));
            out("read /dev/zero", read_some(Path::new("/dev/zero")));
        }
        "protected" => {
            let git = ws.join(".git");
            fs::write(ws.join("src/evil"), "#!/bin/sh\necho pwned\n").unwrap();
            out("write protected file", write_existing(&git.join("config")));
            out("truncate protected file", truncate(&git.join("config")));
            out("unlink protected file", fs::remove_file(git.join("config")));
            out(
                "rename over protected file from subdir",
                fs::rename(ws.join("src/evil"), git.join("config")),
            );
            out(
                "rename over protected file in same dir",
                fs::rename(ws.join("README.md"), ws.join(".envrc")),
            );
            out(
                "write protected top-level file",
                write_existing(&ws.join(".envrc")),
            );
            out(
                "unlink protected top-level file",
                fs::remove_file(ws.join(".envrc")),
            );
            out("create hook", create(&git.join("hooks/pre-commit")));
            out(
                "symlink hook",
                std::os::unix::fs::symlink("../../src/evil", git.join("hooks/pre-commit")),
            );
            out(
                "link hook",
                fs::hard_link(ws.join("src/evil"), git.join("hooks/pre-commit")),
            );
            out(
                "write existing hook",
                write_existing(&git.join("hooks/existing")),
            );
            out(
                "unlink existing hook",
                fs::remove_file(git.join("hooks/existing")),
            );
            out(
                "rename hooks dir",
                fs::rename(git.join("hooks"), git.join("hooks-old")),
            );
            out("rename .git", fs::rename(&git, ws.join("git-old")));
            out("create git lock", create(&git.join("index.lock")));
            out(
                "write existing file in .git",
                write_existing(&git.join("HEAD")),
            );
            out(
                "mkdir in .git/objects",
                fs::create_dir(git.join("objects/ab")),
            );
        }
        "network" => {
            let port: u16 = std::env::var(PORT_VAR).unwrap().parse().unwrap();
            out(
                "tcp connect",
                std::net::TcpStream::connect(("127.0.0.1", port)),
            );
            out("tcp bind", std::net::TcpListener::bind("127.0.0.1:0"));
            let name = std::env::var(ABSTRACT_VAR).unwrap();
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            out(
                "abstract unix connect",
                std::os::unix::net::UnixStream::connect_addr(&addr),
            );
        }
        "signals" => {
            let pid: i32 = std::env::var(PID_VAR).unwrap().parse().unwrap();
            out("probe outside process", kill(pid, 0));
            if std::env::var(RESTRICT_VAR).as_deref() != Ok("0") {
                // Only restricted: a delivered SIGTERM would end the target.
                out("signal outside process", kill(pid, libc::SIGTERM));
            }
            let mut own = Command::new("/bin/sleep").arg("1000").spawn().unwrap();
            out("signal own child", kill(own.id() as i32, libc::SIGKILL));
            let status = own.wait().unwrap();
            out(
                "own child killed",
                if status.signal() == Some(libc::SIGKILL) {
                    Ok(())
                } else {
                    Err(std::io::Error::other(format!("{status}")))
                },
            );
        }
        "make_reg_only" => {
            let dir = root.join("evidence");
            let mut opts = fs::OpenOptions::new();
            opts.write(true).create_new(true);
            out("create and open for writing", opts.open(dir.join("f")));
        }
        other => panic!("unknown case {other}"),
    }
}

fn out<T>(name: &str, result: std::io::Result<T>) {
    let text = match result {
        Ok(_) => "ok".to_owned(),
        Err(e) => format!("errno:{}", e.raw_os_error().unwrap_or(-1)),
    };
    println!("{name}\t{text}");
}

fn create(path: &Path) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(b"planted\n")
}

fn write_existing(path: &Path) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().append(true).open(path)?;
    f.write_all(b"")
}

fn read_some(path: &Path) -> std::io::Result<()> {
    use std::io::Read;
    let mut buf = [0u8; 8];
    fs::File::open(path)?.read_exact(&mut buf)
}

fn run_ok(cmd: &mut Command) -> std::io::Result<()> {
    let status = cmd.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("{status}")))
    }
}

fn cstr(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

fn truncate(path: &Path) -> std::io::Result<()> {
    let c = cstr(path);
    // SAFETY: c is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::truncate(c.as_ptr(), 0) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn mkfifo(path: &Path) -> std::io::Result<()> {
    let c = cstr(path);
    // SAFETY: c is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A device node with `/dev/null`'s numbers: harmless even if it were created.
fn mknod_null(path: &Path) -> std::io::Result<()> {
    let c = cstr(path);
    // SAFETY: c is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn kill(pid: i32, sig: i32) -> std::io::Result<()> {
    // SAFETY: kill takes integers only.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

// ---------------------------------------------------------------------------------------------
// The parent: lay out, build rules, run cases, judge.

#[derive(Debug, Clone, Copy)]
enum Expect {
    Ok,
    Errno(i32),
    /// Refused, with whichever errno the kernel picks for the path (EACCES, EXDEV for a
    /// cross-directory move, EPERM).
    Refused,
}

struct Layout {
    _keep: tempfile::TempDir,
    _tmp_keep: tempfile::TempDir,
    _sentinel: tempfile::NamedTempFile,
    root: PathBuf,
    tmp: PathBuf,
    sentinel: PathBuf,
}

fn layout() -> Layout {
    const PRIVATE: [&str; 3] = ["/tmp", "/var/tmp", "/run"];
    let base = std::env::var_os("CORDON_LANDLOCK_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            // A checkout under /tmp (a CI clone, say): root can use /var/lib instead.
            if PRIVATE.iter().any(|p| target.starts_with(p))
                && fs::create_dir_all("/var/lib/cordon-test-landlock").is_ok()
            {
                PathBuf::from("/var/lib/cordon-test-landlock")
            } else {
                target
            }
        });
    fs::create_dir_all(&base).unwrap();
    let base = fs::canonicalize(&base).unwrap();
    for private in PRIVATE {
        assert!(
            !base.starts_with(private),
            "the test tree must lie outside {private}: the landlock backend hides the host's \
             private directories, so the tree's read checks would fail for the wrong reason \
             (set CORDON_LANDLOCK_TEST_DIR to a directory elsewhere; it is {})",
            base.display()
        );
    }
    let keep = tempfile::Builder::new()
        .prefix("landlock-kernel-")
        .tempdir_in(&base)
        .unwrap();
    let root = fs::canonicalize(keep.path()).unwrap();
    let files: &[(&str, &str)] = &[
        ("home/.ssh/id_test", "TEST-KEY-NOT-A-REAL-ONE\n"),
        ("home/.netrc", "machine example.invalid password test\n"),
        ("home/notes.txt", "notes\n"),
        ("home/.config/tool.toml", "x = 1\n"),
        ("ws/src/main.rs", "fn main() {}\n"),
        ("ws/README.md", "readme\n"),
        ("ws/.envrc", ENVRC),
        ("ws/.git/config", CONFIG),
        ("ws/.git/HEAD", "ref: refs/heads/main\n"),
        ("ws/.git/hooks/existing", HOOK),
        ("outside/file.txt", OUTSIDE),
    ];
    for (rel, text) in files {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
    }
    for dir in ["ws/target", "ws/.git/objects", "evidence"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    // Symlinks into a masked directory: in the home (split around the masks) and in the
    // workspace.
    std::os::unix::fs::symlink(".ssh", root.join("home/ssh-link")).unwrap();
    std::os::unix::fs::symlink("../../home/.ssh/id_test", root.join("ws/src/key-link")).unwrap();
    // The launcher's private temporary directory, and a file of "another program" beside it.
    let tmp_keep = tempfile::Builder::new()
        .prefix("cordon-landlock-tmp-")
        .tempdir()
        .unwrap();
    let tmp = fs::canonicalize(tmp_keep.path()).unwrap();
    let mut sentinel = tempfile::Builder::new()
        .prefix("cordon-landlock-sentinel-")
        .tempfile()
        .unwrap();
    sentinel
        .write_all(b"another program's temp file\n")
        .unwrap();
    let sentinel_path = fs::canonicalize(sentinel.path()).unwrap();
    Layout {
        _keep: keep,
        _tmp_keep: tmp_keep,
        _sentinel: sentinel,
        root,
        tmp,
        sentinel: sentinel_path,
    }
}

struct Judge {
    failures: Vec<String>,
}

impl Judge {
    fn check(&mut self, case: &str, cond: bool, what: impl FnOnce() -> String) {
        if cond {
            println!("ok    {case}: {}", what());
        } else {
            let msg = format!("{case}: {}", what());
            println!("FAIL  {msg}");
            self.failures.push(msg);
        }
    }

    fn require_abi(&mut self, case: &str, abi: Abi, needed: Abi, what: &str) -> bool {
        let ok = abi >= needed;
        self.check(case, ok, || {
            format!("{what} needs Landlock {needed}; this kernel has {abi}")
        });
        ok
    }
}

fn run_child(
    case: &str,
    layout: &Layout,
    rules: &Path,
    restrict: bool,
    extra: &[(&str, String)],
) -> (BTreeMap<String, String>, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(CASE_VAR, case)
        .env(ROOT_VAR, &layout.root)
        .env(TMP_VAR, &layout.tmp)
        .env(SENTINEL_VAR, &layout.sentinel)
        .env(RULES_VAR, rules)
        .env(RESTRICT_VAR, if restrict { "1" } else { "0" })
        .stdin(Stdio::null());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut seen = BTreeMap::new();
    for line in stdout.lines() {
        if let Some((k, v)) = line.split_once('\t') {
            seen.insert(k.to_owned(), v.to_owned());
        }
    }
    if !output.status.success() {
        seen.insert(
            "child exit".to_owned(),
            format!("{} {stderr}", output.status),
        );
    }
    (seen, stderr)
}

fn judge_outcomes(
    j: &mut Judge,
    case: &str,
    seen: &BTreeMap<String, String>,
    expected: &[(&str, Expect)],
) {
    if let Some(exit) = seen.get("child exit") {
        j.check(case, false, || format!("child failed: {exit}"));
    }
    for (op, want) in expected {
        let got = seen.get(*op).map(String::as_str).unwrap_or("<missing>");
        let errno = got
            .strip_prefix("errno:")
            .and_then(|e| e.parse::<i32>().ok());
        let pass = match want {
            Expect::Ok => got == "ok",
            Expect::Errno(e) => errno == Some(*e),
            Expect::Refused => {
                matches!(errno, Some(libc::EACCES | libc::EXDEV | libc::EPERM))
            }
        };
        j.check(case, pass, || format!("{op}: want {want:?}, got {got}"));
    }
}

fn parent() -> ExitCode {
    let mut j = Judge {
        failures: Vec::new(),
    };
    let abi = match Abi::detect() {
        Ok(abi) => abi,
        Err(e) => {
            println!("FAIL  Landlock is required for these tests: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("kernel Landlock {abi}");
    let layout = layout();
    let root = &layout.root;
    let ws = root.join("ws");
    let home = root.join("home");

    // The plan and its rules, as the landlock backend would build them, with the home visible
    // (`home = "visible"`), so the masks below it are Landlock's to hold piecewise.
    let mut visible = PolicyBuilder::new(Profile::Shell);
    visible.set_home(cordon_policy::HomeMode::Visible, Source::Caller);
    let plan = Plan::resolve(
        &visible.build(),
        &Invocation::at(&ws),
        &RealHost::new(Some(home.clone().into_os_string())),
    )
    .unwrap();
    let masked: Vec<&Path> = plan.masks.iter().map(|m| m.target.as_path()).collect();
    let protected: Vec<&Path> = plan.protected.iter().map(|p| p.path.as_path()).collect();
    j.check(
        "plan",
        masked.contains(&home.join(".ssh").as_path())
            && masked.contains(&home.join(".netrc").as_path())
            && protected.contains(&ws.join(".git/hooks").as_path())
            && protected.contains(&ws.join(".git/config").as_path())
            && protected.contains(&ws.join(".envrc").as_path()),
        || format!("masks {masked:?}, protected {protected:?}"),
    );
    let started = std::time::Instant::now();
    let rules = Rules::from_plan(&plan, &Options::alone(&layout.tmp), &FsLister).unwrap();
    let built = started.elapsed();
    let rules_file = root.join("rules.bin");
    fs::write(&rules_file, rules.encode()).unwrap();
    // Created after the rules were made: a new sibling of masked paths.
    fs::write(home.join("later.txt"), "later\n").unwrap();

    // The report names the ABI, and the full ruleset builds on this kernel.
    let started = std::time::Instant::now();
    let created = Ruleset::create(&rules, abi);
    println!(
        "info  {} rules ({} bytes encoded): built from the plan in {built:?}, ruleset created in {:?}",
        rules.paths.len(),
        rules.encode().len(),
        started.elapsed()
    );
    match created {
        Ok((_, report)) => {
            j.check("report", report.abi == abi, || format!("{report}"));
            j.check(
                "report",
                report
                    .to_string()
                    .contains(&format!("Landlock ABI {}", abi.version())),
                || "the report's text names the ABI".to_owned(),
            );
            j.check("report", abi < Abi::V6 || report.dropped.is_empty(), || {
                format!("nothing dropped at {abi}: {:?}", report.dropped)
            });
        }
        Err(e) => j.check("report", false, || format!("Ruleset::create failed: {e}")),
    }

    // A rule never lands on a symlink's target, a missing path is skipped and reported, a
    // missing writable root is an error.
    let odd = Rules {
        paths: vec![
            PathRule {
                path: home.join("notes.txt"),
                access: Access::READ,
            },
            PathRule {
                path: home.join("ssh-link"),
                access: Access::READ,
            },
            PathRule {
                path: home.join("ssh-link/id_test"),
                access: Access::READ,
            },
            PathRule {
                path: root.join("missing"),
                access: Access::READ,
            },
            PathRule {
                path: home.join("notes.txt"),
                access: Access::READ_DIR,
            },
        ],
        ..Rules::default()
    };
    match Ruleset::create(&odd, abi) {
        Ok((_, report)) => {
            let reasons: Vec<(PathBuf, SkipReason)> = report
                .skipped
                .iter()
                .map(|s| (s.path.clone(), s.reason))
                .collect();
            j.check(
                "skips",
                report.rules_added == 1
                    && reasons
                        == vec![
                            (home.join("ssh-link"), SkipReason::Symlink),
                            (home.join("ssh-link/id_test"), SkipReason::Symlink),
                            (root.join("missing"), SkipReason::Missing),
                            (home.join("notes.txt"), SkipReason::NoRightApplies),
                        ],
                || format!("{} added, skipped {reasons:?}", report.rules_added),
            );
        }
        Err(e) => j.check("skips", false, || format!("Ruleset::create failed: {e}")),
    }
    let required = Rules {
        must_exist: vec![root.join("missing-root")],
        ..Rules::default()
    };
    let err = Ruleset::create(&required, abi).map(|_| ()).unwrap_err();
    j.check(
        "skips",
        matches!(err, LandlockError::RequiredUnavailable { .. })
            && err.to_string().contains("missing-root"),
        || format!("a missing writable root is an error: {err}"),
    );

    // Masks.
    let (seen, _) = run_child("masks", &layout, &rules_file, true, &[]);
    judge_outcomes(
        &mut j,
        "masks",
        &seen,
        &[
            ("read neighbour", Expect::Ok),
            ("read neighbour dir file", Expect::Ok),
            ("read masked file", Expect::Errno(libc::EACCES)),
            ("read in masked dir", Expect::Errno(libc::EACCES)),
            ("read via symlink in home", Expect::Errno(libc::EACCES)),
            ("read via symlink in workspace", Expect::Errno(libc::EACCES)),
            // Documented limit: a masked directory's names can be listed.
            ("list masked dir", Expect::Ok),
            // Documented limit: a sibling created after the rules is unreadable.
            ("read sibling created later", Expect::Errno(libc::EACCES)),
            ("read outside tree", Expect::Ok),
            ("read host tmp sentinel", Expect::Errno(libc::EACCES)),
            ("exec /bin/true", Expect::Ok),
            ("create in home", Expect::Errno(libc::EACCES)),
        ],
    );
    j.check("masks", !home.join("planted").exists(), || {
        "nothing was planted in home".to_owned()
    });

    // The default: the home hidden. Nothing of it is readable but the workspace (and vetted
    // trees, none here); the rest of the host is.
    let hidden_plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at(&ws),
        &RealHost::new(Some(home.clone().into_os_string())),
    )
    .unwrap();
    let hidden_rules =
        Rules::from_plan(&hidden_plan, &Options::alone(&layout.tmp), &FsLister).unwrap();
    let hidden_file = root.join("hidden.bin");
    fs::write(&hidden_file, hidden_rules.encode()).unwrap();
    let (seen, _) = run_child("hidden home", &layout, &hidden_file, true, &[]);
    judge_outcomes(
        &mut j,
        "hidden home",
        &seen,
        &[
            ("read neighbour", Expect::Errno(libc::EACCES)),
            ("read neighbour dir file", Expect::Errno(libc::EACCES)),
            ("read masked file", Expect::Errno(libc::EACCES)),
            ("read in masked dir", Expect::Errno(libc::EACCES)),
            ("read via symlink in workspace", Expect::Errno(libc::EACCES)),
            // Documented limit: the listing right of `/`'s piecewise grant reaches every
            // directory below it, so names in the home can be listed (never read).
            ("list masked dir", Expect::Ok),
            ("read outside tree", Expect::Ok),
            ("exec /bin/true", Expect::Ok),
            ("create in home", Expect::Errno(libc::EACCES)),
        ],
    );

    // The minimal posture: only the vetted system trees, the workspace and the temporary
    // directory are readable; the home (private) and the rest of the host are not.
    let mut minimal = PolicyBuilder::new(Profile::Shell);
    minimal.set_posture(Posture::Minimal, Source::Caller);
    let minimal_plan = Plan::resolve(
        &minimal.build(),
        &Invocation::at(&ws),
        &RealHost::new(Some(home.clone().into_os_string())),
    )
    .unwrap();
    let minimal_rules =
        Rules::from_plan(&minimal_plan, &Options::alone(&layout.tmp), &FsLister).unwrap();
    let minimal_file = root.join("minimal.bin");
    fs::write(&minimal_file, minimal_rules.encode()).unwrap();
    let (seen, _) = run_child("minimal", &layout, &minimal_file, true, &[]);
    judge_outcomes(
        &mut j,
        "minimal",
        &seen,
        &[
            ("read neighbour", Expect::Errno(libc::EACCES)),
            ("read masked file", Expect::Errno(libc::EACCES)),
            ("read in masked dir", Expect::Errno(libc::EACCES)),
            ("list masked dir", Expect::Errno(libc::EACCES)),
            ("read via symlink in workspace", Expect::Errno(libc::EACCES)),
            ("read outside tree", Expect::Errno(libc::EACCES)),
            ("read host tmp sentinel", Expect::Errno(libc::EACCES)),
            ("exec /bin/true", Expect::Ok),
            ("create in home", Expect::Errno(libc::EACCES)),
        ],
    );

    // Writes.
    if j.require_abi(
        "writes",
        abi,
        Abi::V3,
        "moving between directories and truncation",
    ) {
        let (seen, _) = run_child("writes", &layout, &rules_file, true, &[]);
        judge_outcomes(
            &mut j,
            "writes",
            &seen,
            &[
                ("write existing", Expect::Ok),
                ("create in subdir", Expect::Ok),
                ("mkdir in subdir", Expect::Ok),
                ("create in new subdir", Expect::Ok),
                ("rename in subdir", Expect::Ok),
                ("move between subdirs", Expect::Ok),
                ("unlink in subdir", Expect::Ok),
                ("mkfifo in subdir", Expect::Ok),
                ("symlink in subdir", Expect::Ok),
                // Never granted (root could otherwise make a raw disk node); EPERM unprivileged.
                ("mknod char device in subdir", Expect::Refused),
                ("write existing top-level file", Expect::Ok),
                // The documented cost of piecewise protection: nothing new at the top level.
                ("create at top level", Expect::Errno(libc::EACCES)),
                ("mkdir at top level", Expect::Errno(libc::EACCES)),
                ("unlink at top level", Expect::Errno(libc::EACCES)),
                ("create outside", Expect::Errno(libc::EACCES)),
                ("write outside", Expect::Errno(libc::EACCES)),
                ("truncate outside", Expect::Errno(libc::EACCES)),
                ("create in temp dir", Expect::Ok),
                ("read back in temp dir", Expect::Ok),
                ("write /dev/null", Expect::Ok),
                ("read /dev/zero", Expect::Ok),
            ],
        );
        for (what, path) in [
            ("no top-level file left behind", ws.join("new-top")),
            ("no top-level dir left behind", ws.join("newdir")),
            ("nothing created outside", root.join("outside/new")),
        ] {
            j.check("writes", !path.exists(), || what.to_owned());
        }
        j.check(
            "writes",
            fs::read_to_string(root.join("outside/file.txt")).unwrap() == OUTSIDE,
            || "the outside file is intact".to_owned(),
        );
        j.check("writes", ws.join("src/sub/x").exists(), || {
            "the allowed create landed on disk".to_owned()
        });
    }

    // Protected paths.
    if j.require_abi(
        "protected",
        abi,
        Abi::V3,
        "refusing truncation of protected files",
    ) {
        let (seen, _) = run_child("protected", &layout, &rules_file, true, &[]);
        judge_outcomes(
            &mut j,
            "protected",
            &seen,
            &[
                ("write protected file", Expect::Errno(libc::EACCES)),
                ("truncate protected file", Expect::Errno(libc::EACCES)),
                ("unlink protected file", Expect::Errno(libc::EACCES)),
                ("rename over protected file from subdir", Expect::Refused),
                ("rename over protected file in same dir", Expect::Refused),
                (
                    "write protected top-level file",
                    Expect::Errno(libc::EACCES),
                ),
                (
                    "unlink protected top-level file",
                    Expect::Errno(libc::EACCES),
                ),
                ("create hook", Expect::Errno(libc::EACCES)),
                ("symlink hook", Expect::Errno(libc::EACCES)),
                ("link hook", Expect::Refused),
                ("write existing hook", Expect::Errno(libc::EACCES)),
                ("unlink existing hook", Expect::Errno(libc::EACCES)),
                ("rename hooks dir", Expect::Refused),
                ("rename .git", Expect::Refused),
                // The documented cost: git cannot take its lock (and leaves none behind).
                ("create git lock", Expect::Errno(libc::EACCES)),
                ("write existing file in .git", Expect::Ok),
                ("mkdir in .git/objects", Expect::Ok),
            ],
        );
        let git = ws.join(".git");
        j.check(
            "protected",
            fs::read_to_string(git.join("config")).unwrap() == CONFIG
                && fs::read_to_string(ws.join(".envrc")).unwrap() == ENVRC
                && fs::read_to_string(git.join("hooks/existing")).unwrap() == HOOK,
            || "protected files are byte-for-byte intact".to_owned(),
        );
        j.check(
            "protected",
            fs::symlink_metadata(git.join("hooks/pre-commit")).is_err()
                && !git.join("index.lock").exists()
                && git.join("hooks").is_dir()
                && ws.join("README.md").exists(),
            || "no hook planted, no lock left, hooks and README.md still in place".to_owned(),
        );
    }

    // TCP and abstract UNIX sockets.
    if j.require_abi(
        "network",
        abi,
        Abi::V6,
        "TCP rules (ABI 4) and abstract-socket scoping",
    ) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let name = format!("cordon-landlock-kernel-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let _unix = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        let extra = [(PORT_VAR, port), (ABSTRACT_VAR, name)];
        let (seen, _) = run_child("network", &layout, &rules_file, false, &extra);
        judge_outcomes(
            &mut j,
            "network baseline",
            &seen,
            &[
                ("tcp connect", Expect::Ok),
                ("tcp bind", Expect::Ok),
                ("abstract unix connect", Expect::Ok),
            ],
        );
        let (seen, _) = run_child("network", &layout, &rules_file, true, &extra);
        judge_outcomes(
            &mut j,
            "network",
            &seen,
            &[
                ("tcp connect", Expect::Errno(libc::EACCES)),
                ("tcp bind", Expect::Errno(libc::EACCES)),
                ("abstract unix connect", Expect::Errno(libc::EPERM)),
            ],
        );
    }

    // Signals.
    if j.require_abi("signals", abi, Abi::V6, "signal scoping") {
        let mut target = Command::new("/bin/sleep").arg("1000").spawn().unwrap();
        let extra = [(PID_VAR, target.id().to_string())];
        let (seen, _) = run_child("signals", &layout, &rules_file, false, &extra);
        judge_outcomes(
            &mut j,
            "signals baseline",
            &seen,
            &[
                ("probe outside process", Expect::Ok),
                ("own child killed", Expect::Ok),
            ],
        );
        let (seen, _) = run_child("signals", &layout, &rules_file, true, &extra);
        judge_outcomes(
            &mut j,
            "signals",
            &seen,
            &[
                ("probe outside process", Expect::Errno(libc::EPERM)),
                ("signal outside process", Expect::Errno(libc::EPERM)),
                ("signal own child", Expect::Ok),
                ("own child killed", Expect::Ok),
            ],
        );
        j.check("signals", target.try_wait().unwrap().is_none(), || {
            "the outside process was not ended".to_owned()
        });
        target.kill().unwrap();
        target.wait().unwrap();
    }

    // The `landlock` backend's path: ruleset built in the parent, applied between fork and exec.
    match Ruleset::create(&rules, abi) {
        Ok((ruleset, _)) => {
            let ruleset = std::sync::Arc::new(ruleset);
            let spawn = |file: &Path| {
                let rs = ruleset.clone();
                let mut cmd = Command::new("/bin/cat");
                cmd.arg(file).stdin(Stdio::null());
                // SAFETY: restrict_self is async-signal-safe (two system calls, no allocation).
                unsafe {
                    cmd.pre_exec(move || {
                        rs.restrict_self()
                            .map_err(|e| std::io::Error::from_raw_os_error(e.errno))
                    });
                }
                cmd.output().unwrap()
            };
            let neighbour = spawn(&home.join("notes.txt"));
            j.check(
                "pre_exec",
                neighbour.status.success() && neighbour.stdout == b"notes\n",
                || format!("cat of a neighbour works: {:?}", neighbour.status),
            );
            let masked = spawn(&home.join(".netrc"));
            j.check(
                "pre_exec",
                !masked.status.success()
                    && masked.stdout.is_empty()
                    && String::from_utf8_lossy(&masked.stderr).contains("Permission denied"),
                || format!("cat of a masked file is refused: {:?}", masked.status),
            );
        }
        Err(e) => j.check("pre_exec", false, || format!("Ruleset::create failed: {e}")),
    }

    // Design evidence: why ancestors of protected paths keep no make_reg right. With make_reg
    // but not write_file, open(O_CREAT|O_WRONLY) creates the file and then fails.
    let evidence = root.join("evidence");
    let make_reg_only = Rules {
        paths: vec![PathRule {
            path: evidence.clone(),
            access: Access::MAKE_REG,
        }],
        ..Rules::default()
    };
    let make_reg_file = root.join("make-reg-only.bin");
    fs::write(&make_reg_file, make_reg_only.encode()).unwrap();
    let (seen, _) = run_child("make_reg_only", &layout, &make_reg_file, true, &[]);
    judge_outcomes(
        &mut j,
        "make_reg without write_file",
        &seen,
        &[("create and open for writing", Expect::Errno(libc::EACCES))],
    );
    j.check(
        "make_reg without write_file",
        evidence.join("f").exists(),
        || "the failed open left an empty file behind (why ancestors get no make_reg)".to_owned(),
    );

    println!();
    if j.failures.is_empty() {
        println!("kernel: all cases passed");
        ExitCode::SUCCESS
    } else {
        println!("kernel: {} failure(s)", j.failures.len());
        for f in &j.failures {
            println!("  {f}");
        }
        ExitCode::FAILURE
    }
}
