//! The policy model: what a jailed command may do, as plain data independent of any host.
//!
//! A [`Policy`](policy::Policy) starts from a [`Profile`](profile::Profile)'s defaults
//! (`profile`) and the default lists, and is refined layer by layer through a
//! [`PolicyBuilder`](policy::PolicyBuilder) (`policy`); the configuration files and the layering
//! rules are in `config`, the named checks a reviewer runs over them in `audit`, and the plain
//! values a policy is made of (posture, network, home directory, limits) in `modes`.
//!
//! Nothing here asks the host anything: the plan (`crate::plan`) resolves a policy on a host.

pub(crate) mod audit;
pub(crate) mod config;
pub(crate) mod modes;
pub(crate) mod policy;
pub(crate) mod profile;
