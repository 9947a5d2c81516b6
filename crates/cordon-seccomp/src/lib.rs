//! The seccomp filter cordon puts under every jailed command on Linux.
//!
//! bubblewrap builds the sandbox's namespaces and mounts; this filter takes away the system calls
//! that could undo them or reach past them: mounting (old and new API), making or entering
//! namespaces, reading other processes' memory, loading code into the kernel, keyrings, file
//! handles, `userfaultfd`, `io_uring`, pushing keystrokes into the terminal (`TIOCSTI`,
//! `TIOCLINUX`) and, when the network is denied, creating sockets (in a network namespace of the
//! jail's own, all but IPv4, IPv6, route netlink and Unix sockets, which reach only that
//! namespace and the socket files of the jail's view). Everything else is allowed: this is a
//! deny list on top of bubblewrap, not an allow list.
//!
//! The filter exists twice, and the two cannot disagree because one is made from the other:
//!
//! * [`rule_table`] gives it as plain data ([`Rule`]s a reviewer can read, a snapshot test
//!   records, and `cordon doctor` can print);
//! * [`compile`] turns that table into the classic-BPF program, for x86_64 or aarch64 on any
//!   host, as the raw `struct sock_filter` array that `bwrap --seccomp FD` reads.
//!
//! A foreign system-call ABI is refused before any rule is looked at: the architecture check
//! kills a process calling through another ABI (i386, arm32), and on x86_64 an extra guard kills
//! x32 calls, which carry the x86_64 architecture value and would otherwise slip past every rule.
//! `clone3` fails with `ENOSYS` so that libc falls back to `clone`, whose flags the filter can see.
//!
//! [`FILTER_VERSION`] changes whenever the meaning of the filter does; it is part of the policy
//! hash and of `cordon doctor`'s report.
//!
//! # What this crate is not
//!
//! It does not install filters: it spawns nothing, writes no files and makes no system calls.
//! bubblewrap loads the bytes into the sandboxed process; the launcher decides when. It is also
//! not a sandbox on its own: without bubblewrap's namespaces an allow-by-default filter leaves
//! the filesystem and the network as they are.
//!
//! # Example
//!
//! ```
//! use cordon_seccomp::{Action, Arch, FILTER_VERSION, FilterSpec, compile, rule_table};
//!
//! let spec = FilterSpec {
//!     arch: Arch::X86_64,
//!     deny_sockets: true,
//!     own_network_namespace: false,
//!     keep_process_group: false,
//!     sessions_reaped: false,
//!     supervised: false,
//! };
//!
//! // What bubblewrap reads from the descriptor given to `--seccomp`.
//! let filter = compile(&spec)?;
//! assert_eq!(filter.bytes().len(), filter.instruction_count() * 8);
//! assert_eq!(filter.version(), FILTER_VERSION);
//!
//! // The same filter, as data.
//! let table = rule_table(&spec);
//! let mount = table.iter().find(|rule| rule.syscall == "mount").expect("mount is filtered");
//! assert_eq!((mount.number, mount.action), (Some(165), Action::Eperm));
//! # Ok::<(), cordon_seccomp::SeccompError>(())
//! ```

mod arch;
mod bpf;
mod compile;
mod error;
mod rules;
mod syscalls;

use serde::Serialize;

pub use arch::Arch;
pub use compile::{CompiledFilter, compile};
pub use error::SeccompError;
pub use rules::{Action, Cmp, CmpOp, Condition, Rule, rule_table};

/// The version of the filter's meaning. Bump it whenever a rule is added, removed or changed, so
/// that policy hashes and `cordon doctor` tell old filters from new ones.
pub const FILTER_VERSION: u32 = 8;

/// What to build a filter for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct FilterSpec {
    /// The architecture of the processes the filter will run in.
    pub arch: Arch,
    /// The network is denied: refuse `socket(2)` for every domain (but see
    /// [`FilterSpec::own_network_namespace`]).
    pub deny_sockets: bool,
    /// The jail has a network namespace of its own, holding only `lo` (bubblewrap's
    /// `--unshare-net`): with `deny_sockets`, IPv4 and IPv6 stream and datagram sockets, route
    /// netlink and Unix sockets stay allowed, since they reach only that namespace (its loopback,
    /// its abstract names) and the socket files of the jail's view, where the host's listening
    /// ones are masked. Never set it for a jail that
    /// shares the host's network namespace: its loopback is the host's.
    pub own_network_namespace: bool,
    /// No namespace holds the jail's processes (the Landlock backend): refuse `setsid(2)` and
    /// `setpgid(2)`, so every process the command starts stays in the process group the launcher
    /// kills when the run ends, and System V IPC and POSIX message queues, which an IPC
    /// namespace would have kept apart from the host's.
    pub keep_process_group: bool,
    /// With [`FilterSpec::keep_process_group`]: a process of the jail that the command cannot
    /// signal (the Landlock backend's stage, whose Landlock domain scopes the command's signals
    /// away from it) ends every process of the jail when the run ends, whatever its process
    /// group or session. `setsid(2)` and `setpgid(2)` are then allowed; the rest of what
    /// `keep_process_group` refuses stays refused.
    pub sessions_reaped: bool,
    /// A supervisor listens on the filter (the Landlock backend, `cordon-supervisor`): the
    /// calls that change a name or metadata go to it ([`Action::Notify`]). The filter must then
    /// be installed with `SECCOMP_FILTER_FLAG_NEW_LISTENER` and the listener handed to it.
    pub supervised: bool,
}

impl FilterSpec {
    /// A spec for the host's architecture.
    ///
    /// # Errors
    ///
    /// [`SeccompError::UnsupportedHostArch`] when the host is not one [`Arch`] describes.
    pub fn for_host(deny_sockets: bool) -> Result<FilterSpec, SeccompError> {
        Ok(FilterSpec {
            arch: Arch::host()?,
            deny_sockets,
            own_network_namespace: false,
            keep_process_group: false,
            sessions_reaped: false,
            supervised: false,
        })
    }

    /// The same spec for a jail in a network namespace of its own (see
    /// [`FilterSpec::own_network_namespace`]).
    pub fn with_own_network_namespace(self) -> FilterSpec {
        FilterSpec {
            own_network_namespace: true,
            ..self
        }
    }

    /// The same spec with a supervisor listening (see [`FilterSpec::supervised`]).
    pub fn with_supervisor(self) -> FilterSpec {
        FilterSpec {
            supervised: true,
            ..self
        }
    }

    /// The same spec with the jail's processes ended by one of its own whatever their group
    /// (see [`FilterSpec::sessions_reaped`]).
    pub fn with_sessions_reaped(self) -> FilterSpec {
        FilterSpec {
            sessions_reaped: true,
            ..self
        }
    }

    /// The same spec for a jail without a PID namespace (see [`FilterSpec::keep_process_group`]).
    pub fn without_pid_namespace(self) -> FilterSpec {
        FilterSpec {
            keep_process_group: true,
            own_network_namespace: false,
            ..self
        }
    }
}
