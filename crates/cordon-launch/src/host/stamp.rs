//! What a change of a file changes in its `lstat` ([`Stamp`]), and how long after a change a
//! stamp is trusted ([`SETTLING`]): the remembered `#!` lines (heads.rs) and `PATH` walks
//! (walks.rs) are served only while their files' stamps are the ones recorded. Also whether a
//! periodic bound's stamp file is recent ([`touched_within`]).

use std::time::{Duration, SystemTime};

use rustix::fs::Stat;
use serde::{Deserialize, Serialize};

/// A file changed this recently is not recorded: a write in the same clock tick could leave
/// every recorded field as it was (git's "racy" index entries).
pub(crate) const SETTLING: Duration = Duration::from_secs(2);

/// Whether the file at `path` was modified less than `within` ago: the "at most every N
/// minutes" stamps of the periodic bounds (the toolchain caches' size, the layer state's prune).
pub(crate) fn touched_within(path: &std::path::Path, within: Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < within)
}

/// The fields of an `lstat` that a change of the file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: i64,
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

impl Stamp {
    pub(crate) fn of(st: &Stat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            size: st.st_size,
            mtime: (st.st_mtime, i64::try_from(st.st_mtime_nsec).unwrap_or(0)),
            ctime: (st.st_ctime, i64::try_from(st.st_ctime_nsec).unwrap_or(0)),
        }
    }

    /// Whether the file's change time is at least [`SETTLING`] before `now`.
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        settled_since(self.ctime, now)
    }
}

/// Whether the moment `(seconds, nanoseconds)` since the epoch is at least [`SETTLING`] before
/// `now` (a moment before the epoch or in the future is not).
pub(crate) fn settled_since((secs, nanos): (i64, i64), now: SystemTime) -> bool {
    let Ok(secs) = u64::try_from(secs) else {
        return false;
    };
    let nanos = u32::try_from(nanos).unwrap_or(0);
    let then = SystemTime::UNIX_EPOCH + Duration::new(secs, nanos);
    now.duration_since(then).is_ok_and(|age| age >= SETTLING)
}
