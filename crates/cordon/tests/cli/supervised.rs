//! The Landlock backend's supervisor end to end (`cordon run --backend landlock`): entries made
//! at a workspace's top and in `.git`, a git repository used as on the host, its configuration
//! brokered, hooks refused at the moment of the call.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::cli_run::{Jail, text};

/// `cordon run --json --backend landlock -- argv` in `j`: its JSON, checked to be the Landlock
/// backend's, and the command's standard output.
fn landlock_run(j: &Jail, argv: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec!["run", "--json", "--backend", "landlock", "--"];
    args.extend_from_slice(argv);
    let out = j.run(&args);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(v["backend"], "landlock", "{v}");
    let stdout = v["stdout"]["text"].as_str().unwrap_or_default().to_owned();
    (v, stdout)
}

#[test]
fn the_landlock_backend_makes_entries_at_the_top_and_brokers_git_while_hooks_stay_refused() {
    let j = Jail::new();
    // A real repository: `git init` on the host, one commit.
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&j.work)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    std::fs::remove_dir_all(j.work.join(".git")).unwrap();
    git(&["init", "-q", "."]);
    git(&["commit", "-q", "--allow-empty", "-m", "host"]);
    let (v, stdout) = landlock_run(
        &j,
        &[
            "/bin/sh",
            "-c",
            "echo made > top.txt && mkdir build && git add top.txt && \
             git -c user.name=t -c user.email=t@example.com commit -qm jailed && \
             git config user.name jailed && git config core.fsmonitor 'touch pwned'; \
             echo x > .git/hooks/pre-push || echo HOOK-REFUSED; echo end",
        ],
    );
    assert!(stdout.contains("HOOK-REFUSED\nend"), "{v}");
    // What was allowed reached the host: new entries at the top, a commit, an allowed key.
    assert_eq!(
        std::fs::read_to_string(j.work.join("top.txt")).unwrap(),
        "made\n"
    );
    assert!(j.work.join("build").is_dir());
    assert_eq!(git(&["log", "--format=%s", "-1"]).trim(), "jailed");
    let config = std::fs::read_to_string(j.work.join(".git/config")).unwrap();
    assert!(config.contains("jailed"), "{config}");
    // What was refused did not, and the result says which key was left out.
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(!j.work.join(".git/hooks/pre-push").exists());
    let violations = v["violations"].as_array().unwrap();
    assert!(
        violations
            .iter()
            .any(|x| x["kind"] == "git-config-refused" && x["key"] == "core.fsmonitor"),
        "{v}"
    );
    assert!(
        violations.iter().any(|x| x["path"]
            .as_str()
            .is_some_and(|p| p.ends_with(".git/hooks/pre-push"))),
        "{v}"
    );
}

#[test]
fn without_a_network_namespace_the_jail_serves_itself_on_loopback_and_reaches_no_host_listener() {
    let j = Jail::new();
    // A host listener the jail must not reach, at loopback like the jail's own servers.
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let port = host.local_addr().unwrap().port();
    let script = format!(
        r#"
import http.server, socket, threading, urllib.request
srv = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
body = urllib.request.urlopen("http://127.0.0.1:%d/" % srv.server_address[1]).read()
print("OWN-SERVER", len(body) > 0)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5); print("HOST-REACHED")
except OSError as e:
    print("HOST-REFUSED", e.errno)
"#
    );
    let (v, stdout) = landlock_run(&j, &["python3", "-c", &script]);
    assert!(stdout.contains("OWN-SERVER True"), "{v}");
    assert!(stdout.contains("HOST-REFUSED 111"), "{v}");
    assert!(
        host.accept().is_err(),
        "a connection reached the host's listener"
    );
    let violations = v["violations"].as_array().unwrap();
    assert!(
        violations.iter().any(|x| x["kind"] == "network-denied"
            && x["host"] == "127.0.0.1"
            && x["port"] == port),
        "{v}"
    );
}

#[test]
fn under_the_landlock_backend_sessions_work_and_end_with_the_run_while_the_stage_stays_out_of_reach()
 {
    let j = Jail::new();
    // The command's parent is the stage (the jail's init): a signal to it must be refused
    // (EPERM from Landlock's scope), and a child in a session of its own must still end with
    // the run, before it writes.
    let (v, stdout) = landlock_run(
        &j,
        &[
            "/bin/sh",
            "-c",
            "setsid sh -c 'echo sid=$(($(ps -o sid= -p $$))) pgid=$(($(ps -o pgid= -p $$))) me=$$; \
             sleep 1.5; echo late > late.txt' & sleep 0.3; \
             python3 -c 'import os, sys\ntry:\n os.kill(int(sys.argv[1]), 0); print(\"STAGE-REACHED\")\nexcept PermissionError:\n print(\"STAGE-REFUSED\")' $PPID",
        ],
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(stdout.contains("STAGE-REFUSED"), "{v}");
    // Nothing the command did was refused: not even the stage's own network self-check (its
    // failed connect to the launcher's sentinel) is reported as the command's.
    assert_eq!(v["violations"], serde_json::json!([]), "{v}");
    // The child really left the group: a session and a group of its own.
    let line = stdout.lines().find(|l| l.starts_with("sid=")).unwrap();
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(name))
            .unwrap()
            .trim()
            .to_owned()
    };
    assert_eq!(field("sid="), field("me="), "{line}");
    assert_eq!(field("pgid="), field("me="), "{line}");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(
        !j.work.join("late.txt").exists(),
        "the setsid child outlived the run"
    );
}

#[test]
fn under_the_landlock_backend_a_pseudo_terminal_is_the_jails_and_dev_tty_is_the_callers() {
    let j = Jail::new();
    // `script` runs its child on a new terminal (the supervisor opens /dev/ptmx, and the slave
    // for the process holding its master): `/dev/tty` there is that terminal, whose output
    // `script` captures; a process with no controlling terminal gets none.
    let (v, stdout) = landlock_run(
        &j,
        &[
            "/bin/sh",
            "-c",
            "script -qec 'tty; echo via-dev-tty > /dev/tty' /dev/null | tr -d '\\r'; \
             setsid sh -c 'echo x > /dev/tty' 2>/dev/null || echo NO-TTY",
        ],
    );
    assert!(stdout.contains("/dev/pts/"), "{v}");
    assert!(stdout.contains("via-dev-tty"), "{v}");
    assert!(stdout.contains("NO-TTY"), "{v}");
}

#[test]
fn under_the_landlock_backend_a_command_that_connects_to_the_stages_sentinel_is_reported() {
    let j = Jail::new();
    // The stage (the command's parent, the jail's init) names the launcher's sentinel port in
    // its arguments (`s<port>`); its own refused connect is its self-check and is not reported,
    // the command's connect to the same address is.
    let (v, stdout) = landlock_run(
        &j,
        &[
            "python3",
            "-c",
            "import os, socket\n\
             args = open(f'/proc/{os.getppid()}/cmdline', 'rb').read().split(b'\\0')\n\
             port = [int(a[1:]) for a in args if a[:1] == b's' and a[1:].isdigit()][0]\n\
             print('PORT', port)\n\
             try:\n socket.create_connection(('127.0.0.1', port), timeout=5); print('REACHED')\n\
             except OSError as e:\n print('REFUSED', e.errno)",
        ],
    );
    assert!(stdout.contains("REFUSED"), "{v}");
    let port: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("PORT "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("{v}"));
    let at_sentinel: Vec<_> = v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "network-denied" && x["port"] == port)
        .collect();
    assert_eq!(at_sentinel.len(), 1, "{v}");
}
