//! After the run: auto-run files the command created where none existed at launch.
//!
//! A missing protected path cannot be bound read-only, and a placeholder per missing name would
//! create and remove one entry per name per command in the user's workspace (the registry has
//! dozens). Instead, the guard keeps placeholders only for git's redirections inside a git
//! directory, which host git reads on every command, and this module looks, once the jail's
//! processes are gone, for what the command created at the other names:
//!
//! - **one `readdir` of each granted root**, its names matched in memory against the registry
//!   (exact names and root patterns such as `*.code-workspace`): the cost does not grow with the
//!   registry;
//! - **one `lstat` per missing path deeper than a root's top** (`.git/info/attributes`, a
//!   submodule's `.git`, a configured protected path): these grow with the repository's
//!   structure and the configuration, never with the registry's root entries.
//!
//! A new `.gitmodules` holding only plain submodule registrations (what `git submodule add`
//! writes) stays, as the layer's commit lets it through. What else it finds is moved aside in
//! its own directory under a name no tool reads
//! (`.<name>.cordon-quarantine-<nonce>`, `rename` without replacing, only when the directory
//! holding it is still where it was, no symlink on the way) and reported as a
//! [`ViolationKind::Planted`] violation naming the program that would have run it. The
//! command's processes are gone by then (bubblewrap's PID namespace; the Landlock backend's
//! process group is killed), so nothing re-creates it behind the sweep. The window while the
//! command runs is `docs/limits.md`'s.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cordon_policy::AutoRun;
use cordon_policy::{GuardedPlan, SkipReason};

use crate::violations::{Violation, ViolationKind};

/// What to look for after one run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sweep {
    /// Granted roots (pins excluded): one `readdir` each.
    roots: Vec<PathBuf>,
    /// Paths that existed (and were protected) at launch.
    known: BTreeSet<PathBuf>,
    /// Missing protected paths below a root's top: one `lstat` each.
    nested: Vec<PathBuf>,
    /// Files put back after the run (the plan's `restored`), with their content at launch.
    restored: Vec<(PathBuf, Vec<u8>)>,
}

/// At most this many bytes of a file to put back are kept (a git config is far smaller); a
/// larger one is not kept, and the sweep reports it changed whatever happens.
const RESTORED_MAX: u64 = 1 << 20;

fn read_bounded(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(RESTORED_MAX + 1)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

impl Sweep {
    /// The sweep for a jail built from `plan`, whose roots `layered` are under the
    /// copy-on-write layer and are not swept: the commit refused every new auto-run name at any
    /// depth there (`cordon-changes`, a superset of what the sweep looks for), judged every
    /// change of a file the sweep would put back, and a file that appeared at such a name during
    /// the run is the host's own (an editor's, the user's), not the command's.
    pub(crate) fn of(plan: &GuardedPlan, layered: &[PathBuf]) -> Sweep {
        let live = |p: &Path| !layered.iter().any(|l| p.starts_with(l));
        let mut roots: Vec<PathBuf> = plan
            .writable
            .iter()
            .filter(|w| !plan.pins().contains(w))
            .chain(plan.inner_roots.iter())
            .filter(|r| live(r))
            .cloned()
            .collect();
        roots.sort();
        roots.dedup();
        let known: BTreeSet<PathBuf> = plan.protected.iter().map(|p| p.path.clone()).collect();
        let nested = plan
            .skipped
            .iter()
            .filter(|s| s.reason == SkipReason::ProtectedMissing)
            // A placeholder made for the run is protected, not missing.
            .filter(|s| !known.contains(&s.path))
            .filter(|s| live(&s.path))
            .filter(|s| {
                let top_name = s
                    .path
                    .parent()
                    .is_some_and(|d| roots.iter().any(|r| r == d))
                    && s.path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(AutoRun::is_root_name);
                !top_name
            })
            .map(|s| s.path.clone())
            .collect();
        // Read now, before the jail starts.
        let restored = plan
            .restored
            .iter()
            .filter(|p| live(&p.path))
            .filter_map(|p| read_bounded(&p.path).map(|c| (p.path.clone(), c)))
            .collect();
        Sweep {
            roots,
            known,
            nested,
            restored,
        }
    }

    /// How many host calls one sweep makes (readdirs and lstats).
    #[cfg(test)]
    pub(crate) fn calls(&self) -> usize {
        self.roots.len() + self.nested.len()
    }

    /// Looks, moves aside and reports. Call only once the jail's processes are gone.
    pub(crate) fn run(&self) -> Vec<Violation> {
        let mut found: Vec<PathBuf> = Vec::new();
        for root in &self.roots {
            let Ok(entries) = std::fs::read_dir(root) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name();
                let Some(text) = name.to_str() else { continue };
                let path = root.join(&name);
                if AutoRun::is_root_name(text)
                    && !self.known.contains(&path)
                    && !plain_gitmodules_file(&path)
                {
                    found.push(path);
                }
            }
        }
        for path in &self.nested {
            if std::fs::symlink_metadata(path).is_ok() {
                found.push(path.clone());
            }
        }
        found.sort();
        found.dedup();
        let mut out: Vec<Violation> = found.iter().map(|p| quarantine(p)).collect();
        for (path, before) in &self.restored {
            if read_bounded(path).as_ref() != Some(before) {
                out.push(restore(path, before));
            }
        }
        out
    }
}

/// A new `.gitmodules` that is a regular file holding only plain submodule registrations
/// (`cordon_gitconfig::plain_gitmodules`, the rule the layer's commit applies): what `git
/// submodule add` writes, from which host git runs nothing. It stays.
fn plain_gitmodules_file(path: &Path) -> bool {
    path.file_name() == Some(std::ffi::OsStr::new(".gitmodules"))
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
        && read_bounded(path)
            .filter(|b| b.len() as u64 <= RESTORED_MAX)
            .and_then(|b| String::from_utf8(b).ok())
            .is_some_and(|t| cordon_gitconfig::plain_gitmodules(&t))
}

/// Puts `content` back at `path` (a temporary file in the same directory, renamed over it).
fn restore(path: &Path, content: &[u8]) -> Violation {
    let shown = path.display();
    let rule = "rule restored-after-run: this file makes host programs run code; the command may rewrite it while it runs, and what it was at launch is put back after the run".to_owned();
    let done = (|| -> std::io::Result<()> {
        let dir = path
            .parent()
            .ok_or_else(|| std::io::Error::other("no parent directory"))?;
        if std::fs::canonicalize(dir)?.as_path() != dir {
            return Err(std::io::Error::other(format!(
                "{} no longer resolves to itself",
                dir.display()
            )));
        }
        if content.len() as u64 > RESTORED_MAX {
            return Err(std::io::Error::other("too large to have been kept"));
        }
        let tmp = dir.join(format!(
            ".config.cordon-restore-{}",
            crate::host::token::nonce()
        ));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| std::io::Write::write_all(&mut f, content));
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(())
    })();
    let mut line = match done {
        Ok(()) => format!("{shown} was changed during the run; put back as it was at launch"),
        Err(e) => format!("{shown} was changed during the run and could not be put back: {e}"),
    };
    line.truncate(line.floor_char_boundary(240));
    Violation {
        kind: ViolationKind::Planted,
        line,
        path: Some(shown.to_string()),
        rule: Some(rule),
        host: None,
        port: None,
        key: None,
        operation: None,
    }
}

fn describe(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match AutoRun::for_root_name(name) {
        Some(e) => format!("{} reads it ({:?}): {}", e.program, e.when, e.why),
        None => "a protected path".to_owned(),
    }
}

/// Moves `path` aside in its own directory and says so.
fn quarantine(path: &Path) -> Violation {
    let what = describe(path);
    let shown = path.display();
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return planted(
            path,
            format!("{shown} was created during the run ({what})"),
            None,
        );
    };
    // The directory must still be where it was: no symlink on the way, or the rename would
    // reach somewhere else.
    if std::fs::canonicalize(dir).ok().as_deref() != Some(dir) {
        return planted(
            path,
            format!(
                "{shown} was created during the run ({what}); it was not moved: {} no longer resolves to itself",
                dir.display()
            ),
            None,
        );
    }
    let aside = dir.join(format!(
        ".{}.cordon-quarantine-{}",
        name.to_string_lossy(),
        crate::host::token::nonce()
    ));
    let moved = rustix::fs::renameat_with(
        rustix::fs::CWD,
        path,
        rustix::fs::CWD,
        &aside,
        rustix::fs::RenameFlags::NOREPLACE,
    );
    match moved {
        Ok(()) => planted(
            path,
            format!(
                "{shown} was created during the run ({what}); moved to {}",
                aside.display()
            ),
            Some(aside),
        ),
        Err(e) => planted(
            path,
            format!("{shown} was created during the run ({what}); it could not be moved: {e}"),
            None,
        ),
    }
}

fn planted(path: &Path, line: String, aside: Option<PathBuf>) -> Violation {
    let rule = match aside {
        Some(a) => format!(
            "rule auto-run-created: an auto-run file that did not exist at launch is moved aside after the run; to keep it, review it and move {} back",
            a.display()
        ),
        None => "rule auto-run-created: an auto-run file that did not exist at launch; review it before any tool reads it".to_owned(),
    };
    let mut line = line;
    line.truncate(line.floor_char_boundary(240));
    Violation {
        kind: ViolationKind::Planted,
        line,
        path: Some(path.display().to_string()),
        rule: Some(rule),
        host: None,
        port: None,
        key: None,
        operation: None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use cordon_policy::{Invocation, Plan, Policy, Profile, RealHost};

    /// A workspace `w` with a git directory (its `HEAD`) and a home beside it, laid out further
    /// by `layout` before the Shell profile's plan is resolved for it: the directory (kept
    /// alive), the workspace, the host and the plan, not yet guarded.
    fn planned(layout: impl FnOnce(&Path)) -> (tempfile::TempDir, PathBuf, RealHost, Plan) {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        let work = top.join("w");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::write(work.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir(top.join("home")).unwrap();
        layout(&work);
        let host = RealHost::new(Some(top.join("home").into_os_string()));
        let plan = Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at(&work),
            &host,
        )
        .unwrap();
        (dir, work, host, plan)
    }

    /// A submodule's git directory with `config`, below `work`.
    fn submodule(work: &Path, config: &str) -> PathBuf {
        let sub = work.join(".git/modules/lib");
        std::fs::create_dir_all(sub.join("hooks")).unwrap();
        std::fs::write(sub.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(sub.join("config"), config).unwrap();
        sub
    }

    #[test]
    fn created_auto_run_names_are_moved_aside_and_others_stay() {
        let (_dir, work, host, plan) = planned(|work| {
            std::fs::create_dir_all(work.join(".git/info")).unwrap();
            std::fs::write(work.join(".git/config"), "").unwrap();
            std::fs::create_dir(work.join(".vscode")).unwrap();
            submodule(work, "[core]\n\tworktree = ../../../lib\n");
        });
        let sub = work.join(".git/modules/lib");
        let plan = plan.guard(&host);
        let sweep = Sweep::of(&plan, &[]);
        assert!(sweep.calls() < 16, "{sweep:?}");
        // What a command would create during the run.
        std::fs::create_dir(work.join(".claude")).unwrap();
        std::fs::write(work.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(work.join("x.code-workspace"), "{}").unwrap();
        std::fs::write(work.join(".git/info/attributes"), "* filter=x\n").unwrap();
        std::fs::write(work.join("notes.txt"), "mine\n").unwrap();
        std::fs::write(work.join(".vscode/tasks.json"), "{}").unwrap();
        std::fs::write(sub.join("config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        let mut v = sweep.run();
        let restored = v.pop().unwrap();
        assert_eq!(restored.path.as_deref(), sub.join("config").to_str());
        assert!(restored.line.contains("put back"), "{}", restored.line);
        assert_eq!(
            std::fs::read_to_string(sub.join("config")).unwrap(),
            "[core]\n\tworktree = ../../../lib\n"
        );
        let paths: Vec<&str> = v.iter().filter_map(|v| v.path.as_deref()).collect();
        let want = [
            work.join(".claude"),
            work.join(".git/info/attributes"),
            work.join("x.code-workspace"),
        ];
        let want: Vec<String> = want.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(paths, want);
        assert!(v.iter().all(|v| v.kind == ViolationKind::Planted));
        assert!(v[0].line.contains("Claude Code"), "{}", v[0].line);
        for p in [".claude", "x.code-workspace", ".git/info/attributes"] {
            assert!(!work.join(p).exists(), "{p} still there");
        }
        let aside: Vec<String> = std::fs::read_dir(&work)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("cordon-quarantine"))
            .collect();
        assert_eq!(aside.len(), 2, "{aside:?}");
        assert!(aside.iter().all(|n| !AutoRun::is_root_name(n)), "{aside:?}");
        // The existing `.vscode` (bound read-only in a jail) and ordinary files are left alone.
        assert!(work.join(".vscode/tasks.json").exists() && work.join("notes.txt").exists());
        assert!(sweep.run().is_empty(), "a second sweep finds nothing");
    }

    #[test]
    fn a_new_gitmodules_stays_only_when_it_holds_plain_registrations() {
        let (_dir, work, host, plan) = planned(|_| {});
        let sweep = Sweep::of(&plan.guard(&host), &[]);
        let modules = work.join(".gitmodules");
        let plain = "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib.git\n";
        std::fs::write(&modules, plain).unwrap();
        assert!(sweep.run().is_empty());
        assert_eq!(std::fs::read_to_string(&modules).unwrap(), plain);
        // An update command host git would run: moved aside like any planted name.
        std::fs::write(
            &modules,
            "[submodule \"lib\"]\n\tpath = lib\n\tupdate = !touch x\n",
        )
        .unwrap();
        let v = sweep.run();
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(!modules.exists());
    }

    #[test]
    fn a_root_under_the_layer_is_not_swept_and_nothing_is_put_back() {
        let (_dir, work, host, plan) = planned(|work| {
            submodule(work, "[core]\n");
        });
        let sub = work.join(".git/modules/lib");
        let plan = plan.guard_beside_layer(&host, std::slice::from_ref(&work));
        assert!(
            Sweep::of(&plan, &[]).calls() > 0,
            "live, the same plan is swept"
        );
        let sweep = Sweep::of(&plan, std::slice::from_ref(&work));
        assert_eq!(sweep.calls(), 0, "{sweep:?}");
        // The user's own edits during the run (what the commit applied looks the same).
        std::fs::write(work.join(".envrc"), "use nix\n").unwrap();
        std::fs::write(sub.join("config"), "[core]\n\tbare = false\n").unwrap();
        assert!(sweep.run().is_empty());
        assert!(work.join(".envrc").exists());
        assert_eq!(
            std::fs::read_to_string(sub.join("config")).unwrap(),
            "[core]\n\tbare = false\n"
        );
    }
}
