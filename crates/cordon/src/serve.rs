//! `cordon serve`: one session for a harness that calls the CLI rather than the library.
//!
//! `cordon run` is a process per command, and builds each jail while its caller waits. A harness
//! in Python or TypeScript that starts `cordon serve` once gets what a Rust harness gets from
//! `Launcher::prepare` and `run_prepared`: the writable roots walked once, and each command
//! handed to a jail built (and checked) while the harness was busy with the previous result.
//!
//! The protocol is one line per request and one per answer, in order:
//!
//! - **request**: a JSON array of strings, the program and its arguments (`["git", "status"]`);
//! - **answer**: the object `cordon run --json` prints for that command (the floor's refusal
//!   included), or `{"error": "...", "exit_code": 125}` for a line that is not such an array or a
//!   command the launcher could not take. Nothing else is written to stdout.
//!
//! The jail's options are fixed when the session starts (the same flags as `run`); stdin is not
//! passed to the commands (theirs is `/dev/null`), and their output is captured, never
//! streamed. End of input ends the session: the jail built ahead is killed and what was made for
//! it removed, and `serve` exits 0. SIGTERM, SIGINT and SIGHUP end every jail of the session,
//! and `serve` exits 128+N.

use std::ffi::OsString;
use std::io::{BufRead, Write};

use cordon_launch::{Forward, Launcher, Preparation, RunRequest};
use cordon_policy::Plan;

use crate::cli::{JailOptions, ServeArgs};
use crate::context::Context;
use crate::error::CliError;
use crate::exit;

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
        let argv: Vec<OsString> = match serde_json::from_slice::<Vec<String>>(text) {
            Ok(argv) if !argv.is_empty() => argv.into_iter().map(OsString::from).collect(),
            Ok(_) => {
                error(out, "the request is an empty array: nothing to run")?;
                continue;
            }
            Err(e) => {
                error(
                    out,
                    &format!("a request is a JSON array of strings (program, arguments): {e}"),
                )?;
                continue;
            }
        };
        if crate::check::gate_run(&argv, true, out)?.is_some() {
            out.flush()?;
            continue;
        }
        let request = RunRequest {
            plan: &plan,
            argv: &argv,
            host_env: &host_env,
            forward: Forward::No,
            inherit_stdin: false,
        };
        match launcher.run_prepared(&request, &session) {
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
