//! cordon-seatbelt's integration tests, one test binary: `common` holds the fixed inputs, the
//! reader of the profile language and the evaluator the other modules check the profiles with.
//! Snapshots are in `snapshots/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod fuzz_regressions;
mod glob_semantics;
mod properties;
mod reader;
mod snapshots;
mod structure;
