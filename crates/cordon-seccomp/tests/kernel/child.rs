//! The child side: install the filter (or not), run one probe, print the outcome.

use std::process::ExitCode;

use cordon_seccomp::{FilterSpec, compile};

use crate::CASE_VAR;
use crate::cases::cases;
use crate::probes::Outcome;

/// Child side: install the filter (or not), run one probe, print the outcome.
pub fn child(request: &str) -> ExitCode {
    let Some((mode, name)) = request.split_once(':') else {
        eprintln!("malformed {CASE_VAR}={request}");
        return ExitCode::from(2);
    };
    let Some(case) = cases().into_iter().find(|case| case.name == name) else {
        eprintln!("no case named {name:?}");
        return ExitCode::from(2);
    };
    if mode == "filtered"
        && let Err(message) = install(case.deny_sockets, case.alone, case.own_net)
    {
        println!("APPLY-FAILED {message}");
        return ExitCode::from(3);
    }
    match (case.probe)() {
        Outcome::Ok(value) => println!("OUTCOME ok {value}"),
        Outcome::Errno(errno) => println!("OUTCOME errno {errno}"),
        Outcome::Killed(signal) => println!("OUTCOME killed {signal}"),
    }
    ExitCode::SUCCESS
}

/// Loads the host filter from its bytes, as bubblewrap would.
fn install(deny_sockets: bool, alone: bool, own_net: bool) -> Result<(), String> {
    let spec = FilterSpec::for_host(deny_sockets).map_err(|err| err.to_string())?;
    let spec = if alone {
        spec.without_pid_namespace()
    } else if own_net {
        spec.with_own_network_namespace()
    } else {
        spec
    };
    let filter = compile(&spec).map_err(|err| err.to_string())?;
    let program: Vec<seccompiler::sock_filter> = filter
        .bytes()
        .chunks_exact(8)
        .map(|c| seccompiler::sock_filter {
            code: u16::from_ne_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect();
    seccompiler::apply_filter(&program)
        .map_err(|err| format!("the kernel refused the filter: {err}"))
}
