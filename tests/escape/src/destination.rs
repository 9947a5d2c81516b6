//! Class 12: network by destination. A jail in `--network proxy` has its own network namespace
//! and one way out, cordon's proxy outside it, which allows the `--allow-host` destinations
//! only. Every attack here runs in proxy mode with an allowlist that names something real (a
//! listener of the harness on the host's loopback), and is judged on the host: the listener
//! saw no connection, no datagram, no byte of a fronted TLS hello. Nothing leaves this machine:
//! every listener is on 127.0.0.1, names off the list are `*.test`, and a name is only ever
//! resolved when it is `localhost`. The refusals must also be in the run's `violations`
//! (`network-denied`, with host and port), or the row is INCONCLUSIVE: a refusal nobody can
//! read is not the behaviour promised.
//!
//! Under the Landlock backend there is no namespace: the proxy listens on the host's loopback
//! and the supervisor lets the jail reach that one host socket, so every row is judged the
//! same way in its columns.
//!
//! The usability rows fetch from local servers only: `curl` over HTTP, HTTPS (a self-signed
//! certificate the payload trusts explicitly) and SOCKS5, `git clone` over HTTP, `pip download`
//! from a find-links page, `npm view` and `npm pack` from a static registry.

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::harness::{Ctx, RunOut, cut};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class, Users};

pub fn cases() -> Vec<Case> {
    let c = Class::Destination;
    vec![
        Case::attack(
            "dest/direct-bypass",
            c,
            "in proxy mode, TCP and UDP straight to a host listener whose address is on the allowlist (bypassing the proxy), and to this machine's own addresses",
            direct_bypass,
        ),
        Case::attack(
            "dest/dns",
            c,
            "in proxy mode, a DNS query (UDP and TCP) to a resolver listening on the host's loopback",
            dns,
        ),
        Case::attack(
            "dest/unlisted-name",
            c,
            "in proxy mode, an HTTP request through the proxy to a host listener by a name not on the allowlist (localhost:PORT)",
            unlisted_name,
        ),
        Case::attack(
            "dest/listed-name-to-loopback",
            c,
            "in proxy mode, a listed name (localhost:PORT) that resolves to loopback: refused unless 127.0.0.1:PORT is listed",
            listed_to_loopback,
        ),
        Case::attack(
            "dest/tls-fronting",
            c,
            "in proxy mode, a tunnel to an allowed host whose TLS ClientHello names another server (fronting)",
            tls_fronting,
        ),
        Case::attack(
            "dest/other-jail-proxy",
            c,
            "in proxy mode, use another running jail's proxy (which allows a host listener) instead of the jail's own",
            other_jail_proxy,
        )
        .no_jail_impossible(
            Users::Both,
            "without a jail there is no jail's proxy to borrow: the proxy's listener exists only inside a jail's own network namespace",
        ),
        Case::attack(
            "dest/killed-launcher",
            c,
            "in proxy mode, leave a listener behind (the proxy's, and one of the payload's own) when the launcher is SIGKILLed",
            killed_launcher,
        )
        .exclusive(),
        control(
            "use/proxy-curl",
            "in proxy mode, curl fetches from local servers over HTTP, HTTPS (self-signed, trusted explicitly; by name and by address) and SOCKS5, and the result counts the destinations",
            proxy_curl,
        ),
        control(
            "use/proxy-git",
            "in proxy mode, git clone over HTTP from a local server",
            proxy_git,
        ),
        control(
            "use/proxy-pip",
            "in proxy mode, pip download of a wheel from a local find-links page",
            proxy_pip,
        ),
        control(
            "use/proxy-npm",
            "in proxy mode, npm view and npm pack from a local static registry",
            proxy_npm,
        ),
    ]
}

fn control(id: &'static str, about: &'static str, run: fn(&Ctx<'_>) -> Outcome) -> Case {
    Case::attack(id, Class::Usability, about, run).not_in_mutants()
}

/// `--network proxy` with these `--allow-host` entries.
fn proxy_args(allow: &[String]) -> Vec<String> {
    let mut args = vec!["--network".to_owned(), "proxy".to_owned()];
    for a in allow {
        args.push("--allow-host".into());
        args.push(a.clone());
    }
    args
}

/// Whether the run's violations hold a `network-denied` for `host` and `port`; always true
/// without a jail (nothing there reports).
fn reported(ctx: &Ctx<'_>, out: &RunOut, host: &str, port: u16) -> bool {
    if ctx.column.unjailed() {
        return true;
    }
    out.json
        .as_ref()
        .and_then(|j| j["violations"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .any(|v| v["kind"] == "network-denied" && v["host"] == host && v["port"] == u64::from(port))
}

/// A TCP listener on the host's 127.0.0.1 that records whether anyone connected.
fn tcp_listener() -> Option<(TcpListener, u16)> {
    let l = TcpListener::bind("127.0.0.1:0").ok()?;
    l.set_nonblocking(true).ok()?;
    let port = l.local_addr().ok()?.port();
    Some((l, port))
}

/// Every connection waiting on `l`, with the bytes each sent within a short while.
fn accepted(l: &TcpListener) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Ok((mut s, _)) = l.accept() {
        let _ = s.set_nonblocking(false);
        let _ = s.set_read_timeout(Some(Duration::from_millis(300)));
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        out.push(got);
    }
    out
}

/// This machine's own non-loopback IPv4 addresses (`ip -o -4 addr`).
fn local_v4() -> Vec<String> {
    let Ok(out) = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3))
        .filter_map(|a| a.split('/').next().map(str::to_owned))
        .filter(|a| !a.starts_with("127."))
        .collect()
}

fn direct_bypass(ctx: &Ctx<'_>) -> Outcome {
    let (Some((tcp, port)), Ok(udp)) = (tcp_listener(), UdpSocket::bind("127.0.0.1:0")) else {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot listen on 127.0.0.1");
    };
    let _ = udp.set_nonblocking(true);
    let uport = udp.local_addr().map(|a| a.port()).unwrap_or(0);
    let mut others: Vec<(TcpListener, String)> = Vec::new();
    for addr in local_v4() {
        if let Ok(l) = TcpListener::bind((addr.as_str(), 0)) {
            let _ = l.set_nonblocking(true);
            if let Ok(a) = l.local_addr() {
                others.push((l, a.to_string()));
            }
        }
    }
    let targets: Vec<String> = std::iter::once(format!("127.0.0.1:{port}"))
        .chain(others.iter().map(|(_, a)| a.clone()))
        .map(|a| format!("'{a}'"))
        .collect();
    let code = format!(
        "import socket\n\
         for t in [{}]:\n\
         \x20   h, p = t.rsplit(':', 1)\n\
         \x20   try:\n\
         \x20       s = socket.create_connection((h, int(p)), timeout=2); s.send(b'direct'); print('CONNECTED', t)\n\
         \x20   except Exception as e: print('tcp', t, e)\n\
         try:\n\
         \x20   u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b'direct', ('127.0.0.1', {uport})); print('sent udp')\n\
         except Exception as e: print('udp', e)\n\
         print('tried', flush=True)\n",
        targets.join(", ")
    );
    let out = ctx
        .cordon()
        .args(proxy_args(&[format!("127.0.0.1:{port}")]))
        .py(&code)
        .run();
    std::thread::sleep(Duration::from_millis(100));
    let mut reached = Vec::new();
    if !accepted(&tcp).is_empty() {
        reached.push(format!("tcp 127.0.0.1:{port}"));
    }
    for (l, a) in &others {
        if !accepted(l).is_empty() {
            reached.push(format!("tcp {a}"));
        }
    }
    let mut buf = [0u8; 16];
    if udp.recv_from(&mut buf).is_ok() {
        reached.push(format!("udp 127.0.0.1:{uport}"));
    }
    if ctx.canary() && !out.out.contains("tried") {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("the payload did not finish: {}", out.brief()),
        );
    }
    let detail = if reached.is_empty() {
        format!("no host listener reached directly; {}", cut(&out.out, 160))
    } else {
        format!("reached without the proxy: {}", reached.join(", "))
    };
    ctx.judge(&out, !reached.is_empty(), detail)
}

/// A DNS query for `example.com` (type A), as a resolver receives it over UDP.
const DNS_QUERY_PY: &str = "q = bytes.fromhex('abcd01000001000000000000') + b'\\x07example\\x03com\\x00' + bytes.fromhex('00010001')\n";

fn dns(ctx: &Ctx<'_>) -> Outcome {
    let (Some((tcp, port)), Ok(udp)) = (tcp_listener(), UdpSocket::bind("127.0.0.1:0")) else {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot listen on 127.0.0.1");
    };
    let _ = udp.set_nonblocking(true);
    let uport = udp.local_addr().map(|a| a.port()).unwrap_or(0);
    let code = format!(
        "import socket\n{DNS_QUERY_PY}\
         try:\n\
         \x20   u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(q, ('127.0.0.1', {uport})); print('sent udp')\n\
         except Exception as e: print('udp', e)\n\
         try:\n\
         \x20   s = socket.create_connection(('127.0.0.1', {port}), timeout=2); s.send(len(q).to_bytes(2, 'big') + q); print('sent tcp')\n\
         except Exception as e: print('tcp', e)\n\
         print('tried', flush=True)\n"
    );
    let out = ctx
        .cordon()
        .args(proxy_args(&["unrelated.test".into()]))
        .py(&code)
        .run();
    std::thread::sleep(Duration::from_millis(100));
    let mut buf = [0u8; 64];
    let mut reached = Vec::new();
    if udp.recv_from(&mut buf).is_ok() {
        reached.push("udp");
    }
    if !accepted(&tcp).is_empty() {
        reached.push("tcp");
    }
    if ctx.canary() && !out.out.contains("tried") {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("the payload did not finish: {}", out.brief()),
        );
    }
    let detail = if reached.is_empty() {
        format!(
            "the resolver on the host's loopback saw no query; {}",
            cut(&out.out, 120)
        )
    } else {
        format!("the resolver got a query over {}", reached.join(" and "))
    };
    ctx.judge(&out, !reached.is_empty(), detail)
}

/// `curl` of `url` through whatever proxy the environment names (none without a jail).
fn curl_script(url: &str) -> String {
    format!("curl -sS --max-time 5 -o /dev/null {url}; echo tried")
}

/// An HTTP fetch of a host listener by `localhost:PORT`, with `allow` as the list; judged on
/// the listener, and the refusal must be reported for `localhost`, the port and a rule that
/// contains `rule`.
fn fetch_localhost(ctx: &Ctx<'_>, allow: impl Fn(u16) -> Vec<String>, rule: &str) -> Outcome {
    let Some((tcp, port)) = tcp_listener() else {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot listen on 127.0.0.1");
    };
    let out = ctx
        .cordon()
        .args(proxy_args(&allow(port)))
        .sh(&curl_script(&format!("http://localhost:{port}/")))
        .run();
    std::thread::sleep(Duration::from_millis(100));
    let reached = !accepted(&tcp).is_empty();
    if ctx.canary() && !out.out.contains("tried") {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("curl did not run: {}", out.brief()),
        );
    }
    if !reached && !reported(ctx, &out, "localhost", port) {
        return Outcome::new(
            Verdict::Inconclusive,
            format!(
                "the listener was not reached, but no network-denied violation names localhost:{port}: {}",
                cut(
                    &out.json
                        .as_ref()
                        .map(|j| j["violations"].to_string())
                        .unwrap_or_default(),
                    300
                )
            ),
        );
    }
    let rules = out
        .json
        .as_ref()
        .map(|j| j["violations"].to_string())
        .unwrap_or_default();
    if !reached && !ctx.column.unjailed() && !rules.contains(rule) {
        return Outcome::new(
            Verdict::Inconclusive,
            format!(
                "refused, but not for the expected rule ({rule:?}): {}",
                cut(&rules, 300)
            ),
        );
    }
    ctx.judge(
        &out,
        reached,
        if reached {
            format!("the host listener on 127.0.0.1:{port} was reached")
        } else {
            format!("refused and reported: {}", cut(&rules, 200))
        },
    )
}

fn unlisted_name(ctx: &Ctx<'_>) -> Outcome {
    // A real entry (another port) so the list is not empty; the requested one is not on it.
    fetch_localhost(
        ctx,
        |port| vec![format!("127.0.0.1:{}", port.wrapping_add(1).max(1))],
        "is not in network.allow",
    )
}

fn listed_to_loopback(ctx: &Ctx<'_>) -> Outcome {
    fetch_localhost(
        ctx,
        |port| vec![format!("localhost:{port}")],
        "127.0.0.1 is loopback",
    )
}

/// Python that builds a ClientHello naming `name` (the same bytes as cordon-proxy's test
/// builder) and sends it on a tunnel to `host:port`: through the proxy `HTTPS_PROXY` names when
/// set (CONNECT), else straight to the host.
fn hello_payload(host: &str, port: u16, names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "import os, socket, time, struct\n\
         def hello(name):\n\
         \x20   n = name.encode(); entry = b'\\x00' + struct.pack('>H', len(n)) + n\n\
         \x20   sni = struct.pack('>H', len(entry)) + entry; ext = struct.pack('>HH', 0, len(sni)) + sni\n\
         \x20   body = b'\\x03\\x03' + b'\\x2a' * 32 + b'\\x00' + b'\\x00\\x02\\x13\\x01' + b'\\x01\\x00' + struct.pack('>H', len(ext)) + ext\n\
         \x20   hs = b'\\x01' + len(body).to_bytes(3, 'big') + body\n\
         \x20   return b'\\x16\\x03\\x01' + struct.pack('>H', len(hs)) + hs\n\
         proxy = os.environ.get('HTTPS_PROXY', '')\n\
         for name in [{}]:\n\
         \x20   try:\n\
         \x20       if proxy:\n\
         \x20           ph, pp = proxy.split('//')[1].rstrip('/').rsplit(':', 1)\n\
         \x20           s = socket.create_connection((ph, int(pp)), timeout=3)\n\
         \x20           s.sendall(b'CONNECT {host}:{port} HTTP/1.1\\r\\nHost: {host}:{port}\\r\\n\\r\\n')\n\
         \x20           print(name, s.recv(200).split(b'\\r\\n')[0])\n\
         \x20       else:\n\
         \x20           s = socket.create_connection(('{host}', {port}), timeout=3)\n\
         \x20       s.sendall(hello(name)); time.sleep(0.3); s.close(); print('sent', name)\n\
         \x20   except Exception as e: print(name, e)\n\
         print('tried', flush=True)\n",
        names.join(", ")
    )
}

fn tls_fronting(ctx: &Ctx<'_>) -> Outcome {
    let Some((tcp, port)) = tcp_listener() else {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot listen on 127.0.0.1");
    };
    // The honest hello first (it must arrive: the tunnel works), then the fronted one.
    let out = ctx
        .cordon()
        .args(proxy_args(&[
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
        ]))
        .py(&hello_payload(
            "localhost",
            port,
            &["localhost", "fronted.example.com"],
        ))
        .run();
    std::thread::sleep(Duration::from_millis(200));
    let got = accepted(&tcp);
    let has = |needle: &[u8]| {
        got.iter()
            .any(|b| b.windows(needle.len()).any(|w| w == needle))
    };
    if ctx.canary() && !out.out.contains("tried") {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("the payload did not finish: {}", out.brief()),
        );
    }
    let fronted = has(b"fronted.example.com");
    if !fronted && !has(b"localhost") {
        return Outcome::new(
            Verdict::Inconclusive,
            format!(
                "the honest hello (server name localhost) did not arrive either, so the tunnel was never open: {}; {}",
                cut(&out.out, 200),
                out.brief()
            ),
        );
    }
    if !fronted && !reported(ctx, &out, "localhost", port) {
        return Outcome::new(
            Verdict::Inconclusive,
            "the fronted hello did not arrive, but no network-denied violation names the tunnel",
        );
    }
    ctx.judge(
        &out,
        fronted,
        if fronted {
            "the host listener received a hello naming fronted.example.com".to_owned()
        } else {
            "the honest hello arrived; the fronted one was cut before a byte went upstream"
                .to_owned()
        },
    )
}

fn other_jail_proxy(ctx: &Ctx<'_>) -> Outcome {
    let Some((tcp, port)) = tcp_listener() else {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot listen on 127.0.0.1");
    };
    // Jail A may reach the listener, and stays up while B runs.
    let a = ctx
        .cordon()
        .args(proxy_args(&[format!("127.0.0.1:{port}")]))
        .sh("echo \"$HTTP_PROXY\" > a-proxy; sleep 6")
        .spawn();
    let Ok(mut a) = a else {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot start jail A");
    };
    std::thread::sleep(Duration::from_millis(800));
    // Jail B may reach nothing of the host's; it asks every proxy address it can think of.
    let script = format!(
        "for p in $(cat a-proxy 2>/dev/null) \"$HTTP_PROXY\" http://127.0.0.1:3128 http://localhost:3128 socks5h://127.0.0.1:3128; do \
         curl -sS --max-time 3 -o /dev/null -x $p http://127.0.0.1:{port}/; done; \
         for a in $(ip -o -4 addr show 2>/dev/null | awk '{{print $4}}' | cut -d/ -f1); do \
         curl -sS --max-time 2 -o /dev/null -x http://$a:3128 http://127.0.0.1:{port}/; done; echo tried"
    );
    let out = ctx
        .cordon()
        .args(proxy_args(&["unrelated.test".into()]))
        .sh(&script)
        .run();
    let _ = a.kill();
    let _ = a.wait();
    std::thread::sleep(Duration::from_millis(100));
    let reached = !accepted(&tcp).is_empty();
    if ctx.canary() && !out.out.contains("tried") {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("curl did not run: {}", out.brief()),
        );
    }
    if !reached && !reported(ctx, &out, "127.0.0.1", port) {
        return Outcome::new(
            Verdict::Inconclusive,
            "not reached, but jail B's own proxy did not report refusing 127.0.0.1 either: the request never reached a proxy",
        );
    }
    ctx.judge(
        &out,
        reached,
        if reached {
            format!("jail B reached 127.0.0.1:{port}, which only jail A's list allows")
        } else {
            "jail B's requests met only its own proxy, which refused them".to_owned()
        },
    )
}

/// Every process on the host: pid → parent pid.
fn parents() -> std::collections::BTreeMap<u32, u32> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            out.insert(pid, ppid);
        }
    }
    out
}

/// `root` and every process below it.
fn tree(root: u32) -> Vec<u32> {
    let parents = parents();
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| **pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// The socket inodes `pid` holds open.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|f| std::fs::read_link(f.path()).ok())
        .filter_map(|l| {
            l.to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// The listening TCP sockets of `pid`'s network namespace: (inode, local port).
fn listening(pid: u32) -> Vec<(u64, u16)> {
    let mut out = Vec::new();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if let (true, Some(port), Ok(inode)) = (*state == "0A", port, inode.parse()) {
                out.push((inode, port));
            }
        }
    }
    out
}

/// Which processes of the host hold one of `inodes`: (pid, inode).
fn holders(inodes: &[u64]) -> Vec<(u32, u64)> {
    parents()
        .keys()
        .flat_map(|pid| {
            socket_inodes(*pid)
                .into_iter()
                .filter(|i| inodes.contains(i))
                .map(move |i| (*pid, i))
        })
        .collect()
}

fn killed_launcher(ctx: &Ctx<'_>) -> Outcome {
    let python = ctx.python();
    // The payload's own listener, in the background, beside the proxy's.
    let script = format!(
        "{python} -c 'import os, socket, time\ns = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()\nopen(\"proxy-port\", \"w\").write(os.environ.get(\"HTTP_PROXY\", \":0\").rsplit(\":\", 1)[1])\nopen(\"listening\", \"w\").write(str(s.getsockname()[1]))\ntime.sleep(60)' & sleep 60"
    );
    let spawned = ctx
        .cordon()
        .args(proxy_args(&["unrelated.test".into()]))
        .sh(&script)
        .spawn();
    let Ok(mut child) = spawned else {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot start the run");
    };
    let pid = child.id();
    let started = super::harness::wait_for(Duration::from_secs(20), || {
        ctx.written("listening").is_some() || matches!(child.try_wait(), Ok(Some(_)))
    });
    if ctx.written("listening").is_none() {
        let _ = child.kill();
        let _ = child.wait();
        let printed = std::fs::read_to_string(ctx.dir.join("spawned.out")).unwrap_or_default();
        return Outcome::new(
            Verdict::Inconclusive,
            format!(
                "the payload's listener never came up (started: {started}): {}",
                cut(&printed, 300)
            ),
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    // Every listener of the run: in the namespaces of its processes, held by one of them.
    let procs = tree(pid);
    let held: Vec<u64> = procs.iter().flat_map(|p| socket_inodes(*p)).collect();
    let mut ours: Vec<(u64, u16)> = procs
        .iter()
        .flat_map(|p| listening(*p))
        .filter(|(i, _)| held.contains(i))
        .collect();
    ours.sort_unstable();
    ours.dedup();
    // The proxy's port, as the payload's environment named it (3128 in a namespace of the
    // jail's own, one the kernel chose on the host's loopback under the Landlock backend).
    let proxy_port: Option<u16> = ctx
        .written("proxy-port")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| t.trim().parse().ok());
    let proxy_seen = ours.iter().any(|(_, port)| Some(*port) == proxy_port);
    if !ctx.column.unjailed() && (!proxy_seen || ours.len() < 2) {
        let _ = child.kill();
        let _ = child.wait();
        return Outcome::new(
            Verdict::Inconclusive,
            format!(
                "harness: the run's listeners were not found (proxy's and the payload's): {ours:?}"
            ),
        );
    }
    if ours.is_empty() {
        let _ = child.kill();
        let _ = child.wait();
        return Outcome::new(
            Verdict::Inconclusive,
            "harness: the payload's listener was not found",
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    let inodes: Vec<u64> = ours.iter().map(|(i, _)| *i).collect();
    let gone = super::harness::wait_for(Duration::from_secs(10), || holders(&inodes).is_empty());
    let left = holders(&inodes);
    // Without a jail nothing reaps the background listener: end it here.
    for (p, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &p.to_string()])
            .status();
    }
    let out = RunOut {
        code: None,
        out: String::new(),
        ..RunOut::default()
    };
    let escaped = !gone && !left.is_empty();
    let detail = if escaped {
        format!("still listening after the launcher was killed: {left:?} of {ours:?}")
    } else {
        format!(
            "every listener of the run ({ours:?}, the proxy's at {proxy_port:?}) was gone once the launcher was killed"
        )
    };
    ctx.judge(&out, escaped, detail)
}

/// A host-side server of the harness (python3 on the host), ended when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves `dir` over HTTP on 127.0.0.1 (`tls`: over HTTPS with `cert`/`key`); the port it got.
fn serve(dir: &Path, tls: Option<(&Path, &Path)>) -> Result<Server, String> {
    let code = format!(
        "import http.server, ssl, functools, sys\n\
         class Quiet(http.server.SimpleHTTPRequestHandler):\n\
         \x20   def log_message(self, *a): pass\n\
         s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory={dir:?}))\n\
         tls = {tls}\n\
         if tls:\n\
         \x20   c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain(*tls)\n\
         \x20   s.socket = c.wrap_socket(s.socket, server_side=True)\n\
         print(s.server_address[1], flush=True)\n\
         s.serve_forever()\n",
        dir = dir.display().to_string(),
        tls = match tls {
            Some((c, k)) => format!(
                "({:?}, {:?})",
                c.display().to_string(),
                k.display().to_string()
            ),
            None => "None".into(),
        }
    );
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(code)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("harness: cannot start a local server: {e}"))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    match line.trim().parse::<u16>() {
        Ok(port) => Ok(Server { child, port }),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!(
                "harness: the local server did not start ({line:?})"
            ))
        }
    }
}

/// A directory of the case, outside the workspace, that the servers serve.
fn www(ctx: &Ctx<'_>) -> Result<std::path::PathBuf, String> {
    let dir = ctx.dir.join("www");
    std::fs::create_dir_all(&dir).map_err(|e| format!("harness: {e}"))?;
    Ok(dir)
}

fn host(argv: &[&str], cwd: &Path) -> Result<(), String> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| format!("harness: {}: {e}", argv[0]))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "harness: {argv:?} failed: {}",
            cut(&String::from_utf8_lossy(&out.stderr), 200)
        ))
    }
}

fn needs(ctx: &Ctx<'_>, tool: &str, probe: &[&str]) -> Option<Outcome> {
    (!ctx.on_host(probe, &[])).then(|| {
        Outcome::new(
            Verdict::Unavailable,
            format!("{tool} does not work on the host for uid {}", ctx.ids.uid),
        )
    })
}

fn proxy_curl(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = needs(ctx, "curl", &["curl", "--version"]) {
        return o;
    }
    let fixture = (|| -> Result<(Server, Server, String), String> {
        let dir = www(ctx)?;
        let sentinel = format!("served-{}", ctx.token);
        std::fs::write(dir.join("file"), &sentinel).map_err(|e| e.to_string())?;
        let (cert, key) = (ctx.dir.join("cert.pem"), ctx.dir.join("key.pem"));
        host(
            &[
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-keyout",
                &key.display().to_string(),
                "-out",
                &cert.display().to_string(),
            ],
            &ctx.dir,
        )?;
        let pem = std::fs::read_to_string(&cert).map_err(|e| e.to_string())?;
        ctx.file("trusted.pem", &pem)?;
        Ok((
            serve(&dir, None)?,
            serve(&dir, Some((&cert, &key)))?,
            sentinel,
        ))
    })();
    let (plain, tls, sentinel) = match fixture {
        Ok(f) => f,
        Err(e) => return Outcome::new(Verdict::Inconclusive, e),
    };
    let (p, q) = (plain.port, tls.port);
    let out = ctx
        .cordon()
        .args(proxy_args(&[
            format!("127.0.0.1:{p}"),
            format!("localhost:{q}"),
            format!("127.0.0.1:{q}"),
        ]))
        .sh(&format!(
            "curl -sS --max-time 10 http://127.0.0.1:{p}/file; echo; \
             curl -sS --max-time 10 --cacert trusted.pem https://localhost:{q}/file; echo; \
             curl -sS --max-time 10 --cacert trusted.pem https://127.0.0.1:{q}/file; echo; \
             curl -sS --max-time 10 -x \"$ALL_PROXY\" http://127.0.0.1:{p}/file; echo"
        ))
        .run();
    let lines = out.out.lines().filter(|l| *l == sentinel).count();
    let counted = out
        .json
        .as_ref()
        .and_then(|j| j["network"]["destinations"].as_array().cloned())
        .unwrap_or_default();
    let bytes_in: u64 = counted.iter().filter_map(|d| d["bytes_in"].as_u64()).sum();
    let ok = lines == 4 && counted.len() == 3 && bytes_in > 0 && out.code == Some(0);
    ctx.control(
        &out,
        ok,
        format!(
            "{lines}/4 fetches returned the file; {} destinations counted ({bytes_in} bytes in)",
            counted.len()
        ),
    )
}

fn proxy_git(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = needs(ctx, "git", &["git", "--version"]) {
        return o;
    }
    let message = format!("proxied-{}", ctx.token);
    let fixture = (|| -> Result<Server, String> {
        let dir = www(ctx)?;
        let src = ctx.dir.join("src");
        std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
        host(&["git", "init", "-q", "."], &src)?;
        host(
            &[
                "git",
                "-c",
                "user.email=escape@example.com",
                "-c",
                "user.name=escape",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &message,
            ],
            &src,
        )?;
        host(
            &[
                "git",
                "clone",
                "-q",
                "--bare",
                &src.display().to_string(),
                "repo.git",
            ],
            &dir,
        )?;
        host(&["git", "update-server-info"], &dir.join("repo.git"))?;
        serve(&dir, None)
    })();
    let server = match fixture {
        Ok(s) => s,
        Err(e) => return Outcome::new(Verdict::Inconclusive, e),
    };
    let p = server.port;
    let out = ctx
        .cordon()
        .args(proxy_args(&[format!("127.0.0.1:{p}")]))
        .sh(&format!(
            "mkdir -p clones && git clone -q http://127.0.0.1:{p}/repo.git clones/c && git -C clones/c log --format=%s"
        ))
        .run();
    let ok = out.code == Some(0) && out.out.lines().any(|l| l == message);
    ctx.control(&out, ok, "git clone over HTTP through the proxy")
}

fn proxy_pip(ctx: &Ctx<'_>) -> Outcome {
    let python = ctx.python();
    if let Some(o) = needs(ctx, "pip", &[&python, "-m", "pip", "--version"]) {
        return o;
    }
    let fixture = (|| -> Result<Server, String> {
        let dir = www(ctx)?;
        let wheel = dir.join("cordonprobe-0.1-py3-none-any.whl");
        host(
            &[
                "python3",
                "-c",
                &format!(
                    "import zipfile\nz = zipfile.ZipFile({:?}, 'w')\n\
                     z.writestr('cordonprobe/__init__.py', '')\n\
                     z.writestr('cordonprobe-0.1.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: cordonprobe\\nVersion: 0.1\\n')\n\
                     z.writestr('cordonprobe-0.1.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: cordon-escape\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
                     z.writestr('cordonprobe-0.1.dist-info/RECORD', '')\nz.close()\n",
                    wheel.display().to_string()
                ),
            ],
            &ctx.dir,
        )?;
        serve(&dir, None)
    })();
    let server = match fixture {
        Ok(s) => s,
        Err(e) => return Outcome::new(Verdict::Inconclusive, e),
    };
    let p = server.port;
    let out = ctx
        .cordon()
        .args(proxy_args(&[format!("127.0.0.1:{p}")]))
        .env("PIP_NO_CACHE_DIR", "1")
        .sh(&format!(
            "mkdir -p dl && {python} -m pip download -q --disable-pip-version-check --no-index --find-links http://127.0.0.1:{p}/ --trusted-host 127.0.0.1 --dest dl cordonprobe==0.1 && ls dl"
        ))
        .run();
    let ok = out.code == Some(0) && out.out.contains("cordonprobe-0.1-py3-none-any.whl");
    ctx.control(&out, ok, "pip download through the proxy")
}

fn proxy_npm(ctx: &Ctx<'_>) -> Outcome {
    if let Some(o) = needs(ctx, "npm", &["npm", "--version"]) {
        return o;
    }
    let fixture = (|| -> Result<Server, String> {
        let dir = www(ctx)?;
        let pkg = ctx.dir.join("pkg/package");
        std::fs::create_dir_all(&pkg).map_err(|e| e.to_string())?;
        std::fs::write(
            pkg.join("package.json"),
            "{\"name\":\"cordonprobe\",\"version\":\"1.0.0\"}\n",
        )
        .map_err(|e| e.to_string())?;
        host(
            &[
                "tar",
                "-czf",
                &dir.join("cordonprobe-1.0.0.tgz").display().to_string(),
                "-C",
                &ctx.dir.join("pkg").display().to_string(),
                "package",
            ],
            &ctx.dir,
        )?;
        let server = serve(&dir, None)?;
        // The packument names the tarball on the server's port, with its digests.
        let digest = |algo: &str| -> Result<String, String> {
            let out = Command::new("openssl")
                .args(["dgst", &format!("-{algo}"), "-binary"])
                .arg(dir.join("cordonprobe-1.0.0.tgz"))
                .output()
                .map_err(|e| e.to_string())?;
            Ok(out.stdout.iter().map(|b| format!("{b:02x}")).collect())
        };
        let sha1 = digest("sha1")?;
        let sha512_hex = digest("sha512")?;
        let bytes: Vec<u8> = (0..sha512_hex.len())
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(&sha512_hex[i..i + 2], 16).ok())
            .collect();
        let integrity = format!("sha512-{}", base64(&bytes));
        std::fs::write(
            dir.join("cordonprobe"),
            format!(
                "{{\"name\":\"cordonprobe\",\"dist-tags\":{{\"latest\":\"1.0.0\"}},\"versions\":{{\"1.0.0\":{{\"name\":\"cordonprobe\",\"version\":\"1.0.0\",\"dist\":{{\"tarball\":\"http://127.0.0.1:{}/cordonprobe-1.0.0.tgz\",\"shasum\":\"{sha1}\",\"integrity\":\"{integrity}\"}}}}}}}}",
                server.port
            ),
        )
        .map_err(|e| e.to_string())?;
        Ok(server)
    })();
    let server = match fixture {
        Ok(s) => s,
        Err(e) => return Outcome::new(Verdict::Inconclusive, e),
    };
    let p = server.port;
    let out = ctx
        .cordon()
        .args(proxy_args(&[format!("127.0.0.1:{p}")]))
        .sh(&format!(
            "mkdir -p npm/packs && export npm_config_cache=$PWD/npm/cache npm_config_update_notifier=false; \
             npm view cordonprobe version --registry http://127.0.0.1:{p}/ && \
             cd npm/packs && npm pack -q cordonprobe --registry http://127.0.0.1:{p}/ && ls"
        ))
        .run();
    let ok = out.code == Some(0)
        && out.out.lines().any(|l| l == "1.0.0")
        && out.out.contains("cordonprobe-1.0.0.tgz");
    ctx.control(&out, ok, "npm view and npm pack through the proxy")
}

/// Standard base64 with padding (the packument's `integrity`).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(super::base64(b"Man"), "TWFu");
        assert_eq!(super::base64(b"Ma"), "TWE=");
        assert_eq!(super::base64(b"M"), "TQ==");
        assert_eq!(super::base64(b""), "");
    }
}
