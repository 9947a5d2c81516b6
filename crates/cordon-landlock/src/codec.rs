//! [`Rules`] as bytes, for the launcher to hand to the in-jail stage.
//!
//! The format is versioned and strict: decoding accepts exactly what [`Rules::encode`] writes
//! and refuses anything else (unknown version or flag, unknown right, an empty rule, a relative
//! path, a NUL byte, a length past the end, a trailing byte) with the offset and the reason.
//!
//! ```text
//! magic      4 bytes   "CLLR"
//! version    u8        1
//! flags      u8        bit 0 deny_tcp, bit 1 scope_signals, bit 2 scope_abstract_unix
//! rules      u32 LE    count, then per rule: access u64 LE, path length u32 LE, path bytes
//! must_exist u32 LE    count, then per path: length u32 LE, path bytes
//! ```
//!
//! A path is any non-empty byte string that starts with `/` and holds no NUL.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::access::Access;
use crate::error::LandlockError;
use crate::rules::{PathRule, Rules};

/// The first bytes of every encoding.
pub const MAGIC: &[u8; 4] = b"CLLR";
/// The format version this crate writes and reads.
pub const FORMAT_VERSION: u8 = 1;

const DENY_TCP: u8 = 1 << 0;
const SCOPE_SIGNALS: u8 = 1 << 1;
const SCOPE_ABSTRACT_UNIX: u8 = 1 << 2;
const KNOWN_FLAGS: u8 = DENY_TCP | SCOPE_SIGNALS | SCOPE_ABSTRACT_UNIX;

/// The fewest bytes one rule takes (access, length, `/`), to refuse counts the input cannot hold.
const MIN_RULE_LEN: usize = 8 + 4 + 1;
const MIN_PATH_LEN: usize = 4 + 1;

impl Rules {
    /// The rules in the format above.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.push(FORMAT_VERSION);
        let mut flags = 0;
        if self.deny_tcp {
            flags |= DENY_TCP;
        }
        if self.scope_signals {
            flags |= SCOPE_SIGNALS;
        }
        if self.scope_abstract_unix {
            flags |= SCOPE_ABSTRACT_UNIX;
        }
        out.push(flags);
        put_len(&mut out, self.paths.len());
        for rule in &self.paths {
            out.extend_from_slice(&rule.access.bits().to_le_bytes());
            put_bytes(&mut out, rule.path.as_os_str().as_bytes());
        }
        put_len(&mut out, self.must_exist.len());
        for path in &self.must_exist {
            put_bytes(&mut out, path.as_os_str().as_bytes());
        }
        out
    }

    /// Reads rules written by [`Rules::encode`], refusing anything malformed.
    pub fn decode(bytes: &[u8]) -> Result<Rules, LandlockError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4, "the magic")? != MAGIC {
            return Err(r.fail(0, "not cordon Landlock rules (wrong magic)"));
        }
        let version = r.u8("the version")?;
        if version != FORMAT_VERSION {
            return Err(r.fail(
                4,
                &format!("format version {version}; this build reads version {FORMAT_VERSION}"),
            ));
        }
        let flags = r.u8("the flags")?;
        if flags & !KNOWN_FLAGS != 0 {
            return Err(r.fail(
                5,
                &format!("unknown flag bits {:#04x}", flags & !KNOWN_FLAGS),
            ));
        }

        let count = r.count(MIN_RULE_LEN, "the rule count")?;
        let mut paths = Vec::with_capacity(count);
        for _ in 0..count {
            let at = r.at;
            let bits = u64::from_le_bytes(r.array("a rule's rights")?);
            let access = Access::from_bits(bits).ok_or_else(|| {
                r.fail(
                    at,
                    &format!("rights {bits:#x} hold a bit no Landlock right has"),
                )
            })?;
            if access.is_empty() {
                return Err(r.fail(at, "a rule grants no right"));
            }
            let path = r.path()?;
            paths.push(PathRule { path, access });
        }

        let count = r.count(MIN_PATH_LEN, "the must-exist count")?;
        let mut must_exist = Vec::with_capacity(count);
        for _ in 0..count {
            must_exist.push(r.path()?);
        }
        if r.at != bytes.len() {
            return Err(r.fail(r.at, "trailing bytes after the last path"));
        }
        Ok(Rules {
            paths,
            must_exist,
            deny_tcp: flags & DENY_TCP != 0,
            scope_signals: flags & SCOPE_SIGNALS != 0,
            scope_abstract_unix: flags & SCOPE_ABSTRACT_UNIX != 0,
        })
    }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    // A count or length past u32 cannot be a real ruleset (Linux paths stop at 4096 bytes); it
    // is written saturated, which decoding then refuses as longer than the input.
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, bytes.len());
    out.extend_from_slice(bytes);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn fail(&self, offset: usize, reason: &str) -> LandlockError {
        LandlockError::Decode {
            offset,
            reason: reason.to_owned(),
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], LandlockError> {
        let rest = self.bytes.len() - self.at;
        if n > rest {
            return Err(self.fail(
                self.at,
                &format!("{what} needs {n} bytes but only {rest} remain"),
            ));
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], LandlockError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, LandlockError> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<usize, LandlockError> {
        let v = u32::from_le_bytes(self.array(what)?);
        usize::try_from(v).map_err(|_| self.fail(self.at - 4, &format!("{what} {v} is too large")))
    }

    /// A count of items of at least `min_len` bytes each, no more than the rest can hold.
    fn count(&mut self, min_len: usize, what: &str) -> Result<usize, LandlockError> {
        let at = self.at;
        let count = self.u32(what)?;
        let rest = self.bytes.len() - self.at;
        if count > rest / min_len {
            return Err(self.fail(
                at,
                &format!("{what} {count} is more than the remaining {rest} bytes can hold"),
            ));
        }
        Ok(count)
    }

    fn path(&mut self) -> Result<PathBuf, LandlockError> {
        let at = self.at;
        let len = self.u32("a path length")?;
        let bytes = self.take(len, "a path")?;
        if bytes.first() != Some(&b'/') {
            return Err(self.fail(at + 4, "a path is empty or not absolute"));
        }
        if let Some(i) = bytes.iter().position(|&b| b == 0) {
            return Err(self.fail(at + 4 + i, "a path holds a NUL byte"));
        }
        Ok(PathBuf::from(OsStr::from_bytes(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Rules {
        Rules {
            paths: vec![
                PathRule {
                    path: "/".into(),
                    access: Access::READ_DIR,
                },
                PathRule {
                    path: PathBuf::from(OsStr::from_bytes(b"/w\xff\n s")),
                    access: Access::READ | Access::WRITE,
                },
            ],
            must_exist: vec![PathBuf::from(OsStr::from_bytes(b"/w\xff\n s"))],
            deny_tcp: true,
            scope_signals: false,
            scope_abstract_unix: true,
        }
    }

    fn reason(bytes: &[u8]) -> String {
        match Rules::decode(bytes) {
            Err(LandlockError::Decode { reason, .. }) => reason,
            other => panic!("expected a decode error, got {other:?}"),
        }
    }

    #[test]
    fn round_trips_and_starts_with_magic_and_version() {
        let rules = sample();
        let bytes = rules.encode();
        assert_eq!(&bytes[..5], b"CLLR\x01");
        assert_eq!(bytes[5], DENY_TCP | SCOPE_ABSTRACT_UNIX);
        assert_eq!(Rules::decode(&bytes).unwrap(), rules);
        assert_eq!(
            Rules::decode(&Rules::default().encode()).unwrap(),
            Rules::default()
        );
    }

    #[test]
    fn every_strict_prefix_and_any_trailing_byte_is_refused() {
        let bytes = sample().encode();
        for end in 0..bytes.len() {
            assert!(
                Rules::decode(&bytes[..end]).is_err(),
                "prefix of {end} bytes"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(reason(&longer).contains("trailing"));
    }

    #[test]
    fn refuses_each_kind_of_malformed_field_with_its_reason() {
        let good = sample().encode();
        let patch = |at: usize, b: u8| {
            let mut v = good.clone();
            v[at] = b;
            v
        };
        assert!(reason(&patch(0, b'X')).contains("magic"));
        assert!(reason(&patch(4, 2)).contains("format version 2"));
        assert!(reason(&patch(5, 0x80)).contains("unknown flag"));
        // First rule's rights start at 10: a bit beyond IOCTL_DEV, then no right at all.
        assert!(reason(&patch(12, 0x01)).contains("no Landlock right"));
        let mut empty = good.clone();
        empty[10..18].copy_from_slice(&0u64.to_le_bytes());
        assert!(reason(&empty).contains("grants no right"));
        // First rule's path "/" at 22: relative, then NUL.
        assert!(reason(&patch(22, b'a')).contains("not absolute"));
        let nul = Rules {
            paths: vec![PathRule {
                path: PathBuf::from(OsStr::from_bytes(b"/a\0b")),
                access: Access::READ,
            }],
            ..Rules::default()
        };
        assert!(reason(&nul.encode()).contains("NUL"));
        let empty_path = Rules {
            paths: vec![PathRule {
                path: PathBuf::new(),
                access: Access::READ,
            }],
            ..Rules::default()
        };
        assert!(reason(&empty_path.encode()).contains("empty"));
        let relative = Rules {
            must_exist: vec![PathBuf::from("ab")],
            ..Rules::default()
        };
        assert!(reason(&relative.encode()).contains("not absolute"));
    }

    #[test]
    fn a_huge_count_is_refused_before_anything_is_allocated() {
        let mut v = b"CLLR\x01\x00".to_vec();
        v.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(reason(&v).contains("more than the remaining"));
        let mut v = Rules::default().encode();
        v.truncate(v.len() - 4);
        v.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(reason(&v).contains("must-exist count"));
    }

    fn hostile_path() -> impl Strategy<Value = PathBuf> {
        proptest::collection::vec(1u8..=255, 0..40).prop_map(|mut tail| {
            tail.insert(0, b'/');
            PathBuf::from(OsStr::from_bytes(&tail))
        })
    }

    fn rules() -> impl Strategy<Value = Rules> {
        (
            proptest::collection::vec((hostile_path(), 1u64..(1 << 16)), 0..8),
            proptest::collection::vec(hostile_path(), 0..4),
            any::<[bool; 3]>(),
        )
            .prop_map(|(paths, must_exist, [tcp, sig, unix])| Rules {
                paths: paths
                    .into_iter()
                    .map(|(path, bits)| PathRule {
                        path,
                        access: Access::from_bits(bits).unwrap_or(Access::READ),
                    })
                    .collect(),
                must_exist,
                deny_tcp: tcp,
                scope_signals: sig,
                scope_abstract_unix: unix,
            })
    }

    proptest! {
        #[test]
        fn any_rules_with_hostile_path_bytes_round_trip(rules in rules()) {
            let bytes = rules.encode();
            prop_assert_eq!(Rules::decode(&bytes).unwrap(), rules);
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics_and_what_it_accepts_re_encodes_identically(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            if let Ok(rules) = Rules::decode(&bytes) {
                prop_assert_eq!(rules.encode(), bytes);
            }
        }

        #[test]
        fn flipping_any_byte_of_a_valid_encoding_is_refused_or_decodes_to_something_else(
            rules in rules(),
            pos in any::<proptest::sample::Index>(),
            flip in 1u8..=255,
        ) {
            let mut bytes = rules.encode();
            let i = pos.index(bytes.len());
            bytes[i] ^= flip;
            if let Ok(other) = Rules::decode(&bytes) {
                prop_assert_ne!(other, rules);
            }
        }
    }
}
