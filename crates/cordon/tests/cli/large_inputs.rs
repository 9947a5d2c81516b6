//! Large inputs through the `cordon` binary on the real kernel with the real bubblewrap: a
//! megabyte command line (`check` and `run`), a 100 MB output flood (the cap holds and cordon's
//! memory stays bounded), 4,000-byte paths (as workspace, as a mask) and one past PATH_MAX, and
//! thousands of credential masks. Each test asserts the exact outcome and exit code (docs/cli.md).
//! These tests fail (never skip) when bubblewrap is missing: `cargo xtask ci` installs it.
//!
//! One argument can hold at most 128 KiB (the kernel's MAX_ARG_STRLEN), so a megabyte command
//! line is sixteen arguments of 64 KiB; a single megabyte string is judged through the library
//! in `tests/integration/tests/large_inputs.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary home holding a workspace `proj` with a credential and a git repository.
struct Jail {
    home: tempfile::TempDir,
    work: PathBuf,
}

impl Jail {
    fn new() -> Jail {
        common::require_bwrap();
        let home = common::visible_dir("cordon-test-");
        let work = home.path().join("proj");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        std::fs::write(home.path().join(".ssh/id_test"), "SENTINEL-PRIVATE-KEY").unwrap();
        let work = work.canonicalize().unwrap();
        Jail { home, work }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(common::cordon());
        c.args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): stdout {} stderr {}",
            text(&out.stdout),
            text(&out.stderr)
        )
    })
}

/// Sixteen arguments of 64 KiB: one megabyte of command line.
fn megabyte_of_arguments() -> Vec<String> {
    (0..16).map(|i| format!("{i:x}").repeat(1 << 16)).collect()
}

#[test]
fn a_megabyte_command_line_is_judged_by_check() {
    let j = Jail::new();
    let big = megabyte_of_arguments();

    let mut argv = vec!["check", "--", "echo"];
    argv.extend(big.iter().map(String::as_str));
    let out = j.run(&argv);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "allow\n");

    let mut argv = vec!["check", "--json", "--", "rm", "-rf"];
    argv.extend(big.iter().map(String::as_str));
    argv.push("/");
    let out = j.run(&argv);
    assert_eq!(out.status.code(), Some(126));
    let v = json(&out);
    assert_eq!(v["verdict"], "refuse");
    assert_eq!(v["rule"], "recursive-delete");
    assert!(
        text(&out.stderr).starts_with(
            "cordon: refused by the floor: recursive-delete: recursive deletion of `/`"
        ),
        "{}",
        &text(&out.stderr)[..200]
    );
}

#[test]
fn a_megabyte_command_line_runs_or_is_refused_whole() {
    let j = Jail::new();
    let big = megabyte_of_arguments();

    // Every byte of every argument reaches the jailed command.
    let mut argv = vec![
        "run",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        "n=0; for a; do n=$((n + ${#a})); done; echo $# $n",
        "sh",
    ];
    argv.extend(big.iter().map(String::as_str));
    let out = j.run(&argv);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(v["status"], "exited");
    assert_eq!(v["stdout"]["text"], format!("16 {}\n", 16 << 16));

    // The floor sees all of it: a refused target after a megabyte of arguments is refused, before
    // any policy is read.
    let mut argv = vec!["run", "--json", "--", "rm", "-rf"];
    argv.extend(big.iter().map(String::as_str));
    argv.push("/");
    let out = j.run(&argv);
    assert_eq!(out.status.code(), Some(126));
    let v = json(&out);
    assert_eq!(v["status"], "refused");
    assert_eq!(v["rule"], "recursive-delete");
    assert_eq!(v["policy_hash"], serde_json::Value::Null);
}

#[test]
fn a_100_mb_flood_is_capped_and_memory_stays_bounded() {
    let j = Jail::new();
    let done = j.work.join("flood-done");
    // 100 MB on each stream (stderr as NUL bytes, the costliest to encode as JSON), then a
    // marker, then a pause on stdin: while it waits, everything has passed through cordon.
    let script = "head -c 100000000 /dev/zero | tr '\\0' a; head -c 100000000 /dev/zero >&2; \
                  : > flood-done; read line || true";
    // Live, so the marker reaches the host while the jail waits (a layer commits at the end).
    let mut child = j
        .cmd(&["run", "--json", "--live", "--", "/bin/sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).unwrap();
        buf
    });
    // Sample cordon's peak RSS until it exits: VmHWM only grows, so the last sample is the best
    // lower bound on the whole run, and the one taken at the marker covers the flood itself.
    let sampler = std::thread::spawn(move || {
        let mut last = None;
        while let Some(kib) = vm_hwm_kib(pid) {
            last = Some(kib);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        last
    });
    while !done.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "cordon exited before the flood ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let at_marker = vm_hwm_kib(pid).expect("cordon is waiting on its payload");
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    let stdout = reader.join().unwrap();
    let last_sample = sampler.join().unwrap().unwrap_or(at_marker);
    eprintln!("cordon peak RSS: {at_marker} KiB after the flood, {last_sample} KiB last sampled");

    const BOUND_KIB: u64 = 64 << 10;
    assert!(
        at_marker < BOUND_KIB,
        "cordon held {at_marker} KiB after a 200 MB flood"
    );
    assert!(last_sample < BOUND_KIB, "cordon reached {last_sample} KiB");

    assert_eq!(status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(v["status"], "exited");
    let cap = 4 << 20; // the shell profile's output cap
    for (stream, byte) in [("stdout", 'a'), ("stderr", '\0')] {
        assert_eq!(v[stream]["truncated"], true, "{stream}");
        assert_eq!(v[stream]["bytes"], 100_000_000, "{stream}");
        let kept = v[stream]["text"].as_str().unwrap();
        assert_eq!(kept.len(), cap, "{stream}");
        assert!(kept.chars().all(|c| c == byte), "{stream}");
    }
}

#[test]
fn a_100_mb_flood_without_json_forwards_only_the_cap() {
    let j = Jail::new();
    let out = j.run(&[
        "run",
        "--",
        "/bin/sh",
        "-c",
        "head -c 100000000 /dev/zero | tr '\\0' a",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout.len(), 4 << 20);
    assert_eq!(
        text(&out.stderr),
        "cordon: stdout truncated at 4194304 of 100000000 bytes\n"
    );
}

/// `VmHWM` of a live process, in KiB; `None` once it has exited.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A directory below `base` whose path is exactly `total` bytes long.
fn long_dir(base: &Path, total: usize) -> PathBuf {
    let mut path = base.to_path_buf();
    let mut len = path.as_os_str().len();
    while len < total {
        let part = (total - len - 1).min(200);
        path.push("p".repeat(part));
        len += part + 1;
    }
    assert_eq!(path.as_os_str().len(), total);
    std::fs::create_dir_all(&path).unwrap();
    path
}

#[test]
fn a_4000_byte_workspace_runs() {
    let j = Jail::new();
    let deep = long_dir(&j.work, 4000);
    let out = j.run(&[
        "run",
        "--json",
        "--cwd",
        deep.to_str().unwrap(),
        "--",
        "/bin/sh",
        "-c",
        "pwd; echo made > made.txt",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(v["stdout"]["text"], format!("{}\n", deep.display()));
    assert_eq!(
        std::fs::read_to_string(deep.join("made.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn the_longest_workspace_bubblewrap_mounts_runs_and_one_byte_more_is_refused() {
    let j = Jail::new();
    let most = long_dir(&j.work, 4087);
    let run = |dir: &Path| {
        j.run(&[
            "run",
            "--json",
            "--cwd",
            dir.to_str().unwrap(),
            "--",
            "/bin/sh",
            "-c",
            "echo made > made.txt && cat made.txt",
        ])
    };
    // (made.txt's own path is past PATH_MAX: only the jail, from its cwd, can name it.)
    let out = run(&most);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json(&out)["stdout"]["text"], "made\n");
    // One byte more: bubblewrap could not mount it ("Can't get type of source"); cordon says
    // why, exits 125 and starts nothing.
    let over = most
        .parent()
        .unwrap()
        .join(format!("{}x", most.file_name().unwrap().to_str().unwrap()));
    std::fs::create_dir(&over).unwrap();
    assert_eq!(over.as_os_str().len(), 4088);
    let out = run(&over);
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "cordon: mount source {} is 4088 bytes long; bubblewrap mounts at most 4087-byte \
             paths (it prefixes each with /oldroot or /newroot, within the kernel's 4096)\n",
            over.display()
        )
    );
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

#[test]
fn a_4000_byte_mask_holds() {
    let j = Jail::new();
    let deep = long_dir(&j.work, 4000);
    std::fs::write(deep.join("secret"), "SENTINEL-DEEP").unwrap();
    let relative = deep.strip_prefix(&j.work).unwrap().to_str().unwrap();
    std::fs::write(
        j.work.join(".cordon.toml"),
        format!("[filesystem]\ndeny_read = [{relative:?}]\n"),
    )
    .unwrap();
    let script = format!("cat {}/secret; echo done", deep.display());
    let out = j.run(&["run", "--json", "--", "/bin/sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(v["stdout"]["text"], "done\n");
    assert!(
        v["stderr"]["text"]
            .as_str()
            .unwrap()
            .ends_with("/secret: Permission denied\n"),
        "{v}"
    );
}

#[test]
fn a_cwd_past_path_max_is_refused_with_125() {
    use rustix::fs::{Mode, OFlags, mkdirat, openat};
    let j = Jail::new();
    // No single call can name it, so it is made one component at a time.
    let flags = OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = openat(rustix::fs::CWD, &j.work, flags, Mode::empty()).unwrap();
    let mut long = j.work.clone();
    while long.as_os_str().len() <= 4200 {
        let name = "q".repeat(200);
        mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        dir = openat(&dir, name.as_str(), flags, Mode::empty()).unwrap();
        long.push(name);
    }
    let out = j.run(&["run", "--cwd", long.to_str().unwrap(), "--", "/bin/true"]);
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(
        text(&out.stderr),
        format!(
            "cordon: cwd {} is {} bytes long, past the kernel's PATH_MAX (at most 4095 bytes): \
             no system call can name it\n",
            long.display(),
            long.as_os_str().len()
        )
    );
}

/// Writes `count` mask entries into the project file, every other one an existing file holding a
/// sentinel; returns the relative names.
fn masks(j: &Jail, count: usize) -> Vec<String> {
    let names: Vec<String> = (0..count)
        .map(|i| format!("d{:02}/k{i:05}", i / 100))
        .collect();
    for name in names.iter().step_by(2) {
        let path = j.work.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "SENTINEL-MASKED").unwrap();
    }
    let list: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    std::fs::write(
        j.work.join(".cordon.toml"),
        format!("[filesystem]\ndeny_read = [{}]\n", list.join(", ")),
    )
    .unwrap();
    names
}

#[test]
fn a_thousand_masks_all_hold() {
    let j = Jail::new();
    let names = masks(&j, 1000);
    // Masked files read empty and cannot be overwritten.
    let script = format!(
        "cat {first} {last}; echo x 2>/dev/null > {first} || echo refused; echo done",
        first = names[0],
        last = names[998]
    );
    let out = j.run(&["run", "--json", "--", "/bin/sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(v["stdout"]["text"], "refused\ndone\n", "{v}");
    assert_eq!(
        std::fs::read_to_string(j.work.join(&names[0])).unwrap(),
        "SENTINEL-MASKED"
    );
}

#[test]
fn ten_thousand_masks_are_refused_before_anything_runs() {
    let j = Jail::new();
    let names = masks(&j, 10_000);
    let marker = j.work.join("ran");
    let script = format!("touch {}", marker.display());

    // `explain` lists every existing mask, one `--ro-bind /dev/null P` each.
    let out = j.run(&["explain", "--", "/bin/true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    let lines: std::collections::HashSet<&str> = listed.lines().collect();
    for (i, name) in names.iter().enumerate() {
        let path = j.work.join(name);
        assert_eq!(lines.contains(path.to_str().unwrap()), i % 2 == 0, "{name}");
    }

    // bubblewrap reads at most 9,000 arguments: cordon refuses before it starts anything, with
    // the count and the rule (bad input, 125), instead of handing bubblewrap a list it rejects.
    let out = j.run(&["run", "--json", "--", "/bin/sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("cordon: the jail needs ")
            && stderr.contains("bubblewrap arguments, and bubblewrap reads at most 9000"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the command ran");
}
