//! Class 5: processes. The harness starts a host process as the column's user (so that only the
//! jail stands between the payload and it) and checks from the host that it survives.

use std::ffi::OsString;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::harness::{Ctx, cut, wait_for};
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
            "--timeout 1 with a foreground and background sleeper: 124, and nothing writes later",
            timeout,
        ),
        Case::attack(
            "proc/launcher-killed",
            c,
            "SIGKILL the cordon process mid-run: the jail dies with it, nothing writes later",
            launcher_killed,
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

fn timeout(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = ctx.scratch() {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let start = Instant::now();
    let out = ctx
        .cordon()
        .args(["--timeout", "1"])
        .sh("(sleep 2.5; echo late > scratch/late-bg) & sleep 2.5; echo late > scratch/late-fg")
        .run();
    let remaining = Duration::from_millis(3500).saturating_sub(start.elapsed());
    std::thread::sleep(remaining);
    let late = late_files(ctx, &["late-bg", "late-fg"]);
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
    let run = ctx
        .cordon()
        .sh("(sleep 2; echo late > scratch/late-bg) & sleep 2; echo late > scratch/late-fg");
    let mut child = match run.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
    };
    let started = wait_for(Duration::from_secs(20), || ctx.canary());
    let _ = child.kill();
    let _ = child.wait();
    std::thread::sleep(Duration::from_millis(3000));
    let late = late_files(ctx, &["late-bg", "late-fg"]);
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
