//! The git configuration broker, on the host: before a bubblewrap jail starts, each brokered
//! repository gets a shadow directory of cordon's inside its `.git` (the configuration's copy
//! as `config`, links to everything else of `.git`, and the pointer the jail reads as
//! `.git/commondir`); after the command, the copy's allowed changes are merged into the real
//! `.git/config` under git's own lock (`config.lock`, created exclusively, written, renamed),
//! and every refused key becomes a violation naming it (`cordon-gitconfig` decides which).
//!
//! While the command runs the real `.git/config` stays read-only, so host git never reads a
//! key the jail wrote. Submodule configurations the command created or changed
//! (`.git/modules/**/config`, written through the links) are sanitized after it, and a linked
//! worktree the command added is pointed at the real `.git` again.
//!
//! The jail has written everything in the shadow and below `.git`: nothing here follows a link
//! there (every open is `O_NOFOLLOW`, relative to a directory opened the same way), and files
//! are read up to [`MAX_CONFIG`] bytes.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cordon_policy::ConfigBroker;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::host::cleanup::{Cleanup, Tree};
use crate::violations::{Violation, ViolationKind};

/// The largest configuration read back.
const MAX_CONFIG: u64 = 1 << 20;
/// The prefix of a shadow's name inside `.git`.
pub(crate) const SHADOW_PREFIX: &str = "cordon-config-";
/// Common directories git creates lazily: made in the real `.git` before the jail (so the links
/// to them resolve) and removed after it when still empty.
const MADE_DIRS: &[&str] = &["logs", "info", "worktrees", "modules"];
/// Common files git may create: linked even when missing (git's lock follows the link).
const LINKED_FILES: &[&str] = &["packed-refs", "shallow"];

/// One brokered repository during a run.
#[derive(Debug)]
pub(crate) struct Broker {
    git_dir: PathBuf,
    shadow: PathBuf,
    /// The configuration as the jail got it.
    base: String,
    /// The submodule configurations before the run: path → (inode, size, mtime).
    modules: BTreeMap<PathBuf, (u64, u64, i64)>,
}

fn open_dir(path: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::open(
        path,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
        Mode::empty(),
    )
}

/// A regular file `name` in `dir`, read without following a link, at most [`MAX_CONFIG`].
fn read_in(dir: &OwnedFd, name: &str) -> Option<String> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(MAX_CONFIG)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

fn read_file(path: &Path) -> Option<String> {
    let dir = open_dir(path.parent()?).ok()?;
    read_in(&dir, path.file_name()?.to_str()?)
}

/// The name a run gives the shadow of `git_dir`'s broker (a fresh nonce each time).
pub(crate) fn shadow_name(git_dir: &Path) -> PathBuf {
    git_dir.join(format!("{SHADOW_PREFIX}{}", crate::host::token::nonce()))
}

/// The [`cordon_policy::BROKER_BOUND`] directories `dir` (a `.git`, or a shadow once
/// made) has.
pub(crate) fn bound_dirs(dir: &Path) -> Vec<&'static str> {
    cordon_policy::BROKER_BOUND
        .iter()
        .copied()
        .filter(|d| std::fs::symlink_metadata(dir.join(d)).is_ok_and(|m| m.is_dir()))
        .collect()
}

/// The broker feature of one run (bubblewrap only: the backend binds the pointer).
struct Git {
    brokers: Vec<Broker>,
}

/// Planning: the broker serves the backends that bind its shadows.
pub(crate) fn plan(
    run: &super::Run<'_>,
    _refusals: &mut Vec<String>,
) -> Option<Box<dyn super::Feature>> {
    // Under the copy-on-write layer the broker's binds of the host's `.git` would write
    // through; the commit judges `.git/config` instead, and it stays read-only in the jail.
    let layered = run.plan.workspace_mode.layered() && run.backend.layers();
    (run.backend.brokers_git_config() && !layered).then(|| {
        Box::new(Git {
            brokers: Vec::new(),
        }) as Box<dyn super::Feature>
    })
}

impl super::Feature for Git {
    fn name(&self) -> &'static str {
        "git"
    }

    /// Makes a broker for every candidate of the guarded plan, each handed to the backend
    /// beside the plan. A repository whose shadow cannot be made keeps its configuration
    /// read-only, as without a broker. Under `cordon explain` each shadow is named, not made.
    fn prepare_host(
        &mut self,
        run: &super::Run<'_>,
        host: &mut super::Host,
    ) -> Result<(), crate::LaunchError> {
        for git_dir in host.guarded.broker_candidates() {
            if run.dry {
                let shadow = shadow_name(&git_dir);
                let bound = bound_dirs(&git_dir);
                if let Some(b) = ConfigBroker::new(&host.guarded, &git_dir, shadow.clone(), &bound)
                {
                    host.brokers.push(b);
                    host.named.push(shadow);
                }
                continue;
            }
            let Some((broker, tree)) =
                make(&git_dir, run.backend.stage_binary(), &mut host.cleanup)
            else {
                continue;
            };
            host.cleanup.tree(tree);
            let bound = bound_dirs(&broker.shadow);
            if let Some(b) =
                ConfigBroker::new(&host.guarded, &git_dir, broker.shadow.clone(), &bound)
            {
                host.brokers.push(b);
                self.brokers.push(broker);
            }
        }
        host.brokers.sort();
        Ok(())
    }

    fn after(&mut self, writable: &[PathBuf], outcome: &mut super::Outcome) {
        // Every process of the jail is gone: its copies of the git configurations are final.
        let (refused, warnings) = finish(&self.brokers, writable);
        outcome.violations.extend(refused);
        outcome.warnings.extend(warnings);
    }
}

fn make(git_dir: &Path, binary: Option<&Path>, cleanup: &mut Cleanup) -> Option<(Broker, Tree)> {
    let base = read_file(&git_dir.join("config"))?;
    let shadow = shadow_name(git_dir);
    let tree = Tree::make(&shadow, binary, |d| {
        std::fs::DirBuilder::new().mode(0o700).create(d)
    })
    .ok()?;
    // Placeholders (placeholders.rs): made whole or joined, shared with concurrent jails, and
    // removed by the last run out only when cordon made them and they are still empty.
    for name in MADE_DIRS {
        let _ = cleanup.placeholder(&git_dir.join(name), crate::host::placeholders::Kind::Dir);
    }
    let fill = || -> std::io::Result<()> {
        std::fs::write(shadow.join("config"), &base)?;
        let mut pointer = shadow.as_os_str().as_encoded_bytes().to_vec();
        pointer.push(b'\n');
        std::fs::write(shadow.join(cordon_policy::BROKER_POINTER), pointer)?;
        let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(git_dir)?
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        names.extend(LINKED_FILES.iter().map(std::ffi::OsString::from));
        names.sort();
        names.dedup();
        for name in names {
            let skip = name == "config"
                || name == "commondir"
                || name.to_string_lossy().starts_with(SHADOW_PREFIX);
            let bound = cordon_policy::BROKER_BOUND.iter().any(|b| name == *b);
            if bound {
                // A mount point for bubblewrap's bind of the real directory.
                std::fs::create_dir(shadow.join(&name))?;
            } else if !skip {
                std::os::unix::fs::symlink(git_dir.join(&name), shadow.join(&name))?;
            }
        }
        Ok(())
    };
    fill().ok()?;
    let modules = module_configs(git_dir)
        .into_iter()
        .filter_map(|p| identity(&p).map(|id| (p, id)))
        .collect();
    Some((
        Broker {
            git_dir: git_dir.to_path_buf(),
            shadow,
            base,
            modules,
        },
        tree,
    ))
}

use std::os::unix::fs::{DirBuilderExt, MetadataExt};

fn identity(path: &Path) -> Option<(u64, u64, i64)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    m.file_type().is_file().then(|| {
        (
            m.ino(),
            m.size(),
            m.mtime_nsec() + m.mtime() * 1_000_000_000,
        )
    })
}

/// Whether `path` is a directory itself (not a link to one).
fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Every `config` of a submodule's repository below `git_dir/modules` (nested ones too, at most
/// four deep), without following links: a link the jail planted anywhere on the way (`modules`
/// itself, a module's directory) is not entered, so nothing outside `git_dir` is ever listed.
fn module_configs(git_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![(git_dir.join("modules"), 0)];
    while let Some((dir, depth)) = pending.pop() {
        if !real_dir(&dir) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let config = path.join("config");
            if std::fs::symlink_metadata(&config).is_ok_and(|m| m.is_file()) {
                out.push(config);
            }
            if depth < 4 {
                pending.push((path.join("modules"), depth + 1));
                pending.push((path, depth + 1));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn refused_violation(config: &Path, r: &cordon_gitconfig::Refused) -> Violation {
    let change = match r.change {
        cordon_gitconfig::ChangeKind::Added => "set",
        cordon_gitconfig::ChangeKind::Removed => "removed",
    };
    Violation {
        kind: ViolationKind::GitConfigRefused,
        line: format!("git config: {} {change} in the jail was not kept", r.key),
        path: Some(config.display().to_string()),
        rule: Some(format!(
            "brokered git configuration: {}; only identity, remotes, branch tracking, submodule registration and plain settings reach the repository's configuration",
            r.reason
        )),
        key: Some(r.key.clone()),
        operation: None,
        host: None,
        port: None,
    }
}

/// Writes `text` as `dir/name` the way git does: `name.lock` created exclusively (waiting up to
/// a second for another writer), written, synced, renamed over `name`; the mode of the file
/// it replaces is kept.
fn write_locked(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let fd = open_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let lock = format!("{name}.lock");
    let mode = rustix::fs::statat(&fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .map(|s| s.st_mode & 0o777)
        .unwrap_or(0o644);
    let mut tries = 0;
    let file = loop {
        match rustix::fs::openat(
            &fd,
            lock.as_str(),
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        ) {
            Ok(f) => break f,
            Err(Errno::EXIST) if tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("{}/{lock}: {e}", dir.display())),
        }
    };
    let mut file = std::fs::File::from(file);
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(&fd, lock.as_str(), rustix::fs::AtFlags::empty());
        return Err(format!("{}/{lock}: {e}", dir.display()));
    }
    rustix::fs::renameat(&fd, lock.as_str(), &fd, name).map_err(|e| {
        let _ = rustix::fs::unlinkat(&fd, lock.as_str(), rustix::fs::AtFlags::empty());
        format!("{}/{name}: {e}", dir.display())
    })
}

/// After the command: merges each broker's allowed changes, sanitizes the submodule
/// configurations the command created or changed, repairs the worktrees it added. Returns the
/// violations (refused keys) and warnings (what could not be merged).
pub(crate) fn finish(brokers: &[Broker], writable: &[PathBuf]) -> (Vec<Violation>, Vec<String>) {
    let mut violations = Vec::new();
    let mut warnings = Vec::new();
    for b in brokers {
        let config = b.git_dir.join("config");
        merge_one(b, &config, &mut violations, &mut warnings);
        for path in module_configs(&b.git_dir) {
            if b.modules.get(&path) == identity(&path).as_ref() {
                continue;
            }
            sanitize_one(&path, writable, &mut violations, &mut warnings);
        }
        repair_worktrees(b, writable);
    }
    (violations, warnings)
}

fn merge_one(
    b: &Broker,
    config: &Path,
    violations: &mut Vec<Violation>,
    warnings: &mut Vec<String>,
) {
    let Some(jail) = open_dir(&b.shadow).ok().and_then(|d| read_in(&d, "config")) else {
        warnings.push(format!(
            "git configuration broker: the jail's copy of {} is gone or not a file; nothing merged",
            config.display()
        ));
        return;
    };
    if jail == b.base {
        return;
    }
    let Some(current) = read_file(config) else {
        warnings.push(format!(
            "git configuration broker: {} cannot be read; nothing merged",
            config.display()
        ));
        return;
    };
    match cordon_gitconfig::merge(&b.base, &jail, &current) {
        Ok(merged) => {
            violations.extend(merged.refused.iter().map(|r| refused_violation(config, r)));
            if merged.text != current
                && let Err(e) = write_locked(&b.git_dir, "config", &merged.text)
            {
                warnings.push(format!(
                    "git configuration broker: the jail's changes to {} were not merged: {e}",
                    config.display()
                ));
            }
        }
        Err(e) => violations.push(Violation {
            kind: ViolationKind::GitConfigRefused,
            line: format!("git config: {e}"),
            path: Some(config.display().to_string()),
            rule: Some(
                "brokered git configuration: a copy that does not parse is not merged".into(),
            ),
            key: None,
            operation: None,
            host: None,
            port: None,
        }),
    }
}

fn sanitize_one(
    path: &Path,
    writable: &[PathBuf],
    violations: &mut Vec<Violation>,
    warnings: &mut Vec<String>,
) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let Some(text) = read_file(path) else {
        return;
    };
    // `git submodule add` sets the submodule's `core.worktree` to the relative way back to its
    // checkout: kept when, taken lexically from the module's directory, it stays in a
    // writable root (anything else would move checkouts elsewhere).
    let keep = |e: &cordon_gitconfig::Entry| {
        e.section == "core"
            && e.subsection.is_none()
            && e.name == "worktree"
            && e.value.as_deref().is_some_and(|v| {
                let target = crate::violations::clean(&dir.join(v));
                !Path::new(v).is_absolute() && writable.iter().any(|r| target.starts_with(r))
            })
    };
    let clean = match cordon_gitconfig::sanitize_keeping(&text, keep) {
        Ok((clean, refused)) => {
            violations.extend(refused.iter().map(|r| refused_violation(path, r)));
            clean
        }
        Err(e) => {
            violations.push(Violation {
                kind: ViolationKind::GitConfigRefused,
                line: format!("git config: {e}"),
                path: Some(path.display().to_string()),
                rule: Some(
                    "brokered git configuration: a submodule configuration the jail wrote that does not parse is emptied".into(),
                ),
                key: None,
                operation: None,
                host: None,
                port: None,
            });
            String::new()
        }
    };
    if clean != text
        && let Err(e) = write_locked(dir, name, &clean)
    {
        warnings.push(format!(
            "git configuration broker: {} could not be sanitized: {e}",
            path.display()
        ));
    }
}

/// A worktree the command added names the shadow in its `.git` file (git wrote the common
/// directory it was given): pointed at the real `.git` again, only when that file lies in a
/// writable root and says exactly that.
fn repair_worktrees(b: &Broker, writable: &[PathBuf]) {
    let Ok(entries) = std::fs::read_dir(b.git_dir.join("worktrees")) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(gitfile) = read_file(&e.path().join("gitdir")) else {
            continue;
        };
        let gitfile = PathBuf::from(gitfile.trim_end_matches('\n'));
        if !gitfile.is_absolute() || !writable.iter().any(|r| gitfile.starts_with(r)) {
            continue;
        }
        let wrong = format!("gitdir: {}/worktrees/{name}\n", b.shadow.display());
        if read_file(&gitfile).as_deref() != Some(wrong.as_str()) {
            continue;
        }
        let right = format!("gitdir: {}/worktrees/{name}\n", b.git_dir.display());
        if let (Some(dir), Some(file)) = (
            gitfile.parent(),
            gitfile.file_name().and_then(|f| f.to_str()),
        ) {
            let _ = write_locked(dir, file, &right);
        }
    }
}
