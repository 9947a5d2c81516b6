//! cordon's cross-crate integration tests, one test binary: the documented architecture against
//! the manifests, large inputs through the libraries, and the policy on the real filesystem.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod architecture;
mod large_inputs;
mod policy_on_real_host;
