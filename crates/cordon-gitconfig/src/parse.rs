//! git-config(1)'s file format: parsed into items that keep their raw text, so lines nobody
//! changed are written back byte for byte.

use std::fmt;

/// One variable of a configuration: section and name lowercased (git compares them without
/// case), the subsection as written (lowercased in the legacy `[s.sub]` form), the value with
/// quotes and escapes resolved (`None`: a bare `name`, which git reads as true).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The section, lowercased.
    pub section: String,
    /// The subsection, if any.
    pub subsection: Option<String>,
    /// The variable's name, lowercased.
    pub name: String,
    /// The value.
    pub value: Option<String>,
}

impl Entry {
    /// The key as git spells it: `section.subsection.name`.
    pub fn key(&self) -> String {
        match &self.subsection {
            Some(sub) => format!("{}.{sub}.{}", self.section, self.name),
            None => format!("{}.{}", self.section, self.name),
        }
    }

    /// `key=value` (the value escaped for one line).
    pub fn shown(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={}", self.key(), v.escape_debug()),
            None => self.key(),
        }
    }
}

/// A configuration text git would refuse too.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub what: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

/// Every variable of `text`, in order.
///
/// # Errors
///
/// When `text` is not a configuration git would read.
pub fn entries(text: &str) -> Result<Vec<Entry>, ParseError> {
    Ok(Parsed::parse(text)?.entries().cloned().collect())
}

#[derive(Debug, Clone)]
pub(crate) enum Item {
    /// A section header, and the variable that follows it on the same line, if any.
    Header {
        section: String,
        subsection: Option<String>,
        raw: String,
        inline: Option<Entry>,
    },
    /// A variable line (with its continuation lines).
    Entry { entry: Entry, raw: String },
    /// Blank lines and comments.
    Other(String),
}

impl Item {
    fn raw(&self) -> &str {
        match self {
            Item::Header { raw, .. } | Item::Entry { raw, .. } | Item::Other(raw) => raw,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub(crate) items: Vec<Item>,
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error(&self, what: &'static str) -> ParseError {
        // A newline just consumed belongs to the line it ends.
        let ended = self.pos > 0 && self.text.as_bytes().get(self.pos - 1) == Some(&b'\n');
        ParseError {
            line: if ended { self.line - 1 } else { self.line },
            what,
        }
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\r')) {
            self.bump();
        }
    }

    /// Skips a comment (or nothing) up to and including the end of the line.
    fn end_of_line(&mut self) -> Result<(), ParseError> {
        self.skip_blanks();
        match self.peek() {
            None => Ok(()),
            Some('\n') => {
                self.bump();
                Ok(())
            }
            Some('#' | ';') => {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
                Ok(())
            }
            Some(_) => Err(self.error("unexpected text after a value or section header")),
        }
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

impl Parsed {
    pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
        if text.contains('\0') {
            return Err(ParseError {
                line: 1 + text[..text.find('\0').unwrap_or(0)].matches('\n').count(),
                what: "a NUL byte",
            });
        }
        let mut cur = Cursor {
            text,
            pos: 0,
            line: 1,
        };
        let mut items = Vec::new();
        let mut section: Option<(String, Option<String>)> = None;
        while cur.pos < text.len() {
            let start = cur.pos;
            cur.skip_blanks();
            match cur.peek() {
                None | Some('\n' | '#' | ';') => {
                    cur.end_of_line()?;
                    items.push(Item::Other(text[start..cur.pos].to_owned()));
                }
                Some('[') => {
                    cur.bump();
                    let (name, sub) = header(&mut cur)?;
                    section = Some((name.clone(), sub.clone()));
                    cur.skip_blanks();
                    let inline = match cur.peek() {
                        Some(c) if c.is_ascii_alphabetic() => {
                            Some(variable(&mut cur, &name, sub.as_deref())?)
                        }
                        _ => {
                            cur.end_of_line()?;
                            None
                        }
                    };
                    items.push(Item::Header {
                        section: name,
                        subsection: sub,
                        raw: text[start..cur.pos].to_owned(),
                        inline,
                    });
                }
                Some(c) if c.is_ascii_alphabetic() => {
                    let Some((name, sub)) = &section else {
                        return Err(cur.error("a variable before any section"));
                    };
                    let entry = variable(&mut cur, name, sub.as_deref())?;
                    items.push(Item::Entry {
                        entry,
                        raw: text[start..cur.pos].to_owned(),
                    });
                }
                Some(_) => return Err(cur.error("a line that is neither a section nor a variable")),
            }
        }
        Ok(Parsed { items })
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.items.iter().filter_map(|i| match i {
            Item::Entry { entry, .. } => Some(entry),
            Item::Header { inline, .. } => inline.as_ref(),
            Item::Other(_) => None,
        })
    }

    pub(crate) fn render(&self) -> String {
        self.items.iter().map(Item::raw).collect()
    }

    /// Removes the first variable line equal to `e`; false when there is none (an entry on a
    /// header's line is never removed alone).
    pub(crate) fn remove(&mut self, e: &Entry) -> bool {
        let found = self
            .items
            .iter()
            .position(|i| matches!(i, Item::Entry { entry, .. } if entry == e));
        match found {
            Some(i) => {
                self.items.remove(i);
                true
            }
            None => false,
        }
    }

    /// Rewrites the first section header whose same-line variable is `e` as the header alone.
    pub(crate) fn strip_inline(&mut self, e: &Entry) {
        for item in &mut self.items {
            if let Item::Header {
                section,
                subsection,
                raw,
                inline,
            } = item
                && inline.as_ref() == Some(e)
            {
                // A name the parser accepted always renders; the fallback keeps the variable
                // out either way (an empty section header of the same name).
                *raw = header_line(section, subsection.as_deref())
                    .unwrap_or_else(|| format!("[{section}]\n"));
                *inline = None;
                return;
            }
        }
    }

    /// Adds `e` at the end of the last section of its name (or of a new one); false when its
    /// names or value cannot be written (characters git would not read back the same).
    pub(crate) fn add(&mut self, e: &Entry) -> bool {
        let Some(line) = entry_line(e) else {
            return false;
        };
        let same = |i: &Item| {
            matches!(i, Item::Header { section, subsection, .. }
                if *section == e.section && *subsection == e.subsection)
        };
        self.end_with_newline();
        match self.items.iter().rposition(same) {
            Some(h) => {
                let mut at = h + 1;
                while at < self.items.len() && !matches!(self.items[at], Item::Header { .. }) {
                    at += 1;
                }
                // Before the blank and comment lines that lead into the next section.
                while at > h + 1 && matches!(self.items[at - 1], Item::Other(_)) {
                    at -= 1;
                }
                self.items.insert(
                    at,
                    Item::Entry {
                        entry: e.clone(),
                        raw: line,
                    },
                );
            }
            None => {
                let Some(header) = header_line(&e.section, e.subsection.as_deref()) else {
                    return false;
                };
                self.items.push(Item::Header {
                    section: e.section.clone(),
                    subsection: e.subsection.clone(),
                    raw: header,
                    inline: None,
                });
                self.items.push(Item::Entry {
                    entry: e.clone(),
                    raw: line,
                });
            }
        }
        true
    }

    fn end_with_newline(&mut self) {
        if let Some(last) = self.items.last_mut() {
            let raw = match last {
                Item::Header { raw, .. } | Item::Entry { raw, .. } | Item::Other(raw) => raw,
            };
            if !raw.ends_with('\n') {
                raw.push('\n');
            }
            // A value continued onto the end of the file: an empty line ends it, unchanged.
            if raw.ends_with("\\\n") {
                raw.push('\n');
            }
        }
    }
}

/// After `[`: the section name and subsection, through `]`.
fn header(cur: &mut Cursor<'_>) -> Result<(String, Option<String>), ParseError> {
    let mut name = String::new();
    while let Some(c) = cur.peek() {
        if is_name_char(c) || c == '.' {
            name.push(c.to_ascii_lowercase());
            cur.bump();
        } else {
            break;
        }
    }
    if name.is_empty() {
        return Err(cur.error("an empty section name"));
    }
    match cur.bump() {
        Some(']') => match name.split_once('.') {
            // The legacy `[section.subsection]`, whose subsection git lowercases.
            Some((s, sub)) if !s.is_empty() && !sub.is_empty() => {
                Ok((s.to_owned(), Some(sub.to_owned())))
            }
            Some(_) => Err(cur.error("a section name with an empty part")),
            None => Ok((name, None)),
        },
        Some(' ' | '\t') if !name.contains('.') => {
            cur.skip_blanks();
            if cur.bump() != Some('"') {
                return Err(cur.error("a subsection that is not quoted"));
            }
            let mut sub = String::new();
            loop {
                match cur.bump() {
                    None | Some('\n') => return Err(cur.error("an unterminated subsection")),
                    Some('"') => break,
                    Some('\\') => match cur.bump() {
                        None | Some('\n') => return Err(cur.error("an unterminated subsection")),
                        Some(c) => sub.push(c),
                    },
                    Some(c) => sub.push(c),
                }
            }
            if cur.bump() != Some(']') {
                return Err(cur.error("a section header without its closing bracket"));
            }
            Ok((name, Some(sub)))
        }
        _ => Err(cur.error("a malformed section header")),
    }
}

/// A variable (name, optional `= value`) through the end of its line.
fn variable(cur: &mut Cursor<'_>, section: &str, sub: Option<&str>) -> Result<Entry, ParseError> {
    let mut name = String::new();
    while let Some(c) = cur.peek() {
        if is_name_char(c) {
            name.push(c.to_ascii_lowercase());
            cur.bump();
        } else {
            break;
        }
    }
    cur.skip_blanks();
    let value = match cur.peek() {
        Some('=') => {
            cur.bump();
            Some(value(cur)?)
        }
        None | Some('\n' | '#' | ';') => {
            cur.end_of_line()?;
            None
        }
        Some(_) => return Err(cur.error("a variable name with a character git does not allow")),
    };
    Ok(Entry {
        section: section.to_owned(),
        subsection: sub.map(str::to_owned),
        name,
        value,
    })
}

/// A value after `=`, through the end of its (last continued) line.
fn value(cur: &mut Cursor<'_>) -> Result<String, ParseError> {
    let mut out = String::new();
    let mut quoted = false;
    let mut spaces = 0usize;
    loop {
        let Some(c) = cur.bump() else {
            if quoted {
                return Err(cur.error("an unterminated quoted value"));
            }
            break;
        };
        match c {
            '\n' if quoted => return Err(cur.error("a newline inside a quoted value")),
            '\n' => break,
            ' ' | '\t' | '\r' if !quoted => {
                if !out.is_empty() {
                    spaces += 1;
                }
            }
            '#' | ';' if !quoted => {
                while let Some(c) = cur.bump() {
                    if c == '\n' {
                        break;
                    }
                }
                break;
            }
            _ => {
                for _ in 0..spaces {
                    out.push(' ');
                }
                spaces = 0;
                match c {
                    '"' => quoted = !quoted,
                    '\\' => match cur.bump() {
                        Some('\n') => {}
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('b') => out.push('\u{8}'),
                        Some('"') => out.push('"'),
                        Some('\\') => out.push('\\'),
                        _ => return Err(cur.error("an unknown escape in a value")),
                    },
                    c => out.push(c),
                }
            }
        }
    }
    Ok(out)
}

fn header_line(section: &str, sub: Option<&str>) -> Option<String> {
    if section.is_empty() || !section.chars().all(is_name_char) {
        return None;
    }
    match sub {
        None => Some(format!("[{section}]\n")),
        Some(s) if s.contains(['\n', '\0']) => None,
        Some(s) => {
            let escaped = s.replace('\\', "\\\\").replace('"', "\\\"");
            Some(format!("[{section} \"{escaped}\"]\n"))
        }
    }
}

fn entry_line(e: &Entry) -> Option<String> {
    if e.name.is_empty()
        || !e.name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !e.name.chars().all(is_name_char)
    {
        return None;
    }
    let Some(v) = &e.value else {
        return Some(format!("\t{}\n", e.name));
    };
    if v.contains('\0') {
        return None;
    }
    let plain = !v.is_empty()
        && !v.starts_with([' ', '\t'])
        && !v.ends_with([' ', '\t'])
        && !v.contains(['"', '\\', '\n', '\t', '#', ';', '\u{8}', '\r']);
    if plain {
        return Some(format!("\t{} = {v}\n", e.name));
    }
    let mut q = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            '\u{8}' => q.push_str("\\b"),
            '\r' => return None,
            c => q.push(c),
        }
    }
    q.push('"');
    Some(format!("\t{} = {q}\n", e.name))
}
