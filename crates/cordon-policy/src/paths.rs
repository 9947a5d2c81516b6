//! Paths as a policy names them, before they meet a host ([`PathSpec`]), paths displayed
//! losslessly ([`DisplayPath`]), and the helpers both the model and the plan use.

use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use serde::{Serialize, Serializer};

use crate::error::PolicyError;

/// A path as written in a policy: relative to the home directory, absolute, or relative to the
/// workspace (for protected paths: relative to every writable root).
///
/// A `PathSpec` is always normalized: no `.` or empty components, no trailing slash, and never a
/// `..` component (a policy must name the path it means; `..` would mean something different
/// once symlinks are resolved).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathSpec {
    /// `~` or `~/…`: below the home directory of the user running cordon.
    Home(PathBuf),
    /// `/…`.
    Absolute(PathBuf),
    /// Anything else: below the workspace (or below each writable root, for protected paths).
    Relative(PathBuf),
}

impl PathSpec {
    /// Parses a policy path written as text (`~/.ssh`, `/etc/shadow`, `vendor/locked`).
    pub fn parse(text: &str) -> Result<PathSpec, PolicyError> {
        Self::from_path(Path::new(text))
    }

    /// Builds a spec from an OS path, which may not be UTF-8.
    pub fn from_path(path: &Path) -> Result<PathSpec, PolicyError> {
        let bytes = path.as_os_str().as_bytes();
        if bytes.is_empty() {
            return Err(PolicyError::EmptyPath);
        }
        check_no_nul(path)?;
        if bytes == b"~" {
            return Ok(PathSpec::Home(PathBuf::new()));
        }
        if let Some(rest) = bytes.strip_prefix(b"~/") {
            let rest = Path::new(std::ffi::OsStr::from_bytes(rest));
            return Ok(PathSpec::Home(normalize_relative(path, rest)?));
        }
        if bytes.starts_with(b"~") {
            return Err(PolicyError::UnsupportedTilde {
                path: path.to_path_buf(),
            });
        }
        if path.is_absolute() {
            let rel = path.strip_prefix("/").unwrap_or(path);
            let normalized = normalize_relative(path, rel)?;
            return Ok(PathSpec::Absolute(Path::new("/").join(normalized)));
        }
        let normalized = normalize_relative(path, path)?;
        if normalized.as_os_str().is_empty() {
            return Err(PolicyError::EmptyPath);
        }
        Ok(PathSpec::Relative(normalized))
    }

    /// Where this spec points on a host with `home`, relative specs taken below `base`.
    pub fn under(&self, home: &Path, base: &Path) -> PathBuf {
        match self {
            PathSpec::Home(rel) => join_rel(home, rel),
            PathSpec::Absolute(p) => p.clone(),
            PathSpec::Relative(rel) => join_rel(base, rel),
        }
    }

    /// True for `Relative` specs.
    pub fn is_relative(&self) -> bool {
        matches!(self, PathSpec::Relative(_))
    }
}

fn join_rel(base: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(rel)
    }
}

/// Refuses a path containing a NUL byte: no kernel call can name it, and a generator that passed it
/// on would cut it short somewhere else.
pub(crate) fn check_no_nul(path: &Path) -> Result<(), PolicyError> {
    if path.as_os_str().as_bytes().contains(&0) {
        return Err(PolicyError::NulByte {
            path: DisplayPath(path.to_path_buf()).to_string(),
        });
    }
    Ok(())
}

fn normalize_relative(original: &Path, rel: &Path) -> Result<PathBuf, PolicyError> {
    let mut out = PathBuf::new();
    for component in rel.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(PolicyError::ParentComponent {
                    path: original.to_path_buf(),
                });
            }
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Ok(out)
}

impl fmt::Display for PathSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathSpec::Home(rel) if rel.as_os_str().is_empty() => f.write_str("~"),
            PathSpec::Home(rel) => write!(f, "~/{}", DisplayPath(rel.clone())),
            PathSpec::Absolute(p) | PathSpec::Relative(p) => DisplayPath(p.clone()).fmt(f),
        }
    }
}

impl Serialize for PathSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Displays a path losslessly: valid UTF-8 as is, a backslash as `\\`, and every byte of an
/// invalid sequence as `\xNN`. Two different paths never display the same.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DisplayPath(pub PathBuf);

impl fmt::Display for DisplayPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.as_os_str().as_bytes().utf8_chunks() {
            for ch in chunk.valid().chars() {
                if ch == '\\' {
                    f.write_str("\\\\")?;
                } else {
                    fmt::Write::write_char(f, ch)?;
                }
            }
            for byte in chunk.invalid() {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        Ok(())
    }
}

impl DisplayPath {
    /// Joins paths for an error message, each displayed losslessly: `[/a, /b]`.
    pub fn list(paths: &[PathBuf]) -> String {
        let parts: Vec<String> = paths
            .iter()
            .map(|p| DisplayPath(p.clone()).to_string())
            .collect();
        format!("[{}]", parts.join(", "))
    }
}

impl Serialize for DisplayPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Serializes a `PathBuf` through [`DisplayPath`]; for `#[serde(serialize_with)]`.
pub(crate) fn serialize_path<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&DisplayPath(path.to_path_buf()))
}

/// Serializes an optional path through [`DisplayPath`]; for `#[serde(serialize_with)]`.
pub(crate) fn serialize_opt_path<S: Serializer>(
    path: &Option<PathBuf>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => serializer.collect_str(&DisplayPath(p.clone())),
        None => serializer.serialize_none(),
    }
}

/// Serializes a list of paths through [`DisplayPath`]; for `#[serde(serialize_with)]`.
pub(crate) fn serialize_paths<S: Serializer>(
    paths: &[PathBuf],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(paths.len()))?;
    for p in paths {
        seq.serialize_element(&DisplayPath(p.clone()))?;
    }
    seq.end()
}

/// True when `path` is `base` or lies below it, compared component by component.
pub(crate) fn is_within(path: &Path, base: &Path) -> bool {
    path.starts_with(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(
            PathSpec::parse("~/.ssh").unwrap(),
            PathSpec::Home(".ssh".into())
        );
        assert_eq!(PathSpec::parse("~").unwrap(), PathSpec::Home("".into()));
        assert_eq!(
            PathSpec::parse("/etc//shadow/").unwrap(),
            PathSpec::Absolute("/etc/shadow".into())
        );
        assert_eq!(
            PathSpec::parse("./vendor/./locked").unwrap(),
            PathSpec::Relative("vendor/locked".into())
        );
    }

    #[test]
    fn refuses_parent_components_nul_empty_and_other_users() {
        assert!(matches!(
            PathSpec::parse("~/../x"),
            Err(PolicyError::ParentComponent { .. })
        ));
        assert!(matches!(
            PathSpec::parse("a/../../b"),
            Err(PolicyError::ParentComponent { .. })
        ));
        assert!(matches!(
            PathSpec::parse("a\0b"),
            Err(PolicyError::NulByte { .. })
        ));
        assert!(matches!(PathSpec::parse(""), Err(PolicyError::EmptyPath)));
        assert!(matches!(PathSpec::parse("."), Err(PolicyError::EmptyPath)));
        assert!(matches!(
            PathSpec::parse("~root/.ssh"),
            Err(PolicyError::UnsupportedTilde { .. })
        ));
    }

    #[test]
    fn display_is_lossless_for_non_utf8() {
        let p = PathBuf::from(OsStr::from_bytes(b"/tmp/a\xffb\\c"));
        assert_eq!(DisplayPath(p).to_string(), "/tmp/a\\xffb\\\\c");
    }

    #[test]
    fn within_compares_components() {
        assert!(is_within(Path::new("/a/b"), Path::new("/a")));
        assert!(!is_within(Path::new("/ab"), Path::new("/a")));
    }

    proptest::proptest! {
        #[test]
        fn normalization_is_idempotent_and_never_keeps_dot_components(
            parts in proptest::collection::vec("[a-z.]{1,4}", 1..6),
            prefix in proptest::sample::select(vec!["", "/", "~/"]),
        ) {
            let text = format!("{prefix}{}", parts.join("/"));
            if let Ok(spec) = PathSpec::parse(&text) {
                let again = PathSpec::parse(&spec.to_string()).unwrap();
                proptest::prop_assert_eq!(&again, &spec);
                let shown = spec.to_string();
                proptest::prop_assert!(!shown.split('/').any(|c| c == "." || c == ".."));
            } else {
                proptest::prop_assert!(parts.iter().any(|p| p == "..") || parts.iter().all(|p| p == "."));
            }
        }
    }
}
