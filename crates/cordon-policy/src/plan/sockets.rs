//! The host's listening Unix sockets that the jail's filesystem view shows, to be masked.
//!
//! A socket file is reached by `connect(2)` through any view of its inode: the kernel checks
//! write permission on the inode, never whether the mount is read-only, so a read-only bind of
//! `/var/lib/db` leaves the database's socket in it connectable. The kernel lists every bound
//! socket of the network namespace in `/proc/net/unix`; the launcher reads it once per plan
//! and hands the listening paths over as plain data ([`Invocation::host_sockets`]), parsed by
//! [`listening_paths`]. This module finds where each one appears in the jail (through the host
//! root, a read-only tree, a writable root) and lists those paths in
//! [`Plan::host_sockets`](super::Plan::host_sockets), where bubblewrap binds `/dev/null` over
//! them: a later `connect(2)` meets a character device and fails with `ECONNREFUSED`.
//!
//! Not covered: sockets bound by a relative name (the list shows the name as given, so the
//! directory is unknown), and sockets that start listening after the jail was built.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::Invocation;
use super::host::{EntryKind, HostFacts};
use super::parts::Bind;
use crate::model::modes::Posture;

/// `__SO_ACCEPTCON`: the flags column's bit for a socket in the listening state.
const ACCEPTING: u32 = 0x0001_0000;

/// The absolute paths of the listening sockets in the text of `/proc/net/unix`, sorted, once
/// each. Abstract names (`@…`), relative names and unbound sockets are left out; a line that
/// does not parse is skipped (the kernel's format has been stable since 2.6, and a skipped line
/// can only leave a socket unmasked, which [`Plan::host_sockets`](super::Plan::host_sockets)
/// documents).
pub fn listening_paths(proc_net_unix: &[u8]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = proc_net_unix
        .split(|&b| b == b'\n')
        .skip(1)
        .filter_map(listening_path)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// One line: `Num RefCount Protocol Flags Type St Inode Path`, the path the rest of the line.
fn listening_path(line: &[u8]) -> Option<PathBuf> {
    let mut rest = line;
    let mut fields: Vec<&[u8]> = Vec::with_capacity(7);
    while fields.len() < 7 {
        let start = rest.iter().position(|&b| b != b' ')?;
        rest = &rest[start..];
        let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
        fields.push(&rest[..end]);
        rest = &rest[end..];
    }
    let flags = u32::from_str_radix(std::str::from_utf8(fields[3]).ok()?, 16).ok()?;
    let path = rest.strip_prefix(b" ")?;
    (flags & ACCEPTING != 0 && path.first() == Some(&b'/'))
        .then(|| PathBuf::from(OsStr::from_bytes(path)))
}

/// What the jail shows at one path: the last mount operation at or above it.
enum View<'a> {
    /// A host tree bound at `dest` (the host root, a read-only tree, a writable root).
    Shown(&'a Bind),
    /// A private directory or a mask: nothing of the host below.
    Hidden,
}

/// The jail paths at which the sockets of `invocation` appear in `plan`'s view, sorted.
pub(super) fn visible_sockets(
    plan: &super::Plan,
    invocation: &Invocation,
    host: &dyn HostFacts,
) -> Vec<PathBuf> {
    if invocation.host_sockets.is_empty() {
        return Vec::new();
    }
    // Every bind as (source, dest); identity binds for the root, writable and protected paths.
    let mut shown: Vec<Bind> = Vec::new();
    let same = |p: &Path| Bind {
        source: p.to_path_buf(),
        dest: p.to_path_buf(),
    };
    if plan.posture == Posture::Host {
        shown.push(same(Path::new("/")));
    }
    shown.extend(plan.read_only.iter().cloned());
    shown.extend(plan.writable.iter().map(|p| same(p)));
    shown.extend(plan.protected.iter().map(|p| same(&p.path)));
    let hidden: Vec<&Path> = plan
        .private_dirs
        .iter()
        .map(PathBuf::as_path)
        .chain(plan.masks.iter().map(|m| m.target.as_path()))
        .collect();

    let mut out = Vec::new();
    for raw in &invocation.host_sockets {
        // The socket's own name is kept (it is not a symlink); its directory is resolved.
        let (Some(dir), Some(name)) = (raw.parent(), raw.file_name()) else {
            continue;
        };
        let Some(socket) = host.canonicalize(dir).map(|d| d.join(name)) else {
            continue;
        };
        if host.kind(&socket) != Some(EntryKind::Other) {
            continue;
        }
        for bind in &shown {
            let Ok(rel) = socket.strip_prefix(&bind.source) else {
                continue;
            };
            let at = bind.dest.join(rel);
            if let View::Shown(b) = view(&at, &shown, &hidden)
                && b.source.join(at.strip_prefix(&b.dest).unwrap_or(&at)) == socket
            {
                out.push(at);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The deepest operation at or above `at`. At equal depth the bind wins: a private directory
/// is the blank a bind at its path fills (cordon-bwrap's ranks), and a mask there makes one
/// more mask harmless. So a doubt only ever adds a mask.
fn view<'a>(at: &Path, shown: &'a [Bind], hidden: &[&Path]) -> View<'a> {
    let depth = |p: &Path| p.components().count();
    let best_shown = shown
        .iter()
        .filter(|b| at.starts_with(&b.dest))
        .max_by_key(|b| depth(&b.dest));
    let best_hidden = hidden
        .iter()
        .filter(|h| at.starts_with(h))
        .map(|h| depth(h))
        .max();
    match (best_shown, best_hidden) {
        (Some(b), Some(h)) if depth(&b.dest) >= h => View::Shown(b),
        (Some(b), None) => View::Shown(b),
        _ => View::Hidden,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{FakeHost, Plan, Policy, Profile};

    fn masked(profile: Profile, host: &FakeHost, work: &str, sockets: &[&str]) -> Vec<PathBuf> {
        let inv = Invocation::at(work)
            .with_host_sockets(sockets.iter().map(PathBuf::from).collect::<Vec<_>>());
        Plan::resolve(&Policy::for_profile(profile), &inv, host)
            .unwrap()
            .host_sockets
    }

    #[test]
    fn host_posture_masks_what_its_view_shows() {
        let host = FakeHost::typical()
            .socket("/var/lib/db/db.sock")
            .socket("/home/u/proj/run/srv.sock")
            .socket("/tmp/host.sock")
            .socket("/var/tmp/shared.sock")
            .file("/var/lib/db/not-a-socket", "")
            .symlink("/srv", "var/lib");
        let got = masked(
            Profile::Shell,
            &host,
            "/home/u/proj",
            &[
                "/var/lib/db/db.sock",
                "/home/u/proj/run/srv.sock",
                "/tmp/host.sock",
                "/var/tmp/shared.sock",
                "/var/lib/db/not-a-socket",
                "/var/lib/db/gone.sock",
                "/srv/db/db.sock",
            ],
        );
        // The private /tmp hides its socket; the rest is shown, and masked once each.
        let plan = Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at("/home/u/proj"),
            &host,
        )
        .unwrap();
        let mut want = vec![
            PathBuf::from("/home/u/proj/run/srv.sock"),
            PathBuf::from("/var/lib/db/db.sock"),
        ];
        for (path, private) in [
            ("/tmp", "/tmp/host.sock"),
            ("/var/tmp", "/var/tmp/shared.sock"),
        ] {
            if !plan.private_dirs.contains(&PathBuf::from(path)) {
                want.push(PathBuf::from(private));
            }
        }
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn a_workspace_inside_a_private_directory_is_shown_again() {
        let host = FakeHost::typical()
            .dir("/tmp/ws/.git")
            .socket("/tmp/ws/db.sock")
            .socket("/tmp/other.sock");
        let got = masked(
            Profile::Shell,
            &host,
            "/tmp/ws",
            &["/tmp/ws/db.sock", "/tmp/other.sock"],
        );
        assert!(got.contains(&PathBuf::from("/tmp/ws/db.sock")), "{got:?}");
    }

    #[test]
    fn minimal_posture_masks_only_inside_its_trees() {
        let host = FakeHost::typical()
            .socket("/var/lib/db/db.sock")
            .socket("/usr/lib/helper.sock")
            .socket("/home/u/proj/srv.sock");
        let got = masked(
            Profile::DocumentParser,
            &host,
            "/home/u/proj",
            &[
                "/var/lib/db/db.sock",
                "/usr/lib/helper.sock",
                "/home/u/proj/srv.sock",
            ],
        );
        assert!(
            !got.contains(&PathBuf::from("/var/lib/db/db.sock")),
            "{got:?}"
        );
        assert!(
            got.contains(&PathBuf::from("/home/u/proj/srv.sock")),
            "{got:?}"
        );
    }

    #[test]
    fn no_sockets_no_masks() {
        assert!(masked(Profile::Shell, &FakeHost::typical(), "/home/u/proj", &[]).is_empty());
    }

    const TABLE: &[u8] = b"Num       RefCount Protocol Flags    Type St Inode Path\n\
0000000000000000: 00000002 00000000 00010000 0001 01 3596950 /var/lib/db/db.sock\n\
0000000000000000: 00000003 00000000 00000000 0001 03 3596951 /var/lib/db/db.sock\n\
0000000000000000: 00000002 00000000 00010000 0001 01 12 @/tmp/.X11-unix/X0\n\
0000000000000000: 00000002 00000000 00010000 0001 01 13 relative.sock\n\
0000000000000000: 00000002 00000000 00000000 0002 01 14 /run/systemd/notify\n\
0000000000000000: 00000002 00000000 00010000 0001 01 15 /run/with space.sock\n\
0000000000000000: 00000002 00000000 00010000 0005 01 16\n\
garbage\n";

    #[test]
    fn only_listening_absolute_paths() {
        assert_eq!(
            listening_paths(TABLE),
            [
                PathBuf::from("/run/with space.sock"),
                PathBuf::from("/var/lib/db/db.sock"),
            ]
        );
    }

    #[test]
    fn nothing_from_an_empty_or_header_only_table() {
        assert!(listening_paths(b"").is_empty());
        assert!(listening_paths(b"Num RefCount Protocol Flags Type St Inode Path\n").is_empty());
    }
}
