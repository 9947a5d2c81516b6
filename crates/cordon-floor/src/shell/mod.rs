//! A shell command line as the floor needs to see it: which simple commands run, with which words,
//! redirections and substitutions, and how they are joined.
//!
//! This is not a shell. It is a lenient reader of POSIX and bash syntax (quoting, `$'…'`,
//! parameter expansion with defaults, `$(…)`, backticks, process substitution, subshells, brace
//! groups, functions, here-documents) that never fails: an unterminated quote ends at the end of
//! the input, and a construct it does not know is read as words, so that nothing a shell would run
//! is left unread. Nesting deeper than [`MAX_NESTING`] is recorded, not followed, and the floor
//! refuses it.

mod lex;
mod parse;

pub(crate) use lex::split_words;

/// Deepest nesting of substitutions and groups that is read; deeper is marked [`Seg::TooDeep`] or
/// [`Command::TooDeep`].
pub(crate) const MAX_NESTING: usize = 64;

/// Parses a command line.
pub(crate) fn parse(text: &str) -> Script {
    parse_at(text, 0)
}

fn parse_at(text: &str, depth: usize) -> Script {
    let chars: Vec<char> = text.chars().collect();
    let tokens = lex::Lexer::new(&chars, depth).tokens(false);
    parse::Parser::new(tokens).script()
}

/// A list of pipelines, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Script {
    pub pipelines: Vec<Pipeline>,
}

/// Commands joined by `|`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pipeline {
    pub commands: Vec<Command>,
    /// Ended by `&`.
    pub background: bool,
}

/// One command of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Simple(Simple),
    /// `( … )` (a subshell) or `{ …; }`.
    Group {
        body: Script,
        subshell: bool,
        redirects: Vec<Redirect>,
    },
    /// `name() body` or `function name body`.
    Function {
        name: String,
        body: Box<Command>,
    },
    /// Nested deeper than [`MAX_NESTING`].
    TooDeep,
}

/// Assignments, words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Simple {
    pub assignments: Vec<(String, Word)>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// A word before expansion: literal text, parameters, substitutions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pub segs: Vec<Seg>,
}

/// A piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// Text; `quoted` when it came from quotes or a backslash (no tilde or brace expansion).
    Lit { text: String, quoted: bool },
    /// `$name`, `${name…}`.
    Var { name: String, op: VarOp },
    /// `$(…)`, backticks, `<(…)`, `>(…)`.
    Subst(Script),
    /// Arithmetic and other expansions whose value the floor does not compute.
    Unknown,
    /// Nested deeper than [`MAX_NESTING`].
    TooDeep,
}

/// What a parameter expansion does with its parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VarOp {
    /// `$name`, `${name}`, `${name:?msg}`.
    Plain,
    /// `${name:-word}`, `${name-word}`, `${name:=word}`, `${name=word}`.
    Default(Word),
    /// `${name:+word}`, `${name+word}`.
    Alternate(Word),
    /// Anything that transforms the value (`${#name}`, `${name%x}`, `${!name}`, …).
    Modified,
}

/// A redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub kind: RedirKind,
    /// The file (or descriptor, or here-document delimiter).
    pub target: Word,
    /// A here-document's body or a here-string's word: what the command reads on stdin.
    pub body: Option<Word>,
}

/// Redirection operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirKind {
    /// `<`, `<&`.
    Read,
    /// `>`, `>|`, `>>`, `<>`, `&>`, `&>>`, `>&` with a file.
    Write,
    /// `<<`, `<<-`, `<<<`.
    Here,
}

impl Word {
    /// A word of literal text.
    pub fn literal(text: &str, quoted: bool) -> Word {
        Word {
            segs: vec![Seg::Lit {
                text: text.to_owned(),
                quoted,
            }],
        }
    }

    /// The word's text when it is all unquoted literal text (reserved words, `{`, `}`).
    pub fn bare(&self) -> Option<String> {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit {
                    text,
                    quoted: false,
                } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }

    /// The word's text when it has no expansion at all (quoted or not).
    pub fn static_text(&self) -> Option<String> {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit { text, .. } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }

    /// True when the word has a substitution, arithmetic or a too-deep part.
    pub fn has_substitution(&self) -> bool {
        self.segs.iter().any(|s| match s {
            Seg::Subst(_) | Seg::Unknown | Seg::TooDeep => true,
            Seg::Var { op, .. } => match op {
                VarOp::Default(w) | VarOp::Alternate(w) => w.has_substitution(),
                _ => false,
            },
            Seg::Lit { .. } => false,
        })
    }
}

impl Script {
    /// True when this is one simple command with no substitution, group, function, background
    /// job or here-document: something an approval may be remembered for.
    pub fn is_single_simple(&self) -> bool {
        let [pipeline] = self.pipelines.as_slice() else {
            return false;
        };
        if pipeline.background {
            return false;
        }
        let [Command::Simple(simple)] = pipeline.commands.as_slice() else {
            return false;
        };
        !simple.words.is_empty()
            && simple
                .words
                .iter()
                .chain(simple.assignments.iter().map(|(_, w)| w))
                .chain(simple.redirects.iter().map(|r| &r.target))
                .all(|w| !w.has_substitution())
            && simple.redirects.iter().all(|r| r.kind != RedirKind::Here)
    }
}

#[cfg(test)]
mod tests;
