//! `cordon check`: the floor's verdict on a command, before anything runs; and the same gate at
//! the top of `cordon run`.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use cordon_floor::{Floor, FloorConfig, Verdict};

use crate::cli::CheckArgs;
use crate::error::CliError;
use crate::exit;

/// The floor as the CLI configures it: the default protected process names, no sudo password,
/// and `HOME`. Built once per process: `serve` and `mcp` judge every command with it.
pub fn floor() -> &'static Floor {
    static FLOOR: std::sync::OnceLock<Floor> = std::sync::OnceLock::new();
    FLOOR.get_or_init(|| {
        Floor::new(FloorConfig {
            home: std::env::var_os("HOME").map(PathBuf::from),
            ..FloorConfig::default()
        })
    })
}

/// Runs `cordon check`; returns the exit code (0 allowed, 126 refused).
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let floor = floor();
    let verdict = match &args.shell {
        Some(text) => floor.check(text),
        None => floor.check_argv(&args.command),
    };
    if args.json {
        serde_json::to_writer(&mut *out, &verdict_json(&verdict))?;
        writeln!(out)?;
    } else {
        match &verdict {
            Verdict::Allow => writeln!(out, "allow")?,
            Verdict::Refuse { rule, .. } => writeln!(out, "refuse {rule}")?,
        }
    }
    Ok(report(&verdict))
}

/// The floor's gate for `cordon run`, before the policy is even resolved: `Some(126)` when the
/// floor refuses `argv` (the refusal printed as `run` prints results), `None` to go on.
pub fn gate_run(
    argv: &[OsString],
    json: bool,
    out: &mut dyn Write,
) -> Result<Option<u8>, CliError> {
    let Some(result) = floor_refusal(argv) else {
        return Ok(None);
    };
    if json {
        serde_json::to_writer(&mut *out, &result)?;
        writeln!(out)?;
    }
    Ok(Some(exit::REFUSED))
}

/// The floor's verdict on `argv` as `cordon run --json` reports a refusal (printed on stderr
/// too), or `None` when the floor allows it. `serve` and `mcp` answer with this object.
pub fn floor_refusal(argv: &[OsString]) -> Option<serde_json::Value> {
    let verdict = floor().check_argv(argv);
    let Verdict::Refuse { rule, reason, .. } = &verdict else {
        return None;
    };
    report(&verdict);
    let empty = serde_json::json!({"text": "", "truncated": false, "bytes": 0});
    Some(serde_json::json!({
        "status": "refused",
        "exit_code": exit::REFUSED,
        "signal": null,
        "stdout": empty,
        "stderr": empty,
        "duration_ms": 0.0,
        "backend": null,
        "sandboxed": false,
        "policy_hash": null,
        "violations": [],
        "refusal": format!("refused by the floor: {rule}: {reason}"),
        "rule": rule.id(),
        "warnings": [],
        "env_dropped": {},
        "landlock": null,
        "built_ahead": false,
        "network": null,
    }))
}

/// Prints a refusal on stderr; the exit code of the verdict.
fn report(verdict: &Verdict) -> u8 {
    match verdict {
        Verdict::Allow => 0,
        Verdict::Refuse {
            rule,
            reason,
            evidence,
        } => {
            eprintln!("cordon: refused by the floor: {rule}: {reason} (in `{evidence}`)");
            exit::REFUSED
        }
    }
}

fn verdict_json(verdict: &Verdict) -> serde_json::Value {
    match verdict {
        Verdict::Allow => serde_json::json!({
            "verdict": "allow", "rule": null, "reason": null, "evidence": null,
        }),
        Verdict::Refuse {
            rule,
            reason,
            evidence,
        } => serde_json::json!({
            "verdict": "refuse", "rule": rule.id(), "reason": reason, "evidence": evidence,
        }),
    }
}
