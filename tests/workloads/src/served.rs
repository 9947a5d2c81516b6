//! `--serve`: the jailed column through a `cordon serve` session, as a harness runs commands.
//! The session's first request is `true`; the item's script is the second, so it is handed to
//! the jail the session built ahead while it answered the first — in the default mode a
//! layered jail whose stage mounts the layer only once the command comes. The answer's
//! `built_ahead` must say so; its captured output is the run's log.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cordon_test_support::error::Error;

use crate::fail;

/// Runs the session `cmd` (`cordon serve …` with its environment) in a process group of its
/// own, killed whole after `limit` seconds and 30 more, and when it ends: `true`, then
/// `sh -eu -c script`. Writes the script's output (and the session's stderr) to `log`; the
/// script's exit code, `None` when killed or timed out.
pub(crate) fn run_served(
    cmd: &mut Command,
    script: &str,
    limit: u32,
    log: &Path,
) -> Result<Option<i32>, Error> {
    use std::os::unix::process::CommandExt;
    let session_log = std::fs::File::create(log)
        .map_err(|e| fail(format!("cannot create {}: {e}", log.display())))?;
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(session_log)
        .spawn()
        .map_err(|e| fail(format!("cannot start {cmd:?}: {e}")))?;
    let group = rustix::process::Pid::from_child(&child);
    // The watchdog: the whole group goes when the session overstays.
    let (done, until) = std::sync::mpsc::channel::<()>();
    let bound = Duration::from_secs(u64::from(limit) + 30);
    let watchdog = std::thread::spawn(move || {
        if until.recv_timeout(bound).is_err() {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    });
    let answers = (|| -> Result<(serde_json::Value, serde_json::Value), Error> {
        let mut stdin = child.stdin.take().ok_or_else(|| fail("no stdin"))?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or_else(|| fail("no stdout"))?);
        let mut ask = |argv: &[&str]| -> Result<serde_json::Value, Error> {
            let line = serde_json::to_string(argv).map_err(|e| fail(e.to_string()))?;
            writeln!(stdin, "{line}")
                .and_then(|()| stdin.flush())
                .map_err(|e| fail(format!("cannot write to the session: {e}")))?;
            let mut answer = String::new();
            stdout
                .read_line(&mut answer)
                .map_err(|e| fail(format!("cannot read the session's answer: {e}")))?;
            serde_json::from_str(&answer)
                .map_err(|e| fail(format!("the session's answer {answer:?}: {e}")))
        };
        let first = ask(&["true"])?;
        let second = ask(&["sh", "-eu", "-c", script])?;
        Ok((first, second))
    })();
    let started = Instant::now();
    let _ = child.wait();
    let _ = done.send(());
    let _ = watchdog.join();
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    let (first, second) = answers?;
    if first["exit_code"] != 0 {
        return Err(fail(format!("the session's first command failed: {first}")));
    }
    if second["built_ahead"] != true {
        return Err(fail(format!(
            "the script was not handed to a jail built ahead: {second}"
        )));
    }
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(log)
        .map_err(|e| fail(format!("cannot open {}: {e}", log.display())))?;
    for stream in ["stdout", "stderr"] {
        let text = second[stream]["text"].as_str().unwrap_or_default();
        let _ = out.write_all(text.as_bytes());
        if second[stream]["truncated"] == true {
            let _ = writeln!(out, "\n[workloads: the session's {stream} was truncated]");
        }
    }
    let _ = writeln!(
        out,
        "[workloads: served, mode {}, {:.1}s after the script's answer]",
        second["workspace"],
        started.elapsed().as_secs_f64()
    );
    Ok(second["exit_code"]
        .as_i64()
        .and_then(|c| i32::try_from(c).ok()))
}
