//! Class 5: processes. The harness starts a host process as the column's user (so that only the
//! jail stands between the payload and it) and checks from the host that it survives.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::harness::{Ctx, cut, wait_deadline, wait_for};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Processes;
    vec![
        Case::attack(
            "proc/host-pids-invisible",
            c,
            "host processes (one of the same user) are absent from the jail's /proc",
            invisible,
        )
        .landlock_limit(
            "no PID namespace: host processes stay visible in /proc (Landlock's scoping keeps \
             them from being signalled or traced, and their memory and environment unreadable)",
        ),
        Case::attack(
            "proc/kill-host",
            c,
            "kill -KILL / -STOP a host process of the same user by pid (shell and python)",
            kill_host,
        ),
        Case::attack(
            "proc/ptrace-host",
            c,
            "PTRACE_ATTACH / PTRACE_SEIZE / process_vm_readv on a host process of the same user",
            ptrace_host,
        ),
        Case::attack(
            "proc/background-outlives",
            c,
            "a background child, a setsid child and a double-forked daemon outlive the command",
            background,
        ),
        Case::attack(
            "proc/timeout-kills-tree",
            c,
            "--timeout 1 with a foreground, a background and a setsid sleeper: 124, and nothing writes later",
            timeout,
        ),
        Case::attack(
            "proc/launcher-killed",
            c,
            "SIGKILL the cordon process mid-run (a setsid child running): the jail dies with it, nothing writes later",
            launcher_killed,
        ),
        Case::attack(
            "proc/launcher-killed-anytime",
            c,
            "SIGTERM or SIGKILL cordon (run; serve in the serve column) from its start to 300 ms \
             into the jail, 20 times: no process of the jail (a shell, a heartbeat writer) survives",
            launcher_killed_anytime,
        ),
    ]
}

/// A `sleep` running on the host as the column's user, killed on drop.
pub(crate) struct Victim(Child);

impl Victim {
    fn start(ctx: &Ctx<'_>) -> Result<Victim, String> {
        let mut cmd = ctx.as_user(vec![OsString::from("/bin/sleep"), OsString::from("120")]);
        cmd.env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd.spawn()
            .map(Victim)
            .map_err(|e| format!("cannot start the host victim: {e}"))
    }

    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Alive and not stopped.
    fn healthy(&mut self) -> bool {
        if !matches!(self.0.try_wait(), Ok(None)) {
            return false;
        }
        // setpriv execs sleep: the pid is the sleep's.
        std::fs::read_to_string(format!("/proc/{}/status", self.pid())).is_ok_and(|s| {
            s.lines()
                .find(|l| l.starts_with("State:"))
                .is_some_and(|l| !l.contains("stopped") && !l.contains("T ("))
        })
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn with_victim(ctx: &Ctx<'_>, f: impl FnOnce(&mut Victim) -> Outcome) -> Outcome {
    match Victim::start(ctx) {
        Ok(mut v) => {
            // Let setpriv exec sleep before its pid is used.
            std::thread::sleep(Duration::from_millis(50));
            f(&mut v)
        }
        Err(e) => Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
    }
}

fn invisible(ctx: &Ctx<'_>) -> Outcome {
    with_victim(ctx, |v| {
        let pid = v.pid();
        let out = ctx.sh_steps(&[
            "n=$(ls /proc | grep -c '^[0-9]'); echo \"pids=$n\"",
            &format!(
                "if [ -e /proc/{pid} ]; then echo \"VISIBLE $(tr '\\0' ' ' < /proc/{pid}/cmdline)\"; fi"
            ),
            "ps -eo pid,comm 2>/dev/null | grep -c sleep",
        ]);
        let visible = out.out.contains("VISIBLE");
        let count: usize = out
            .out
            .lines()
            .find_map(|l| l.strip_prefix("pids="))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        ctx.judge(
            &out,
            visible || count > 10,
            format!("victim pid {pid} visible: {visible}; {count} pids in the jail's /proc"),
        )
    })
}

fn kill_host(ctx: &Ctx<'_>) -> Outcome {
    with_victim(ctx, |v| {
        let pid = v.pid();
        let out = ctx.sh_steps(&[
            &format!("kill -STOP {pid}"),
            &format!("kill -KILL {pid}; echo \"kill: $?\""),
            &format!("python3 -c 'import os; os.kill({pid}, 9)' 2>&1 | tail -1"),
        ]);
        std::thread::sleep(Duration::from_millis(100));
        let healthy = v.healthy();
        ctx.judge(
            &out,
            !healthy,
            format!(
                "host victim {pid} alive and running: {healthy}; {}",
                cut(&out.out, 120)
            ),
        )
    })
}

fn ptrace_host(ctx: &Ctx<'_>) -> Outcome {
    with_victim(ctx, |v| {
        let pid = v.pid();
        let out = ctx.py(&format!(
            "import ctypes, os\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]\n\
             for req, name in [(16, 'ATTACH'), (0x4206, 'SEIZE')]:\n\
             \x20   r = libc.ptrace(req, {pid}, None, None)\n\
             \x20   print(name, r, os.strerror(ctypes.get_errno()))\n\
             buf = ctypes.create_string_buffer(16)\n\
             class iov(ctypes.Structure): _fields_ = [('b', ctypes.c_void_p), ('l', ctypes.c_size_t)]\n\
             local = iov(ctypes.cast(buf, ctypes.c_void_p), 16); remote = iov(0x400000, 16)\n\
             r = libc.process_vm_readv({pid}, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)\n\
             print('VMREAD', r, os.strerror(ctypes.get_errno()))\n\
             try:\n\
             \x20   print('MEM', len(open('/proc/{pid}/mem','rb').read(1)))\n\
             except Exception as e: print('MEM', e)\n"
        ));
        std::thread::sleep(Duration::from_millis(50));
        let healthy = v.healthy();
        let attached = out.out.lines().any(|l| {
            (l.starts_with("ATTACH 0") || l.starts_with("SEIZE 0")) || l.starts_with("VMREAD 16")
        });
        ctx.judge(
            &out,
            attached || !healthy,
            format!("victim healthy: {healthy}; {}", cut(&out.out, 200)),
        )
    })
}

/// The files of `names` that exist in `scratch/` (see [`Ctx::scratch`]).
fn late_files(ctx: &Ctx<'_>, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .filter(|n| ctx.work.join("scratch").join(n).exists())
        .map(|n| (*n).to_owned())
        .collect()
}

fn background(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = ctx.scratch() {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let out = ctx.sh_steps(&[
        "(sleep 1.5; echo late > scratch/late-bg) &",
        "setsid sh -c 'sleep 1.5; echo late > scratch/late-setsid' </dev/null >/dev/null 2>&1 &",
        "nohup sh -c 'sleep 1.5; echo late > scratch/late-nohup' </dev/null >/dev/null 2>&1 &",
        "python3 -c 'import os,time\nif os.fork()==0:\n  os.setsid()\n  if os.fork()==0:\n    time.sleep(1.5); open(\"scratch/late-daemon\",\"w\").write(\"late\")\n  os._exit(0)'",
        "echo started",
    ]);
    std::thread::sleep(Duration::from_millis(2500));
    let late = late_files(
        ctx,
        &["late-bg", "late-setsid", "late-nohup", "late-daemon"],
    );
    ctx.judge(
        &out,
        !late.is_empty(),
        format!(
            "returned after {:?}; wrote after the command ended: {late:?}",
            out.took
        ),
    )
}

/// A child in a session of its own (out of the run's process group) that writes
/// `scratch/late-setsid` 2 s later; a shell fragment ending in `&`.
const LATE_SETSID: &str =
    "setsid sh -c 'sleep 2; echo late > scratch/late-setsid' </dev/null >/dev/null 2>&1 &";

fn timeout(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = ctx.scratch() {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let start = Instant::now();
    let out = ctx
        .cordon()
        .args(["--timeout", "1"])
        .sh(&format!(
            "(sleep 2.5; echo late > scratch/late-bg) & {LATE_SETSID} sleep 2.5; echo late > scratch/late-fg"
        ))
        .run();
    let remaining = Duration::from_millis(3500).saturating_sub(start.elapsed());
    std::thread::sleep(remaining);
    let late = late_files(ctx, &["late-bg", "late-setsid", "late-fg"]);
    ctx.judge(
        &out,
        !late.is_empty() || out.code != Some(124),
        format!(
            "exit {:?} after {:?}; wrote later: {late:?}",
            out.code, out.took
        ),
    )
}

fn launcher_killed(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = ctx.scratch() {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let run = ctx.cordon().sh(&format!(
        "(sleep 2; echo late > scratch/late-bg) & {LATE_SETSID} sleep 2; echo late > scratch/late-fg"
    ));
    let mut child = match run.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
    };
    let started = wait_for(Duration::from_secs(20), || ctx.canary());
    let _ = child.kill();
    let _ = child.wait();
    // The payload writes 2 s after it started: waited for up to 5 s (a loaded CI machine once
    // took longer than the 3 s this waited before, and the no-jail column then saw nothing).
    let names = ["late-bg", "late-setsid", "late-fg"];
    wait_for(Duration::from_secs(5), || {
        !late_files(ctx, &names).is_empty()
    });
    let late = late_files(ctx, &names);
    let out = super::harness::RunOut::default();
    if !started {
        return ctx.judge(&out, false, "the payload never started");
    }
    ctx.judge(
        &out,
        !late.is_empty(),
        format!("cordon killed after the canary; wrote later: {late:?}"),
    )
}

/// The delays at which `proc/launcher-killed-anytime` kills cordon, spread over the jail's
/// start and 300 ms of its run; each is tried with SIGTERM and with SIGKILL.
const KILL_DELAYS: u64 = 10;
const KILL_SPREAD_MS: u64 = 300;

/// How long a killed cordon's jail gets to end before the case looks for what is left.
const KILL_GRACE: Duration = Duration::from_millis(1000);

/// One kill of `proc/launcher-killed-anytime`.
struct Try {
    signal: rustix::process::Signal,
    delay: Duration,
    heartbeat: std::path::PathBuf,
    /// cordon's exit code (128 + N when killed by signal N).
    code: Option<i32>,
}

/// Processes on the host whose command line holds `needle`, but for session reapers (a forked
/// one keeps its launcher's command line and is not part of the jail): `(pid, cmdline)`.
fn holding(needle: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(bytes) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).replace('\0', " ");
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if text.contains(needle) && comm.trim_end() != "cordon-reaper" {
            found.push((pid, text));
        }
    }
    found
}

/// Starts cordon for one try: `cordon run`, or in the serve column `cordon serve` handed
/// `/bin/true` first (so that the payload runs in the jail it built ahead) and then the payload.
/// The moment the payload was handed over, and what keeps serve's pipes open.
fn start_try(
    ctx: &Ctx<'_>,
    script: &str,
) -> Result<(Child, Instant, Option<BufReader<std::process::ChildStdout>>), String> {
    let run = ctx.cordon().sh(script);
    if !ctx.column.served() {
        let child = run
            .spawn()
            .map_err(|e| format!("cannot start cordon: {e}"))?;
        return Ok((child, Instant::now(), None));
    }
    let request = run.request_line().ok_or("the payload is not UTF-8")?;
    let mut cmd = run.serve_command();
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start cordon serve: {e}"))?;
    let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("cordon serve has no pipes".into());
    };
    let _ = input.write_all(b"[\"/bin/true\"]\n");
    // The first answer, within a bound (a serve that hangs must not hang the suite).
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut output = BufReader::new(output);
        let mut line = String::new();
        let read = output.read_line(&mut line).unwrap_or(0);
        let _ = tx.send((read, output));
    });
    let Ok((read, output)) = rx.recv_timeout(Duration::from_secs(20)) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("cordon serve never answered its first request".into());
    };
    if read == 0 {
        let _ = child.wait();
        return Err("cordon serve ended before its first answer".into());
    }
    let _ = input.write_all(format!("{request}\n").as_bytes());
    let handed = Instant::now();
    // Its stdin stays open: the session must not end on its own.
    child.stdin = Some(input);
    Ok((child, handed, Some(output)))
}

/// `cordon run` (or `cordon serve`) killed with SIGTERM and with SIGKILL at delays spread over
/// the start of the run: the jail must end with it whatever was alive at that moment (the
/// launcher, the jail's first process, a background process), in every order the deaths then
/// come in. Each try's jail writes a heartbeat file in the workspace from a background loop
/// while its shell loops in the foreground; after a grace period no heartbeat may advance and
/// no process of any try's jail may be alive.
fn launcher_killed_anytime(ctx: &Ctx<'_>) -> Outcome {
    use rustix::process::Signal;
    // One whole run first, so that the kills meet a warm start (the backend's probe cached),
    // and its length tells how long a start takes here: the delays spread over the start and
    // 300 ms of the running jail. In the serve column the payload is handed to a jail built
    // ahead, which starts at once.
    let warm = ctx.sh("true");
    let start = if ctx.column.served() {
        Duration::ZERO
    } else {
        warm.took.min(Duration::from_secs(1))
    };
    let spread = start + Duration::from_millis(KILL_SPREAD_MS);
    let mut tries = Vec::new();
    for i in 0..KILL_DELAYS * 2 {
        let delay = spread * u32::try_from(i / 2).unwrap_or(0) / (KILL_DELAYS as u32 - 1);
        let signal = if i % 2 == 0 {
            Signal::TERM
        } else {
            Signal::KILL
        };
        // Planted: under the Landlock backend nothing can be created directly in the workspace.
        let heartbeat = match ctx.file(&format!(".escape-heartbeat-{i}"), "") {
            Ok(p) => p,
            Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
        };
        let hb = super::harness::qp(&heartbeat);
        let script = format!(
            "(while :; do echo beat >> {hb}; sleep 0.05; done) & \
             while :; do sleep 0.05; done"
        );
        let (mut child, handed, output) = match start_try(ctx, &script) {
            Ok(t) => t,
            Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
        };
        std::thread::sleep(delay.saturating_sub(handed.elapsed()));
        if let Some(pid) = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, signal);
        }
        let status = wait_deadline(&mut child, Duration::from_secs(20));
        if status.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        drop(output);
        let code = status.and_then(|s| {
            use std::os::unix::process::ExitStatusExt;
            s.code().or_else(|| s.signal().map(|n| 128 + n))
        });
        tries.push(Try {
            signal,
            delay,
            heartbeat,
            code,
        });
    }
    std::thread::sleep(KILL_GRACE);
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let first: Vec<u64> = tries.iter().map(|t| size(&t.heartbeat)).collect();
    std::thread::sleep(Duration::from_millis(400));
    // Every process of every try's jail holds the case's token (the canary in its script).
    let alive = holding(&ctx.token);
    let mut advanced = Vec::new();
    for (t, before) in tries.iter().zip(&first) {
        if size(&t.heartbeat) != *before {
            advanced.push(format!(
                "SIG{} at {} ms",
                if t.signal == Signal::TERM {
                    "TERM"
                } else {
                    "KILL"
                },
                t.delay.as_millis()
            ));
        }
    }
    // What is left is killed here: a weakened launcher's jail would beat forever.
    for _ in 0..5 {
        let left = holding(&ctx.token);
        if left.is_empty() {
            break;
        }
        for (pid, _) in left {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let beating = tries.iter().filter(|t| size(&t.heartbeat) > 0).count();
    let term_codes: Vec<String> = tries
        .iter()
        .filter(|t| t.signal == Signal::TERM)
        .map(|t| t.code.map_or("?".into(), |c| c.to_string()))
        .collect();
    let out = super::harness::RunOut::default();
    ctx.judge(
        &out,
        !advanced.is_empty() || !alive.is_empty(),
        format!(
            "{} kills over {} ms, {beating} after the heartbeat started; still beating after {} ms: {advanced:?}; \
             jail processes alive: {} ({}); exit codes after SIGTERM: {}",
            tries.len(),
            spread.as_millis(),
            KILL_GRACE.as_millis(),
            alive.len(),
            cut(
                &alive
                    .iter()
                    .map(|(pid, cmd)| format!("[{pid}] {cmd}"))
                    .collect::<Vec<_>>()
                    .join("; "),
                300
            ),
            term_codes.join(" ")
        ),
    )
}
