//! The profile language's lexical rules in one place: how a string literal is written, how a
//! literal is written inside a regular expression, which regular-expression constructs Seatbelt
//! understands, and the small rule model the generator renders.
//!
//! Paths never pass through here on their way into a profile: they travel as `-D` parameters and
//! the profile names them with `(param "NAME")`. What must be spliced is a regular expression
//! compiled from a glob (a parameter cannot be spliced into a regular expression), and that goes
//! through [`quote`] — the one function that writes a string literal — after
//! [`escape_regex_literal`] — the one function that writes a literal inside an expression.

use std::fmt::Write as _;

/// The longest string literal (after decoding) a profile may hold. Seatbelt's reader keeps a
/// literal in a fixed buffer of about a kilobyte and refuses the whole profile ("Error reading
/// string") beyond it; staying well below keeps a margin for differences between releases.
pub const MAX_STRING_BYTES: usize = 1000;

/// Writes `bytes` as a profile string literal that reads back as exactly `bytes`.
///
/// One pass, byte by byte, so no escape is ever applied to the output of another (the bug of
/// escaping `"` before `\`, which turns `\"` into `\\"` and ends the literal early): printable
/// ASCII stands for itself, `"` and `\` are preceded by a backslash, and every other byte —
/// control characters, newlines, DEL, and each byte of a non-ASCII or invalid UTF-8 sequence — is
/// written as `\xHH` with exactly two hex digits. The result is therefore always printable ASCII
/// and one line, whatever the input.
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\x{b:02X}");
            }
        }
    }
    out.push('"');
    out
}

/// The bytes that have a meaning in Seatbelt's regular expressions (POSIX extended syntax).
const REGEX_META: &[u8] = b".^$*+?()[]{}|\\";

/// Writes `bytes` as a regular-expression fragment that matches exactly `bytes`: each
/// metacharacter is preceded by a backslash, every other byte (including `/`, `#`, `;`, quotes,
/// newlines and non-UTF-8 bytes) stands for itself. The result still has to be written as a
/// string literal with [`quote`].
pub fn escape_regex_literal(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for &b in bytes {
        if REGEX_META.contains(&b) {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

/// Checks a generated expression against the constructs Seatbelt's engine is known to get wrong
/// or not to have: `(?…)` groups (a non-capturing group compiles but never matches), intervals
/// `{m,n}`, and a dangling backslash. Returns the construct found.
pub fn check_dialect(regex: &[u8]) -> Result<(), &'static str> {
    let mut i = 0;
    let mut class_start: Option<usize> = None;
    while i < regex.len() {
        let b = regex[i];
        if let Some(start) = class_start {
            // A `]` right after `[` or `[^` is a member, not the end (the generator never writes
            // one there, but the checker must not be fooled by it).
            let first = i == start + 1 || (i == start + 2 && regex[start + 1] == b'^');
            if b == b']' && !first {
                class_start = None;
            }
            i += 1;
            continue;
        }
        match b {
            b'\\' => {
                if i + 1 >= regex.len() {
                    return Err("a trailing backslash");
                }
                i += 2;
                continue;
            }
            b'[' => class_start = Some(i),
            b'(' if regex.get(i + 1) == Some(&b'?') => return Err("a (?…) group"),
            b'{' | b'}' => return Err("an interval {…}"),
            _ => {}
        }
        i += 1;
    }
    if class_start.is_some() {
        return Err("an unclosed bracket expression");
    }
    Ok(())
}

/// A string operand: a parameter the profile names, or a constant of the generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operand {
    /// `(param "NAME")`: the value travels as `-DNAME=value`.
    Param(String),
    /// A fixed string of the generator, such as `/dev/null`.
    Const(&'static str),
}

impl Operand {
    fn render(&self) -> String {
        match self {
            Operand::Param(name) => format!("(param {})", quote(name.as_bytes())),
            Operand::Const(text) => quote(text.as_bytes()),
        }
    }
}

/// One filter of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Filter {
    /// The path and everything below it.
    Subpath(Operand),
    /// Exactly the path.
    Literal(Operand),
    /// Paths matching an expression (already checked with [`check_dialect`]).
    Regex(Vec<u8>),
    /// A constant filter written by the generator, such as `(target same-sandbox)`.
    Fixed(String),
}

impl Filter {
    fn render(&self) -> String {
        match self {
            Filter::Subpath(o) => format!("(subpath {})", o.render()),
            Filter::Literal(o) => format!("(literal {})", o.render()),
            Filter::Regex(r) => format!("(regex {})", quote(r)),
            Filter::Fixed(text) => text.clone(),
        }
    }
}

/// A line inside a rule: a filter, or a comment saying why the filters below it are there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    Comment(&'static str),
    Filter(Filter),
}

/// What a rule applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every instance of the operations: `(allow process-fork)`.
    Everything,
    /// Only what the filters match. A rule whose list holds no filter is not written at all:
    /// written without filters it would apply to everything.
    Only(Vec<Item>),
}

/// `allow` or `deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Allow,
    Deny,
}

/// One rule: an action, the operations it covers, and what it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub action: Action,
    pub operations: &'static [&'static str],
    pub scope: Scope,
}

impl Rule {
    pub fn everything(action: Action, operations: &'static [&'static str]) -> Rule {
        Rule {
            action,
            operations,
            scope: Scope::Everything,
        }
    }

    pub fn only(action: Action, operations: &'static [&'static str], items: Vec<Item>) -> Rule {
        Rule {
            action,
            operations,
            scope: Scope::Only(items),
        }
    }

    pub fn filters(
        action: Action,
        operations: &'static [&'static str],
        filters: Vec<Filter>,
    ) -> Rule {
        Rule::only(
            action,
            operations,
            filters.into_iter().map(Item::Filter).collect(),
        )
    }

    fn render(&self, out: &mut String) {
        let head = format!(
            "({} {}",
            match self.action {
                Action::Allow => "allow",
                Action::Deny => "deny",
            },
            self.operations.join(" ")
        );
        match &self.scope {
            Scope::Everything => {
                out.push_str(&head);
                out.push_str(")\n");
            }
            Scope::Only(items) => {
                if !items.iter().any(|i| matches!(i, Item::Filter(_))) {
                    return;
                }
                out.push_str(&head);
                for item in items {
                    out.push_str("\n  ");
                    match item {
                        Item::Comment(text) => {
                            out.push_str("; ");
                            out.push_str(&one_line(text));
                        }
                        Item::Filter(f) => out.push_str(&f.render()),
                    }
                }
                out.push_str(")\n");
            }
        }
    }
}

/// A group of rules under a comment that says what they are for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    pub comment: Vec<String>,
    pub rules: Vec<Rule>,
}

impl Section {
    pub fn new(comment: &[&str], rules: Vec<Rule>) -> Section {
        Section {
            comment: comment.iter().map(|c| (*c).to_owned()).collect(),
            rules,
        }
    }
}

/// Renders the sections, one blank line between them. A section whose rules are all empty is
/// left out with its comment.
pub(crate) fn render(header: &[String], sections: &[Section]) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str(&one_line(line));
        out.push('\n');
    }
    for section in sections {
        let mut body = String::new();
        for rule in &section.rules {
            rule.render(&mut body);
        }
        if body.is_empty() {
            continue;
        }
        out.push('\n');
        for line in &section.comment {
            out.push_str("; ");
            out.push_str(&one_line(line));
            out.push('\n');
        }
        out.push_str(&body);
    }
    out
}

/// Comments come from the generator's own constants; a newline in one would end the comment and
/// turn the rest into profile text, so it is flattened all the same.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_escapes_quote_and_backslash_in_one_pass() {
        assert_eq!(quote(b"plain/path"), "\"plain/path\"");
        // The input `\"` must come back as backslash then quote, not as an early end.
        assert_eq!(quote(b"a\\\"b"), r#""a\\\"b""#);
        assert_eq!(quote(b"\"\\"), r#""\"\\""#);
        assert_eq!(quote(b"\\"), r#""\\""#);
    }

    #[test]
    fn quote_hex_escapes_everything_not_printable_ascii() {
        assert_eq!(quote(b"a\nb"), r#""a\x0Ab""#);
        assert_eq!(quote(b"\x7f\x00\xff"), r#""\x7F\x00\xFF""#);
        assert_eq!(quote("é".as_bytes()), r#""\xC3\xA9""#);
        // `#`, `;`, parentheses and spaces are ordinary inside a literal.
        assert_eq!(quote(b"#;() x"), "\"#;() x\"");
        let all: Vec<u8> = (0..=255u8).collect();
        let q = quote(&all);
        assert!(q.is_ascii() && !q.contains('\n'));
    }

    #[test]
    fn regex_literal_escapes_each_metacharacter_and_nothing_else() {
        assert_eq!(escape_regex_literal(b"a.b"), b"a\\.b");
        assert_eq!(
            escape_regex_literal(b".^$*+?()[]{}|\\"),
            b"\\.\\^\\$\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\\\".to_vec()
        );
        assert_eq!(escape_regex_literal(b"/x y#;\"\n\xff"), b"/x y#;\"\n\xff");
    }

    #[test]
    fn dialect_check_finds_what_seatbelt_gets_wrong() {
        assert_eq!(check_dialect(b"^/a(/[^/]*)*$"), Ok(()));
        assert_eq!(check_dialect(b"^/a\\(\\?x"), Ok(()));
        assert_eq!(check_dialect(b"^/a[(?]x"), Ok(()));
        assert_eq!(check_dialect(b"^(?:a)"), Err("a (?…) group"));
        assert_eq!(check_dialect(b"^(?i)a"), Err("a (?…) group"));
        assert_eq!(check_dialect(b"a{2}"), Err("an interval {…}"));
        assert_eq!(check_dialect(b"a\\"), Err("a trailing backslash"));
        assert_eq!(
            check_dialect(b"a[]x"),
            Err("an unclosed bracket expression")
        );
        assert_eq!(check_dialect(b"a[]x]"), Ok(()));
    }

    #[test]
    fn a_rule_without_filters_is_not_written() {
        let mut out = String::new();
        Rule::only(Action::Allow, &["file-write*"], vec![Item::Comment("why")]).render(&mut out);
        assert_eq!(out, "");
        Rule::everything(Action::Allow, &["process-fork"]).render(&mut out);
        assert_eq!(out, "(allow process-fork)\n");
    }
}
