//! cordon-commit against real overlay layers: what lands on the host, what is kept aside, and
//! that a commit killed at any point is finished or undone by recovery.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod basics;
mod conflicts;
mod kill;
mod review;
mod safety;
mod support;
