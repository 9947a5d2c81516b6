//! The Landlock backend's supervisor (`cordon-supervisor`): the calls that change a name or an
//! inode's metadata go to it, which judges the path it resolves itself and performs the call.
//!
//! Landlock grants the writable roots whole when a supervisor runs, so every call that can
//! create, remove, rename, link or open for writing a name, or change a mode, owner, time or
//! extended attribute, must reach the supervisor: a call missing here would bypass the
//! protected paths. `open` and `openat` reach it only with a flag that writes (an access mode
//! other than read-only, `O_CREAT`, `O_TRUNC`); `openat2`, whose flags lie behind a pointer,
//! already fails with `ENOSYS` in every filter, and libc falls back to `openat`.

use super::{Action, Cmp, CmpOp, Condition, Denial};

const WHY: &str = "supervised: it changes a name or an inode's metadata, which Landlock alone \
     cannot refuse below a writable root (protected paths) or outside one (modes, owners, \
     times, extended attributes); the supervisor resolves the path itself, judges it and \
     performs the call";

const fn notify(syscall: &'static str) -> Denial {
    Denial {
        syscall,
        condition: Condition::Always,
        action: Action::Notify,
        why: WHY,
    }
}

const fn open_writing(syscall: &'static str, cmp: &'static [Cmp]) -> Denial {
    Denial {
        syscall,
        condition: Condition::All(cmp),
        action: Action::Notify,
        why: WHY,
    }
}

const O_ACCMODE: u32 = 0o3;
const O_CREAT: u32 = 0o100;
const O_TRUNC: u32 = 0o1000;

const fn masked(arg: u8, mask: u32, value: u32, name: &'static str) -> [Cmp; 1] {
    [Cmp {
        arg,
        op: CmpOp::MaskedEq(mask),
        value,
        name,
    }]
}

const OPEN_WRONLY: [Cmp; 1] = masked(1, O_ACCMODE, 1, "O_WRONLY");
const OPEN_RDWR: [Cmp; 1] = masked(1, O_ACCMODE, 2, "O_RDWR");
const OPEN_ACC3: [Cmp; 1] = masked(1, O_ACCMODE, 3, "O_ACCMODE");
const OPEN_CREAT: [Cmp; 1] = masked(1, O_CREAT, O_CREAT, "O_CREAT");
const OPEN_TRUNC: [Cmp; 1] = masked(1, O_TRUNC, O_TRUNC, "O_TRUNC");
const OPENAT_WRONLY: [Cmp; 1] = masked(2, O_ACCMODE, 1, "O_WRONLY");
const OPENAT_RDWR: [Cmp; 1] = masked(2, O_ACCMODE, 2, "O_RDWR");
const OPENAT_ACC3: [Cmp; 1] = masked(2, O_ACCMODE, 3, "O_ACCMODE");
const OPENAT_CREAT: [Cmp; 1] = masked(2, O_CREAT, O_CREAT, "O_CREAT");
const OPENAT_TRUNC: [Cmp; 1] = masked(2, O_TRUNC, O_TRUNC, "O_TRUNC");

/// The calls the supervisor performs (x86_64 names; a call an architecture lacks is listed as
/// absent there).
pub(super) const SUPERVISED: [Denial; 46] = [
    open_writing("open", &OPEN_WRONLY),
    open_writing("open", &OPEN_RDWR),
    open_writing("open", &OPEN_ACC3),
    open_writing("open", &OPEN_CREAT),
    open_writing("open", &OPEN_TRUNC),
    open_writing("openat", &OPENAT_WRONLY),
    open_writing("openat", &OPENAT_RDWR),
    open_writing("openat", &OPENAT_ACC3),
    open_writing("openat", &OPENAT_CREAT),
    open_writing("openat", &OPENAT_TRUNC),
    notify("creat"),
    notify("mkdir"),
    notify("mkdirat"),
    notify("mknod"),
    notify("mknodat"),
    notify("rmdir"),
    notify("unlink"),
    notify("unlinkat"),
    notify("rename"),
    notify("renameat"),
    notify("renameat2"),
    notify("link"),
    notify("linkat"),
    notify("symlink"),
    notify("symlinkat"),
    notify("truncate"),
    notify("chmod"),
    notify("fchmod"),
    notify("fchmodat"),
    notify("fchmodat2"),
    notify("chown"),
    notify("fchown"),
    notify("lchown"),
    notify("fchownat"),
    notify("utime"),
    notify("utimes"),
    notify("futimesat"),
    notify("utimensat"),
    notify("setxattr"),
    notify("lsetxattr"),
    notify("fsetxattr"),
    notify("removexattr"),
    notify("lremovexattr"),
    notify("fremovexattr"),
    notify("setxattrat"),
    notify("removexattrat"),
];

const NET_WHY: &str = "supervised (network denied, no network namespace): the call names an \
     address, which the supervisor reads once, judges (only sockets the jail itself bound are \
     reachable; a wildcard bind becomes loopback) and uses on the caller's socket itself";

const fn notify_net(syscall: &'static str) -> Denial {
    Denial {
        syscall,
        condition: Condition::Always,
        action: Action::Notify,
        why: NET_WHY,
    }
}

/// The calls that name an address, when the network is denied and no namespace holds the
/// jail: `sendto` only with a destination (without one it goes to the connected peer, which
/// `connect` judged); `sendmsg` always, since its destination lies behind a pointer.
pub(super) const SUPERVISED_NET: [Denial; 6] = [
    notify_net("bind"),
    notify_net("connect"),
    notify_net("listen"),
    Denial {
        syscall: "sendto",
        condition: Condition::PointerSet {
            arg: 4,
            name: "dest_addr",
        },
        action: Action::Notify,
        why: NET_WHY,
    },
    notify_net("sendmsg"),
    notify_net("sendmmsg"),
];
