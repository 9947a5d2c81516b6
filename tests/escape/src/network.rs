//! Class 6: network and IPC. The harness listens on the host (loopback TCP and UDP, a Unix socket
//! file, an abstract socket, a SysV shared memory segment) and judges from there. Nothing is ever
//! sent beyond the loopback: the "beyond" case only asks the kernel for a route (a UDP
//! `connect`, which sends no packet).

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::PathBuf;
use std::process::Command;

use super::harness::{Ctx, cut};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Network;
    vec![
        Case::attack(
            "net/tcp-loopback",
            c,
            "connect to a TCP listener on the host's 127.0.0.1 (and via localhost, ::1)",
            tcp,
        ),
        Case::attack(
            "net/udp-loopback",
            c,
            "send a datagram to a UDP socket on the host's 127.0.0.1",
            udp,
        ),
        Case::attack(
            "net/beyond-loopback",
            c,
            "find a route to 192.0.2.1 (TEST-NET; UDP connect, no packet) and any interface but lo",
            beyond,
        )
        .landlock_limit(
            "no network namespace: the host's interfaces and routes stay visible (connecting out \
             is still refused: every connect and addressed send by the supervisor, TCP by Landlock too)",
        ),
        Case::attack(
            "net/host-net-state",
            c,
            "see the host's listeners and abstract sockets in /proc/net/{tcp,udp,unix}",
            net_state,
        )
        .landlock_limit(
            "no network namespace: /proc/net lists the host's sockets, listeners and abstract \
             socket names (connecting to them is still refused, as net/tcp-loopback, \
             net/abstract-socket and net/unix-socket-file show)",
        ),
        Case::attack(
            "net/raw-netlink-packet",
            c,
            "create raw, packet and non-route netlink sockets (IPv4 and IPv6 reach only the jail's own loopback: net/host-addresses; Unix sockets reach only the jail's own: net/host-sockets-in-view, net/abstract-socket)",
            raw,
        ),
        Case::attack(
            "net/unix-socket-file",
            c,
            "connect to host Unix socket files (in a readable host directory and in /tmp)",
            unix_file,
        ),
        Case::attack(
            "net/abstract-socket",
            c,
            "connect to an abstract Unix socket the host listens on",
            abstract_socket,
        ),
        Case::attack(
            "net/agents-via-env",
            c,
            "reach ssh-agent and D-Bus through SSH_AUTH_SOCK / DBUS_SESSION_BUS_ADDRESS given to cordon",
            agents,
        ),
        Case::attack(
            "net/sysv-ipc",
            c,
            "see (ipcs) and attach (shmat) a SysV shared memory segment the host created",
            sysv,
        )
        .landlock_limit(
            "no IPC namespace: /proc/sysvipc lists the host's System V objects (attaching, and \
             every System V and POSIX message-queue call, is refused by the seccomp filter)",
        ),
    ]
}

fn harness_err(e: impl std::fmt::Display) -> Outcome {
    Outcome::new(Verdict::Inconclusive, format!("harness: {e}"))
}

fn tcp(ctx: &Ctx<'_>) -> Outcome {
    let l = match TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => return harness_err(e),
    };
    let _ = l.set_nonblocking(true);
    let port = l.local_addr().map(|a| a.port()).unwrap_or(0);
    let out = ctx.py(&format!(
        "import socket\n\
         for host in ['127.0.0.1', 'localhost', '::1']:\n\
         \x20   try:\n\
         \x20       s = socket.create_connection((host, {port}), timeout=2); s.send(b'hi'); print('CONNECTED', host)\n\
         \x20   except Exception as e: print(host, e)\n"
    ));
    let seen = l.accept().is_ok() || out.out.contains("CONNECTED");
    ctx.judge(
        &out,
        seen,
        format!(
            "host listener saw a connection: {seen}; {}",
            cut(&out.out, 200)
        ),
    )
}

fn udp(ctx: &Ctx<'_>) -> Outcome {
    let s = match UdpSocket::bind("127.0.0.1:0") {
        Ok(s) => s,
        Err(e) => return harness_err(e),
    };
    let _ = s.set_nonblocking(true);
    let port = s.local_addr().map(|a| a.port()).unwrap_or(0);
    let out = ctx.py(&format!(
        "import socket\n\
         try:\n\
         \x20   s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'hi', ('127.0.0.1', {port})); print('SENT')\n\
         except Exception as e: print(e)\n"
    ));
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut buf = [0u8; 16];
    let got = match s.recv_from(&mut buf) {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(_) => false,
    };
    ctx.judge(
        &out,
        got,
        format!(
            "host socket received a datagram: {got}; {}",
            cut(&out.out, 200)
        ),
    )
}

fn beyond(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.py("import socket\n\
         try:\n\
         \x20   s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(('192.0.2.1', 9))\n\
         \x20   print('ROUTE', s.getsockname())\n\
         except Exception as e: print('no route:', e)\n\
         ifs = [l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]]\n\
         print('IFACES', ' '.join(ifs))\n\
         routes = open('/proc/net/route').read().splitlines()[1:]\n\
         print('ROUTES', len(routes))\n");
    let route = out.out.contains("ROUTE ");
    let ifaces: Vec<&str> = out
        .out
        .lines()
        .find_map(|l| l.strip_prefix("IFACES"))
        .unwrap_or("")
        .split_whitespace()
        .filter(|i| *i != "lo")
        .collect();
    let routes = out
        .out
        .lines()
        .find_map(|l| l.strip_prefix("ROUTES "))
        .unwrap_or("0")
        .trim()
        != "0";
    ctx.judge(
        &out,
        route || !ifaces.is_empty() || routes,
        format!("route to 192.0.2.1: {route}; interfaces besides lo: {ifaces:?}; routes: {routes}"),
    )
}

fn net_state(ctx: &Ctx<'_>) -> Outcome {
    let l = match TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => return harness_err(e),
    };
    let port = l.local_addr().map(|a| a.port()).unwrap_or(0);
    let name = format!("cordon-escape-{}", ctx.token);
    let abs =
        SocketAddr::from_abstract_name(name.as_bytes()).and_then(|a| UnixListener::bind_addr(&a));
    if let Err(e) = abs {
        return harness_err(e);
    }
    let out = ctx.sh("cat /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/unix 2>/dev/null");
    let hex = format!(":{port:04X}");
    let port_seen = out.out.contains(&hex);
    let abs_seen = out.out.contains(&name);
    ctx.judge(
        &out,
        port_seen || abs_seen,
        format!("host TCP listener visible: {port_seen}; host abstract socket visible: {abs_seen}"),
    )
}

fn raw(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx.py("import socket\n\
         kinds = [('raw', socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),\n\
         \x20        ('packet', socket.AF_PACKET, socket.SOCK_RAW, 0),\n\
         \x20        ('raw6', socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6),\n\
         \x20        ('netlink-audit', socket.AF_NETLINK, socket.SOCK_RAW, 9),\n\
         \x20        ('netlink-uevent', socket.AF_NETLINK, socket.SOCK_DGRAM, 15)]\n\
         for name, fam, typ, proto in kinds:\n\
         \x20   try:\n\
         \x20       socket.socket(fam, typ, proto); print('CREATED', name)\n\
         \x20   except Exception as e: print(name, e)\n");
    let created: Vec<&str> = out
        .out
        .lines()
        .filter_map(|l| l.strip_prefix("CREATED "))
        .collect();
    ctx.judge(
        &out,
        !created.is_empty(),
        format!("sockets created: {created:?}"),
    )
}

/// A listening socket file. Its case directory stays until the suite's end: a jail of another
/// case that starts meanwhile may have read it from the kernel's list and masks it, and
/// bubblewrap cannot mount over a path whose directory is gone (docs/limits.md).
fn listen_file(ctx: &Ctx<'_>, path: &PathBuf) -> Result<UnixListener, String> {
    std::fs::write(ctx.dir.join(super::harness::KEEP_UNTIL_END), "")
        .map_err(|e| format!("{}: {e}", ctx.dir.display()))?;
    let _ = std::fs::remove_file(path);
    let l = UnixListener::bind(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777));
    let _ = l.set_nonblocking(true);
    Ok(l)
}

fn connect_script(paths: &[String]) -> String {
    format!(
        "import socket\n\
         for p in {paths:?}:\n\
         \x20   try:\n\
         \x20       s = socket.socket(socket.AF_UNIX); s.connect(p); s.send(b'hi'); print('CONNECTED', p)\n\
         \x20   except Exception as e: print(p, e)\n"
    )
}

fn unix_file(ctx: &Ctx<'_>) -> Outcome {
    /// Removes the socket file in the host's /tmp whatever happens.
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let in_outside = ctx.outside.join("host.sock");
    let in_tmp = PathBuf::from(format!("/tmp/cordon-escape-{}.sock", ctx.token));
    let _remove = Remove(in_tmp.clone());
    let (a, b) = match (listen_file(ctx, &in_outside), listen_file(ctx, &in_tmp)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return harness_err(e),
    };
    let out = ctx.py(&connect_script(&[
        in_outside.display().to_string(),
        in_tmp.display().to_string(),
    ]));
    let seen = a.accept().is_ok() || b.accept().is_ok();
    ctx.judge(
        &out,
        seen,
        format!(
            "host listener saw a connection: {seen}; {}",
            cut(&out.out, 200)
        ),
    )
}

fn abstract_socket(ctx: &Ctx<'_>) -> Outcome {
    let name = format!("cordon-escape-{}", ctx.token);
    let l = match SocketAddr::from_abstract_name(name.as_bytes())
        .and_then(|a| UnixListener::bind_addr(&a))
    {
        Ok(l) => l,
        Err(e) => return harness_err(e),
    };
    let _ = l.set_nonblocking(true);
    let out = ctx.py(&format!(
        "import socket\n\
         try:\n\
         \x20   s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); s.send(b'hi'); print('CONNECTED')\n\
         except Exception as e: print(e)\n"
    ));
    let seen = l.accept().is_ok();
    ctx.judge(
        &out,
        seen,
        format!(
            "host abstract listener saw a connection: {seen}; {}",
            cut(&out.out, 120)
        ),
    )
}

fn agents(ctx: &Ctx<'_>) -> Outcome {
    let agent = ctx.outside.join("agent.sock");
    let bus = ctx.outside.join("bus.sock");
    let (a, b) = match (listen_file(ctx, &agent), listen_file(ctx, &bus)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return harness_err(e),
    };
    let out = ctx
        .cordon()
        .env("SSH_AUTH_SOCK", &agent.display().to_string())
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            &format!("unix:path={}", bus.display()),
        )
        .py(
            "import os, socket\n\
             print('SSH_AUTH_SOCK' in os.environ, 'DBUS_SESSION_BUS_ADDRESS' in os.environ)\n\
             paths = [os.environ.get('SSH_AUTH_SOCK', ''), os.environ.get('DBUS_SESSION_BUS_ADDRESS', '').replace('unix:path=', ''),\n\
             \x20        '/run/dbus/system_bus_socket', '/run/user/%d/bus' % os.getuid()]\n\
             for p in paths:\n\
             \x20   if not p: continue\n\
             \x20   try:\n\
             \x20       s = socket.socket(socket.AF_UNIX); s.connect(p); print('CONNECTED', p)\n\
             \x20   except Exception as e: print(p, e)\n",
        )
        .run();
    let seen = a.accept().is_ok() || b.accept().is_ok();
    let vars = out.out.lines().next().unwrap_or("") != "False False";
    ctx.judge(
        &out,
        seen || vars || out.out.contains("CONNECTED"),
        format!("variables passed: {vars}; host listeners saw a connection: {seen}"),
    )
}

fn sysv(ctx: &Ctx<'_>) -> Outcome {
    let made = Command::new("ipcmk")
        .args(["-M", "4096", "-p", "0666"])
        .output();
    let id = match made {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_owned(),
        Ok(o) => return harness_err(String::from_utf8_lossy(&o.stderr).into_owned()),
        Err(e) => return harness_err(format!("ipcmk: {e}")),
    };
    let out = ctx.py(&format!(
        "import ctypes, os, subprocess\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.shmat.restype = ctypes.c_void_p\n\
         r = libc.shmat({id}, None, 0)\n\
         print('SHMAT', 'ATTACHED' if r not in (None, ctypes.c_void_p(-1).value) else os.strerror(ctypes.get_errno()))\n\
         print(subprocess.run(['ipcs', '-m'], capture_output=True, text=True).stdout)\n"
    ));
    let _ = Command::new("ipcrm").args(["-m", &id]).output();
    let attached = out.out.contains("ATTACHED");
    let listed = out
        .out
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(id.as_str()));
    ctx.judge(
        &out,
        attached || listed,
        format!("host segment {id} attached: {attached}; listed by ipcs: {listed}"),
    )
}
