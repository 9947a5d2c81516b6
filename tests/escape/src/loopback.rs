//! The jail's own loopback. With the network denied, a bubblewrap jail has a network namespace
//! of its own holding only `lo`, and its IPv4 and IPv6 sockets may use it (local test servers):
//! the control shows a server and a client on 127.0.0.1 and ::1, TCP and UDP, inside one jail.
//! The attack shows that nothing of the host's is reached that way: a listener on every
//! loopback address the host has (and one made up in 127/8) and on this machine's own
//! non-loopback addresses, IPv4 and IPv6, TCP and UDP, sees nothing. No address off this
//! machine is used. Under the Landlock backend, with no namespace, the same cases hold through
//! the supervisor, which lets the jail reach only sockets it bound itself. Beside it, the jail's
//! own pseudo-terminals (bubblewrap's devpts; under Landlock, the host's devpts through the
//! supervisor): a control opens one with Python's `pty` and runs a command under `script`, and
//! an attack tries a host session's terminal.

use std::io::ErrorKind;
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::process::Command;
use std::time::Duration;

use super::harness::{Ctx, cut};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    vec![
        Case::attack(
            "net/host-addresses",
            Class::Network,
            "reach host listeners (TCP and UDP) on 127.0.0.1, 127.1.2.3, ::1 and this machine's own non-loopback IPv4 and IPv6 addresses",
            host_addresses,
        ),
        Case::attack(
            "use/own-loopback",
            Class::Usability,
            "a TCP and a UDP server on the jail's own 127.0.0.1 and ::1, reached from inside the jail",
            own_loopback,
        )
        .not_in_mutants(),
        Case::attack(
            "use/own-terminals",
            Class::Usability,
            "Python's pty.openpty and `script` run a command on a pseudo-terminal of the jail's own",
            own_terminals,
        )
        .not_in_mutants(),
        Case::attack(
            "proc/host-terminal",
            Class::Processes,
            "write into and read what is typed on a terminal of a host session (a pseudo-terminal a host process holds, owned by the user)",
            host_terminal,
        ),
    ]
}

/// The host session's terminal of `host_terminal`: a pseudo-terminal whose master a host
/// process holds (as a terminal emulator does), its slave owned by the column's user. It
/// prints the slave's name, "types" a line holding the token into the master, and reports
/// whatever reaches the master (what a program on the slave writes).
const HOST_TERMINAL: &str = r#"
import os, pty, select, sys, time
uid, gid, token, limit = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
m, s = pty.openpty()
name = os.ttyname(s)
if os.geteuid() == 0:
    os.chown(name, uid, gid)
os.chmod(name, 0o620)
print(name, flush=True)
end = time.time() + limit
while time.time() < end:
    os.write(m, ("KEY-" + token + "\n").encode())
    r, _, _ = select.select([m], [], [], 0.1)
    if r:
        data = os.read(m, 4096)
        if ("SEEN-" + token).encode() in data:
            print("GOT", flush=True)
"#;

fn host_terminal(ctx: &Ctx<'_>) -> Outcome {
    use std::io::{BufRead, BufReader, Read};
    let victim = Command::new("python3")
        .args(["-c", HOST_TERMINAL])
        .arg(ctx.ids.uid.to_string())
        .arg(ctx.ids.gid.to_string())
        .arg(&ctx.token)
        .arg("15")
        .stdout(std::process::Stdio::piped())
        .spawn();
    let mut victim = match victim {
        Ok(v) => v,
        Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: python3: {e}")),
    };
    let Some(stdout) = victim.stdout.take() else {
        let _ = victim.kill();
        return Outcome::new(Verdict::Inconclusive, "harness: no victim output");
    };
    let mut lines = BufReader::new(stdout);
    let mut name = String::new();
    if lines.read_line(&mut name).is_err() || !name.trim().starts_with("/dev/pts/") {
        let _ = victim.kill();
        let _ = victim.wait();
        return Outcome::new(
            Verdict::Inconclusive,
            format!("harness: the victim terminal did not start ({name:?})"),
        );
    }
    let name = name.trim();
    let token = &ctx.token;
    // Write into it (read-write open, then a write-only one), and read what is typed there.
    let out = ctx.sh_steps(&[
        // In subshells: a failed redirection of `exec` would end the shell (and skip the rest).
        &format!("(exec 3<>{name} && echo SEEN-{token} >&3 && echo rw-opened)"),
        &format!("(echo SEEN-{token} > {name} && echo w-opened)"),
        &format!("timeout 1 head -c 200 {name} | grep -a -o 'KEY-[a-z0-9]*' | head -1"),
    ]);
    std::thread::sleep(Duration::from_millis(300));
    let _ = victim.kill();
    let _ = victim.wait();
    let mut rest = String::new();
    let _ = lines.read_to_string(&mut rest);
    let wrote = rest.contains("GOT");
    let read = out.out.contains(&format!("KEY-{token}"));
    ctx.judge(
        &out,
        wrote || read,
        format!(
            "host terminal {name}: written into: {wrote}; typed line read: {read}; {}",
            cut(&out.out, 120)
        ),
    )
}

fn own_terminals(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.sh(
        "python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b\"x\"); print(\"PTY\", os.ttyname(s).startswith(\"/dev/pts/\"), os.read(m, 1))'; \
         script -qc 'tty' /dev/null | tr -d '\\r'",
    );
    let works = out.out.contains("PTY True b'x'") && out.out.contains("/dev/pts/");
    ctx.control(&out, works, "openpty and script on the jail's own /dev/pts")
}

/// This machine's own addresses that are not loopback, from `ip -o addr` (link-local IPv6 left
/// out: it needs a scope to be reached).
fn local_addresses() -> Vec<IpAddr> {
    let Ok(out) = Command::new("ip").args(["-o", "addr", "show"]).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3))
        .filter_map(|a| a.split('/').next()?.parse::<IpAddr>().ok())
        .filter(|a| !a.is_loopback())
        .filter(|a| !matches!(a, IpAddr::V6(v6) if v6.segments()[0] & 0xffc0 == 0xfe80))
        .collect()
}

fn host_addresses(ctx: &Ctx<'_>) -> Outcome {
    let mut targets: Vec<IpAddr> = ["127.0.0.1", "127.1.2.3", "::1"]
        .iter()
        .filter_map(|a| a.parse().ok())
        .collect();
    let local = local_addresses();
    if local.is_empty() {
        return Outcome::new(
            Verdict::Inconclusive,
            "harness: no non-loopback address on this machine to listen on",
        );
    }
    targets.extend(local);
    let mut tcp = Vec::new();
    let mut udp = Vec::new();
    for addr in &targets {
        let (Ok(t), Ok(u)) = (TcpListener::bind((*addr, 0)), UdpSocket::bind((*addr, 0))) else {
            continue;
        };
        let _ = t.set_nonblocking(true);
        let _ = u.set_nonblocking(true);
        tcp.push(t);
        udp.push(u);
    }
    if tcp.len() < 4 {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("harness: could listen on only {} of {targets:?}", tcp.len()),
        );
    }
    let endpoints: Vec<String> = tcp
        .iter()
        .zip(&udp)
        .filter_map(|(t, u)| {
            let (t, u) = (t.local_addr().ok()?, u.local_addr().ok()?);
            Some(format!("('{}', {}, {})", t.ip(), t.port(), u.port()))
        })
        .collect();
    let out = ctx.py(&format!(
        "import socket\n\
         for host, tport, uport in [{}]:\n\
         \x20   fam = socket.AF_INET6 if ':' in host else socket.AF_INET\n\
         \x20   try:\n\
         \x20       s = socket.create_connection((host, tport), timeout=1); s.send(b'hi'); print('CONNECTED', host)\n\
         \x20   except Exception as e: print('tcp', host, e)\n\
         \x20   try:\n\
         \x20       u = socket.socket(fam, socket.SOCK_DGRAM); u.sendto(b'hi', (host, uport)); print('sent', host)\n\
         \x20   except Exception as e: print('udp', host, e)\n\
         print('tried', flush=True)\n",
        endpoints.join(", ")
    ));
    std::thread::sleep(Duration::from_millis(100));
    let mut reached = Vec::new();
    for t in &tcp {
        if t.accept().is_ok() {
            reached.push(format!("tcp {:?}", t.local_addr().ok()));
        }
    }
    let mut buf = [0u8; 16];
    for u in &udp {
        match u.recv_from(&mut buf) {
            Ok(_) => reached.push(format!("udp {:?}", u.local_addr().ok())),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => {}
        }
    }
    if ctx.canary() && !out.out.contains("tried") {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("the payload did not finish: {}", out.brief()),
        );
    }
    let detail = if reached.is_empty() {
        format!("no host listener reached; {}", cut(&out.out, 160))
    } else {
        format!("reached: {}", reached.join(", "))
    };
    ctx.judge(&out, !reached.is_empty(), detail)
}

fn own_loopback(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.py("import socket\n\
         ok = []\n\
         for fam, host in [(socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')]:\n\
         \x20   srv = socket.socket(fam); srv.bind((host, 0)); srv.listen()\n\
         \x20   cli = socket.create_connection(srv.getsockname()[:2], timeout=2)\n\
         \x20   conn, _ = srv.accept(); cli.send(b'ping'); assert conn.recv(4) == b'ping'\n\
         \x20   a = socket.socket(fam, socket.SOCK_DGRAM); a.bind((host, 0))\n\
         \x20   b = socket.socket(fam, socket.SOCK_DGRAM); b.sendto(b'pong', a.getsockname()[:2])\n\
         \x20   a.settimeout(2); assert a.recv(4) == b'pong'\n\
         \x20   ok.append(host)\n\
         print('LOOPBACK', ' '.join(ok))\n");
    let works = out.code == Some(0) && out.out.contains("LOOPBACK 127.0.0.1 ::1");
    ctx.control(
        &out,
        works,
        "TCP and UDP on 127.0.0.1 and ::1 inside the jail",
    )
}
