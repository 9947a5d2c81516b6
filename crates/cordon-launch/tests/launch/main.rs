//! The launcher's own tests on the real kernel, through its library API: refusals (no trusted
//! bubblewrap, `warn`, a bubblewrap that does not jail, a backend that claims too much), a
//! session's preparation and the jails it builds ahead, and a stage binary that lives under
//! `/tmp`. They fail, never skip, when bubblewrap (or root, where a test needs it) is missing.
//!
//! A jail needs a stage binary, a program that calls [`cordon_launch::run_if_stage`] first
//! thing: this test binary is its own (`harness = false`), as `examples/echo.rs` is. Inside a
//! jail it starts again with the stage's arguments and never reaches the runner. Its place under
//! `target/` is outside every writable root the tests make, and readable and executable by an
//! unprivileged user.
//!
//! `runner` runs the tests one at a time on the main thread (see there why), with libtest's
//! filters and output: `cargo test -p cordon-launch --test launch [FILTER]` runs them, and so
//! do `cargo xtask ci test` and, under nextest from a copy under `/tmp`, `cargo xtask ci
//! relocated`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod common;
mod launcher;
mod layer;
mod runner;
mod stage_placement;
mod warm;

use std::process::ExitCode;

use runner::Test;

/// `module::function` entries for the runner, named as libtest would name them.
macro_rules! tests {
    ($($module:ident :: $function:ident),* $(,)?) => {
        &[$(Test {
            name: concat!(stringify!($module), "::", stringify!($function)),
            run: $module::$function,
        }),*]
    };
}

const TESTS: &[Test] = tests![
    launcher::no_trusted_bubblewrap_refuses_with_the_reason_and_the_ways_out,
    launcher::warn_runs_unsandboxed_only_when_set_and_says_so,
    launcher::a_bubblewrap_that_does_not_jail_fails_the_probe_and_nothing_runs,
    launcher::the_in_jail_self_check_stops_a_backend_that_claims_too_much,
    launcher::every_backend_refuses_a_writable_root_that_holds_the_stage_binary,
    launcher::preparation_walks_once_refuses_what_reaches_outside_and_runs_check_only_identity,
    layer::a_layered_write_is_absent_on_the_host_while_the_jail_lives_and_committed_after,
    layer::a_layered_command_reads_its_own_writes_and_commits_with_git,
    layer::a_reviewed_layer_applies_nothing_and_lists_the_change,
    layer::an_unchanged_layer_is_not_committed,
    layer::a_live_run_writes_through_as_before,
    layer::a_layered_session_builds_ahead_and_takes_the_layer_when_the_command_comes,
    layer::a_workspace_whose_path_is_not_utf8_is_committed,
    stage_placement::a_stage_under_tmp_runs_through_the_library_under_both_backends,
    warm::a_prepared_session_builds_each_next_jail_ahead_and_each_holds,
];

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    cordon_launch::run_if_stage(&args); // inside a jail: checks it, then becomes the command
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.into_string().expect("a test argument that is not UTF-8"))
        .collect();
    runner::run(TESTS, &args)
}
