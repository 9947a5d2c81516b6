//! The parent side: run a case in a filtered and an unfiltered child, and compare.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use crate::CASE_VAR;
use crate::cases::{Case, Expect};
use crate::probes::Outcome;

/// Parent side: run `case` in a child and read what it saw.
fn run(case: &Case, mode: &str) -> Result<Outcome, String> {
    let exe = std::env::current_exe().map_err(|err| format!("current_exe: {err}"))?;
    let output = Command::new(exe)
        .env(CASE_VAR, format!("{mode}:{}", case.name))
        .output()
        .map_err(|err| format!("spawning the {mode} child: {err}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if let Some(signal) = output.status.signal() {
        return Ok(Outcome::Killed(signal));
    }
    for line in stdout.lines() {
        if let Some(message) = line.strip_prefix("APPLY-FAILED ") {
            return Err(format!("{mode} child could not load the filter: {message}"));
        }
        let mut words = line.split_whitespace();
        if words.next() == Some("OUTCOME") {
            let kind = words.next();
            let value: Option<i64> = words.next().and_then(|word| word.parse().ok());
            return match (kind, value) {
                (Some("ok"), Some(value)) => Ok(Outcome::Ok(value)),
                (Some("errno"), Some(value)) => Ok(Outcome::Errno(value as i32)),
                _ => Err(format!("{mode} child printed {line:?}")),
            };
        }
    }
    Err(format!(
        "{mode} child ({}) printed no outcome; stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

fn describe(outcome: Outcome) -> String {
    match outcome {
        Outcome::Ok(value) => format!("ok ({value})"),
        Outcome::Errno(errno) => format!("{} ({errno})", errno_name(errno)),
        Outcome::Killed(signal) if signal == libc::SIGSYS => "killed by SIGSYS".to_owned(),
        Outcome::Killed(signal) => format!("killed by signal {signal}"),
    }
}

fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::ENOEXEC => "ENOEXEC",
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::EINVAL => "EINVAL",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        _ => "errno",
    }
}

/// Compares what the filtered and unfiltered children saw with what the case expects.
pub fn check(case: &Case) -> Result<String, String> {
    let filtered = run(case, "filtered")?;
    let baseline = run(case, "baseline")?;
    let seen = format!(
        "filtered {}, unfiltered {}",
        describe(filtered),
        describe(baseline)
    );
    let ok = match case.expect {
        Expect::Denied(errno) => {
            if filtered != Outcome::Errno(errno) {
                return Err(format!(
                    "expected {} under the filter; {seen}",
                    errno_name(errno)
                ));
            }
            if baseline == filtered {
                // SAFETY: geteuid has no preconditions.
                let euid = unsafe { libc::geteuid() };
                return Err(format!(
                    "the kernel gives the same answer without the filter, so this run cannot \
                     show the filter caused it (euid {euid}; run as root, since some calls check \
                     capabilities before arguments); {seen}"
                ));
            }
            true
        }
        Expect::Killed => {
            filtered == Outcome::Killed(libc::SIGSYS) && baseline != Outcome::Killed(libc::SIGSYS)
        }
        Expect::Works => matches!(filtered, Outcome::Ok(_)) && matches!(baseline, Outcome::Ok(_)),
        Expect::Untouched => filtered == baseline && !matches!(filtered, Outcome::Killed(_)),
    };
    if ok {
        Ok(seen)
    } else {
        Err(format!("expected {:?}; {seen}", case.expect))
    }
}
