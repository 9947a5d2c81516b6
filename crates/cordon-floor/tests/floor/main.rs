//! cordon-floor's integration tests, one test binary: `common` loads the corpus
//! (`../corpus.txt`) the other modules judge. proptest's saved cases are in
//! `../proptest-regressions/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod common;
mod corpus;
mod limits;
mod noise;
#[cfg(target_os = "linux")]
mod race;
