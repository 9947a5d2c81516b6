//! cordon's supervisor: where no namespace can be made (a container, a CI runner, a
//! distribution that refuses user namespaces), the calls Landlock cannot judge finely enough
//! are handed to this process by seccomp user notification, and performed here.
//!
//! The Landlock backend grants the writable roots whole, so a command can create, rename and
//! remove entries anywhere in them, top level included; its seccomp filter
//! (`cordon_seccomp::FilterSpec::supervised`) sends every call that changes a name or an
//! inode's metadata to the listener served here. For each call the supervisor:
//!
//! 1. copies the path out of the caller's memory once (never looks again: the memory can change
//!    after a check, which is why it never lets the kernel *continue* a call it judged);
//! 2. resolves it itself, directory by descriptor, the last name followed one link at a time;
//! 3. asks the pure [`Rules::judge`] whether the change may happen at the real path: inside a
//!    writable root, outside every credential mask and protected path, and not at a name the
//!    auto-run registry lists (`.git/hooks`, `.git/config`, `.envrc`, …) at any depth;
//! 4. performs the call on the descriptors it holds, with the caller's umask and no capability
//!    (a root launcher's supervisor does only what the capability-less jail could), and answers
//!    with the result, or installs the opened descriptor in the caller
//!    (`SECCOMP_IOCTL_NOTIF_ADDFD`, atomically with the answer).
//!
//! Metadata changes (mode, owner, times, extended attributes) outside the writable roots, which
//! Landlock has no right for, are refused here. A git configuration is brokered rather than
//! refused: git replaces it by renaming a lock file over it, and the supervisor puts in its place
//! the current file with only the caller's allowed changes (`cordon-gitconfig`), reporting each
//! key it dropped.
//!
//! With the network denied ([`Rules::network`]) there is no namespace holding only `lo`: the
//! calls that name an address come here too. The supervisor takes the caller's socket
//! (`pidfd_getfd`), makes a bind land on loopback, and lets a connect or a send reach only a
//! socket the jail itself bound (checked in the kernel's tables at the moment of the call), a
//! socket file it bound, or a granted host socket (the proxy's listener).
//!
//! # What this crate is not
//!
//! It does not build the filter (`cordon-seccomp` does) or decide when to install it (the
//! launcher's child calls [`install_with_listener`] between `fork` and `exec`, and the launcher
//! takes the listener with [`take_listener`]), choose a backend, or see reads: a read-only `open` never reaches
//! it, and Landlock alone rules reads. It is not a sandbox on its own: without Landlock the
//! calls it does not see (reads, `exec`) are not restricted.

#[cfg(target_os = "linux")]
mod broker;
#[cfg(target_os = "linux")]
mod judge;
#[cfg(target_os = "linux")]
mod net;
#[cfg(target_os = "linux")]
mod netsys;
#[cfg(target_os = "linux")]
mod ops;
#[cfg(target_os = "linux")]
mod resolve;
#[cfg(target_os = "linux")]
mod sockets;
#[cfg(target_os = "linux")]
mod sys;
#[cfg(target_os = "linux")]
mod terminals;

#[cfg(target_os = "linux")]
pub use judge::{Change, Network, Refusal, Rules};

#[cfg(target_os = "linux")]
pub use serve::{KEPT_REFUSALS, Report, serve, spawn};
#[cfg(target_os = "linux")]
pub use sys::{install_with_listener, take_listener};

#[cfg(target_os = "linux")]
mod serve {
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::thread::JoinHandle;

    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};

    use crate::judge::{Refusal, Rules};
    use crate::net::Owned;
    use crate::ops::{self, Outcome};
    use crate::sockets::Net;
    use crate::sys;

    /// Supervisors served by this process so far: each run's abstract Unix names get a prefix
    /// of their own.
    static SERVED: AtomicU64 = AtomicU64::new(0);

    /// The most refusals a [`Report`] keeps (every one is counted).
    pub const KEPT_REFUSALS: usize = 64;

    /// What a supervisor did, when every process under its filter is gone.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Report {
        /// Calls answered.
        pub handled: u64,
        /// Calls refused by the judge.
        pub refused: u64,
        /// The first [`KEPT_REFUSALS`] refusals, in order.
        pub refusals: Vec<Refusal>,
    }

    /// Serves `listener` on the calling thread until no process uses the filter.
    ///
    /// Call it on a thread of its own: it takes the thread's filesystem context apart
    /// (`unshare(CLONE_FS)`, for the umask) and empties its effective capabilities.
    ///
    /// # Errors
    ///
    /// When the thread cannot be prepared; the listener is then closed, so every supervised
    /// call fails (`ENOSYS`) rather than going through unjudged.
    pub fn serve(listener: OwnedFd, rules: &Rules) -> io::Result<Report> {
        sys::own_fs_context()?;
        sys::drop_effective_capabilities()?;
        let mut report = Report::default();
        // The stage's self-check connect, until it came (`Network::self_check`).
        let mut self_check = rules
            .network
            .as_ref()
            .and_then(|n| n.self_check)
            .map(|at| std::path::PathBuf::from(at.to_string()));
        let owned = Arc::new(Mutex::new(Owned::default()));
        if let Some(network) = &rules.network {
            owned
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .sockets
                .extend(network.granted_sockets.iter().copied());
        }
        let prefix = format!(
            "cordon-{}-{}/",
            std::process::id(),
            SERVED.fetch_add(1, Ordering::Relaxed)
        )
        .into_bytes();
        loop {
            if !sys::wait_readable(listener.as_fd())? {
                return Ok(report);
            }
            let Ok(n) = sys::receive(listener.as_fd()) else {
                // The caller is gone (ENOENT) or a signal interrupted the wait.
                continue;
            };
            let net = rules.network.as_ref().map(|_| Net {
                listener: listener.as_fd(),
                id: n.id,
                owned: &owned,
                prefix: &prefix,
            });
            let outcome = ops::handle(rules, listener.as_fd(), net.as_ref(), &n);
            report.handled += 1;
            let answer = match outcome {
                Outcome::Value(v) => Ok(v),
                Outcome::Errno(e) => Err(e),
                Outcome::Refused(r) => {
                    let errno = r.errno;
                    if r.rule == "network" && self_check.as_ref() == Some(&r.path) {
                        self_check = None;
                    } else {
                        report.refused += 1;
                        if report.refusals.len() < KEPT_REFUSALS {
                            report.refusals.push(r);
                        }
                    }
                    Err(errno)
                }
                Outcome::Brokered(dropped) => {
                    report.refused += dropped.len() as u64;
                    for r in dropped {
                        if report.refusals.len() < KEPT_REFUSALS {
                            report.refusals.push(r);
                        }
                    }
                    Ok(0)
                }
                Outcome::Later(open, cloexec) => {
                    match on_its_own_thread(listener.as_fd(), n.id, move |l, id| {
                        let r = open().and_then(|fd| sys::send_fd(l, id, fd.as_fd(), cloexec));
                        if let Err(e) = r {
                            let errno = e.raw_os_error().unwrap_or(libc::EIO);
                            let _ = sys::respond(l, id, Err(errno));
                        }
                    }) {
                        Ok(()) => continue,
                        Err(errno) => Err(errno),
                    }
                }
                Outcome::LaterValue(call) => {
                    match on_its_own_thread(listener.as_fd(), n.id, move |l, id| {
                        let r = call().map_err(|e| e.raw_os_error().unwrap_or(libc::EIO));
                        let _ = sys::respond(l, id, r);
                    }) {
                        Ok(()) => continue,
                        Err(errno) => Err(errno),
                    }
                }
                Outcome::Fd(fd, cloexec) => {
                    match sys::send_fd(listener.as_fd(), n.id, fd.as_fd(), cloexec) {
                        Ok(()) => continue,
                        Err(e) => Err(e.raw_os_error().unwrap_or(libc::EIO)),
                    }
                }
            };
            // The caller may have died meanwhile (ENOENT): nothing to answer.
            let _ = sys::respond(listener.as_fd(), n.id, answer);
        }
    }

    /// Answers notification `id` from a thread of its own (a call that may wait), with a copy
    /// of the listener; `Err(errno)` when no thread could be started.
    fn on_its_own_thread(
        listener: BorrowedFd<'_>,
        id: u64,
        answer: impl FnOnce(BorrowedFd<'_>, u64) + Send + 'static,
    ) -> Result<(), i32> {
        let copy = listener
            .try_clone_to_owned()
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        std::thread::Builder::new()
            .spawn(move || answer(copy.as_fd(), id))
            .map(drop)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
    }

    /// [`serve`] on a thread of its own, named `cordon-supervisor`.
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub fn spawn(listener: OwnedFd, rules: Rules) -> io::Result<JoinHandle<io::Result<Report>>> {
        std::thread::Builder::new()
            .name("cordon-supervisor".into())
            .spawn(move || serve(listener, &rules))
    }
}
