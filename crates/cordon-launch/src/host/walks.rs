//! The `PATH` walk's answer remembered between runs, with what the walk looked at.
//!
//! A hidden home shows what the programs on `PATH` need, and finding it means looking at every
//! program of every entry below the home (`cordon_policy`'s walk): a version manager's `PATH`
//! is hundreds of programs, each an `lstat`, a `readlink` or a read, and a launch pays for all of
//! them. While [`CachingHost`](super::heads::CachingHost) plans, what the walk asks is noted
//! ([`Looked`]), each path with what its answer rests on ([`Look`]): a name's kind or a link's
//! target rests on which file is there (its identity: device, inode, type, birth time; a link
//! cannot be changed in place, and an inode never changes its type), a listing on the
//! directory's entries, a head on the file's contents (both: device, inode, size, modification
//! and change times to the nanosecond). The answer is kept in cordon's cache with those stamps
//! and served again only while every one is the one recorded, so any change the walk could have
//! seen makes the next run walk again, while a new file elsewhere in `/tmp` or the home does
//! not. As for the heads (`heads.rs`), nothing is recorded while one of those paths changed (or,
//! for an identity, was made) less than [`SETTLING`](super::stamp::SETTLING) ago, so a change in
//! the same clock tick as the walk is never hidden behind an unchanged stamp.
//!
//! The cache is keyed by the walk's inputs (the home, `PATH`, the writable roots the walk must
//! not pass through, the walk's version), lives in cordon's own state, which no jail can write,
//! and holds at most [`MAX_WALKS`] answers; a file that does not parse is ignored and rewritten.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustix::fs::{AtFlags, CWD, Mode, OFlags, StatxFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::stamp::{Stamp, settled_since};

/// Remembered walks kept, the most recently written first.
pub(crate) const MAX_WALKS: usize = 64;
/// The walk files' format.
const FORMAT: u32 = 2;

/// What an answer about a path rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum Look {
    /// Which file is at the name, not following it (a kind, a link's target).
    Identity,
    /// The directory's entries, following (a listing).
    Entries,
    /// The file's contents, following (a head read by path).
    Contents,
    /// The file's contents, not following (a head read beside its directory).
    ContentsHere,
}

/// What one walk looked at.
#[derive(Debug, Clone, Default)]
pub(crate) struct Looked {
    paths: BTreeSet<(OsString, Look)>,
    /// A question whose answer has no stamp (a relative path's canonical form): not remembered.
    unstamped: bool,
}

/// Notes what is asked while a walk is being recorded (between a missed recall and
/// the remember).
#[derive(Debug, Clone, Default)]
pub(crate) struct Recorder {
    looked: RefCell<Option<Looked>>,
}

impl Recorder {
    /// Starts noting.
    pub(crate) fn start(&self) {
        *self.looked.borrow_mut() = Some(Looked::default());
    }

    /// Whether a walk is being noted.
    pub(crate) fn recording(&self) -> bool {
        self.looked.borrow().is_some()
    }

    /// `path`, and what the answer about it rests on.
    pub(crate) fn note(&self, path: &Path, look: Look) {
        if let Some(l) = self.looked.borrow_mut().as_mut() {
            l.paths.insert((path.as_os_str().to_owned(), look));
        }
    }

    /// An answer that no stamp covers was given: the walk is not remembered.
    pub(crate) fn unstamped(&self) {
        if let Some(l) = self.looked.borrow_mut().as_mut() {
            l.unstamped = true;
        }
    }

    /// Stops noting and returns what was noted.
    pub(crate) fn take(&self) -> Option<Looked> {
        self.looked.borrow_mut().take()
    }
}

/// Which file is at a name: device, inode, type and birth (its change time where the file
/// system keeps no birth time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Identity {
    dev: (u32, u32),
    ino: u64,
    kind: u16,
    born: (i64, u32),
}

impl Identity {
    fn settled(&self, now: SystemTime) -> bool {
        settled_since((self.born.0, i64::from(self.born.1)), now)
    }
}

/// A path's stamp, of the kind its [`Look`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Stamped {
    Identity(Identity),
    Stamp(Stamp),
}

impl Stamped {
    fn settled(&self, now: SystemTime) -> bool {
        match self {
            Stamped::Identity(i) => i.settled(now),
            Stamped::Stamp(s) => s.settled(now),
        }
    }
}

/// The stamp of `name` in `dir` (or of `name` itself when absolute) now, `None` when nothing
/// is there.
fn stamp_at(dir: impl AsFd, name: &Path, look: Look) -> Option<Stamped> {
    let follow = matches!(look, Look::Entries | Look::Contents);
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    if look != Look::Identity {
        return rustix::fs::statat(dir, name, flags)
            .ok()
            .map(|st| Stamped::Stamp(Stamp::of(&st)));
    }
    let st = rustix::fs::statx(
        dir,
        name,
        flags,
        StatxFlags::BASIC_STATS | StatxFlags::BTIME,
    )
    .ok()?;
    let born = if st.stx_mask & StatxFlags::BTIME.bits() != 0 {
        st.stx_btime
    } else {
        st.stx_ctime
    };
    Some(Stamped::Identity(Identity {
        dev: (st.stx_dev_major, st.stx_dev_minor),
        ino: st.stx_ino,
        kind: st.stx_mode & 0o170000,
        born: (born.tv_sec, born.tv_nsec),
    }))
}

/// One path looked at, by name in its directory, with its stamp.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Name {
    name: String,
    look: Look,
    /// `None`: nothing was there.
    stamp: Option<Stamped>,
}

/// One remembered walk: its answer, and the stamps of what it looked at when it was recorded,
/// by directory (each directory is opened once and its names asked relative to it).
#[derive(Debug, Serialize, Deserialize)]
struct WalkFile {
    format: u32,
    trees: Vec<(String, String)>,
    looked: Vec<(String, Vec<Name>)>,
}

/// The stamps of `names` in the directory `dir` now.
fn stamps_in(dir: &str, names: &[Name]) -> Vec<Option<Stamped>> {
    let fd: Option<OwnedFd> = rustix::fs::open(
        dir,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok();
    names
        .iter()
        .map(|n| match (&fd, n.name.as_str()) {
            // The root itself, and a directory that is gone (all its names are gone).
            (_, "") => stamp_at(CWD, Path::new(dir), n.look),
            (Some(fd), name) => stamp_at(fd, Path::new(name), n.look),
            (None, _) => None,
        })
        .collect()
}

/// The remembered walks in the directory `dir`.
#[derive(Debug, Clone)]
pub(crate) struct Walks<'a> {
    pub(crate) dir: &'a Path,
}

impl Walks<'_> {
    fn file(&self, inputs: &[u8]) -> PathBuf {
        let digest = Sha256::digest(inputs);
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("walk-{name}.json"))
    }

    /// The answer remembered for `inputs`, if every path it looked at has the stamp recorded.
    pub(crate) fn recall(&self, inputs: &[u8]) -> Option<Vec<(PathBuf, String)>> {
        let text = std::fs::read(self.file(inputs)).ok()?;
        let walk: WalkFile = serde_json::from_slice(&text).ok()?;
        if walk.format != FORMAT {
            return None;
        }
        for (dir, names) in &walk.looked {
            let now = stamps_in(dir, names);
            if !names.iter().zip(now).all(|(n, now)| n.stamp == now) {
                return None;
            }
        }
        Some(
            walk.trees
                .into_iter()
                .map(|(p, why)| (PathBuf::from(p), why))
                .collect(),
        )
    }

    /// Keeps `trees` as the answer for `inputs`, with the stamps of what `looked` names, unless
    /// one of them changed within the settling time of `now` or a path is not UTF-8. Best
    /// effort: a failure costs only speed.
    pub(crate) fn remember(
        &self,
        inputs: &[u8],
        trees: &[(PathBuf, String)],
        looked: Looked,
        now: SystemTime,
    ) {
        // A walk that listed nothing (no `PATH` entry below the home) costs less than its
        // record would: it is not kept, and nothing is written.
        if looked.unstamped || !looked.paths.iter().any(|(_, l)| *l == Look::Entries) {
            return;
        }
        // A name whose contents are stamped needs no identity of its own: the stamp holds it.
        let contents: BTreeSet<&OsString> = looked
            .paths
            .iter()
            .filter(|(_, l)| *l == Look::ContentsHere)
            .map(|(p, _)| p)
            .collect();
        let mut by_dir: BTreeMap<String, Vec<Name>> = BTreeMap::new();
        for (path, look) in &looked.paths {
            if *look == Look::Identity && contents.contains(path) {
                continue;
            }
            let Some(path) = path.to_str() else {
                return;
            };
            let path = Path::new(path);
            let (dir, name) = match (path.parent(), path.file_name()) {
                (Some(d), Some(n)) => (d.to_str(), n.to_str()),
                // `/`: its own directory, named by the empty name.
                _ => (path.to_str(), Some("")),
            };
            let (Some(dir), Some(name)) = (dir, name) else {
                return;
            };
            by_dir.entry(dir.to_owned()).or_default().push(Name {
                name: name.to_owned(),
                look: *look,
                stamp: None,
            });
        }
        let mut list: Vec<(String, Vec<Name>)> = by_dir.into_iter().collect();
        for (dir, names) in &mut list {
            let now = stamps_in(dir, names);
            for (n, now) in names.iter_mut().zip(now) {
                n.stamp = now;
            }
        }
        let stamps = list.iter().flat_map(|(_, n)| n.iter().map(|n| n.stamp));
        if stamps.flatten().any(|s| !s.settled(now)) {
            return;
        }
        let mut kept = Vec::with_capacity(trees.len());
        for (tree, why) in trees {
            let Some(tree) = tree.to_str() else {
                return;
            };
            kept.push((tree.to_owned(), why.clone()));
        }
        let walk = WalkFile {
            format: FORMAT,
            trees: kept,
            looked: list,
        };
        let Ok(bytes) = serde_json::to_vec(&walk) else {
            return;
        };
        let file = self.file(inputs);
        let tmp = self.dir.join(format!(".walk.{}", std::process::id()));
        let written = std::fs::create_dir_all(self.dir)
            .and_then(|()| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, &file));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        self.prune();
    }

    /// Removes all but the [`MAX_WALKS`] most recently written walks.
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(self.dir) else {
            return;
        };
        let mut walks: Vec<(SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("walk-"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if walks.len() <= MAX_WALKS {
            return;
        }
        walks.sort_by_key(|w| std::cmp::Reverse(w.0));
        for (_, old) in walks.split_off(MAX_WALKS) {
            let _ = std::fs::remove_file(old);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::symlink;
    use std::time::Duration;

    use cordon_policy::{Invocation, Plan, Policy, Profile};

    use super::*;
    use crate::CachingHost;
    use crate::host::stamp::SETTLING;

    fn ahead() -> SystemTime {
        SystemTime::now() + SETTLING_AND_A_SECOND
    }
    const SETTLING_AND_A_SECOND: Duration = Duration::from_secs(SETTLING.as_secs() + 1);

    /// A home with a tool whose script runs an interpreter in another tree of the home.
    struct Home {
        tmp: tempfile::TempDir,
    }

    impl Home {
        fn new() -> Home {
            let tmp = tempfile::tempdir().unwrap();
            let h = Home { tmp };
            for d in [
                "home/tool/bin",
                "home/py/bin",
                "home/py2/bin",
                "home/other/bin",
                "ws",
            ] {
                std::fs::create_dir_all(h.at(d)).unwrap();
            }
            std::fs::write(h.at("home/py/bin/python"), b"\x7fELF").unwrap();
            std::fs::write(h.at("home/py2/bin/python"), b"\x7fELF").unwrap();
            std::fs::write(h.at("home/other/bin/x"), b"\x7fELF").unwrap();
            h.script("#!{home}/py/bin/python");
            h
        }
        fn at(&self, rel: &str) -> PathBuf {
            std::fs::canonicalize(self.tmp.path()).unwrap().join(rel)
        }
        fn script(&self, line: &str) {
            let line = line.replace("{home}", self.at("home").to_str().unwrap());
            std::fs::write(self.at("home/tool/bin/prog"), format!("{line}\nrun\n")).unwrap();
        }
        fn cache(&self) -> PathBuf {
            self.at("cache")
        }
        /// The trees the plan shows from the home, each relative to it.
        fn shown(&self, path: &str, now: fn() -> SystemTime) -> Vec<String> {
            let mut host = CachingHost::new(Some(self.at("home").into()), Some(self.cache()));
            host.now = now;
            let path = path.replace("{home}", self.at("home").to_str().unwrap());
            let plan = Plan::resolve(
                &Policy::for_profile(Profile::Shell),
                &Invocation::at(self.at("ws")).with_host_env([("PATH", path.as_str())]),
                &host,
            )
            .unwrap();
            let home = self.at("home");
            let mut out: Vec<String> = plan
                .home_trees
                .iter()
                .filter_map(|t| t.path.strip_prefix(&home).ok())
                .map(|t| t.to_string_lossy().into_owned())
                .collect();
            out.sort();
            out
        }
        fn walk_files(&self) -> Vec<PathBuf> {
            let Ok(entries) = std::fs::read_dir(self.cache()) else {
                return Vec::new();
            };
            let mut out: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("walk-")
                })
                .collect();
            out.sort();
            out
        }
        /// Makes the one remembered walk say it showed `extra` too.
        fn forge(&self, extra: &str) {
            let files = self.walk_files();
            assert_eq!(files.len(), 1, "{files:?}");
            let mut walk: WalkFile =
                serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
            walk.trees.push((
                self.at("home").join(extra).to_string_lossy().into_owned(),
                "forged".into(),
            ));
            std::fs::write(&files[0], serde_json::to_vec(&walk).unwrap()).unwrap();
        }
    }

    const PATH: &str = "{home}/tool/bin:/usr/bin";

    #[test]
    fn a_walk_is_served_again_while_nothing_it_looked_at_changed() {
        let h = Home::new();
        let first = h.shown(PATH, ahead);
        assert_eq!(first, ["py", "tool/bin"]);
        assert_eq!(h.walk_files().len(), 1);
        // What is served is the record: make it say more.
        h.forge("other/bin");
        assert_eq!(h.shown(PATH, ahead), ["other/bin", "py", "tool/bin"]);
        // New files beside the home and in it (a shell's history, another test's directory in
        // `/tmp`) change nothing the walk looked at.
        std::fs::write(h.at("beside"), b"x").unwrap();
        std::fs::write(h.at("home/.history"), b"x").unwrap();
        assert_eq!(h.shown(PATH, ahead), ["other/bin", "py", "tool/bin"]);
        // Another PATH is another walk.
        assert_eq!(h.shown("{home}/other/bin:/usr/bin", ahead), ["other/bin"]);
        assert_eq!(h.walk_files().len(), 2);
        // One without entries below the home lists nothing: not kept.
        assert!(h.shown("/usr/bin:/bin", ahead).is_empty());
        assert_eq!(h.walk_files().len(), 2);
    }

    #[test]
    fn a_script_rewritten_in_place_is_walked_again() {
        let h = Home::new();
        assert_eq!(h.shown(PATH, ahead), ["py", "tool/bin"]);
        h.forge("other/bin");
        // Same name, same directory entries: only the file's own stamp changes.
        h.script("#!{home}/py2/bin/python");
        assert_eq!(h.shown(PATH, ahead), ["py2", "tool/bin"]);
    }

    #[test]
    fn a_new_program_or_a_moved_link_target_is_walked_again() {
        let h = Home::new();
        assert_eq!(h.shown(PATH, ahead), ["py", "tool/bin"]);
        h.forge("py2");
        symlink(h.at("home/link/x"), h.at("home/tool/bin/x")).unwrap();
        symlink(h.at("home/other/bin"), h.at("home/link")).unwrap();
        assert_eq!(h.shown(PATH, ahead), ["other/bin", "py", "tool/bin"]);
        // The program's link is unchanged; the link it passes through, in another directory,
        // now leads elsewhere (a stale answer would still show `other/bin`).
        std::fs::write(h.at("home/py2/bin/x"), b"\x7fELF").unwrap();
        std::fs::remove_file(h.at("home/link")).unwrap();
        symlink(h.at("home/py2/bin"), h.at("home/link")).unwrap();
        assert_eq!(h.shown(PATH, ahead), ["py", "py2/bin", "tool/bin"]);
    }

    #[test]
    fn a_walk_over_a_recent_change_is_not_remembered_and_a_bad_file_is_walked_over() {
        let h = Home::new();
        // Everything was written just now: nothing is recorded at the real time.
        assert_eq!(h.shown(PATH, SystemTime::now), ["py", "tool/bin"]);
        assert!(h.walk_files().is_empty());
        assert_eq!(h.shown(PATH, ahead), ["py", "tool/bin"]);
        let files = h.walk_files();
        std::fs::write(&files[0], b"not json").unwrap();
        assert_eq!(h.shown(PATH, ahead), ["py", "tool/bin"]);
        assert!(serde_json::from_slice::<WalkFile>(&std::fs::read(&files[0]).unwrap()).is_ok());
    }

    #[test]
    fn at_most_max_walks_are_kept() {
        let h = Home::new();
        let walks = Walks { dir: &h.cache() };
        for i in 0..MAX_WALKS + 3 {
            let recorder = Recorder::default();
            recorder.start();
            recorder.note(&h.at("home"), Look::Entries);
            let looked = recorder.take().unwrap();
            walks.remember(format!("{i}").as_bytes(), &[], looked, ahead());
        }
        assert_eq!(h.walk_files().len(), MAX_WALKS);
    }
}
