//! What the harness looks at on the host, before and after: directory listings, the shared
//! temporary trees, the mount table, control groups, processes by marker, and this process's own
//! descriptors and memory.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a killed jail's processes may take to disappear.
pub const KILLED_GRACE: Duration = Duration::from_secs(1);

/// One entry of a listing: type, permission bits, owner, size for files, target for symlinks,
/// and the names of its extended attributes (a placeholder's mark left on a person's directory
/// would show there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: char,
    pub mode: u32,
    pub uid: u32,
    /// File size; `None` for directories (whose size depends on past entries, not on content).
    pub size: Option<u64>,
    pub link: Option<PathBuf>,
    pub xattrs: Vec<String>,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {:04o} uid {}",
            self.kind,
            self.mode & 0o7777,
            self.uid
        )?;
        if let Some(size) = self.size {
            write!(f, " {size} B")?;
        }
        if let Some(link) = &self.link {
            write!(f, " -> {}", link.display())?;
        }
        if !self.xattrs.is_empty() {
            write!(f, " xattrs {}", self.xattrs.join(","))?;
        }
        Ok(())
    }
}

fn entry(meta: &std::fs::Metadata, path: &Path) -> Entry {
    let ft = meta.file_type();
    let kind = if ft.is_dir() {
        'd'
    } else if ft.is_symlink() {
        'l'
    } else if ft.is_file() {
        'f'
    } else {
        '?'
    };
    Entry {
        kind,
        mode: meta.permissions().mode(),
        uid: meta.uid(),
        size: ft.is_file().then_some(meta.len()),
        link: ft
            .is_symlink()
            .then(|| std::fs::read_link(path).unwrap_or_default()),
        xattrs: xattr_names(path),
    }
}

fn xattr_names(path: &Path) -> Vec<String> {
    let mut buf = vec![0u8; 1024];
    let Ok(n) = rustix::fs::llistxattr(path, &mut buf[..]) else {
        return Vec::new();
    };
    let mut names: Vec<String> = buf[..n.min(buf.len())]
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    names.sort();
    names
}

/// A listing: path → entry. The root itself is listed as `.`.
pub type Listing = BTreeMap<PathBuf, Entry>;

/// Everything below `root`, symlinks not followed, at most `depth` levels down (`None`: all).
pub fn listing(root: &Path, depth: Option<usize>) -> Listing {
    let mut out = Listing::new();
    if let Ok(meta) = std::fs::symlink_metadata(root) {
        out.insert(PathBuf::from("."), entry(&meta, root));
        walk(root, Path::new(""), depth, &mut out);
    }
    out
}

fn walk(root: &Path, rel: &Path, depth: Option<usize>, out: &mut Listing) {
    if depth == Some(0) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        let rel_child = rel.join(e.file_name());
        let path = root.join(&rel_child);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        out.insert(rel_child.clone(), entry(&meta, &path));
        if meta.is_dir() {
            walk(root, &rel_child, depth.map(|d| d - 1), out);
        }
    }
}

/// One difference between two listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added(PathBuf, Entry),
    Removed(PathBuf, Entry),
    Changed(PathBuf, Entry, Entry),
}

impl Change {
    pub fn path(&self) -> &Path {
        match self {
            Change::Added(p, _) | Change::Removed(p, _) | Change::Changed(p, _, _) => p,
        }
    }
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Added(p, e) => write!(f, "added {} ({e})", p.display()),
            Change::Removed(p, e) => write!(f, "removed {} ({e})", p.display()),
            Change::Changed(p, a, b) => write!(f, "changed {} ({a} -> {b})", p.display()),
        }
    }
}

pub fn diff(before: &Listing, after: &Listing) -> Vec<Change> {
    let mut out = Vec::new();
    for (p, a) in before {
        match after.get(p) {
            None => out.push(Change::Removed(p.clone(), a.clone())),
            Some(b) if a != b => out.push(Change::Changed(p.clone(), a.clone(), b.clone())),
            Some(_) => {}
        }
    }
    for (p, b) in after {
        if !before.contains_key(p) {
            out.push(Change::Added(p.clone(), b.clone()));
        }
    }
    out
}

/// The shared places where a launcher could leave something: the temporary trees (two levels),
/// the top of `/` (the self-check's last resort) and the `pids` control group directories.
pub const SHARED_ROOTS: &[(&str, usize)] = &[
    ("/tmp", 2),
    ("/var/tmp", 2),
    ("/dev/shm", 2),
    ("/run", 2),
    ("/", 1),
    ("/sys/fs/cgroup/pids", 1),
    ("/sys/fs/cgroup/unified", 1),
    ("/sys/fs/cgroup", 1),
];

/// Listings of every shared root, keyed by root.
pub fn shared_snapshot() -> BTreeMap<&'static str, Listing> {
    SHARED_ROOTS
        .iter()
        .map(|&(root, depth)| (root, listing(Path::new(root), Some(depth))))
        .collect()
}

/// Whether `path` names something this load's launchers made: it carries the session digits, or
/// it says `cordon` and holds one of the launchers' process ids as a whole number (cordon names
/// what it creates `cordon-…-<pid>-<nonce>`).
pub fn attributed(path: &Path, session: &str, pids: &[u32]) -> bool {
    path.to_string_lossy().contains(session) || names_launcher(path, pids)
}

/// Whether the file name of `path` says `cordon` and has one of `pids` as a whole `-`, `.` or
/// `_` separated word (`cordon-probe-<pid>-<nonce>`; digits inside a hex nonce do not count).
pub fn names_launcher(path: &Path, pids: &[u32]) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.to_ascii_lowercase().contains("cordon") {
        return false;
    }
    name.split(['-', '.', '_'])
        .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|w| w.parse::<u32>().ok())
        .any(|n| pids.contains(&n))
}

/// The host's mount table as (mount point, type, source) lines, counted.
pub fn mounts() -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let after_dash = fields.iter().position(|f| *f == "-");
        let (Some(point), Some(dash)) = (fields.get(4), after_dash) else {
            continue;
        };
        let fstype = fields.get(dash + 1).unwrap_or(&"?");
        let source = fields.get(dash + 2).unwrap_or(&"?");
        *out.entry(format!("{point} {fstype} {source}")).or_insert(0) += 1;
    }
    out
}

/// Every process but this one for which `keep` holds (given its pid, `/proc/<pid>` and its
/// command line with spaces for NULs): (pid, that command line).
fn processes_where(keep: impl Fn(u32, &Path, &str) -> bool) -> Vec<(u32, String)> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(bytes) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).replace('\0', " ");
        if keep(pid, &e.path(), &text) {
            out.push((pid, text.trim_end().to_owned()));
        }
    }
    out
}

/// Processes whose command line contains `needle`: (pid, command line with spaces for NULs).
pub fn processes_with(needle: &str) -> Vec<(u32, String)> {
    processes_where(|_, _, cmdline| cmdline.contains(needle))
}

/// Every session reaper still at work (by the name each gives itself, `/proc/<pid>/comm`: a
/// reaper the CLI forked keeps the CLI's command line), with its command line. One that ended is
/// not counted while it waits, a zombie, for the host's init to collect it (its launcher, its
/// parent, was killed).
pub fn reapers() -> Vec<(u32, String)> {
    let want = cordon_launch::REAPER_NAME.to_bytes();
    processes_where(|pid, dir, _| {
        std::fs::read(dir.join("comm"))
            .is_ok_and(|comm| comm.strip_suffix(b"\n").unwrap_or(&comm) == want)
            && state_of(pid) != Some('Z')
    })
}

/// The session reapers whose parent is `pid`.
pub fn reapers_of(pid: u32) -> Vec<(u32, String)> {
    reapers()
        .into_iter()
        .filter(|(child, _)| parent_of(*child) == Some(pid))
        .collect()
}

/// The state letter of `pid` (`R`, `S`, `Z`, …), from `/proc/<pid>/stat`.
fn state_of(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// The parent of `pid`, from `/proc/<pid>/stat` (the field after the parenthesised name).
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Polls until no process carries `needle` or `limit` passes; the survivors and how long the
/// last of them took to go.
pub fn wait_gone(needle: &str, limit: Duration) -> (Vec<(u32, String)>, Duration) {
    wait_gone_except(needle, limit, &[])
}

/// [`wait_gone`], not counting the processes `except`.
pub fn wait_gone_except(
    needle: &str,
    limit: Duration,
    except: &[u32],
) -> (Vec<(u32, String)>, Duration) {
    let start = Instant::now();
    loop {
        let mut alive = processes_with(needle);
        alive.retain(|(pid, _)| !except.contains(pid));
        if alive.is_empty() || start.elapsed() >= limit {
            return (alive, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Open descriptors, with what each points at.
pub type Descriptors = Vec<(i32, String)>;

/// This process's open descriptors.
pub fn descriptors() -> Descriptors {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    let mut out: Vec<(i32, String)> = entries
        .flatten()
        .filter_map(|e| {
            let fd = e.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(e.path()).ok()?;
            Some((fd, target.display().to_string()))
        })
        .collect();
    out.sort();
    out
}

/// This process's resident memory, in KiB.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Memory {
    /// After this many runs.
    pub runs: usize,
    pub vm_rss: u64,
    pub vm_hwm: u64,
    /// The anonymous part of `VmRSS` (the heap, thread stacks).
    pub rss_anon: u64,
    /// Threads of this process at that moment.
    pub threads: u64,
}

pub fn memory(runs: usize) -> Memory {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Memory {
        runs,
        vm_rss: field("VmRSS:"),
        vm_hwm: field("VmHWM:"),
        rss_anon: field("RssAnon:"),
        threads: field("Threads:"),
    }
}

/// 8 random decimal digits, the first non-zero.
pub fn session_digits() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    let n = u64::from_le_bytes(bytes) % 90_000_000 + 10_000_000;
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribution_needs_the_session_or_cordon_and_a_launcher_pid() {
        let pids = [4242, 77];
        assert!(attributed(
            Path::new("/tmp/loadjail-1234567800001"),
            "12345678",
            &pids
        ));
        assert!(attributed(
            Path::new("/tmp/cordon-probe-4242-ab12"),
            "12345678",
            &pids
        ));
        assert!(attributed(
            Path::new("/.cordon-selfcheck-77-ff"),
            "12345678",
            &pids
        ));
        assert!(!attributed(
            Path::new("/tmp/cordon-probe-4243-ab12"),
            "12345678",
            &pids
        ));
        assert!(!attributed(Path::new("/tmp/4242"), "12345678", &pids));
        assert!(!attributed(
            Path::new("/tmp/cordon-probe-1131-24f4242bde"),
            "12345678",
            &pids
        ));
        assert!(!attributed(
            Path::new("/tmp/cordon-4242/x"),
            "12345678",
            &pids
        ));
        assert!(!attributed(Path::new("/tmp/.tmpXy42"), "12345678", &pids));
    }

    #[test]
    fn a_listing_diff_names_added_removed_and_changed_entries() {
        let dir = std::env::temp_dir().join(format!("xtask-load-listing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let setup = std::fs::create_dir_all(dir.join("a"))
            .and_then(|()| std::fs::write(dir.join("a/f"), "1"))
            .and_then(|()| std::fs::write(dir.join("gone"), ""));
        assert!(setup.is_ok(), "{setup:?}");
        let before = listing(&dir, None);
        let change = std::fs::write(dir.join("a/f"), "12")
            .and_then(|()| std::fs::remove_file(dir.join("gone")))
            .and_then(|()| std::fs::create_dir(dir.join(".vscode")));
        assert!(change.is_ok(), "{change:?}");
        let after = listing(&dir, None);
        let _ = std::fs::remove_dir_all(&dir);
        let shown: Vec<String> = diff(&before, &after)
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert_eq!(shown.len(), 3, "{shown:?}");
        assert!(shown[0].starts_with("changed a/f (f "), "{shown:?}");
        assert!(
            shown[0].contains(" 1 B -> f ") && shown[0].ends_with(" 2 B)"),
            "{shown:?}"
        );
        assert!(shown[1].starts_with("removed gone"), "{shown:?}");
        assert!(shown[2].starts_with("added .vscode (d "), "{shown:?}");
    }

    #[test]
    fn a_process_is_found_by_its_marker_and_not_after_it_is_gone() {
        let marker = format!("60.0{}", session_digits());
        let child = std::process::Command::new("sleep").arg(&marker).spawn();
        assert!(child.is_ok(), "cannot start sleep: {child:?}");
        let Ok(mut child) = child else { return };
        // The child's command line is the test's own until its exec completes: look until it
        // shows (bounded), rather than racing the exec.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut found = processes_with(&marker);
        while found.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
            found = processes_with(&marker);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, child.id());
        let (alive, _) = wait_gone(&marker, KILLED_GRACE);
        assert!(alive.is_empty(), "{alive:?}");
    }
}
