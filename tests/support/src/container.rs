//! What a container does to namespaces, for the tests that put cordon in one: a seccomp filter
//! that answers `unshare` and `clone` with a namespace flag `EPERM` and `clone3` `ENOSYS`, as
//! Docker's default profile does for a process without `CAP_SYS_ADMIN`, and the outer
//! bubblewrap that applies it to a command (`/usr/bin/bwrap --dev-bind / / --seccomp FD`).

use std::path::Path;
use std::process::Command;

/// The namespace flags Docker's default profile refuses to `clone` and `unshare`.
pub const NAMESPACE_FLAGS: u32 = 0x7E02_0000;

/// One classic BPF instruction, as the kernel reads it (`struct sock_filter`).
fn ins(code: u16, jt: u8, jf: u8, k: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..2].copy_from_slice(&code.to_ne_bytes());
    b[2] = jt;
    b[3] = jf;
    b[4..].copy_from_slice(&k.to_ne_bytes());
    b
}

/// The container's filter for this machine's architecture; `None` for one it does not know
/// (x86_64 and aarch64 only).
pub fn filter() -> Option<Vec<u8>> {
    // (audit arch, clone, unshare, clone3) per architecture.
    let (arch, clone, unshare, clone3) = if cfg!(target_arch = "x86_64") {
        (0xC000_003Eu32, 56u32, 272u32, 435u32)
    } else if cfg!(target_arch = "aarch64") {
        (0xC000_00B7, 220, 97, 435)
    } else {
        return None;
    };
    const LD_W_ABS: u16 = 0x20;
    const JEQ: u16 = 0x15;
    const JSET: u16 = 0x45;
    const RET: u16 = 0x06;
    const ALLOW: u32 = 0x7FFF_0000;
    const ERRNO: u32 = 0x0005_0000;
    let prog = [
        ins(LD_W_ABS, 0, 0, 4),           // 0: arch
        ins(JEQ, 0, 8, arch),             // 1: another arch: allow (10)
        ins(LD_W_ABS, 0, 0, 0),           // 2: nr
        ins(JEQ, 0, 1, clone3),           // 3
        ins(RET, 0, 0, ERRNO | 38),       // 4: clone3 → ENOSYS
        ins(JEQ, 1, 0, unshare),          // 5: unshare → 7
        ins(JEQ, 0, 3, clone),            // 6: clone → 7, else allow (10)
        ins(LD_W_ABS, 0, 0, 16),          // 7: args[0], low half
        ins(JSET, 0, 1, NAMESPACE_FLAGS), // 8
        ins(RET, 0, 0, ERRNO | 1),        // 9: EPERM
        ins(RET, 0, 0, ALLOW),            // 10
    ];
    Some(prog.concat())
}

/// A command that runs the arguments added to it inside the container: the outer bubblewrap,
/// binding the whole host, with the filter read from the file `filter`.
pub fn wrap(filter: &Path) -> Command {
    let mut outer = Command::new("/bin/sh");
    outer.args(wrap_args(filter));
    outer
}

/// [`wrap`]'s arguments after `/bin/sh`: the command to run inside follows them.
pub fn wrap_args(filter: &Path) -> Vec<std::ffi::OsString> {
    vec![
        "-c".into(),
        "F=$1; shift; exec /usr/bin/bwrap --dev-bind / / --seccomp 3 -- \"$@\" 3<\"$F\"".into(),
        "sh".into(),
        filter.as_os_str().to_owned(),
    ]
}

/// What `cordon run` prints when `--backend auto` fell back to the Landlock backend.
pub const FELL_BACK: &str = "landlock enforces because no earlier backend could";
