//! Deny globs: credential-shaped names (`**/.env`, `*.pem`) matched during the scan's one walk,
//! so the launcher can mask what exists without walking the tree again per command.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Serialize;

use crate::error::ScanError;

/// Globs relative to every writable root.
///
/// The syntax is globset's with `*` and `?` kept within one path component (as in the Seatbelt
/// generator): `*.pem` matches `key.pem` at the root only, `**/*.pem` at any depth, `**/.env`
/// matches `.env` and `a/b/.env`. A matching directory is reported once and nothing below it
/// (masking it covers them).
#[derive(Debug, Clone)]
pub struct DenyGlobs {
    patterns: Vec<String>,
    set: GlobSet,
}

impl Default for DenyGlobs {
    fn default() -> DenyGlobs {
        DenyGlobs::none()
    }
}

impl DenyGlobs {
    /// No globs: the scan then matches nothing and builds no relative paths.
    pub fn none() -> DenyGlobs {
        DenyGlobs {
            patterns: Vec::new(),
            set: GlobSet::empty(),
        }
    }

    /// Compiles `patterns`; refuses one that does not parse, is absolute, or has a `..`.
    pub fn new<I, S>(patterns: I) -> Result<DenyGlobs, ScanError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut builder = GlobSetBuilder::new();
        let mut kept = Vec::new();
        for pattern in patterns {
            let pattern = pattern.as_ref();
            if pattern.starts_with('/') || pattern.split('/').any(|c| c == "..") {
                return Err(ScanError::GlobNotRelative {
                    pattern: pattern.to_owned(),
                });
            }
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|source| ScanError::Glob {
                    pattern: pattern.to_owned(),
                    source,
                })?;
            builder.add(glob);
            kept.push(pattern.to_owned());
        }
        let set = builder.build().map_err(|source| ScanError::Glob {
            pattern: kept.join(" "),
            source,
        })?;
        Ok(DenyGlobs {
            patterns: kept,
            set,
        })
    }

    /// True when there is nothing to match.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The patterns, in the order given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The first pattern (by index) matching `relative`, a path relative to a root.
    pub(crate) fn first_match(&self, relative: &Path, scratch: &mut Vec<usize>) -> Option<usize> {
        if !self.set.is_match(relative) {
            return None;
        }
        self.set.matches_into(relative, scratch);
        scratch.iter().copied().min()
    }
}

/// What a deny glob matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryType {
    /// A directory (mask it as an empty, unreadable directory).
    Dir,
    /// A regular file.
    File,
    /// A symbolic link, not followed (masking the link masks what it points to).
    Symlink,
    /// Anything else (which is also a finding).
    Other,
}

/// A path a deny glob matched during the scan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DenyMatch {
    /// The path on the host.
    pub path: std::path::PathBuf,
    /// The writable root it lies in.
    pub root: std::path::PathBuf,
    /// The first pattern that matched it.
    pub pattern: String,
    /// What it is.
    pub entry: EntryType,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(globs: &DenyGlobs, path: &str) -> Option<String> {
        globs
            .first_match(Path::new(path), &mut Vec::new())
            .map(|i| globs.patterns()[i].clone())
    }

    #[test]
    fn star_stays_in_one_component() {
        let globs = DenyGlobs::new(["*.pem", "**/.env", "secrets/**"]).unwrap();
        assert_eq!(first(&globs, "key.pem").as_deref(), Some("*.pem"));
        assert_eq!(first(&globs, "certs/key.pem"), None);
        assert_eq!(first(&globs, ".env").as_deref(), Some("**/.env"));
        assert_eq!(first(&globs, "a/b/.env").as_deref(), Some("**/.env"));
        assert_eq!(first(&globs, "a/b/.envrc"), None);
        assert_eq!(first(&globs, "secrets/x/y").as_deref(), Some("secrets/**"));
    }

    #[test]
    fn refuses_what_is_not_relative_or_not_a_glob() {
        for bad in ["/etc/*.pem", "../x", "a/../b"] {
            let err = DenyGlobs::new([bad]).unwrap_err();
            assert!(
                matches!(err, ScanError::GlobNotRelative { .. }),
                "{bad}: {err}"
            );
            assert!(err.to_string().contains(bad), "{err}");
        }
        let err = DenyGlobs::new(["a[b"]).unwrap_err();
        assert!(matches!(err, ScanError::Glob { .. }), "{err}");
        assert!(err.to_string().contains("a[b"), "{err}");
    }
}
