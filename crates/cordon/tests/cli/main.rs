//! The `cordon` binary's tests, one test binary (each file below is a module): the CLI's
//! commands end to end on the real kernel, and the CLI compared with the library it embeds. They
//! fail, never skip, when bubblewrap or root is missing where a test needs it. The launcher
//! library's own tests are cordon-launch's (`crates/cordon-launch/tests/launch/`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod caches;
mod cli_denials;
mod cli_floor;
mod cli_mcp;
mod cli_policy;
mod cli_run;
mod cli_serve;
mod common;
mod container;
mod explain_macos;
mod git_config;
mod kill_launcher;
mod kill_layer;
mod large_inputs;
mod layer;
mod one_owner;
mod review;
mod roots;
mod stage_placement;
mod supervised;
