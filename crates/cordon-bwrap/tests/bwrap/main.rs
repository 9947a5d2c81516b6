//! cordon-bwrap's integration tests, one test binary: each module is one concern, `common` holds
//! the fixed inputs and the option reader they share. Snapshots are in `snapshots/`, the
//! bubblewrap fixtures in `../fixtures/`, proptest's saved cases in `../proptest-regressions/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod features;
mod fuzz_regressions;
mod layered;
mod ordering;
mod properties;
mod real_bwrap;
mod snapshots;
