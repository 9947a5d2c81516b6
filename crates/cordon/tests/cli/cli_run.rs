//! `cordon run`, `doctor` and `explain` end to end on the real kernel with the real bubblewrap.
//! These tests fail (never skip) when bubblewrap is missing: `cargo xtask ci` installs it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub(crate) struct Jail {
    pub(crate) home: tempfile::TempDir,
    pub(crate) work: PathBuf,
}

impl Jail {
    pub(crate) fn new() -> Jail {
        Jail::at(common::visible_dir("cordon-test-"))
    }

    /// A jail whose home is `home` (outside /tmp when the home must be the host's, since /tmp is
    /// private inside the jail).
    pub(crate) fn at(home: tempfile::TempDir) -> Jail {
        common::require_bwrap();
        let work = home.path().join("proj");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        std::fs::write(home.path().join(".ssh/id_test"), "SENTINEL-PRIVATE-KEY").unwrap();
        std::fs::write(home.path().join(".netrc"), "SENTINEL-NETRC").unwrap();
        Jail { home, work }
    }

    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(common::cordon());
        c.args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("GITHUB_TOKEN", "SENTINEL-TOKEN")
            .env("LD_PRELOAD", "/nonexistent.so")
            .stdin(Stdio::null());
        c
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn writes_the_workspace_and_cannot_read_credentials() {
    let j = Jail::new();
    let out = j.run(&[
        "run",
        "--",
        "/bin/sh",
        "-c",
        "echo made > made.txt; cat $HOME/.ssh/id_test; cat $HOME/.netrc; ls $HOME/.ssh; echo done",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout {stdout} stderr {}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(j.work.join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(stdout.contains("done"), "{stdout}");
    assert!(
        !stdout.contains("SENTINEL"),
        "a credential was readable: {stdout}"
    );
}

#[test]
fn cannot_write_outside_or_to_protected_paths() {
    let j = Jail::new();
    let outside = j.home.path().join("outside.txt");
    let script = format!(
        "echo x > {o}; echo x > .git/hooks/pre-commit; echo x >> .git/config; echo x > /tmp/t && echo tmp-ok",
        o = outside.display()
    );
    // Live mode's read-only protected paths (a layered run leaves them to the commit:
    // `layer.rs`).
    let out = j.run(&["run", "--live", "--json", "--", "/bin/sh", "-c", &script]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!outside.exists(), "wrote outside the workspace");
    assert!(
        !j.work.join(".git/hooks/pre-commit").exists(),
        "planted a hook"
    );
    assert_eq!(
        std::fs::read_to_string(j.work.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(
        v["stdout"]["text"].as_str().unwrap().contains("tmp-ok"),
        "private /tmp is writable: {v}"
    );
    let kinds: Vec<&str> = v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"write-denied"), "{v}");
    assert_eq!(v["sandboxed"], true);
    assert_eq!(v["backend"], "bubblewrap");
}

#[test]
fn environment_is_rebuilt_and_explicit_values_apply_inside() {
    let j = Jail::new();
    let out = j.run(&[
        "run",
        "--json",
        "--env",
        "GREETING=hi there",
        "--pass-env",
        "GITHUB_TOKEN",
        "--",
        "/usr/bin/env",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let env = v["stdout"]["text"].as_str().unwrap();
    assert!(env.contains("GREETING=hi there"), "{env}");
    assert!(
        !env.contains("SENTINEL-TOKEN"),
        "a credential-shaped name was passed: {env}"
    );
    assert!(!env.contains("LD_PRELOAD"), "{env}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("GITHUB_TOKEN") && warnings.contains("not passed"),
        "{warnings}"
    );
    let out = j.run(&["run", "--env", "LD_PRELOAD=/x.so", "--", "/bin/true"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("LD_PRELOAD"),
        "{}",
        text(&out.stderr)
    );
    // cordon's own names act on cordon: refused like the loader's (docs/cli.md).
    let out = j.run(&[
        "run",
        "--env",
        "CORDON_MUTANT=no-seccomp",
        "--",
        "/bin/true",
    ]);
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("CORDON_MUTANT"));
}

/// An explicit grant acts only inside the jail: the harness's call, for `CC` and `RUSTFLAGS`
/// too (docs/cli.md, "Explicit grants").
#[test]
fn explicit_grants_of_tool_variables_reach_the_jail() {
    let j = Jail::new();
    let out = j.run(&[
        "run",
        "--json",
        "--env",
        "CC=clang",
        "--env",
        "RUSTFLAGS=-Copt-level=0",
        "--",
        "/usr/bin/env",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let env = v["stdout"]["text"].as_str().unwrap();
    assert!(env.contains("CC=clang"), "{env}");
    assert!(env.contains("RUSTFLAGS=-Copt-level=0"), "{env}");
}

#[test]
fn network_is_denied_and_host_processes_are_invisible() {
    let j = Jail::new();
    let out = j.run(&[
        "run",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        "ls /proc | grep -c '^[0-9]'; python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)' 2>&1 | tail -1; \
         tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v["stdout"]["text"].as_str().unwrap();
    let pids: u32 = text.lines().next().unwrap().trim().parse().unwrap();
    assert!(pids <= 4, "host processes visible: {pids}");
    // The network: no audit netlink socket (Unix sockets are the jail's own, host socket files
    // masked: the escape suite's net/host-sockets), and a namespace whose only interface is `lo`.
    assert!(
        text.contains("Operation not permitted") || text.contains("PermissionError"),
        "{text}"
    );
    assert_eq!(text.lines().last().map(str::trim), Some("lo"), "{text}");
}

#[test]
fn exit_codes_timeouts_and_signals() {
    let j = Jail::new();
    assert_eq!(
        j.run(&["run", "--", "/bin/sh", "-c", "exit 7"])
            .status
            .code(),
        Some(7)
    );
    let start = std::time::Instant::now();
    let out = j.run(&[
        "run",
        "--timeout",
        "1",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        "sleep 60 & sleep 60",
    ]);
    assert_eq!(out.status.code(), Some(124), "{}", text(&out.stdout));
    assert!(start.elapsed().as_secs() < 30);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "timeout");
    let out = j.run(&["run", "--", "/bin/sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.status.code(), Some(128 + 15));
    let out = j.run(&["run", "--", "/nonexistent/program"]);
    assert_eq!(out.status.code(), Some(127), "{}", text(&out.stderr));
}

#[test]
fn output_is_capped_and_flagged() {
    let j = Jail::new();
    std::fs::write(
        j.work.join(".cordon.toml"),
        "[limits]\noutput_cap_bytes = 1000\n",
    )
    .unwrap();
    let out = j.run(&[
        "run",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        "head -c 100000 /dev/zero | tr '\\0' a",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stdout"]["truncated"], true);
    assert_eq!(v["stdout"]["bytes"], 100000);
    assert_eq!(v["stdout"]["text"].as_str().unwrap().len(), 1000);
}

#[test]
fn stdin_passes_through() {
    let j = Jail::new();
    let mut child = j
        .cmd(&["run", "--", "/bin/cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"through the jail\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(text(&out.stdout), "through the jail\n");
}

#[test]
fn bad_input_exits_125_and_runs_nothing() {
    let j = Jail::new();
    let marker = j.work.join("ran");
    let script = format!("touch {}", marker.display());
    for args in [
        vec!["run", "--cwd", "/etc", "--", "/bin/sh", "-c", &script],
        vec!["run", "--write", "/usr", "--", "/bin/sh", "-c", &script],
        vec!["run", "--timeout", "0", "--", "/bin/sh", "-c", &script],
        vec!["run", "--env", "NOEQUALS", "--", "/bin/sh", "-c", &script],
    ] {
        let out = j.run(&args);
        assert_eq!(
            out.status.code(),
            Some(125),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!text(&out.stderr).is_empty());
    }
    assert!(!marker.exists(), "bad input ran the command");
}

#[test]
fn explain_prints_one_argument_per_line_and_hides_explicit_values() {
    let j = Jail::new();
    // Live, so that the run makes a placeholder (a layered root gets none).
    let out = j.run(&[
        "explain",
        "--live",
        "--env",
        "API=supersecret",
        "--",
        "/bin/true",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let all: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    // First what a run makes before the jail starts (made by explain: nothing), then the list.
    let made = format!(
        "# created for the run: {} (a file reading \".\")",
        j.work.join(".git/commondir").display()
    );
    assert!(all.contains(&made), "{all:?}");
    assert!(
        !j.work.join(".git/commondir").exists(),
        "explain made a placeholder"
    );
    let lines: Vec<String> = all.into_iter().filter(|l| !l.starts_with("# ")).collect();
    assert_eq!(lines[0], "/usr/bin/bwrap");
    assert!(lines.contains(&"--unshare-net".to_owned()));
    assert!(lines.contains(&"/bin/true".to_owned()));
    assert!(!text(&out.stdout).contains("supersecret"));
    assert!(!j.work.join(".cordon-probe").exists());
}

#[test]
fn doctor_reports_enforcement_and_never_values() {
    let j = Jail::new();
    let out = j.run(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["enforcing"], true);
    assert_eq!(v["backend"], "bubblewrap");
    assert_eq!(v["seccomp_filter_version"], cordon_seccomp::FILTER_VERSION);
    assert!(v["backends"][0]["version"].as_str().unwrap().contains('.'));
    assert!(!text(&out.stdout).contains("SENTINEL"));
    let plain = j.run(&["doctor"]);
    assert!(text(&plain.stdout).contains("enforcing"));
}

#[test]
fn resource_limits_apply_and_inherited_descriptors_are_closed() {
    let j = Jail::new();
    std::fs::write(
        j.work.join(".cordon.toml"),
        "[limits]\nopen_files = 200\nfile_size_bytes = 4096\n",
    )
    .unwrap();
    let secret = j.home.path().join("inherited.txt");
    std::fs::write(&secret, "SENTINEL-INHERITED").unwrap();
    // The caller holds descriptor 9 open on a file; the jail must not inherit it.
    let script = format!(
        "exec 9<{}; exec {} run --json -- /bin/sh -c 'ulimit -n; ls /proc/self/fd | tr \"\\n\" \" \"; echo; cat <&9; head -c 10000 /dev/zero > big; wc -c < big'",
        secret.display(),
        common::cordon().display()
    );
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(&script)
        .current_dir(&j.work)
        .env_clear()
        .env("HOME", j.home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
    let stdout = v["stdout"]["text"].as_str().unwrap();
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("200"), "{stdout}");
    let fds: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert!(
        fds.iter().all(|fd| ["0", "1", "2", "3"].contains(fd)),
        "unexpected descriptors inside: {fds:?}"
    );
    assert!(!stdout.contains("SENTINEL-INHERITED"), "{stdout}");
    assert_eq!(lines.next(), Some("4096"), "file size limit: {stdout}");
}

#[test]
fn a_workspace_that_contains_cordon_itself_is_refused() {
    let j = Jail::new();
    let exe = std::fs::canonicalize(common::cordon()).unwrap();
    let dir = exe.parent().unwrap();
    let out = j.run(&["run", "--write", dir.to_str().unwrap(), "--", "/bin/true"]);
    assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("could replace it"),
        "{}",
        text(&out.stderr)
    );
}

/// Every entry under `dir` with its size and mode, for before/after comparisons.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, u32)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.push((e.path(), if m.is_dir() { 0 } else { m.len() }, m.mode()));
        }
    }
    out.sort();
    out
}

#[test]
fn concurrent_jails_share_placeholders_and_leave_the_workspace_as_found() {
    let j = Jail::new();
    let before = listing(&j.work);
    // The first jail creates the `.git/commondir` placeholder and ends while a second one,
    // which joined it, still runs; the second then tries to rewrite it. The first one's cleanup
    // must not pull the placeholder from under the second. The second also creates
    // `.vscode/tasks.json`, which did not exist at launch: moved aside after its run.
    // Live mode's machinery (placeholders, the sweep): the default layer has its own tests.
    let first = j
        .cmd(&["run", "--live", "--", "/bin/sh", "-c", "sleep 0.8"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let long = j
        .cmd(&[
            "run",
            "--json",
            "--live",
            "--",
            "/bin/sh",
            "-c",
            "sleep 1.5; echo ../evil > .git/commondir && echo WROTE; mkdir -p .vscode; echo x > .vscode/tasks.json; echo end",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = first.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0));
    let long = long.wait_with_output().unwrap();
    let stdout = text(&long.stdout);
    assert!(stdout.contains("end"), "{stdout} {}", text(&long.stderr));
    assert!(
        !stdout.contains("WROTE"),
        "the long jail rewrote .git/commondir after the short one finished"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let planted: Vec<&serde_json::Value> = json["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["kind"] == "planted")
        .collect();
    assert_eq!(planted.len(), 1, "{stdout}");
    assert_eq!(
        planted[0]["path"].as_str(),
        Some(j.work.join(".vscode").to_str().unwrap())
    );
    assert!(
        !j.work.join(".vscode").exists(),
        "the created .vscode stayed"
    );
    // What was moved aside is the one difference: removed, the workspace is as found.
    let aside: Vec<PathBuf> = std::fs::read_dir(&j.work)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".vscode.cordon-quarantine-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(aside[0].join("tasks.json").exists());
    std::fs::remove_dir_all(&aside[0]).unwrap();
    assert_eq!(
        listing(&j.work),
        before,
        "the runs left something behind or changed the workspace"
    );
}

#[test]
fn a_mask_on_a_missing_path_in_the_workspace_creates_nothing() {
    let j = Jail::new();
    let config = j.home.path().join(".config/cordon");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[filesystem]\ndeny_read = [\"{}\", \"{}\"]\n",
            j.work.join(".env").display(),
            j.work.join("secrets").display()
        ),
    )
    .unwrap();
    let before = listing(&j.work);
    let out = j.run(&["run", "--", "/bin/sh", "-c", "ls -a; echo end"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("end") && !stdout.contains(".env"),
        "{stdout}"
    );
    assert_eq!(listing(&j.work), before);
}

#[test]
fn a_landlock_second_wall_holds_inside_bubblewrap() {
    let j = Jail::new();
    // bubblewrap alone lets a process rename itself through /proc/self/comm; the second wall
    // grants only reading outside the writable roots, so the write is refused.
    let out = j.run(&[
        "run",
        "--json",
        "--backend",
        "bwrap",
        "--",
        "/bin/sh",
        "-c",
        "printf x > /proc/self/comm && echo COMM-WRITTEN; echo end",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["backend"], "bubblewrap", "{v}");
    assert!(
        v["landlock"]
            .as_str()
            .is_some_and(|l| l.starts_with("ABI ")),
        "the stage did not report the second wall: {v}"
    );
    let stdout = v["stdout"]["text"].as_str().unwrap();
    assert!(stdout.contains("end"), "{v}");
    assert!(
        !stdout.contains("COMM-WRITTEN"),
        "a write the second wall must refuse went through: {v}"
    );
}

#[test]
fn the_landlock_backend_runs_alone_and_holds() {
    let j = Jail::new();
    std::fs::create_dir_all(j.work.join("src")).unwrap();
    // The launcher's own temporary directory, where the backend makes the run's TMPDIR.
    let launcher_tmp = j.home.path().join("launcher-tmp");
    std::fs::create_dir_all(&launcher_tmp).unwrap();
    let out = j
        .cmd(&[
            "run",
            "--json",
            "--backend",
            "landlock",
            "--",
            "/bin/sh",
            "-c",
            "echo made > src/made.txt && cat src/made.txt; cat $HOME/.ssh/id_test; \
         echo x > ../outside.txt && echo OUTSIDE; echo x > .git/hooks/pre-commit && echo HOOK; \
         echo t > $TMPDIR/t && cat $TMPDIR/t; sleep 31.25 & echo end",
        ])
        .env("TMPDIR", &launcher_tmp)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["backend"], "landlock", "{v}");
    assert_eq!(v["landlock"], "backend", "{v}");
    let stdout = v["stdout"]["text"].as_str().unwrap();
    assert!(
        stdout.contains("made\n") && stdout.contains("t\nend"),
        "{v}"
    );
    for leak in ["SENTINEL", "OUTSIDE", "HOOK"] {
        assert!(!stdout.contains(leak), "{leak} got through: {v}");
    }
    assert!(!j.home.path().join("outside.txt").exists());
    assert!(!j.work.join(".git/hooks/pre-commit").exists());
    // The background child and the private TMPDIR are gone with the run.
    let after_tmp: Vec<_> = std::fs::read_dir(&launcher_tmp).unwrap().collect();
    assert!(after_tmp.is_empty(), "left behind: {after_tmp:?}");
    // The session reaper is a copy of the launcher (its command line too) that may be ending
    // right now: not a child of the jail.
    let survivors: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let dir = e.ok()?.path();
            let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
            (comm.trim_end() != "cordon-reaper").then(|| std::fs::read(dir.join("cmdline")).ok())?
        })
        .filter(|c| c.windows(5).any(|w| w == b"31.25"))
        .collect();
    assert!(survivors.is_empty(), "a background child outlived the run");
}

#[test]
fn the_readme_command_works_with_either_backend() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("$ mkdir -p /tmp/cordon-demo/out && cargo run"))
        .expect("the README's main command");
    let script = line
        .split_once("sh -c '")
        .and_then(|(_, rest)| rest.strip_suffix('\''))
        .expect("a sh -c '...' script");
    for backend in ["bwrap", "landlock"] {
        // The home must be the host's (hidden in the jail), so not under the private /tmp.
        let home = common::visible_dir("cordon-test-readme-");
        let j = Jail::at(home);
        std::fs::create_dir_all(j.work.join("out")).unwrap();
        let out = j.run(&["run", "--backend", backend, "--", "sh", "-c", script]);
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{backend}: {stdout} {stderr}");
        assert_eq!(
            stdout, "hello\nno-keys\nprivate-home\n",
            "{backend}: {stderr}"
        );
        assert!(stderr.contains("cannot create"), "{backend}: {stderr}");
        assert!(!j.home.path().join("planted").exists());
        assert!(!Path::new("/usr/planted").exists());
    }
}
