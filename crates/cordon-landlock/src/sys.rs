//! The Landlock system calls: the only module of this crate with `unsafe`.
//!
//! `libc` has the system call numbers but not Landlock's structures, so they are declared here
//! from `include/uapi/linux/landlock.h`.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use libc::{c_long, c_uint};

/// `LANDLOCK_CREATE_RULESET_VERSION`.
const CREATE_RULESET_VERSION: c_uint = 1 << 0;
/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: c_uint = 1;

/// `LANDLOCK_ACCESS_NET_BIND_TCP`.
pub(crate) const NET_BIND_TCP: u64 = 1 << 0;
/// `LANDLOCK_ACCESS_NET_CONNECT_TCP`.
pub(crate) const NET_CONNECT_TCP: u64 = 1 << 1;
/// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`.
pub(crate) const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
/// `LANDLOCK_SCOPE_SIGNAL`.
pub(crate) const SCOPE_SIGNAL: u64 = 1 << 1;

/// `struct landlock_ruleset_attr` (ABI 6 size). Older kernels accept the larger size as long as
/// the fields they do not know are zero.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RulesetAttr {
    pub(crate) handled_access_fs: u64,
    pub(crate) handled_access_net: u64,
    pub(crate) scoped: u64,
}

/// `struct landlock_path_beneath_attr`, packed as the kernel declares it.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Which step of [`crate::Ruleset::restrict_self`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestrictStep {
    /// `prctl(PR_SET_NO_NEW_PRIVS, 1)`.
    NoNewPrivs,
    /// `landlock_restrict_self`.
    RestrictSelf,
}

impl std::fmt::Display for RestrictStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RestrictStep::NoNewPrivs => "prctl(PR_SET_NO_NEW_PRIVS, 1)",
            RestrictStep::RestrictSelf => "landlock_restrict_self",
        })
    }
}

/// A failed [`crate::Ruleset::restrict_self`]: the step and its `errno`. `Copy` and built
/// without allocating, so it can be produced between `fork` and `exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{step} failed with errno {errno}: the process is not restricted and must not run the command"
)]
pub struct RestrictError {
    /// The step.
    pub step: RestrictStep,
    /// The `errno` it left.
    pub errno: i32,
}

fn errno() -> i32 {
    // Reads the thread's errno: no allocation, async-signal-safe.
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The ABI version, or the errno (`ENOSYS`: not built; `EOPNOTSUPP`: disabled).
pub(crate) fn abi_version() -> Result<u32, i32> {
    // SAFETY: with a NULL attribute and size 0 the kernel reads no memory; the flag asks only
    // for the version number.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if ret < 0 {
        return Err(errno());
    }
    u32::try_from(ret).map_err(|_| libc::EINVAL)
}

/// `landlock_create_ruleset(attr)`: a new ruleset descriptor (close-on-exec).
pub(crate) fn create_ruleset(attr: &RulesetAttr) -> io::Result<OwnedFd> {
    // SAFETY: attr points to a live, initialized struct of the size passed; the kernel only
    // reads it during the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0 as c_uint,
        )
    };
    let fd = fd_from(ret)?;
    // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fd_from(ret: c_long) -> io::Result<i32> {
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    i32::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))
}

/// `landlock_add_rule(ruleset, PATH_BENEATH, {allowed, parent})`.
pub(crate) fn add_path_rule(
    ruleset: BorrowedFd<'_>,
    allowed: u64,
    parent: BorrowedFd<'_>,
) -> io::Result<()> {
    let attr = PathBeneathAttr {
        allowed_access: allowed,
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: both descriptors are borrowed and open for the call; attr is a live packed struct
    // the kernel only reads during the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0 as c_uint,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `prctl(PR_SET_NO_NEW_PRIVS, 1)` then `landlock_restrict_self(ruleset, 0)`.
///
/// Async-signal-safe: two system calls and a read of `errno`; no allocation, no lock.
pub(crate) fn restrict_self(ruleset: i32) -> Result<(), RestrictError> {
    // SAFETY: prctl with integer arguments only; it changes this thread's flags.
    let ret = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) };
    if ret != 0 {
        return Err(RestrictError {
            step: RestrictStep::NoNewPrivs,
            errno: errno(),
        });
    }
    // SAFETY: integer arguments only; the kernel checks that the descriptor is a ruleset.
    let ret = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0 as c_uint) };
    if ret != 0 {
        return Err(RestrictError {
            step: RestrictStep::RestrictSelf,
            errno: errno(),
        });
    }
    Ok(())
}
