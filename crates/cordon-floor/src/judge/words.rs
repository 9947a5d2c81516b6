//! What the walk reads off commands besides expansion: the builtins whose effect on the shell
//! it follows, program names, and commands rendered as evidence.

use super::{Arg, SHELLS, State};
use crate::paths::{PathCtx, resolve};
use crate::shell::{Command, Script, Seg, VarOp, Word};
use crate::wrappers;

/// The command string of `sh -c STRING …` (any shell, any options before it), if `words` is one.
pub(crate) fn shell_command_string(words: &[String]) -> Option<&str> {
    let (program, args) = words.split_first()?;
    if !SHELLS.contains(&program_name(program).as_str()) {
        return None;
    }
    let c = args
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))?;
    args[c + 1..]
        .iter()
        .find(|a| !a.starts_with('-') && !a.starts_with('+'))
        .map(String::as_str)
}

/// `cd`, `export`, `for`, `set --`: builtins whose effect on the shell's state the floor follows.
/// True when `name` was one.
pub(super) fn builtin_state(
    name: &str,
    args: &[Arg],
    st: &mut State,
    home: Option<&[String]>,
) -> bool {
    match name {
        "cd" | "pushd" | "chdir" => {
            let target = args
                .iter()
                .find(|a| !a.text().starts_with('-') || a.text() == "-");
            st.cwd = match target {
                None => resolve(
                    "~",
                    PathCtx {
                        home,
                        cwd: st.cwd.as_ref(),
                    },
                ),
                Some(a) if a.readings.len() == 1 => resolve(
                    a.text(),
                    PathCtx {
                        home,
                        cwd: st.cwd.as_ref(),
                    },
                ),
                Some(_) => None,
            };
            true
        }
        "popd" => {
            st.cwd = None;
            true
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            for a in args {
                let mut values = Vec::new();
                let mut name = None;
                for r in &a.readings {
                    if let Some((n, v)) = r.split_once('=')
                        && wrappers::is_assignment(r)
                    {
                        name = Some(n.to_owned());
                        values.push(v.to_owned());
                    }
                }
                if let Some(n) = name {
                    st.vars.insert(n, values);
                }
            }
            true
        }
        "unset" => {
            for a in args {
                st.vars.remove(a.text());
            }
            true
        }
        "for" | "select" => {
            if let Some(var) = args.first() {
                let values: Vec<String> = match args.get(1).map(Arg::text) {
                    Some("in") => args[2..].iter().flat_map(|a| a.readings.clone()).collect(),
                    _ => st.positional.iter().flatten().flatten().cloned().collect(),
                };
                if !values.is_empty() {
                    st.vars.insert(var.text().to_owned(), values);
                }
            }
            true
        }
        "set" => {
            if let Some(i) = args.iter().position(|a| a.text() == "--") {
                st.positional = Some(args[i + 1..].iter().map(|a| a.readings.clone()).collect());
            }
            true
        }
        _ => false,
    }
}

/// The program's name as the rules know it: the last path component, lower-cased (a
/// case-insensitive filesystem runs `RM` as `rm`). A URL is not a path to a program.
pub(super) fn program_name(reading: &str) -> String {
    if reading.contains("://") {
        return reading.to_owned();
    }
    reading.rsplit('/').next().unwrap_or(reading).to_lowercase()
}

pub(super) fn first_word_is_dollar_zero(c: &Command) -> bool {
    match c {
        Command::Simple(s) => s.words.first().is_some_and(
            |w| matches!(w.segs.as_slice(), [Seg::Var { name, op: VarOp::Plain }] if name == "0"),
        ),
        _ => false,
    }
}

/// The argument vectors (plain readings) of every simple command in a script.
pub(super) fn script_argvs(script: &Script) -> Vec<Vec<String>> {
    script
        .pipelines
        .iter()
        .flat_map(|p| p.commands.iter())
        .flat_map(command_argvs)
        .collect()
}

pub(super) fn command_argvs(c: &Command) -> Vec<Vec<String>> {
    match c {
        Command::Simple(s) => {
            let mut out = vec![s.words.iter().map(word_text).collect::<Vec<_>>()];
            for w in &s.words {
                for seg in &w.segs {
                    if let Seg::Subst(inner) = seg {
                        out.extend(script_argvs(inner));
                    }
                }
            }
            out
        }
        Command::Group { body, .. } => script_argvs(body),
        Command::Function { body, .. } => command_argvs(body),
        Command::TooDeep => Vec::new(),
    }
}

pub(super) fn word_text(w: &Word) -> String {
    w.segs
        .iter()
        .map(|s| match s {
            Seg::Lit { text, .. } => text.clone(),
            Seg::Var { name, .. } => format!("${name}"),
            _ => "$(…)".to_owned(),
        })
        .collect()
}

/// A command as evidence: plain readings, quoted where a shell would need it.
pub(crate) fn render(argv: &[Arg]) -> String {
    argv.iter()
        .map(|a| quote(a.text()))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || "_./=:,+@%^-~$*{}[]?!#".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_names() {
        assert_eq!(program_name("/usr/bin/rm"), "rm");
        assert_eq!(program_name("RM"), "rm");
        assert_eq!(
            program_name("http://e.invalid/shutdown"),
            "http://e.invalid/shutdown"
        );
    }
}
