//! Class 11, the stage's placement: cordon's own binary lives in a directory the jail hides (a
//! tool unpacked under `/tmp`, as a CI job or a harness's private install does). The jail must
//! still start (the canary shows the stage ran from there: the in-place backends grant that one
//! file), and the grant must reach nothing else: a sibling file of the binary stays unreadable,
//! nothing can be created in its directory, and the binary can be neither moved nor removed.
//! (Its contents cannot be rewritten while it runs in any case: the kernel refuses writes to a
//! running program's file, so the case does not count that.)

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::harness::{Ctx, qp, spawn_retrying_busy};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    vec![Case::attack(
        "backend/stage-in-hidden-dir",
        Class::Backend,
        "cordon unpacked under /tmp runs, but its directory's other files stay unreadable and the binary stays put",
        hidden_dir,
    )]
}

/// Removes the placed copy when the case ends, whatever its verdict.
struct Placed(PathBuf);

impl Drop for Placed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn place(ctx: &Ctx<'_>, top: &Path) -> Result<PathBuf, String> {
    let bin = top.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let stage = bin.join("cordon");
    std::fs::copy(ctx.cordon_binary(), &stage)
        .map_err(|e| format!("cannot copy cordon to {}: {e}", stage.display()))?;
    std::fs::write(bin.join("sibling"), ctx.secret("stage-sibling"))
        .map_err(|e| format!("cannot plant the sibling: {e}"))?;
    for (path, mode) in [
        (top, 0o755),
        (&bin, 0o755),
        (&stage, 0o755),
        (&bin.join("sibling"), 0o644),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .and_then(|()| std::os::unix::fs::lchown(path, Some(ctx.ids.uid), Some(ctx.ids.gid)))
            .map_err(|e| format!("cannot set up {}: {e}", path.display()))?;
    }
    settle(&stage)?;
    Ok(stage)
}

/// Waits until the placed copy can be executed: until then a child another case's thread forked
/// while the copy was open for writing holds it open, and a column that starts cordon through
/// `setpriv` would see `setpriv` fail with "Text file busy" (a CI run did). Once one exec
/// succeeded no writer is left, since nothing opens the copy for writing again.
fn settle(stage: &Path) -> Result<(), String> {
    let mut cmd = std::process::Command::new(stage);
    cmd.arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let status = spawn_retrying_busy(&mut cmd)
        .and_then(|mut child| child.wait())
        .map_err(|e| format!("cannot run the placed copy {}: {e}", stage.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "the placed copy {} --version: {status}",
            stage.display()
        ))
    }
}

fn hidden_dir(ctx: &Ctx<'_>) -> Outcome {
    let top = PathBuf::from(format!("/tmp/cordon-escape-stage-{}", ctx.token));
    let _placed = Placed(top.clone());
    let stage = match place(ctx, &top) {
        Ok(stage) => stage,
        Err(e) => return Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
    };
    let before = std::fs::metadata(&stage).map(|m| (m.ino(), m.len()));
    let bin = top.join("bin");
    let d = qp(&bin);
    // Each step echoes its mark whatever its own outcome, so a step that never ran shows.
    let steps = [
        format!("cat {d}/sibling"),
        format!("cp {d}/sibling leaked-sibling; cat leaked-sibling"),
        format!("echo planted > {d}/planted"),
        format!("ln -s /bin/sh {d}/link"),
        format!("mv {d}/cordon {d}/moved"),
        format!("rm -f {d}/cordon"),
    ];
    let script: String = steps
        .iter()
        .enumerate()
        .map(|(i, step)| format!("{step} 2>&1\necho step-{i}-done\n"))
        .collect();
    let out = ctx.cordon().placed_binary(&stage).sh(&script).run();

    let missing: Vec<usize> = (0..steps.len())
        .filter(|i| !out.out.contains(&format!("step-{i}-done")))
        .collect();
    if ctx.canary() && !missing.is_empty() {
        return Outcome::new(
            Verdict::Inconclusive,
            format!("steps {missing:?} did not run: {}", out.brief()),
        );
    }
    let mut seen = Vec::new();
    if out.all().contains(&ctx.marker()) {
        seen.push("read the sibling file".to_owned());
    }
    for made in ["planted", "link", "moved"] {
        if bin.join(made).symlink_metadata().is_ok() {
            seen.push(format!("created {made} beside the binary"));
        }
    }
    let after = std::fs::metadata(&stage).map(|m| (m.ino(), m.len()));
    match (&before, &after) {
        (Ok(b), Ok(a)) if b == a => {}
        _ => seen.push(format!(
            "the binary changed or went: {before:?} -> {after:?}"
        )),
    }
    let detail = if seen.is_empty() {
        format!("ran from {}; its directory stayed closed", stage.display())
    } else {
        seen.join("; ")
    };
    ctx.judge(&out, !seen.is_empty(), detail)
}
