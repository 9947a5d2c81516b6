//! The stage's half of the copy-on-write layer (issue #30), and its check that nothing of the
//! jail's privileges reaches the payload.
//!
//! In a layered jail (`cordon_bwrap::build_layered`) bubblewrap leaves the stage a few
//! capabilities, as uid 0 of the jail's own user namespace, and no seccomp filter. The stage,
//! before anything else:
//!
//! 1. for each layered root, clones every mount bubblewrap placed below it (the protected
//!    re-binds, credential masks, placeholders, broker binds: an overlay shows none of its
//!    lower layer's submounts), mounts the overlay on the root (lower: the root as bubblewrap
//!    bound it at its hidden place; upper and work: the run's layer directory), and attaches
//!    the clones again at their places on top of it, the list being the jail's own mount table,
//!    so nothing bubblewrap mounted is forgotten;
//! 2. detaches the hidden binds of the layer directories and lower roots;
//! 3. enters a nested user namespace that maps the caller's own uid and gid (as bubblewrap
//!    does for a live jail), so the command runs as the caller, not as uid 0;
//! 4. drops every capability, sets no-new-privileges and installs cordon's seccomp filter.
//!
//! Then the usual self-checks run, under the final confinement, and [`confined`] refuses the
//! payload when a capability or the filter is missing.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The stage binary's mode that probes, on the host, whether an overlay can be mounted in a
/// user namespace (`features/layer_probe.rs` runs it).
pub(crate) const PROBE_MODE: &str = "layer-probe";

/// The overlay's options beside its directories. `userxattr`: the overlay's own records in
/// `user.` extended attributes, as a user namespace requires. `volatile`: the overlay never
/// syncs its upper filesystem, in particular not when the jail's end unmounts it, which would
/// flush every dirty page of the workspace's filesystem while the launcher waits (about 0.4 ms
/// of every run on a quiet machine, more on a busy one). The commit syncs what it applies
/// before its journal is sealed (`cordon_commit`), so nothing of the host depends on the
/// overlay's sync. The overlay marks its work directory `work/incompat/volatile`, which
/// `features/layer_abandoned.rs` moves out of the way before the directory is used again.
pub(crate) const OPTIONS: &str = "userxattr,volatile";

/// The most bytes of roots or filter the stage reads from its descriptors.
const LIMIT: u64 = 1 << 20;

/// The stage's layer operand: `-` for a backend that runs the stage in place (its bounding set
/// is the user's), `0` for none checked, `b` for a live bubblewrap jail, `ROOTS,FILTER` (two descriptors: the layered
/// roots as `encode_command` writes arguments, and the seccomp program) for a layered one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerOperand {
    /// A backend that runs the stage in place.
    InPlace,
    /// No confinement check: the escape suite's weakened self-check alone (`weaken/imp.rs`).
    Unchecked,
    /// bubblewrap, live.
    Live,
    /// bubblewrap, layered: the descriptors of the roots and of the filter.
    Layered {
        /// The roots' descriptor.
        roots_fd: i32,
        /// The seccomp program's descriptor.
        filter_fd: i32,
    },
}

impl LayerOperand {
    /// The operand as the stage's argument.
    pub fn arg(self) -> String {
        match self {
            LayerOperand::InPlace => "-".into(),
            LayerOperand::Unchecked => "0".into(),
            LayerOperand::Live => "b".into(),
            LayerOperand::Layered {
                roots_fd,
                filter_fd,
            } => format!("{roots_fd},{filter_fd}"),
        }
    }

    /// The operand read back; `None` when malformed.
    pub fn parse(arg: &OsStr) -> Option<LayerOperand> {
        match arg.to_str()? {
            "-" => Some(LayerOperand::InPlace),
            "0" => Some(LayerOperand::Unchecked),
            "b" => Some(LayerOperand::Live),
            pair => {
                let (roots, filter) = pair.split_once(',')?;
                Some(LayerOperand::Layered {
                    roots_fd: roots.parse().ok()?,
                    filter_fd: filter.parse().ok()?,
                })
            }
        }
    }
}

fn read_fd(fd: i32, what: &str) -> Result<Vec<u8>, String> {
    let fd =
        crate::host::sys::inherited_fd(fd).ok_or(format!("the {what} descriptor is missing"))?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(LIMIT)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the {what}: {e}"))?;
    Ok(bytes)
}

/// Steps 1 to 4 of the module documentation.
#[cfg(linux_backends)]
pub(crate) fn enter(roots_fd: i32, filter_fd: i32) -> Result<(), String> {
    use crate::host::sys;
    let roots = super::decode_command(&read_fd(roots_fd, "layer roots")?)
        .ok_or("the layer roots are malformed")?;
    let filter = read_fd(filter_fd, "seccomp program")?;
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the directory: {e}"))?;
    // Bytes: the kernel escapes only space, tab, newline and backslash; a path may hold any
    // other byte, UTF-8 or not.
    let table = std::fs::read("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read the jail's mount table: {e}"))?;
    let mut hidden = Vec::new();
    for (index, root) in roots.iter().enumerate() {
        let root = Path::new(root);
        let (dir, lower) = cordon_bwrap::LayerRoot::jail_paths(index);
        let inner = below(&mount_points(&table), root);
        let mut trees = Vec::with_capacity(inner.len());
        for path in inner {
            let tree = sys::clone_mount(&path)
                .map_err(|e| format!("cannot carry the mount at {} over: {e}", path.display()))?;
            trees.push((path, tree));
        }
        let options = format!(
            "lowerdir={},upperdir={}/upper,workdir={}/work,{OPTIONS}",
            lower.display(),
            dir.display(),
            dir.display()
        );
        sys::mount_overlay(root, &options).map_err(|e| {
            format!(
                "cannot mount the copy-on-write layer on {}: {e} (cordon run --live runs without it)",
                root.display()
            )
        })?;
        for (path, tree) in &trees {
            sys::attach_mount(tree, path)
                .map_err(|e| format!("cannot put the mount at {} back: {e}", path.display()))?;
        }
        hidden.extend([dir, lower]);
    }
    for path in &hidden {
        sys::detach_mount(path).map_err(|e| format!("cannot detach {}: {e}", path.display()))?;
    }
    std::env::set_current_dir(&cwd)
        .map_err(|e| format!("cannot enter {} on the layer: {e}", cwd.display()))?;
    nest_user_namespace()?;
    sys::confine_stage(&filter).map_err(|e| format!("cannot confine the stage: {e}"))
}

#[cfg(not(linux_backends))]
pub(crate) fn enter(_roots_fd: i32, _filter_fd: i32) -> Result<(), String> {
    Err("no copy-on-write layer exists on this platform".into())
}

/// A nested user namespace mapping the ids the jail's own maps to uid and gid 0 (the caller's)
/// back to themselves.
#[cfg(linux_backends)]
fn nest_user_namespace() -> Result<(), String> {
    let outer = |file: &str| -> Result<u32, String> {
        let map = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
        let mut fields = map.split_whitespace();
        match (fields.next(), fields.next().and_then(|f| f.parse().ok())) {
            (Some("0"), Some(id)) => Ok(id),
            _ => Err(format!("{file} does not map 0: {}", map.trim())),
        }
    };
    let (uid, gid) = (outer("/proc/self/uid_map")?, outer("/proc/self/gid_map")?);
    crate::host::sys::unshare_user().map_err(|e| format!("cannot nest a user namespace: {e}"))?;
    for (file, text) in [
        ("/proc/self/setgroups", "deny".to_owned()),
        ("/proc/self/uid_map", format!("{uid} 0 1\n")),
        ("/proc/self/gid_map", format!("{gid} 0 1\n")),
    ] {
        std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))?;
    }
    Ok(())
}

/// The mount points of a `/proc/self/mountinfo` text (its fifth field, unescaped).
fn mount_points(table: &[u8]) -> Vec<PathBuf> {
    table
        .split(|b| *b == b'\n')
        .filter_map(|l| l.split(|b| *b == b' ').nth(4))
        .map(|p| PathBuf::from(unescape(p)))
        .collect()
}

/// `\040`-style octal escapes of the mount table undone.
fn unescape(field: &[u8]) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field;
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    std::ffi::OsString::from_vec(out)
}

/// The mount points strictly below `root`, without those below another of them (a recursive
/// clone takes those along), each once.
fn below(points: &[PathBuf], root: &Path) -> Vec<PathBuf> {
    let mut inner: Vec<PathBuf> = points
        .iter()
        .filter(|p| p.starts_with(root) && p.as_path() != root)
        .cloned()
        .collect();
    inner.sort();
    inner.dedup();
    let tops: Vec<PathBuf> = inner
        .iter()
        .filter(|p| !inner.iter().any(|q| q != *p && p.starts_with(q)))
        .cloned()
        .collect();
    tops
}

/// Whether the stage holds no capability in any set (the bounding set too, unless
/// `bounding_is_the_users`: a backend that runs the stage in place as an ordinary user, who
/// cannot drop it), runs with no-new-privileges and under a seccomp filter.
#[cfg(target_os = "linux")]
pub(crate) fn confined(bounding_is_the_users: bool) -> Result<(), String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(str::trim))
    };
    let mut sets = vec!["CapInh", "CapPrm", "CapEff", "CapAmb"];
    if !bounding_is_the_users {
        sets.push("CapBnd");
    }
    for set in sets {
        match field(set).map(|v| u64::from_str_radix(v, 16)) {
            Some(Ok(0)) => {}
            Some(Ok(v)) => {
                return Err(format!(
                    "the command would keep capabilities: {set} {v:016x}"
                ));
            }
            _ => return Err(format!("/proc/self/status has no readable {set}")),
        }
    }
    if field("NoNewPrivs") != Some("1") {
        return Err("no-new-privileges is not set".into());
    }
    if field("Seccomp") != Some("2") {
        return Err(format!(
            "the seccomp filter is not on (Seccomp: {})",
            field("Seccomp").unwrap_or("missing")
        ));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn confined(_bounding_is_the_users: bool) -> Result<(), String> {
    Ok(())
}

/// The probe itself, in the stage binary on the host (`args`: the throwaway tree): a new user
/// and mount namespace, the overlay, a write, the write found in the upper directory only.
#[cfg(linux_backends)]
pub(crate) fn probe_main(args: &[std::ffi::OsString]) -> i32 {
    let Some(tree) = args.first().map(PathBuf::from) else {
        eprintln!("cordon layer probe: no directory given");
        return 2;
    };
    match run_probe(&tree) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("{why}");
            1
        }
    }
}

#[cfg(not(linux_backends))]
pub(crate) fn probe_main(_args: &[std::ffi::OsString]) -> i32 {
    eprintln!("no copy-on-write layer exists on this platform");
    1
}

#[cfg(linux_backends)]
fn run_probe(tree: &Path) -> Result<(), String> {
    let (uid, gid) = (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    );
    crate::host::sys::unshare_user_and_mounts()
        .map_err(|e| format!("cannot enter a user and mount namespace: {e}"))?;
    for (file, text) in [
        ("/proc/self/setgroups", "deny".to_owned()),
        ("/proc/self/uid_map", format!("0 {uid} 1\n")),
        ("/proc/self/gid_map", format!("0 {gid} 1\n")),
    ] {
        std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))?;
    }
    let lower = tree.join("lower");
    let options = format!(
        "lowerdir={},upperdir={},workdir={},{OPTIONS}",
        lower.display(),
        tree.join("upper").display(),
        tree.join("work").display()
    );
    crate::host::sys::mount_overlay(&lower, &options)
        .map_err(|e| format!("mount overlay with {OPTIONS}: {e}"))?;
    std::fs::write(lower.join("written"), b"layer")
        .map_err(|e| format!("cannot write through the overlay: {e}"))?;
    if std::fs::read(tree.join("upper").join("written"))
        .ok()
        .as_deref()
        != Some(b"layer")
    {
        return Err("a write through the overlay did not land in its upper directory".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mounts_carried_over_are_the_topmost_strictly_below_the_root() {
        let table = "1 0 8:1 / / ro - ext4 /dev/vda rw\n\
            2 1 8:1 /ws /home/u/ws rw - ext4 /dev/vda rw\n\
            3 2 8:1 /ws/.git/hooks /home/u/ws/.git/hooks ro - ext4 /dev/vda rw\n\
            4 3 0:5 / /home/u/ws/.git/hooks/x ro - tmpfs tmpfs ro\n\
            5 2 0:5 / /home/u/ws/with\\040space ro - tmpfs tmpfs ro\n\
            6 1 8:1 /ws2 /home/u/ws2 rw - ext4 /dev/vda rw\n\
            7 2 8:1 /ws/.git/hooks /home/u/ws/.git/hooks ro - ext4 /dev/vda rw\n";
        let points = mount_points(table.as_bytes());
        assert_eq!(
            below(&points, Path::new("/home/u/ws")),
            [
                PathBuf::from("/home/u/ws/.git/hooks"),
                PathBuf::from("/home/u/ws/with space")
            ]
        );
        assert!(below(&points, Path::new("/home/u/ws2")).is_empty());
    }

    #[test]
    fn a_mount_point_that_is_not_utf8_is_read_as_its_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let table =
            b"1 0 8:1 / / ro - ext4 /dev/vda rw\n2 1 0:5 / /ws/bad-\xff ro - tmpfs tmpfs ro\n";
        let points = mount_points(table);
        assert_eq!(points[1].as_os_str().as_bytes(), b"/ws/bad-\xff");
    }

    #[test]
    fn the_operand_round_trips_and_refuses_what_it_cannot_read() {
        for op in [
            LayerOperand::InPlace,
            LayerOperand::Unchecked,
            LayerOperand::Live,
            LayerOperand::Layered {
                roots_fd: 7,
                filter_fd: 8,
            },
        ] {
            assert_eq!(LayerOperand::parse(OsStr::new(&op.arg())), Some(op));
        }
        assert_eq!(LayerOperand::parse(OsStr::new("7")), None);
        assert_eq!(LayerOperand::parse(OsStr::new("a,b")), None);
    }
}
