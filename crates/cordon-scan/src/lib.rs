//! The once-per-session walk of cordon's writable roots.
//!
//! An agent runs hundreds of commands in repositories of 100,000 files and more; nothing done per
//! command may walk the tree. This crate walks each writable root **once per session** and
//! returns three things:
//!
//! - **findings** that make cordon refuse ([`Finding`], each naming the path and the rule): a
//!   mount point strictly beneath a root (from the mount table, read once, and from the walk,
//!   which never enters one); a regular file with more hard links than the scan saw inside the
//!   roots (a write through it would change a file outside the workspace); a Unix socket, a
//!   FIFO, a block or character device; a directory that could not be read;
//! - **deny-glob matches** ([`DenyGlobs`], [`DenyMatch`]): credential-shaped paths such as
//!   `**/.env` found during the same walk, for the launcher to mask;
//! - a [`Snapshot`] of each root's identity (device, inode, mount ID), whose
//!   [`Snapshot::check`] costs one `statx` per root and fails when a root was replaced, so every
//!   later command can be checked without walking.
//!
//! [`Counts`] say how much was looked at, for `cordon doctor`.
//!
//! The walk is descriptor-relative (`openat2` with `RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS`,
//! `getdents64`, `fstatat(AT_SYMLINK_NOFOLLOW)`), never follows a symlink, and stats only the
//! entries whose type (`d_type`) leaves a question: regular files, for their link count. Almost
//! all of its time is that `fstatat`, in the kernel, so a few worker threads share the
//! directories (up to 4, one per core). On 100,000 files it takes about as long as
//! `find -xdev` with the same predicates, or less (`cargo xtask bench`, docs/benchmarks.md).
//! Whatever it cannot read — a directory without permission, an `openat2` a container's seccomp
//! profile refuses with `EPERM` — is a finding, never skipped.
//!
//! Not for: deciding policy (the roots come from a `cordon_policy::Plan`), masking anything
//! (the launcher turns matches into masks), per-command checks beyond the roots' identities, or
//! watching the tree: a command may create a FIFO later, and the jail, not this scan, is what
//! holds then. Linux only.
//!
//! # Example
//!
//! ```
//! use cordon_scan::{DenyGlobs, scan};
//!
//! let dir = tempfile::tempdir()?;
//! let root = dir.path().join("proj");
//! std::fs::create_dir_all(root.join("config"))?;
//! std::fs::write(root.join("config/.env"), "TOKEN=x")?;
//! std::fs::write(root.join("main.rs"), "fn main() {}")?;
//! std::fs::hard_link(root.join("main.rs"), dir.path().join("outside.rs"))?;
//!
//! let globs = DenyGlobs::new(["**/.env"])?;
//! let session = scan(&[&root], &globs)?;
//!
//! let found: Vec<_> = session.findings().iter().map(|f| f.kind.rule()).collect();
//! assert_eq!(found, ["outside-hard-link"]);
//! assert!(session.refusal().is_err());
//! assert_eq!(session.deny_matches()[0].path.file_name(), Some(".env".as_ref()));
//! assert_eq!(session.counts().files, 2);
//!
//! // Before each command: one statx per root, no walk.
//! session.snapshot().check()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod finding;
mod globs;
mod mountinfo;
mod snapshot;
mod walk;
mod worker;

pub use error::ScanError;
pub use finding::{Finding, FindingKind};
pub use globs::{DenyGlobs, DenyMatch, EntryType};
pub use mountinfo::{Mount, MountTable};
pub use snapshot::{Identity, Snapshot};
pub use walk::{Counts, SessionScan, scan, scan_with};
