//! The copy-on-write layer (issue #30): the window. A host program that reads the workspace
//! while the command runs (an editor's git view, a file watcher, direnv in an open terminal)
//! must see nothing the command wrote, planted auto-run files included. Judged on the host,
//! while the jail lives: the command plants `.envrc` and then waits for a line on its stdin; the
//! harness waits until the plant was made (on the host's tree, or in the run's layer in
//! cordon's state, which is where a layered write lands), looks at the workspace, and only then
//! lets the command end. Nothing planted is ever executed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::harness::{Ctx, RunOut, wait_deadline, wait_for};
use super::matrix::Outcome;
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    vec![
        Case::attack(
            "layer/window",
            Class::Protected,
            "a host reader of the workspace during the run (`--layer`) sees the .envrc the command planted",
            window,
        )
        .landlock_limit("the Landlock backend makes no layer: its runs are live"),
    ]
}

/// A file named `name` in a run's layer below `dir` (`layers/<workspace>/jail-*/N/upper`).
fn in_a_layer(dir: &Path, name: &str) -> bool {
    let Ok(workspaces) = std::fs::read_dir(dir) else {
        return false;
    };
    workspaces.flatten().any(|w| {
        std::fs::read_dir(w.path()).is_ok_and(|runs| {
            runs.flatten().any(|r| {
                std::fs::read_dir(r.path()).is_ok_and(|roots| {
                    roots
                        .flatten()
                        .any(|root| root.path().join("upper").join(name).exists())
                })
            })
        })
    })
}

fn window(ctx: &Ctx<'_>) -> Outcome {
    let planted = ctx.work.join(".envrc");
    let layers: PathBuf = ctx
        .suite
        .base
        .join(format!("cache-{}", ctx.ids.uid))
        .join("cordon/layers");
    let mut cmd = ctx
        .cordon()
        .args(["--layer"])
        .sh("echo 'touch /tmp/pwned' > .envrc; read go")
        .stdin(b"")
        .command();
    let (out_file, err_file) = (ctx.dir.join("window.out"), ctx.dir.join("window.err"));
    let files =
        std::fs::File::create(&out_file).and_then(|o| Ok((o, std::fs::File::create(&err_file)?)));
    let Ok((out, err)) = files else {
        return super::protected::harness_err("cannot create the run's output files".into());
    };
    cmd.stdin(std::process::Stdio::piped())
        .stdout(out)
        .stderr(err);
    let Ok(mut child) = cmd.spawn() else {
        return super::protected::harness_err("cannot start cordon".into());
    };
    let mut stdin = child.stdin.take();
    let made = wait_for(Duration::from_secs(60), || {
        planted.exists()
            || in_a_layer(&layers, ".envrc")
            || child.try_wait().ok().flatten().is_some()
    });
    // The window: the jail still lives (the command waits for its line).
    let running = child.try_wait().ok().flatten().is_none();
    let seen = running && planted.exists();
    if let Some(mut pipe) = stdin.take() {
        let _ = pipe.write_all(b"go\n");
    }
    let status = wait_deadline(&mut child, Duration::from_secs(60));
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = std::fs::read_to_string(&out_file).unwrap_or_default();
    let json: Option<serde_json::Value> = serde_json::from_str(&stdout).ok();
    let run = RunOut {
        code: status.and_then(|s| s.code()),
        out: json
            .as_ref()
            .and_then(|j| j["stdout"]["text"].as_str())
            .unwrap_or(&stdout)
            .to_owned(),
        err: std::fs::read_to_string(&err_file).unwrap_or_default(),
        json,
        hung: status.is_none(),
        ..RunOut::default()
    };
    // The canary is a new dot-entry at the workspace's top, which the commit holds for the
    // user's consent: applied here, alone, as the user would (`cordon apply RUN PATH`).
    if let Some(held_run) = run
        .json
        .as_ref()
        .and_then(|j| j["changes"]["roots"][0]["report"]["run"].as_str())
    {
        let argv = vec![
            ctx.cordon_binary().into(),
            "apply".into(),
            held_run.into(),
            ".escape-canary".into(),
        ];
        let _ = ctx
            .as_user(argv)
            .current_dir(&ctx.work)
            .env_clear()
            .env("HOME", &ctx.home)
            .env("PATH", "/usr/bin:/bin")
            .env(
                "XDG_CACHE_HOME",
                ctx.suite.base.join(format!("cache-{}", ctx.ids.uid)),
            )
            .output();
    }
    if !made || !running {
        return ctx.judge(
            &run,
            seen,
            format!(
                "the plant was {}made while the jail lived (it ended first or never wrote)",
                if made { "" } else { "not " }
            ),
        );
    }
    ctx.judge(
        &run,
        seen,
        if seen {
            "a host reader saw the planted .envrc while the command ran".to_owned()
        } else {
            "the planted .envrc was in the run's layer only, not on the host, while the jail lived"
                .to_owned()
        },
    )
}
