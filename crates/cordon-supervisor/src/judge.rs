//! The pure half: whether a change at a resolved path may happen.
//!
//! The supervisor hands over the path it resolved itself (the real path of the parent
//! directory it holds open, and the last name), never a path the jail wrote: what is judged is
//! what the call would change.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use cordon_policy::AutoRun;

/// What a call would do at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Open an existing entry for writing, or truncate it.
    Write,
    /// Create an entry at a free name (a file, link, node, or a rename onto a free name). A
    /// root-scope auto-run name may be taken (`git clone` of a project with a `.gitattributes`);
    /// the launcher's sweep moves what was made at a root's top aside after a live run.
    Create,
    /// Create a directory: an auto-run entry that is a directory (`.git/hooks`, `.vscode`)
    /// may be made empty, nothing in it.
    MakeDir,
    /// Remove the entry, or rename it (as the source or the destination).
    Remove,
    /// Change its mode, owner, times or extended attributes.
    Metadata,
    /// Give it a second name (the source of a hard link).
    LinkSource,
}

/// Why a change was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The path the change would have touched.
    pub path: PathBuf,
    /// A stable rule id: `outside-writable`, `masked`, `protected`, `git-directory`,
    /// `auto-run`, `writable-root`.
    pub rule: &'static str,
    /// What the call fails with.
    pub errno: i32,
    /// For a git configuration the supervisor brokered (`git-config` rule): the key it dropped.
    /// The call itself succeeded without it.
    pub key: Option<String>,
}

/// What the supervisor enforces, as plain data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Writable roots (canonical): changes happen below them only.
    pub writable: Vec<PathBuf>,
    /// Files outside them that may be opened for writing (`/dev/null`, `/dev/tty`, …), exactly.
    pub devices: Vec<PathBuf>,
    /// Protected paths (canonical): nothing at or below them changes, and no directory above
    /// them is removed or renamed.
    pub protected: Vec<PathBuf>,
    /// Credential masks (canonical): the supervisor opens files for the jail, so it refuses
    /// what Landlock hides from it, at and below them, whatever the change.
    pub masked: Vec<PathBuf>,
    /// The jail's own `/dev/shm` (a directory inside a writable root, the run's temporary one):
    /// POSIX shared memory and semaphores (`shm_open`, `sem_open`: files below `/dev/shm`) are
    /// made there, never among the host's. `None`: `/dev/shm` is outside the writable set.
    pub shm: Option<PathBuf>,
    /// The network is denied and no namespace holds the jail: the calls that name an address
    /// come here, and the jail reaches only sockets it bound itself (and these). `None`: the
    /// filter sends no such call.
    pub network: Option<Network>,
}

/// What a jail without a network namespace may reach when the network is denied, beyond the
/// sockets it bound itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Network {
    /// Inodes of host sockets the jail may connect to (the run's proxy listener).
    pub granted_sockets: Vec<u64>,
    /// The address the jail's stage connects to once, before the command exists, to prove the
    /// network closed (the launcher's sentinel listener): refused like any other, but its first
    /// refusal is the stage's own and goes in no [`Report`](crate::Report); a later one is the
    /// command's and does.
    pub self_check: Option<std::net::SocketAddr>,
}

const EACCES: i32 = 13;
const EPERM: i32 = 1;
const EBUSY: i32 = 16;

impl Rules {
    /// Whether `change` may happen at `path` (absolute, without `.` or `..`).
    ///
    /// # Errors
    ///
    /// The [`Refusal`] naming the rule that speaks first.
    pub fn judge(&self, change: Change, path: &Path) -> Result<(), Refusal> {
        let refuse = |rule, errno| {
            Err(Refusal {
                path: path.to_path_buf(),
                rule,
                errno,
                key: None,
            })
        };
        let denied = if change == Change::Metadata {
            EPERM
        } else {
            EACCES
        };
        if !is_plain(path) {
            return refuse("outside-writable", denied);
        }
        if self.masked.iter().any(|m| path.starts_with(m)) {
            return refuse("masked", denied);
        }
        if matches!(change, Change::Write | Change::Create)
            && self.devices.iter().any(|d| d == path)
        {
            return Ok(());
        }
        // Names are read from the outermost root: a plan may grant a git directory inside the
        // workspace as a root of its own, and `.git/modules/lib/config` is still a git
        // directory's configuration.
        let Some(root) = self
            .writable
            .iter()
            .filter(|r| path.starts_with(r))
            .min_by_key(|r| r.as_os_str().len())
        else {
            return refuse("outside-writable", denied);
        };
        if change == Change::Remove && self.writable.iter().any(|r| r == path) {
            return refuse("writable-root", EBUSY);
        }
        if self.protected.iter().any(|p| path.starts_with(p)) {
            return refuse("protected", denied);
        }
        if change == Change::Remove && self.protected.iter().any(|p| p.starts_with(path)) {
            return refuse("protected", denied);
        }
        let rel: Vec<&OsStr> = path
            .strip_prefix(root)
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        if let Some(rule) = by_name(&rel, change) {
            return refuse(rule, denied);
        }
        Ok(())
    }

    /// Whether `path` is a git configuration the supervisor brokers (a git directory's
    /// `config` or `config.worktree`, in `.git` or below its `modules/` or `worktrees/`):
    /// inside a writable root and not masked. A plan protects every git configuration it
    /// finds; brokered, it changes only as `cordon-gitconfig` allows.
    pub fn brokers(&self, path: &Path) -> bool {
        if !is_plain(path) || self.masked.iter().any(|m| path.starts_with(m)) {
            return false;
        }
        self.writable
            .iter()
            .filter(|r| path.starts_with(r))
            .min_by_key(|r| r.as_os_str().len())
            .and_then(|root| path.strip_prefix(root).ok())
            .is_some_and(|rel| is_git_config(&rel.iter().collect::<Vec<_>>()))
    }
}

impl Rules {
    /// Whether a rename over `path` is brokered as a `.gitmodules` (broker.rs): the name is
    /// `.gitmodules`, and an ordinary new entry beside it would be allowed, so that its name
    /// is the only reason the judge refuses it.
    pub fn brokers_gitmodules(&self, path: &Path) -> bool {
        path.file_name() == Some(std::ffi::OsStr::new(".gitmodules"))
            && is_plain(path)
            && self
                .judge(
                    Change::Create,
                    &path.with_file_name("cordon-gitmodules-sibling"),
                )
                .is_ok()
    }
}

fn is_plain(path: &Path) -> bool {
    path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

/// The registry's names, at any depth below a root: a git directory's auto-run entries (`hooks`
/// but git's own `*.sample` files, `config`, …), in `.git` and in the git directories below its
/// `modules/` and `worktrees/`, and the root-scope entries (`.envrc`, `.vscode`,
/// `*.code-workspace`, …). A removal or rename also may not take away a `.git` or a directory
/// on the way to an entry, which would carry protection off. An entry that is a directory may be
/// made, empty.
fn by_name(rel: &[&OsStr], change: Change) -> Option<&'static str> {
    let removing = change == Change::Remove;
    let names: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    for i in 0..names.len() {
        if names[i] == ".git" {
            if i + 1 == names.len() {
                if removing {
                    return Some("git-directory");
                }
                continue;
            }
            for (rest, sub, nested) in git_dir_paths(&names[i + 1..]) {
                // A linked worktree's administrative directory holds its own `commondir` and
                // `gitdir`, which `git worktree add` writes: only the repository's are refused.
                let pointer = rest == "commondir" || rest == "gitdir";
                if nested && pointer {
                    continue;
                }
                if let Some(entry) = AutoRun::for_git_dir_path(&rest, sub) {
                    let sample = rest.starts_with("hooks/") && rest.ends_with(".sample");
                    let empty_dir = change == Change::MakeDir && rest == entry.name();
                    // A mode or time of a configuration runs nothing (`git init` probes the
                    // file system with a chmod of its new one); a hook's mode does.
                    let inert = change == Change::Metadata && !rest.starts_with("hooks");
                    if !sample && !empty_dir && !inert {
                        return Some("git-directory");
                    }
                }
            }
        }
        for j in i..names.len() {
            let joined = names[i..=j].join("/");
            if let Some(entry) = AutoRun::for_root_name(&joined) {
                let last = j + 1 == names.len();
                let empty_dir = change == Change::MakeDir && last && joined == entry.name();
                // A new name may be taken; the mode and times of any are inert (a host
                // program reads these files, it does not execute them).
                let new = matches!(change, Change::Create | Change::Metadata);
                if !empty_dir && !new {
                    return Some("auto-run");
                }
            }
            if removing && j + 1 == names.len() && leads_to_entry(&joined) {
                return Some("auto-run");
            }
        }
    }
    None
}

/// The paths below a `.git` as git directories see them: the path itself, and below
/// `modules/` or `worktrees/` every tail after a name of one component or more (a
/// submodule's name may hold slashes, and modules nest), with whether it is a submodule's and
/// whether it lies below `modules/` or `worktrees/`.
fn git_dir_paths(below: &[String]) -> Vec<(String, bool, bool)> {
    let mut out = vec![(below.join("/"), false, false)];
    let mut k = 0;
    while k < below.len() {
        let nested = below[k] == "modules" || below[k] == "worktrees";
        if nested {
            let sub = below[k] == "modules";
            for j in k + 2..below.len() {
                out.push((below[j..].join("/"), sub, true));
            }
        }
        k += 1;
    }
    out
}

/// Whether `path` is a git directory's `config` or `config.worktree` (in `.git`, or a git
/// directory below its `modules/` or `worktrees/`): the file git replaces by renaming a
/// `.lock` over it, which the supervisor brokers instead of refusing.
pub(crate) fn is_git_config(root_rel: &[&OsStr]) -> bool {
    let names: Vec<String> = root_rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = names.last().map(String::as_str);
    if !matches!(last, Some("config" | "config.worktree")) {
        return false;
    }
    (0..names.len()).any(|i| {
        names[i] == ".git"
            && git_dir_paths(&names[i + 1..])
                .iter()
                .any(|(rest, _, _)| rest == "config" || rest == "config.worktree")
    })
}

/// Whether a registry entry lies below `prefix` (`.vscode` for `.vscode/tasks.json`).
fn leads_to_entry(prefix: &str) -> bool {
    AutoRun::REGISTRY.iter().any(|e| {
        e.name()
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            writable: vec![
                "/ws".into(),
                "/ws/.git/modules/lib".into(),
                "/tmp/run".into(),
            ],
            devices: vec!["/dev/null".into()],
            protected: vec!["/ws/keep".into()],
            masked: vec!["/ws/.env".into()],
            shm: None,
            network: None,
        }
    }

    fn rule(change: Change, path: &str) -> Option<&'static str> {
        rules().judge(change, Path::new(path)).err().map(|r| r.rule)
    }

    #[test]
    fn the_top_of_a_root_takes_new_entries_but_protected_names_are_refused_at_any_depth() {
        for ok in [".envrc", "sub/.gitattributes", ".vscode/settings.json"] {
            let path = format!("/ws/{ok}");
            assert_eq!(rule(Change::Create, &path), None, "new: {path}");
            assert_eq!(
                rule(Change::Write, &path),
                Some("auto-run"),
                "existing: {path}"
            );
        }
        for ok in [
            "/ws/Cargo.lock",
            "/ws/build",
            "/ws/.git/index.lock",
            "/ws/.git/objects/ab/cd",
            "/ws/.git/hooks/pre-commit.sample",
            "/ws/sub/.git/refs/heads/main",
            "/tmp/run/x",
        ] {
            assert_eq!(rule(Change::Write, ok), None, "{ok}");
        }
        for (path, why) in [
            ("/ws/.git/hooks/pre-commit", "git-directory"),
            ("/ws/.git/config", "git-directory"),
            ("/ws/a/b/.git/hooks/post-checkout", "git-directory"),
            ("/ws/.envrc", "auto-run"),
            ("/ws/deep/down/.envrc", "auto-run"),
            ("/ws/keep", "protected"),
            ("/ws/keep/inside", "protected"),
            ("/ws/.env", "masked"),
            ("/home/u/.bashrc", "outside-writable"),
            ("/ws/../etc/x", "outside-writable"),
            ("relative", "outside-writable"),
        ] {
            assert_eq!(rule(Change::Write, path), Some(why), "{path}");
        }
        assert_eq!(rule(Change::Write, "/dev/null"), None);
        assert_eq!(
            rule(Change::Metadata, "/dev/null"),
            Some("outside-writable")
        );
    }

    #[test]
    fn a_removal_may_not_carry_protection_away() {
        assert_eq!(rule(Change::Remove, "/ws/.git"), Some("git-directory"));
        assert_eq!(rule(Change::Write, "/ws/.git"), None, "git init makes one");
        assert_eq!(rule(Change::Remove, "/ws"), Some("writable-root"));
        assert_eq!(
            rule(Change::Remove, "/ws/.git/modules/lib"),
            Some("writable-root")
        );
        assert_eq!(rule(Change::Remove, "/ws/keep"), Some("protected"));
        assert_eq!(
            rules()
                .judge(Change::Remove, Path::new("/ws/keep/../x"))
                .map_err(|r| r.errno),
            Err(EACCES)
        );
        assert_eq!(rule(Change::Remove, "/ws/src/main.rs"), None);
        assert_eq!(rule(Change::Remove, "/ws/.git/index.lock"), None);
        let vscode = AutoRun::REGISTRY
            .iter()
            .map(AutoRun::name)
            .find(|n| n.contains('/'))
            .and_then(|n| n.split('/').next());
        if let Some(dir) = vscode {
            let path = format!("/ws/{dir}");
            assert_eq!(rule(Change::Remove, &path), Some("auto-run"), "{path}");
            assert_eq!(rule(Change::Write, &path), None, "{path}");
        }
    }

    #[test]
    fn git_directories_below_modules_and_worktrees_are_judged_too() {
        for path in [
            "/ws/.git/modules/lib/config",
            "/ws/.git/modules/libs/deep/hooks/pre-commit",
            "/ws/.git/modules/a/modules/b/config",
            "/ws/.git/worktrees/wt/config.worktree",
            "/ws/sub/.git/modules/x/info/attributes",
        ] {
            assert_eq!(rule(Change::Write, path), Some("git-directory"), "{path}");
        }
        assert_eq!(
            rule(Change::Write, "/ws/.git/modules/lib/objects/ab/cd"),
            None
        );
        assert_eq!(rule(Change::Write, "/ws/.git/worktrees/wt/HEAD"), None);
        assert_eq!(
            rule(Change::Write, "/ws/.git/worktrees/wt/commondir"),
            None,
            "git worktree add"
        );
        assert_eq!(
            rule(Change::Write, "/ws/.git/commondir"),
            Some("git-directory")
        );
        assert_eq!(
            rule(Change::MakeDir, "/ws/.git/hooks"),
            None,
            "git init makes it"
        );
        assert_eq!(
            rule(Change::Write, "/ws/.git/hooks"),
            Some("git-directory"),
            "a link"
        );
        assert_eq!(
            rule(Change::MakeDir, "/ws/.git/hooks/sub"),
            Some("git-directory")
        );
        let r = rules();
        assert!(r.brokers(Path::new("/ws/.git/config")));
        let protecting = Rules {
            protected: vec!["/ws/.git/config".into()],
            ..rules()
        };
        assert!(
            protecting.brokers(Path::new("/ws/.git/config")),
            "protected, brokered"
        );
        assert_eq!(
            protecting
                .judge(Change::Write, Path::new("/ws/.git/config"))
                .map_err(|r| r.rule),
            Err("protected"),
            "never written directly"
        );
        assert!(r.brokers(Path::new("/ws/.git/modules/lib/config")));
        assert!(r.brokers(Path::new("/ws/.git/worktrees/wt/config.worktree")));
        assert!(!r.brokers(Path::new("/ws/.git/hooks/config")));
        assert!(!r.brokers(Path::new("/ws/config")));
        assert!(!r.brokers(Path::new("/elsewhere/.git/config")));
        // A `.gitmodules` wherever a plain entry could be made, whose replacement (a rename
        // over it removes it) its name alone refuses.
        assert!(
            r.judge(Change::Remove, Path::new("/ws/.gitmodules"))
                .is_err()
        );
        assert!(r.brokers_gitmodules(Path::new("/ws/.gitmodules")));
        assert!(r.brokers_gitmodules(Path::new("/ws/sub/.gitmodules")));
        assert!(!r.brokers_gitmodules(Path::new("/ws/.git/hooks/.gitmodules")));
        assert!(!r.brokers_gitmodules(Path::new("/ws/keep/.gitmodules")));
        assert!(!r.brokers_gitmodules(Path::new("/elsewhere/.gitmodules")));
        assert!(!r.brokers_gitmodules(Path::new("/ws/.gitmodules/../x")));
        assert!(!r.brokers_gitmodules(Path::new("/ws/gitmodules")));
    }

    #[test]
    fn metadata_outside_the_roots_is_refused_with_eperm() {
        let r = rules()
            .judge(Change::Metadata, Path::new("/home/u/.ssh/id"))
            .unwrap_err();
        assert_eq!((r.rule, r.errno), ("outside-writable", EPERM));
        assert_eq!(rule(Change::Metadata, "/ws/script.sh"), None);
        assert_eq!(
            rule(Change::LinkSource, "/ws/.git/config"),
            Some("git-directory")
        );
    }
}
