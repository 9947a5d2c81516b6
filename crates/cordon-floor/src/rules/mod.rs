//! The rules: given a program (already unwrapped) and its expanded arguments, refuse or not.
//! Each rule module holds its programs and its tests; `check` dispatches by program name.

pub(crate) mod delete;
pub(crate) mod device;
pub(crate) mod power;
pub(crate) mod process;

pub(crate) use process::ProcessNames;

use crate::judge::Arg;
use crate::paths::PathCtx;
use crate::verdict::Rule;

/// What a rule matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub rule: Rule,
    pub reason: String,
}

impl Hit {
    pub fn new(rule: Rule, reason: impl Into<String>) -> Hit {
        Hit {
            rule,
            reason: reason.into(),
        }
    }
}

/// What the rules may know besides the arguments.
pub(crate) struct Ctx<'a> {
    pub paths: PathCtx<'a>,
    pub names: &'a ProcessNames,
    /// The program reads its arguments from a pipeline that looks up a protected process.
    pub stdin_looks_up_protected: bool,
}

/// Judges one program.
pub(crate) fn check(name: &str, args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    match name {
        "rm" | "srm" => delete::rm(args, ctx),
        "rimraf" | "del-cli" => delete::rimraf(args, ctx),
        "rsync" => delete::rsync(args, ctx),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => delete::permissions(name, args, ctx),
        "dd" => device::dd(args, ctx),
        "tee" => device::tee(args, ctx),
        "cp" | "mv" | "install" => device::copy(args, ctx),
        "shred" | "blkdiscard" | "badblocks" | "fdisk" | "sfdisk" | "sgdisk" | "gdisk"
        | "cfdisk" | "parted" | "hdparm" | "nvme" | "ddrescue" => {
            device::disk_tool(name, args, ctx)
        }
        "diskutil" => device::diskutil(args, ctx),
        n if device::is_mkfs(n) => device::mkfs(name, args, ctx),
        "kill" => process::kill(args, ctx),
        "pkill" | "killall" | "killall5" | "skill" | "snice" => process::pkill(name, args, ctx),
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" | "telinit" | "systemctl"
        | "loginctl" | "kexec" | "busctl" | "dbus-send" | "gdbus" | "qdbus" => {
            power::check(name, args)
        }
        n if process::is_interpreter(n) => {
            process::interpreter(args).or_else(|| delete::interpreter(args, ctx))
        }
        _ => None,
    }
}

/// Operands: the arguments that are not options (before `--`), and every argument after it.
/// Any reading of an option-looking argument counts as an option, so `${X:--rf}` is both.
pub(crate) fn operands(args: &[Arg]) -> Vec<&Arg> {
    let mut out = Vec::new();
    let mut ended = false;
    for a in args {
        if !ended && a.text() == "--" {
            ended = true;
            continue;
        }
        if ended || !a.text().starts_with('-') || a.text() == "-" {
            out.push(a);
        }
    }
    out
}

/// True when any reading of any argument before `--` is a short cluster holding one of
/// `letters` or an abbreviation (getopt_long accepts any prefix) of one of `longs`.
pub(crate) fn has_flag(args: &[Arg], letters: &str, longs: &[&str]) -> bool {
    for a in args {
        if a.text() == "--" {
            break;
        }
        for r in &a.readings {
            if let Some(long) = r.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or_default();
                if !name.is_empty() && longs.iter().any(|l| l.starts_with(name)) {
                    return true;
                }
            } else if let Some(cluster) = r.strip_prefix('-')
                && !cluster.is_empty()
                && cluster.chars().any(|c| letters.contains(c))
            {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
pub(crate) mod testing {
    //! Helpers for the rule tests: build arguments and a context from plain text.

    use super::*;
    use crate::paths::components;

    pub fn args(line: &str) -> Vec<Arg> {
        line.split_whitespace()
            .map(|w| Arg::plain(w.to_owned()))
            .collect()
    }

    pub fn names() -> ProcessNames {
        ProcessNames::new(&["claude".to_owned(), "codex".to_owned(), "cordon".to_owned()])
    }

    /// Runs `f` with a context whose home is /home/u and whose cwd is unknown.
    pub fn with_ctx<T>(f: impl FnOnce(&Ctx<'_>) -> T) -> T {
        let home = components("/home/u");
        let names = names();
        let ctx = Ctx {
            paths: PathCtx {
                home: Some(&home),
                cwd: None,
            },
            names: &names,
            stdin_looks_up_protected: false,
        };
        f(&ctx)
    }

    /// The rule `check` gives for a plain command line (words split on blanks).
    pub fn rule_of(line: &str) -> Option<Rule> {
        let words = args(line);
        let (program, rest) = words.split_first()?;
        with_ctx(|ctx| check(program.text(), rest, ctx).map(|h| h.rule))
    }
}
