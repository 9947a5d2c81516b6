//! The private toolchain caches on the host (`cordon_policy::CacheLayout` decides what they hold):
//! a feature of the planning phase. [`crate::Launcher::plan`] creates the workspace's cache
//! before the plan is resolved (the plan uses a cache that exists), and applies the size bound;
//! `cordon cache show|clear` lists and removes them ([`entries`], [`clear`]). The CLI, `cordon
//! serve` and a Rust harness that plans through the launcher get the same caches.
//!
//! Recovery: nothing here is half-made for a run; a cache is only ever a directory of the user's
//! that a jail may fill, bounded at the next launch.
//!
//! Everything below a workspace's cache root was written by jails, so nothing here follows a
//! link in it: directories are made one component at a time relative to a descriptor opened
//! with `O_NOFOLLOW`, sizes are summed with `lstat`, and removal is `remove_dir_all`, which
//! does not follow links either. The base directory (`…/cordon/tools`) and the `<key>.used`
//! stamps beside each cache are writable by no jail.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use cordon_policy::CacheLayout;
use cordon_policy::{HostFacts, Posture};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use serde::Serialize;

/// How often, at most, a launch sums the caches' size: summing a large Go or Gradle cache reads
/// every inode, which no command should wait for each time.
const CHECK_EVERY: Duration = Duration::from_secs(600);
/// The stamp (in the base directory) whose modification time is the last size check.
const CHECKED_STAMP: &str = ".size-checked";
/// The suffix of the stamp beside each workspace's cache: its time is the last launch, its
/// content the workspace's path.
const USED_SUFFIX: &str = ".used";

/// Why a cache could not be prepared, shown or cleared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// A path of cordon's cache is not what cordon made (a link, not a directory, another
    /// owner's).
    #[error(
        "cordon's toolchain cache {path} is {what}; it must be a directory of this user's (remove it, or `cordon cache clear --all`)"
    )]
    NotOurs {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        what: &'static str,
    },
    /// A file-system call failed.
    #[error("toolchain cache {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn errno(path: &Path) -> impl FnOnce(Errno) -> CacheError + '_ {
    move |e| CacheError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

/// Creates the base directory (mode 0700) and checks it is this user's own directory; returns
/// its canonical path.
fn open_base(base: &Path) -> Result<(PathBuf, OwnedFd), CacheError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(base)
        .map_err(io(base))?;
    let fd = rustix::fs::open(
        base,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => CacheError::NotOurs {
            path: base.to_path_buf(),
            what: "not a directory (or a link)",
        },
        e => errno(base)(e),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(errno(base))?;
    if stat.st_uid != rustix::process::geteuid().as_raw() {
        return Err(CacheError::NotOurs {
            path: base.to_path_buf(),
            what: "owned by another user",
        });
    }
    let canonical = std::fs::canonicalize(base).map_err(io(base))?;
    Ok((canonical, fd))
}

/// `name` in the directory `dir`, created (0700) when missing, opened without following a link;
/// `None` when something else (a jail's link or file) is there.
fn subdir(dir: &OwnedFd, name: &OsStr, shown: &Path) -> Result<Option<OwnedFd>, CacheError> {
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(errno(shown)(e)),
    }
    match rustix::fs::openat(
        dir,
        name,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
        Mode::empty(),
    ) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::LOOP | Errno::NOTDIR) => Ok(None),
        Err(e) => Err(errno(shown)(e)),
    }
}

/// The directory `rel` below `root`, made component by component; `None` when a component is
/// not a directory (left as the jail made it).
pub(crate) fn walk_down(
    root: &OwnedFd,
    rel: &Path,
    shown: &Path,
) -> Result<Option<OwnedFd>, CacheError> {
    let mut fd = rustix::io::dup(root).map_err(errno(shown))?;
    for c in rel.components() {
        let Component::Normal(name) = c else {
            return Ok(None);
        };
        match subdir(&fd, name, shown)? {
            Some(next) => fd = next,
            None => return Ok(None),
        }
    }
    Ok(Some(fd))
}

/// Prepares the workspace cache of `ctx` for `policy` before a run: the base and the root are
/// this user's directories, every tool's directory and link exists (made where missing; what a
/// jail put in their place is left alone), the use stamp is touched, and at most every ten
/// minutes the size bound is applied. Returns warnings (caches removed by the bound).
pub fn prepare(
    base: &Path,
    cwd: &Path,
    policy: &cordon_policy::Policy,
    host: &dyn HostFacts,
) -> Result<Vec<String>, CacheError> {
    if policy.posture() != Posture::Host {
        return Ok(Vec::new());
    }
    let (Some(home), Ok(workspace)) = (
        host.home_dir().and_then(|h| host.canonicalize(&h)),
        std::fs::canonicalize(cwd),
    ) else {
        return Ok(Vec::new());
    };
    let (base, base_fd) = open_base(base)?;
    let Some(layout) = CacheLayout::for_workspace(&base, &workspace, &home, policy.network(), host)
    else {
        return Ok(Vec::new());
    };
    make_layout(&base_fd, &layout)?;
    let key = CacheLayout::workspace_key(&workspace);
    // The private home, beside the cache root in the base (which no jail writes): made here
    // (0700, never through a link), bound or named by the backend when the plan hides the home.
    if subdir(&base_fd, home_name(&key).as_ref(), &layout.home)?.is_none() {
        return Err(CacheError::NotOurs {
            path: layout.home.clone(),
            what: "not a directory (or a link)",
        });
    }
    let stamp = base.join(format!("{key}{USED_SUFFIX}"));
    std::fs::write(&stamp, workspace.as_os_str().as_encoded_bytes()).map_err(io(&stamp))?;
    bound(&base, &key, CacheLayout::DEFAULT_MAX_BYTES, false)
}

/// The planning phase of the caches: [`prepare`] for the invocation's cache base, if it names
/// one; each problem is a warning (the plan then finds no cache and the home stays read-only).
pub(crate) fn for_invocation(
    policy: &cordon_policy::Policy,
    invocation: &cordon_policy::Invocation,
    host: &dyn HostFacts,
) -> Vec<String> {
    let Some(base) = &invocation.caches else {
        return Vec::new();
    };
    let workspace = invocation.workspace.as_ref().unwrap_or(&invocation.cwd);
    match prepare(base, workspace, policy, host) {
        Ok(warnings) => warnings,
        Err(e) => vec![format!(
            "WARNING: no private toolchain caches for this run ({e}); tools see a read-only home"
        )],
    }
}

fn make_layout(base_fd: &OwnedFd, layout: &CacheLayout) -> Result<(), CacheError> {
    let root = &layout.root;
    let key = root.file_name().unwrap_or_default();
    let Some(root_fd) = subdir(base_fd, key, root)? else {
        return Err(CacheError::NotOurs {
            path: root.clone(),
            what: "not a directory (or a link)",
        });
    };
    for dir in &layout.dirs {
        if let Ok(rel) = dir.strip_prefix(root) {
            walk_down(&root_fd, rel, dir)?;
        }
    }
    for link in &layout.links {
        let Ok(rel) = link.link.strip_prefix(root) else {
            continue;
        };
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            continue;
        };
        let Some(dir) = walk_down(&root_fd, parent, &link.link)? else {
            continue;
        };
        match rustix::fs::symlinkat(&link.target, &dir, name) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(errno(&link.link)(e)),
        }
    }
    Ok(())
}

/// The name of the private home of the workspace cache `key`, beside it in the base.
fn home_name(key: &str) -> String {
    format!("{key}{}", CacheLayout::HOME_SUFFIX)
}

/// Bytes used below `path` (allocated blocks), without following any link.
fn size_of(path: &Path) -> u64 {
    let mut total = 0u64;
    let mut pending = vec![path.to_path_buf()];
    while let Some(p) = pending.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        total = total.saturating_add(meta.blocks().saturating_mul(512));
        if meta.is_dir()
            && let Ok(entries) = std::fs::read_dir(&p)
        {
            pending.extend(entries.flatten().map(|e| e.path()));
        }
    }
    total
}

/// One workspace's cache, as `cordon cache show` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct CacheEntry {
    /// The key (the directory's name below the base).
    pub key: String,
    /// The workspace it belongs to, when its stamp says.
    pub workspace: Option<String>,
    /// Bytes used: the toolchain caches and the private home together.
    pub bytes: u64,
    /// Of which the private home (`<key>.home`).
    pub home_bytes: u64,
    /// Seconds since the Unix epoch of the last launch, when known.
    pub last_used: Option<u64>,
}

/// Every workspace's cache below `base`, sorted by key.
pub fn entries(base: &Path) -> Vec<CacheEntry> {
    let Ok(dir) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let Some(key) = name
            .to_str()
            .filter(|n| kind.is_dir() && !n.ends_with(CacheLayout::HOME_SUFFIX))
        else {
            continue;
        };
        let stamp = base.join(format!("{key}{USED_SUFFIX}"));
        let last_used = std::fs::metadata(&stamp)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        let workspace = std::fs::read(&stamp)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let home_bytes = size_of(&base.join(home_name(key)));
        out.push(CacheEntry {
            key: key.to_owned(),
            workspace,
            bytes: size_of(&entry.path()).saturating_add(home_bytes),
            home_bytes,
            last_used,
        });
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// Removes the cache `key` below `base`, its private home and its use stamp (nothing when they
/// do not exist).
pub fn clear(base: &Path, key: &str) -> Result<(), CacheError> {
    for dir in [base.join(key), base.join(home_name(key))] {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&dir)(e)),
        }
    }
    let _ = std::fs::remove_file(base.join(format!("{key}{USED_SUFFIX}")));
    Ok(())
}

/// The size bound: when every cache together is over `max` bytes, the least recently used
/// workspaces' caches are removed until it is not, `current`'s last (emptied too when it alone
/// is over). Unless `force`, only when the last check is ten minutes old.
fn bound(base: &Path, current: &str, max: u64, force: bool) -> Result<Vec<String>, CacheError> {
    let stamp = base.join(CHECKED_STAMP);
    if crate::host::stamp::touched_within(&stamp, CHECK_EVERY) && !force {
        return Ok(Vec::new());
    }
    std::fs::write(&stamp, b"").map_err(io(&stamp))?;
    let mut all = entries(base);
    let mut total: u64 = all.iter().map(|e| e.bytes).sum();
    let mut warnings = Vec::new();
    // Oldest first; the current workspace's last whatever its stamp says.
    all.sort_by_key(|e| (e.key == current, e.last_used.unwrap_or(0)));
    for e in all {
        if total <= max {
            break;
        }
        clear(base, &e.key)?;
        total = total.saturating_sub(e.bytes);
        warnings.push(format!(
            "toolchain caches and private homes over {max} bytes: removed the cache and home of {} ({} bytes)",
            e.workspace.as_deref().unwrap_or(&e.key),
            e.bytes
        ));
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_link_planted_where_a_tool_dir_belongs_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("tools");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let (base, fd) = open_base(&base).unwrap();
        let root = base.join("ws-0011223344556677");
        std::fs::create_dir(&root).unwrap();
        // A jail replaced `m2` with a link to a host directory.
        std::os::unix::fs::symlink(&outside, root.join("m2")).unwrap();
        let layout = CacheLayout {
            home: base.join("ws-0011223344556677.home"),
            root: root.clone(),
            vars: Default::default(),
            dirs: vec![root.join("m2/repository"), root.join("go-build")],
            links: vec![cordon_policy::CacheLink {
                link: root.join("m2/registry"),
                target: PathBuf::from("/nowhere"),
            }],
        };
        make_layout(&fd, &layout).unwrap();
        assert!(root.join("go-build").is_dir());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn the_bound_removes_the_least_recently_used_first() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("tools");
        let (base, _fd) = open_base(&base).unwrap();
        for (key, age) in [("old", 3000), ("new", 10), ("cur", 5000)] {
            std::fs::create_dir(base.join(key)).unwrap();
            std::fs::write(base.join(key).join("blob"), vec![7u8; 64 * 1024]).unwrap();
            let stamp = std::fs::File::create(base.join(format!("{key}.used"))).unwrap();
            stamp
                .set_modified(SystemTime::now() - Duration::from_secs(age))
                .unwrap();
        }
        let one = size_of(&base.join("old"));
        let warnings = bound(&base, "cur", 2 * one, true).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(!base.join("old").exists());
        assert!(base.join("new").exists() && base.join("cur").exists());
        // Within ten minutes of a check nothing is summed again.
        assert!(bound(&base, "cur", 0, false).unwrap().is_empty());
        // The current workspace's cache goes last, and goes when it alone is over.
        let warnings = bound(&base, "cur", 0, true).unwrap();
        assert_eq!(warnings.len(), 2);
        assert!(!base.join("cur").exists());
    }

    #[test]
    fn the_private_home_is_counted_with_its_cache_listed_once_and_cleared_with_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (base, fd) = open_base(&tmp.path().join("tools")).unwrap();
        std::fs::create_dir(base.join("ws")).unwrap();
        assert!(
            subdir(&fd, home_name("ws").as_ref(), &base)
                .unwrap()
                .is_some()
        );
        std::fs::create_dir_all(base.join("ws.home/.cache/x")).unwrap();
        std::fs::write(base.join("ws.home/.cache/x/y"), vec![3u8; 128 * 1024]).unwrap();
        let list = entries(&base);
        assert_eq!(list.len(), 1, "{list:?}");
        assert!(list[0].home_bytes >= 128 * 1024, "{list:?}");
        assert!(list[0].bytes >= list[0].home_bytes);
        clear(&base, "ws").unwrap();
        assert!(!base.join("ws").exists() && !base.join("ws.home").exists());
    }

    #[test]
    fn size_does_not_follow_links() {
        let tmp = tempfile::tempdir().unwrap();
        let big = tmp.path().join("big");
        std::fs::write(&big, vec![1u8; 256 * 1024]).unwrap();
        let dir = tmp.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&big, dir.join("l")).unwrap();
        assert!(size_of(&dir) < 64 * 1024);
    }
}
