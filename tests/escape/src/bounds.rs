//! Class 9, memory the jail holds as a whole: its private temporary filesystems are sized
//! (`limits.tmp_bytes`) and the whole jail is bounded (`limits.memory_bytes`, a memory control
//! group). Each case sets a small bound in the project file, goes well past it, and is judged
//! by what the jail managed to hold: the host is never at risk (64 MiB per filesystem, 512 MiB
//! of memory at most, both far below this machine's).

use std::path::PathBuf;
use std::process::Command;

use super::columns::Who;
use super::harness::{Ctx, cut};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Resources;
    vec![
        Case::attack(
            "res/tmp-fill",
            c,
            "write 64 MiB into each of /tmp, /var/tmp and /dev/shm under `tmp_bytes = 16 MiB`",
            tmp_fill,
        )
        .not_in_mutants(),
        Case::attack(
            "res/memory-bound",
            c,
            "allocate and touch 512 MiB under `memory_bytes = 128 MiB` (the jail's memory group)",
            memory_bound,
        )
        .not_in_mutants(),
    ]
}

const MIB: u64 = 1 << 20;

fn project(ctx: &Ctx<'_>, limits: &str) -> Option<Outcome> {
    ctx.file(".cordon.toml", &format!("[limits]\n{limits}\n"))
        .err()
        .map(|e| Outcome::new(Verdict::Inconclusive, format!("harness: {e}")))
}

/// Removes what a payload run without a jail wrote to the host's temporary directories.
struct Written(Vec<PathBuf>);

impl Drop for Written {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn tmp_fill(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = project(ctx, &format!("tmp_bytes = {}", 16 * MIB)) {
        return o;
    }
    let name = format!("cordon-escape-fill-{}", ctx.token);
    let dirs = ["/tmp", "/var/tmp", "/dev/shm"];
    let _written = Written(dirs.iter().map(|d| PathBuf::from(d).join(&name)).collect());
    // Each step prints how much landed, whatever the write's own outcome.
    let script: String = dirs
        .iter()
        .map(|d| {
            format!(
                "head -c {} /dev/zero > {d}/{name} 2>/dev/null; echo \"{d} $(wc -c < {d}/{name} 2>/dev/null || echo 0)\"; rm -f {d}/{name}\n",
                64 * MIB
            )
        })
        .collect();
    let out = ctx.sh(&script);
    let mut held = Vec::new();
    let mut over = Vec::new();
    for d in dirs {
        let Some(bytes) = out.out.lines().find_map(|l| {
            l.strip_prefix(d)
                .and_then(|rest| rest.trim().parse::<u64>().ok())
        }) else {
            if ctx.canary() {
                return Outcome::new(
                    Verdict::Inconclusive,
                    format!("the {d} step did not report: {}", out.brief()),
                );
            }
            continue;
        };
        if bytes > 16 * MIB {
            over.push(format!("{d}: {bytes} bytes"));
        } else {
            held.push(format!("{d}: {bytes}"));
        }
    }
    let detail = if over.is_empty() {
        format!(
            "each stopped at the bound or was not writable ({})",
            held.join(", ")
        )
    } else {
        format!("past the 16 MiB bound: {}", over.join(", "))
    };
    ctx.judge(&out, !over.is_empty(), detail)
}

/// What `cordon doctor` says bounds memory for the column's user.
fn doctor_memory(ctx: &Ctx<'_>) -> String {
    let mut cmd: Command = ctx.as_user(vec![
        ctx.cordon_binary().as_os_str().to_owned(),
        "doctor".into(),
    ]);
    cmd.env_clear()
        .env("HOME", &ctx.home)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(&ctx.work);
    cmd.output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find(|l| l.starts_with("bound     memory:"))
                .map(str::to_owned)
        })
        .unwrap_or_default()
}

fn memory_bound(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = project(ctx, &format!("memory_bytes = {}", 128 * MIB)) {
        return o;
    }
    // Touch every page, in 64 MiB chunks kept alive, and report how far it got.
    let out = ctx.py("chunks = []\n\
         try:\n\
         \x20   for i in range(8):\n\
         \x20       b = bytearray(64 << 20)\n\
         \x20       for j in range(0, len(b), 4096): b[j] = 1\n\
         \x20       chunks.append(b)\n\
         \x20       print('held', (i + 1) * 64, flush=True)\n\
         \x20   print('ALLOCATED', flush=True)\n\
         except MemoryError:\n\
         \x20   print('MemoryError', flush=True)\n");
    let allocated = out.out.contains("ALLOCATED");
    let detail = format!(
        "512 MiB touched under a 128 MiB bound: {allocated}; {}",
        cut(&out.out.replace('\n', " "), 120)
    );
    if allocated && ctx.column.who == Who::User && !ctx.column.unjailed() && ctx.canary() {
        // Documented (docs/limits.md): an unprivileged user gets a memory group only where the
        // host delegates one. Said as such, never passed; a bound doctor claims must hold.
        let said = doctor_memory(ctx);
        if said.contains("NOT bounded for this user") {
            return Outcome::new(
                Verdict::Unavailable,
                format!("no memory group for an unprivileged user on this host ({said})"),
            );
        }
    }
    ctx.judge(&out, allocated, detail)
}
