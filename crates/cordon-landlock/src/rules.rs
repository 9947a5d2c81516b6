//! A [`Plan`] as Landlock path rules: plain data, no system call.
//!
//! Landlock can only grant, and a right granted on a directory reaches everything beneath it.
//! So "everything in this tree except these paths" is granted piecewise: the tree's root gets a
//! restricted set of rights (the *ancestor* rights), and each of its entries is granted on its
//! own — recursively for an entry that itself holds an excluded path, not at all for an excluded
//! entry. Only the directories on the way to an excluded path are listed (through [`Lister`]).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use cordon_policy::DisplayPath;
use cordon_policy::{EntryKind, Network, Plan, Posture};

use crate::access::Access;
use crate::error::LandlockError;
use crate::lister::Lister;

/// The character devices every sandboxed command may read, write and configure (never create).
pub const DEFAULT_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Pseudo-terminals, inside bubblewrap only: its `--dev` mounts a devpts instance of the jail's
/// own, so a terminal opened there (`openpty`, `script`, Python's `pty`) is the jail's, and the
/// caller's terminals are not in it. Without bubblewrap these are the host's, whose other
/// terminals a command could write into: never granted there.
pub const PRIVATE_TERMINALS: &[&str] = &["/dev/ptmx", "/dev/pts"];

/// The rights a directory on the way to a masked path keeps: listing. Its entries are granted
/// one by one; reading and executing files directly in it would reach the masked path too.
pub const MASK_ANCESTOR: Access = Access::READ_DIR;

/// The write rights a directory on the way to a protected (or masked) path keeps: none. See the
/// crate documentation for why creating entries there cannot be allowed usefully.
pub const PROTECTED_ANCESTOR: Access = Access::NONE;

/// Where the rules are enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    /// By cordon's stage inside bubblewrap, as a second wall. The plan's private directories,
    /// `/dev` and `/proc` are bubblewrap's fresh filesystems there: private directories are
    /// readable and writable (as bubblewrap leaves them), `/dev` and `/proc` readable.
    InsideBubblewrap,
    /// Without bubblewrap: the plan's private directories and `/dev` are the host's, so they are
    /// neither readable nor writable (only [`Options::temp_dirs`] and [`Options::devices`] are).
    Alone,
}

/// What keeps protected paths (inside writable roots) read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtectedPaths {
    /// Landlock: each writable root holding a protected path is granted piecewise. Directories on
    /// the way to a protected path (the workspace root and `.git` for `.git/hooks`) keep no
    /// write right at all: nothing can be created, removed or renamed directly in them.
    Piecewise,
    /// bubblewrap's read-only binds (and the launcher's pins) hold them; Landlock grants the
    /// writable roots whole. Only valid with [`Placement::InsideBubblewrap`].
    LeftToMounts,
}

/// What the rules need beyond the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Where the rules are enforced.
    pub placement: Placement,
    /// What keeps protected paths read-only.
    pub protected: ProtectedPaths,
    /// Directories readable and writable in addition to the plan's writable roots: the jail's
    /// private temporary directory; must exist.
    pub temp_dirs: Vec<PathBuf>,
    /// Character devices readable, writable and `ioctl`-able (never created or removed).
    pub devices: Vec<PathBuf>,
    /// Files that must stay executable wherever they lie (cordon's stage binary, which the jail
    /// executes in place): each gets read and execute on the file alone, and nothing of its
    /// directory. One the rules already let run gets no rule of its own. Must exist.
    pub executables: Vec<PathBuf>,
}

impl Options {
    /// Rules for the `landlock` backend (no bubblewrap): protected paths granted piecewise,
    /// `temp_dir` (which the launcher created, private to this run) readable and writable.
    pub fn alone(temp_dir: impl Into<PathBuf>) -> Options {
        Options {
            placement: Placement::Alone,
            protected: ProtectedPaths::Piecewise,
            temp_dirs: vec![temp_dir.into()],
            devices: default_devices(),
            executables: Vec::new(),
        }
    }

    /// These options, with `file` executable (and readable, for the loader) however the plan
    /// treats its directory: the stage binary under a hidden directory such as `/tmp`.
    pub fn with_executable(mut self, file: impl Into<PathBuf>) -> Options {
        self.executables.push(file.into());
        self
    }

    /// Rules for the stage inside bubblewrap. Protected paths are left to bubblewrap's read-only
    /// binds: granting them piecewise here would also take away what bubblewrap allows — creating
    /// files in the workspace root and in `.git` (so `git add` and `git commit` would fail).
    /// bubblewrap's private `/dev/shm` is writable (POSIX semaphores and shared memory), and its
    /// private terminals usable ([`PRIVATE_TERMINALS`]).
    pub fn inside_bubblewrap() -> Options {
        Options {
            placement: Placement::InsideBubblewrap,
            protected: ProtectedPaths::LeftToMounts,
            temp_dirs: vec![PathBuf::from("/dev/shm")],
            devices: default_devices()
                .into_iter()
                .chain(PRIVATE_TERMINALS.iter().map(PathBuf::from))
                .collect(),
            executables: Vec::new(),
        }
    }
}

fn default_devices() -> Vec<PathBuf> {
    DEFAULT_DEVICES.iter().map(PathBuf::from).collect()
}

/// Rights granted beneath one path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathRule {
    /// Absolute path, without symlinks.
    pub path: PathBuf,
    /// The rights (only the file rights apply when the path is not a directory).
    pub access: Access,
}

/// A Landlock ruleset as plain data: what [`crate::Ruleset::create`] hands to the kernel, and
/// what the launcher sends to the in-jail stage ([`Rules::encode`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rules {
    /// Path rules, sorted by path (component by component), one per path. Every filesystem
    /// right the ABI knows is handled; what no rule grants is denied.
    pub paths: Vec<PathRule>,
    /// Paths that must exist when the ruleset is created (writable roots, temporary
    /// directories): a missing one is an error, any other missing path is skipped.
    pub must_exist: Vec<PathBuf>,
    /// Handle TCP bind and connect with no port allowed.
    pub deny_tcp: bool,
    /// Refuse signals to processes outside the sandbox.
    pub scope_signals: bool,
    /// Refuse connections to abstract UNIX sockets created outside the sandbox.
    pub scope_abstract_unix: bool,
}

impl Rules {
    /// The rules that enforce `plan` at `options.placement`. Directories on the way to a masked
    /// or protected path are listed through `lister`.
    pub fn from_plan(
        plan: &Plan,
        options: &Options,
        lister: &dyn Lister,
    ) -> Result<Rules, LandlockError> {
        let inside = options.placement == Placement::InsideBubblewrap;
        if !inside
            && options.protected == ProtectedPaths::LeftToMounts
            && let Some(p) = plan.protected.first()
        {
            return Err(LandlockError::ProtectedUnheld {
                path: DisplayPath(p.path.clone()).to_string(),
            });
        }

        let masks: Vec<PathBuf> = plan.masks.iter().map(|m| m.target.clone()).collect();
        let read_only: Vec<PathBuf> = plan
            .read_only
            .iter()
            .map(|b| {
                if inside {
                    b.dest.clone()
                } else {
                    b.source.clone()
                }
            })
            .collect();
        // What a write zone must leave out: masks always; protected paths and read-only trees
        // (bound inside a private directory) when Landlock holds them.
        let mut unwritable = masks.clone();
        if options.protected == ProtectedPaths::Piecewise {
            unwritable.extend(plan.protected.iter().map(|p| p.path.clone()));
            unwritable.extend(read_only.iter().cloned());
        }

        let mut g = Grants {
            lister,
            out: BTreeMap::new(),
        };

        match plan.posture {
            Posture::Host => {
                let mut hidden = masks.clone();
                if !inside {
                    hidden.extend(plan.private_dirs.iter().cloned());
                    hidden.push(PathBuf::from("/dev"));
                }
                g.grant(Path::new("/"), Access::READ, MASK_ANCESTOR, &hidden)?;
            }
            Posture::Minimal => {
                g.grant(Path::new("/proc"), Access::READ, MASK_ANCESTOR, &masks)?;
                if inside {
                    g.grant(Path::new("/dev"), Access::READ, MASK_ANCESTOR, &masks)?;
                    for dir in &plan.private_dirs {
                        g.grant(dir, Access::READ, MASK_ANCESTOR, &masks)?;
                    }
                }
            }
        }
        for tree in &read_only {
            g.grant(tree, Access::READ, MASK_ANCESTOR, &masks)?;
        }
        // Inside bubblewrap the private home is bound at the home's path only (a private
        // directory, granted below), not at its own.
        let private_home = plan.private_home().filter(|_| inside);
        let writable: Vec<&PathBuf> = plan
            .writable
            .iter()
            .filter(|r| Some(r.as_path()) != private_home)
            .chain(&options.temp_dirs)
            .collect();
        for root in &writable {
            g.grant(root, Access::READ, MASK_ANCESTOR, &masks)?;
            g.grant(root, Access::WRITE, PROTECTED_ANCESTOR, &unwritable)?;
        }
        if inside {
            // bubblewrap's fresh tmpfs: what the host has beneath it (masks under a home in
            // /tmp, say) is not there, and what the jail binds into it (the workspace, its masks
            // and protected paths) is held by those mounts. Granted whole.
            // Masks are left out of the exclusions for that reason; protected paths and the
            // read-only trees bound into a private directory stay out when Landlock holds them.
            let held: Vec<PathBuf> = if options.protected == ProtectedPaths::Piecewise {
                plan.protected
                    .iter()
                    .map(|p| p.path.clone())
                    .chain(read_only.iter().cloned())
                    .collect()
            } else {
                Vec::new()
            };
            for dir in &plan.private_dirs {
                g.grant(dir, Access::READ | Access::WRITE, PROTECTED_ANCESTOR, &held)?;
            }
        }
        for dev in &options.devices {
            g.grant(dev, Access::DEVICE, Access::NONE, &masks)?;
        }

        // Executables last, once everything else is granted: a rule only where the plan's own
        // rules would not let the file run (so a stage in a vetted tree adds nothing). A file
        // inside a mask gets no rule: masks are never opened for a program.
        let runs = Access::EXECUTE | Access::READ_FILE;
        let mut executables = Vec::new();
        for file in &options.executables {
            if masks.iter().any(|m| file.starts_with(m)) {
                return Err(LandlockError::ExecutableMasked {
                    path: DisplayPath(file.clone()).to_string(),
                });
            }
            let granted = g
                .out
                .iter()
                .filter(|(p, _)| file.starts_with(p))
                .fold(Access::NONE, |acc, (_, a)| acc | *a);
            if granted & runs != runs {
                g.add(file, runs);
                executables.push(file.clone());
            }
        }

        let mut must_exist: Vec<PathBuf> = writable.into_iter().cloned().collect();
        must_exist.extend(executables);
        must_exist.sort();
        must_exist.dedup();
        Ok(Rules {
            paths: g
                .out
                .into_iter()
                .map(|(path, access)| PathRule { path, access })
                .collect(),
            must_exist,
            // Inside bubblewrap a denied network is a namespace of the jail's own, holding only
            // `lo`: its loopback is the jail's, for local test servers, and Landlock can grant
            // TCP only by port, not by address. Alone, the network is the host's: refused.
            deny_tcp: plan.network == Network::Denied && !inside,
            scope_signals: true,
            scope_abstract_unix: true,
        })
    }

    /// The rights these rules give at `path`, for an entry that existed when the ruleset was
    /// created and has not moved since: the union of the rules on `path` and its ancestors, as
    /// Landlock computes it. An entry created later gets only its ancestors' rules.
    pub fn effective(&self, path: &Path) -> Access {
        self.paths
            .iter()
            .filter(|r| path.starts_with(&r.path))
            .fold(Access::NONE, |acc, r| acc | r.access)
    }
}

impl fmt::Display for Rules {
    /// One rule per line (`rights<TAB>path`), then the network and scope settings: the form a
    /// reviewer reads in a snapshot.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rule in &self.paths {
            writeln!(f, "{}\t{}", rule.access, DisplayPath(rule.path.clone()))?;
        }
        for path in &self.must_exist {
            writeln!(f, "must exist\t{}", DisplayPath(path.clone()))?;
        }
        writeln!(
            f,
            "tcp bind/connect: {}",
            if self.deny_tcp { "denied" } else { "allowed" }
        )?;
        writeln!(
            f,
            "signals outside: {}",
            if self.scope_signals {
                "denied"
            } else {
                "allowed"
            }
        )?;
        writeln!(
            f,
            "abstract unix sockets outside: {}",
            if self.scope_abstract_unix {
                "denied"
            } else {
                "allowed"
            }
        )
    }
}

struct Grants<'a> {
    lister: &'a dyn Lister,
    out: BTreeMap<PathBuf, Access>,
}

impl Grants<'_> {
    fn add(&mut self, path: &Path, access: Access) {
        if !access.is_empty() {
            *self.out.entry(path.to_path_buf()).or_default() |= access;
        }
    }

    /// Grants `access` on everything beneath `root` except the `excluded` paths (and what lies
    /// beneath them); a directory on the way to an excluded path gets `ancestor` instead, and
    /// its entries are granted one by one. A symlink entry gets nothing: opening it reaches its
    /// target, whose own place decides.
    fn grant(
        &mut self,
        root: &Path,
        access: Access,
        ancestor: Access,
        excluded: &[PathBuf],
    ) -> Result<(), LandlockError> {
        let mut sorted: Vec<&Path> = excluded.iter().map(PathBuf::as_path).collect();
        sorted.sort_unstable();
        sorted.dedup();
        self.grant_within(root, access, ancestor, &Excluded(sorted))
    }

    fn grant_within(
        &mut self,
        root: &Path,
        access: Access,
        ancestor: Access,
        excluded: &Excluded<'_>,
    ) -> Result<(), LandlockError> {
        if excluded.covers(root) {
            return Ok(());
        }
        if !excluded.any_beneath(root) {
            self.add(root, access);
            return Ok(());
        }
        self.add(root, ancestor);
        let entries = self
            .lister
            .list(root)
            .map_err(|source| LandlockError::List {
                dir: DisplayPath(root.to_path_buf()).to_string(),
                source,
            })?;
        for entry in entries {
            let mut parts = Path::new(&entry.name).components();
            let single = matches!(
                (parts.next(), parts.next()),
                (Some(Component::Normal(n)), None) if n == entry.name
            );
            if !single {
                return Err(LandlockError::BadEntry {
                    dir: DisplayPath(root.to_path_buf()).to_string(),
                    name: entry.name.to_string_lossy().into_owned(),
                });
            }
            if entry.kind == EntryKind::Symlink {
                continue;
            }
            self.grant_within(&root.join(&entry.name), access, ancestor, excluded)?;
        }
        Ok(())
    }
}

/// Excluded paths, sorted by component: a directory's entries are each looked up in it, so a
/// lookup is a binary search, not a pass over every path (a directory of thousands of masks
/// would otherwise cost entries × masks).
struct Excluded<'a>(Vec<&'a Path>);

impl Excluded<'_> {
    /// Whether `path` is excluded or lies beneath an excluded path.
    fn covers(&self, path: &Path) -> bool {
        path.ancestors().any(|a| self.0.binary_search(&a).is_ok())
    }

    /// Whether an excluded path is `path` or lies beneath it. Those sort right after `path`
    /// (a path sorts before every path it is a prefix of, and they are contiguous).
    fn any_beneath(&self, path: &Path) -> bool {
        let first = self.0.partition_point(|e| *e < path);
        self.0.get(first).is_some_and(|e| e.starts_with(path))
    }
}

#[cfg(test)]
mod tests;
