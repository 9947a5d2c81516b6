//! `cordon serve`: one session for a harness that calls the CLI rather than the library.
//!
//! `cordon run` is a process per command, and builds each jail while its caller waits. A harness
//! in Python or TypeScript that starts `cordon serve` once gets what a Rust harness gets from
//! `Launcher::prepare` and `run_prepared`: the writable roots walked once, and each command
//! handed to a jail built (and checked) while the harness was busy with the previous result.
//!
//! The protocol is one line per request and one per answer, in order:
//!
//! - **request**: a JSON array of strings, the program and its arguments (`["git", "status"]`),
//!   or an object: a command with a workspace mode of its own (`{"run": [...], "workspace":
//!   "review"}`), or a question about the changes the workspace's runs keep (`changes`, `diff`,
//!   `apply`, `drop`: `requests.rs`);
//! - **answer**: the object `cordon run --json` prints for that command (the floor's refusal
//!   included), what `cordon changes`, `diff`, `apply` or `drop` print with `--json` for a
//!   question, or `{"error": "...", "exit_code": 125}` for a line that is none of these or a
//!   request that could not be done. Nothing else is written to stdout.
//!
//! The jail's options are fixed when the session starts (the same flags as `run`); stdin is not
//! passed to the commands (theirs is `/dev/null`), and their output is captured, never
//! streamed. End of input ends the session: the jail built ahead is killed and what was made for
//! it removed, and `serve` exits 0. SIGTERM, SIGINT and SIGHUP end every jail of the session,
//! and `serve` exits 128+N.

use std::io::{BufRead, Write};

use cordon_launch::{Forward, Launcher, Preparation, RunRequest};
use cordon_policy::Plan;

use crate::cli::{JailOptions, ServeArgs};
use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::requests::{Question, Request};

/// The most bytes one request line may hold.
pub const REQUEST_LIMIT: usize = 16 << 20;

/// One prepared session, as `serve` and `mcp` hold it for their lifetime.
pub struct Session {
    /// The process facts it was planned in.
    pub ctx: Context,
    /// The plan every command of the session runs under.
    pub plan: Plan,
    /// The launcher that runs them.
    pub launcher: Launcher,
    /// The walk of the writable roots, and the jail built ahead.
    pub preparation: Preparation,
}

impl Session {
    /// Sets up a session for these jail options: SIGTERM, SIGINT and SIGHUP end every jail of it
    /// (set up while this process has one thread), the plan, the launcher, the walk. `Ok(None)`
    /// when the walk refused the session (a nested mount, a hard link reaching outside, ...):
    /// the refusal is printed and no command may run (exit 126).
    pub fn start(jail: &JailOptions) -> Result<Option<Session>, CliError> {
        // The signal ends every jail, then the process exits 128+N at once: its main thread may
        // be waiting on stdin. What the jails used on the host is removed by the session reaper.
        cordon_launch::end_jails_on_signals(std::time::Duration::ZERO)
            .map_err(CliError::Signals)?;
        let (ctx, plan) = crate::run::plan_for(jail, true)?;
        let launcher = crate::run::launcher(&ctx, jail)?;
        match launcher.prepare(&plan) {
            Ok(preparation) => Ok(Some(Session {
                ctx,
                plan,
                launcher,
                preparation,
            })),
            Err(e) => {
                eprintln!("cordon: refused: {e}");
                Ok(None)
            }
        }
    }
}

/// Runs `cordon serve` over `input` and `out` until end of input; returns the exit code.
pub fn run(args: &ServeArgs, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<u8, CliError> {
    let Some(Session {
        plan,
        launcher,
        preparation: session,
        ..
    }) = Session::start(&args.jail)?
    else {
        return Ok(exit::REFUSED);
    };
    let host_env = cordon_env::host_snapshot();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = std::io::Read::take(&mut *input, REQUEST_LIMIT as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(CliError::Input)?;
        if read == 0 {
            break;
        }
        if line.len() > REQUEST_LIMIT && !line.ends_with(b"\n") {
            // Too long: answer, then skip the rest of that line.
            error(
                out,
                &format!("a request line holds more than {REQUEST_LIMIT} bytes"),
            )?;
            skip_line(input)?;
            continue;
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let (argv, workspace) = match crate::requests::parse(text) {
            Ok(Request::Run { argv, workspace }) => (argv, workspace),
            Ok(Request::Ask(question)) => {
                match review(&plan, question) {
                    Ok(answer) => {
                        serde_json::to_writer(&mut *out, &answer)?;
                        writeln!(out)?;
                        out.flush()?;
                    }
                    Err(e) => error(out, &e)?,
                }
                continue;
            }
            Err(e) => {
                error(out, &e)?;
                continue;
            }
        };
        if crate::check::gate_run(&argv, true, out)?.is_some() {
            out.flush()?;
            continue;
        }
        // A mode of the request's own runs in a jail built for it (one built ahead is the
        // session's mode's).
        let own_mode = workspace.filter(|m| *m != plan.workspace_mode).map(|m| {
            let mut p = plan.clone();
            p.workspace_mode = m;
            p
        });
        let request = RunRequest {
            plan: own_mode.as_ref().unwrap_or(&plan),
            argv: &argv,
            host_env: &host_env,
            forward: Forward::No,
            inherit_stdin: false,
        };
        let ran = if own_mode.is_some() {
            launcher.run(&request)
        } else {
            launcher.run_prepared(&request, &session)
        };
        match ran {
            Ok(result) => {
                for w in &result.warnings {
                    eprintln!("cordon: WARNING: {w}");
                }
                serde_json::to_writer(&mut *out, &result)?;
                writeln!(out)?;
                out.flush()?;
            }
            Err(e) => error(out, &e.to_string())?,
        }
    }
    Ok(0)
}

/// Answers a question about the changes the session's workspace keeps, as `cordon changes`,
/// `diff`, `apply` and `drop` do with `--json`.
fn review(plan: &Plan, question: Question) -> Result<serde_json::Value, String> {
    let (workspace, state) =
        crate::review::workspace_state(Some(&plan.workspace)).map_err(|e| e.to_string())?;
    let answer = match question {
        Question::Changes => crate::review::changes::listing(&workspace, &state),
        Question::Diff(run) => cordon_commit::read_run(&state, &run)
            .map_err(Into::into)
            .and_then(|(manifest, _)| serde_json::to_value(manifest).map_err(Into::into)),
        Question::Apply { run, paths } => cordon_commit::apply_held(&state, &run, &paths)
            .map_err(Into::into)
            .and_then(|report| serde_json::to_value(report).map_err(Into::into)),
        Question::Drop(run) => cordon_commit::drop_run(&state, &run)
            .map(|()| serde_json::json!({ "dropped": run }))
            .map_err(Into::into),
    };
    answer.map_err(|e: CliError| e.to_string())
}

/// Answers a request that could not be run.
fn error(out: &mut dyn Write, message: &str) -> Result<(), CliError> {
    let answer = serde_json::json!({ "error": message, "exit_code": exit::CANNOT_RUN });
    serde_json::to_writer(&mut *out, &answer)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// Reads and drops the rest of the current line.
fn skip_line(input: &mut dyn BufRead) -> Result<(), CliError> {
    loop {
        let buf = input.fill_buf().map_err(CliError::Input)?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}
