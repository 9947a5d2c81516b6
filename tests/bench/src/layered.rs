//! The copy-on-write layer's workloads (issue #30): each command once with `--live` and once
//! with `--layer`, in the same rounds, each mode in a workspace of its own. What a round undoes
//! first (the build the last one committed) is done on the host, and each command
//! is followed by a `sync`, untimed: the 1 GiB copy-up's writeback otherwise lands in the rows
//! after it (measured: a layered `cargo build` after it took twice the live one, alone 1.1×).
//!
//! - 10,000 new files written, then committed (the layer) or already there (live);
//! - one byte appended to a 1 GiB file: the layer copies the file up, then renames it in;
//! - `cargo build` of a real crate without dependencies (`strsim`, from cargo's registry
//!   sources on this machine), offline;
//! - the 10,000 files and the build again under the Landlock backend, whose supervisor performs
//!   every create, rename and write-open (issue #27), against bubblewrap's live runs;
//! - 1,000 round trips over TCP on loopback between a server and a client of the command's own
//!   (the Landlock backend's supervisor performs every bind, connect and addressed send, and
//!   checks each destination in the kernel's tables), against bubblewrap's live runs;
//! - `npm install` of tape's pinned tree (127 packages, the tarballs `cargo xtask workloads
//!   --all` keeps in `/var/lib/cordon-workloads/archives`), offline, live, with the layer and
//!   under the Landlock backend; left out, and said so, where the tarballs are not there;
//! - `/bin/true` with the layer in the empty workspace and in the 100,000-file one (flat in the
//!   workspace's size), and live in the empty one (the layer's cost at launch), five samples a
//!   round.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cordon_test_support::cmd::Cmd;
use cordon_test_support::error::Error;

pub const FILES_LIVE: &str = "10,000 new files: --live";
pub const FILES_LAYER: &str = "10,000 new files: --layer (and their commit)";
pub const APPEND_LIVE: &str = "one byte appended to a 1 GiB file: --live";
pub const APPEND_LAYER: &str = "one byte appended to a 1 GiB file: --layer (copy-up, commit)";
pub const CARGO_LIVE: &str = "cargo build of strsim (no dependencies, offline): --live";
pub const CARGO_LAYER: &str = "cargo build of strsim (no dependencies, offline): --layer";
pub const FILES_BWRAP: &str = "10,000 new files: bubblewrap --live (the next row's reference)";
pub const FILES_LANDLOCK: &str = "10,000 new files: --backend landlock (every create supervised)";
pub const CARGO_BWRAP: &str = "cargo build of strsim (no dependencies, offline): bubblewrap --live (the next row's reference)";
pub const CARGO_LANDLOCK: &str =
    "cargo build of strsim (no dependencies, offline): --backend landlock (supervised)";
pub const LOOPBACK_BWRAP: &str =
    "1,000 TCP round trips on the jail's loopback: bubblewrap --live (the next row's reference)";
pub const LOOPBACK_LANDLOCK: &str =
    "1,000 TCP round trips on loopback: --backend landlock (connects and sends supervised)";
pub const NPM_LIVE: &str = "npm install of tape's tree (127 packages, offline): --live";
pub const NPM_LAYER: &str = "npm install of tape's tree (127 packages, offline): --layer";
pub const NPM_BWRAP: &str = "npm install of tape's tree (127 packages, offline): bubblewrap --live (the next row's reference)";
pub const NPM_LANDLOCK: &str =
    "npm install of tape's tree (127 packages, offline): --backend landlock (supervised)";
pub const TRUE_LIVE: &str =
    "cordon run --live -- /bin/true, empty workspace (the next row's reference)";
pub const TRUE_LAYER_VS_LIVE: &str =
    "cordon run --layer -- /bin/true, empty workspace, against --live";
pub const TRUE_EMPTY: &str = "cordon run --layer -- /bin/true, empty workspace";
pub const TRUE_LARGE: &str = "cordon run --layer -- /bin/true, 100,000-file workspace";

/// Writes 10,000 files into a new directory `out-N` (a new name each round: deleting the last
/// round's 10,000 on the host made the next creations in their directory several times slower,
/// in either mode, with plain bubblewrap too).
fn write_files(round: usize) -> String {
    format!(
        "mkdir out-{round} && cd out-{round} && i=0 && while [ $i -lt 10000 ]; do echo $i > f$i; i=$((i+1)); done"
    )
}

/// The crate the build rows compile, found in cargo's registry sources.
fn strsim_source() -> Result<PathBuf, Error> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or_else(|| Error::Bench("neither CARGO_HOME nor HOME is set".into()))?;
    let src = home.join("registry/src");
    let found = std::fs::read_dir(&src)
        .map_err(|e| Error::Bench(format!("{}: {e}", src.display())))?
        .flatten()
        .filter_map(|index| std::fs::read_dir(index.path()).ok())
        .flat_map(|dir| dir.flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("strsim-"))
        })
        .max();
    found.ok_or_else(|| {
        Error::Bench(format!(
            "no strsim-* crate source below {} (it is a dependency of clap: build the workspace once)",
            src.display()
        ))
    })
}

/// Where `cargo xtask workloads --all` keeps the npm tarballs of tape's tree.
const TAPE_ARCHIVES: &str = "/var/lib/cordon-workloads/archives";

/// The tarballs of tape's tree, when the workloads suite left them here.
fn tape_tarballs() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(TAPE_ARCHIVES)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tgz"))
        .collect();
    found.sort();
    if found.len() < 100 { Vec::new() } else { found }
}

/// The npm rows' command: every tarball of `npm/dl`, installed offline into `npm/`.
const NPM_INSTALL: &str =
    "cd npm && npm install --offline --no-audit --no-fund --ignore-scripts ./dl/*.tgz";

/// An empty project in `dir/npm` (what the last round installed removed, on the host).
fn fresh_npm_project(dir: &Path) -> Result<(), Error> {
    let npm = dir.join("npm");
    remove(&npm.join("node_modules"))?;
    let lock = npm.join("package-lock.json");
    if lock.exists() {
        std::fs::remove_file(&lock)
            .map_err(|e| Error::Bench(format!("{}: {e}", lock.display())))?;
    }
    std::fs::write(
        npm.join("package.json"),
        "{\"name\": \"bench\", \"version\": \"1.0.0\"}\n",
    )
    .map_err(|e| Error::Bench(format!("{}: {e}", npm.display())))
}

fn big_file(path: &Path) -> Result<(), Error> {
    let chunk = vec![0x5au8; 1 << 20];
    let mut f = std::fs::File::create(path)
        .map_err(|e| Error::Bench(format!("{}: {e}", path.display())))?;
    for _ in 0..1024 {
        f.write_all(&chunk)
            .map_err(|e| Error::Bench(format!("{}: {e}", path.display())))?;
    }
    f.sync_all()
        .map_err(|e| Error::Bench(format!("{}: {e}", path.display())))
}

fn remove(path: &Path) -> Result<(), Error> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Bench(format!("{}: {e}", path.display()))),
    }
}

/// One timed `cordon run MODE -- ARGV` in `dir`; a failed command fails the bench.
fn timed(cordon: &Path, mode: &[&str], dir: &Path, argv: &[&str]) -> Result<Duration, Error> {
    let start = Instant::now();
    let out = Command::new(cordon)
        .arg("run")
        .args(mode)
        .arg("--")
        .args(argv)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Error::Bench(format!("{}: {e}", cordon.display())))?;
    let took = start.elapsed();
    // What the command left dirty (a copied-up 1 GiB file) is written back before the next
    // case starts, untimed, so it does not land in another row.
    let _ = Command::new("sync").status();
    if !out.status.success() {
        return Err(Error::Bench(format!(
            "cordon run {mode:?} -- {argv:?} in {}: {}: {}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(took)
}

/// A server and a client of the command's own: 1,000 connections on 127.0.0.1, each a request
/// and its answer. Python's `sendall` is `send(2)`, a `sendto` without a destination, so of each
/// round trip only the `connect` reaches the Landlock backend's supervisor.
const LOOPBACK: &str = r#"
import socket, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(64)
def serve():
    for _ in range(1000):
        c, _ = srv.accept(); c.sendall(c.recv(64)); c.close()
t = threading.Thread(target=serve); t.start()
for _ in range(1000):
    cl = socket.create_connection(srv.getsockname()); cl.sendall(b"ping"); assert cl.recv(64) == b"ping"; cl.close()
t.join()
"#;

/// The rows, in pairs (reference first), as (name, median, samples); the npm rows only where
/// tape's tarballs are.
pub fn run(
    cordon: &Path,
    base: &Path,
    sizes: (&Path, &Path),
    rounds: usize,
) -> Result<Vec<(&'static str, Duration, usize)>, Error> {
    let strsim = strsim_source()?;
    let tarballs = tape_tarballs();
    let mut out = Vec::new();
    let mut samples: Vec<(&'static str, Vec<Duration>)> = [
        FILES_LIVE,
        FILES_LAYER,
        APPEND_LIVE,
        APPEND_LAYER,
        CARGO_LIVE,
        CARGO_LAYER,
        TRUE_EMPTY,
        TRUE_LARGE,
        FILES_BWRAP,
        FILES_LANDLOCK,
        CARGO_BWRAP,
        CARGO_LANDLOCK,
        LOOPBACK_BWRAP,
        LOOPBACK_LANDLOCK,
        NPM_LIVE,
        NPM_LAYER,
        NPM_BWRAP,
        NPM_LANDLOCK,
        TRUE_LIVE,
        TRUE_LAYER_VS_LIVE,
    ]
    .into_iter()
    .map(|n| (n, Vec::new()))
    .collect();
    let modes: [&[&str]; 3] = [&["--live"], &["--layer"], &["--backend", "landlock"]];
    let mut dirs = Vec::new();
    for mode in ["live", "layer", "landlock"] {
        let dir = super::make_dir(&base.join(format!("layered-{mode}")))?;
        big_file(&dir.join("big"))?;
        Cmd::new("cp")
            .arg("-a")
            .arg(&strsim)
            .arg(dir.join("strsim"))
            .run()?;
        if !tarballs.is_empty() {
            let dl = super::make_dir(&dir.join("npm/dl"))?;
            for t in &tarballs {
                let to = dl.join(t.file_name().unwrap_or_default());
                std::fs::copy(t, &to).map_err(|e| {
                    Error::Bench(format!("{} to {}: {e}", t.display(), to.display()))
                })?;
            }
        }
        dirs.push(dir);
    }
    if tarballs.is_empty() {
        eprintln!(
            "bench: the npm rows are left out: no tarballs of tape's tree in {TAPE_ARCHIVES} (`cargo xtask workloads --all` downloads them)"
        );
    }
    let build = ["sh", "-c", "cd strsim && cargo build --offline -q"];
    // One round untimed first: the toolchain's files and the layer's spare directory warm.
    for round in 0..=rounds {
        for (m, mode) in modes.iter().enumerate() {
            let dir = &dirs[m];
            remove(&dir.join("strsim/target"))?;
            let script = write_files(round);
            let files = timed(cordon, mode, dir, &["sh", "-c", &script])?;
            // The 1 GiB append is the layer's copy-up: not measured under Landlock.
            let append = if m == 2 {
                Duration::ZERO
            } else {
                timed(cordon, mode, dir, &["sh", "-c", "echo x >> big"])?
            };
            let cargo = timed(cordon, mode, dir, &build)?;
            // Loopback under bubblewrap's live run and the Landlock backend only.
            let loopback = if m == 1 {
                Duration::ZERO
            } else {
                timed(cordon, mode, dir, &["python3", "-c", LOOPBACK])?
            };
            let npm = if tarballs.is_empty() {
                None
            } else {
                fresh_npm_project(dir)?;
                Some(timed(cordon, mode, dir, &["sh", "-c", NPM_INSTALL])?)
            };
            if round > 0 {
                if let Some(npm) = npm {
                    match m {
                        0 => {
                            samples[14].1.push(npm);
                            samples[16].1.push(npm);
                        }
                        1 => samples[15].1.push(npm),
                        _ => samples[17].1.push(npm),
                    }
                }
                match m {
                    2 => {
                        samples[9].1.push(files);
                        samples[11].1.push(cargo);
                        samples[13].1.push(loopback);
                    }
                    _ => {
                        samples[m].1.push(files);
                        samples[2 + m].1.push(append);
                        samples[4 + m].1.push(cargo);
                    }
                }
                if m == 0 {
                    samples[8].1.push(files);
                    samples[10].1.push(cargo);
                    samples[12].1.push(loopback);
                }
            }
        }
        for _ in 0..5 {
            let live = timed(cordon, &["--live"], sizes.0, &["/bin/true"])?;
            for (i, dir) in [sizes.0, sizes.1].into_iter().enumerate() {
                let took = timed(cordon, &["--layer"], dir, &["/bin/true"])?;
                if round > 0 {
                    samples[6 + i].1.push(took);
                    if i == 0 {
                        samples[18].1.push(live);
                        samples[19].1.push(took);
                    }
                }
            }
        }
    }
    // A pair is empty together (the npm rows without tarballs): left out.
    for (name, mut s) in samples {
        if !s.is_empty() {
            out.push((name, super::median(&mut s), s.len()));
        }
    }
    Ok(out)
}
