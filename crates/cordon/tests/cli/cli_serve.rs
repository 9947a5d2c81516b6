//! `cordon serve` end to end: one session, many commands, each in a jail of its own built ahead
//! of it; the answers are `cordon run --json`'s objects, one per line, in order; bad lines get an
//! error object and the session goes on; end of input ends the session and leaves nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// This process's child `pid`'s own children that are bubblewrap.
fn bwrap_children_of(pid: u32) -> usize {
    let pid = pid.to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                return false;
            };
            let Some((comm, rest)) = stat.rsplit_once(") ") else {
                return false;
            };
            comm.ends_with("(bwrap") && rest.split(' ').nth(1) == Some(pid.as_str())
        })
        .count()
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        out.push(e.path());
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

/// A `cordon serve` child with its request and answer pipes.
struct Session {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: BufReader<std::process::ChildStdout>,
}

impl Session {
    fn start(home: &Path, work: &Path, options: &[&str]) -> Session {
        let mut child = Command::new(common::cordon())
            .arg("serve")
            .args(options)
            .current_dir(work)
            .env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let to = child.stdin.take().unwrap();
        let from = BufReader::new(child.stdout.take().unwrap());
        Session { child, to, from }
    }

    fn ask(&mut self, line: &str) -> serde_json::Value {
        Session::ask_on(&mut self.to, &mut self.from, line)
    }

    /// Writes one request line and reads its one answer line.
    fn ask_on(
        to: &mut std::process::ChildStdin,
        from: &mut BufReader<std::process::ChildStdout>,
        line: &str,
    ) -> serde_json::Value {
        writeln!(to, "{line}").unwrap();
        to.flush().unwrap();
        let mut answer = String::new();
        from.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
    }
}

/// A harness steers the change set through the session: a command under review leaves the
/// host as it was and names its run; `changes`, `diff`, `apply` and `drop` answer as the
/// subcommands do with `--json`; a bad question names the value and the rule.
#[test]
fn a_session_reviews_applies_and_drops_what_its_commands_change() {
    common::require_bwrap();
    let home = common::visible_dir("cordon-test-serve-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(&work).unwrap();
    let mut s = Session::start(home.path(), &work, &["--timeout", "20"]);
    let run_of = |r: &serde_json::Value| -> String {
        assert_eq!(r["exit_code"], 0, "{r}");
        assert_eq!(r["workspace"], "review", "{r}");
        assert_eq!(r["changes"]["applied"], false, "{r}");
        r["changes"]["roots"][0]["report"]["run"]
            .as_str()
            .unwrap_or_else(|| panic!("no run named: {r}"))
            .to_owned()
    };
    let r = s.ask(r#"{"run": ["sh", "-c", "echo kept > a.txt"], "workspace": "review"}"#);
    let first = run_of(&r);
    assert!(
        !work.join("a.txt").exists(),
        "a reviewed change reached the host"
    );
    let r = s.ask(r#"{"run": ["sh", "-c", "echo dropped > b.txt"], "workspace": "review"}"#);
    let second = run_of(&r);

    let listed = s.ask(r#"{"changes": true}"#);
    let runs: Vec<&str> = listed["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|r| r["run"].as_str())
        .collect();
    assert!(
        runs.contains(&first.as_str()) && runs.contains(&second.as_str()),
        "{listed}"
    );
    let diff = s.ask(&format!(r#"{{"diff": "{first}"}}"#));
    assert!(diff["entries"].to_string().contains("a.txt"), "{diff}");

    let applied = s.ask(&format!(r#"{{"apply": "{first}"}}"#));
    assert_eq!(applied["applied"], true, "{applied}");
    assert_eq!(
        std::fs::read_to_string(work.join("a.txt")).unwrap(),
        "kept\n"
    );
    let dropped = s.ask(&format!(r#"{{"drop": "{second}"}}"#));
    assert_eq!(dropped["dropped"], second.as_str(), "{dropped}");
    assert!(!work.join("b.txt").exists());
    let again = s.ask(&format!(r#"{{"diff": "{second}"}}"#));
    assert_eq!(
        again["exit_code"], 125,
        "a dropped run is still there: {again}"
    );

    // A session's default (layered) command commits; a bad question is refused by name.
    let r = s.ask(r#"["sh", "-c", "echo now > c.txt"]"#);
    assert_eq!(r["workspace"], "layer", "{r}");
    assert_eq!(
        std::fs::read_to_string(work.join("c.txt")).unwrap(),
        "now\n"
    );
    for (line, says) in [
        (r#"{"drop": "../../x"}"#, "is not a run's name"),
        (r#"{"run": ["true"], "workspace": "auto"}"#, "is not one of"),
    ] {
        let bad = s.ask(line);
        assert_eq!(bad["exit_code"], 125, "{bad}");
        assert!(bad["error"].as_str().unwrap().contains(says), "{bad}");
    }
    drop(s.to);
    assert!(s.child.wait().unwrap().success());
}

#[test]
fn one_session_answers_each_line_in_order_and_leaves_nothing() {
    common::require_bwrap();
    // A home the jail sees as the host's (never under its private /tmp or /var/tmp, wherever
    // the checkout is), with a credential to mask.
    let home = common::visible_dir("cordon-test-serve-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(home.path().join(".ssh/id_test"), "SENTINEL-PRIVATE-KEY").unwrap();
    let before = listing(&work);

    let Session {
        child: mut serve,
        to,
        mut from,
    } = Session::start(home.path(), &work, &["--timeout", "5", "--live"]);
    let mut to = Some(to);
    let mut ask = |line: &str| -> serde_json::Value {
        Session::ask_on(to.as_mut().unwrap(), &mut from, line)
    };

    let first = ask(r#"["sh", "-c", "echo one > made && cat made"]"#);
    assert_eq!(first["status"], "exited", "{first}");
    assert_eq!(first["stdout"]["text"], "one\n");
    assert_eq!(first["built_ahead"], false, "{first}");
    assert_eq!(
        first["landlock"].as_str().map(|l| l.starts_with("ABI")),
        Some(true)
    );
    // The next jail is built ahead, by the serve process.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while bwrap_children_of(serve.id()) != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "no jail was built ahead"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }

    // Each command in its own jail that holds: credentials masked, a write outside refused, a
    // private /tmp; arguments arrive as sent.
    for _ in 0..3 {
        let r = ask(
            r#"["sh", "-c", "cat ~/.ssh/id_test 2>/dev/null || echo masked; (echo x > /usr/cordon-test-planted) 2>/dev/null || echo refused; ls /tmp; touch /tmp/mine; printf '%s|' \"$@\"", "sh", "a b", ""]"#,
        );
        assert_eq!(r["stdout"]["text"], "masked\nrefused\na b||", "{r}");
        assert_eq!(r["built_ahead"], true, "{r}");
        assert_eq!(r["exit_code"], 0);
    }
    assert!(!home.path().join("planted").exists());
    assert!(!std::path::Path::new("/usr/cordon-test-planted").exists());

    // Bad lines are answered and the session goes on; the floor still judges every command.
    let bad = ask("not json");
    assert_eq!(bad["exit_code"], 125, "{bad}");
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .contains("JSON array of strings"),
        "{bad}"
    );
    let empty = ask("[]");
    assert_eq!(empty["exit_code"], 125, "{empty}");
    let refused = ask(r#"["rm", "-rf", "/"]"#);
    assert_eq!(refused["status"], "refused", "{refused}");
    assert_eq!(refused["rule"], "recursive-delete", "{refused}");
    let code = ask(r#"["sh", "-c", "echo err >&2; exit 3"]"#);
    assert_eq!(code["exit_code"], 3, "{code}");
    assert_eq!(code["stderr"]["text"], "err\n");
    let timeout = ask(r#"["sleep", "30"]"#);
    assert_eq!(timeout["status"], "timeout", "{timeout}");

    // End of input ends the session: exit 0, the jail built ahead gone, the workspace as before
    // (but for what the commands made).
    drop(to);
    let status = serve.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut from, &mut rest).unwrap();
    assert_eq!(rest, "", "serve wrote more than one line per request");
    let mut expected = before;
    expected.push(PathBuf::from("made"));
    expected.sort();
    assert_eq!(listing(&work), expected);
}

#[test]
fn a_workspace_the_walk_refuses_refuses_the_session() {
    let home = common::visible_dir("cordon-test-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(home.path().join("outside"), "host file\n").unwrap();
    std::fs::hard_link(home.path().join("outside"), work.join("linked")).unwrap();
    let out = Command::new(common::cordon())
        .arg("serve")
        .current_dir(&work)
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("outside-hard-link") && stderr.contains("linked"),
        "{stderr}"
    );
}
