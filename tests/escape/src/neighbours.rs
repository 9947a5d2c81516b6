//! Class 5, the host's other processes beyond signals and tracing: the jail must not change a
//! host process's resource limits, priority, I/O priority or CPU affinity. Under bubblewrap the
//! PID namespace leaves no host pid to name; the Landlock backend shares the host's PIDs, so its
//! seccomp filter lets these calls name only the caller (0). Judged on the host, from the
//! victim's own `/proc` entries and `ionice`.

use std::process::Command;

use super::harness::{Ctx, cut};
use super::matrix::{Outcome, Verdict};
use super::processes::with_victim;
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    vec![Case::attack(
        "proc/host-limits-and-priority",
        Class::Processes,
        "prlimit, renice, ionice and taskset on a host process of the same user by pid",
        limits_and_priority,
    )]
}

/// What the attack would change, read on the host.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    limits: Option<String>,
    nice: Option<String>,
    affinity: Option<String>,
    io_class: Option<String>,
}

fn seen(pid: u32) -> Seen {
    // Every limit, so the shell's and python's changes both show.
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok();
    // Field 19 of stat, counted after the parenthesised command name.
    let nice = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1.to_owned();
            after.split_whitespace().nth(16).map(str::to_owned)
        });
    let affinity = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Cpus_allowed_list:"))
                .map(|l| l.trim().to_owned())
        });
    let io_class = Command::new("ionice")
        .args(["-p", &pid.to_string()])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    Seen {
        limits,
        nice,
        affinity,
        io_class,
    }
}

fn limits_and_priority(ctx: &Ctx<'_>) -> Outcome {
    with_victim(ctx, |v| {
        let pid = v.pid();
        let before = seen(pid);
        if before.limits.is_none() || before.nice.is_none() {
            return Outcome::new(
                Verdict::Inconclusive,
                format!("harness: cannot read the victim's limits: {before:?}"),
            );
        }
        // Each step echoes its mark whatever its own outcome, so a step that never ran shows.
        let steps = [
            format!("prlimit --pid {pid} --nofile=7:7"),
            format!("renice -n 7 -p {pid}"),
            format!("ionice -c 3 -p {pid}"),
            format!("taskset -p 1 {pid}"),
            format!(
                "python3 -c 'import resource; resource.prlimit({pid}, resource.RLIMIT_MSGQUEUE, (4096, 4096)); print(\"py-prlimit ok\")'"
            ),
        ];
        let script: String = steps
            .iter()
            .enumerate()
            .map(|(i, step)| format!("{step} 2>&1\necho step-{i}-done\n"))
            .collect();
        let out = ctx.sh(&script);
        let missing: Vec<usize> = (0..steps.len())
            .filter(|i| !out.out.contains(&format!("step-{i}-done")))
            .collect();
        if ctx.canary() && !missing.is_empty() {
            return Outcome::new(
                Verdict::Inconclusive,
                format!("steps {missing:?} did not run: {}", out.brief()),
            );
        }
        let after = seen(pid);
        let mut changed = Vec::new();
        if before.limits != after.limits {
            changed.push("resource limits changed (prlimit or python)".to_owned());
        }
        if before.nice != after.nice {
            changed.push(format!("nice {:?} -> {:?}", before.nice, after.nice));
        }
        if before.io_class != after.io_class {
            changed.push(format!(
                "I/O class {:?} -> {:?}",
                before.io_class, after.io_class
            ));
        }
        if before.affinity != after.affinity {
            changed.push(format!(
                "affinity {:?} -> {:?}",
                before.affinity, after.affinity
            ));
        }
        let detail = if changed.is_empty() {
            format!("victim {pid} unchanged; {}", cut(&out.out, 160))
        } else {
            changed.join("; ")
        };
        ctx.judge(&out, !changed.is_empty(), detail)
    })
}
