//! Class 9: resources. Each case tightens one limit in the project file (which may only tighten)
//! and floods past it; the host must stay responsive.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::harness::{Ctx, RunOut, cut};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class, Users};

pub fn cases() -> Vec<Case> {
    let c = Class::Resources;
    vec![
        Case::attack(
            "res/fork-flood",
            c,
            "fork until refused under `processes`; the host still starts a process quickly",
            fork_flood,
        )
        .exclusive()
        .not_in_mutants()
        .no_jail_unsafe(
            Users::Both,
            "with no jail nothing bounds the flood: 3000 processes forked on the host",
        ),
        Case::attack(
            "res/file-size",
            c,
            "write 3 MB under `file_size_bytes = 1 MiB`: the host file stops at the limit",
            file_size,
        )
        .not_in_mutants(),
        Case::attack(
            "res/output-flood",
            c,
            "print 20 MB under `output_cap_bytes = 64 KiB`: capped, flagged, counted",
            output_flood,
        )
        .not_in_mutants(),
        Case::attack(
            "res/memory",
            c,
            "allocate and touch 2 GiB under `address_space_bytes = 1 GiB`",
            memory,
        )
        .not_in_mutants()
        .no_jail_unsafe(
            Users::Both,
            "with no jail nothing caps the address space: 2 GiB of the host's memory allocated \
             and touched, beside the other cases",
        ),
        Case::attack(
            "res/cpu",
            c,
            "spin under `cpu_secs = 1`: killed by SIGXCPU/SIGKILL long before the timeout",
            cpu,
        )
        .exclusive()
        .not_in_mutants(),
        Case::attack(
            "res/open-files",
            c,
            "open 500 descriptors under `open_files = 64`",
            open_files,
        )
        .not_in_mutants(),
    ]
}

fn project(ctx: &Ctx<'_>, limits: &str) -> Option<Outcome> {
    ctx.file(".cordon.toml", &format!("[limits]\n{limits}\n"))
        .err()
        .map(|e| Outcome::new(Verdict::Inconclusive, format!("harness: {e}")))
}

/// Tasks (threads included) whose real uid is `uid`: what RLIMIT_NPROC counts.
fn tasks_of(uid: u32) -> usize {
    let mut n = 0;
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for p in procs.flatten() {
        if !p
            .file_name()
            .to_string_lossy()
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(p.path().join("status")) else {
            continue;
        };
        let real = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        let threads = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|t| t.trim().parse::<usize>().ok())
            .unwrap_or(1);
        if real == Some(uid) {
            n += threads;
        }
    }
    n
}

/// The slowest of five `/bin/true` spawns on the host.
fn host_latency() -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            let _ = Command::new("/bin/true")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .status();
            t.elapsed()
        })
        .max()
        .unwrap_or_default()
}

const FLOOD: usize = 3000;

fn fork_flood(ctx: &Ctx<'_>) -> Outcome {
    let allowed = 64;
    let limit = tasks_of(ctx.ids.uid) + allowed;
    if let Some(o) = project(ctx, &format!("processes = {limit}")) {
        return o;
    }
    let run = ctx.cordon().py(&format!(
        "import os, time\n\
         n = 0\n\
         err = 'none'\n\
         for i in range({FLOOD}):\n\
         \x20   try:\n\
         \x20       pid = os.fork()\n\
         \x20   except OSError as e:\n\
         \x20       err = e.strerror; break\n\
         \x20   if pid == 0:\n\
         \x20       time.sleep(4); os._exit(0)\n\
         \x20   n += 1\n\
         print('FORKED', n, err, flush=True)\n\
         time.sleep(1.5)\n"
    ));
    let handle = std::thread::scope(|s| {
        let jail = s.spawn(move || run.run());
        std::thread::sleep(Duration::from_millis(1200));
        let latency = host_latency();
        (jail.join().unwrap_or_default(), latency)
    });
    let (out, latency): (RunOut, Duration) = handle;
    let forked: usize = out
        .out
        .lines()
        .find_map(|l| l.strip_prefix("FORKED "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    let unbounded = forked >= FLOOD;
    let slow = latency > Duration::from_secs(2);
    ctx.judge(
        &out,
        unbounded || slow,
        format!(
            "limit {limit} tasks for uid {} ({allowed} above its count); forked {forked}; host spawn latency {latency:?}; {}",
            ctx.ids.uid,
            cut(&out.out, 80)
        ),
    )
}

fn file_size(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = project(ctx, "file_size_bytes = 1048576") {
        return o;
    }
    if let Err(e) = ctx.scratch() {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    // Never `2>&1` into the file at its limit: dash then reports head's SIGXFSZ on that same
    // stderr and dies of SIGXFSZ itself, so the second write (SIGXFSZ ignored, EFBIG expected)
    // never ran, unnoticed until the step markers.
    let out = ctx.sh_steps(&[
        "head -c 3000000 /dev/zero > scratch/big; echo \"exit $?\"",
        "trap '' XFSZ",
        "head -c 3000000 /dev/zero > scratch/big2",
    ]);
    let size = |n: &str| {
        std::fs::metadata(ctx.work.join("scratch").join(n))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let (a, b) = (size("big"), size("big2"));
    ctx.judge(
        &out,
        a > 1_048_576 || b > 1_048_576,
        format!("host file sizes {a} and {b} bytes (limit 1048576)"),
    )
}

fn output_flood(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = project(ctx, "output_cap_bytes = 65536") {
        return o;
    }
    let out = ctx
        .sh("head -c 20000000 /dev/zero | tr '\\0' a; head -c 20000000 /dev/zero | tr '\\0' b >&2");
    let (kept, kept_err, truncated, counted) = match &out.json {
        Some(j) => (
            j["stdout"]["text"].as_str().map_or(usize::MAX, str::len),
            j["stderr"]["text"].as_str().map_or(usize::MAX, str::len),
            j["stdout"]["truncated"] == true && j["stderr"]["truncated"] == true,
            j["stdout"]["bytes"] == 20_000_000,
        ),
        // No JSON (cordon failed, or no launcher at all): what reached the caller is the raw
        // output, uncapped and unflagged.
        None => (out.out.len(), out.err.len(), false, false),
    };
    ctx.judge(
        &out,
        kept > 65536 || kept_err > 65536 || !truncated || !counted,
        format!("kept {kept} + {kept_err} bytes, truncated {truncated}, total counted {counted}, in {:?}", out.took),
    )
}

fn memory(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = project(ctx, "address_space_bytes = 1073741824") {
        return o;
    }
    let out = ctx.py("try:\n\
         \x20   b = bytearray(2 << 30)\n\
         \x20   for i in range(0, len(b), 1 << 20): b[i] = 1\n\
         \x20   print('ALLOCATED')\n\
         except MemoryError:\n\
         \x20   print('MemoryError')\n");
    let allocated = out.out.contains("ALLOCATED");
    ctx.judge(
        &out,
        allocated,
        format!("2 GiB allocated under a 1 GiB cap: {allocated}"),
    )
}

fn cpu(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = project(ctx, "cpu_secs = 1\ntimeout_secs = 30") {
        return o;
    }
    let out = ctx.py("while True:\n    pass\n");
    let killed = matches!(out.code, Some(152) | Some(137));
    ctx.judge(
        &out,
        !killed || out.took > Duration::from_secs(10),
        format!(
            "exit {:?} after {:?} (152 = SIGXCPU, 137 = SIGKILL)",
            out.code, out.took
        ),
    )
}

fn open_files(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = project(ctx, "open_files = 64") {
        return o;
    }
    let out = ctx.py("fs = []\n\
         try:\n\
         \x20   for i in range(500): fs.append(open('/dev/null'))\n\
         except OSError as e: print(e)\n\
         print('OPENED', len(fs))\n");
    let opened: usize = out
        .out
        .lines()
        .find_map(|l| l.strip_prefix("OPENED "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(usize::MAX);
    ctx.judge(&out, opened > 64, format!("opened {opened} (limit 64)"))
}
