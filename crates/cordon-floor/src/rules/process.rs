//! `kill-all-processes`, `signal-init`, `self-preservation` and `fork-bomb`.

use regex_automata::meta::Regex;
use regex_automata::util::syntax;

use super::{Ctx, Hit};
use crate::judge::Arg;
use crate::shell::{Command, Script};
use crate::verdict::Rule;

/// The host agent's process names, as the harness configured them.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProcessNames {
    names: Vec<String>,
}

/// Programs that find processes: a pipeline or substitution with one of them and a protected
/// name is looking up the host agent.
const LOOKUPS: &[&str] = &[
    "pgrep", "pidof", "pidwait", "ps", "pstree", "lsof", "fuser", "procs", "top", "pkill",
];

/// Names whose death takes the machine (or the container) down.
const INIT_NAMES: &[&str] = &["init", "systemd"];

fn compile(pattern: &str, icase: bool, exact: bool) -> Option<Regex> {
    let pattern = if exact {
        format!("^(?:{pattern})$")
    } else {
        pattern.to_owned()
    };
    Regex::builder()
        .syntax(syntax::Config::new().case_insensitive(icase))
        .build(&pattern)
        .ok()
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

impl ProcessNames {
    pub fn new(names: &[String]) -> ProcessNames {
        ProcessNames {
            names: names
                .iter()
                .map(|n| n.trim().to_lowercase())
                .filter(|n| !n.is_empty())
                .collect(),
        }
    }

    /// The protected name a `pgrep`/`pkill` pattern selects, if any. With `full`, the pattern
    /// is matched against whole command lines, which contain the name.
    pub fn pattern_hit(&self, pattern: &str, exact: bool, icase: bool, full: bool) -> Option<&str> {
        let lower = pattern.to_lowercase();
        match compile(pattern, icase, exact && !full) {
            Some(re) => self
                .names
                .iter()
                .map(String::as_str)
                .find(|n| re.is_match(*n) || (full && lower.contains(*n))),
            // Not a pattern the matcher reads: compare as text, both ways.
            None => {
                self.names.iter().map(String::as_str).find(|n| {
                    lower.contains(*n) || (!lower.is_empty() && n.contains(lower.as_str()))
                })
            }
        }
    }

    /// The protected name `name` is (`killall NAME`, `pidof NAME`).
    pub fn name_hit(&self, name: &str, icase: bool) -> Option<&str> {
        let name = basename(name);
        self.names.iter().map(String::as_str).find(|n| {
            if icase {
                n.eq_ignore_ascii_case(name)
            } else {
                *n == name
            }
        })
    }

    /// The protected name mentioned in `text` as a word of its own (`claude`, `claude-code`,
    /// `/usr/bin/claude`), not inside another word.
    fn mentioned(&self, text: &str) -> bool {
        let text = text.to_lowercase();
        self.names.iter().any(|n| {
            text.match_indices(n.as_str()).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = text[i + n.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            })
        })
    }

    /// True when these commands (a pipeline's stages, a substitution's commands) look up a
    /// protected process: one of them lists processes and one names a protected one.
    pub fn lookup_in(&self, argvs: &[Vec<String>]) -> bool {
        let mut seen = Lookup::default();
        for argv in argvs {
            seen.add(self, argv);
        }
        seen.found()
    }
}

/// What the commands of a pipeline or substitution seen so far do: list processes, and name a
/// protected one. Built one command at a time, so a long pipeline costs one pass.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Lookup {
    lists: bool,
    names: bool,
}

impl Lookup {
    pub fn add(&mut self, names: &ProcessNames, argv: &[String]) {
        if names.names.is_empty() {
            return;
        }
        let prog = argv
            .first()
            .map(|p| basename(p).to_lowercase())
            .unwrap_or_default();
        self.lists |= LOOKUPS.contains(&prog.as_str());
        // `ps -o ppid= -p $$`, `ps -o pgid= $PPID`: the shell's parent is the host agent.
        if argv
            .iter()
            .any(|a| a.contains("$PPID") || a.contains("${PPID}"))
            || (prog == "ps" && argv.iter().any(|a| a.to_lowercase().contains("ppid")))
        {
            self.lists = true;
            self.names = true;
        }
        self.names |= argv
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .any(|a| match prog.as_str() {
                "pgrep" | "pidwait" | "grep" | "egrep" | "rg" => {
                    names.pattern_hit(a, false, true, true).is_some()
                }
                _ => names.mentioned(a),
            });
    }

    pub fn found(self) -> bool {
        self.lists && self.names
    }
}

/// A signal given as `-9`, `-KILL`, `-SIGKILL`, `-s9`.
fn is_signal_option(t: &str) -> bool {
    let Some(rest) = t.strip_prefix('-') else {
        return false;
    };
    !rest.is_empty()
        && (rest.chars().all(|c| c.is_ascii_digit())
            || rest
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '+'))
}

/// `kill [-s SIG | -SIG] PID…`.
pub(crate) fn kill(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    let mut signal: Option<&str> = None;
    let mut targets: Vec<&Arg> = Vec::new();
    let mut ended = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        if ended {
            targets.push(a);
            continue;
        }
        match t {
            "--" => ended = true,
            "-l" | "-L" | "--list" | "--table" => return None,
            "-s" | "-n" | "--signal" | "-q" | "--queue" => {
                signal = args.get(i).map(Arg::text);
                i += 1;
            }
            "--timeout" => i += 2,
            _ if t.starts_with("--") => {}
            _ if t.starts_with('-') && t.len() > 1 && signal.is_none() => signal = Some(t),
            _ => targets.push(a),
        }
    }
    if targets.is_empty() && signal == Some("-1") {
        return Some(Hit::new(
            Rule::KillAllProcesses,
            "`kill -1` is the spelling of a signal to every process",
        ));
    }
    for reading in targets.iter().flat_map(|a| a.readings.iter()) {
        let r = reading.trim();
        match r.parse::<i64>() {
            Ok(-1) => {
                return Some(Hit::new(
                    Rule::KillAllProcesses,
                    "PID -1 is every process the user may signal, the host agent among them",
                ));
            }
            Ok(1) => {
                return Some(Hit::new(
                    Rule::SignalInit,
                    "PID 1 is init; signalling it can take the machine or container down",
                ));
            }
            _ => {}
        }
        if matches!(r, "$PPID" | "${PPID}") {
            return Some(Hit::new(
                Rule::SelfPreservation,
                "the shell's parent is the host agent",
            ));
        }
    }
    if targets.iter().any(|a| a.looks_up_protected) || ctx.stdin_looks_up_protected {
        return Some(Hit::new(
            Rule::SelfPreservation,
            "the process IDs come from a lookup of the host agent's processes",
        ));
    }
    None
}

/// `pkill`, `killall`, `killall5`, `skill`, `snice`.
pub(crate) fn pkill(name: &str, args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    if name == "killall5" {
        return Some(Hit::new(
            Rule::KillAllProcesses,
            "`killall5` signals every process but its own session",
        ));
    }
    let (value_opts, selector_opts): (&[&str], &[&str]) = match name {
        "killall" => (
            &[
                "-s",
                "--signal",
                "-u",
                "--user",
                "-o",
                "--older-than",
                "-y",
                "--younger-than",
                "-n",
                "--ns",
                "-Z",
                "--context",
            ],
            &["-u", "--user"],
        ),
        "skill" | "snice" => (&["-t", "-u", "-p", "-c"], &["-t", "-u"]),
        _ => (
            &[
                "-g",
                "-G",
                "-P",
                "-s",
                "-t",
                "-u",
                "-U",
                "-F",
                "-r",
                "--signal",
                "--ns",
                "--nslist",
                "--pgroup",
                "--group",
                "--parent",
                "--session",
                "--terminal",
                "--euid",
                "--uid",
                "--pidfile",
                "--runstates",
                "--env",
                "--cgroup",
            ],
            &[
                "-g",
                "-G",
                "-s",
                "-t",
                "-u",
                "-U",
                "--pgroup",
                "--group",
                "--session",
                "--terminal",
                "--euid",
                "--uid",
            ],
        ),
    };
    let (mut exact, mut icase, mut full, mut regex, mut selected) =
        (false, false, false, false, false);
    let mut patterns: Vec<&Arg> = Vec::new();
    let mut pids: Vec<&Arg> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text();
        i += 1;
        if value_opts.contains(&t) {
            selected |= selector_opts.contains(&t);
            match (name, t) {
                ("skill" | "snice", "-c") => patterns.extend(args.get(i)),
                ("skill" | "snice", "-p") => pids.extend(args.get(i)),
                _ => {}
            }
            i += 1;
        } else if t.starts_with("--") {
            let opt = t.split('=').next().unwrap_or(t);
            selected |= selector_opts.contains(&opt);
            full |= opt == "--full";
            exact |= opt == "--exact";
            icase |= opt == "--ignore-case";
            regex |= opt == "--regexp";
        } else if is_signal_option(t) {
        } else if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) {
            for c in cluster.chars() {
                match (name, c) {
                    ("killall", 'e') | ("pkill", 'x') => exact = true,
                    ("killall", 'I') | ("pkill", 'i') => icase = true,
                    ("killall", 'r') => regex = true,
                    ("pkill", 'f') => full = true,
                    _ => {}
                }
            }
        } else {
            patterns.push(a);
        }
    }
    for pid in pids.iter().flat_map(|a| a.readings.iter()) {
        if pid.trim() == "1" {
            return Some(Hit::new(Rule::SignalInit, "PID 1 is init"));
        }
    }
    for p in patterns.iter().flat_map(|a| a.readings.iter()) {
        let by_pattern = name == "pkill" || regex;
        let protected = if by_pattern {
            ctx.names.pattern_hit(p, exact, icase, full)
        } else {
            ctx.names.name_hit(p, icase)
        };
        if let Some(n) = protected {
            return Some(Hit::new(
                Rule::SelfPreservation,
                format!("`{p}` selects the host agent's process `{n}`"),
            ));
        }
        let init = INIT_NAMES.iter().any(|n| {
            if by_pattern {
                compile(p, icase, true).is_some_and(|re| re.is_match(*n))
            } else {
                basename(p) == *n
            }
        });
        if init {
            return Some(Hit::new(Rule::SignalInit, format!("`{p}` selects init")));
        }
    }
    if patterns.is_empty() && selected {
        return Some(Hit::new(
            Rule::SelfPreservation,
            format!(
                "`{name}` by user, group, session or terminal alone selects the host agent too"
            ),
        ));
    }
    None
}

/// True when the body of function `name` runs `name` in a pipe or in the background: the
/// `:(){ :|:& };:` shape, whatever the name and spacing.
pub(crate) fn function_forks_itself(name: &str, body: &Command) -> bool {
    match body {
        Command::Group { body, .. } => script_forks(name, body),
        Command::Function { body, .. } => function_forks_itself(name, body),
        Command::Simple(_) | Command::TooDeep => false,
    }
}

fn script_forks(name: &str, script: &Script) -> bool {
    script.pipelines.iter().any(|p| {
        let calls = p
            .commands
            .iter()
            .filter(|c| match c {
                Command::Simple(s) => s
                    .words
                    .first()
                    .and_then(|w| w.static_text())
                    .is_some_and(|w| w == name),
                Command::Group { body, .. } => script_calls(name, body),
                _ => false,
            })
            .count();
        calls >= 2
            || (calls >= 1 && p.background)
            || p.commands.iter().any(|c| function_forks_itself(name, c))
    })
}

fn script_calls(name: &str, script: &Script) -> bool {
    script
        .pipelines
        .iter()
        .flat_map(|p| p.commands.iter())
        .any(|c| match c {
            Command::Simple(s) => s
                .words
                .first()
                .and_then(|w| w.static_text())
                .is_some_and(|w| w == name),
            Command::Group { body, .. } => script_calls(name, body),
            _ => false,
        })
}

/// Interpreters whose one-liners are read for fork loops.
pub(crate) fn is_interpreter(name: &str) -> bool {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        stem,
        "perl"
            | "python"
            | "pypy"
            | "ruby"
            | "node"
            | "nodejs"
            | "bun"
            | "deno"
            | "php"
            | "lua"
            | "luajit"
            | "rscript"
            | "tclsh"
    )
}

/// `perl -e 'fork while fork'`, `python -c 'while True: os.fork()'`, `ruby -e 'loop { fork }'`.
pub(crate) fn interpreter(args: &[Arg]) -> Option<Hit> {
    args.iter()
        .flat_map(|a| a.readings.iter())
        .any(|code| forks_in_a_loop(code))
        .then(|| Hit::new(Rule::ForkBomb, "the program forks in an endless loop"))
}

fn forks_in_a_loop(code: &str) -> bool {
    let text: String = code
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if text.contains("fork while fork") {
        return true;
    }
    const LOOPS: &[&str] = &[
        "while true",
        "while 1",
        "while(1)",
        "while (1)",
        "while(true)",
        "while (true)",
        "for(;;)",
        "for (;;)",
        "loop {",
        "loop{",
        "loop do",
        "while :",
        "while(!0)",
        "while !0",
        "until 0",
        "until false",
        "while fork",
    ];
    let chars: Vec<char> = text.chars().collect();
    LOOPS.iter().any(|l| {
        let l: Vec<char> = l.chars().collect();
        (0..chars.len()).any(|i| {
            chars[i..].starts_with(&l) && {
                let window = &chars[i.saturating_sub(60)..(i + l.len() + 120).min(chars.len())];
                spawns(window)
            }
        })
    })
}

/// A call of `fork`, `popen` or `spawn` in `code`: the word itself, not inside a string
/// (`print('fork')`) or another word (`forklift`).
fn spawns(code: &[char]) -> bool {
    const CALLS: &[&str] = &["fork", "popen", "spawn"];
    CALLS.iter().any(|call| {
        let call: Vec<char> = call.chars().collect();
        (0..code.len()).any(|i| {
            if !code[i..].starts_with(&call) {
                return false;
            }
            let before = i.checked_sub(1).map(|j| code[j]);
            let after = code.get(i + call.len()).copied();
            let word_start =
                !before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '\'' | '"'));
            let word_end = match after {
                None => true,
                Some(c) => matches!(c, '(' | ' ' | ';' | '}' | ')' | '\n'),
            };
            // `popen`/`spawn` only as calls: `spawn` alone is also a word in prose.
            let call_only = call[0] != 'f';
            word_start && word_end && (!call_only || after == Some('('))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{args, names, rule_of, with_ctx};
    use super::*;

    #[test]
    fn signals_to_everything_and_to_init() {
        for line in [
            "kill -9 -1",
            "kill -1",
            "kill -- -1",
            "kill -s KILL -1",
            "kill -TERM -1",
            "killall5 -9",
        ] {
            assert_eq!(rule_of(line), Some(Rule::KillAllProcesses), "{line}");
        }
        for line in [
            "kill 1",
            "kill -9 1",
            "kill -HUP 1",
            "kill -s TERM 1",
            "kill 1234 1",
            "killall init",
            "pkill -x systemd",
            "skill -KILL -p 1",
        ] {
            assert_eq!(rule_of(line), Some(Rule::SignalInit), "{line}");
        }
    }

    #[test]
    fn ordinary_signals() {
        for line in [
            "kill %1",
            "kill 1234",
            "kill -9 4242",
            "kill -1 1234",
            "kill -l",
            "kill -0 123",
            "kill -TERM -4242",
            "pkill -f 'node server.js'",
            "pkill node",
            "killall python3",
            "pkill -u me node",
            "kill 0",
            "pkill -P 1234",
        ] {
            assert_eq!(rule_of(line), None, "{line}");
        }
    }

    #[test]
    fn the_host_agent_is_left_alone() {
        for line in [
            "pkill claude",
            "pkill -9 -f claude",
            "pkill -f claude-code",
            "killall claude",
            "killall -9 codex",
            "pkill -x cordon",
            "pkill -f .",
            "killall -r cla.*",
            "pkill -9 -u me",
            "killall -u me",
            "kill $PPID",
            "kill -9 ${PPID}",
            "pkill -i CLAUDE",
            "pkill cla",
        ] {
            assert_eq!(rule_of(line), Some(Rule::SelfPreservation), "{line}");
        }
    }

    #[test]
    fn lookups() {
        let n = names();
        let argv = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert!(n.lookup_in(&[argv("pgrep claude")]));
        assert!(n.lookup_in(&[argv("ps aux"), argv("grep [c]laude"), argv("awk {print}")]));
        assert!(n.lookup_in(&[argv("pidof codex")]));
        assert!(!n.lookup_in(&[argv("cat /work/cordon/server.pid")]));
        assert!(!n.lookup_in(&[argv("pgrep node")]));
        assert!(!n.lookup_in(&[argv("lsof -t -i :3000")]));
        assert!(n.lookup_in(&[argv("ps -o ppid= -p $$")]));
    }

    #[test]
    fn kill_with_a_looked_up_pid() {
        with_ctx(|ctx| {
            let mut a = args("-9 $(…)");
            a[1].looks_up_protected = true;
            assert_eq!(kill(&a, ctx).map(|h| h.rule), Some(Rule::SelfPreservation));
        });
    }

    #[test]
    fn interpreter_fork_loops() {
        for code in [
            "fork while fork",
            "import os\nwhile True: os.fork()",
            "loop { fork }",
            "while(1) { fork(); }",
            "for(;;) fork();",
            "while (true) require('child_process').fork('x')",
            "import os\nwhile 1:\n    os.fork()",
            "fork while 1",
            "1 while fork",
        ] {
            assert!(forks_in_a_loop(code), "{code}");
        }
        for code in [
            "print('hi')",
            "import os; pid = os.fork(); os.waitpid(pid, 0)",
            "while True:\n    line = input()",
            "for i in range(3): print(i)",
            "while True: print('fork')",
            "while 1: forklift.move()",
        ] {
            assert!(!forks_in_a_loop(code), "{code}");
        }
    }
}
