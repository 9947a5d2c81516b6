//! The walk over a parsed command: expands words into their possible readings, follows `cd`,
//! assignments and functions, unwraps wrappers and shells, and asks the rules about every program
//! that would run. The first refusal ends the walk.

use std::collections::HashMap;

use crate::paths::{PathCtx, Resolved, resolve};
use crate::rules::process::Lookup;
use crate::rules::{self, Ctx, Hit, ProcessNames};
use crate::shell::{
    self, Command, Pipeline, RedirKind, Redirect, Script, Seg, Simple, VarOp, Word,
};
use crate::verdict::{Refusal, Rule};
use crate::wrappers::{self, Inner, Stop};

mod expand;
mod words;

use expand::joined_readings;
use words::{builtin_state, command_argvs, first_word_is_dollar_zero, program_name, script_argvs};
pub(crate) use words::{render, shell_command_string};

/// Wrappers, shell strings, substitutions and function calls nested deeper than this are refused.
pub(crate) const MAX_DEPTH: usize = 10;
/// Readings one word may have (`${a:-x}${b:-y}`, brace expansion) before the floor gives up.
const MAX_WORD_READINGS: usize = 256;
/// Programs one check may examine, counting every reading.
const BUDGET: usize = 100_000;

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh", "loksh", "yash", "ash",
    "hush", "fish", "rbash", "posh", "tcsh", "csh",
];

/// One word of a command, expanded.
#[derive(Debug, Clone)]
pub(crate) struct Arg {
    /// Every text the word may expand to; never empty, the first is the plain reading.
    pub readings: Vec<String>,
    /// A substitution in the word looks up a protected process (`$(pgrep claude)`).
    pub looks_up_protected: bool,
}

impl Arg {
    pub fn plain(text: String) -> Arg {
        Arg {
            readings: vec![text],
            looks_up_protected: false,
        }
    }

    pub fn text(&self) -> &str {
        self.readings
            .first()
            .map(String::as_str)
            .unwrap_or_default()
    }
}

/// What a command reads on stdin, when the floor can tell.
#[derive(Debug, Clone, Default)]
struct Stdin {
    /// The text, when a here-document, a here-string or an `echo` before a pipe gives it.
    text: Option<Vec<String>>,
    /// An earlier stage of the pipeline looks up a protected process (`pgrep claude | xargs kill`).
    looks_up_protected: bool,
}

/// What a shell knows while it runs a script.
#[derive(Debug, Clone, Default)]
struct State {
    vars: HashMap<String, Vec<String>>,
    cwd: Option<Resolved>,
    positional: Option<Vec<Vec<String>>>,
    zero: Option<Vec<String>>,
    functions: HashMap<String, Command>,
    calling: Vec<String>,
}

pub(crate) struct Judge<'f> {
    home: Option<&'f [String]>,
    names: &'f ProcessNames,
    sudo_password_configured: bool,
    budget: usize,
}

type Judged = Result<(), Refusal>;

fn refusal(rule: Rule, reason: impl Into<String>, evidence: impl Into<String>) -> Refusal {
    Refusal {
        rule,
        reason: reason.into(),
        evidence: evidence.into(),
    }
}

impl<'f> Judge<'f> {
    pub fn new(
        home: Option<&'f [String]>,
        names: &'f ProcessNames,
        sudo_password_configured: bool,
    ) -> Judge<'f> {
        Judge {
            home,
            names,
            sudo_password_configured,
            budget: BUDGET,
        }
    }

    /// Judges a shell command line.
    pub fn command_line(&mut self, script: &Script) -> Judged {
        self.script(script, &mut State::default(), 0)
    }

    /// Judges an argument vector (no shell in between).
    pub fn argv(&mut self, argv: &[Arg]) -> Judged {
        self.run(argv, &mut State::default(), 0, &Stdin::default())
    }

    fn script(&mut self, script: &Script, st: &mut State, depth: usize) -> Judged {
        for pipeline in &script.pipelines {
            self.pipeline(pipeline, st, depth)?;
        }
        Ok(())
    }

    fn pipeline(&mut self, p: &Pipeline, st: &mut State, depth: usize) -> Judged {
        let self_calls = p
            .commands
            .iter()
            .filter(|c| first_word_is_dollar_zero(c))
            .count();
        if self_calls >= 2 || (self_calls == 1 && p.background) {
            return Err(refusal(
                Rule::ForkBomb,
                "the script starts copies of itself ($0) in a pipe or in the background",
                "$0 | $0 &",
            ));
        }
        let separate = p.commands.len() > 1 || p.background;
        let mut stdin = Stdin::default();
        let mut earlier = Lookup::default();
        for command in &p.commands {
            for argv in command_argvs(command) {
                earlier.add(self.names, &argv);
            }
            let next = Stdin {
                text: self.static_output(command, st),
                looks_up_protected: earlier.found(),
            };
            if separate {
                let mut sub = st.clone();
                self.command(command, &mut sub, depth, &stdin)?;
            } else {
                self.command(command, st, depth, &stdin)?;
            }
            stdin = next;
        }
        Ok(())
    }

    fn command(&mut self, c: &Command, st: &mut State, depth: usize, stdin: &Stdin) -> Judged {
        match c {
            Command::Simple(simple) => self.simple(simple, st, depth, stdin),
            Command::Group {
                body,
                subshell,
                redirects,
            } => {
                self.redirects(redirects, st, depth)?;
                if *subshell {
                    self.script(body, &mut st.clone(), depth)
                } else {
                    self.script(body, st, depth)
                }
            }
            Command::Function { name, body } => {
                if rules::process::function_forks_itself(name, body) {
                    return Err(refusal(
                        Rule::ForkBomb,
                        format!(
                            "function `{name}` starts copies of itself in a pipe or in the background"
                        ),
                        format!("{name}() {{ {name} | {name} & }}"),
                    ));
                }
                // The body is judged where it is defined, whether or not it is called.
                let depth = deeper(depth, name)?;
                let mut sub = st.clone();
                sub.positional = None;
                sub.calling.push(name.clone());
                self.command(body, &mut sub, depth, &Stdin::default())?;
                st.functions.insert(name.clone(), (**body).clone());
                Ok(())
            }
            Command::TooDeep => Err(refusal(
                Rule::NestingDepth,
                format!(
                    "groups or substitutions are nested more than {} deep",
                    shell::MAX_NESTING
                ),
                "( ( ( … ) ) )",
            )),
        }
    }

    fn simple(&mut self, s: &Simple, st: &mut State, depth: usize, stdin: &Stdin) -> Judged {
        for word in s
            .words
            .iter()
            .chain(s.assignments.iter().map(|(_, w)| w))
            .chain(s.redirects.iter().map(|r| &r.target))
            .chain(s.redirects.iter().filter_map(|r| r.body.as_ref()))
        {
            self.substitutions(word, st, depth)?;
        }
        self.redirects(&s.redirects, st, depth)?;
        if s.words.is_empty() {
            for (name, value) in &s.assignments {
                let readings = self.readings(value, st)?;
                st.vars.insert(name.clone(), readings);
            }
            return Ok(());
        }
        let mut argv = Vec::with_capacity(s.words.len());
        for word in &s.words {
            argv.push(self.arg(word, st)?);
        }
        let here = s
            .redirects
            .iter()
            .rev()
            .find(|r| r.kind == RedirKind::Here)
            .and_then(|r| r.body.as_ref());
        let stdin = match here {
            Some(body) => Stdin {
                text: Some(self.readings(body, st)?),
                looks_up_protected: stdin.looks_up_protected,
            },
            None => stdin.clone(),
        };
        self.run(&argv, st, depth, &stdin)
    }

    /// Judges the scripts inside a word's substitutions.
    fn substitutions(&mut self, word: &Word, st: &State, depth: usize) -> Judged {
        for seg in &word.segs {
            match seg {
                Seg::Subst(script) => {
                    let depth = deeper(depth, "$( … )")?;
                    self.script(script, &mut st.clone(), depth)?;
                }
                Seg::TooDeep => {
                    return Err(refusal(
                        Rule::NestingDepth,
                        format!(
                            "substitutions are nested more than {} deep",
                            shell::MAX_NESTING
                        ),
                        "$( $( $( … ) ) )",
                    ));
                }
                Seg::Var {
                    op: VarOp::Default(w) | VarOp::Alternate(w),
                    ..
                } => self.substitutions(w, st, depth)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn redirects(&mut self, redirects: &[Redirect], st: &State, depth: usize) -> Judged {
        for r in redirects {
            self.substitutions(&r.target, st, depth)?;
            if r.kind != RedirKind::Write {
                continue;
            }
            for reading in self.readings(&r.target, st)? {
                if let Some(hit) = rules::device::written(&reading, &self.path_ctx(st)) {
                    return Err(refusal(hit.rule, hit.reason, format!("> {reading}")));
                }
            }
        }
        Ok(())
    }

    fn path_ctx<'s>(&self, st: &'s State) -> PathCtx<'s>
    where
        'f: 's,
    {
        PathCtx {
            home: self.home,
            cwd: st.cwd.as_ref(),
        }
    }

    fn arg(&mut self, word: &Word, st: &State) -> Result<Arg, Refusal> {
        let looks_up_protected = word.segs.iter().any(|seg| match seg {
            Seg::Subst(script) => self.names.lookup_in(&script_argvs(script)),
            _ => false,
        });
        Ok(Arg {
            readings: self.readings(word, st)?,
            looks_up_protected,
        })
    }

    /// Runs `argv` (program and arguments) in `st`.
    fn run(&mut self, argv: &[Arg], st: &mut State, depth: usize, stdin: &Stdin) -> Judged {
        let Some(first) = argv.first() else {
            return Ok(());
        };
        if self.budget == 0 {
            return Err(refusal(
                Rule::TooComplex,
                "the command has more readings than the floor examines",
                render(argv),
            ));
        }
        self.budget -= 1;
        let mut programs = first.readings.clone();
        programs.dedup();
        for program in programs {
            let name = program_name(&program);
            self.program(&name, argv, st, depth, stdin)?;
        }
        Ok(())
    }

    fn program(
        &mut self,
        name: &str,
        argv: &[Arg],
        st: &mut State,
        depth: usize,
        stdin: &Stdin,
    ) -> Judged {
        let args = &argv[1..];
        if builtin_state(name, args, st, self.home) {
            return Ok(());
        }
        if let Some(body) = st.functions.get(name).cloned()
            && !st.calling.iter().any(|c| c == name)
        {
            let depth = deeper(depth, name)?;
            let mut sub = st.clone();
            sub.positional = Some(args.iter().map(|a| a.readings.clone()).collect());
            sub.calling.push(name.to_owned());
            // Judged as the function and, in case `command` or `builtin` skipped it, as the
            // program of the same name.
            self.command(&body, &mut sub, depth, stdin)?;
        }
        let texts: Vec<String> = args.iter().map(|a| a.text().to_owned()).collect();
        if let Some(unwrapped) = wrappers::unwrap(name, &texts, self.sudo_password_configured) {
            let inners = match unwrapped {
                Ok(inners) => inners,
                Err(Stop::SudoStdin) => {
                    return Err(refusal(
                        Rule::SudoPasswordGuess,
                        "`sudo -S` reads a password from stdin, and the harness configured none: \
                         anything piped in would be a guess",
                        render(argv),
                    ));
                }
                Err(Stop::TooManyReadings) => {
                    return Err(refusal(
                        Rule::TooComplex,
                        format!("`{name}` has options the floor cannot place"),
                        render(argv),
                    ));
                }
            };
            let depth = deeper(depth, &render(argv))?;
            for inner in inners {
                self.inner(inner, args, st, depth, stdin)?;
            }
            return Ok(());
        }
        if SHELLS.contains(&name) {
            return self.shell(args, st, depth, stdin, argv);
        }
        match name {
            "eval" => {
                let depth = deeper(depth, "eval")?;
                for text in joined_readings(args) {
                    self.shell_text(&text, st, depth, None)?;
                }
                return Ok(());
            }
            "trap" => {
                if let Some(action) = args.first().filter(|a| !a.text().starts_with('-')) {
                    let depth = deeper(depth, "trap")?;
                    for text in &action.readings {
                        self.shell_text(text, st, depth, None)?;
                    }
                }
                return Ok(());
            }
            "find" => {
                let ctx = self.ctx(st, false);
                let (hit, execs) = rules::delete::find(args, &ctx);
                if let Some(hit) = hit {
                    return Err(self.refuse(hit, argv));
                }
                let depth = deeper(depth, "find -exec")?;
                for exec in execs {
                    self.run(&exec, &mut st.clone(), depth, &Stdin::default())?;
                }
                return Ok(());
            }
            _ => {}
        }
        let ctx = self.ctx(st, stdin.looks_up_protected);
        match rules::check(name, args, &ctx) {
            Some(hit) => Err(self.refuse(hit, argv)),
            None => Ok(()),
        }
    }

    fn ctx<'s>(&'s self, st: &'s State, stdin_looks_up_protected: bool) -> Ctx<'s> {
        Ctx {
            paths: self.path_ctx(st),
            names: self.names,
            stdin_looks_up_protected,
        }
    }

    fn refuse(&self, hit: Hit, argv: &[Arg]) -> Refusal {
        refusal(hit.rule, hit.reason, render(argv))
    }

    fn inner(
        &mut self,
        inner: Inner,
        args: &[Arg],
        st: &mut State,
        depth: usize,
        stdin: &Stdin,
    ) -> Judged {
        match inner {
            Inner::Nothing => Ok(()),
            Inner::Shell(text) => {
                // The string was joined from primary readings; judge every reading of a single
                // operand too (`su -c "${CMD:-reboot}"`).
                self.shell_text(&text, st, depth, None)?;
                Ok(())
            }
            Inner::Argv {
                prefix,
                start,
                chdir,
                xargs,
            } => {
                let mut argv: Vec<Arg> = prefix.into_iter().map(Arg::plain).collect();
                let rest = args.get(start..).unwrap_or_default();
                let mut stdin = stdin.clone();
                match xargs {
                    None => argv.extend(rest.iter().cloned()),
                    Some(replace) => {
                        let items: Vec<String> = stdin
                            .text
                            .iter()
                            .flatten()
                            .flat_map(|t| t.split_whitespace().map(str::to_owned))
                            .collect();
                        match (replace, items.is_empty()) {
                            (Some(r), false) => {
                                for a in rest {
                                    let mut readings = Vec::new();
                                    for t in &a.readings {
                                        readings.extend(items.iter().map(|i| t.replace(&r, i)));
                                    }
                                    argv.push(Arg {
                                        readings,
                                        looks_up_protected: a.looks_up_protected,
                                    });
                                }
                            }
                            (None, false) => {
                                argv.extend(rest.iter().cloned());
                                argv.push(Arg {
                                    readings: items,
                                    looks_up_protected: false,
                                });
                            }
                            _ => argv.extend(rest.iter().cloned()),
                        }
                        stdin.text = None;
                    }
                }
                match chdir {
                    Some(dir) => {
                        let mut sub = st.clone();
                        sub.cwd = resolve(&dir, self.path_ctx(st));
                        self.run(&argv, &mut sub, depth, &stdin)
                    }
                    None => self.run(&argv, st, depth, &stdin),
                }
            }
        }
    }

    /// `sh [options] [-c STRING [NAME [ARGS…]] | FILE [ARGS…]]`.
    fn shell(
        &mut self,
        args: &[Arg],
        st: &mut State,
        depth: usize,
        stdin: &Stdin,
        argv: &[Arg],
    ) -> Judged {
        let mut i = 0;
        let mut command_string = false;
        let mut reads_stdin = false;
        while let Some(a) = args.get(i) {
            let t = a.text();
            if t == "--" || t == "-" {
                i += 1;
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                i += if matches!(long, "rcfile" | "init-file") {
                    2
                } else {
                    1
                };
                if long == "command" {
                    command_string = true;
                }
                continue;
            }
            if t.len() > 1 && (t.starts_with('-') || t.starts_with('+')) {
                let letters = &t[1..];
                if t.starts_with('-') && letters.contains('c') {
                    command_string = true;
                }
                if letters.contains('s') {
                    reads_stdin = true;
                }
                i += if letters.ends_with(['o', 'O']) { 2 } else { 1 };
                continue;
            }
            break;
        }
        let depth = deeper(depth, &render(argv))?;
        if command_string {
            let Some(string) = args.get(i) else {
                return Ok(());
            };
            let positional: Vec<Vec<String>> = args
                .iter()
                .skip(i + 2)
                .map(|a| a.readings.clone())
                .collect();
            let zero = args.get(i + 1).map(|a| a.readings.clone());
            for text in &string.readings {
                let mut sub = st.clone();
                sub.zero = zero.clone();
                self.shell_text(text, &sub, depth, Some(positional.clone()))?;
            }
            return Ok(());
        }
        if i < args.len() && !reads_stdin {
            // A script file: its contents are not on the command line. The jail still applies.
            return Ok(());
        }
        if let Some(texts) = &stdin.text {
            let positional: Vec<Vec<String>> =
                args.iter().skip(i).map(|a| a.readings.clone()).collect();
            for text in texts {
                self.shell_text(text, st, depth, Some(positional.clone()))?;
            }
        }
        Ok(())
    }

    fn shell_text(
        &mut self,
        text: &str,
        st: &State,
        depth: usize,
        positional: Option<Vec<Vec<String>>>,
    ) -> Judged {
        let depth = deeper(depth, text)?;
        let script = shell::parse(text);
        let mut sub = st.clone();
        if positional.is_some() {
            sub.positional = positional;
        }
        self.script(&script, &mut sub, depth)
    }
}

fn deeper(depth: usize, evidence: &str) -> Result<usize, Refusal> {
    if depth >= MAX_DEPTH {
        return Err(refusal(
            Rule::NestingDepth,
            format!("wrappers, shells and substitutions are nested more than {MAX_DEPTH} deep"),
            evidence,
        ));
    }
    Ok(depth + 1)
}
