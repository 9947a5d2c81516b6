//! Runs a command under the Landlock rules of a Shell-profile plan for the current directory, to
//! try the rules by hand.
//!
//! ```text
//! run [--inside-bubblewrap] [--show] [--save FILE | --load FILE] -- PROGRAM [ARGS...]
//! ```
//!
//! Without `--load`, the rules are built here from the plan (`HOME` from the environment, the
//! current directory as workspace), for the `landlock` backend (a private temporary directory
//! under the system's, removed afterwards) or, with `--inside-bubblewrap`, for cordon's stage.
//! `--save` writes the encoded rules and stops; `--load` reads rules saved earlier (as the stage
//! does). The report goes to stderr; the exit status is the command's.

#![allow(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use cordon_landlock::{Abi, FsLister, Options, Rules, Ruleset};
use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (mut inside, mut show, mut save, mut load) = (false, false, None, None);
    let mut argv = Vec::new();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--inside-bubblewrap") => inside = true,
            Some("--show") => show = true,
            Some("--save") => save = args.next().map(PathBuf::from),
            Some("--load") => load = args.next().map(PathBuf::from),
            Some("--") => {
                argv.extend(args.by_ref());
                break;
            }
            _ => panic!("unknown argument {arg:?}; see the example's documentation"),
        }
    }

    let mut temp = None;
    let rules = match load {
        Some(file) => Rules::decode(&std::fs::read(file).unwrap()).unwrap(),
        None => {
            let cwd = std::env::current_dir().unwrap();
            let plan = Plan::resolve(
                &Policy::for_profile(Profile::Shell),
                &Invocation::at(cwd),
                &RealHost::new(std::env::var_os("HOME")),
            )
            .unwrap();
            let options = if inside {
                Options::inside_bubblewrap()
            } else {
                let dir = tempfile::Builder::new()
                    .prefix("cordon-landlock-run-")
                    .tempdir()
                    .unwrap();
                let options = Options::alone(std::fs::canonicalize(dir.path()).unwrap());
                temp = Some(dir);
                options
            };
            Rules::from_plan(&plan, &options, &FsLister).unwrap()
        }
    };
    if show {
        eprint!("{rules}");
    }
    if let Some(file) = save {
        std::fs::write(file, rules.encode()).unwrap();
        return ExitCode::SUCCESS;
    }
    let Some((program, rest)) = argv.split_first() else {
        panic!("no command after --");
    };

    let (ruleset, report) = Ruleset::create(&rules, Abi::detect().unwrap()).unwrap();
    eprintln!("{report}");
    for skipped in &report.skipped {
        eprintln!("  skipped {}: {:?}", skipped.path.display(), skipped.reason);
    }
    let mut cmd = Command::new(program);
    cmd.args(rest);
    if let Some(dir) = &temp {
        cmd.env("TMPDIR", dir.path());
    }
    // SAFETY: restrict_self is async-signal-safe: two system calls, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            ruleset
                .restrict_self()
                .map_err(|e| std::io::Error::from_raw_os_error(e.errno))
        });
    }
    let status = cmd.status().unwrap();
    drop(temp);
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        (None, Some(sig)) => ExitCode::from(u8::try_from(128 + sig).unwrap_or(1)),
        _ => ExitCode::FAILURE,
    }
}
