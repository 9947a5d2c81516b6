//! The scan's error type: what could not be scanned or re-checked, and why.

use std::path::PathBuf;

use crate::finding::Finding;
use crate::snapshot::Identity;

/// Why a scan, or a per-command re-check, refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// A root given to the scan is not absolute.
    #[error("writable root {root} is not absolute; the scan only walks absolute roots")]
    RelativeRoot {
        /// The root as given.
        root: PathBuf,
    },
    /// A root could not be resolved or opened as a directory.
    #[error("cannot open writable root {root} as a directory: {source}")]
    RootUnreadable {
        /// The root.
        root: PathBuf,
        /// What the kernel said.
        #[source]
        source: std::io::Error,
    },
    /// Two roots overlap: one lies inside the other, or both are the same directory. Hard links
    /// would be counted twice and an outside link could hide behind the second count.
    #[error(
        "writable roots {inner} and {outer} overlap (the same directory, or one inside the other); \
         each file must be counted once, so the roots must be disjoint"
    )]
    OverlappingRoots {
        /// The root inside (or equal to) the other.
        inner: PathBuf,
        /// The other root.
        outer: PathBuf,
    },
    /// The mount table could not be read.
    #[error("cannot read the mount table {path}: {source}")]
    MountTable {
        /// The file.
        path: PathBuf,
        /// What the kernel said.
        #[source]
        source: std::io::Error,
    },
    /// A mount table line does not have mountinfo's shape.
    #[error("mount table line {line} is not a mountinfo line ({why}): {text:?}")]
    MountTableLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        why: &'static str,
        /// The line.
        text: String,
    },
    /// A deny glob does not parse.
    #[error("deny glob {pattern:?} is not a valid glob: {source}")]
    Glob {
        /// The pattern.
        pattern: String,
        /// globset's reason.
        #[source]
        source: globset::Error,
    },
    /// A deny glob that is not relative to a root.
    #[error(
        "deny glob {pattern:?} is absolute or climbs out with `..`; deny globs are relative to \
         each writable root (`**/.env`, `*.pem`)"
    )]
    GlobNotRelative {
        /// The pattern.
        pattern: String,
    },
    /// The scan found what cordon refuses to jail.
    #[error("{}", refused(.0))]
    Refused(Vec<Finding>),
    /// A root is no longer the directory the session scanned.
    #[error(
        "writable root {root} was replaced since the session scanned it (then {then}, now {now}); \
         scan the session again"
    )]
    RootReplaced {
        /// The root.
        root: PathBuf,
        /// The identity recorded by the scan.
        then: Identity,
        /// The identity now.
        now: Identity,
    },
    /// A root can no longer be looked at.
    #[error("writable root {root} cannot be checked against the session's scan: {source}")]
    RootGone {
        /// The root.
        root: PathBuf,
        /// What the kernel said.
        #[source]
        source: std::io::Error,
    },
}

fn refused(findings: &[Finding]) -> String {
    let mut text = format!(
        "{} finding(s) in the writable roots make the jail unsafe:",
        findings.len()
    );
    for f in findings {
        text.push_str("\n  - ");
        text.push_str(&f.to_string());
    }
    text
}
