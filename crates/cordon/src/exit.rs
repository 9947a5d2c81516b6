//! The exit codes cordon itself uses (docs/cli.md). Otherwise `cordon run` exits with the
//! payload's own status (124 on timeout, 128+N when the payload was killed by signal N).

pub use cordon_launch::exit_codes::{CANNOT_RUN, REFUSED};

/// A check of `cordon audit` failed.
pub const AUDIT_FAILED: u8 = 1;
