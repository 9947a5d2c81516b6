//! Running one external command, and saying exactly which command failed.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// A command line to run: program, arguments, extra environment, working directory.
///
/// Its `Display` is the command as one would type it in a shell, so every error and every
/// `$ …` echo can be copied and rerun by hand.
#[derive(Debug, Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
}

/// Why a command did not succeed. Every variant carries the full command line.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    /// The program could not be started (missing, not executable, …).
    #[error("could not start `{cmdline}`: {source}")]
    Spawn {
        /// The command line.
        cmdline: String,
        /// Why it could not start.
        source: io::Error,
    },
    /// It ran and exited unsuccessfully.
    #[error("`{cmdline}` failed ({status})")]
    Failed {
        /// The command line.
        cmdline: String,
        /// How it ended.
        status: ExitStatus,
    },
    /// Its stdout, which was to be read, is not UTF-8.
    #[error("`{cmdline}` printed something that is not UTF-8 on stdout")]
    NotUtf8 {
        /// The command line.
        cmdline: String,
    },
}

impl Cmd {
    /// `program`, with no arguments yet.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: None,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I>(mut self, args: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets one environment variable (the rest of the environment is inherited).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.envs
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Runs it in `dir`.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Runs with inherited stdio after echoing the command line; fails on a non-zero exit.
    pub fn run(&self) -> Result<(), CmdError> {
        println!("$ {self}");
        let status = self
            .command()
            .status()
            .map_err(|source| self.spawn_error(source))?;
        self.check(status)
    }

    /// Runs and returns stdout, trimmed; stderr goes to the terminal. Fails on a non-zero exit.
    pub fn read(&self) -> Result<String, CmdError> {
        let output = self
            .command()
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|source| self.spawn_error(source))?;
        self.check(output.status)?;
        String::from_utf8(output.stdout)
            .map(|s| s.trim().to_owned())
            .map_err(|_| CmdError::NotUtf8 {
                cmdline: self.to_string(),
            })
    }

    /// Asks a question whose "no" is an expected answer (is this tool installed?): all output
    /// is captured, and any failure, including a missing program, is `None`.
    pub fn probe(&self) -> Option<String> {
        let output = self
            .command()
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        String::from_utf8(output.stdout)
            .ok()
            .map(|s| s.trim().to_owned())
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command.envs(self.envs.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command
    }

    fn check(&self, status: ExitStatus) -> Result<(), CmdError> {
        if status.success() {
            Ok(())
        } else {
            Err(CmdError::Failed {
                cmdline: self.to_string(),
                status,
            })
        }
    }

    fn spawn_error(&self, source: io::Error) -> CmdError {
        CmdError::Spawn {
            cmdline: self.to_string(),
            source,
        }
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut words = Vec::with_capacity(self.envs.len() + 1 + self.args.len());
        for (key, value) in &self.envs {
            words.push(format!(
                "{}={}",
                key.to_string_lossy(),
                shell_quote(&value.to_string_lossy())
            ));
        }
        words.push(shell_quote(&self.program.to_string_lossy()));
        words.extend(self.args.iter().map(|a| shell_quote(&a.to_string_lossy())));
        f.write_str(&words.join(" "))
    }
}

/// Quotes a word for a POSIX shell only when it needs it, so common command lines stay readable.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_a_command_line_a_shell_accepts() {
        let cmd = Cmd::new("cargo").env("CI", "true").args([
            "nextest",
            "run",
            "-E",
            "not (binary_id(=a::b))",
            "it's",
            "",
        ]);
        assert_eq!(
            cmd.to_string(),
            r"CI=true cargo nextest run -E 'not (binary_id(=a::b))' 'it'\''s' ''"
        );
    }

    #[test]
    fn failure_names_the_whole_command() {
        let message = Cmd::new("false")
            .arg("--flag")
            .run()
            .err()
            .map(|e| e.to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.starts_with("`false --flag` failed")),
            "{message:?}"
        );
    }

    #[test]
    fn probe_of_a_missing_program_is_none() {
        assert_eq!(Cmd::new("/nonexistent/cordon-xtask-probe").probe(), None);
    }
}
