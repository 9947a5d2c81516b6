//! One change → one verdict, the rules in their order: structure, deletions, special files, git
//! directories, the registry, project configuration, links out of the root, modes.

use std::path::Path;

use crate::git;
use crate::model::{Change, ChangeKind, Finding, Node, Verdict};
use crate::rules::{Rules, allowed_mode};
use crate::view::{Landing, View, is_plain, names};

/// The directory name below which project configuration is not looked for: packages' own
/// directories, where the user does not run tools (the registry and git are judged there too).
const PACKAGES: &str = "node_modules";

pub(crate) fn judge_one(view: &View<'_>, change: &Change, rules: &Rules) -> Verdict {
    let shown = change.path.display();
    if !is_plain(&change.path) {
        return Verdict::Refuse(Finding::new(
            "path-not-plain",
            "cordon",
            format!("{shown} is not a plain relative path (`..`, `.` or a root in it)"),
        ));
    }
    if change.kind == ChangeKind::Deleted {
        return judge_deletion(view, change, rules);
    }
    if let Node::Special(kind) = change.node {
        return Verdict::Refuse(Finding::new(
            "special-file",
            "cordon",
            format!("{shown} is a {kind:?}: devices, fifos and sockets are never committed"),
        ));
    }
    if let Some(at) = git::git_dir_of(view, &change.path) {
        if let Some(v) = git::judge_in_git_dir(view, change, &at, rules) {
            return v;
        }
        // A directory made a git directory by a `.git` link or file is also a directory of
        // the work tree, where the registry's programs look (`HEAD/.git -> .` makes `HEAD` both).
        if let Some(v) = registry(change, rules) {
            return v;
        }
        return with_mode(change);
    }
    if change.path.file_name().is_some_and(|n| n == ".git") {
        if let Some(v) = git::judge_dot_git(view, change, rules) {
            return v;
        }
        return with_mode(change);
    }
    if plain_gitmodules(view, change, rules) {
        return with_mode(change);
    }
    if let Some(v) = registry(change, rules) {
        return v;
    }
    if let Some(v) = project_config(view, change, rules) {
        return v;
    }
    if let Some(v) = link_out_of_root(view, change, rules) {
        return v;
    }
    with_mode(change)
}

/// A deletion is applied, but inside a git directory (or of a `.git` itself), where it is
/// held: a deleted repository, branch or object must stay recoverable until the user says so.
/// So is a deletion at an auto-run name or of project configuration: removing the user's
/// `.pre-commit-config.yaml` turns their checks off, removing an `.npmrc` that says
/// `ignore-scripts=true` makes their next `npm install` run every package's scripts.
fn judge_deletion(view: &View<'_>, change: &Change, rules: &Rules) -> Verdict {
    let dot_git = change.path.file_name().is_some_and(|n| n == ".git");
    if dot_git || git::git_dir_of(view, &change.path).is_some() {
        return Verdict::Hold(Finding::new(
            "git-deletion",
            "git",
            format!(
                "{} deleted: a repository's contents are applied only with the user's consent",
                change.path.display()
            ),
        ));
    }
    registry(change, rules)
        .or_else(|| project_config(view, change, rules))
        .unwrap_or(Verdict::Apply)
}

/// A new or changed `.gitmodules` (outside any other registry entry) that is a file whose every
/// entry is a submodule's plain registration: its `path`, and keys `cordon-gitconfig` lets a
/// jail set (`url` without a transport helper, `update` without a command, `branch`, …). That
/// is what `git submodule add` writes; host git runs nothing from it. Anything else is the
/// registry's to judge (new: refused, changed: held).
fn plain_gitmodules(view: &View<'_>, change: &Change, rules: &Rules) -> bool {
    let parts = names(&change.path);
    let Some((last, above)) = parts.split_last() else {
        return false;
    };
    if last != ".gitmodules"
        || above.iter().any(|n| rules.registry_entry(n).is_some())
        || !matches!(change.node, Node::File { .. })
    {
        return false;
    }
    let Some(text) = view
        .contents
        .new_bytes(&change.path, rules.max_config_bytes)
        .and_then(|b| String::from_utf8(b).ok())
    else {
        return false;
    };
    cordon_gitconfig::plain_gitmodules(&text)
}

/// An auto-run name of the registry, at any depth: new is refused, changed or deleted held.
fn registry(change: &Change, rules: &Rules) -> Option<Verdict> {
    let parts = names(&change.path);
    let (i, entry) = parts
        .iter()
        .enumerate()
        .find_map(|(i, n)| rules.registry_entry(n).map(|e| (i, e)))?;
    let at: std::path::PathBuf = parts[..=i].iter().collect();
    let shown = change.path.display();
    let where_ = if i + 1 == parts.len() {
        String::new()
    } else {
        format!(" (in {})", at.display())
    };
    Some(match change.kind {
        ChangeKind::Added => Verdict::Refuse(Finding::new(
            "auto-run-new",
            entry.program,
            format!("{shown}{where_} is new: {}", entry.why),
        )),
        ChangeKind::Deleted => Verdict::Hold(Finding::new(
            "auto-run-deleted",
            entry.program,
            format!("{shown}{where_} deleted: the user's own; {}", entry.why),
        )),
        _ => Verdict::Hold(Finding::new(
            "auto-run-modified",
            entry.program,
            format!("{shown}{where_} changed: {}", entry.why),
        )),
    })
}

/// Where a path meets project configuration: the index of the configuration entry among its
/// components. At the root's top a dot-entry or toolchain file; below it an any-depth name, or
/// a configuration entry at a nested project's top (a directory holding a manifest or a
/// `.git`); nothing below `node_modules`.
fn config_entry(view: &View<'_>, parts: &[String], rules: &Rules) -> Option<usize> {
    let first = parts.first()?;
    if rules.is_top_config(first) {
        return Some(0);
    }
    for i in 1..parts.len() {
        if parts[i - 1] == PACKAGES {
            return None;
        }
        let name = &parts[i];
        if rules.any_depth_entry(name).is_some() {
            return Some(i);
        }
        if rules.is_top_config(name) {
            let dir: std::path::PathBuf = parts[..i].iter().collect();
            if rules
                .project_markers
                .iter()
                .any(|m| view.exists(&dir.join(m)))
            {
                return Some(i);
            }
        }
    }
    None
}

/// Project configuration by allowlist: a new or changed entry is held unless it is inert.
fn project_config(view: &View<'_>, change: &Change, rules: &Rules) -> Option<Verdict> {
    let parts = names(&change.path);
    let i = config_entry(view, &parts, rules)?;
    let rel: Vec<&str> = parts[i..].iter().map(String::as_str).collect();
    if rules.inert_entry(&rel).is_some() {
        return None;
    }
    let shown = change.path.display();
    let (program, why) = match rules.any_depth_entry(&parts[i]) {
        Some(c) => (c.tool, c.runs.to_owned()),
        None => (
            "an unlisted tool",
            format!(
                "{} is project configuration not known to be inert (docs/project-config.md)",
                parts[i]
            ),
        ),
    };
    let verb = match change.kind {
        ChangeKind::Added => "is new",
        ChangeKind::Deleted => "deleted",
        _ => "changed",
    };
    Some(Verdict::Hold(Finding::new(
        "project-config",
        program,
        format!("{shown} {verb}: {why}"),
    )))
}

/// A symbolic link whose target leaves the root into a place that would be protected were it
/// in the root: an auto-run name (refused) or configuration (held).
fn link_out_of_root(view: &View<'_>, change: &Change, rules: &Rules) -> Option<Verdict> {
    let Node::Symlink { target } = &change.node else {
        return None;
    };
    let base = change.path.parent().unwrap_or(Path::new(""));
    let Landing::Outside(to) = view.land(base, target) else {
        return None;
    };
    let parts = names(&to);
    let shown = change.path.display();
    let why = |what: &str| {
        format!(
            "{shown} links out of the root to {}, {what}: host tools would read the link as the file",
            to.display()
        )
    };
    if let Some(e) = parts.iter().find_map(|n| rules.registry_entry(n)) {
        return Some(Verdict::Refuse(Finding::new(
            "symlink-out-of-root",
            e.program,
            why(&format!("an auto-run location ({})", e.why)),
        )));
    }
    if parts.iter().any(|n| n == ".git") {
        return Some(Verdict::Refuse(Finding::new(
            "symlink-out-of-root",
            "git",
            why("a git directory"),
        )));
    }
    let config = parts.iter().find(|n| rules.is_top_config(n))?;
    let program = rules
        .any_depth_entry(config)
        .map_or("an unlisted tool", |c| c.tool);
    Some(Verdict::Hold(Finding::new(
        "symlink-out-of-root",
        program,
        why("a configuration location"),
    )))
}

/// Apply, with set-id and world-writable bits stripped.
fn with_mode(change: &Change) -> Verdict {
    let mode = match change.node {
        Node::File { mode, .. } | Node::Dir { mode } => mode,
        _ => return Verdict::Apply,
    };
    let allowed = allowed_mode(mode);
    if allowed == mode & 0o7777 {
        return Verdict::Apply;
    }
    Verdict::ApplyMode {
        mode: allowed,
        why: format!(
            "{}: mode {:o} committed as {allowed:o} (set-id and world-writable bits are never committed)",
            change.path.display(),
            mode & 0o7777
        ),
    }
}
