//! cordon-env's integration tests, one test binary: the property tests and the snapshots of the
//! classification table (in `snapshots/`). `process_env` stays a binary of its own: it checks
//! that the calling process's environment is unchanged, so no other test may share its process.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod properties;
mod table;
