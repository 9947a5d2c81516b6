//! The supervisor against real calls: a shell under a supervised seccomp filter (no Landlock:
//! the supervisor alone decides) creates, renames, links and changes metadata, and each
//! answer is compared with what the rules say. Every refused case is checked to have had no
//! effect on disk, and the same script run without the filter is checked to do what is refused
//! (so a case that fails for another reason cannot pass).

#![allow(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cordon_seccomp::{FilterSpec, compile};
use cordon_supervisor::{Rules, install_with_listener, spawn, take_listener};

fn socketpair() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    assert_eq!(rc, 0, "socketpair: {}", std::io::Error::last_os_error());
    // SAFETY: fresh descriptors owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// In the child, between fork and exec, as the launcher's child does: no capability (a root
/// test run keeps its uid only), no new privileges, the filter with its listener handed over.
fn install(command: &mut Command, filter: Vec<u8>, sock: RawFd) {
    let program: Vec<libc::sock_filter> = filter
        .chunks_exact(8)
        .map(|c| libc::sock_filter {
            code: u16::from_ne_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect();
    // SAFETY: raw calls on memory prepared before the fork; async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            let mut header = [0x2008_0522u32, 0];
            let data = [0u32; 6];
            if libc::syscall(libc::SYS_capset, header.as_mut_ptr(), data.as_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            install_with_listener(&program, sock)
        });
    }
}

struct Run {
    out: String,
    report: cordon_supervisor::Report,
}

/// Runs `script` with `sh` in `dir`, supervised by `rules` (or not at all).
fn run(dir: &Path, script: &str, rules: Option<Rules>) -> Run {
    run_filtered(dir, script, rules, false)
}

/// [`run`], the filter denying the network when `deny_network` (the supervisor then judges
/// addresses).
fn run_filtered(dir: &Path, script: &str, rules: Option<Rules>, deny_network: bool) -> Run {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let Some(rules) = rules else {
        let out = command.output().unwrap();
        return Run {
            out: String::from_utf8_lossy(&out.stdout).into_owned(),
            report: Default::default(),
        };
    };
    let spec = FilterSpec::for_host(deny_network)
        .unwrap()
        .with_supervisor();
    let filter = compile(&spec).unwrap().bytes().to_vec();
    let (parent, child) = socketpair();
    install(&mut command, filter, child.as_raw_fd());
    let taking = take_listener(parent).unwrap();
    let mut proc = command.spawn().unwrap();
    drop(child);
    let listener = taking.join().unwrap().unwrap();
    let supervisor = spawn(listener, rules).unwrap();
    // Bounded everywhere: a supervisor stuck in a call must fail the test, not hang it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut stdout = proc.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = tx.send(out);
    });
    let out = rx
        .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
        .unwrap_or_else(|_| {
            let _ = proc.kill();
            panic!("the supervised script did not end within 60 s");
        });
    proc.wait().unwrap();
    while !supervisor.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "the supervisor did not end within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let report = supervisor.join().unwrap().unwrap();
    Run { out, report }
}

struct Tree {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    for d in [&ws, &ws.join(".git/hooks"), &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(ws.join("old")).unwrap();
    std::fs::write(ws.join("old/.envrc"), "old\n").unwrap();
    std::fs::write(outside.join("file"), "host\n").unwrap();
    Tree {
        _tmp: tmp,
        ws,
        outside,
    }
}

fn rules(t: &Tree) -> Rules {
    Rules {
        writable: vec![t.ws.clone()],
        devices: vec!["/dev/null".into()],
        protected: vec![],
        masked: vec![],
        shm: None,
        network: None,
    }
}

/// `name: ok` or `name: no` per line, from `cmd && echo ok || echo no`.
fn case(name: &str, cmd: &str) -> String {
    format!("if {cmd} 2>/dev/null; then echo '{name}: ok'; else echo '{name}: no'; fi\n")
}

fn verdicts(out: &str) -> Vec<(String, bool)> {
    out.lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_owned(), v == "ok"))
        .collect()
}

fn script(t: &Tree) -> String {
    let o = t.outside.display();
    [
        case("create-top", "echo x > new.txt"),
        case("mkdir-top", "mkdir build"),
        case("rename-top", "mv build build2"),
        case("link-top", "ln new.txt hard.txt"),
        case("symlink-top", "ln -s new.txt soft.txt"),
        case("chmod-inside", "chmod 600 new.txt"),
        case("touch-inside", "touch -d 2001-01-01 new.txt"),
        case("remove-top", "rm hard.txt"),
        case("chmod-by-fd", "exec 5<new.txt && chmod 640 /proc/self/fd/5"),
        case("devnull", "echo x > /dev/null"),
        case("index-lock", "echo x > .git/index.lock"),
        case("sample-hook", "echo x > .git/hooks/pre-commit.sample"),
        case("hook", "echo x > .git/hooks/pre-commit"),
        case("config", "echo x >> .git/config"),
        case(
            "nested-hook",
            "mkdir -p sub/.git/hooks && echo x > sub/.git/hooks/post-checkout",
        ),
        case("envrc-new", "echo x > .envrc"),
        case("envrc-existing", "echo y >> old/.envrc"),
        case("rename-into-hooks", "mv new.txt .git/hooks/pre-push"),
        case("outside-create", &format!("echo x > {o}/new")),
        case("outside-chmod", &format!("chmod 600 {o}/file")),
        case("outside-touch", &format!("touch -d 2001-01-01 {o}/file")),
        case(
            "link-out",
            &format!("ln -s {o}/made out-link && echo x > out-link"),
        ),
        case(
            "reopen-config",
            "exec 3<.git/config && echo x >> /proc/self/fd/3",
        ),
        case("dev-fd-config", "exec 4<.git/config && echo x >> /dev/fd/4"),
        case("link-config", "ln .git/config cfg"),
        case("rename-git", "mv .git g"),
    ]
    .concat()
}

#[test]
fn entries_come_and_go_at_the_top_of_a_root_and_protected_names_are_refused() {
    let t = tree();

    // With no supervisor every case succeeds: each refusal below is the supervisor's.
    let bare = tree();
    let free = verdicts(&run(&bare.ws, &script(&bare), None).out);
    let failed: Vec<_> = free.iter().filter(|(_, ok)| !ok).collect();
    assert!(
        failed.is_empty(),
        "cases that fail without a supervisor: {failed:?}"
    );
    assert_eq!(free.len(), 26);

    let ran = run(&t.ws, &script(&t), Some(rules(&t)));
    let got = verdicts(&ran.out);
    let expect_ok = [
        "create-top",
        "mkdir-top",
        "rename-top",
        "link-top",
        "symlink-top",
        "chmod-inside",
        "touch-inside",
        "remove-top",
        "chmod-by-fd",
        "envrc-new",
        "devnull",
        "index-lock",
        "sample-hook",
    ];
    assert_eq!(got.len(), 26, "{}", ran.out);
    for (name, ok) in &got {
        assert_eq!(
            *ok,
            expect_ok.contains(&name.as_str()),
            "{name}\n{}",
            ran.out
        );
    }
    // Nothing refused left a trace.
    assert!(!t.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(t.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!t.ws.join("sub/.git/hooks/post-checkout").exists());
    assert_eq!(
        std::fs::read_to_string(t.ws.join("old/.envrc")).unwrap(),
        "old\n"
    );
    assert!(t.ws.join(".git").is_dir() && !t.ws.join("g").exists());
    assert!(!t.outside.join("new").exists(), "outside/new");
    assert!(!t.outside.join("made").exists(), "outside/made");
    assert!(!t.ws.join("cfg").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(t.outside.join("file"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o777, 0o600);
    let mtime = std::fs::metadata(t.outside.join("file"))
        .unwrap()
        .modified()
        .unwrap();
    assert!(
        mtime
            > std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_000_000_000 + 31_536_000)
    );
    // What was allowed happened.
    assert_eq!(
        std::fs::read_to_string(t.ws.join("new.txt")).unwrap(),
        "x\n"
    );
    assert!(t.ws.join("build2").is_dir());
    assert_eq!(
        std::fs::metadata(t.ws.join("new.txt"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o640
    );
    // Every refusal is reported with its rule.
    let rules_seen: Vec<&str> = ran.report.refusals.iter().map(|r| r.rule).collect();
    for rule in ["git-directory", "auto-run", "outside-writable"] {
        assert!(rules_seen.contains(&rule), "{rule} not in {rules_seen:?}");
    }
    assert!(ran.report.handled > ran.report.refused);
}

#[test]
fn files_are_made_with_the_callers_umask() {
    let t = tree();
    let ran = run(
        &t.ws,
        "umask 077; echo x > private && mkdir pdir && echo done",
        Some(rules(&t)),
    );
    assert_eq!(ran.out.trim(), "done", "{:?}", ran.report);
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &str| {
        std::fs::metadata(t.ws.join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("private"), 0o600);
    assert_eq!(mode("pdir"), 0o700);
}

#[test]
fn git_works_in_a_supervised_repository_and_its_configuration_is_brokered() {
    let t = tree();
    let g = "git -c user.name=a -c user.email=a@example.com";
    let script = format!(
        "set -e; git init -q sub; cd sub; {g} commit -q --allow-empty -m one; \
         git config user.name jailed; \
         git config core.fsmonitor 'touch pwned' || true; \
         git config alias.st status || true; \
         echo ok"
    );
    let ran = run(&t.ws, &script, Some(rules(&t)));
    assert_eq!(ran.out.trim(), "ok", "{:?}", ran.report);
    let config = std::fs::read_to_string(t.ws.join("sub/.git/config")).unwrap();
    assert!(config.contains("jailed"), "{config}");
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(!t.ws.join("sub/.git/config.lock").exists());
    let keys: Vec<&str> = ran
        .report
        .refusals
        .iter()
        .filter_map(|r| r.key.as_deref())
        .collect();
    assert!(keys.contains(&"core.fsmonitor"), "{keys:?}");
    // Without a supervisor the same script keeps the key: the broker is what drops it.
    let bare = tree();
    run(&bare.ws, &script, None);
    let config = std::fs::read_to_string(bare.ws.join("sub/.git/config")).unwrap();
    assert!(config.contains("fsmonitor"), "{config}");
}

#[test]
fn a_submodule_configuration_is_judged_like_the_repository_one() {
    let t = tree();
    std::fs::create_dir_all(t.ws.join(".git/modules/lib")).unwrap();
    std::fs::write(t.ws.join(".git/modules/lib/config"), "[core]\n").unwrap();
    let script = [
        case(
            "direct",
            "echo '[core] fsmonitor = x' >> .git/modules/lib/config",
        ),
        case(
            "hook",
            "mkdir -p .git/modules/lib/hooks && echo x > .git/modules/lib/hooks/post-checkout",
        ),
    ]
    .concat();
    let ran = run(&t.ws, &script, Some(rules(&t)));
    assert_eq!(
        verdicts(&ran.out),
        vec![("direct".into(), false), ("hook".into(), false)]
    );
    assert_eq!(
        std::fs::read_to_string(t.ws.join(".git/modules/lib/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn posix_shared_memory_is_made_in_the_jails_own_shm() {
    let t = tree();
    let shm = t.ws.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    let name = format!("cordon-test-{}", std::process::id());
    let script = format!(
        "python3 -c 'from multiprocessing import shared_memory as s, Lock; \
         m = s.SharedMemory(name=\"{name}\", create=True, size=16); m.buf[0] = 7; \
         l = Lock(); l.acquire(); l.release(); print(\"shm\", m.buf[0]); m.close(); m.unlink()'"
    );
    let ran = run(
        &t.ws,
        &script,
        Some(Rules {
            shm: Some(shm.clone()),
            ..rules(&t)
        }),
    );
    assert_eq!(ran.out.trim(), "shm 7", "{:?}", ran.report);
    assert!(ran.report.handled > 0);
    // The host's /dev/shm never held it, and the jail's own is empty again.
    assert!(!std::path::Path::new("/dev/shm").join(&name).exists());
    assert_eq!(std::fs::read_dir(&shm).unwrap().count(), 0);
}

#[test]
fn a_root_jail_gives_its_files_away_as_roots_tar_does_and_nothing_outside() {
    let t = tree();
    let o = t.outside.display();
    let script = [
        case(
            "chown-inside",
            "echo x > given && chown 1000:1000 given && chmod 640 given",
        ),
        case("chown-outside", &format!("chown 1000 {o}/file")),
    ]
    .concat();
    let ran = run(&t.ws, &script, Some(rules(&t)));
    let root = rustix_free_euid() == 0;
    // As root (a capability-less jail, a supervisor whose permitted set lends CAP_CHOWN and
    // CAP_FOWNER) the file inside is given away; unprivileged, it cannot be, as on the host.
    assert_eq!(
        verdicts(&ran.out),
        vec![
            ("chown-inside".into(), root),
            ("chown-outside".into(), false)
        ],
        "{:?}",
        ran.report
    );
    use std::os::unix::fs::MetadataExt;
    let outside = std::fs::metadata(t.outside.join("file")).unwrap();
    assert_ne!(outside.uid(), 1000);
    if root {
        let given = std::fs::metadata(t.ws.join("given")).unwrap();
        assert_eq!((given.uid(), given.mode() & 0o777), (1000, 0o640));
    }
}

fn rustix_free_euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

#[test]
fn a_fifo_waiting_for_its_reader_does_not_hold_up_the_other_calls() {
    let t = tree();
    // The writer's open waits for a reader; the reader first makes a file (a supervised call),
    // which a supervisor stuck in the writer's open would never answer.
    let script = "mkfifo p && (echo through > p &) && sleep 0.2 && touch made && cat p";
    let ran = run(&t.ws, script, Some(rules(&t)));
    assert_eq!(ran.out.trim(), "through", "{:?}", ran.report);
    assert!(t.ws.join("made").exists());
}

/// The network cases, as `name: ok|no` lines: the jail's own servers (TCP and UDP on 127.0.0.1
/// and ::1, a Unix socket file, an abstract name, a descriptor passed over its own socket),
/// then every way to reach the host's listeners the test opened (`HOST_*` in the environment).
const NET_SCRIPT: &str = r#"
import os, socket, array
def case(name, f):
    try:
        f(); print(name + ": ok")
    except Exception as e:
        print(name + ": no (" + repr(e) + ")")
def tcp_echo(fam, host):
    srv = socket.socket(fam, socket.SOCK_STREAM); srv.bind((host, 0)); srv.listen(1)
    cl = socket.create_connection(srv.getsockname()[:2], timeout=5); c, _ = srv.accept()
    cl.sendall(b"ping"); assert c.recv(10) == b"ping"
def udp_echo(fam, host):
    a = socket.socket(fam, socket.SOCK_DGRAM); a.bind((host, 0))
    b = socket.socket(fam, socket.SOCK_DGRAM); b.settimeout(5)
    b.sendto(b"ping", a.getsockname()); data, back = a.recvfrom(10); a.sendto(data.upper(), back)
    assert b.recv(10) == b"PING"
def name_kept():
    os.mkdir("sub"); s = socket.socket(socket.AF_UNIX); s.bind("sub/n.sock")
    assert s.getsockname() == "sub/n.sock", s.getsockname()
    t = socket.socket(socket.AF_UNIX); t.bind(os.path.abspath("abs.sock"))
    assert t.getsockname() == os.path.abspath("abs.sock"), t.getsockname()
def answer_by_address():
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
    cl = socket.create_connection(srv.getsockname(), timeout=5); c, peer = srv.accept()
    c.sendto(b"back", peer); assert cl.recv(10) == b"back"
def wildcard():
    s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(1)
    assert s.getsockname()[0] == "127.0.0.1", s.getsockname()
def unix_file():
    srv = socket.socket(socket.AF_UNIX); srv.bind("own.sock"); srv.listen(1)
    cl = socket.socket(socket.AF_UNIX); cl.connect("own.sock"); c, _ = srv.accept()
    r, w = os.pipe()
    cl.sendmsg([b"fd"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [w]))])
    msg, anc, _, _ = c.recvmsg(10, socket.CMSG_LEN(4))
    got = array.array("i"); got.frombytes(anc[0][2][:4]); os.write(got[0], b"through")
    assert msg == b"fd" and os.read(r, 10) == b"through"
def abstract_name():
    srv = socket.socket(socket.AF_UNIX); srv.bind("\0cordon-own"); srv.listen(1)
    cl = socket.socket(socket.AF_UNIX); cl.connect("\0cordon-own"); srv.accept()
def connect(fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(5); s.connect(addr)
    s.sendall(b"x")
def sendto(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"escaped", addr)
def sendmsg(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendmsg([b"escaped"], [], 0, addr)
def unix_connect(path):
    s = socket.socket(socket.AF_UNIX); s.connect(path)
tport, uport = int(os.environ["HOST_TCP"]), int(os.environ["HOST_UDP"])
case("own-tcp4", lambda: tcp_echo(socket.AF_INET, "127.0.0.1"))
case("own-tcp6", lambda: tcp_echo(socket.AF_INET6, "::1"))
case("own-udp4", lambda: udp_echo(socket.AF_INET, "127.0.0.1"))
case("own-udp6", lambda: udp_echo(socket.AF_INET6, "::1"))
case("own-wildcard-made-loopback", wildcard)
case("own-tcp-answer-by-address", answer_by_address)
case("own-unix-name-kept", name_kept)
case("own-unix-file-and-fd-passing", unix_file)
case("own-abstract", abstract_name)
case("host-tcp", lambda: connect(socket.AF_INET, ("127.0.0.1", tport)))
case("host-tcp-any", lambda: connect(socket.AF_INET, ("0.0.0.0", tport)))
case("host-tcp-mapped", lambda: connect(socket.AF_INET6, ("::ffff:127.0.0.1", tport)))
case("host-udp-sendto", lambda: sendto(("127.0.0.1", uport)))
case("host-udp-sendmsg", lambda: sendmsg(("127.0.0.1", uport)))
case("host-unix-in-workspace", lambda: unix_connect(os.environ["HOST_UNIX"]))
case("host-abstract", lambda: unix_connect("\0" + os.environ["HOST_ABSTRACT"]))
"#;

#[test]
fn the_jail_reaches_its_own_sockets_and_none_of_the_hosts() {
    use std::net::{TcpListener, UdpSocket};
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};

    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let abstract_name = format!("cordon-test-host-{}", std::process::id());
    let _abstract =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&abstract_name).unwrap()).unwrap();
    let with_env = |t: &Tree| {
        let sock = t.ws.join("host.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let script = format!(
            "HOST_TCP={} HOST_UDP={} HOST_UNIX={} HOST_ABSTRACT={abstract_name} python3 -c '{}'",
            tcp.local_addr().unwrap().port(),
            udp.local_addr().unwrap().port(),
            sock.display(),
            NET_SCRIPT.replace('\'', "'\\''"),
        );
        (listener, script)
    };
    let host_saw_datagrams = |udp: &UdpSocket| {
        let mut buf = [0u8; 16];
        let mut n = 0;
        while udp.recv(&mut buf).is_ok() {
            n += 1;
        }
        n
    };

    // Without a supervisor every case gets through, the host's listeners included.
    let bare = tree();
    let (_l, script) = with_env(&bare);
    let free = run_filtered(&bare.ws, &script, None, false);
    // (On the host a wildcard bind stays a wildcard: the one case that fails there.)
    let failed: Vec<_> = verdicts(&free.out)
        .into_iter()
        .filter(|(_, ok)| !ok)
        .collect();
    assert_eq!(
        failed,
        [("own-wildcard-made-loopback".to_owned(), false)],
        "{}",
        free.out
    );
    assert_eq!(verdicts(&free.out).len(), 16, "{}", free.out);
    assert_eq!(host_saw_datagrams(&udp), 2);

    let t = tree();
    let (_l, script) = with_env(&t);
    let mut r = rules(&t);
    r.network = Some(cordon_supervisor::Network::default());
    let ran = run_filtered(&t.ws, &script, Some(r), true);
    let got = verdicts(&ran.out);
    assert_eq!(got.len(), 16, "{}", ran.out);
    for (name, ok) in &got {
        assert_eq!(*ok, name.starts_with("own-"), "{name}\n{}", ran.out);
    }
    assert_eq!(
        host_saw_datagrams(&udp),
        0,
        "a datagram reached the host's socket"
    );
    let refused: Vec<&str> = ran.report.refusals.iter().map(|r| r.rule).collect();
    assert!(
        refused.iter().filter(|r| **r == "network").count() >= 7,
        "{refused:?}"
    );
}
