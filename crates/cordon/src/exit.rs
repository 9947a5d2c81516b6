//! The exit codes cordon itself uses (docs/cli.md). Otherwise `cordon run` exits with the
//! payload's own status, or 128+N when the payload was killed by signal N.

/// A check of `cordon audit` failed.
pub const AUDIT_FAILED: u8 = 1;
/// The wall-clock timeout passed; the whole tree was killed.
#[allow(dead_code)] // `cordon run` arrives with the Linux enforcement issue
pub const TIMEOUT: u8 = 124;
/// cordon could not run the command: bad input, bad configuration, internal error.
pub const CANNOT_RUN: u8 = 125;
/// Refused: the floor, the policy, no enforcing backend, or a failed self-check in the jail.
#[allow(dead_code)] // `cordon run` arrives with the Linux enforcement issue
pub const REFUSED: u8 = 126;
