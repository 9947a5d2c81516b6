//! The jail's features, one module each.

pub(crate) mod git;
#[cfg(linux_backends)]
pub(crate) mod memory;
pub(crate) mod objects;
#[cfg(linux_backends)]
pub(crate) mod pids;
pub(crate) mod proxy;
pub(crate) mod sweep;
