//! The one error type of this crate, and how it shows a value.

use std::fmt::Write as _;

/// Shows bytes losslessly on one line: valid UTF-8 as is, a backslash as `\\`, control
/// characters and each byte of an invalid sequence as `\xNN`. Two different values never show
/// the same.
pub(crate) fn show(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => {
                    for b in c.to_string().bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// Why no `sandbox-exec` invocation was produced. Every variant names the offending value, shown
/// losslessly (invalid UTF-8 as `\xNN`, a backslash as `\\`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SeatbeltError {
    /// A value contains a NUL byte: it could not travel as a `-D` parameter or an argument (the
    /// kernel would cut it short), and no path can contain one.
    #[error("refused to pass {what} {value} to sandbox-exec: it contains a NUL byte")]
    NulByte {
        /// What the value is: `writable root`, `command argument`, ...
        what: &'static str,
        /// The value.
        value: String,
    },

    /// A path that must be absolute is not. Seatbelt matches absolute, symlink-resolved paths, so
    /// a relative one would match nothing and silently weaken the profile.
    #[error("{what} {path} is not an absolute path")]
    NotAbsolute {
        /// Which input, such as `temporary directory`.
        what: &'static str,
        /// The path.
        path: String,
    },

    /// There is no command to run.
    #[error("no command to run: the argument vector is empty or its program is an empty string")]
    EmptyCommand,

    /// A glob cannot be compiled to a Seatbelt regular expression.
    #[error("glob {pattern} (below {base}) is refused: {why}")]
    Glob {
        /// The pattern as given.
        pattern: String,
        /// The literal directory it is anchored at.
        base: String,
        /// The rule it breaks, in words.
        why: String,
    },

    /// A regular expression would exceed what the profile reader accepts in one string literal;
    /// the whole profile would fail to load.
    #[error(
        "the regular expression for {pattern} is {len} bytes long; a Seatbelt string literal holds at most {max}"
    )]
    RegexTooLong {
        /// The glob it came from.
        pattern: String,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },

    /// A generated regular expression uses a construct Seatbelt's engine does not support. This
    /// is a bug in the generator; the profile is refused rather than emitted with a rule that
    /// never matches.
    #[error(
        "generated regular expression {regex} uses {construct}, which Seatbelt does not support"
    )]
    RegexDialect {
        /// The expression, shown losslessly.
        regex: String,
        /// The construct, such as `a (?…) group`.
        construct: &'static str,
    },
}
