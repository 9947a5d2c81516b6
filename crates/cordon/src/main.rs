//! The `cordon` command: thin glue over the cordon crates. It parses arguments, calls a library,
//! prints the result, and maps outcomes to the exit codes of docs/cli.md.

mod audit;
mod cli;
mod context;
mod error;
mod exit;
mod policy_show;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, PolicyCommand};

fn main() -> ExitCode {
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
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match &cli.command {
        Command::Policy(PolicyCommand::Show(args)) => policy_show::run(args, &mut out).map(|()| 0),
        Command::Audit(args) => {
            audit::run(args, &mut out).map(|ok| if ok { 0 } else { exit::AUDIT_FAILED })
        }
    };
    let _ = out.flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("cordon: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
