//! cordon-policy's integration tests, one binary: the configuration layers, the path rules a plan
//! enforces, the home allowlist, what resolving costs, the reviewed snapshots, and the survey of
//! credential stores.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod config_layers;
mod home_rules;
mod path_rules;
mod plan_rules;
mod registry_and_caches;
mod snapshots;
mod survey;

use cordon_policy::{Policy, Profile};

/// The default policy of the `shell` profile.
fn shell() -> Policy {
    Policy::for_profile(Profile::Shell)
}
