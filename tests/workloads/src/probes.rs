//! The probes: one thing each that test suites take for granted, as a short script that exits 0
//! when it works and prints what failed otherwise. Each runs on the host and in the jail, as
//! root and as the unprivileged user, in a workspace of its own.

/// One probe.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    pub name: &'static str,
    pub what: &'static str,
    /// Run with `sh -eu -c` in an empty workspace (`python3` is the caller's).
    pub script: &'static str,
}

pub const PROBES: &[Probe] = &[
    Probe {
        name: "dev-shm",
        what: "a file in /dev/shm, a POSIX shared-memory segment and a semaphore (multiprocessing.Lock)",
        script: r#"f=/dev/shm/cordon-workloads-$$; echo x > "$f"; test "$(cat "$f")" = x; rm "$f"
python3 -c '
from multiprocessing import shared_memory, Lock
m = shared_memory.SharedMemory(create=True, size=4096)
m.buf[0] = 7
n = shared_memory.SharedMemory(name=m.name)
assert n.buf[0] == 7
n.close(); m.close(); m.unlink()
with Lock():
    pass
'"#,
    },
    Probe {
        name: "multiprocessing",
        what: "a process pool (fork and spawn start methods), a queue between processes",
        script: r#"cat > mp_probe.py <<'END'
import multiprocessing as mp
def sq(x): return x * x
def put(q): q.put("hello")
if __name__ == "__main__":
    for method in ("fork", "spawn"):
        ctx = mp.get_context(method)
        with ctx.Pool(2) as p:
            assert p.map(sq, range(20)) == [x * x for x in range(20)], method
    q = mp.Queue(); pr = mp.Process(target=put, args=(q,)); pr.start()
    assert q.get(timeout=30) == "hello"; pr.join(); assert pr.exitcode == 0
END
python3 mp_probe.py"#,
    },
    Probe {
        name: "unix-socket",
        what: "an AF_UNIX stream server and client in the workspace (what multiprocessing's forkserver, asyncio's unix servers and many daemons' tests use), and socketpair",
        script: r#"python3 -c '
import os, socket, threading
a, b = socket.socketpair(); a.sendall(b"pair"); assert b.recv(10) == b"pair"
path = os.path.join(os.getcwd(), "probe.sock")
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); srv.bind(path); srv.listen(1)
def serve():
    c, _ = srv.accept(); c.sendall(c.recv(100).upper()); c.close()
t = threading.Thread(target=serve); t.start()
cl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); cl.connect(path); cl.sendall(b"ping")
assert cl.recv(100) == b"PING"; cl.close(); t.join(); srv.close()
'
cat > fs_probe.py <<'END'
import multiprocessing as mp
def sq(x): return x * x
if __name__ == "__main__":
    with mp.get_context("forkserver").Pool(2) as p:
        assert p.map(sq, range(5)) == [0, 1, 4, 9, 16]
END
python3 fs_probe.py"#,
    },
    Probe {
        name: "pty",
        what: "os.openpty and pty.fork: a child on a new terminal writes, the parent reads",
        script: r#"python3 -c '
import os, pty
m, s = os.openpty(); os.write(s, b"ping\n"); assert os.read(m, 100).startswith(b"ping")
os.close(m); os.close(s)
pid, fd = pty.fork()
if pid == 0:
    os.write(1, b"from-child:" + str(os.isatty(0)).encode() + b"\n"); os._exit(0)
out = b""
while True:
    try: chunk = os.read(fd, 100)
    except OSError: break
    if not chunk: break
    out += chunk
_, status = os.waitpid(pid, 0)
assert b"from-child:True" in out and status == 0, (out, status)
'"#,
    },
    Probe {
        name: "inotify",
        what: "inotify_init1 + inotify_add_watch on the workspace; a file created there is reported",
        script: r#"python3 -c '
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd < 0: raise OSError(ctypes.get_errno(), "inotify_init1")
wd = libc.inotify_add_watch(fd, b".", 0x100)
if wd < 0: raise OSError(ctypes.get_errno(), "inotify_add_watch")
open("watched-file", "w").close()
buf = os.read(fd, 4096)
_, mask, _, n = struct.unpack_from("iIII", buf)
assert mask & 0x100 and buf[16:16 + n].rstrip(b"\0") == b"watched-file", buf
'"#,
    },
    Probe {
        name: "loopback-tcp",
        what: "a TCP server and a client in one process tree, on 127.0.0.1 and on ::1",
        script: r#"python3 -c '
import socket, threading
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    srv = socket.socket(fam, socket.SOCK_STREAM); srv.bind((host, 0)); srv.listen(1)
    port = srv.getsockname()[1]
    def serve():
        c, _ = srv.accept(); c.sendall(c.recv(100).upper()); c.close()
    t = threading.Thread(target=serve); t.start()
    cl = socket.create_connection((host, port), timeout=10); cl.sendall(b"ping")
    assert cl.recv(100) == b"PING", host
    cl.close(); t.join(); srv.close()
'"#,
    },
    Probe {
        name: "loopback-udp",
        what: "a UDP server in a child process and a client, on 127.0.0.1 and on ::1",
        script: r#"python3 -c '
import os, socket
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    srv = socket.socket(fam, socket.SOCK_DGRAM); srv.bind((host, 0)); port = srv.getsockname()[1]
    pid = os.fork()
    if pid == 0:
        data, addr = srv.recvfrom(100); srv.sendto(data.upper(), addr); os._exit(0)
    srv.close()
    cl = socket.socket(fam, socket.SOCK_DGRAM); cl.settimeout(10); cl.sendto(b"ping", (host, port))
    assert cl.recv(100) == b"PING", host
    assert os.waitpid(pid, 0)[1] == 0
'"#,
    },
    Probe {
        name: "setsid",
        what: "setsid(1) and os.setsid: a child leads a new session",
        script: r#"sid=$(setsid sh -c 'ps -o sid= -p $$' | tr -d ' '); me=$(ps -o sid= -p $$ | tr -d ' ')
test -n "$sid" && test "$sid" != "$me"
python3 -c '
import os
pid = os.fork()
if pid == 0:
    os.setsid()
    os._exit(0 if os.getsid(0) == os.getpid() else 1)
assert os.waitpid(pid, 0)[1] == 0
'"#,
    },
    Probe {
        name: "signals",
        what: "kill(1) of a background job; a child signals its parent (SIGUSR1) and a sibling (SIGTERM)",
        script: r#"sleep 60 & pid=$!; kill -TERM "$pid"; st=0; wait "$pid" || st=$?; test "$st" = 143
python3 -c '
import os, signal, subprocess, sys
got = []
signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
sib = subprocess.Popen(["sleep", "60"])
child = subprocess.Popen([sys.executable, "-c",
    "import os, signal, sys; os.kill(int(sys.argv[1]), signal.SIGTERM); os.kill(os.getppid(), signal.SIGUSR1)",
    str(sib.pid)])
assert child.wait(timeout=30) == 0
assert sib.wait(timeout=30) == -signal.SIGTERM
import time
for _ in range(200):
    if got: break
    time.sleep(0.05)
assert got, "no SIGUSR1 from the child"
'"#,
    },
    Probe {
        name: "ps",
        what: "ps -e lists the jail's own processes (itself and its shell), exit 0",
        script: r#"out=$(ps -e -o pid=,comm=); echo "$out" | grep -q ' ps$'; echo "$out" | grep -q "^ *$$ ""#,
    },
    Probe {
        name: "tar-owner",
        what: "tar x with tar's defaults of an archive whose files belong to uid 1000 (as npm, PyPI and Debian tarballs do): root's tar gives each file its archived owner",
        script: r#"mkdir in out; echo x > in/f; tar --owner=1000 --group=1000 -czf t.tgz -C in f
tar -xzf t.tgz -C out; test "$(cat out/f)" = x"#,
    },
    Probe {
        name: "npm-run",
        what: "npm run of a package.json script in the workspace (npm reads and writes its cache and logs under the home)",
        script: r#"printf '{"name":"probe","version":"1.0.0","scripts":{"hello":"echo npm-ran-$npm_package_name"}}' > package.json
out=$(npm run --silent hello 2>&1); echo "$out"; test "$out" = npm-ran-probe"#,
    },
    Probe {
        name: "home-write",
        what: "a tool writes its state under the home without a variable (~/.cache/<tool>, ~/.config/<tool>, a SQLite database in ~/.local/share/<tool>) and reads it back",
        script: r#"t=cordon-probe-$$; mkdir -p ~/.cache/$t ~/.config/$t ~/.local/share/$t
echo x > ~/.cache/$t/state; echo y > ~/.config/$t/settings
python3 -c '
import os, sqlite3, sys
db = sqlite3.connect(os.path.expanduser("~/.local/share/" + sys.argv[1] + "/index.db"))
db.execute("create table t (v)"); db.execute("insert into t values (1)"); db.commit()
assert db.execute("select v from t").fetchone() == (1,)
' $t
test "$(cat ~/.cache/$t/state ~/.config/$t/settings)" = "x
y"
rm -rf ~/.cache/$t ~/.config/$t ~/.local/share/$t"#,
    },
];
