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
//!
//! `layout` lays out the tree, `parent` builds the rules and runs and judges the cases (with
//! `judge`), `child` is the restricted side.

#![allow(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

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

mod child;
mod judge;
mod layout;
mod parent;

fn main() -> ExitCode {
    if let Ok(case) = std::env::var(CASE_VAR) {
        child::child(&case);
        return ExitCode::SUCCESS;
    }
    parent::parent()
}
