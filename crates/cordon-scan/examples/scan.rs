//! `cargo run --release -p cordon-scan --example scan -- ROOT... [--glob GLOB]...`: scans the
//! roots once and prints the findings, the deny-glob matches and the counts, with the time taken.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

fn main() {
    let mut roots = Vec::new();
    let mut globs = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--glob" {
            globs.push(
                args.next()
                    .expect("--glob needs a value")
                    .into_string()
                    .unwrap(),
            );
        } else {
            roots.push(std::path::PathBuf::from(arg));
        }
    }
    let globs = cordon_scan::DenyGlobs::new(&globs).unwrap();
    let start = Instant::now();
    let session = cordon_scan::scan(&roots, &globs).unwrap();
    let took = start.elapsed();
    for f in session.findings() {
        println!("finding: {f}");
    }
    for m in session.deny_matches() {
        println!("deny-glob match: {} ({})", m.path.display(), m.pattern);
    }
    println!("{:?}", session.counts());
    println!("took {:.1} ms", took.as_secs_f64() * 1000.0);
}
