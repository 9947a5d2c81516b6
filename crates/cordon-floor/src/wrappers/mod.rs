//! Launcher wrappers: programs that run another program (`sudo`, `env`, `timeout`, `xargs`, …).
//! The floor judges the program they run. Each wrapper's options are read from a table; an
//! option that makes the wrapper run nothing (`command -v`, `sudo -l`, `taskset -p`) leaves
//! nothing to judge, and an option the table does not know is read both ways.

use crate::options::{self, Parsed, TooManyReadings};

/// What a wrapper runs, in one reading of its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inner {
    /// Nothing: these options make it list, print or query.
    Nothing,
    /// The words from index `start` of the wrapper's arguments, preceded by `prefix` (`env -S`).
    Argv {
        prefix: Vec<String>,
        start: usize,
        /// A directory it changes to first (`env -C`, `sudo -D`).
        chdir: Option<String>,
        /// For `xargs`: arguments come from stdin, replacing this string when one is given.
        xargs: Option<Option<String>>,
    },
    /// A shell command string (`su -c`, `sudo -s CMD`, `watch CMD`, `flock -c`).
    Shell(String),
}

/// Why unwrapping stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    TooManyReadings,
    /// `sudo -S` with no password configured.
    SudoStdin,
}

impl From<TooManyReadings> for Stop {
    fn from(_: TooManyReadings) -> Stop {
        Stop::TooManyReadings
    }
}

mod table;

use table::{Kind, WRAPPERS, Wrapper};

/// What the wrapper `name` runs given `args` (primary readings of the words after it); `None`
/// when `name` is not a wrapper.
pub(crate) fn unwrap(
    name: &str,
    args: &[String],
    sudo_password_configured: bool,
) -> Option<Result<Vec<Inner>, Stop>> {
    let w = WRAPPERS.iter().find(|w| w.names.contains(&name))?;
    Some(unwrap_with(w, args, sudo_password_configured))
}

fn unwrap_with(w: &Wrapper, args: &[String], sudo_ok: bool) -> Result<Vec<Inner>, Stop> {
    let mut out = Vec::new();
    for parsed in options::parse(args, &w.spec)? {
        if w.kind == Kind::Sudo && !sudo_ok && parsed.has(&["S", "stdin"]) {
            return Err(Stop::SudoStdin);
        }
        if parsed.has(w.nothing) {
            out.push(Inner::Nothing);
            continue;
        }
        out.push(inner(w, args, &parsed));
    }
    Ok(out)
}

fn inner(w: &Wrapper, args: &[String], parsed: &Parsed) -> Inner {
    let mut start = parsed.operands;
    if w.assignments {
        while args
            .get(start)
            .is_some_and(|a| is_assignment(a) || a == "-")
        {
            start += 1;
        }
    }
    let operands = &args[start.min(args.len())..];
    let argv = |start: usize, chdir: Option<String>| Inner::Argv {
        prefix: Vec::new(),
        start,
        chdir,
        xargs: None,
    };
    match w.kind {
        Kind::Plain => {
            if operands.len() <= w.skip {
                Inner::Nothing
            } else {
                argv(start + w.skip, None)
            }
        }
        Kind::Env => {
            let prefix: Vec<String> = parsed
                .value(&["S", "split-string"])
                .map(|s| {
                    crate::shell::split_words(s)
                        .iter()
                        .filter_map(crate::shell::Word::static_text)
                        .collect()
                })
                .unwrap_or_default();
            if operands.is_empty() && prefix.is_empty() {
                return Inner::Nothing;
            }
            Inner::Argv {
                prefix,
                start,
                chdir: parsed.value(&["C", "chdir"]).map(str::to_owned),
                xargs: None,
            }
        }
        Kind::Sudo => {
            if operands.is_empty() {
                Inner::Nothing
            } else if parsed.has(&["s", "i", "shell", "login"]) {
                Inner::Shell(operands.join(" "))
            } else {
                argv(start, parsed.value(&["D", "chdir"]).map(str::to_owned))
            }
        }
        Kind::Su => match parsed
            .value(&["c", "command", "session-command"])
            .or_else(|| late_command_option(operands))
        {
            Some(cmd) => Inner::Shell(cmd.to_owned()),
            // `runuser -u USER CMD…` runs the command directly.
            None if parsed.has(&["u", "user"]) && !operands.is_empty() => argv(start, None),
            None => Inner::Nothing,
        },
        Kind::Xargs => {
            let replace = parsed
                .opts
                .iter()
                .find(|(n, _)| n == "I" || n == "i" || n == "replace")
                .map(|(n, v)| match (n.as_str(), v) {
                    ("I", Some(v)) => v.clone(),
                    (_, Some(v)) if !v.is_empty() => v.clone(),
                    _ => "{}".to_owned(),
                });
            Inner::Argv {
                prefix: if operands.is_empty() {
                    vec!["echo".to_owned()]
                } else {
                    Vec::new()
                },
                start,
                chdir: None,
                xargs: Some(replace),
            }
        }
        Kind::Flock => {
            if let Some(cmd) = parsed.value(&["c", "command"]) {
                return Inner::Shell(cmd.to_owned());
            }
            // flock FILE -c CMD: the option may follow the file.
            if let Some(i) = operands.iter().position(|a| a == "-c" || a == "--command") {
                return match operands.get(i + 1) {
                    Some(cmd) => Inner::Shell(cmd.clone()),
                    None => Inner::Nothing,
                };
            }
            match operands.first() {
                Some(f) if f.chars().all(|c| c.is_ascii_digit()) => Inner::Nothing,
                Some(_) if operands.len() > 1 => argv(start + 1, None),
                _ => Inner::Nothing,
            }
        }
        Kind::Watch => {
            if operands.is_empty() {
                Inner::Nothing
            } else if parsed.has(&["x", "exec"]) {
                argv(start, None)
            } else {
                Inner::Shell(operands.join(" "))
            }
        }
        Kind::Script => match parsed.value(&["c", "command"]) {
            Some(cmd) => Inner::Shell(cmd.to_owned()),
            None => Inner::Nothing,
        },
    }
}

/// `su USER -c CMD`: su reads options after the user too.
fn late_command_option(operands: &[String]) -> Option<&str> {
    for (i, a) in operands.iter().enumerate() {
        if a == "--" {
            return None;
        }
        if let Some(cmd) = a.strip_prefix("--command=") {
            return Some(cmd);
        }
        let short_c = a.starts_with('-') && !a.starts_with("--") && a.ends_with('c');
        if short_c || a == "--command" || a == "--session-command" {
            return operands.get(i + 1).map(String::as_str);
        }
    }
    None
}

/// `NAME=VALUE`.
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Vec<Inner> {
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        unwrap(&words[0], &words[1..], false)
            .and_then(Result::ok)
            .unwrap_or_default()
    }

    fn starts(line: &str) -> Vec<usize> {
        run(line)
            .into_iter()
            .filter_map(|i| match i {
                Inner::Argv { start, .. } => Some(start),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn finds_the_command() {
        assert_eq!(starts("sudo -u root rm -rf /"), vec![2]);
        assert_eq!(starts("env -i FOO=1 BAR=2 rm"), vec![3]);
        assert_eq!(starts("nice -n 5 rm"), vec![2]);
        assert_eq!(starts("nice -5 rm"), vec![1]);
        assert_eq!(starts("timeout -s KILL 10 rm"), vec![3]);
        assert_eq!(starts("taskset -c 0 rm"), vec![2]);
        assert_eq!(starts("chrt -f 10 rm"), vec![2]);
        assert_eq!(starts("stdbuf -oL rm"), vec![1]);
        assert_eq!(starts("exec -a name rm"), vec![2]);
        assert_eq!(starts("flock /tmp/lock rm"), vec![1]);
    }

    #[test]
    fn options_that_run_nothing() {
        for line in [
            "command -v rm",
            "sudo -l",
            "taskset -p 1 1",
            "ionice -p 1",
            "env",
            "timeout 5",
            "chrt -m",
            "sudo -v",
            "flock 3",
        ] {
            assert!(
                run(line).iter().all(|i| *i == Inner::Nothing),
                "{line}: {:?}",
                run(line)
            );
        }
    }

    #[test]
    fn shell_strings() {
        assert_eq!(run("su -c reboot"), vec![Inner::Shell("reboot".into())]);
        assert_eq!(
            run("su root -c reboot"),
            vec![Inner::Shell("reboot".into())]
        );
        assert_eq!(run("su - root"), vec![Inner::Nothing]);
        assert_eq!(
            run("sudo -s reboot now"),
            vec![Inner::Shell("reboot now".into())]
        );
        assert_eq!(run("watch -n 1 ls -l"), vec![Inner::Shell("ls -l".into())]);
        assert_eq!(
            run("flock -c reboot /tmp/l"),
            vec![Inner::Shell("reboot".into())]
        );
    }

    #[test]
    fn sudo_stdin_without_a_password_stops() {
        let words = ["-S", "true"].map(String::from);
        assert_eq!(unwrap("sudo", &words, false), Some(Err(Stop::SudoStdin)));
        assert!(matches!(unwrap("sudo", &words, true), Some(Ok(_))));
    }

    #[test]
    fn unknown_options_read_both_ways() {
        // As a flag: the duration is 10 and rm runs; as taking a value: 10 is its value, the
        // duration is rm, and nothing runs.
        assert_eq!(starts("timeout --frobnicate 10 rm"), vec![2]);
        assert_eq!(run("timeout --frobnicate 10 rm").len(), 2);
        assert_eq!(starts("nice --frob -n 1 rm"), vec![3, 2]);
    }
}
