//! Characters → tokens. Substitutions are lexed and parsed here, recursively, into the words
//! that hold them.

use super::parse::Parser;
use super::{MAX_NESTING, RedirKind, Redirect, Seg, VarOp, Word};

/// Control operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Semi,
    Amp,
    AndIf,
    OrIf,
    Pipe,
    CaseEnd,
    LParen,
    RParen,
    Newline,
}

/// A token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Word(Word),
    Redir(Redirect),
    Op(Op),
}

struct PendingHeredoc {
    token: usize,
    delimiter: String,
    strip_tabs: bool,
    quoted: bool,
}

pub(crate) struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    depth: usize,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Lexer<'a> {
    pub fn new(chars: &'a [char], depth: usize) -> Lexer<'a> {
        Lexer {
            chars,
            pos: 0,
            depth,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// Tokens up to the end of input, or (`in_parens`) up to the `)` that closes a `$(`.
    pub fn tokens(&mut self, in_parens: bool) -> Vec<Tok> {
        let mut toks = Vec::new();
        let mut pending: Vec<PendingHeredoc> = Vec::new();
        let mut parens = 0usize;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.pos += 1;
                    toks.push(Tok::Op(Op::Newline));
                    self.read_heredocs(&mut toks, &mut pending);
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                ')' => {
                    self.pos += 1;
                    if in_parens && parens == 0 {
                        return toks;
                    }
                    parens = parens.saturating_sub(1);
                    toks.push(Tok::Op(Op::RParen));
                }
                '(' => {
                    self.pos += 1;
                    parens += 1;
                    toks.push(Tok::Op(Op::LParen));
                }
                ';' => {
                    if self.starts_with(";;&") {
                        self.pos += 3;
                        toks.push(Tok::Op(Op::CaseEnd));
                    } else if self.starts_with(";;") || self.starts_with(";&") {
                        self.pos += 2;
                        toks.push(Tok::Op(Op::CaseEnd));
                    } else {
                        self.pos += 1;
                        toks.push(Tok::Op(Op::Semi));
                    }
                }
                '|' => {
                    if self.starts_with("||") {
                        self.pos += 2;
                        toks.push(Tok::Op(Op::OrIf));
                    } else {
                        self.pos += if self.starts_with("|&") { 2 } else { 1 };
                        toks.push(Tok::Op(Op::Pipe));
                    }
                }
                '&' => {
                    if self.starts_with("&&") {
                        self.pos += 2;
                        toks.push(Tok::Op(Op::AndIf));
                    } else if self.starts_with("&>>") {
                        self.pos += 3;
                        toks.push(self.redirect(RedirKind::Write));
                    } else if self.starts_with("&>") {
                        self.pos += 2;
                        toks.push(self.redirect(RedirKind::Write));
                    } else {
                        self.pos += 1;
                        toks.push(Tok::Op(Op::Amp));
                    }
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    let word = self.word(false);
                    toks.push(Tok::Word(word));
                }
                '<' | '>' => {
                    let tok = self.redirect_operator(&mut pending, toks.len());
                    toks.push(tok);
                }
                '0'..='9' if self.fd_redirect_ahead() => {
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    let tok = self.redirect_operator(&mut pending, toks.len());
                    toks.push(tok);
                }
                _ => {
                    let word = self.word(false);
                    toks.push(Tok::Word(word));
                }
            }
        }
        toks
    }

    fn fd_redirect_ahead(&self) -> bool {
        let mut i = 0;
        while self.peek_at(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        matches!(self.peek_at(i), Some('<' | '>')) && self.peek_at(i + 1) != Some('(')
    }

    /// At `<` or `>`: the operator and its target.
    fn redirect_operator(&mut self, pending: &mut Vec<PendingHeredoc>, index: usize) -> Tok {
        let (len, kind, heredoc) = if self.starts_with("<<<") {
            (3, RedirKind::Here, None)
        } else if self.starts_with("<<-") {
            (3, RedirKind::Here, Some(true))
        } else if self.starts_with("<<") {
            (2, RedirKind::Here, Some(false))
        } else if self.starts_with("<>") {
            (2, RedirKind::Write, None)
        } else if self.starts_with("<&") {
            (2, RedirKind::Read, None)
        } else if self.starts_with("<") {
            (1, RedirKind::Read, None)
        } else if self.starts_with(">>") || self.starts_with(">|") || self.starts_with(">&") {
            (2, RedirKind::Write, None)
        } else {
            (1, RedirKind::Write, None)
        };
        self.pos += len;
        match heredoc {
            Some(strip_tabs) => {
                self.skip_blanks();
                let target = self.word(false);
                let quoted = target
                    .segs
                    .iter()
                    .any(|s| matches!(s, Seg::Lit { quoted: true, .. }));
                let delimiter = target.static_text().unwrap_or_default();
                pending.push(PendingHeredoc {
                    token: index,
                    delimiter,
                    strip_tabs,
                    quoted,
                });
                Tok::Redir(Redirect {
                    kind,
                    target,
                    body: None,
                })
            }
            None if kind == RedirKind::Here => {
                self.skip_blanks();
                let target = self.word(false);
                Tok::Redir(Redirect {
                    kind,
                    body: Some(target.clone()),
                    target,
                })
            }
            None => self.redirect(kind),
        }
    }

    fn redirect(&mut self, kind: RedirKind) -> Tok {
        self.skip_blanks();
        let target = match self.peek() {
            Some(c) if !matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>') => {
                self.word(false)
            }
            _ => Word::default(),
        };
        Tok::Redir(Redirect {
            kind,
            target,
            body: None,
        })
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn read_heredocs(&mut self, toks: &mut [Tok], pending: &mut Vec<PendingHeredoc>) {
        for doc in pending.drain(..) {
            let mut body = String::new();
            loop {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                let at_end = self.peek().is_none();
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let compared = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if compared == doc.delimiter {
                    break;
                }
                body.push_str(compared);
                body.push('\n');
                if at_end {
                    break;
                }
            }
            let word = if doc.quoted {
                Word::literal(&body, true)
            } else {
                let chars: Vec<char> = body.chars().collect();
                let mut sub = Lexer::new(&chars, self.depth);
                let mut segs = Vec::new();
                sub.double_quoted(&mut segs, false);
                Word { segs }
            };
            if let Some(Tok::Redir(r)) = toks.get_mut(doc.token) {
                r.body = Some(word);
            }
        }
    }

    /// One word. `whole`: the rest of the input is one word (the word of `${x:-word}`), so blanks
    /// and operators are literal.
    pub fn word(&mut self, whole: bool) -> Word {
        let mut segs = Vec::new();
        let mut lit = String::new();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | ')' if !whole => break,
                '<' | '>' if !whole => {
                    if self.peek_at(1) == Some('(') && lit.is_empty() && segs.is_empty() {
                        self.pos += 2;
                        segs.push(self.command_substitution());
                        lit.push_str("/dev/fd/63");
                    } else {
                        break;
                    }
                }
                '(' if !whole => {
                    if lit.ends_with('=') || lit.ends_with(['@', '!', '?', '*', '+']) {
                        // An array assignment `a=( … )` or an extglob `@( … )`: the words inside
                        // are data, but substitutions in them still run.
                        self.pos += 1;
                        let inner = self.tokens(true);
                        for tok in inner {
                            if let Tok::Word(w) = tok {
                                segs.extend(
                                    w.segs.into_iter().filter(|s| matches!(s, Seg::Subst(_))),
                                );
                            }
                        }
                        lit.push_str("(…)");
                    } else {
                        break;
                    }
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(ch) => {
                            flush(&mut segs, &mut lit);
                            segs.push(Seg::Lit {
                                text: ch.to_string(),
                                quoted: true,
                            });
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    flush(&mut segs, &mut lit);
                    self.pos += 1;
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                    let text: String = self.chars[start..self.pos].iter().collect();
                    self.pos += 1;
                    segs.push(Seg::Lit { text, quoted: true });
                }
                '"' => {
                    flush(&mut segs, &mut lit);
                    self.pos += 1;
                    self.double_quoted(&mut segs, true);
                }
                '`' => {
                    flush(&mut segs, &mut lit);
                    segs.push(self.backticks());
                }
                '$' => {
                    flush(&mut segs, &mut lit);
                    self.dollar(&mut segs, false);
                }
                _ => {
                    lit.push(c);
                    self.pos += 1;
                }
            }
        }
        flush(&mut segs, &mut lit);
        Word { segs }
    }

    /// Inside double quotes (or an unquoted here-document body when `terminated` is false).
    fn double_quoted(&mut self, segs: &mut Vec<Seg>, terminated: bool) {
        let mut text = String::new();
        let push = |segs: &mut Vec<Seg>, text: &mut String| {
            segs.push(Seg::Lit {
                text: std::mem::take(text),
                quoted: true,
            });
        };
        while let Some(c) = self.peek() {
            match c {
                '"' if terminated => {
                    self.pos += 1;
                    break;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(ch @ ('$' | '`' | '"' | '\\')) => {
                            text.push(ch);
                            self.pos += 1;
                        }
                        _ => text.push('\\'),
                    }
                }
                '$' => {
                    push(segs, &mut text);
                    self.dollar(segs, true);
                }
                '`' => {
                    push(segs, &mut text);
                    segs.push(self.backticks());
                }
                _ => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        push(segs, &mut text);
    }

    /// At `$`.
    fn dollar(&mut self, segs: &mut Vec<Seg>, in_quotes: bool) {
        self.pos += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.pos += 2;
                self.skip_balanced('(', ')', 2);
                segs.push(Seg::Unknown);
            }
            Some('(') => {
                self.pos += 1;
                segs.push(self.command_substitution());
            }
            Some('[') => {
                self.pos += 1;
                self.skip_balanced('[', ']', 1);
                segs.push(Seg::Unknown);
            }
            Some('{') => {
                self.pos += 1;
                segs.push(self.parameter(in_quotes));
            }
            Some('\'') if !in_quotes => {
                self.pos += 1;
                let text = self.ansi_c();
                segs.push(Seg::Lit { text, quoted: true });
            }
            Some('"') if !in_quotes => {
                self.pos += 1;
                self.double_quoted(segs, true);
            }
            Some(c) if is_name_start(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_name_char) {
                    self.pos += 1;
                }
                let name: String = self.chars[start..self.pos].iter().collect();
                segs.push(Seg::Var {
                    name,
                    op: VarOp::Plain,
                });
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                self.pos += 1;
                segs.push(Seg::Var {
                    name: c.to_string(),
                    op: VarOp::Plain,
                });
            }
            _ => segs.push(Seg::Lit {
                text: "$".into(),
                quoted: in_quotes,
            }),
        }
    }

    /// After `$(` or `<(`: the script up to the matching `)`.
    fn command_substitution(&mut self) -> Seg {
        if self.depth >= MAX_NESTING {
            self.skip_balanced('(', ')', 1);
            return Seg::TooDeep;
        }
        let mut sub = Lexer {
            chars: self.chars,
            pos: self.pos,
            depth: self.depth + 1,
        };
        let tokens = sub.tokens(true);
        self.pos = sub.pos;
        Seg::Subst(Parser::new(tokens).script())
    }

    /// At a backtick: the script up to the next unescaped backtick.
    fn backticks(&mut self) -> Seg {
        self.pos += 1;
        let mut text = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => match self.peek() {
                    Some(ch @ ('`' | '\\' | '$')) => {
                        text.push(ch);
                        self.pos += 1;
                    }
                    _ => text.push('\\'),
                },
                _ => text.push(c),
            }
        }
        if self.depth >= MAX_NESTING {
            return Seg::TooDeep;
        }
        Seg::Subst(super::parse_at(&text, self.depth + 1))
    }

    /// Skips to the close that balances `depth` opens already consumed.
    fn skip_balanced(&mut self, open: char, close: char, mut depth: usize) {
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            } else if c == '\\' {
                self.pos += 1;
            }
        }
    }

    /// After `${`.
    fn parameter(&mut self, in_quotes: bool) -> Seg {
        let start = self.pos;
        let mut depth = 1usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek() {
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (Some(_), '\\') => self.pos += 1,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '\\') => self.pos += 1,
                (None, '{') => depth += 1,
                (None, '}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        let end = self.pos.min(self.chars.len());
        let body = &self.chars[start..end];
        self.pos = (end + 1).min(self.chars.len());

        if body.first() == Some(&'#') && body.len() > 1 || body.first() == Some(&'!') {
            let name: String = body[1..].iter().take_while(|c| is_name_char(**c)).collect();
            return Seg::Var {
                name,
                op: VarOp::Modified,
            };
        }
        let name_len = match body.first() {
            Some(c) if is_name_start(*c) => body.iter().take_while(|c| is_name_char(**c)).count(),
            Some(c) if c.is_ascii_digit() => body.iter().take_while(|c| c.is_ascii_digit()).count(),
            Some(c) if "@*#?-$!".contains(*c) => 1,
            _ => 0,
        };
        let name: String = body[..name_len].iter().collect();
        let rest = &body[name_len..];
        let (op_len, kind) = match rest {
            [] => (0, 'p'),
            [':', '-' | '=', ..] => (2, 'd'),
            ['-' | '=', ..] => (1, 'd'),
            [':', '+', ..] => (2, 'a'),
            ['+', ..] => (1, 'a'),
            [':', '?', ..] | ['?', ..] => (0, 'p'),
            _ => (0, 'm'),
        };
        let op = match kind {
            'p' => VarOp::Plain,
            'm' => VarOp::Modified,
            _ => {
                let word = self.sub_word(&rest[op_len..], in_quotes);
                if kind == 'd' {
                    VarOp::Default(word)
                } else {
                    VarOp::Alternate(word)
                }
            }
        };
        Seg::Var { name, op }
    }

    /// The word of `${x:-word}`: lexed whole, marked quoted inside double quotes.
    fn sub_word(&self, chars: &[char], in_quotes: bool) -> Word {
        if self.depth >= MAX_NESTING {
            return Word {
                segs: vec![Seg::TooDeep],
            };
        }
        let mut sub = Lexer::new(chars, self.depth + 1);
        let mut word = sub.word(true);
        if in_quotes {
            for seg in &mut word.segs {
                if let Seg::Lit { quoted, .. } = seg {
                    *quoted = true;
                }
            }
        }
        word
    }

    /// After `$'`: ANSI-C quoting, decoded, then normalized like the rest of the command so a
    /// `$'\uff52\uff4d'` reads `rm`.
    fn ansi_c(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\'' => break,
                '\\' => {
                    let Some(e) = self.peek() else { break };
                    self.pos += 1;
                    match e {
                        'a' => out.push('\u{7}'),
                        'b' => out.push('\u{8}'),
                        'e' | 'E' => out.push('\u{1b}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'v' => out.push('\u{b}'),
                        '0'..='7' => {
                            let mut v = e.to_digit(8).unwrap_or(0);
                            for _ in 0..2 {
                                match self.peek().and_then(|c| c.to_digit(8)) {
                                    Some(d) => {
                                        v = v * 8 + d;
                                        self.pos += 1;
                                    }
                                    None => break,
                                }
                            }
                            out.extend(char::from_u32(v));
                        }
                        'x' => out.extend(self.hex(2)),
                        'u' => out.extend(self.hex(4)),
                        'U' => out.extend(self.hex(8)),
                        'c' => {
                            if let Some(ch) = self.peek() {
                                self.pos += 1;
                                out.extend(char::from_u32(u32::from(ch) & 0x1f));
                            }
                        }
                        other => {
                            if !matches!(other, '\\' | '\'' | '"' | '?') {
                                out.push('\\');
                            }
                            out.push(other);
                        }
                    }
                }
                _ => out.push(c),
            }
        }
        crate::normalize::normalize(&out)
    }

    fn hex(&mut self, max: usize) -> Option<char> {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    v = v * 16 + d;
                    self.pos += 1;
                    n += 1;
                }
                None => break,
            }
        }
        if n == 0 { None } else { char::from_u32(v) }
    }
}

fn flush(segs: &mut Vec<Seg>, lit: &mut String) {
    if !lit.is_empty() {
        segs.push(Seg::Lit {
            text: std::mem::take(lit),
            quoted: false,
        });
    }
}

/// Splits `text` into words the way `env -S` does (quotes and escapes, no expansion).
pub(crate) fn split_words(text: &str) -> Vec<Word> {
    let chars: Vec<char> = text.chars().collect();
    Lexer::new(&chars, MAX_NESTING)
        .tokens(false)
        .into_iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w),
            _ => None,
        })
        .collect()
}
