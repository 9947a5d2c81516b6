//! The `cordon` command: thin glue over the cordon crates. It parses arguments, calls a library,
//! prints the result, and maps outcomes to the exit codes of docs/cli.md.

mod audit;
mod cache;
mod check;
mod cli;
mod context;
mod doctor;
mod error;
mod exit;
mod mcp;
mod policy_show;
mod requests;
mod review;
mod run;
mod serve;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, PolicyCommand};

fn main() -> ExitCode {
    // Inside a jail this binary is the stage: it checks the jail, then becomes the payload.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    cordon_launch::run_if_stage(&args);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and version go to stdout with success; every other parse error is bad input.
            let code = if err.use_stderr() {
                exit::CANNOT_RUN
            } else {
                0
            };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    // Not locked for the whole run: `cordon run` streams the payload's output from other threads.
    let mut out = std::io::stdout();
    let result = match &cli.command {
        Command::Run(args) => run::run(args, &mut out),
        Command::Explain(args) => run::explain(args, &mut out).map(|()| 0),
        Command::Serve(args) => serve::run(args, &mut std::io::stdin().lock(), &mut out),
        Command::Mcp(args) => mcp::run(args),
        Command::Doctor(args) => {
            doctor::run(args, &mut out).map(|ok| if ok { 0 } else { exit::REFUSED })
        }
        Command::Policy(PolicyCommand::Show(args)) => policy_show::run(args, &mut out).map(|()| 0),
        Command::Audit(args) => {
            audit::run(args, &mut out).map(|ok| if ok { 0 } else { exit::AUDIT_FAILED })
        }
        Command::Check(args) => check::run(args, &mut out),
        Command::Cache(args) => cache::run(args, &mut out).map(|()| 0),
        Command::Changes(args) => review::changes::run(args, &mut out).map(|()| 0),
        Command::Diff(args) => review::diff::run(args, &mut out).map(|()| 0),
        Command::Apply(args) => review::apply::run(args, &mut out).map(|()| 0),
        Command::Drop(args) => review::drop::run(args, &mut out).map(|()| 0),
        Command::Recover(args) => review::recover::run(args, &mut out).map(|()| 0),
    };
    let _ = out.flush();
    // Told to stop (SIGTERM, SIGINT, SIGHUP): the jail was ended; exit as a process killed by
    // that signal would (docs/cli.md).
    if let Some(signal) = cordon_launch::termination_signal() {
        return ExitCode::from(u8::try_from(128 + signal).unwrap_or(u8::MAX));
    }
    match result {
        Ok(code) => ExitCode::from(code),
        // A reader that went away (`cordon … | head`) is not an error worth a message: exit as a
        // process killed by SIGPIPE would, 128 + 13.
        Err(error::CliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::from(141)
        }
        Err(err) => {
            eprintln!("cordon: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
