//! Landlock's filesystem access rights as plain data, and which ABI version brought each one.
//!
//! The bit values are the kernel's (`include/uapi/linux/landlock.h`), so an [`Access`] goes to
//! the kernel unchanged and an encoded rule set means the same thing on every machine.

use std::fmt;
use std::ops::{BitAnd, BitOr, BitOrAssign, Not};

/// A set of Landlock filesystem access rights (`LANDLOCK_ACCESS_FS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Access(u64);

impl Access {
    /// Execute a file.
    pub const EXECUTE: Access = Access(1 << 0);
    /// Open a file for writing.
    pub const WRITE_FILE: Access = Access(1 << 1);
    /// Open a file for reading.
    pub const READ_FILE: Access = Access(1 << 2);
    /// Open a directory or list its content.
    pub const READ_DIR: Access = Access(1 << 3);
    /// Remove an empty directory or rename one.
    pub const REMOVE_DIR: Access = Access(1 << 4);
    /// Unlink or rename a file.
    pub const REMOVE_FILE: Access = Access(1 << 5);
    /// Create (or rename or link) a character device.
    pub const MAKE_CHAR: Access = Access(1 << 6);
    /// Create (or rename) a directory.
    pub const MAKE_DIR: Access = Access(1 << 7);
    /// Create (or rename or link) a regular file.
    pub const MAKE_REG: Access = Access(1 << 8);
    /// Create (or rename or link) a UNIX domain socket.
    pub const MAKE_SOCK: Access = Access(1 << 9);
    /// Create (or rename or link) a named pipe.
    pub const MAKE_FIFO: Access = Access(1 << 10);
    /// Create (or rename or link) a block device.
    pub const MAKE_BLOCK: Access = Access(1 << 11);
    /// Create (or rename or link) a symbolic link.
    pub const MAKE_SYM: Access = Access(1 << 12);
    /// Link or rename a file from or to a different directory (ABI 2).
    pub const REFER: Access = Access(1 << 13);
    /// Truncate a file (ABI 3).
    pub const TRUNCATE: Access = Access(1 << 14);
    /// `ioctl` on a character or block device (ABI 5).
    pub const IOCTL_DEV: Access = Access(1 << 15);

    /// No right.
    pub const NONE: Access = Access(0);

    /// Every right this crate knows (ABI 7 has no filesystem right beyond these).
    pub const ALL: Access = Access((1 << 16) - 1);

    /// The rights that apply to a file that is not a directory (the kernel refuses any other
    /// right in a rule on such a file).
    pub const FILE_ONLY: Access = Access(
        Access::EXECUTE.0
            | Access::WRITE_FILE.0
            | Access::READ_FILE.0
            | Access::TRUNCATE.0
            | Access::IOCTL_DEV.0,
    );

    /// Reading: open files for reading, list directories, execute.
    pub const READ: Access = Access(Access::EXECUTE.0 | Access::READ_FILE.0 | Access::READ_DIR.0);

    /// Writing in a writable tree: write and truncate files; create, remove and move entries.
    ///
    /// Creating character and block devices is left out on purpose: a root process could make a
    /// device node of the disk holding the masked files in its workspace and read it raw.
    pub const WRITE: Access = Access(
        Access::WRITE_FILE.0
            | Access::REMOVE_DIR.0
            | Access::REMOVE_FILE.0
            | Access::MAKE_DIR.0
            | Access::MAKE_REG.0
            | Access::MAKE_SOCK.0
            | Access::MAKE_FIFO.0
            | Access::MAKE_SYM.0
            | Access::REFER.0
            | Access::TRUNCATE.0,
    );

    /// A character device such as `/dev/null`: read, write (never create or remove), `ioctl`
    /// (terminal programs configure `/dev/tty`).
    pub const DEVICE: Access =
        Access(Access::READ_FILE.0 | Access::WRITE_FILE.0 | Access::IOCTL_DEV.0);

    /// The rights with their kernel names, lowest bit first.
    pub const NAMED: [(Access, &'static str); 16] = [
        (Access::EXECUTE, "execute"),
        (Access::WRITE_FILE, "write_file"),
        (Access::READ_FILE, "read_file"),
        (Access::READ_DIR, "read_dir"),
        (Access::REMOVE_DIR, "remove_dir"),
        (Access::REMOVE_FILE, "remove_file"),
        (Access::MAKE_CHAR, "make_char"),
        (Access::MAKE_DIR, "make_dir"),
        (Access::MAKE_REG, "make_reg"),
        (Access::MAKE_SOCK, "make_sock"),
        (Access::MAKE_FIFO, "make_fifo"),
        (Access::MAKE_BLOCK, "make_block"),
        (Access::MAKE_SYM, "make_sym"),
        (Access::REFER, "refer"),
        (Access::TRUNCATE, "truncate"),
        (Access::IOCTL_DEV, "ioctl_dev"),
    ];

    /// The set with exactly these kernel bits, or `None` when a bit is not a right this crate
    /// knows.
    pub fn from_bits(bits: u64) -> Option<Access> {
        (bits & !Access::ALL.0 == 0).then_some(Access(bits))
    }

    /// The kernel bits.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// True when no right is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True when every right of `other` is in `self`.
    pub fn contains(self, other: Access) -> bool {
        self.0 & other.0 == other.0
    }

    /// True when `self` and `other` share a right.
    pub fn intersects(self, other: Access) -> bool {
        self.0 & other.0 != 0
    }
}

impl BitOr for Access {
    type Output = Access;
    fn bitor(self, rhs: Access) -> Access {
        Access(self.0 | rhs.0)
    }
}

impl BitOrAssign for Access {
    fn bitor_assign(&mut self, rhs: Access) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for Access {
    type Output = Access;
    fn bitand(self, rhs: Access) -> Access {
        Access(self.0 & rhs.0)
    }
}

impl Not for Access {
    type Output = Access;
    fn not(self) -> Access {
        Access(!self.0 & Access::ALL.0)
    }
}

impl fmt::Display for Access {
    /// `read_file|read_dir`, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        let mut first = true;
        for (right, name) in Access::NAMED {
            if self.contains(right) {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// A Landlock ABI version, as `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`
/// returns it. Versions above 7 are treated as 7: they support everything this crate asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Abi(u32);

impl Abi {
    /// Linux 5.13: the base filesystem rights.
    pub const V1: Abi = Abi(1);
    /// Linux 5.19: `REFER` (moving files between directories).
    pub const V2: Abi = Abi(2);
    /// Linux 6.2: `TRUNCATE`.
    pub const V3: Abi = Abi(3);
    /// Linux 6.7: TCP bind and connect.
    pub const V4: Abi = Abi(4);
    /// Linux 6.10: `IOCTL_DEV`.
    pub const V5: Abi = Abi(5);
    /// Linux 6.12: scopes (signals, abstract UNIX sockets).
    pub const V6: Abi = Abi(6);
    /// Linux 6.15: audit logging flags (no new right).
    pub const V7: Abi = Abi(7);

    /// The ABI with this version number (0 is below every Landlock ABI and supports nothing).
    pub fn new(version: u32) -> Abi {
        Abi(version)
    }

    /// The version number.
    pub fn version(self) -> u32 {
        self.0
    }

    /// The filesystem rights this ABI can handle.
    pub fn fs_rights(self) -> Access {
        let base = Access((1 << 13) - 1);
        match self.0 {
            0 => Access::NONE,
            1 => base,
            2 => base | Access::REFER,
            3 | 4 => base | Access::REFER | Access::TRUNCATE,
            _ => Access::ALL,
        }
    }

    /// Whether TCP bind and connect can be handled.
    pub fn supports_tcp(self) -> bool {
        self.0 >= 4
    }

    /// Whether signals and abstract UNIX sockets can be scoped.
    pub fn supports_scopes(self) -> bool {
        self.0 >= 6
    }
}

impl fmt::Display for Abi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ABI {}", self.0)
    }
}

/// A Landlock feature an older ABI lacks, and what is then left unrestricted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Feature {
    /// `REFER` (ABI 2).
    Refer,
    /// `TRUNCATE` (ABI 3).
    Truncate,
    /// TCP bind and connect (ABI 4).
    Tcp,
    /// `IOCTL_DEV` (ABI 5).
    IoctlDev,
    /// Signal scoping (ABI 6).
    ScopeSignal,
    /// Abstract UNIX socket scoping (ABI 6).
    ScopeAbstractUnix,
}

impl Feature {
    /// The first ABI that has it.
    pub fn since(self) -> Abi {
        match self {
            Feature::Refer => Abi::V2,
            Feature::Truncate => Abi::V3,
            Feature::Tcp => Abi::V4,
            Feature::IoctlDev => Abi::V5,
            Feature::ScopeSignal | Feature::ScopeAbstractUnix => Abi::V6,
        }
    }

    /// What the ruleset cannot restrict without it.
    pub fn consequence(self) -> &'static str {
        match self {
            Feature::Refer => {
                "moving or linking a file between directories is always refused, even inside writable roots"
            }
            Feature::Truncate => {
                "truncate(2) and open(O_TRUNC) are not restricted: a file outside the writable set that the user may write can be emptied"
            }
            Feature::Tcp => "TCP bind and connect are not restricted",
            Feature::IoctlDev => "ioctl on devices is not restricted",
            Feature::ScopeSignal => "signals to processes outside the sandbox are not restricted",
            Feature::ScopeAbstractUnix => {
                "connecting to abstract UNIX sockets outside the sandbox is not restricted"
            }
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Feature::Refer => "refer",
            Feature::Truncate => "truncate",
            Feature::Tcp => "tcp bind/connect",
            Feature::IoctlDev => "ioctl_dev",
            Feature::ScopeSignal => "signal scope",
            Feature::ScopeAbstractUnix => "abstract unix socket scope",
        };
        write!(f, "{name} (needs {}): {}", self.since(), self.consequence())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_rights_cover_all_bits_once() {
        let mut seen = Access::NONE;
        for (right, _) in Access::NAMED {
            assert_eq!(right.bits().count_ones(), 1);
            assert!(!seen.intersects(right), "{right} named twice");
            seen |= right;
        }
        assert_eq!(seen, Access::ALL);
    }

    #[test]
    fn abi_table_grows_monotonically_and_matches_the_kernel_history() {
        assert_eq!(Abi::new(0).fs_rights(), Access::NONE);
        assert_eq!(Abi::V1.fs_rights().bits(), 0x1fff);
        assert!(!Abi::V1.fs_rights().contains(Access::REFER));
        assert!(Abi::V2.fs_rights().contains(Access::REFER));
        assert!(!Abi::V2.fs_rights().contains(Access::TRUNCATE));
        assert!(Abi::V3.fs_rights().contains(Access::TRUNCATE));
        assert!(!Abi::V4.fs_rights().contains(Access::IOCTL_DEV));
        assert!(Abi::V5.fs_rights().contains(Access::IOCTL_DEV));
        assert_eq!(Abi::new(42).fs_rights(), Access::ALL);
        for v in 0..8 {
            assert!(
                Abi::new(v)
                    .fs_rights()
                    .contains(Abi::new(v.saturating_sub(1)).fs_rights())
            );
        }
        assert!(!Abi::V3.supports_tcp() && Abi::V4.supports_tcp());
        assert!(!Abi::V5.supports_scopes() && Abi::V6.supports_scopes());
    }

    #[test]
    fn groups_respect_the_file_only_rule_and_leave_device_creation_out() {
        assert!(Access::FILE_ONLY.contains(Access::DEVICE));
        assert!(!Access::WRITE.intersects(Access::MAKE_CHAR | Access::MAKE_BLOCK));
        assert_eq!(
            (Access::READ | Access::WRITE) & Access::FILE_ONLY,
            Access::EXECUTE | Access::READ_FILE | Access::WRITE_FILE | Access::TRUNCATE
        );
        assert_eq!(
            (Access::READ_FILE | Access::TRUNCATE).to_string(),
            "read_file|truncate"
        );
        assert_eq!(Access::NONE.to_string(), "none");
        assert_eq!(Access::from_bits(1 << 16), None);
        assert_eq!(!Access::ALL, Access::NONE);
    }
}
