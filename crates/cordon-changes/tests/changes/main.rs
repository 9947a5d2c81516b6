//! The judge against change sets built by hand over a fake host: every rule with a case it must
//! catch and a case it must let through.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

mod config;
mod git;
mod properties;
mod registry;
mod structure;
mod support;
