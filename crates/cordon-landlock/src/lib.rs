//! cordon's Landlock rulesets: a [`Plan`](cordon_policy::Plan) as Landlock rules, and those
//! rules applied to the calling process.
//!
//! cordon uses Landlock in two places. **Inside bubblewrap** it is a second wall: the launcher
//! computes [`Rules`] on the host, sends them to the in-jail stage as bytes
//! ([`Rules::encode`]), and the stage decodes them, builds a [`Ruleset`] and applies it just
//! before it `exec`s the command. **Alone**, as the `landlock` backend where bubblewrap cannot
//! start, the launcher builds the [`Ruleset`] in the parent and the forked child calls only
//! [`Ruleset::restrict_self`] (async-signal-safe) before `exec`.
//!
//! The crate has two halves, in the spirit of "model apart from enforcement":
//! [`Rules::from_plan`] is pure (it reads directories only through the [`Lister`] trait, so
//! [`FakeLister`] makes it testable and snapshot-able), and [`Ruleset`] turns rules into system
//! calls (`sys.rs` is the only module with `unsafe`).
//!
//! # What this crate is not
//!
//! It does not spawn processes, choose a backend, install seccomp filters or decide whether the
//! [`Report`] of an old kernel is good enough: the launcher does. It is not a sandbox on its own
//! either: Landlock does not cover every way out (see the limits below), which is why cordon pairs
//! it with seccomp and, where it can, bubblewrap.
//!
//! # The model
//!
//! Every filesystem right the kernel's [`Abi`] knows is *handled* (denied unless granted), and
//! rights are granted beneath paths:
//!
//! | where | rights |
//! |---|---|
//! | host posture: `/` except the masks (and, [`Placement::Alone`], the plan's private directories and `/dev`) | [`Access::READ`]: read files, list directories, execute |
//! | minimal posture: the plan's read-only trees, `/proc` (and inside bubblewrap `/dev` and the private directories) | [`Access::READ`] |
//! | writable roots, [`Options::temp_dirs`] (and inside bubblewrap the private directories) | [`Access::READ`] + [`Access::WRITE`]: write, truncate, create and remove entries, move between directories (`REFER`); never create device nodes |
//! | [`Options::devices`] (`/dev/null`, `/dev/tty`, …) | [`Access::DEVICE`]: read, write, `ioctl` |
//!
//! With the network denied, TCP bind and connect are handled with no port allowed (ABI 4).
//! Signals and abstract UNIX socket connections to processes outside the sandbox are refused
//! (scopes, ABI 6). On an older ABI the missing rights are dropped, never an error, and the
//! [`Report`] lists each dropped [`Feature`] with what is then left unrestricted.
//!
//! # Exceptions are granted piecewise
//!
//! Landlock has no deny rule, and a right granted on a directory reaches everything beneath it.
//! "All of `/home/u` except `~/.ssh`" is therefore granted as: `/home/u` itself gets only the
//! *ancestor* rights, and every entry of `/home/u` except `.ssh` gets the full rights — entries
//! that hold an excluded path further down are split the same way. Only directories on the way
//! to an excluded path are listed; a symlink entry gets no rule (opening it reaches its target,
//! whose own place decides).
//!
//! **Credential masks** are excluded from every zone. Their ancestors keep
//! [`MASK_ANCESTOR`] (listing, so `ls ~` and `ls /etc` work) and nothing else. So:
//!
//! * a masked file or anything inside a masked directory cannot be read, written or executed;
//! * a masked *directory can still be listed* (names, not contents): listing rights on `~` reach
//!   every directory beneath it;
//! * an entry created after the rules were made directly in an ancestor of a mask (a new file in
//!   `~`, in `/etc`, or in a workspace that holds a mask) cannot be read or written: it gets
//!   only the ancestor's listing right.
//!
//! **Protected paths** (inside writable roots: `.git/hooks`, `.git/config`, `.envrc`, …) are
//! excluded from the write zones when [`ProtectedPaths::Piecewise`]. Their ancestors — the
//! workspace root and `.git` in every git repository — keep [`PROTECTED_ANCESTOR`]: **no write
//! right at all**. Entries that existed when the rules were made are each granted in full
//! (`src/`, `target/`, `README.md`, `.git/objects/`, `.git/index`), so editing them works; but
//! directly in the workspace root and in `.git`, nothing can be created, removed or renamed:
//! `touch new-file`, `mkdir build`, `rm old-file`, `sed -i`, an editor's save-by-rename, and every
//! git command that takes a lock in `.git` (`git add`, `git commit`, `git checkout`) fail with
//! `EACCES`, leaving nothing behind.
//!
//! Keeping some creation rights on ancestors was weighed and refused, because of what Landlock
//! lets through for each right granted on an ancestor (the right reaches the protected subtree):
//!
//! * `WRITE_FILE`, `TRUNCATE`: rewrite or empty an existing hook or `.git/config`.
//! * `MAKE_SYM`: plant `.git/hooks/pre-commit -> ../../payload.sh`, code run by git on the host.
//! * `REMOVE_FILE` (+ `MAKE_REG`): rename a writable top-level file over `.envrc` in the same
//!   directory (same-directory renames need no `REFER`), or unlink `.git/config`.
//! * `REFER`: move a prepared file or directory from `src/` onto a protected name.
//! * `MAKE_REG` / `MAKE_DIR` alone: the new entry inherits only the ancestor's rights, so a new
//!   file cannot be written — `open(O_CREAT|O_WRONLY)` creates it and then fails, leaving an
//!   empty file that cannot be removed either. For git that is a stale `.git/index.lock`, which
//!   breaks the repository for the user on the host. Refusing creation outright is cleaner.
//!
//! Inside bubblewrap, the protected paths are already read-only binds (and the directories
//! above them pinned), so [`Options::inside_bubblewrap`] uses [`ProtectedPaths::LeftToMounts`]:
//! Landlock grants the writable roots whole there and the workspace stays fully usable. Without
//! bubblewrap, [`ProtectedPaths::LeftToMounts`] is refused ([`LandlockError::ProtectedUnheld`]).
//!
//! # What Landlock cannot express
//!
//! * **No deny rules**: every exception is made piecewise as above, from a listing taken when
//!   the rules are built, with the consequences above for entries created later.
//! * **Rules bind inodes, not names**: a granted entry keeps its rights if it is renamed (only
//!   possible where the directory allows it), and a path that did not exist when the ruleset was
//!   created is covered only by its ancestors' rules.
//! * **Networking beyond TCP**: UDP, raw sockets and other protocols are not restricted, and
//!   connecting to a *pathname* UNIX socket (`/run/docker.sock`) is not a filesystem right.
//!   cordon's seccomp filter refuses new sockets when the network is denied; with the network
//!   allowed and no bubblewrap, such sockets are reachable if the path is.
//! * **Metadata**: `stat`, `readlink`, `chmod`, `chown`, `utimes`, extended attributes and path
//!   traversal are not restricted (a protected file's mode can change; its content cannot).
//! * **Execution**: `EXECUTE` covers `execve` only; a readable file can still be mapped
//!   executable (`ld.so ./file`).
//! * **Descriptors opened before** [`Ruleset::restrict_self`] keep their access.
//! * **Alone**, the host's `/proc` stays readable (other processes' `cmdline` and `status`;
//!   Landlock already refuses `ptrace`-guarded entries such as `environ` and `mem` of processes
//!   outside the sandbox), and `/tmp`, `/var/tmp`, `/run`, `/dev` are hidden rather than private:
//!   reading them fails instead of showing an empty directory.
//! * **Threads**: `landlock_restrict_self` restricts the calling thread only.
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//! use cordon_landlock::{Access, FakeLister, Options, Rules};
//! use cordon_policy::{FakeHost, Invocation, Plan, Policy, Profile};
//!
//! let host = FakeHost::typical(); // a user `u` with a git repository at /home/u/proj
//! let plan = Plan::resolve(
//!     &Policy::for_profile(Profile::Shell),
//!     &Invocation::at("/home/u/proj"),
//!     &host,
//! )?;
//! // The directories on the way to masked and protected paths, as the real lister would see them.
//! let tree = FakeLister::new()
//!     .dir("/usr/bin")
//!     .file("/etc/passwd")
//!     .file("/etc/shadow")
//!     .dir("/home/u/.ssh")
//!     .dir("/home/u/.aws")
//!     .file("/home/u/.netrc")
//!     .file("/home/u/.cargo/credentials.toml")
//!     .dir("/home/u/.cargo/bin")
//!     .dir("/home/u/proj/src")
//!     .dir("/home/u/proj/.git/hooks")
//!     .file("/home/u/proj/.git/config")
//!     .dir("/home/u/proj/.git/objects");
//! let rules = Rules::from_plan(&plan, &Options::alone("/tmp/cordon-1"), &tree)?;
//!
//! // A masked directory: listed, never read.
//! assert_eq!(rules.effective(Path::new("/home/u/.ssh/id_ed25519")), Access::READ_DIR);
//! // The workspace: writable, except the protected paths and directly in their ancestors.
//! assert!(rules.effective(Path::new("/home/u/proj/src/main.rs")).contains(Access::WRITE));
//! assert!(!rules.effective(Path::new("/home/u/proj/.git/hooks/pre-commit")).intersects(Access::WRITE));
//! assert!(!rules.effective(Path::new("/home/u/proj/new-file")).intersects(Access::WRITE));
//!
//! // What the launcher sends to the in-jail stage.
//! assert_eq!(Rules::decode(&rules.encode())?, rules);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! In the stage (or a `pre_exec` hook), on Linux:
//!
//! ```no_run
//! # #[cfg(target_os = "linux")]
//! # fn stage(bytes: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
//! use cordon_landlock::{Abi, Rules, Ruleset};
//!
//! let (ruleset, report) = Ruleset::create(&Rules::decode(bytes)?, Abi::detect()?)?;
//! eprintln!("{report}"); // "Landlock ABI 7: 140 path rules (2 skipped); …"
//! ruleset.restrict_self()?; // then exec the command
//! # Ok(())
//! # }
//! ```

mod access;
mod codec;
mod error;
mod lister;
mod rules;
#[cfg(target_os = "linux")]
mod ruleset;
#[cfg(target_os = "linux")]
mod sys;

pub use access::{Abi, Access, Feature};
pub use codec::{FORMAT_VERSION, MAGIC};
pub use error::LandlockError;
pub use lister::{DirEntry, FakeLister, FsLister, Lister};
pub use rules::{
    DEFAULT_DEVICES, MASK_ANCESTOR, Options, PRIVATE_TERMINALS, PROTECTED_ANCESTOR, PathRule,
    Placement, ProtectedPaths, Rules,
};
#[cfg(target_os = "linux")]
pub use ruleset::{Report, Ruleset, SkipReason, SkippedRule};
#[cfg(target_os = "linux")]
pub use sys::{RestrictError, RestrictStep};
