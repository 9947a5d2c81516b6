//! Classes 6 and 15: Unix-domain sockets. The jail may make its own (a server and a client on a
//! socket file in the workspace or its /tmp, an abstract name, Python's `multiprocessing`
//! manager); the host's listening sockets in every tree its view shows stay out of reach.
//! Judged on the host: each listener the harness makes reports whether anything connected.
//! Under the Landlock backend the same holds through its supervisor, which performs every bind
//! and connect and lets the jail reach only socket files and abstract names it bound itself.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use super::harness::{Ctx, cut};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    vec![
        Case::attack(
            "net/host-sockets",
            Class::Network,
            "connect to host sockets listening in trees the jail sees: a host directory (like /var/lib), a read-only --read grant, /var/tmp",
            host_sockets,
        ),
        Case::attack(
            "net/host-sock-ws",
            Class::Network,
            "connect to a host socket listening in the workspace (a session refuses the workspace instead)",
            workspace_socket,
        ),
        Case::attack(
            "net/abstract-net-allowed",
            Class::Network,
            "with --network allow (no network namespace of the jail's own): connect to an abstract Unix socket the host listens on",
            abstract_network_allowed,
        ),
        Case::attack(
            "use/unix-sockets",
            Class::Usability,
            "a jailed server and client on a socket file in the workspace and in /tmp, an abstract socket, multiprocessing.Manager()",
            jailed_sockets,
        )
        .not_in_mutants(),
    ]
}

fn harness_err(e: impl std::fmt::Display) -> Outcome {
    Outcome::new(Verdict::Inconclusive, format!("harness: {e}"))
}

/// A listening socket the harness owns. Its file stays when it closes, and its case directory
/// until the suite's end: a jail that starts meanwhile may have read it from the kernel's list,
/// and bubblewrap cannot mask a file that is gone (docs/limits.md).
fn listen(ctx: &Ctx<'_>, path: &Path) -> Result<UnixListener, String> {
    // Other jails starting meanwhile mount over this socket: its directory must outlive the case.
    std::fs::write(ctx.dir.join(super::harness::KEEP_UNTIL_END), "")
        .map_err(|e| format!("{}: {e}", ctx.dir.display()))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let _ = std::fs::remove_file(path);
    let socket = UnixListener::bind(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // Any user may connect: the jail's user is not what keeps it out.
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777));
    let _ = socket.set_nonblocking(true);
    ctx.own(path)?;
    Ok(socket)
}

fn connect_all(paths: &[String]) -> String {
    format!(
        "import socket\n\
         for p in {paths:?}:\n\
         \x20   try:\n\
         \x20       s = socket.socket(socket.AF_UNIX); s.connect(p); s.send(b'hi'); print('CONNECTED', p)\n\
         \x20   except Exception as e: print(p, e)\n"
    )
}

fn host_sockets(ctx: &Ctx<'_>) -> Outcome {
    /// /var/tmp is the host's: the harness's directory there goes with the case.
    struct RemoveDir(PathBuf);
    impl Drop for RemoveDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let granted = ctx.home.join("granted");
    let var_tmp = RemoveDir(PathBuf::from(format!(
        "/var/tmp/cordon-escape-{}",
        ctx.token
    )));
    let places = [
        ("host directory", ctx.outside.join("run/db.sock")),
        ("read-only grant", granted.join("agent.sock")),
        ("/var/tmp", var_tmp.0.join("shared.sock")),
    ];
    let mut listeners = Vec::new();
    for (_, path) in &places {
        match listen(ctx, path) {
            Ok(l) => listeners.push(l),
            Err(e) => return harness_err(e),
        }
    }
    let _ = std::fs::set_permissions(&granted, std::fs::Permissions::from_mode(0o755));
    let paths: Vec<String> = places
        .iter()
        .map(|(_, p)| p.display().to_string())
        .collect();
    let mut run = ctx.cordon();
    if !ctx.column.unjailed() {
        run = run.args(["--read".to_owned(), granted.display().to_string()]);
    }
    let out = run.py(&connect_all(&paths)).run();
    let reached: Vec<&str> = places
        .iter()
        .zip(&listeners)
        .filter(|(_, l)| l.accept().is_ok())
        .map(|((name, _), _)| *name)
        .collect();
    ctx.judge(
        &out,
        !reached.is_empty(),
        format!(
            "host listeners that saw a connection: {reached:?}; {}",
            cut(&out.out, 300)
        ),
    )
}

fn workspace_socket(ctx: &Ctx<'_>) -> Outcome {
    let path = ctx.work.join("scratch/s");
    let listener = match listen(ctx, &path) {
        Ok(l) => l,
        Err(e) => return harness_err(e),
    };
    let out = ctx.py(&connect_all(&[path.display().to_string()]));
    let reached = listener.accept().is_ok();
    // A session walks its roots first and refuses a workspace holding a socket (cordon-scan).
    let refused = !ctx.column.unjailed()
        && matches!(out.code, Some(125 | 126))
        && out.all().contains("is a Unix socket")
        && !ctx.canary();
    if refused && !reached {
        return Outcome::new(
            Verdict::Blocked,
            format!("refused before anything ran: {}", cut(&out.all(), 200)),
        );
    }
    ctx.judge(
        &out,
        reached,
        format!(
            "host listener saw a connection: {reached}; {}",
            cut(&out.out, 200)
        ),
    )
}

/// The host's abstract names are shared once the jail keeps the host's network namespace; the
/// second wall's Landlock scope (ABI 6) is what refuses them.
fn abstract_network_allowed(ctx: &Ctx<'_>) -> Outcome {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("cordon-escape-allowed-{}", ctx.token);
    let listener = match std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
        .and_then(|a| UnixListener::bind_addr(&a))
    {
        Ok(l) => l,
        Err(e) => return harness_err(e),
    };
    let _ = listener.set_nonblocking(true);
    let code = format!(
        "import socket\n\
         try:\n\
         \x20   s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); s.send(b'hi'); print('CONNECTED')\n\
         except Exception as e: print(e)\n"
    );
    let mut run = ctx.cordon();
    if !ctx.column.unjailed() {
        run = run.args(["--network", "allow"]);
    }
    let out = run.py(&code).run();
    let reached = listener.accept().is_ok();
    ctx.judge(
        &out,
        reached,
        format!(
            "host abstract listener saw a connection: {reached}; {}",
            cut(&out.out, 120)
        ),
    )
}

fn jailed_sockets(ctx: &Ctx<'_>) -> Outcome {
    let code = "import os, socket, tempfile, multiprocessing\n\
         def serve_and_connect(path):\n\
         \x20   s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(1)\n\
         \x20   c = socket.socket(socket.AF_UNIX); c.connect(path); c.sendall(b'ping')\n\
         \x20   a, _ = s.accept(); got = a.recv(4).decode()\n\
         \x20   if not path.startswith('\\0'): os.unlink(path)\n\
         \x20   return got\n\
         print('workspace', serve_and_connect(os.path.join(os.getcwd(), 'scratch', 'srv.sock')))\n\
         print('tmp', serve_and_connect(os.path.join(tempfile.gettempdir(), 'srv-%d.sock' % os.getpid())))\n\
         name = '\\0cordon-jailed-%d' % os.getpid()\n\
         print('abstract', serve_and_connect(name))\n\
         if __name__ == '__main__':\n\
         \x20   with multiprocessing.Manager() as m:\n\
         \x20       d = m.dict(); d['k'] = 'manager'; print('mp', d['k'])\n";
    if let Err(e) = ctx.scratch() {
        return harness_err(e);
    }
    let out = ctx.py(code);
    let want = ["workspace ping", "tmp ping", "abstract ping", "mp manager"];
    let missing: Vec<&str> = want
        .iter()
        .copied()
        .filter(|w| !out.out.contains(w))
        .collect();
    ctx.control(
        &out,
        out.code == Some(0) && missing.is_empty(),
        format!("missing: {missing:?}"),
    )
}
