//! [`Rules`] handed to the kernel: a ruleset descriptor, and the call that applies it.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cordon_policy::DisplayPath;
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

use crate::access::{Abi, Access, Feature};
use crate::error::LandlockError;
use crate::rules::Rules;
use crate::sys::{self, RestrictError, RulesetAttr};

impl Abi {
    /// The running kernel's Landlock ABI. Fails with [`LandlockError::Unsupported`] or
    /// [`LandlockError::Disabled`] when Landlock cannot be used at all.
    pub fn detect() -> Result<Abi, LandlockError> {
        match sys::abi_version() {
            Ok(v) => Ok(Abi::new(v)),
            Err(libc::ENOSYS) => Err(LandlockError::Unsupported),
            Err(libc::EOPNOTSUPP) => Err(LandlockError::Disabled),
            Err(errno) => Err(LandlockError::AbiQuery {
                source: io::Error::from_raw_os_error(errno),
            }),
        }
    }
}

/// Why a rule's path got no rule in the ruleset. Skipping only ever takes access away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// Nothing is there (or a component is not a directory).
    Missing,
    /// A component of the path is a symbolic link: the rule would land on its target.
    Symlink,
    /// Opening the path with `O_PATH` failed with this errno (for example `EACCES` on a
    /// directory the user cannot search): the sandboxed process cannot reach it either.
    Unopenable(i32),
    /// The path is not a directory and the rule holds only directory rights.
    NoRightApplies,
}

/// A rule left out of the ruleset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRule {
    /// The rule's path.
    pub path: PathBuf,
    /// Why.
    pub reason: SkipReason,
}

/// What [`Ruleset::create`] made of the rules on this kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The ABI the ruleset was built for.
    pub abi: Abi,
    /// The filesystem rights handled (denied unless a rule grants them).
    pub handled: Access,
    /// TCP bind and connect are denied.
    pub tcp_denied: bool,
    /// Signals to processes outside the sandbox are refused.
    pub signals_scoped: bool,
    /// Connections to abstract UNIX sockets outside the sandbox are refused.
    pub abstract_unix_scoped: bool,
    /// Features the rules asked for (or that the full model relies on) and this ABI lacks.
    pub dropped: Vec<Feature>,
    /// How many path rules were added.
    pub rules_added: usize,
    /// Rules left out, with the reason.
    pub skipped: Vec<SkippedRule>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Landlock {}: {} path rules ({} skipped); tcp bind/connect {}; signals outside {}; abstract unix sockets outside {}",
            self.abi,
            self.rules_added,
            self.skipped.len(),
            if self.tcp_denied { "denied" } else { "allowed" },
            if self.signals_scoped {
                "refused"
            } else {
                "allowed"
            },
            if self.abstract_unix_scoped {
                "refused"
            } else {
                "allowed"
            },
        )?;
        if self.dropped.is_empty() {
            f.write_str("; nothing dropped")
        } else {
            f.write_str("; dropped: ")?;
            for (i, d) in self.dropped.iter().enumerate() {
                if i > 0 {
                    f.write_str("; ")?;
                }
                write!(f, "{d}")?;
            }
            Ok(())
        }
    }
}

/// A Landlock ruleset descriptor, ready to be applied with [`Ruleset::restrict_self`].
#[derive(Debug)]
pub struct Ruleset {
    fd: OwnedFd,
}

impl Ruleset {
    /// Creates the ruleset for `abi`: every filesystem right `abi` knows is handled; each rule's
    /// path is opened (`O_PATH|O_CLOEXEC`, no symlink in any component) and granted its rights
    /// (only the file rights for a path that is not a directory). A path that cannot be opened is
    /// skipped and listed in the report, except a [`Rules::must_exist`] path, which is an error.
    pub fn create(rules: &Rules, abi: Abi) -> Result<(Ruleset, Report), LandlockError> {
        let handled = Access::ALL & abi.fs_rights();
        let mut dropped = Vec::new();
        for (feature, right) in [
            (Feature::Refer, Access::REFER),
            (Feature::Truncate, Access::TRUNCATE),
            (Feature::IoctlDev, Access::IOCTL_DEV),
        ] {
            if !handled.contains(right) {
                dropped.push(feature);
            }
        }
        let tcp_denied = rules.deny_tcp && abi.supports_tcp();
        if rules.deny_tcp && !tcp_denied {
            dropped.push(Feature::Tcp);
        }
        let signals_scoped = rules.scope_signals && abi.supports_scopes();
        if rules.scope_signals && !signals_scoped {
            dropped.push(Feature::ScopeSignal);
        }
        let abstract_unix_scoped = rules.scope_abstract_unix && abi.supports_scopes();
        if rules.scope_abstract_unix && !abstract_unix_scoped {
            dropped.push(Feature::ScopeAbstractUnix);
        }

        let mut attr = RulesetAttr {
            handled_access_fs: handled.bits(),
            ..RulesetAttr::default()
        };
        if tcp_denied {
            attr.handled_access_net = sys::NET_BIND_TCP | sys::NET_CONNECT_TCP;
        }
        if signals_scoped {
            attr.scoped |= sys::SCOPE_SIGNAL;
        }
        if abstract_unix_scoped {
            attr.scoped |= sys::SCOPE_ABSTRACT_UNIX_SOCKET;
        }
        let fd = sys::create_ruleset(&attr).map_err(|source| LandlockError::CreateRuleset {
            fs: handled,
            source,
        })?;
        let ruleset = Ruleset { fd };

        // Whether `openat2` answers: asked once, not once per path (a seccomp filter that
        // refuses it answers ENOSYS every time).
        let mut openat2 = true;
        for path in &rules.must_exist {
            check_path(path)?;
            open_path(path, &mut openat2).map_err(|source| LandlockError::RequiredUnavailable {
                path: shown(path),
                source,
            })?;
        }

        let mut report = Report {
            abi,
            handled,
            tcp_denied,
            signals_scoped,
            abstract_unix_scoped,
            dropped,
            rules_added: 0,
            skipped: Vec::new(),
        };
        for rule in &rules.paths {
            check_path(&rule.path)?;
            let skip = |reason| SkippedRule {
                path: rule.path.clone(),
                reason,
            };
            let parent = match open_path(&rule.path, &mut openat2) {
                Ok(fd) => fd,
                Err(err) => {
                    let reason = match err.raw_os_error() {
                        Some(libc::ENOENT | libc::ENOTDIR) => SkipReason::Missing,
                        Some(libc::ELOOP) => SkipReason::Symlink,
                        errno => SkipReason::Unopenable(errno.unwrap_or(0)),
                    };
                    report.skipped.push(skip(reason));
                    continue;
                }
            };
            let stat = rustix::fs::fstat(&parent).map_err(|e| LandlockError::Stat {
                path: shown(&rule.path),
                source: e.into(),
            })?;
            let file_type = FileType::from_raw_mode(stat.st_mode);
            if file_type == FileType::Symlink {
                report.skipped.push(skip(SkipReason::Symlink));
                continue;
            }
            let mut access = rule.access & handled;
            if file_type != FileType::Directory {
                access = access & Access::FILE_ONLY;
            }
            if access.is_empty() {
                report.skipped.push(skip(SkipReason::NoRightApplies));
                continue;
            }
            sys::add_path_rule(ruleset.fd.as_fd(), access.bits(), parent.as_fd()).map_err(
                |source| LandlockError::AddRule {
                    path: shown(&rule.path),
                    access,
                    source,
                },
            )?;
            report.rules_added += 1;
        }
        Ok((ruleset, report))
    }

    /// Applies the ruleset to the calling thread and everything it later starts or executes:
    /// A ruleset that handles no access and only scopes signals: applied inside a domain, it
    /// makes a nested one whose processes can no longer signal (or trace) the processes of the
    /// outer domain, while those can still signal them. `abi` must support scopes (ABI 6).
    pub fn signals_only(abi: Abi) -> Result<Ruleset, LandlockError> {
        if !abi.supports_scopes() {
            return Err(LandlockError::CreateRuleset {
                fs: Access::NONE,
                source: io::Error::from_raw_os_error(libc::EOPNOTSUPP),
            });
        }
        let attr = RulesetAttr {
            scoped: sys::SCOPE_SIGNAL,
            ..RulesetAttr::default()
        };
        let fd = sys::create_ruleset(&attr).map_err(|source| LandlockError::CreateRuleset {
            fs: Access::NONE,
            source,
        })?;
        Ok(Ruleset { fd })
    }

    /// `prctl(PR_SET_NO_NEW_PRIVS, 1)`, then `landlock_restrict_self`.
    ///
    /// Async-signal-safe: it makes those two system calls and reads `errno`, nothing else — no
    /// allocation, no lock — so it may run in a `pre_exec` hook between `fork` and `exec`. It
    /// restricts only the calling thread: call it where the process is single-threaded (the
    /// forked child, or the stage before it `exec`s). On an error the thread may be left without
    /// new privileges but unrestricted; the caller must not run the command.
    pub fn restrict_self(&self) -> Result<(), RestrictError> {
        sys::restrict_self(self.fd.as_raw_fd())
    }

    /// The ruleset's descriptor (close-on-exec).
    pub fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for Ruleset {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Ruleset {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

fn shown(path: &Path) -> String {
    DisplayPath(path.to_path_buf()).to_string()
}

fn check_path(path: &Path) -> Result<(), LandlockError> {
    let bytes = path.as_os_str().as_bytes();
    let why = if bytes.first() != Some(&b'/') {
        "it is not absolute"
    } else if bytes.contains(&0) {
        "it holds a NUL byte"
    } else {
        return Ok(());
    };
    Err(LandlockError::BadPath {
        path: shown(path),
        why,
    })
}

/// `O_PATH|O_CLOEXEC`, refusing a symlink in any component (`openat2` with
/// `RESOLVE_NO_SYMLINKS`). Where `openat2` is unavailable (a seccomp filter answering
/// `ENOSYS`), only the last component is checked (`O_NOFOLLOW`); `openat2` is then cleared
/// so the next path goes straight to the fallback.
fn open_path(path: &Path, openat2: &mut bool) -> io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    if *openat2 {
        match rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            flags,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS,
        ) {
            Err(rustix::io::Errno::NOSYS) => *openat2 = false,
            other => return Ok(other?),
        }
    }
    Ok(rustix::fs::openat(
        rustix::fs::CWD,
        path,
        flags | OFlags::NOFOLLOW,
        Mode::empty(),
    )?)
}
