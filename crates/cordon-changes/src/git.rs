//! Git directories in a change set, found by their shape at any depth, and what is judged in
//! them: hooks, configuration (through `cordon-gitconfig`), the files that point git elsewhere.

use std::path::{Path, PathBuf};

use cordon_policy::AutoRun;

use crate::model::{Change, ChangeKind, Finding, Node, Verdict};
use crate::rules::Rules;
use crate::view::{Landing, View, names};

/// The git directory a path is in: the deepest one above it.
pub(crate) struct InGitDir {
    /// The git directory, relative to the root.
    pub(crate) dir: PathBuf,
    /// The path relative to it, `/`-joined.
    pub(crate) rel: String,
    /// Whether it is a submodule's (below another git directory's `modules/`).
    pub(crate) submodule: bool,
}

/// What git reads a directory as a git directory by: `HEAD` with `objects` and `refs` (or a
/// `commondir`, a linked worktree's).
fn has(view: &View<'_>, dir: &Path, name: &str) -> bool {
    view.exists(&dir.join(name))
}

/// Whether `dir` (relative to the root) is a git directory, before or after the command: named
/// `.git` and a directory, named by a `.git` file or link of the change set, or shaped like one
/// (`HEAD` and `objects` and `refs`, or `HEAD` and `commondir`: a bare repository, a module, a
/// linked worktree's administrative directory). `loose`: below another git directory's
/// `modules/` or `worktrees/`, where any of git's own names marks one (a half-made module
/// directory is judged before it is complete).
pub(crate) fn is_git_dir(view: &View<'_>, dir: &Path, loose: bool) -> bool {
    if let Some(known) = view.git_dirs.borrow().get(dir) {
        return *known;
    }
    let named = dir.file_name().is_some_and(|n| n == ".git")
        && [view.new_node(dir), view.contents.old_node(dir)]
            .iter()
            .any(|n| matches!(n, Some(Node::Dir { .. })));
    let answer = named
        || view.named_git_dirs.iter().any(|d| d == dir)
        || (has(view, dir, "HEAD")
            && ((has(view, dir, "objects") && has(view, dir, "refs"))
                || has(view, dir, "commondir")))
        || (loose
            && [
                "HEAD",
                "config",
                "commondir",
                "gitdir",
                "objects",
                "refs",
                "hooks",
            ]
            .iter()
            .any(|n| has(view, dir, n)));
    view.git_dirs.borrow_mut().insert(dir.to_path_buf(), answer);
    answer
}

/// The deepest git directory strictly above `path`, if any.
pub(crate) fn git_dir_of(view: &View<'_>, path: &Path) -> Option<InGitDir> {
    let parts = names(path);
    // The root itself may be a git directory: a linked worktree's administrative directory
    // granted on its own (the `git-worktree` profile), a bare repository given as the root.
    let mut found: Option<(usize, bool)> =
        is_git_dir(view, Path::new(""), false).then_some((0, false));
    for end in 1..parts.len() {
        let dir: PathBuf = parts[..end].iter().collect();
        let under = found.map(|(start, _)| &parts[start..end]);
        let loose =
            under.is_some_and(|u| u.len() >= 2 && (u[0] == "modules" || u[0] == "worktrees"));
        if is_git_dir(view, &dir, loose) {
            let submodule = under.is_some_and(|u| u.first().is_some_and(|f| f == "modules"))
                || found.is_some_and(|(_, s)| s);
            found = Some((end, submodule));
        }
    }
    found.map(|(end, submodule)| InGitDir {
        dir: parts[..end].iter().collect(),
        rel: parts[end..].join("/"),
        submodule,
    })
}

/// The directories the change set's `.git` files and links name, inside the root.
pub(crate) fn named_git_dirs(view: &View<'_>, rules: &Rules) -> Vec<PathBuf> {
    view.set
        .changes
        .iter()
        .filter(|c| {
            c.kind != ChangeKind::Deleted && c.path.file_name().is_some_and(|n| n == ".git")
        })
        .filter_map(
            |c| match pointer_target(view, c, rules, PointerKind::DotGit) {
                Ok(Landing::Inside(rel)) => Some(rel),
                _ => None,
            },
        )
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PointerKind {
    /// A `.git` file (`gitdir: <path>`, relative to its directory) or link.
    DotGit,
    /// `commondir` or `gitdir` in a git directory (a path, relative to that directory).
    InGitDir,
}

/// Where a pointer lands, or why it cannot be read.
fn pointer_target(
    view: &View<'_>,
    change: &Change,
    rules: &Rules,
    kind: PointerKind,
) -> Result<Landing, &'static str> {
    let base = change.path.parent().unwrap_or(Path::new(""));
    match &change.node {
        Node::Symlink { target } => Ok(view.land(base, target)),
        Node::File { .. } => {
            let bytes = view
                .contents
                .new_bytes(&change.path, rules.max_pointer_bytes)
                .ok_or("unreadable or over the bound for a pointer file")?;
            let target = pointer_text(bytes, kind)?;
            Ok(view.land(base, Path::new(&target)))
        }
        Node::Dir { .. } | Node::Special(_) => Err("not a file"),
    }
}

/// The path a pointer file's text names.
fn pointer_text(bytes: Vec<u8>, kind: PointerKind) -> Result<String, &'static str> {
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8")?;
    let target = match kind {
        PointerKind::DotGit => text
            .lines()
            .find_map(|l| l.strip_prefix("gitdir:"))
            .ok_or("no `gitdir:` line")?,
        PointerKind::InGitDir => text.lines().next().unwrap_or(""),
    }
    .trim();
    if target.is_empty() {
        return Err("empty");
    }
    Ok(target.to_owned())
}

/// Whether a changed pointer file still names what it named on the host (git rewrote it the
/// same: `git submodule update`, `git worktree repair` of a sound worktree).
fn names_the_same(view: &View<'_>, change: &Change, rules: &Rules, kind: PointerKind) -> bool {
    if !matches!(change.node, Node::File { .. }) {
        return false;
    }
    let text = |bytes: Option<Vec<u8>>| bytes.and_then(|b| pointer_text(b, kind).ok());
    let old = text(
        view.contents
            .old_bytes(&change.path, rules.max_pointer_bytes),
    );
    let new = text(
        view.contents
            .new_bytes(&change.path, rules.max_pointer_bytes),
    );
    old.is_some() && old == new
}

/// A pointer file or link (a `.git` file, `commondir`, a worktree's `gitdir`): applied when it
/// lands inside the root.
fn judge_pointer(
    view: &View<'_>,
    change: &Change,
    rules: &Rules,
    kind: PointerKind,
) -> Option<Verdict> {
    let shown = change.path.display();
    match pointer_target(view, change, rules, kind) {
        Ok(Landing::Inside(rel)) => over_host_dir(view, change, &rel, kind).or_else(|| {
            if names_the_same(view, change, rules, kind) {
                None
            } else {
                redirected(view, change)
            }
        }),
        Ok(Landing::Outside(to)) => Some(Verdict::Refuse(Finding::new(
            "git-pointer-outside-root",
            "git",
            format!(
                "{shown} points git at {}, outside the root: host git would read configuration and run hooks from there",
                to.display()
            ),
        ))),
        Err(why) => Some(Verdict::Refuse(Finding::new(
            "git-pointer-unreadable",
            "git",
            format!("{shown} cannot be judged as a pointer to a git directory: {why}"),
        ))),
    }
}

/// A pointer of an existing repository moved (held), or a `commondir` added to a git directory
/// the host already had (refused: git writes one only into a worktree's administrative
/// directory it is making). Either makes host git take the repository's configuration, hooks,
/// refs and objects from elsewhere; a rewritten `.git` file or `gitdir` is also what `git
/// submodule absorbgitdirs` and `git worktree move` leave, so the user may apply it.
fn redirected(view: &View<'_>, change: &Change) -> Option<Verdict> {
    let shown = change.path.display();
    let dir = change.path.parent().unwrap_or(Path::new(""));
    match change.kind {
        ChangeKind::Modified => Some(Verdict::Hold(Finding::new(
            "git-redirected",
            "git",
            format!(
                "{shown} changed: host git would take an existing repository's configuration, hooks and history from where it now points"
            ),
        ))),
        ChangeKind::Added
            if change.path.file_name().is_some_and(|n| n == "commondir")
                && view.contents.old_node(&dir.join("HEAD")).is_some() =>
        {
            Some(Verdict::Refuse(Finding::new(
                "git-redirected",
                "git",
                format!(
                    "{shown} is new in the host's git directory {}: host git would take its configuration and hooks from where it points (git writes a commondir only into a worktree it is making)",
                    dir.display()
                ),
            )))
        }
        _ => None,
    }
}

/// A pointer into the root must land in a `.git` directory (or below one: a module, a
/// worktree's), in its own repository (a worktree's `commondir`), or in a directory whose
/// `config` and `hooks` the change set holds (so they were judged): pointed at a host directory
/// that merely has them (a test fixture's repository kept as data), host git would run them.
fn over_host_dir(
    view: &View<'_>,
    change: &Change,
    rel: &Path,
    kind: PointerKind,
) -> Option<Verdict> {
    let in_dot_git = rel.components().any(|c| c.as_os_str() == ".git");
    let own_repository = kind == PointerKind::InGitDir && change.path.starts_with(rel);
    if in_dot_git || own_repository {
        return None;
    }
    let unjudged = ["config", "hooks"].into_iter().find(|n| {
        let p = rel.join(n);
        view.contents.old_node(&p).is_some() && view.change(&p).is_none()
    })?;
    Some(Verdict::Refuse(Finding::new(
        "git-dir-over-host-config",
        "git",
        format!(
            "{} points git at {}, whose {unjudged} the host has and nobody judged",
            change.path.display(),
            rel.display()
        ),
    )))
}

/// A `.git` entry (file, link or directory) outside any git directory: `None` when it is
/// applied (a directory; a pointer that stays in the root).
pub(crate) fn judge_dot_git(view: &View<'_>, change: &Change, rules: &Rules) -> Option<Verdict> {
    match change.node {
        Node::Dir { .. } => None,
        _ => judge_pointer(view, change, rules, PointerKind::DotGit),
    }
}

/// A change inside a git directory (not a deletion: those are held by the caller). `None`: the
/// path is none of git's auto-run paths, apply it.
pub(crate) fn judge_in_git_dir(
    view: &View<'_>,
    change: &Change,
    at: &InGitDir,
    rules: &Rules,
) -> Option<Verdict> {
    if let Some(v) = made_over_host_config(view, change, at) {
        return Some(v);
    }
    let entry = AutoRun::for_git_dir_path(&at.rel, at.submodule)
        .filter(|e| rules.registry.iter().any(|r| r == *e))?;
    let shown = change.path.display();
    match entry.name() {
        "hooks" => {
            let sample = at.rel.strip_prefix("hooks/").is_some_and(|h| {
                !h.contains('/')
                    && h.ends_with(".sample")
                    && matches!(change.node, Node::File { .. })
            });
            let hooks_dir = at.rel == "hooks" && matches!(change.node, Node::Dir { .. });
            (!hooks_dir && !sample).then(|| {
                Verdict::Refuse(Finding::new(
                    "git-hook",
                    "git",
                    format!("{shown}: {}", entry.why),
                ))
            })
        }
        "config" | "config.worktree" => Some(judge_config(view, change, at, rules)),
        "commondir" | "gitdir" => judge_pointer(view, change, rules, PointerKind::InGitDir),
        _ => Some(match change.kind {
            ChangeKind::Added => Verdict::Refuse(Finding::new(
                "auto-run-new",
                entry.program,
                format!("{shown}: {}", entry.why),
            )),
            _ => Verdict::Hold(Finding::new(
                "auto-run-modified",
                entry.program,
                format!("{shown} changed: {}", entry.why),
            )),
        }),
    }
}

/// A new `HEAD` or `commondir` that makes a directory a git directory over a `config` or
/// `hooks` the host already had there and the change set does not hold (so nobody judged it):
/// refused.
fn made_over_host_config(view: &View<'_>, change: &Change, at: &InGitDir) -> Option<Verdict> {
    if change.kind != ChangeKind::Added || !(at.rel == "HEAD" || at.rel == "commondir") {
        return None;
    }
    let old_head = view.contents.old_node(&at.dir.join("HEAD")).is_some();
    let unjudged = ["config", "hooks"].iter().find(|n| {
        let p = at.dir.join(n);
        view.contents.old_node(&p).is_some() && view.change(&p).is_none()
    })?;
    (!old_head).then(|| {
        Verdict::Refuse(Finding::new(
            "git-dir-over-host-config",
            "git",
            format!(
                "{} makes {} a git directory over the host's {unjudged}, which was never judged",
                change.path.display(),
                at.dir.display()
            ),
        ))
    })
}

fn refuse(rule: &'static str, why: String) -> Verdict {
    Verdict::Refuse(Finding::new(rule, "git", why))
}

/// A git directory's `config` or `config.worktree`: the keys that run commands dropped by
/// `cordon-gitconfig` (an edit: only the command's changes are judged), or refused when it
/// cannot be judged.
fn judge_config(view: &View<'_>, change: &Change, at: &InGitDir, rules: &Rules) -> Verdict {
    let shown = change.path.display();
    match change.node {
        Node::File { .. } => {}
        Node::Symlink { .. } => {
            return refuse(
                "git-config-symlink",
                format!("{shown} is a symbolic link: host git would read whatever it points at"),
            );
        }
        _ => {
            return refuse(
                "git-config-unreadable",
                format!("{shown} is not a regular file"),
            );
        }
    }
    let limit = rules.max_config_bytes;
    let Some(bytes) = view.contents.new_bytes(&change.path, limit) else {
        return refuse(
            "git-config-unreadable",
            format!("{shown} is unreadable or over {limit} bytes"),
        );
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return refuse(
            "git-config-not-utf8",
            format!("{shown} is not UTF-8: cordon's parser cannot read it as git does"),
        );
    };
    let dropped = |refused: Vec<cordon_gitconfig::Refused>| -> Vec<Finding> {
        refused
            .into_iter()
            .map(|r| {
                Finding::new(
                    "git-config-key",
                    "git",
                    format!("{shown}: {}: {}", r.key, r.reason),
                )
                .with_key(r.key)
            })
            .collect()
    };
    let unparsable = |e: &dyn std::fmt::Display| {
        refuse(
            "git-config-unparsable",
            format!("{shown} does not parse as a git configuration: {e}"),
        )
    };
    let old = (change.kind == ChangeKind::Modified)
        .then(|| view.contents.old_bytes(&change.path, limit))
        .flatten()
        .and_then(|b| String::from_utf8(b).ok());
    if let Some(old) = old {
        return match cordon_gitconfig::merge(&old, &text, &old) {
            Ok(m) if m.refused.is_empty() => Verdict::Apply,
            Ok(m) => Verdict::ApplyRewritten {
                bytes: m.text.into_bytes(),
                dropped: dropped(m.refused),
            },
            Err(e) => unparsable(&e),
        };
    }
    // `git submodule add` sets a module's `core.worktree` to the way back to its checkout: kept
    // when, taken lexically from the module's directory, it stays in the root (as the
    // launcher's broker does).
    let keep = |e: &cordon_gitconfig::Entry| {
        at.submodule
            && e.section == "core"
            && e.subsection.is_none()
            && e.name == "worktree"
            && e.value.as_deref().is_some_and(|v| {
                !Path::new(v).is_absolute()
                    && matches!(view.land(&at.dir, Path::new(v)), Landing::Inside(_))
            })
    };
    match cordon_gitconfig::sanitize_keeping(&text, keep) {
        Ok((_, refused)) if refused.is_empty() => Verdict::Apply,
        Ok((clean, refused)) => Verdict::ApplyRewritten {
            bytes: clean.into_bytes(),
            dropped: dropped(refused),
        },
        Err(e) => unparsable(&e),
    }
}
