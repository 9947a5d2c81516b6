//! The child: restrict, then try.

use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cordon_landlock::{Abi, Rules, Ruleset};

use crate::{
    ABSTRACT_VAR, PID_VAR, PORT_VAR, RESTRICT_VAR, ROOT_VAR, RULES_VAR, SENTINEL_VAR, TMP_VAR,
};

fn env_path(var: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(var).unwrap())
}

pub fn child(case: &str) {
    let root = env_path(ROOT_VAR);
    if std::env::var(RESTRICT_VAR).as_deref() != Ok("0") {
        let bytes = fs::read(env_path(RULES_VAR)).unwrap();
        let rules = Rules::decode(&bytes).unwrap();
        let abi = Abi::detect().unwrap();
        let (ruleset, report) = Ruleset::create(&rules, abi).unwrap();
        println!("report\t{report}");
        ruleset.restrict_self().unwrap();
        drop(ruleset);
    }
    let ws = root.join("ws");
    let home = root.join("home");
    match case {
        "masks" | "minimal" | "hidden home" => {
            out("read neighbour", fs::read(home.join("notes.txt")));
            out(
                "read neighbour dir file",
                fs::read(home.join(".config/tool.toml")),
            );
            out("read masked file", fs::read(home.join(".netrc")));
            out("read in masked dir", fs::read(home.join(".ssh/id_test")));
            out(
                "read via symlink in home",
                fs::read(home.join("ssh-link/id_test")),
            );
            out(
                "read via symlink in workspace",
                fs::read(ws.join("src/key-link")),
            );
            out("list masked dir", fs::read_dir(home.join(".ssh")));
            out(
                "read sibling created later",
                fs::read(home.join("later.txt")),
            );
            out("read outside tree", fs::read(root.join("outside/file.txt")));
            out("read host tmp sentinel", fs::read(env_path(SENTINEL_VAR)));
            out("exec /bin/true", run_ok(&mut Command::new("/bin/true")));
            out("create in home", create(&home.join("planted")));
        }
        "writes" => {
            let src = ws.join("src");
            out("write existing", write_existing(&src.join("main.rs")));
            out("create in subdir", create(&src.join("new.rs")));
            out("mkdir in subdir", fs::create_dir(src.join("sub")));
            out("create in new subdir", create(&src.join("sub/x")));
            out(
                "rename in subdir",
                fs::rename(src.join("new.rs"), src.join("renamed.rs")),
            );
            out(
                "move between subdirs",
                fs::rename(src.join("renamed.rs"), ws.join("target/moved.rs")),
            );
            out(
                "unlink in subdir",
                fs::remove_file(ws.join("target/moved.rs")),
            );
            out("mkfifo in subdir", mkfifo(&src.join("fifo")));
            out(
                "symlink in subdir",
                std::os::unix::fs::symlink("main.rs", src.join("l")),
            );
            out("mknod char device in subdir", mknod_null(&src.join("null")));
            out(
                "write existing top-level file",
                write_existing(&ws.join("README.md")),
            );
            out("create at top level", create(&ws.join("new-top")));
            out("mkdir at top level", fs::create_dir(ws.join("newdir")));
            out("unlink at top level", fs::remove_file(ws.join("README.md")));
            out("create outside", create(&root.join("outside/new")));
            out(
                "write outside",
                write_existing(&root.join("outside/file.txt")),
            );
            out("truncate outside", truncate(&root.join("outside/file.txt")));
            let tmp = env_path(TMP_VAR);
            out("create in temp dir", create(&tmp.join("x")));
            out("read back in temp dir", fs::read(tmp.join("x")));
            out("write /dev/null", write_existing(Path::new("/dev/null")));
            out("read /dev/zero", read_some(Path::new("/dev/zero")));
        }
        "protected" => {
            let git = ws.join(".git");
            fs::write(ws.join("src/evil"), "#!/bin/sh\necho pwned\n").unwrap();
            out("write protected file", write_existing(&git.join("config")));
            out("truncate protected file", truncate(&git.join("config")));
            out("unlink protected file", fs::remove_file(git.join("config")));
            out(
                "rename over protected file from subdir",
                fs::rename(ws.join("src/evil"), git.join("config")),
            );
            out(
                "rename over protected file in same dir",
                fs::rename(ws.join("README.md"), ws.join(".envrc")),
            );
            out(
                "write protected top-level file",
                write_existing(&ws.join(".envrc")),
            );
            out(
                "unlink protected top-level file",
                fs::remove_file(ws.join(".envrc")),
            );
            out("create hook", create(&git.join("hooks/pre-commit")));
            out(
                "symlink hook",
                std::os::unix::fs::symlink("../../src/evil", git.join("hooks/pre-commit")),
            );
            out(
                "link hook",
                fs::hard_link(ws.join("src/evil"), git.join("hooks/pre-commit")),
            );
            out(
                "write existing hook",
                write_existing(&git.join("hooks/existing")),
            );
            out(
                "unlink existing hook",
                fs::remove_file(git.join("hooks/existing")),
            );
            out(
                "rename hooks dir",
                fs::rename(git.join("hooks"), git.join("hooks-old")),
            );
            out("rename .git", fs::rename(&git, ws.join("git-old")));
            out("create git lock", create(&git.join("index.lock")));
            out(
                "write existing file in .git",
                write_existing(&git.join("HEAD")),
            );
            out(
                "mkdir in .git/objects",
                fs::create_dir(git.join("objects/ab")),
            );
        }
        "network" => {
            let port: u16 = std::env::var(PORT_VAR).unwrap().parse().unwrap();
            out(
                "tcp connect",
                std::net::TcpStream::connect(("127.0.0.1", port)),
            );
            out("tcp bind", std::net::TcpListener::bind("127.0.0.1:0"));
            let name = std::env::var(ABSTRACT_VAR).unwrap();
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            out(
                "abstract unix connect",
                std::os::unix::net::UnixStream::connect_addr(&addr),
            );
        }
        "signals" => {
            let pid: i32 = std::env::var(PID_VAR).unwrap().parse().unwrap();
            out("probe outside process", kill(pid, 0));
            if std::env::var(RESTRICT_VAR).as_deref() != Ok("0") {
                // Only restricted: a delivered SIGTERM would end the target.
                out("signal outside process", kill(pid, libc::SIGTERM));
            }
            let mut own = Command::new("/bin/sleep").arg("1000").spawn().unwrap();
            out("signal own child", kill(own.id() as i32, libc::SIGKILL));
            let status = own.wait().unwrap();
            out(
                "own child killed",
                if status.signal() == Some(libc::SIGKILL) {
                    Ok(())
                } else {
                    Err(std::io::Error::other(format!("{status}")))
                },
            );
        }
        "make_reg_only" => {
            let dir = root.join("evidence");
            let mut opts = fs::OpenOptions::new();
            opts.write(true).create_new(true);
            out("create and open for writing", opts.open(dir.join("f")));
        }
        other => panic!("unknown case {other}"),
    }
}

fn out<T>(name: &str, result: std::io::Result<T>) {
    let text = match result {
        Ok(_) => "ok".to_owned(),
        Err(e) => format!("errno:{}", e.raw_os_error().unwrap_or(-1)),
    };
    println!("{name}\t{text}");
}

fn create(path: &Path) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(b"planted\n")
}

fn write_existing(path: &Path) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().append(true).open(path)?;
    f.write_all(b"")
}

fn read_some(path: &Path) -> std::io::Result<()> {
    use std::io::Read;
    let mut buf = [0u8; 8];
    fs::File::open(path)?.read_exact(&mut buf)
}

fn run_ok(cmd: &mut Command) -> std::io::Result<()> {
    let status = cmd.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("{status}")))
    }
}

fn cstr(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

fn truncate(path: &Path) -> std::io::Result<()> {
    let c = cstr(path);
    // SAFETY: c is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::truncate(c.as_ptr(), 0) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn mkfifo(path: &Path) -> std::io::Result<()> {
    let c = cstr(path);
    // SAFETY: c is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A device node with `/dev/null`'s numbers: harmless even if it were created.
fn mknod_null(path: &Path) -> std::io::Result<()> {
    let c = cstr(path);
    // SAFETY: c is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn kill(pid: i32, sig: i32) -> std::io::Result<()> {
    // SAFETY: kill takes integers only.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
