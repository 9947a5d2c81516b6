//! `cargo xtask bench`: whole-process launch cost of `cordon run -- /bin/true`, side by side with
//! plain bubblewrap in the same run. Nothing here asserts a time; it measures and prints.
//!
//! Three commands are timed, interleaved round-robin so that machine noise hits all of them alike:
//! - `bwrap (seed flags)`: the seed design's bubblewrap command line, no seccomp;
//! - `bwrap (same isolation)`: exactly the options `cordon explain` prints (every namespace, mount,
//!   mask and environment variable, and the same seccomp program on a descriptor), minus the stage;
//! - `cordon run`: the release CLI, with its probe cache warm (as every run after the first).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::Cmd;
use crate::error::Error;

const BWRAP: &str = "/usr/bin/bwrap";

struct Case {
    name: &'static str,
    command: Command,
    samples: Vec<Duration>,
}

/// Opens `path` for reading *without* close-on-exec, so a child inherits the descriptor.
fn inheritable(path: &Path) -> Result<OwnedFd, Error> {
    rustix::fs::open(path, rustix::fs::OFlags::RDONLY, rustix::fs::Mode::empty())
        .map_err(|e| Error::Bench(format!("cannot open {}: {e}", path.display())))
}

/// Runs the benchmark with `runs` samples per command.
pub fn run(root: &Path, runs: usize) -> Result<(), Error> {
    if !Path::new(BWRAP).exists() {
        return Err(Error::Bench(format!(
            "{BWRAP} is missing: run `cargo xtask ci setup` first"
        )));
    }
    Cmd::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--locked", "-p", "cordon"])
        .current_dir(root)
        .run()?;
    let cordon = root.join("target/release/cordon");
    let work = tempfile_dir()?;

    // The same isolation: cordon's own option list, without the stage bind.
    let explain = Cmd::new(&cordon)
        .args(["explain", "--", "/bin/true"])
        .current_dir(&work)
        .read()?;
    let mut lines: Vec<&str> = explain.lines().skip(1).collect();
    let dash = lines
        .iter()
        .position(|l| *l == "--")
        .ok_or_else(|| Error::Bench("explain printed no `--`".into()))?;
    lines.truncate(dash);
    let mut options: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match lines[i] {
            "--seccomp" => i += 2,
            "--ro-bind" if lines.get(i + 2) == Some(&"/run/cordon/stage") => i += 3,
            other => {
                options.push(other.to_owned());
                i += 1;
            }
        }
    }
    let spec =
        cordon_seccomp::FilterSpec::for_host(true).map_err(|e| Error::Bench(e.to_string()))?;
    let filter = cordon_seccomp::compile(&spec).map_err(|e| Error::Bench(e.to_string()))?;
    let seccomp_path = work.join("filter.bpf");
    std::fs::write(&seccomp_path, filter.bytes()).map_err(|e| Error::Bench(e.to_string()))?;
    let args_path = work.join("args");
    let mut nul = Vec::new();
    for o in &options {
        nul.extend_from_slice(o.as_bytes());
        nul.push(0);
    }
    std::fs::write(&args_path, nul).map_err(|e| Error::Bench(e.to_string()))?;

    // Warm the probe cache (and check every command works) before timing anything.
    Cmd::new(&cordon)
        .args(["run", "--", "/bin/true"])
        .current_dir(&work)
        .run()?;

    let mut seed = Command::new(BWRAP);
    seed.args([
        "--new-session",
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--unshare-net",
        "--tmpfs",
        "/tmp",
    ]);
    seed.arg("--bind")
        .arg(&work)
        .arg(&work)
        .args(["--", "/bin/true"]);

    let mut cases = vec![
        Case {
            name: "/bin/true (no jail)",
            command: Command::new("/bin/true"),
            samples: Vec::new(),
        },
        Case {
            name: "bwrap (seed flags)",
            command: seed,
            samples: Vec::new(),
        },
    ];
    let mut held: Vec<OwnedFd> = Vec::new();
    {
        let seccomp_fd = inheritable(&seccomp_path)?;
        let args_fd = inheritable(&args_path)?;
        let mut same = Command::new(BWRAP);
        same.arg("--args")
            .arg(args_fd.as_raw_fd().to_string())
            .arg("--seccomp")
            .arg(seccomp_fd.as_raw_fd().to_string())
            .args(["--", "/bin/true"]);
        cases.push(Case {
            name: "bwrap (same isolation)",
            command: same,
            samples: Vec::new(),
        });
        held.push(seccomp_fd);
        held.push(args_fd);
    }
    let mut run_cmd = Command::new(&cordon);
    run_cmd.args(["run", "--", "/bin/true"]);
    cases.push(Case {
        name: "cordon run",
        command: run_cmd,
        samples: Vec::new(),
    });
    let mut explain_cmd = Command::new(&cordon);
    explain_cmd.args(["explain", "--", "/bin/true"]);
    cases.push(Case {
        name: "cordon explain (no spawn)",
        command: explain_cmd,
        samples: Vec::new(),
    });

    for case in &mut cases {
        case.command
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    }
    for round in 0..runs + 10 {
        for case in &mut cases {
            // The args descriptor is read by bubblewrap: rewind it before each use.
            for fd in &held {
                let _ = rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(0));
            }
            let start = Instant::now();
            let status = case
                .command
                .status()
                .map_err(|e| Error::Bench(format!("{}: {e}", case.name)))?;
            let took = start.elapsed();
            if !status.success() {
                return Err(Error::Bench(format!("{} failed: {status}", case.name)));
            }
            if round >= 10 {
                case.samples.push(took);
            }
        }
    }
    let median = |s: &mut Vec<Duration>| {
        s.sort();
        s[s.len() / 2]
    };
    let medians: Vec<(&str, Duration)> = cases
        .iter_mut()
        .map(|c| (c.name, median(&mut c.samples)))
        .collect();
    let same = medians
        .iter()
        .find(|(n, _)| *n == "bwrap (same isolation)")
        .map(|(_, d)| *d)
        .unwrap_or_default();
    println!("\nwhole-process launch of /bin/true, {runs} runs each, interleaved; medians");
    println!(
        "{:<28} {:>10} {:>22}",
        "command", "median", "ratio to same isolation"
    );
    for (name, d) in &medians {
        let ratio = d.as_secs_f64() / same.as_secs_f64().max(1e-9);
        println!(
            "{name:<28} {:>8.2} ms {ratio:>21.2}×",
            d.as_secs_f64() * 1000.0
        );
    }
    drop(held);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn tempfile_dir() -> Result<PathBuf, Error> {
    let dir = std::env::temp_dir().join(format!("cordon-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Bench(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}
