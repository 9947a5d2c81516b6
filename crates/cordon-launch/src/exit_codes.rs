//! The exit codes of docs/cli.md, shared by the launcher and the CLI.

/// The wall-clock timeout passed; the whole tree was killed.
pub const TIMEOUT: u8 = 124;
/// cordon could not run the command: bad input, bad configuration, internal error.
pub const CANNOT_RUN: u8 = 125;
/// Refused: the floor, the policy, no enforcing backend, or a failed self-check in the jail.
pub const REFUSED: u8 = 126;
