//! Class 7: the kernel surface. Each filtered system call is made with arguments that an
//! unfiltered kernel rejects harmlessly and *differently* (EFAULT, EBADF, EINVAL, ESRCH, ENOTTY):
//! only the filter's own answer (EPERM; ENOSYS for `clone3`) counts as blocked. A few calls are
//! refused by the kernel itself with EPERM before it looks at anything (`pivot_root`, `fsopen`,
//! `reboot` …); for those EPERM is the best evidence there is, and the detail says so.

use super::harness::{Ctx, cut};
use super::matrix::Outcome;
use super::{Case, Class, Users};

pub fn cases() -> Vec<Case> {
    let c = Class::Kernel;
    vec![
        Case::attack(
            "kernel/mount-api",
            c,
            "mount, umount2, pivot_root, chroot and the new mount API (open_tree … open_tree_attr)",
            |ctx| syscalls(ctx, MOUNT),
        ),
        Case::attack(
            "kernel/namespaces",
            c,
            "unshare, setns, clone with each CLONE_NEW* flag, clone3 (ENOSYS)",
            |ctx| syscalls(ctx, NAMESPACES),
        ),
        Case::attack(
            "kernel/other-memory",
            c,
            "ptrace, process_vm_readv, process_vm_writev",
            |ctx| syscalls(ctx, MEMORY),
        ),
        Case::attack(
            "kernel/bpf-perf-uffd-iouring",
            c,
            "bpf, perf_event_open, userfaultfd, io_uring_setup/enter/register",
            |ctx| syscalls(ctx, ATTACK_SURFACE),
        ),
        Case::attack(
            "kernel/keyrings",
            c,
            "add_key, request_key, keyctl",
            |ctx| syscalls(ctx, KEYRINGS),
        ),
        Case::attack(
            "kernel/modules-kexec",
            c,
            "init_module, finit_module, delete_module, kexec_load, kexec_file_load",
            |ctx| syscalls(ctx, MODULES),
        )
        .no_jail_impossible_where(
            Users::Unprivileged,
            modules_and_kexec,
            "on a kernel with module and kexec support, each of these calls answers EPERM to a \
             caller without CAP_SYS_MODULE or CAP_SYS_BOOT before it looks at its arguments: \
             the same answer as the filter's (where the kernel lacks either, ENOSYS shows the \
             call got through)",
        ),
        Case::attack(
            "kernel/file-handles",
            c,
            "name_to_handle_at, open_by_handle_at",
            |ctx| syscalls(ctx, HANDLES),
        ),
        Case::attack(
            "kernel/host-admin",
            c,
            "swapon, swapoff, reboot, acct, syslog, iopl, ioperm",
            |ctx| syscalls(ctx, ADMIN),
        ),
        Case::attack(
            "kernel/tiocsti",
            c,
            "TIOCSTI (also with high bits set in the request) and TIOCLINUX on a real pty and on stdin",
            tiocsti,
        ),
        Case::attack(
            "kernel/foreign-abi",
            c,
            "a call through the x32 ABI (and through int 0x80, when gcc exists) kills the process",
            foreign_abi,
        ),
        Case::attack(
            "kernel/nested-userns",
            c,
            "`unshare -U -r`, `unshare -n`, `unshare -m` from the payload",
            nested_userns,
        ),
        Case::attack(
            "kernel/mount-commands",
            c,
            "`mount -t tmpfs`, a bind mount of /, `mount -o remount,rw /`",
            mount_commands,
        )
        .no_jail_unsafe(
            Users::Root,
            "as root with no jail it would mount a tmpfs and bind the host's / into the case \
             directory (whose removal would then descend into the whole host filesystem) and \
             remount the host's / read-write",
        ),
        Case::attack(
            "kernel/setuid-create",
            c,
            "leave a set-user-ID or set-group-ID file in the workspace for the host (chmod, open, mknod, install)",
            setuid_create,
        ),
        Case::attack(
            "kernel/tunables-and-devices",
            c,
            "open (never write) kernel tunables, sysrq, /dev/mem, /dev/kmsg and host disks for writing",
            tunables,
        )
        .no_jail_unsafe(
            Users::Root,
            "as root with no jail every open succeeds on the real host: the disks, /dev/mem and \
             the kernel tunables opened for writing (closing a disk opened for writing makes \
             udev re-probe it)",
        )
        .no_jail_impossible(
            Users::Unprivileged,
            "the host's modes refuse an unprivileged user write access to every tunable and \
             device tried (all root-owned, not writable by others) before any jail is involved",
        ),
        Case::attack(
            "kernel/caps-and-nnp",
            c,
            "/proc/self/status: every capability set zero, NoNewPrivs 1, Seccomp 2",
            caps,
        )
        .landlock_limit(
            "without a user namespace an unprivileged user cannot clear its capability bounding \
             set (that needs CAP_SETPCAP); its effective, permitted and ambient sets are empty and \
             no-new-privileges stops setuid and file capabilities from granting any (root's \
             bounding set is cleared)",
        ),
        Case::attack(
            "kernel/setuid",
            c,
            "the set-user-ID `su` runs with no uid and no capability gained (host control: it gains root there)",
            setuid,
        ),
    ]
}

/// Whether the kernel has both loadable modules and kexec (each missing one answers ENOSYS).
fn modules_and_kexec() -> bool {
    std::path::Path::new("/proc/modules").exists()
        && std::path::Path::new("/sys/kernel/kexec_loaded").exists()
}

const B: i64 = 1; // an address that is never mapped
const TH: i64 = 0x10000; // CLONE_THREAD without CLONE_SIGHAND: EINVAL if the call got through

/// (name, number on x86_64, arguments, the kernel itself answers EPERM first).
type Call = (&'static str, i64, &'static [i64], bool);

const MOUNT: &[Call] = &[
    ("mount", 165, &[B, B, B, 0, 0], false),
    ("umount2", 166, &[0, 0xffff_ffff], false),
    ("pivot_root", 155, &[B, B], true),
    ("chroot", 161, &[B], false),
    ("open_tree", 428, &[-1, B, 0xffff_ffff], false),
    ("move_mount", 429, &[-1, B, -1, B, 0xffff_ffff], true),
    ("fsopen", 430, &[B, 0xffff_ffff], true),
    ("fsconfig", 431, &[-1, 0xffff, 0, 0, 0], false),
    ("fsmount", 432, &[-1, 0xffff_ffff, 0], true),
    ("fspick", 433, &[-1, B, 0xffff_ffff], true),
    ("mount_setattr", 442, &[-1, B, 0xffff_ffff, 0, 0], false),
    ("open_tree_attr", 467, &[-1, B, 0xffff_ffff, 0, 0], false),
];
const NAMESPACES: &[Call] = &[
    ("unshare", 272, &[1], false),
    ("setns", 308, &[-1, 0], false),
    (
        "clone(CLONE_NEWNS)",
        56,
        &[0x0002_0000 | TH, 0, 0, 0, 0],
        false,
    ),
    (
        "clone(CLONE_NEWCGROUP)",
        56,
        &[0x0200_0000 | TH, 0, 0, 0, 0],
        false,
    ),
    (
        "clone(CLONE_NEWUTS)",
        56,
        &[0x0400_0000 | TH, 0, 0, 0, 0],
        false,
    ),
    (
        "clone(CLONE_NEWIPC)",
        56,
        &[0x0800_0000 | TH, 0, 0, 0, 0],
        false,
    ),
    (
        "clone(CLONE_NEWUSER)",
        56,
        &[0x1000_0000 | TH, 0, 0, 0, 0],
        false,
    ),
    (
        "clone(CLONE_NEWPID)",
        56,
        &[0x2000_0000 | TH, 0, 0, 0, 0],
        false,
    ),
    (
        "clone(CLONE_NEWNET)",
        56,
        &[0x4000_0000 | TH, 0, 0, 0, 0],
        false,
    ),
    ("clone3", 435, &[0, 0], false),
];
const MEMORY: &[Call] = &[
    ("ptrace", 101, &[0xffff, 999_999, 0, 0], false),
    ("process_vm_readv", 310, &[0, 0, 0, 0, 0, 1], false),
    ("process_vm_writev", 311, &[0, 0, 0, 0, 0, 1], false),
];
const ATTACK_SURFACE: &[Call] = &[
    ("bpf", 321, &[0xffff, 0, 0], false),
    ("perf_event_open", 298, &[B, 0, -1, -1, 0], false),
    ("userfaultfd", 323, &[0xffff_ffff], false),
    ("io_uring_setup", 425, &[1, B], false),
    ("io_uring_enter", 426, &[-1, 0, 0, 0, 0, 0], false),
    ("io_uring_register", 427, &[-1, 0, 0, 0], false),
];
const KEYRINGS: &[Call] = &[
    ("add_key", 248, &[B, B, 0, 0, 0], false),
    ("request_key", 249, &[B, B, 0, 0], false),
    ("keyctl", 250, &[0xffff, 0, 0, 0, 0], false),
];
const MODULES: &[Call] = &[
    ("init_module", 175, &[0, 0, B], false),
    ("finit_module", 313, &[-1, B, 0xffff_ffff], false),
    ("delete_module", 176, &[B, 0xffff_ffff], false),
    ("kexec_load", 246, &[0, 0, 0, 0xffff_ffff], false),
    ("kexec_file_load", 320, &[-1, -1, 0, B, 0xffff_ffff], false),
];
const HANDLES: &[Call] = &[
    ("name_to_handle_at", 303, &[-1, B, B, B, 0xffff_ffff], false),
    ("open_by_handle_at", 304, &[-1, B, 0xffff_ffff], false),
];
const ADMIN: &[Call] = &[
    ("swapon", 167, &[B, 0xffff_ffff], false),
    ("swapoff", 168, &[B], true),
    ("reboot", 169, &[0, 0, 0, 0], true),
    ("acct", 163, &[B], true),
    ("syslog", 103, &[0xffff, 0, 0], true),
    ("iopl", 172, &[0xffff], false),
    ("ioperm", 173, &[0xff_ffff_ffff, 1, 1], false),
];

const PY_SYSCALL: &str = "import ctypes, os, sys\n\
libc = ctypes.CDLL(None, use_errno=True)\n\
libc.syscall.restype = ctypes.c_long\n\
def call(name, nr, *args):\n\
\x20   ctypes.set_errno(0)\n\
\x20   r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a & 0xffffffffffffffff) for a in args])\n\
\x20   e = ctypes.get_errno()\n\
\x20   print('CALL', name, r, e if r < 0 else 0, os.strerror(e) if r < 0 else 'ok')\n\
\x20   sys.stdout.flush()\n";

fn syscalls(ctx: &Ctx<'_>, calls: &[Call]) -> Outcome {
    if !cfg!(target_arch = "x86_64") {
        return Outcome::new(
            super::Verdict::Unavailable,
            "the syscall numbers here are x86_64's",
        );
    }
    let mut code = PY_SYSCALL.to_owned();
    for (name, nr, args, _) in calls {
        let args: Vec<String> = args.iter().map(i64::to_string).collect();
        code.push_str(&format!("call({name:?}, {nr}, {})\n", args.join(", ")));
    }
    let out = ctx.py(&code);
    let mut through = Vec::new();
    let mut kernel_eperm = Vec::new();
    let mut answered = 0;
    for (name, _, _, kernel_refuses) in calls {
        let line = out.out.lines().find(|l| {
            l.strip_prefix("CALL ")
                .is_some_and(|r| r.starts_with(&format!("{name} ")))
        });
        let Some(line) = line else { continue };
        answered += 1;
        let words: Vec<&str> = line.split_whitespace().collect();
        let errno: i64 = words.get(3).and_then(|w| w.parse().ok()).unwrap_or(-1);
        let expected = if *name == "clone3" { 38 } else { 1 };
        if errno != expected {
            through.push(format!(
                "{name}: {}",
                words.get(4..).unwrap_or_default().join(" ")
            ));
        } else if *kernel_refuses {
            kernel_eperm.push(*name);
        }
    }
    if answered < calls.len() && through.is_empty() {
        through.push(format!(
            "only {answered} of {} calls answered (the payload died?)",
            calls.len()
        ));
    }
    let mut detail = if through.is_empty() {
        format!("all {answered} refused by the filter")
    } else {
        format!("got through the filter: {through:?}")
    };
    if !kernel_eperm.is_empty() {
        detail.push_str(&format!(
            " ({kernel_eperm:?} answer EPERM unfiltered too: not distinguishable)"
        ));
    }
    ctx.judge(&out, !through.is_empty(), detail)
}

fn tiocsti(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.py(
        "import ctypes, os\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.syscall.restype = ctypes.c_long\n\
         c = ctypes.c_char(b'x')\n\
         fds = [('stdin', 0)]\n\
         try:\n\
         \x20   m, s = os.openpty(); fds.append(('pty', s))\n\
         except Exception as e: print('no pty', e)\n\
         for fname, fd in fds:\n\
         \x20   for name, req in [('TIOCSTI', 0x5412), ('TIOCSTI|hi', 0x100005412), ('TIOCSTI|hi2', 0xffffffff00005412), ('TIOCLINUX', 0x541c)]:\n\
         \x20       ctypes.set_errno(0)\n\
         \x20       r = libc.syscall(ctypes.c_long(16), ctypes.c_long(fd), ctypes.c_ulong(req), ctypes.byref(c))\n\
         \x20       e = ctypes.get_errno()\n\
         \x20       print('IOCTL', fname, name, r, e)\n",
    );
    let through: Vec<&str> = out
        .out
        .lines()
        .filter(|l| l.starts_with("IOCTL"))
        .filter(|l| !l.ends_with(" -1 1"))
        .collect();
    let n = out.out.lines().filter(|l| l.starts_with("IOCTL")).count();
    ctx.judge(
        &out,
        !through.is_empty() || n < 4,
        format!("{n} ioctls made; not refused with EPERM: {through:?}"),
    )
}

fn foreign_abi(ctx: &Ctx<'_>) -> Outcome {
    if !cfg!(target_arch = "x86_64") {
        return Outcome::new(super::Verdict::Unavailable, "x86_64 only");
    }
    let c = "int main(void){ long r; __asm__ volatile(\"int $0x80\" : \"=a\"(r) : \"a\"(20L)); return r > 0 ? 0 : 3; }\n";
    if let Err(e) = ctx.file("int80.c", c).and_then(|_| ctx.scratch()) {
        return Outcome::new(super::Verdict::Inconclusive, e);
    }
    let out = ctx.sh_steps(&[
        "python3 -c 'import ctypes; ctypes.CDLL(None).syscall(0x40000000 | 39); print(\"x32 survived\")'; \
         echo \"x32 exit $?\"",
        "if command -v gcc >/dev/null && gcc -o scratch/int80 int80.c 2>/dev/null; then ./scratch/int80; echo \"int80 exit $?\"; fi",
    ]);
    let x32_killed = out.out.contains("x32 exit 159");
    let int80 = out.out.lines().find_map(|l| l.strip_prefix("int80 exit "));
    let int80_ok = int80.is_none_or(|c| c.trim() == "159");
    ctx.judge(
        &out,
        !x32_killed || !int80_ok,
        format!(
            "x32 call killed by SIGSYS: {x32_killed}; int 0x80: {}",
            int80.map_or("not tried (no gcc)".to_owned(), |c| format!("exit {c}"))
        ),
    )
}

fn nested_userns(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.sh(
        "for f in '-U -r' '-n' '-m' '-p -f' '-U -r -n -m'; do unshare $f sh -c 'echo NESTED' 2>&1; done; true",
    );
    let nested = out.out.contains("NESTED");
    ctx.judge(
        &out,
        nested,
        format!("a nested namespace ran: {nested}; {}", cut(&out.out, 200)),
    )
}

fn mount_commands(ctx: &Ctx<'_>) -> Outcome {
    let probe = ctx.outside.join("after-remount");
    if let Err(e) = ctx.scratch() {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let out = ctx.sh_steps(&[
        "mkdir -p scratch/mnt",
        "mount -t tmpfs none scratch/mnt 2>&1 && echo MOUNTED-tmpfs",
        "mount --bind / scratch/mnt 2>&1 && echo MOUNTED-bind",
        "mount -o remount,rw / 2>&1 && echo MOUNTED-remount",
        &format!(
            "touch {} 2>/dev/null && echo WROTE-outside",
            super::harness::qp(&probe)
        ),
    ]);
    let mounted: Vec<&str> = out
        .out
        .lines()
        .filter(|l| l.starts_with("MOUNTED") || l.starts_with("WROTE"))
        .collect();
    ctx.judge(&out, !mounted.is_empty(), format!("succeeded: {mounted:?}"))
}

fn caps(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.sh("grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status");
    let field = |name: &str| {
        out.out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(|v| v.trim().to_owned())
    };
    let mut bad = Vec::new();
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        match field(cap) {
            Some(v) if v.chars().all(|c| c == '0') => {}
            other => bad.push(format!("{cap}={other:?}")),
        }
    }
    if field("NoNewPrivs").as_deref() != Some("1") {
        bad.push(format!("NoNewPrivs={:?}", field("NoNewPrivs")));
    }
    if field("Seccomp").as_deref() != Some("2") {
        bad.push(format!("Seccomp={:?}", field("Seccomp")));
    }
    ctx.judge(
        &out,
        !bad.is_empty(),
        if bad.is_empty() {
            "all capability sets 0, NoNewPrivs 1, Seccomp 2".into()
        } else {
            format!("{bad:?}")
        },
    )
}

/// Starts `su` (set-user-ID root; it waits for a password on a pipe) and reports the
/// credentials it runs with.
const SU_PROBE: &str = "import subprocess, time\n\
p = subprocess.Popen(['/usr/bin/su', '-c', 'true', 'root'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n\
seen = None\n\
deadline = time.time() + 3\n\
while time.time() < deadline and seen is None:\n\
\x20   try:\n\
\x20       st = open('/proc/%d/status' % p.pid).read()\n\
\x20   except OSError:\n\
\x20       break\n\
\x20   if 'Name:\\tsu\\n' in st:\n\
\x20       time.sleep(0.05)\n\
\x20       try:\n\
\x20           st = open('/proc/%d/status' % p.pid).read()\n\
\x20       except OSError: pass\n\
\x20       seen = [l for l in st.splitlines() if l.startswith(('Uid:', 'CapEff:'))]\n\
p.kill(); p.communicate()\n\
print('SU', seen)\n";

/// (effective uid, effective capabilities are all zero) from the probe's output.
fn su_seen(text: &str) -> Option<(u32, bool)> {
    let line = text.lines().find_map(|l| l.strip_prefix("SU "))?;
    let euid = line
        .split("Uid:\\t")
        .nth(1)?
        .split("\\t")
        .nth(1)?
        .parse()
        .ok()?;
    let caps = line.split("CapEff:\\t").nth(1)?.get(..16)?;
    Some((euid, caps.chars().all(|c| c == '0')))
}

fn setuid(ctx: &Ctx<'_>) -> Outcome {
    if !std::path::Path::new("/usr/bin/su").exists() {
        return Outcome::new(super::Verdict::Unavailable, "no /usr/bin/su on this host");
    }
    // Control on the host: the same probe sees su gain root there.
    let script = match ctx.file("su-probe.py", SU_PROBE) {
        Ok(p) => p,
        Err(e) => return Outcome::new(super::Verdict::Inconclusive, e),
    };
    let mut host = ctx.as_user(vec![ctx.python().into(), script.clone().into_os_string()]);
    host.env_clear()
        .env("PATH", super::harness::STD_PATH)
        .current_dir(&ctx.work);
    let host_seen = host
        .output()
        .ok()
        .and_then(|o| su_seen(&String::from_utf8_lossy(&o.stdout)));
    let out = ctx.sh(&format!(
        "echo \"caller $(id -u)\"; exec {} {}",
        ctx.python(),
        super::harness::qp(&script)
    ));
    let caller: u32 = out
        .out
        .lines()
        .find_map(|l| l.strip_prefix("caller "))
        .and_then(|u| u.trim().parse().ok())
        .unwrap_or(u32::MAX);
    let jail_seen = su_seen(&out.out);
    let host_gains = host_seen.is_some_and(|(euid, no_caps)| euid != ctx.ids.uid || !no_caps);
    let Some((euid, no_caps)) = jail_seen else {
        return Outcome::new(
            super::Verdict::Inconclusive,
            format!(
                "su was not seen running in the jail: {}",
                cut(&out.all(), 200)
            ),
        );
    };
    if !host_gains {
        return Outcome::new(
            super::Verdict::Inconclusive,
            format!(
                "control: su gains nothing even on the host ({host_seen:?}): the probe proves nothing"
            ),
        );
    }
    ctx.judge(
        &out,
        euid != caller || !no_caps,
        format!(
            "on the host su runs with {host_seen:?} (euid, caps all zero); in the jail with euid {euid}, caps all zero {no_caps} (caller {caller})"
        ),
    )
}

fn tunables(ctx: &Ctx<'_>) -> Outcome {
    // Opening for writing is the evidence; the payload closes at once and never writes.
    let mut disks: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| format!("/dev/{}", e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    disks.sort();
    disks.truncate(8);
    let mut targets = vec![
        "/proc/sys/kernel/core_pattern".to_owned(),
        "/proc/sys/kernel/hostname".to_owned(),
        "/proc/sys/vm/drop_caches".to_owned(),
        "/proc/sysrq-trigger".to_owned(),
        "/sys/kernel/mm/transparent_hugepage/enabled".to_owned(),
        "/dev/mem".to_owned(),
        "/dev/kmem".to_owned(),
        "/dev/port".to_owned(),
        "/dev/kmsg".to_owned(),
    ];
    targets.extend(disks);
    let irq = std::fs::read_dir("/proc/irq")
        .ok()
        .and_then(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("smp_affinity"))
                .find(|p| p.exists())
        })
        .map(|p| p.display().to_string());
    targets.extend(irq);
    targets.push("/proc/sys/kernel/modprobe".into());
    let out = ctx.py(&format!(
        "import os\n\
         for p in {targets:?}:\n\
         \x20   try:\n\
         \x20       fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK); os.close(fd); print('OPENED', p)\n\
         \x20   except OSError as e: print(p, e.strerror)\n"
    ));
    let opened: Vec<&str> = out
        .out
        .lines()
        .filter_map(|l| l.strip_prefix("OPENED "))
        .collect();
    ctx.judge(
        &out,
        !opened.is_empty(),
        format!(
            "opened for writing: {opened:?} (of {} tried)",
            targets.len()
        ),
    )
}

fn setuid_create(ctx: &Ctx<'_>) -> Outcome {
    use std::os::unix::fs::PermissionsExt;
    // Harmless programs only (`true`), and the case directory is removed afterwards.
    let scratch = match ctx.scratch() {
        Ok(d) => d,
        Err(e) => return Outcome::new(super::Verdict::Inconclusive, e),
    };
    let out = ctx.sh_steps(&[
        "cd scratch || exit 97",
        "cp /bin/true suid-chmod",
        "chmod 4755 suid-chmod",
        "cp /bin/true sgid-chmod",
        "chmod 2755 sgid-chmod",
        "install -m 4755 /bin/true suid-install 2>/dev/null",
        "python3 -c 'import os\nfd = os.open(\"suid-open\", os.O_CREAT | os.O_WRONLY, 0o4755); os.close(fd)\n\
try:\n  os.mknod(\"suid-mknod\", 0o104755)\nexcept OSError: pass\n\
os.chmod(\"suid-chmod\", 0o4755)'",
        "ls -l",
    ]);
    let mut marked: Vec<String> = Vec::new();
    if let Ok(dir) = std::fs::read_dir(&scratch) {
        for e in dir.flatten() {
            if let Ok(m) = e.metadata()
                && m.permissions().mode() & 0o6000 != 0
            {
                marked.push(format!(
                    "{} {:o}",
                    e.file_name().to_string_lossy(),
                    m.permissions().mode() & 0o7777
                ));
                // Defuse it at once.
                let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644));
            }
        }
    }
    marked.sort();
    ctx.judge(
        &out,
        !marked.is_empty(),
        format!(
            "set-ID files left on the host (owner uid {}): {marked:?}",
            ctx.ids.uid
        ),
    )
}
