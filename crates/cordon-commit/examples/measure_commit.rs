//! Measures a commit of N changed files (default 10,000) in a workspace of M host files, the
//! layer made by a real overlay (`unshare -Urm`): `cargo run --release -p cordon-commit
//! --example measure_commit -- [N] [M]`. Prints the figures; asserts nothing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::process::Command;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let m: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let base = tempfile::tempdir().unwrap();
    let ws = base.path().join("ws");
    for d in ["ws/host", "upper", "work", "state"] {
        std::fs::create_dir_all(base.path().join(d)).unwrap();
    }
    for i in 0..m {
        std::fs::write(ws.join(format!("host/{i}")), b"h").unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    let marker = base.path().join("started");
    std::fs::write(&marker, b"").unwrap();
    let script = format!(
        "mount -t overlay -o userxattr,lowerdir={ws},upperdir={b}/upper,workdir={b}/work none {ws} && mkdir {ws}/new && cd {ws}/new && i=0; while [ $i -lt {n} ]; do echo $i > f$i; i=$((i+1)); done",
        ws = ws.display(),
        b = base.path().display()
    );
    let out = Command::new("unshare")
        .args(["-Urm", "sh", "-ec", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = Instant::now();
    let set = cordon_commit::read_layer(&ws, &base.path().join("upper")).unwrap();
    let read = t.elapsed();
    let t = Instant::now();
    let mut phases: Vec<(&str, std::time::Duration)> = Vec::new();
    let mut hook = |p: cordon_commit::Point| {
        let name = match p {
            cordon_commit::Point::KeptAside(0) => "read and judged",
            cordon_commit::Point::Recorded => "kept aside and recorded",
            cordon_commit::Point::Sealed => "sealed",
            cordon_commit::Point::Finalized => "applied and finalized",
            _ => return,
        };
        phases.push((name, t.elapsed()));
    };
    let report = cordon_commit::commit_root_with(
        &ws,
        &base.path().join("upper"),
        &base.path().join("state"),
        &marker,
        cordon_commit::Mode::Apply,
        cordon_commit::CommitOptions {
            hook: Some(&mut hook),
            ..Default::default()
        },
    )
    .unwrap();
    let commit = t.elapsed();
    for (name, at) in &phases {
        println!("  {name} at {:.1} ms", at.as_secs_f64() * 1e3);
    }
    println!(
        "{} changes over {m} host files: read_layer {:.1} ms, commit_root {:.1} ms ({} added, {} kept)",
        set.changes.len(),
        read.as_secs_f64() * 1e3,
        commit.as_secs_f64() * 1e3,
        report.added.len(),
        report.refused.len() + report.held.len() + report.conflicts.len()
    );
}
