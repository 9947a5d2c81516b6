//! The mount table, read once per scan from `/proc/thread-self/mountinfo`.
//!
//! `thread-self` rather than `self`: a mount namespace belongs to a thread, and `/proc/self`
//! names the thread-group leader, whose namespace a thread that called `unshare(CLONE_NEWNS)` no
//! longer shares. In an ordinary process the two are the same file.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::ScanError;

/// One mount as the kernel lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The mount ID (field 1), as `statx` reports it in `stx_mnt_id`.
    pub id: u64,
    /// Where it is mounted, unescaped (`\040` is a space).
    pub mount_point: PathBuf,
    /// The filesystem type (the first field after ` - `).
    pub fstype: String,
}

/// The mounts of one mount namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountTable {
    mounts: Vec<Mount>,
}

const THREAD_SELF: &str = "/proc/thread-self/mountinfo";
const SELF: &str = "/proc/self/mountinfo";

impl MountTable {
    /// Reads the calling thread's mount table (`/proc/self/mountinfo` on kernels without
    /// `/proc/thread-self`).
    pub fn read() -> Result<MountTable, ScanError> {
        let bytes = match std::fs::read(THREAD_SELF) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::read(SELF).map_err(|source| ScanError::MountTable {
                    path: SELF.into(),
                    source,
                })?
            }
            Err(source) => {
                return Err(ScanError::MountTable {
                    path: THREAD_SELF.into(),
                    source,
                });
            }
        };
        MountTable::parse(&bytes)
    }

    /// Parses mountinfo text (proc(5)): `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...]
    /// - FSTYPE SOURCE SUPER_OPTIONS`, one mount a line.
    pub fn parse(text: &[u8]) -> Result<MountTable, ScanError> {
        let mut mounts = Vec::new();
        for (index, line) in text.split(|b| *b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let bad = |why: &'static str| ScanError::MountTableLine {
                line: index + 1,
                why,
                text: String::from_utf8_lossy(line).into_owned(),
            };
            let fields: Vec<&[u8]> = line.split(|b| *b == b' ').collect();
            if fields.len() < 10 {
                return Err(bad("fewer than 10 fields"));
            }
            let id = std::str::from_utf8(fields[0])
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| bad("the mount ID is not a number"))?;
            let mount_point = unescape(fields[4]);
            if !mount_point.starts_with(b"/") {
                return Err(bad("the mount point is not absolute"));
            }
            let separator = fields
                .iter()
                .skip(6)
                .position(|f| *f == b"-")
                .map(|p| p + 6)
                .ok_or_else(|| bad("no ` - ` separator after the optional fields"))?;
            let fstype = fields
                .get(separator + 1)
                .filter(|f| !f.is_empty())
                .ok_or_else(|| bad("no filesystem type after the separator"))?;
            mounts.push(Mount {
                id,
                mount_point: PathBuf::from(OsStr::from_bytes(&mount_point)),
                fstype: String::from_utf8_lossy(&unescape(fstype)).into_owned(),
            });
        }
        Ok(MountTable { mounts })
    }

    /// Every mount, in the kernel's order.
    pub fn mounts(&self) -> &[Mount] {
        &self.mounts
    }

    /// The mounts whose mount point lies strictly beneath `root` (compared component by
    /// component, so `/w/ab` is not beneath `/w/a`).
    pub fn beneath<'a>(&'a self, root: &'a Path) -> impl Iterator<Item = &'a Mount> + 'a {
        self.mounts
            .iter()
            .filter(move |m| m.mount_point != root && m.mount_point.starts_with(root))
    }
}

/// Undoes the kernel's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` backslash).
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && let Some(digits) = field.get(i + 1..i + 4)
            && digits.iter().all(|d| (b'0'..=b'7').contains(d))
        {
            let value = digits
                .iter()
                .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(field[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // A fixture in the kernel's format: optional fields of different counts, an escaped space,
    // tab and backslash, and a mount point that only shares a prefix with the root.
    const FIXTURE: &[u8] = b"\
22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
40 22 0:35 / /work/proj/target rw,relatime shared:20 master:3 - tmpfs tmpfs rw
41 22 252:1 /srv/data /work/proj/my\\040data rw,relatime - ext4 /dev/vda rw
42 22 0:36 / /work/proj/tab\\011and\\134slash rw - tmpfs none rw
43 22 0:37 / /work/project2 rw - tmpfs none rw
44 22 0:38 / /work/proj rw - tmpfs none rw
";

    #[test]
    fn parses_ids_mount_points_and_types() {
        let table = MountTable::parse(FIXTURE).unwrap();
        assert_eq!(table.mounts().len(), 7);
        let m = &table.mounts()[2];
        assert_eq!(m.id, 40);
        assert_eq!(m.mount_point, Path::new("/work/proj/target"));
        assert_eq!(m.fstype, "tmpfs");
        assert_eq!(table.mounts()[0].fstype, "ext4");
    }

    #[test]
    fn unescapes_octal_sequences() {
        let table = MountTable::parse(FIXTURE).unwrap();
        assert_eq!(
            table.mounts()[3].mount_point,
            Path::new("/work/proj/my data")
        );
        assert_eq!(
            table.mounts()[4].mount_point,
            Path::new("/work/proj/tab\tand\\slash")
        );
    }

    #[test]
    fn beneath_is_strict_and_component_wise() {
        let table = MountTable::parse(FIXTURE).unwrap();
        let below: Vec<&Path> = table
            .beneath(Path::new("/work/proj"))
            .map(|m| m.mount_point.as_path())
            .collect();
        assert_eq!(
            below,
            [
                Path::new("/work/proj/target"),
                Path::new("/work/proj/my data"),
                Path::new("/work/proj/tab\tand\\slash"),
            ]
        );
        // The root itself being a mount point is not a finding, nor is a sibling sharing a prefix.
        assert!(
            table
                .beneath(Path::new("/work/proj/target"))
                .next()
                .is_none()
        );
    }

    #[test]
    fn refuses_malformed_lines_naming_the_line() {
        let err = MountTable::parse(b"22 1 252:1 / / rw shared:1 - ext4 /dev/vda rw\nnonsense\n")
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 2"), "{text}");
        assert!(text.contains("nonsense"), "{text}");

        let err = MountTable::parse(b"22 1 252:1 / / rw a b c d e\n").unwrap_err();
        assert!(err.to_string().contains("separator"), "{err}");

        let err = MountTable::parse(b"x 1 252:1 / / rw shared:1 - ext4 /dev/vda rw\n").unwrap_err();
        assert!(err.to_string().contains("mount ID"), "{err}");
    }

    #[test]
    fn reads_this_threads_table() {
        let table = MountTable::read().unwrap();
        assert!(
            table
                .mounts()
                .iter()
                .any(|m| m.mount_point == Path::new("/")),
            "the live mount table has no `/`"
        );
    }
}
