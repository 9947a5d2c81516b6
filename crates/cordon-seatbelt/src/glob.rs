//! Globs → anchored Seatbelt regular expressions.
//!
//! A [`GlobRule`] is a literal directory (`base`, a name on disk: never read as a pattern, whatever
//! characters it holds) and a glob relative to it. The glob syntax:
//!
//! - `*` — any run of bytes within one path component; `?` — one byte other than `/`;
//! - `**` as a whole component — any number of components, none included: `**/.env` matches
//!   `base/.env` and `base/a/b/.env`; a final `**` matches everything below;
//! - `[abc]`, `[a-z]`, `[!abc]` — one byte of (or not of) a set; a set never matches `/`;
//! - `\x` — the byte `x` itself.
//!
//! The expression is anchored at both ends and ends in `(/[^/]*)*`, so a match covers what lies
//! below it the way `subpath` does: denying `**/secrets` denies `secrets/key` too. It is written in
//! the dialect Seatbelt understands — no `(?…)` group (a non-capturing group compiles but never
//! matches), no interval, no `.` (whose newline behaviour is unknown) — and every literal byte goes
//! through [`escape_regex_literal`].
//!
//! Refused, with the reason: `**` inside a component, `{a,b}` alternation (escape a literal brace),
//! `.`/`..`/empty components, a leading or trailing `/`, and sets that hold `\ [ ] ^ -` or
//! non-ASCII bytes as members, or a range that spans `/` (Seatbelt's bracket expressions are not
//! specified closely enough to write those safely).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use crate::error::{SeatbeltError, show};
use crate::sbpl::{MAX_STRING_BYTES, check_dialect, escape_regex_literal};

/// A glob anchored at a literal directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GlobRule {
    /// The directory the pattern is relative to: absolute, matched byte for byte.
    pub base: PathBuf,
    /// The pattern, relative to `base`.
    pub pattern: OsString,
}

impl GlobRule {
    /// A rule for `pattern` below `base`.
    pub fn new(base: impl Into<PathBuf>, pattern: impl Into<OsString>) -> GlobRule {
        GlobRule {
            base: base.into(),
            pattern: pattern.into(),
        }
    }

    /// The anchored expression for this rule, as bytes (write it with [`crate::sbpl::quote`]).
    pub fn regex(&self) -> Result<Vec<u8>, SeatbeltError> {
        self.regex_at(&self.base)
    }

    /// The expression for this rule with `base` spelled differently (its symlink-resolved form).
    pub(crate) fn regex_at(&self, base: &Path) -> Result<Vec<u8>, SeatbeltError> {
        let components = parse(self.pattern.as_bytes()).map_err(|why| self.refused(why))?;
        let base_bytes = check_base(base).map_err(|why| self.refused(why))?;
        let mut re = b"^".to_vec();
        re.extend(escape_regex_literal(&base_bytes));
        let last = components.len().saturating_sub(1);
        for (i, component) in components.iter().enumerate() {
            match component {
                Part::Recursive if i == last => re.extend_from_slice(b"/[^/]*"),
                Part::Recursive => re.extend_from_slice(b"(/[^/]*)*"),
                Part::Pieces(pieces) => {
                    re.push(b'/');
                    for piece in pieces {
                        piece.write(&mut re);
                    }
                }
            }
        }
        re.extend_from_slice(b"(/[^/]*)*$");
        if let Err(construct) = check_dialect(&re) {
            return Err(SeatbeltError::RegexDialect {
                regex: show(&re),
                construct,
            });
        }
        if re.len() > MAX_STRING_BYTES {
            return Err(SeatbeltError::RegexTooLong {
                pattern: self.shown_pattern(),
                len: re.len(),
                max: MAX_STRING_BYTES,
            });
        }
        Ok(re)
    }

    /// The directories whose renaming would carry matched paths out of the pattern: `base`
    /// followed by the pattern's leading literal components, not counting the last component
    /// (which the rule itself covers). For `secrets/*.pem` that is `base/secrets`; for `**/.env`
    /// nothing beyond `base`.
    pub fn static_dirs(&self) -> Result<Vec<PathBuf>, SeatbeltError> {
        let components = parse(self.pattern.as_bytes()).map_err(|why| self.refused(why))?;
        let mut dir = self.base.clone();
        let mut out = vec![dir.clone()];
        for component in components.iter().take(components.len().saturating_sub(1)) {
            match component.literal() {
                Some(name) => {
                    dir.push(OsStr::from_bytes(&name));
                    out.push(dir.clone());
                }
                None => break,
            }
        }
        Ok(out)
    }

    fn shown_pattern(&self) -> String {
        show(self.pattern.as_bytes())
    }

    fn refused(&self, why: String) -> SeatbeltError {
        SeatbeltError::Glob {
            pattern: self.shown_pattern(),
            base: show(self.base.as_os_str().as_bytes()),
            why,
        }
    }
}

/// Writes a literal name as glob syntax that matches exactly it (each of `* ? [ ] { } \` gets a
/// backslash), for callers that build a rule from a name on disk.
pub fn escape_glob(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for &b in bytes {
        if b"*?[]{}\\".contains(&b) {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

fn check_base(base: &Path) -> Result<Vec<u8>, String> {
    let bytes = base.as_os_str().as_bytes();
    if bytes.contains(&0) {
        return Err("its base contains a NUL byte".into());
    }
    if !base.is_absolute() {
        return Err("its base is not an absolute path".into());
    }
    if base.components().any(|c| c == Component::ParentDir) {
        return Err("its base has a `..` component and would never match".into());
    }
    // Seatbelt compares strings: spelled canonically (no doubled `/`, no `.`, no trailing `/`),
    // or the rule would name paths no operation reaches. The root is the empty prefix.
    let canonical: PathBuf = base.components().collect();
    let mut out = canonical.into_os_string().into_vec();
    while out.last() == Some(&b'/') {
        out.pop();
    }
    Ok(out)
}

/// One element of a component.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(u8),
    Star,
    Any,
    Class {
        negated: bool,
        ranges: Vec<(u8, u8)>,
    },
}

impl Piece {
    fn write(&self, re: &mut Vec<u8>) {
        match self {
            Piece::Literal(b) => re.extend(escape_regex_literal(&[*b])),
            Piece::Star => re.extend_from_slice(b"[^/]*"),
            Piece::Any => re.extend_from_slice(b"[^/]"),
            Piece::Class { negated, ranges } => {
                re.push(b'[');
                if *negated {
                    re.push(b'^');
                }
                for &(lo, hi) in ranges {
                    re.push(lo);
                    if hi != lo {
                        re.push(b'-');
                        re.push(hi);
                    }
                }
                if *negated {
                    // A negated set must not match the separator either.
                    re.push(b'/');
                }
                re.push(b']');
            }
        }
    }
}

/// One path component of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Recursive,
    Pieces(Vec<Piece>),
}

impl Part {
    fn literal(&self) -> Option<Vec<u8>> {
        match self {
            Part::Recursive => None,
            Part::Pieces(pieces) => pieces
                .iter()
                .map(|p| match p {
                    Piece::Literal(b) => Some(*b),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// Bytes a set may not hold as a member or range end.
const CLASS_REFUSED: &[u8] = b"\\[]^-/";

fn parse(pattern: &[u8]) -> Result<Vec<Part>, String> {
    if pattern.is_empty() {
        return Err("the pattern is empty".into());
    }
    if pattern.contains(&0) {
        return Err("the pattern contains a NUL byte".into());
    }
    if pattern.first() == Some(&b'/') {
        return Err("the pattern must be relative to its base (it starts with /)".into());
    }
    let mut parts = Vec::new();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut raw_star_star = false;
    let mut i = 0;
    let finish = |pieces: &mut Vec<Piece>, raw_star_star: &mut bool, parts: &mut Vec<Part>| {
        let part = std::mem::take(pieces);
        let was_recursive = std::mem::take(raw_star_star);
        if part.is_empty() {
            return Err("it has an empty component (a doubled or trailing /)".to_owned());
        }
        if was_recursive && part == [Piece::Star, Piece::Star] {
            parts.push(Part::Recursive);
            return Ok(());
        }
        if part.windows(2).any(|w| w == [Piece::Star, Piece::Star]) {
            return Err("`**` may only be a whole path component".to_owned());
        }
        if part == [Piece::Literal(b'.')] || part == [Piece::Literal(b'.'), Piece::Literal(b'.')] {
            return Err(
                "it has a `.` or `..` component, which never matches a resolved path".to_owned(),
            );
        }
        parts.push(Part::Pieces(part));
        Ok(())
    };
    while i < pattern.len() {
        let b = pattern[i];
        match b {
            b'/' => finish(&mut pieces, &mut raw_star_star, &mut parts)?,
            b'\\' => {
                let Some(&next) = pattern.get(i + 1) else {
                    return Err("it ends with a lone backslash".into());
                };
                if next == b'/' {
                    return Err("`\\/` would put a separator inside a component".into());
                }
                pieces.push(Piece::Literal(next));
                i += 1;
            }
            b'*' => {
                if pieces.is_empty() && pattern.get(i + 1) == Some(&b'*') {
                    let end = i + 2;
                    raw_star_star = end == pattern.len() || pattern[end] == b'/';
                }
                pieces.push(Piece::Star);
            }
            b'?' => pieces.push(Piece::Any),
            b'[' => {
                let (piece, next) = parse_class(pattern, i)?;
                pieces.push(piece);
                i = next;
                continue;
            }
            b'{' | b'}' => {
                return Err(
                    "`{a,b}` alternation is not supported (write one rule per alternative, or `\\{` for a literal brace)"
                        .into(),
                );
            }
            _ => pieces.push(Piece::Literal(b)),
        }
        i += 1;
    }
    finish(&mut pieces, &mut raw_star_star, &mut parts)?;
    Ok(parts)
}

/// Parses the set that opens at `pattern[open]` (`[`); returns it and the index after its `]`.
fn parse_class(pattern: &[u8], open: usize) -> Result<(Piece, usize), String> {
    let mut i = open + 1;
    let negated = matches!(pattern.get(i), Some(b'!' | b'^'));
    if negated {
        i += 1;
    }
    let member = |b: u8| -> Result<u8, String> {
        if CLASS_REFUSED.contains(&b) {
            Err(format!(
                "a set holds {:?}; Seatbelt's bracket expressions cannot be trusted to read it literally",
                char::from(b)
            ))
        } else if !b.is_ascii() {
            Err("a set holds a non-ASCII byte, which would match each byte of it separately".into())
        } else {
            Ok(b)
        }
    };
    let mut ranges: Vec<(u8, u8)> = Vec::new();
    loop {
        let Some(&b) = pattern.get(i) else {
            return Err("a set opened with `[` is never closed".into());
        };
        if b == b']' {
            if ranges.is_empty() {
                return Err("a set is empty or starts with `]`".into());
            }
            return Ok((Piece::Class { negated, ranges }, i + 1));
        }
        let lo = member(b)?;
        if pattern.get(i + 1) == Some(&b'-') && pattern.get(i + 2).is_some_and(|&c| c != b']') {
            let hi = member(pattern[i + 2])?;
            if hi < lo {
                return Err(format!(
                    "a range {}-{} runs backwards",
                    char::from(lo),
                    char::from(hi)
                ));
            }
            if (lo..=hi).contains(&b'/') {
                return Err("a range in a set spans `/`".into());
            }
            ranges.push((lo, hi));
            i += 3;
        } else {
            ranges.push((lo, lo));
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(base: &str, pattern: &str) -> String {
        String::from_utf8(GlobRule::new(base, pattern).regex().unwrap()).unwrap()
    }

    fn refused(base: &str, pattern: &str) -> String {
        GlobRule::new(base, pattern)
            .regex()
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn compiles_each_construct() {
        assert_eq!(re("/w", "**/.env"), r"^/w(/[^/]*)*/\.env(/[^/]*)*$");
        assert_eq!(re("/w", "*.pem"), r"^/w/[^/]*\.pem(/[^/]*)*$");
        assert_eq!(re("/w", "id_?sa"), r"^/w/id_[^/]sa(/[^/]*)*$");
        assert_eq!(re("/w", "a/**"), r"^/w/a/[^/]*(/[^/]*)*$");
        assert_eq!(re("/w", "a/**/b"), r"^/w/a(/[^/]*)*/b(/[^/]*)*$");
        assert_eq!(re("/w", "[a-c]x[!0-9_]"), r"^/w/[a-c]x[^0-9_/](/[^/]*)*$");
        assert_eq!(re("/", "**/.env"), r"^(/[^/]*)*/\.env(/[^/]*)*$");
        assert_eq!(re("/w/", "x"), r"^/w/x(/[^/]*)*$");
    }

    #[test]
    fn the_base_is_literal_whatever_it_holds() {
        assert_eq!(re("/a[b]*(c)", "x"), r"^/a\[b\]\*\(c\)/x(/[^/]*)*$");
        assert_eq!(re("/w", r"lit\*\[x\]"), r"^/w/lit\*\[x\](/[^/]*)*$");
    }

    #[test]
    fn refuses_what_it_cannot_express() {
        assert!(refused("/w", "a**b").contains("whole path component"));
        assert!(refused("/w", "{a,b}").contains("alternation"));
        assert!(refused("/w", "/abs").contains("relative"));
        assert!(refused("/w", "a//b").contains("empty component"));
        assert!(refused("/w", "a/").contains("empty component"));
        assert!(refused("/w", "../x").contains("`..`"));
        assert!(refused("/w", "x\\").contains("lone backslash"));
        assert!(refused("/w", "[a").contains("never closed"));
        assert!(refused("/w", "[]a]").contains("starts with `]`"));
        assert!(refused("/w", "[a\\b]").contains("'\\\\'"));
        assert!(refused("/w", "[z-a]").contains("backwards"));
        assert!(refused("/w", "[+-0]").contains("spans `/`"));
        assert!(refused("w", "x").contains("absolute"));
        assert!(refused("/w/../v", "x").contains("`..`"));
        assert!(refused("/w", "").contains("empty"));
    }

    #[test]
    fn static_dirs_stop_at_the_first_wildcard_and_leave_out_the_last_component() {
        let dirs = |p: &str| GlobRule::new("/w", p).static_dirs().unwrap();
        assert_eq!(dirs("**/.env"), [PathBuf::from("/w")]);
        assert_eq!(
            dirs("secrets/*.pem"),
            [PathBuf::from("/w"), PathBuf::from("/w/secrets")]
        );
        assert_eq!(
            dirs("a/b/*/c/d"),
            [
                PathBuf::from("/w"),
                PathBuf::from("/w/a"),
                PathBuf::from("/w/a/b")
            ]
        );
        assert_eq!(dirs("secrets"), [PathBuf::from("/w")]);
    }

    #[test]
    fn escape_glob_makes_a_name_literal() {
        let name = b"a*b?[c]{d}\\e";
        let rule = GlobRule::new("/w", OsStr::from_bytes(&escape_glob(name)));
        let mut expected = b"^/w/".to_vec();
        expected.extend(escape_regex_literal(name));
        expected.extend_from_slice(b"(/[^/]*)*$");
        assert_eq!(rule.regex().unwrap(), expected);
    }

    #[test]
    fn too_long_is_refused_not_truncated() {
        let long = "x".repeat(MAX_STRING_BYTES);
        let err = GlobRule::new("/w", long.as_str()).regex().unwrap_err();
        assert!(matches!(err, SeatbeltError::RegexTooLong { .. }), "{err}");
    }
}
