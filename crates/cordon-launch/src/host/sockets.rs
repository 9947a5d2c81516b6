//! The host's listening Unix sockets, read once per plan from the kernel's list.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The listening Unix sockets bound by absolute path in the launcher's network namespace
/// (`/proc/net/unix`, parsed by [`cordon_policy::listening_paths`]) that the jail's user could
/// reach, for [`cordon_policy::Invocation::with_host_sockets`]: the plan masks those the jail
/// would see. An unreadable list (no `/proc`) gives none; bubblewrap itself needs `/proc`.
pub fn listening_unix_sockets() -> Vec<PathBuf> {
    let Ok(text) = std::fs::read("/proc/net/unix") else {
        return Vec::new();
    };
    let ids = Ids::current();
    cordon_policy::listening_paths(&text)
        .into_iter()
        .filter(|p| ids.may_search_to(p))
        .collect()
}

/// Who the jail runs as, for the permission bits (without privilege: a root launcher's jail is
/// root in a user namespace, where the host's other users' files are not its own).
struct Ids {
    uid: u32,
    gids: Vec<u32>,
}

impl Ids {
    fn current() -> Ids {
        let mut gids: Vec<u32> = rustix::process::getgroups()
            .unwrap_or_default()
            .into_iter()
            .map(|g| g.as_raw())
            .collect();
        gids.push(rustix::process::getegid().as_raw());
        Ids {
            uid: rustix::process::geteuid().as_raw(),
            gids,
        }
    }

    /// Whether every directory above `socket` may be searched by these ids by their mode bits
    /// alone. A socket below a directory the jail cannot enter cannot be connected to from it,
    /// and bubblewrap could not mount over it (its start would fail): it is left out. A
    /// directory that cannot be read is kept (a mask too many only refuses the start).
    fn may_search_to(&self, socket: &Path) -> bool {
        let Some(dir) = socket.parent() else {
            return false;
        };
        dir.ancestors().all(|a| match std::fs::metadata(a) {
            Ok(meta) => {
                let mode = meta.mode();
                if meta.uid() == self.uid {
                    mode & 0o100 != 0
                } else if self.gids.contains(&meta.gid()) {
                    mode & 0o010 != 0
                } else {
                    mode & 0o001 != 0
                }
            }
            Err(_) => true,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_socket_below_a_closed_directory_of_another_owner_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        let closed = dir.path().join("closed");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::create_dir_all(&closed).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let me = Ids::current();
        assert!(me.may_search_to(&open.join("s.sock")));
        assert!(me.may_search_to(&closed.join("s.sock")), "its owner may");
        let other = Ids {
            uid: me.uid.wrapping_add(12345),
            gids: Vec::new(),
        };
        assert!(other.may_search_to(&open.join("s.sock")));
        assert!(!other.may_search_to(&closed.join("s.sock")));
    }
}
