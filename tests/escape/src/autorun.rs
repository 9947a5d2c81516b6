//! Class 2b: code the host runs later, found by structure (submodules, linked worktrees seen from
//! the main repository, an enclosing repository), every family of the auto-run registry, objects
//! shared by hard link with another repository, and explicit variables that run a program.
//! Judged on the host: the planted file is absent or unchanged, and host `git config --get`
//! (which reads a configuration and runs nothing) sees nothing planted. Nothing planted is ever
//! executed on the host.

use std::path::{Path, PathBuf};

use super::harness::{Ctx, RunOut};
use super::matrix::{Outcome, Verdict};
use super::protected::{diff, git, harness_err, repo, snapshot};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Protected;
    let u = Class::Usability;
    vec![
        Case::attack(
            "autorun/submodule",
            c,
            "a submodule's .git/modules/<name>/config, hooks and commondir, and its .git file in the work tree",
            submodule,
        ),
        Case::attack(
            "autorun/worktree-from-main",
            c,
            "from the main repository: a linked worktree's commondir, gitdir and config.worktree rewritten",
            worktree_from_main,
        ),
        Case::attack(
            "autorun/enclosing-repo",
            c,
            "a workspace inside an enclosing repository: `git init` there and set core.fsmonitor",
            enclosing_repo,
        ),
        Case::attack(
            "autorun/git-attributes",
            c,
            "rewrite .gitattributes, create .git/info/attributes naming a filter",
            git_attributes,
        ),
        Case::attack(
            "autorun/hook-managers",
            c,
            "husky, pre-commit, lefthook, overcommit, lint-staged configuration: rewritten or created",
            hook_managers,
        ),
        Case::attack(
            "autorun/devcontainer",
            c,
            "devcontainer.json in both locations: rewritten or created with initializeCommand",
            devcontainer,
        ),
        Case::attack(
            "autorun/direnv",
            c,
            "create .envrc where none existed",
            direnv,
        ),
        Case::attack(
            "autorun/editors",
            c,
            "VS Code (.vscode, *.code-workspace), JetBrains, Zed, Helix, Emacs, Vim and Neovim project files",
            editors,
        ),
        Case::attack(
            "autorun/agents",
            c,
            "coding agents' project configuration: Cursor, Gemini, Codex, Continue, Windsurf, aider, Roo, Amazon Q, Kiro, opencode",
            agents,
        ),
        Case::attack(
            "autorun/mcp-lists",
            c,
            "MCP server lists: .mcp.json rewritten, .vscode/mcp.json, .cursor/mcp.json, .roo/mcp.json created",
            mcp_lists,
        ),
        Case::attack(
            "autorun/hard-linked-objects",
            c,
            "in a local clone: make a pack file shared with the origin writable and rewrite it",
            hard_linked_objects,
        ),
        Case::attack(
            "use/git-submodule-update",
            u,
            "`git submodule update` checks out the recorded commit of a submodule",
            use_submodule_update,
        )
        .not_in_mutants(),
        Case::attack(
            "use/git-worktree-add",
            u,
            "`git worktree add` makes a linked worktree in the workspace",
            use_worktree_add,
        )
        .not_in_mutants(),
        Case::attack(
            "use/commit-with-hook-manager",
            u,
            "a commit runs the pre-commit hook a hook manager installed (core.hooksPath = .husky)",
            use_hook_manager,
        )
        .not_in_mutants(),
    ]
}

/// A repository with one commit, made as root and not yet handed to the column's user (git run
/// as root refuses to read a repository another user owns when it starts a child of its own,
/// as `git submodule add` and a local `git clone` do); the case hands the tree over at the end.
fn plain_repo(ctx: &Ctx<'_>, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    git(ctx, dir, &["init", "-q", "."])?;
    std::fs::write(dir.join("README"), "hello\n").map_err(|e| e.to_string())?;
    git(ctx, dir, &["add", "README"])?;
    git(ctx, dir, &["commit", "-qm", "init"]).map(|_| ())
}

/// The value host git reads for `key` in `dir` (`None`: unset, or no repository).
fn host_config(ctx: &Ctx<'_>, dir: &Path, key: &str) -> Option<String> {
    git(ctx, dir, &["config", "--get", key])
        .ok()
        .filter(|v| !v.is_empty())
}

/// Runs `steps` in the workspace and judges on the host that `watch` (relative to the workspace)
/// did not change, that host git in each of `git_dirs` sees no `core.fsmonitor`, and that each
/// git directory of `hook_dirs` holds no hook but git's samples.
fn judged(
    ctx: &Ctx<'_>,
    watch: &[PathBuf],
    git_dirs: &[PathBuf],
    steps: &[&str],
    hook_dirs: &[PathBuf],
) -> Outcome {
    let before = snapshot(watch);
    let out = ctx.sh_steps(steps);
    let after = snapshot(watch);
    let mut found: Vec<String> = Vec::new();
    if before != after {
        found.push(diff(&before, &after));
    }
    for d in git_dirs {
        if let Some(v) = host_config(ctx, d, "core.fsmonitor") {
            found.push(format!(
                "host git in {} reads core.fsmonitor = {v}",
                d.display()
            ));
        }
    }
    for d in hook_dirs {
        let hooks = live_hooks(d);
        if !hooks.is_empty() {
            found.push(format!("hooks in {}: {hooks:?}", d.display()));
        }
    }
    let detail = if found.is_empty() {
        "unchanged; host git sees no core.fsmonitor".to_owned()
    } else {
        found.join("; ")
    };
    ctx.judge(&out, !found.is_empty(), detail)
}

const FSMONITOR: &str =
    "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch /tmp/pwned\\n'";

fn submodule(ctx: &Ctx<'_>) -> Outcome {
    let origin = ctx.home.join("sub-origin");
    let made = plain_repo(ctx, &origin)
        .and_then(|()| plain_repo(ctx, &ctx.work))
        .and_then(|()| {
            // A `file://` URL: the submodule's objects are copied, not hard-linked.
            let url = format!("file://{}", origin.display());
            git(
                ctx,
                &ctx.work,
                &[
                    "-c",
                    "protocol.file.allow=always",
                    "submodule",
                    "add",
                    "-q",
                    &url,
                    "lib",
                ],
            )
        })
        .and_then(|_| git(ctx, &ctx.work, &["commit", "-qm", "submodule"]))
        .and_then(|_| ctx.scratch())
        .and_then(|_| super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string()));
    if let Err(e) = made {
        return harness_err(e);
    }
    let m = ctx.work.join(".git/modules/lib");
    let watch = vec![
        m.join("config"),
        m.join("hooks"),
        m.join("commondir"),
        m.join("info/attributes"),
        ctx.work.join("lib/.git"),
    ];
    let evil = format!(
        "mkdir -p scratch/evil && cp -r .git/modules/lib/objects .git/modules/lib/refs .git/modules/lib/HEAD scratch/evil/ && {FSMONITOR} > scratch/evil/config"
    );
    judged(
        ctx,
        &watch,
        &[ctx.work.join("lib")],
        &[
            "git -C lib config core.fsmonitor 'touch /tmp/pwned'",
            &format!("{FSMONITOR} >> .git/modules/lib/config"),
            "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/modules/lib/hooks/pre-commit && chmod +x .git/modules/lib/hooks/pre-commit",
            &evil,
            "echo ../../../scratch/evil > .git/modules/lib/commondir",
            "mkdir -p .git/modules/lib/info && echo '* filter=evil' > .git/modules/lib/info/attributes",
            "echo 'gitdir: ../scratch/evil' > lib/.git",
            "mv .git/modules/lib scratch/lib-moved",
        ],
        &[],
    )
}

fn worktree_from_main(ctx: &Ctx<'_>) -> Outcome {
    let wt = ctx.home.join("wt");
    let made = repo(ctx, &ctx.work)
        .and_then(|()| git(ctx, &ctx.work, &["worktree", "add", "-q", "../wt"]))
        .and_then(|_| ctx.scratch())
        .and_then(|_| super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string()));
    if let Err(e) = made {
        return harness_err(e);
    }
    let admin = ctx.work.join(".git/worktrees/wt");
    let watch = vec![
        admin.join("commondir"),
        admin.join("gitdir"),
        admin.join("config.worktree"),
        ctx.work.join(".git/config"),
    ];
    let evil = format!(
        "mkdir -p scratch/evil && cp -r .git/objects .git/refs .git/HEAD scratch/evil/ && {FSMONITOR} > scratch/evil/config"
    );
    judged(
        ctx,
        &watch,
        &[wt],
        &[
            &evil,
            "echo ../../../scratch/evil > .git/worktrees/wt/commondir",
            &format!("{FSMONITOR} > .git/worktrees/wt/config.worktree"),
            "echo /tmp/elsewhere/.git > .git/worktrees/wt/gitdir",
            "mv .git/worktrees/wt scratch/wt-admin-moved",
        ],
        &[],
    )
}

/// The hooks host git would run in `git_dir`: every file of its `hooks` but git's samples.
fn live_hooks(git_dir: &Path) -> Vec<String> {
    std::fs::read_dir(git_dir.join("hooks"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".sample"))
                .collect()
        })
        .unwrap_or_default()
}

/// A repository made in a workspace inside an enclosing one is judged by what host git would
/// run there: its `core.fsmonitor` and its hooks. The repository itself may reach the host
/// (under the copy-on-write layer the commit applies a new repository with its configuration
/// sanitized, `git init` being the command's to run); live, the empty read-only `.git`
/// placeholder stops `git init`.
fn enclosing_repo(ctx: &Ctx<'_>) -> Outcome {
    // The home directory is the enclosing repository (a monorepo, a dotfiles repository); the
    // workspace below it has no `.git` of its own.
    let made = git(ctx, &ctx.home, &["init", "-q", "."])
        .and_then(|_| ctx.scratch())
        .and_then(|_| super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string()));
    if let Err(e) = made {
        return harness_err(e);
    }
    let g = ctx.work.join(".git");
    judged(
        ctx,
        &[],
        std::slice::from_ref(&ctx.work),
        &[
            "git init -q .",
            "git config core.fsmonitor 'touch /tmp/pwned'",
            &format!(
                "mkdir -p .git && {FSMONITOR} > .git/config && echo 'ref: refs/heads/main' > .git/HEAD"
            ),
            "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
            "mv .git scratch/git-moved && git init -q . && git config core.fsmonitor 'touch /tmp/pwned'",
        ],
        &[g],
    )
}

/// Plants `existing` (relative to the workspace), runs `steps`, and judges that every path of
/// `existing` and `created` is on the host as it was (`created` ones absent).
fn registry(
    ctx: &Ctx<'_>,
    with_repo: bool,
    existing: &[(&str, &str)],
    created: &[&str],
    steps: &[&str],
) -> Outcome {
    if with_repo && let Err(e) = repo(ctx, &ctx.work) {
        return harness_err(e);
    }
    for (rel, content) in existing {
        if let Err(e) = ctx.file(rel, content) {
            return harness_err(e);
        }
    }
    if let Err(e) = ctx.scratch() {
        return harness_err(e);
    }
    let watch: Vec<PathBuf> = existing
        .iter()
        .map(|(r, _)| *r)
        .chain(created.iter().copied())
        .map(|r| ctx.work.join(r))
        .collect();
    judged(ctx, &watch, &[], steps, &[])
}

fn git_attributes(ctx: &Ctx<'_>) -> Outcome {
    registry(
        ctx,
        true,
        &[(".gitattributes", "*.txt text\n")],
        &[".git/info/attributes"],
        &[
            "echo '* filter=evil diff=evil' >> .gitattributes",
            "mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes",
        ],
    )
}

fn hook_managers(ctx: &Ctx<'_>) -> Outcome {
    registry(
        ctx,
        true,
        &[
            (".pre-commit-config.yaml", "repos: []\n"),
            ("lefthook.yml", "pre-commit:\n  commands: {}\n"),
        ],
        &[
            ".husky",
            ".overcommit.yml",
            ".lintstagedrc.json",
            "lefthook-local.yml",
        ],
        &[
            "printf 'repos:\\n- repo: local\\n  hooks:\\n  - id: x\\n    entry: touch /tmp/pwned\\n    language: system\\n' > .pre-commit-config.yaml",
            "printf 'pre-commit:\\n  commands:\\n    x:\\n      run: touch /tmp/pwned\\n' > lefthook.yml",
            "mkdir -p .husky && printf 'touch /tmp/pwned\\n' > .husky/pre-commit",
            "printf 'PreCommit:\\n  X:\\n    command: [touch, /tmp/pwned]\\n' > .overcommit.yml",
            "echo '{\"*\": \"touch /tmp/pwned\"}' > .lintstagedrc.json",
            "printf 'pre-commit:\\n  commands:\\n    x:\\n      run: touch /tmp/pwned\\n' > lefthook-local.yml",
        ],
    )
}

fn devcontainer(ctx: &Ctx<'_>) -> Outcome {
    registry(
        ctx,
        false,
        &[(".devcontainer/devcontainer.json", "{\"image\": \"x\"}\n")],
        &[".devcontainer.json"],
        &[
            "echo '{\"image\": \"x\", \"initializeCommand\": \"touch /tmp/pwned\"}' > .devcontainer/devcontainer.json",
            "echo '{\"image\": \"x\", \"initializeCommand\": \"touch /tmp/pwned\"}' > .devcontainer.json",
        ],
    )
}

fn direnv(ctx: &Ctx<'_>) -> Outcome {
    registry(
        ctx,
        false,
        &[],
        &[".envrc"],
        &["echo 'touch /tmp/pwned' > .envrc"],
    )
}

fn editors(ctx: &Ctx<'_>) -> Outcome {
    registry(
        ctx,
        false,
        &[(
            "proj.code-workspace",
            "{\"folders\": [{\"path\": \".\"}]}\n",
        )],
        &[
            ".vscode",
            "other.code-workspace",
            ".idea",
            ".zed",
            ".helix",
            ".dir-locals.el",
            ".exrc",
            ".nvim.lua",
        ],
        &[
            "echo '{\"tasks\": {\"tasks\": [{\"runOptions\": {\"runOn\": \"folderOpen\"}, \"command\": \"touch /tmp/pwned\"}]}}' > proj.code-workspace",
            "mkdir -p .vscode && echo '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"},\"command\":\"touch /tmp/pwned\"}]}' > .vscode/tasks.json",
            "cp proj.code-workspace other.code-workspace",
            "mkdir -p .idea && echo '<project/>' > .idea/workspace.xml",
            "mkdir -p .zed && echo '[{\"label\": \"x\", \"command\": \"touch /tmp/pwned\"}]' > .zed/tasks.json",
            "mkdir -p .helix && printf '[language-server.x]\\ncommand = \"touch\"\\n' > .helix/languages.toml",
            "echo '((nil . ((eval . (shell-command \"touch /tmp/pwned\")))))' > .dir-locals.el",
            "echo '!touch /tmp/pwned' > .exrc",
            "echo 'os.execute(\"touch /tmp/pwned\")' > .nvim.lua",
        ],
    )
}

fn agents(ctx: &Ctx<'_>) -> Outcome {
    let server = "{\"mcpServers\": {\"x\": {\"command\": \"touch\", \"args\": [\"/tmp/pwned\"]}}}";
    let steps = [
        format!("echo '{server}' > .cursor/mcp.json"),
        format!("mkdir -p .gemini && echo '{server}' > .gemini/settings.json"),
        "mkdir -p .codex && printf '[mcp_servers.x]\\ncommand = \"touch\"\\n' > .codex/config.toml"
            .to_owned(),
        "mkdir -p .continue && printf 'mcpServers:\\n- name: x\\n  command: touch\\n' > .continue/config.yaml"
            .to_owned(),
        "mkdir -p .windsurf/workflows && echo 'run touch /tmp/pwned' > .windsurf/workflows/x.md"
            .to_owned(),
        "echo 'lint-cmd: touch /tmp/pwned' > .aider.conf.yml".to_owned(),
        format!("mkdir -p .roo && echo '{server}' > .roo/mcp.json"),
        format!("mkdir -p .amazonq && echo '{server}' > .amazonq/mcp.json"),
        format!("mkdir -p .kiro/settings && echo '{server}' > .kiro/settings/mcp.json"),
        "echo '{\"mcp\": {\"x\": {\"type\": \"local\", \"command\": [\"touch\", \"/tmp/pwned\"]}}}' > opencode.json"
            .to_owned(),
    ];
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    registry(
        ctx,
        false,
        &[(".cursor/mcp.json", "{\"mcpServers\": {}}\n")],
        &[
            ".gemini",
            ".codex",
            ".continue",
            ".windsurf",
            ".aider.conf.yml",
            ".roo",
            ".amazonq",
            ".kiro",
            "opencode.json",
        ],
        &steps,
    )
}

fn mcp_lists(ctx: &Ctx<'_>) -> Outcome {
    let server = "{\"mcpServers\": {\"x\": {\"command\": \"touch\", \"args\": [\"/tmp/pwned\"]}}}";
    let steps = [
        format!("echo '{server}' > .mcp.json"),
        format!("mkdir -p .vscode && echo '{server}' > .vscode/mcp.json"),
        format!("mkdir -p .cursor && echo '{server}' > .cursor/mcp.json"),
        format!("mkdir -p .roo && echo '{server}' > .roo/mcp.json"),
    ];
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    registry(
        ctx,
        false,
        &[(".mcp.json", "{\"mcpServers\": {}}\n")],
        &[".vscode", ".cursor", ".roo"],
        &steps,
    )
}

/// The workspace is a local clone (`git clone <path>`: objects hard-linked with the origin in
/// the home directory). Blocked when cordon refuses to run there naming the link (nothing ran)
/// or when the run leaves the origin's pack file unchanged.
fn hard_linked_objects(ctx: &Ctx<'_>) -> Outcome {
    let origin = ctx.home.join("origin");
    let clone = ctx.work.join("clone");
    let made = plain_repo(ctx, &origin)
        .and_then(|()| git(ctx, &origin, &["gc", "-q"]))
        .and_then(|_| {
            git(
                ctx,
                &ctx.work,
                &["clone", "-q", &origin.display().to_string(), "clone"],
            )
        })
        .and_then(|_| super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string()));
    if let Err(e) = made {
        return harness_err(e);
    }
    let packs: Vec<PathBuf> = std::fs::read_dir(origin.join(".git/objects/pack"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let Some(pack) = packs
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "pack"))
        .cloned()
    else {
        return harness_err("the origin has no pack file after `git gc`".into());
    };
    let before = std::fs::read(&pack).unwrap_or_default();
    let (script, markers) = super::harness::marked(&[
        "p=$(ls .git/objects/pack/*.pack | head -1); chmod u+w \"$p\"",
        "printf EVILEVIL | dd of=\"$p\" bs=1 seek=12 conv=notrunc 2>/dev/null",
        "for f in .git/objects/info/*; do chmod u+w \"$f\"; echo evil >> \"$f\"; done",
    ]);
    let full = format!("printf %s {} > escape-canary; {script}", ctx.token);
    let out = ctx
        .cordon()
        .cwd(&clone)
        .args(["--cwd".into(), clone.clone().into_os_string()])
        .payload(["/bin/sh", "-c", full.as_str()])
        .expect_steps(markers)
        .run();
    let changed = std::fs::read(&pack).unwrap_or_default() != before;
    if std::fs::read_to_string(clone.join("escape-canary")).is_ok_and(|t| t == ctx.token) {
        let _ = std::fs::write(ctx.canary_path(), &ctx.token);
    }
    refused_or_judged(
        ctx,
        &out,
        changed,
        "hard link",
        format!(
            "the origin's {} {}",
            pack.display(),
            if changed {
                "was rewritten"
            } else {
                "is unchanged"
            }
        ),
    )
}

/// Blocked when cordon refused before running anything, saying `why`; else the usual judge.
fn refused_or_judged(
    ctx: &Ctx<'_>,
    out: &RunOut,
    escaped: bool,
    why: &str,
    detail: String,
) -> Outcome {
    // `cordon run --json` says `refusal`; a `cordon serve` session refused at start `error`.
    let refusal = out
        .json
        .as_ref()
        .and_then(|j| j["refusal"].as_str().or_else(|| j["error"].as_str()))
        .unwrap_or_default();
    let refused = !ctx.column.unjailed()
        && matches!(out.code, Some(125 | 126))
        && (out.all().contains(why) || refusal.contains(why))
        && !ctx.canary();
    if refused && !escaped {
        return Outcome::new(
            Verdict::Blocked,
            format!(
                "refused before anything ran ({}); {detail}",
                super::harness::cut(&format!("{refusal} {}", out.all()), 200)
            ),
        );
    }
    ctx.judge(out, escaped, detail)
}

/// A submodule at `lib` whose origin has two commits; the superproject records the second, and
/// the submodule's work tree is left at the first.
fn submodule_behind(ctx: &Ctx<'_>) -> Result<String, String> {
    let origin = ctx.home.join("sub-origin");
    plain_repo(ctx, &origin)?;
    std::fs::write(origin.join("second"), "2\n").map_err(|e| e.to_string())?;
    git(ctx, &origin, &["add", "second"])?;
    git(ctx, &origin, &["commit", "-qm", "second"])?;
    let head = git(ctx, &origin, &["rev-parse", "HEAD"])?;
    plain_repo(ctx, &ctx.work)?;
    let url = format!("file://{}", origin.display());
    git(
        ctx,
        &ctx.work,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &url,
            "lib",
        ],
    )?;
    git(ctx, &ctx.work, &["commit", "-qm", "submodule"])?;
    git(ctx, &ctx.work.join("lib"), &["checkout", "-q", "HEAD~1"])?;
    super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string())?;
    Ok(head)
}

fn use_submodule_update(ctx: &Ctx<'_>) -> Outcome {
    let head = match submodule_behind(ctx) {
        Ok(h) => h,
        Err(e) => return harness_err(e),
    };
    let out = ctx
        .sh("git -c protocol.file.allow=always submodule update -q && git -C lib rev-parse HEAD");
    let now = git(ctx, &ctx.work.join("lib"), &["rev-parse", "HEAD"]).unwrap_or_default();
    let works = out.code == Some(0) && now == head;
    ctx.control(
        &out,
        works,
        format!("lib at {now} on the host, expected {head}"),
    )
}

fn use_worktree_add(ctx: &Ctx<'_>) -> Outcome {
    let made = repo(ctx, &ctx.work)
        .and_then(|()| ctx.scratch().map(|_| ()))
        .and_then(|()| super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string()));
    if let Err(e) = made {
        return harness_err(e);
    }
    let out = ctx.sh("git worktree add -q scratch/wt2 && git -C scratch/wt2 log --oneline | wc -l");
    let readme = ctx.work.join("scratch/wt2/README");
    let listed = git(ctx, &ctx.work, &["worktree", "list"]).unwrap_or_default();
    let works = out.code == Some(0) && readme.exists() && listed.contains("scratch/wt2");
    ctx.control(
        &out,
        works,
        format!(
            "{} exists: {}; worktree list: {listed}",
            readme.display(),
            readme.exists()
        ),
    )
}

fn use_hook_manager(ctx: &Ctx<'_>) -> Outcome {
    let made = repo(ctx, &ctx.work)
        .and_then(|()| ctx.scratch().map(|_| ()))
        .and_then(|()| {
            ctx.file(
                ".husky/pre-commit",
                "#!/bin/sh\necho hook-ran > scratch/hook-ran\n",
            )
            .map(|_| ())
        })
        .and_then(|()| {
            std::fs::set_permissions(
                ctx.work.join(".husky/pre-commit"),
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )
            .map_err(|e| e.to_string())
        })
        .and_then(|()| git(ctx, &ctx.work, &["config", "core.hooksPath", ".husky"]).map(|_| ()))
        .and_then(|()| super::harness::chown_r(&ctx.home, ctx.ids).map_err(|e| e.to_string()));
    if let Err(e) = made {
        return harness_err(e);
    }
    let out = ctx.sh(
        "echo change >> README && git add README && git -c user.name=a -c user.email=a@b.invalid commit -qm two && git log --oneline | wc -l",
    );
    let ran = ctx.work.join("scratch/hook-ran").exists();
    let commits = git(ctx, &ctx.work, &["rev-list", "--count", "HEAD"]).unwrap_or_default();
    ctx.control(
        &out,
        out.code == Some(0) && ran && commits == "2",
        format!("hook ran: {ran}; commits on the host: {commits}"),
    )
}
