//! The real host for planning, with the `#!` lines of the programs on `PATH` remembered between
//! runs ([`CachingHost`]).
//!
//! A hidden home shows what the programs on `PATH` need (`cordon_policy`'s walk reads the head
//! of every regular file in a `PATH` entry below the home for its interpreter). A version
//! manager's shims directory holds hundreds of small scripts, and opening each costs more than
//! the rest of the plan: the heads are kept in cordon's cache, one file per directory, and
//! reused for a program only while its `lstat` (inode, size, modification and change times, all
//! to the nanosecond) is the one recorded. A program whose change time is within
//! [`SETTLING`](super::stamp::SETTLING) of the moment it was read is not recorded: a write in
//! the same clock tick could leave every recorded field as it was (git's "racy" index entries).
//!
//! The cache lives in cordon's own state, which no jail can write; a cache file that does not
//! parse, names another directory or is from another format is ignored and rewritten. Writing
//! it is best effort (a temporary file renamed over the old one); a failure costs only speed.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cordon_policy::{EntryKind, HostFacts, RealHost};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::stamp::Stamp;
use super::walks::Look;

/// The cache files' format.
const FORMAT: u32 = 1;

/// [`RealHost`], with [`HostFacts::read_heads`] served from a cache in `dir` where the files
/// are unchanged, and each path's `kind`, link and canonical form asked once
/// (`host/snapshot.rs`): make one per plan, its answers are that plan's snapshot.
#[derive(Debug, Clone)]
pub struct CachingHost {
    inner: RealHost,
    dir: Option<PathBuf>,
    /// The clock settling is measured against (a test's runs ahead).
    pub(super) now: fn() -> SystemTime,
    /// `kind`, `read_link` and `canonicalize`, asked once per path: one instance per plan.
    seen: super::snapshot::Snapshot,
}

impl CachingHost {
    /// The real host with the home `home` (as [`RealHost::new`]); the heads are kept in `dir`
    /// (`None`: not kept).
    pub fn new(home: Option<OsString>, dir: Option<PathBuf>) -> CachingHost {
        CachingHost {
            inner: RealHost::new(home),
            dir,
            now: SystemTime::now,
            seen: super::snapshot::Snapshot::default(),
        }
    }
}

/// What was recorded of one program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Recorded {
    /// The program's name.
    name: String,
    stat: Stamp,
    /// Its `#!` line, up to and including the newline (empty when it has none).
    line: String,
}

/// One cache file: the directory it is about and its programs.
#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    dir: String,
    programs: Vec<Recorded>,
}

/// The `#!` line at the start of `head` (up to and including its newline), empty when there is
/// none; `None` when it is not UTF-8 (such a program is read every time).
fn first_line(head: &[u8]) -> Option<String> {
    if !head.starts_with(b"#!") {
        return Some(String::new());
    }
    let line = match head.iter().position(|b| *b == b'\n') {
        Some(end) => &head[..=end],
        None => head,
    };
    String::from_utf8(line.to_vec()).ok()
}

impl CachingHost {
    fn cache_file(&self, dir: &Path) -> Option<PathBuf> {
        let digest = Sha256::digest(dir.as_os_str().as_bytes());
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.as_ref().map(|d| d.join(format!("{name}.json")))
    }

    fn load(&self, file: &Path, dir: &str) -> BTreeMap<String, Recorded> {
        let Ok(text) = std::fs::read(file) else {
            return BTreeMap::new();
        };
        match serde_json::from_slice::<CacheFile>(&text) {
            Ok(c) if c.format == FORMAT && c.dir == dir => c
                .programs
                .into_iter()
                .map(|r| (r.name.clone(), r))
                .collect(),
            _ => BTreeMap::new(),
        }
    }

    fn store(&self, file: &Path, dir: &str, programs: Vec<Recorded>) {
        let Some(parent) = file.parent() else {
            return;
        };
        let contents = CacheFile {
            format: FORMAT,
            dir: dir.to_owned(),
            programs,
        };
        let Ok(bytes) = serde_json::to_vec(&contents) else {
            return;
        };
        let tmp = parent.join(format!(
            ".{}.{}",
            file.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            std::process::id()
        ));
        let written = std::fs::create_dir_all(parent)
            .and_then(|()| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, file));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The first `max` bytes of the regular file `name` in the directory `dirfd`, opened beside the
/// others (`O_NOFOLLOW`, and `O_NONBLOCK` so a FIFO put there since the listing cannot block the
/// walk), checked to be a regular file on the opened descriptor.
fn head_at(dirfd: &OwnedFd, name: &OsString, max: usize) -> Option<Vec<u8>> {
    let flags =
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = rustix::fs::openat(dirfd, name.as_os_str(), flags, Mode::empty()).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut head = Vec::with_capacity(max);
    std::fs::File::from(fd)
        .take(max as u64)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

impl HostFacts for CachingHost {
    fn home_dir(&self) -> Option<PathBuf> {
        self.inner.home_dir()
    }
    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        self.seen.canonicalize(&self.inner, path)
    }
    fn kind(&self, path: &Path) -> Option<EntryKind> {
        self.seen.kind(&self.inner, path)
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        self.seen.read_link(&self.inner, path)
    }
    fn read_small_text(&self, path: &Path) -> Option<String> {
        self.seen.recorder.note(path, Look::Contents);
        self.inner.read_small_text(path)
    }
    fn list_dir(&self, path: &Path) -> Option<Vec<OsString>> {
        self.seen.recorder.note(path, Look::Entries);
        self.inner.list_dir(path)
    }
    fn list_dir_kinds(&self, path: &Path) -> Option<Vec<(OsString, EntryKind)>> {
        self.seen.recorder.note(path, Look::Entries);
        self.inner.list_dir_kinds(path)
    }
    fn read_head(&self, path: &Path, max: usize) -> Option<Vec<u8>> {
        self.seen.recorder.note(path, Look::Contents);
        self.inner.read_head(path, max)
    }

    fn recall_walk(&self, inputs: &[u8]) -> Option<Vec<(PathBuf, String)>> {
        let dir = self.dir.as_ref()?;
        let recalled = super::walks::Walks { dir }.recall(inputs);
        if recalled.is_none() {
            self.seen.recorder.start();
        }
        recalled
    }

    fn remember_walk(&self, inputs: &[u8], trees: &[(PathBuf, String)]) {
        let (Some(dir), Some(looked)) = (self.dir.as_ref(), self.seen.recorder.take()) else {
            return;
        };
        super::walks::Walks { dir }.remember(inputs, trees, looked, (self.now)());
    }

    fn read_heads(&self, dir: &Path, names: &[OsString], max: usize) -> Vec<Option<Vec<u8>>> {
        if names.is_empty() {
            return Vec::new();
        }
        self.seen.recorder.note(dir, Look::Entries);
        for name in names {
            self.seen.recorder.note(&dir.join(name), Look::ContentsHere);
        }
        let Ok(dirfd) = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return vec![None; names.len()];
        };
        // Without a cache directory, or for a directory whose path is not UTF-8: read them all.
        let (Some(file), Some(dir_str)) = (self.cache_file(dir), dir.to_str()) else {
            return names.iter().map(|n| head_at(&dirfd, n, max)).collect();
        };
        let known = self.load(&file, dir_str);
        let now = (self.now)();
        let mut out: Vec<Option<Vec<u8>>> = vec![None; names.len()];
        let mut stamps: Vec<Option<Stamp>> = vec![None; names.len()];
        let mut unknown: Vec<usize> = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let Ok(st) = rustix::fs::statat(&dirfd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                continue;
            }
            let stamp = Stamp::of(&st);
            stamps[i] = Some(stamp);
            match name.to_str().and_then(|n| known.get(n)) {
                Some(r) if r.stat == stamp && stamp.settled(now) => {
                    out[i] = Some(r.line.clone().into_bytes());
                }
                _ => unknown.push(i),
            }
        }
        for &i in &unknown {
            out[i] = head_at(&dirfd, &names[i], max);
        }
        let mut record = Vec::new();
        for (i, name) in names.iter().enumerate() {
            // A program changed after its `lstat` has a newer stamp than the one recorded
            // here, so the record is never served for it.
            if let (Some(stamp), Some(head), Some(name)) = (stamps[i], &out[i], name.to_str())
                && stamp.settled(now)
                && let Some(line) = first_line(head)
            {
                record.push(Recorded {
                    name: name.to_owned(),
                    stat: stamp,
                    line,
                });
            }
        }
        // Written only when it would say something else: a program that is never recorded
        // (unreadable, a name that is not UTF-8) costs a read per run, not a write.
        let same =
            record.len() == known.len() && record.iter().all(|r| known.get(&r.name) == Some(r));
        if !same {
            self.store(&file, dir_str, record);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::host::stamp::SETTLING;
    use std::time::Duration;

    fn ahead() -> SystemTime {
        SystemTime::now() + SETTLING + Duration::from_secs(1)
    }

    fn dirs(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
        let tmp = std::env::temp_dir().join(format!("cordon-heads-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let bin = tmp.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        (tmp.clone(), bin, tmp.join("cache"))
    }

    fn names(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    const SCRIPT: &[u8] = b"#!/home/u/venv/bin/python\nprint()\n";

    #[test]
    fn settled_heads_are_served_from_the_cache_until_the_file_changes() {
        let (tmp, bin, cache) = dirs("served");
        std::fs::write(bin.join("a"), SCRIPT).unwrap();
        std::fs::write(bin.join("b"), b"\x7fELF....").unwrap();
        std::os::unix::fs::symlink("a", bin.join("l")).unwrap();
        let list = names(&["a", "b", "l"]);
        let h = CachingHost {
            now: ahead,
            ..CachingHost::new(None, Some(cache))
        };

        let first = h.read_heads(&bin, &list, 256);
        assert_eq!(first[0].as_deref(), Some(SCRIPT));
        assert!(first[1].is_some());
        assert_eq!(first[2], None, "a symlink is not followed");
        let file = h.cache_file(&bin).unwrap();
        let bin_str = bin.to_str().unwrap();
        let recorded = h.load(&file, bin_str);
        assert_eq!(recorded.len(), 2, "{recorded:?}");
        assert_eq!(recorded["a"].line, "#!/home/u/venv/bin/python\n");
        assert_eq!(recorded["b"].line, "");

        // The record is what is served while the stamp matches: make it say something else.
        let mut forged = recorded["a"].clone();
        forged.line = "#!/cached\n".into();
        h.store(&file, bin_str, vec![forged]);
        assert_eq!(
            h.read_heads(&bin, &list, 256)[0].as_deref(),
            Some(&b"#!/cached\n"[..])
        );

        // A change of the file changes its stamp: read again.
        std::fs::write(bin.join("a"), b"#!/bin/sh\n").unwrap();
        assert_eq!(
            h.read_heads(&bin, &list, 256)[0].as_deref(),
            Some(&b"#!/bin/sh\n"[..])
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn a_program_changed_within_the_settling_time_is_read_and_not_recorded() {
        let (tmp, bin, cache) = dirs("racy");
        std::fs::write(bin.join("a"), SCRIPT).unwrap();
        let h = CachingHost::new(None, Some(cache));
        let list = names(&["a"]);
        assert_eq!(h.read_heads(&bin, &list, 256)[0].as_deref(), Some(SCRIPT));
        let file = h.cache_file(&bin).unwrap();
        let bin_str = bin.to_str().unwrap();
        assert!(h.load(&file, bin_str).is_empty());
        // Even a record with the very stamp is not served while the change is that recent.
        let st = rustix::fs::lstat(bin.join("a")).unwrap();
        h.store(
            &file,
            bin_str,
            vec![Recorded {
                name: "a".into(),
                stat: Stamp::of(&st),
                line: "#!/cached\n".into(),
            }],
        );
        assert_eq!(h.read_heads(&bin, &list, 256)[0].as_deref(), Some(SCRIPT));
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn heads_are_of_regular_files_only_and_a_fifo_never_blocks() {
        let (tmp, bin, cache) = dirs("kinds");
        std::fs::write(bin.join("script"), SCRIPT).unwrap();
        std::os::unix::fs::symlink("script", bin.join("link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            bin.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let list = names(&["script", "link", "fifo", "missing"]);
        for dir in [Some(cache), None] {
            let heads = CachingHost::new(None, dir).read_heads(&bin, &list, 4);
            assert_eq!(heads, vec![Some(b"#!/h".to_vec()), None, None, None]);
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn the_cache_file_is_written_only_when_its_record_changes() {
        let (tmp, bin, cache) = dirs("unchanged");
        std::fs::write(bin.join("a"), SCRIPT).unwrap();
        let h = CachingHost {
            now: ahead,
            ..CachingHost::new(None, Some(cache))
        };
        // "gone" is listed but not there: never recorded, and no reason to write again.
        let list = names(&["a", "gone"]);
        h.read_heads(&bin, &list, 256);
        let file = h.cache_file(&bin).unwrap();
        let written = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        h.read_heads(&bin, &list, 256);
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            written
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn a_cache_file_of_another_directory_or_format_is_ignored() {
        let (tmp, bin, cache) = dirs("other");
        let h = CachingHost::new(None, Some(cache));
        let file = h.cache_file(&bin).unwrap();
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let record = Recorded {
            name: "a".into(),
            stat: Stamp {
                dev: 0,
                ino: 0,
                size: 0,
                mtime: (0, 0),
                ctime: (0, 0),
            },
            line: String::new(),
        };
        let bin_str = bin.to_str().unwrap();
        for (format, dir) in [(FORMAT, "/elsewhere"), (FORMAT + 1, bin_str)] {
            let wrong = CacheFile {
                format,
                dir: dir.to_owned(),
                programs: vec![record.clone()],
            };
            std::fs::write(&file, serde_json::to_vec(&wrong).unwrap()).unwrap();
            assert!(h.load(&file, bin_str).is_empty());
        }
        std::fs::write(&file, b"not json").unwrap();
        assert!(h.load(&file, bin_str).is_empty());
        assert_eq!(first_line(b"#!/bin/sh\nrest").unwrap(), "#!/bin/sh\n");
        assert_eq!(first_line(b"\x7fELF").unwrap(), "");
        assert_eq!(first_line(b"#!/bin/\xff\n"), None);
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
