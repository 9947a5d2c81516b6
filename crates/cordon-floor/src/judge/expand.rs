//! Word expansion: every text a word may become, given what the script set before it.

use super::{Arg, Judge, MAX_WORD_READINGS, State, program_name, refusal};
use crate::shell::{Command, RedirKind, Script, Seg, VarOp, Word};
use crate::verdict::{Refusal, Rule};

impl Judge<'_> {
    /// Every text `word` may expand to in `st`.
    pub(super) fn readings(&self, word: &Word, st: &State) -> Result<Vec<String>, Refusal> {
        let mut out = vec![String::new()];
        let mut braces = false;
        for (i, seg) in word.segs.iter().enumerate() {
            let alternatives: Vec<String> = match seg {
                Seg::Lit { text, quoted } => {
                    if !quoted && text.contains('{') {
                        braces = true;
                    }
                    if *quoted && i == 0 && text.starts_with('~') {
                        // A quoted `~` is a file named `~`, not the home directory.
                        vec![format!("./{text}")]
                    } else {
                        vec![text.clone()]
                    }
                }
                Seg::Var { name, op } => self.variable(name, op, st)?,
                Seg::Subst(script) => vec![
                    self.substitution_value(script, st)
                        .unwrap_or_else(|| "$(…)".to_owned()),
                ],
                Seg::Unknown => vec!["$((…))".to_owned()],
                Seg::TooDeep => {
                    return Err(refusal(
                        Rule::NestingDepth,
                        "a word is nested too deep",
                        "$( $( … ) )",
                    ));
                }
            };
            out = cross(&out, &alternatives);
            if out.len() > MAX_WORD_READINGS {
                return Err(too_many_readings());
            }
        }
        if braces {
            let mut expanded = Vec::new();
            for r in &out {
                expanded.extend(brace_expand(r, MAX_WORD_READINGS));
                if expanded.len() > MAX_WORD_READINGS {
                    return Err(too_many_readings());
                }
            }
            out = expanded;
        }
        out.dedup();
        Ok(out)
    }

    fn variable(&self, name: &str, op: &VarOp, st: &State) -> Result<Vec<String>, Refusal> {
        let known: Option<Vec<String>> = match name {
            "@" | "*" => st
                .positional
                .as_ref()
                .map(|p| p.iter().flatten().cloned().collect::<Vec<_>>())
                .filter(|v| !v.is_empty()),
            "0" => st.zero.clone(),
            "PWD" => st.cwd.as_ref().map(|c| vec![c.display()]),
            n if n.chars().all(|c| c.is_ascii_digit()) => {
                let index: usize = n.parse().unwrap_or(0);
                index
                    .checked_sub(1)
                    .and_then(|i| st.positional.as_ref()?.get(i).cloned())
            }
            n => st.vars.get(n).cloned(),
        };
        let marker = vec![format!("${name}")];
        Ok(match op {
            VarOp::Plain => known.unwrap_or(marker),
            VarOp::Modified => marker,
            VarOp::Default(word) => match known {
                Some(v) if v.iter().all(|s| !s.is_empty()) => v,
                other => {
                    let mut v = other.unwrap_or(marker);
                    v.extend(self.readings(word, st)?);
                    v
                }
            },
            VarOp::Alternate(word) => {
                let mut v = self.readings(word, st)?;
                v.push(String::new());
                v
            }
        })
    }

    /// What `$(script)` prints, when it is a plain `echo`, `printf` or `which`.
    fn substitution_value(&self, script: &Script, st: &State) -> Option<String> {
        let [pipeline] = script.pipelines.as_slice() else {
            return None;
        };
        let command = pipeline.commands.last()?;
        let out = self.static_output(command, st)?;
        let first = out.into_iter().next()?;
        Some(first.trim_end_matches('\n').to_owned())
    }

    /// What `command` prints, when the floor can tell without running anything.
    pub(super) fn static_output(&self, command: &Command, st: &State) -> Option<Vec<String>> {
        let Command::Simple(simple) = command else {
            return None;
        };
        if let Some(body) = simple
            .redirects
            .iter()
            .rev()
            .find(|r| r.kind == RedirKind::Here)
            .and_then(|r| r.body.as_ref())
            && simple.words.first()?.static_text().as_deref() == Some("cat")
        {
            return self.readings(body, st).ok();
        }
        let mut words = Vec::new();
        for w in &simple.words {
            words.push(self.readings(w, st).ok()?);
        }
        let program = program_name(words.first()?.first()?);
        let args = &words[1..];
        match program.as_str() {
            "echo" => {
                let args: Vec<&Vec<String>> = args
                    .iter()
                    .skip_while(|a| {
                        matches!(
                            a.first().map(String::as_str),
                            Some("-n" | "-e" | "-E" | "-ne" | "-en")
                        )
                    })
                    .collect();
                Some(join_cross(&args))
            }
            "printf" => {
                let (format, rest) = args.split_first()?;
                let format = format.first()?;
                if rest.is_empty() {
                    Some(vec![format.replace("\\n", "\n")])
                } else if format.contains("%s") {
                    let rest: Vec<&Vec<String>> = rest.iter().collect();
                    Some(join_cross(&rest))
                } else {
                    None
                }
            }
            "which" | "type" | "command" => args
                .iter()
                .rev()
                .find(|a| !a.first().is_some_and(|t| t.starts_with('-')))
                .cloned(),
            _ => None,
        }
    }
}

pub(super) fn too_many_readings() -> Refusal {
    refusal(
        Rule::TooComplex,
        format!("a word has more than {MAX_WORD_READINGS} possible expansions"),
        "${…}{…,…}",
    )
}

pub(super) fn cross(prefixes: &[String], alternatives: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(prefixes.len() * alternatives.len().max(1));
    for p in prefixes {
        for a in alternatives {
            out.push(format!("{p}{a}"));
        }
    }
    out
}

pub(super) fn join_cross(args: &[&Vec<String>]) -> Vec<String> {
    let mut out = vec![String::new()];
    for (i, a) in args.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let alternatives: Vec<String> = a.iter().map(|r| format!("{sep}{r}")).collect();
        out = cross(&out, &alternatives);
        out.truncate(MAX_WORD_READINGS);
    }
    out
}

/// The command strings `eval ARGS` may run: the arguments joined by spaces, every reading.
pub(super) fn joined_readings(args: &[Arg]) -> Vec<String> {
    let refs: Vec<&Vec<String>> = args.iter().map(|a| &a.readings).collect();
    join_cross(&refs)
}

/// Brace expansion (`{a,b}`), not sequences (`{1..9}`).
pub(super) fn brace_expand(s: &str, cap: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    for open in 0..chars.len() {
        if chars[open] != '{' {
            continue;
        }
        let mut depth = 0;
        let mut commas = Vec::new();
        for (j, c) in chars.iter().enumerate().skip(open) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let prefix: String = chars[..open].iter().collect();
                        let suffix: String = chars[j + 1..].iter().collect();
                        let mut bounds = vec![open];
                        bounds.extend(&commas);
                        bounds.push(j);
                        let mut out = Vec::new();
                        for w in bounds.windows(2) {
                            let middle: String = chars[w[0] + 1..w[1]].iter().collect();
                            for tail in brace_expand(&format!("{middle}{suffix}"), cap) {
                                out.push(format!("{prefix}{tail}"));
                                if out.len() > cap {
                                    return out;
                                }
                            }
                        }
                        return out;
                    }
                }
                ',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
    }
    vec![s.to_owned()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brace_expansion() {
        assert_eq!(brace_expand("/{,usr}", 10), vec!["/", "/usr"]);
        assert_eq!(
            brace_expand("a{b,c{d,e}}f", 10),
            vec!["abf", "acdf", "acef"]
        );
        assert_eq!(brace_expand("{1..3}", 10), vec!["{1..3}"]);
        assert_eq!(brace_expand("x{a}", 10), vec!["x{a}"]);
    }
}
