//! The system calls the cases make: raw calls with harmless arguments, and the ordinary work
//! (files, pipes, fork, threads, exec) that must keep working under the filter.

use std::io::{Read, Write};
use std::process::Command;

use libc::{c_long, c_ulong};

const CLONE_THREAD: c_ulong = 0x0001_0000;

/// What a child saw. Probes report success as `Ok` and any surprise as `Errno`; -1 stands for a
/// surprise with no errno (wrong data read back, a child that exited badly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok(i64),
    Errno(i32),
    Killed(i32),
}

pub fn raw(nr: c_long, args: [c_ulong; 6]) -> Outcome {
    // SAFETY: every probe passes arguments the kernel validates or copies with fault checks
    // (bad pointers give EFAULT, not a write into this process); no call here hands the kernel
    // memory it may write to later.
    let ret = unsafe { libc::syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]) };
    if ret == -1 {
        Outcome::Errno(last_errno())
    } else {
        Outcome::Ok(ret)
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn io_errno(err: &std::io::Error) -> Outcome {
    Outcome::Errno(err.raw_os_error().unwrap_or(-1))
}

/// A socket call that closes what it opened.
pub fn socket(domain: i32) -> Outcome {
    let outcome = raw(
        libc::SYS_socket,
        [domain as c_ulong, libc::SOCK_STREAM as c_ulong, 0, 0, 0, 0],
    );
    if let Outcome::Ok(fd) = outcome {
        // SAFETY: fd was just returned by socket(2) and is owned here.
        unsafe { libc::close(fd as i32) };
        return Outcome::Ok(0);
    }
    outcome
}

/// Reaps `pid` and returns its exit code.
fn wait_exit_code(pid: libc::pid_t) -> Outcome {
    let mut status = 0;
    // SAFETY: pid is our own child; status is a valid out-pointer.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Outcome::Errno(last_errno());
    }
    if libc::WIFEXITED(status) {
        Outcome::Ok(libc::WEXITSTATUS(status).into())
    } else {
        Outcome::Errno(-1)
    }
}

/// Creates a private System V object with `get` and, when that works, removes it again with
/// `ctl(id, IPC_RMID)`, so the unfiltered run leaves nothing on the host.
pub fn ipc_private(get: c_long, args: [c_ulong; 6], ctl: c_long) -> Outcome {
    let outcome = raw(get, args);
    if let Outcome::Ok(id) = outcome {
        let _ = raw(ctl, [id as c_ulong, libc::IPC_RMID as c_ulong, 0, 0, 0, 0]);
    }
    outcome
}

/// Runs `probe` in a forked child (for calls that would change this process's session or group,
/// which the parent's wait relies on), reporting 0 for success and the errno otherwise.
pub fn in_child(probe: fn() -> Outcome) -> Outcome {
    // SAFETY: the test child is single-threaded; the forked child only makes raw system calls
    // and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = match probe() {
            Outcome::Ok(_) => 0,
            Outcome::Errno(e) => e,
            Outcome::Killed(_) => 255,
        };
        // SAFETY: ends the forked child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    match wait_exit_code(pid) {
        Outcome::Ok(0) => Outcome::Ok(0),
        Outcome::Ok(code) => Outcome::Errno(code as i32),
        other => other,
    }
}

pub fn clone_flags(flags: c_ulong) -> Outcome {
    raw(libc::SYS_clone, [flags | CLONE_THREAD, 0, 0, 0, 0, 0])
}

pub fn temp_file() -> Outcome {
    let path = std::env::temp_dir().join(format!("cordon-seccomp-kernel-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&path)?;
        file.write_all(b"cordon")?;
        drop(file);
        let mut text = String::new();
        std::fs::File::open(&path)?.read_to_string(&mut text)?;
        std::fs::remove_file(&path)?;
        Ok(text)
    })();
    match result {
        Ok(text) if text == "cordon" => Outcome::Ok(0),
        Ok(_) => Outcome::Errno(-1),
        Err(err) => io_errno(&err),
    }
}

pub fn pipe() -> Outcome {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe(2) writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Outcome::Errno(last_errno());
    }
    round_trip(fds[1], fds[0])
}

pub fn socketpair() -> Outcome {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors socketpair(2) writes.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) } != 0 {
        return Outcome::Errno(last_errno());
    }
    round_trip(fds[0], fds[1])
}

/// Writes a byte into `tx`, reads it from `rx`, closes both.
fn round_trip(tx: i32, rx: i32) -> Outcome {
    let mut byte = [0u8];
    // SAFETY: tx and rx are open descriptors owned here; the buffers are valid for one byte.
    let moved = unsafe {
        libc::write(tx, b"x".as_ptr().cast(), 1) == 1
            && libc::read(rx, byte.as_mut_ptr().cast(), 1) == 1
    };
    let outcome = if moved && byte == *b"x" {
        Outcome::Ok(0)
    } else {
        Outcome::Errno(last_errno())
    };
    // SAFETY: both descriptors are owned here and not used again.
    unsafe {
        libc::close(tx);
        libc::close(rx);
    }
    outcome
}

pub fn fork() -> Outcome {
    // SAFETY: this process is single-threaded; the child only calls _exit.
    match unsafe { libc::fork() } {
        -1 => Outcome::Errno(last_errno()),
        // SAFETY: _exit is async-signal-safe and ends the child at once.
        0 => unsafe { libc::_exit(7) },
        pid => expect_code(wait_exit_code(pid), 7),
    }
}

pub fn plain_clone() -> Outcome {
    // A fork through the raw call: no namespace flag, exit signal SIGCHLD.
    match raw(libc::SYS_clone, [libc::SIGCHLD as c_ulong, 0, 0, 0, 0, 0]) {
        // SAFETY: the child runs on a copy of this single-threaded process and only calls _exit.
        Outcome::Ok(0) => unsafe { libc::_exit(7) },
        Outcome::Ok(pid) => expect_code(wait_exit_code(pid as libc::pid_t), 7),
        other => other,
    }
}

fn expect_code(outcome: Outcome, code: i64) -> Outcome {
    match outcome {
        Outcome::Ok(got) if got == code => Outcome::Ok(0),
        Outcome::Ok(got) => Outcome::Errno(-(got as i32)),
        other => other,
    }
}

pub fn thread() -> Outcome {
    match std::thread::Builder::new()
        .spawn(|| 42)
        .map(|handle| handle.join())
    {
        Ok(Ok(42)) => Outcome::Ok(42),
        Ok(_) => Outcome::Errno(-1),
        Err(err) => io_errno(&err),
    }
}

pub fn exec_true() -> Outcome {
    match Command::new("true").status() {
        Ok(status) if status.success() => Outcome::Ok(0),
        Ok(_) => Outcome::Errno(-1),
        Err(err) => io_errno(&err),
    }
}

#[cfg(target_arch = "x86_64")]
pub fn int80_getpid() -> Outcome {
    let ret: i32;
    // SAFETY: i386 getpid (20) through the compat entry takes no arguments and touches no memory;
    // r8-r11 are declared clobbered because old kernels zeroed them on this path.
    unsafe {
        std::arch::asm!(
            "int 0x80",
            inlateout("eax") 20 => ret,
            lateout("r8") _, lateout("r9") _, lateout("r10") _, lateout("r11") _,
        );
    }
    if ret < 0 {
        Outcome::Errno(-ret)
    } else {
        Outcome::Ok(ret.into())
    }
}
