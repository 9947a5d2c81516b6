//! The cordon binary's modes besides the CLI: the in-jail stage and the host-side session
//! reaper, both selected by a first argument no user types (`STAGE_ARG`).
//!
//! A binary that embeds them calls [`run_if_stage`] first thing in `main`.

use std::ffi::{OsStr, OsString};

use crate::stage::STAGE_ARG;

/// Runs the stage when `args` (the process arguments after `argv[0]`) start with `STAGE_ARG`;
/// returns without doing anything otherwise. Call it first thing in `main`.
pub fn run_if_stage(args: &[OsString]) {
    if args.first().map(OsString::as_os_str) != Some(OsStr::new(STAGE_ARG)) {
        return;
    }
    let code = match args.get(1).and_then(|m| m.to_str()) {
        Some("check") => crate::stage::check_then_exec(&args[2..], false, false),
        Some("await") => crate::stage::check_then_exec(&args[2..], true, false),
        // The same, the stage staying as the jail's init (init.rs).
        Some("check-init") => crate::stage::check_then_exec(&args[2..], false, true),
        Some("await-init") => crate::stage::check_then_exec(&args[2..], true, true),
        Some("probe") => crate::stage::probe(&args[2..]),
        // Not in a jail: whether an overlay can be mounted in a user namespace here.
        Some(crate::stage::layer::PROBE_MODE) => crate::stage::layer::probe_main(&args[2..]),
        // Not in a jail: the host-side reaper of a run's leftovers (reaper.rs).
        Some(crate::host::reaper::REAP_MODE) => crate::host::reaper::reap_main(&args[2..]),
        _ => {
            eprintln!("cordon stage: unknown mode");
            126
        }
    };
    std::process::exit(code);
}
