//! The compiled filter against the real kernel.
//!
//! `main` re-runs this binary once per case and mode, naming them in `CORDON_SECCOMP_KERNEL_CASE`.
//! The child installs the host filter (mode `filtered`) or nothing (mode `baseline`), makes one
//! system call and prints its outcome. The parent then checks that:
//!
//! * each refused call gets the filter's answer, and the same call without the filter gets a
//!   different one, so the answer came from the filter and not from the arguments. The arguments
//!   are chosen so an unfiltered call fails harmlessly (bad pointers, descriptors or flags),
//!   even as root: nothing is mounted, traced, loaded or written;
//! * foreign ABIs (x32, i386) kill the process;
//! * ordinary work (files, pipes, socketpair, fork, threads, exec) still succeeds.
//!
//! Some calls check the caller's capabilities before their arguments, so without the filter an
//! unprivileged run also answers EPERM and cannot tell the two apart: run as root (CI does).
//! Nothing is skipped; a kernel that refuses to load the filter fails every filtered case.
//!
//! `cases` lists every case and what it must show, `probes` holds the calls the cases make,
//! `child` installs the filter and runs one probe, `judge` runs a case in both modes and compares.

#![allow(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

const CASE_VAR: &str = "CORDON_SECCOMP_KERNEL_CASE";

mod cases;
mod child;
mod judge;
mod probes;

fn main() -> ExitCode {
    if let Ok(request) = std::env::var(CASE_VAR) {
        return child::child(&request);
    }
    let cases = cases::cases();
    let mut failed = Vec::new();
    for case in &cases {
        let sockets = if case.deny_sockets {
            "network denied"
        } else {
            "network allowed"
        };
        match judge::check(case) {
            Ok(seen) => println!("ok   {:<44} {seen}", case.name),
            Err(why) => {
                println!("FAIL {:<44} ({sockets}) {why}", case.name);
                failed.push(case.name);
            }
        }
    }
    if failed.is_empty() {
        println!("kernel: {} cases passed", cases.len());
        ExitCode::SUCCESS
    } else {
        println!(
            "kernel: {} of {} cases failed: {}",
            failed.len(),
            cases.len(),
            failed.join(", ")
        );
        ExitCode::FAILURE
    }
}
