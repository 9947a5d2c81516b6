//! Tokens → script. Lenient: a stray `)` (a `case` pattern), a stray operator or a reserved word
//! in an odd place never stops the reading; compound commands are read as the simple commands
//! they contain.

use super::lex::{Op, Tok};
use super::{Command, MAX_NESTING, Pipeline, Script, Seg, Simple, Word};

/// Words that open or continue a compound command: skipped, and the command after them read.
const PREFIX_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "coproc", "and", "or", "not",
    "begin",
];

/// Words that close a compound command.
const CLOSING_WORDS: &[&str] = &["fi", "done", "esac", "end"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Input,
    Paren,
    Brace,
}

pub(crate) struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    pub fn new(toks: Vec<Tok>) -> Parser {
        Parser { toks, pos: 0 }
    }

    pub fn script(&mut self) -> Script {
        self.list(End::Input, 0)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_bare(&self, offset: usize) -> Option<String> {
        match self.toks.get(self.pos + offset) {
            Some(Tok::Word(w)) => w.bare(),
            _ => None,
        }
    }

    fn list(&mut self, end: End, nest: usize) -> Script {
        let mut pipelines: Vec<Pipeline> = Vec::new();
        loop {
            match self.peek() {
                None => break,
                Some(Tok::Op(Op::RParen)) => {
                    self.pos += 1;
                    if end == End::Paren {
                        break;
                    }
                }
                Some(Tok::Op(Op::Amp)) => {
                    self.pos += 1;
                    if let Some(last) = pipelines.last_mut() {
                        last.background = true;
                    }
                }
                Some(Tok::Op(
                    Op::Semi | Op::Newline | Op::AndIf | Op::OrIf | Op::CaseEnd | Op::Pipe,
                )) => self.pos += 1,
                Some(Tok::Word(_))
                    if end == End::Brace && self.peek_bare(0).as_deref() == Some("}") =>
                {
                    self.pos += 1;
                    break;
                }
                _ => {
                    let pipeline = self.pipeline(nest);
                    pipelines.push(pipeline);
                }
            }
        }
        Script { pipelines }
    }

    fn pipeline(&mut self, nest: usize) -> Pipeline {
        let mut commands = vec![self.command(nest)];
        while matches!(self.peek(), Some(Tok::Op(Op::Pipe))) {
            self.pos += 1;
            while matches!(self.peek(), Some(Tok::Op(Op::Newline))) {
                self.pos += 1;
            }
            if self.peek().is_none() {
                break;
            }
            commands.push(self.command(nest));
        }
        Pipeline {
            commands,
            background: false,
        }
    }

    fn command(&mut self, nest: usize) -> Command {
        loop {
            match self.peek() {
                Some(Tok::Op(Op::LParen)) => {
                    self.pos += 1;
                    if nest >= MAX_NESTING {
                        return Command::TooDeep;
                    }
                    let body = self.list(End::Paren, nest + 1);
                    return Command::Group {
                        body,
                        subshell: true,
                        redirects: self.trailing_redirects(),
                    };
                }
                Some(Tok::Word(_)) => {}
                _ => return self.simple(nest),
            }
            let Some(bare) = self.peek_bare(0) else {
                return self.simple(nest);
            };
            match bare.as_str() {
                "{" => {
                    self.pos += 1;
                    if nest >= MAX_NESTING {
                        return Command::TooDeep;
                    }
                    let body = self.list(End::Brace, nest + 1);
                    return Command::Group {
                        body,
                        subshell: false,
                        redirects: self.trailing_redirects(),
                    };
                }
                "function" => {
                    self.pos += 1;
                    let name = self.peek_bare(0).unwrap_or_default();
                    self.pos += 1;
                    if matches!(self.peek(), Some(Tok::Op(Op::LParen)))
                        && matches!(self.toks.get(self.pos + 1), Some(Tok::Op(Op::RParen)))
                    {
                        self.pos += 2;
                    }
                    return self.function_body(name, nest);
                }
                "case" => {
                    // `case WORD in`: the patterns that follow read as words before a `)`.
                    self.pos += 1;
                    if matches!(self.peek(), Some(Tok::Word(_))) {
                        self.pos += 1;
                    }
                    if self.peek_bare(0).as_deref() == Some("in") {
                        self.pos += 1;
                    }
                    return Command::Simple(Simple::default());
                }
                w if PREFIX_WORDS.contains(&w) => self.pos += 1,
                w if CLOSING_WORDS.contains(&w) => {
                    self.pos += 1;
                    return self.simple(nest);
                }
                _ => return self.simple(nest),
            }
        }
    }

    fn function_body(&mut self, name: String, nest: usize) -> Command {
        while matches!(self.peek(), Some(Tok::Op(Op::Newline))) {
            self.pos += 1;
        }
        if nest >= MAX_NESTING {
            return Command::TooDeep;
        }
        let body = self.command(nest + 1);
        Command::Function {
            name,
            body: Box::new(body),
        }
    }

    fn trailing_redirects(&mut self) -> Vec<super::Redirect> {
        let mut out = Vec::new();
        while let Some(Tok::Redir(r)) = self.peek() {
            out.push(r.clone());
            self.pos += 1;
        }
        out
    }

    fn simple(&mut self, nest: usize) -> Command {
        let mut simple = Simple::default();
        loop {
            match self.peek() {
                Some(Tok::Word(w)) => {
                    let w = w.clone();
                    self.pos += 1;
                    if simple.words.is_empty()
                        && let Some((name, value)) = assignment(&w)
                    {
                        simple.assignments.push((name, value));
                    } else {
                        simple.words.push(w);
                    }
                }
                Some(Tok::Redir(r)) => {
                    simple.redirects.push(r.clone());
                    self.pos += 1;
                }
                _ => break,
            }
        }
        // `name() body`
        if simple.words.len() == 1
            && simple.assignments.is_empty()
            && matches!(self.peek(), Some(Tok::Op(Op::LParen)))
            && matches!(self.toks.get(self.pos + 1), Some(Tok::Op(Op::RParen)))
            && let Some(name) = simple.words[0].static_text()
        {
            self.pos += 2;
            return self.function_body(name, nest);
        }
        Command::Simple(simple)
    }
}

/// `NAME=value` (or `NAME+=value`, `NAME[i]=value`) at the start of a word, unquoted.
fn assignment(word: &Word) -> Option<(String, Word)> {
    let Some(Seg::Lit {
        text,
        quoted: false,
    }) = word.segs.first()
    else {
        return None;
    };
    let eq = text.find('=')?;
    let mut name = &text[..eq];
    name = name.strip_suffix('+').unwrap_or(name);
    if let Some(open) = name.find('[') {
        if !name.ends_with(']') {
            return None;
        }
        name = &name[..open];
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let mut segs = Vec::new();
    let rest = &text[eq + 1..];
    if !rest.is_empty() {
        segs.push(Seg::Lit {
            text: rest.to_owned(),
            quoted: false,
        });
    }
    segs.extend(word.segs[1..].iter().cloned());
    Some((name.to_owned(), Word { segs }))
}
