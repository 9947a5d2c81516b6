//! Denials recognised in what the jailed command printed: the kernel's and bubblewrap's texts
//! turned into structured events, so a harness can tell "the jail said no" from "the tool failed".
//! Where the line names a path, [`annotate`] says which of the jail's rules the path met (a
//! credential mask, a protected path, outside the writable set, the Landlock backend's
//! workspace-root limit), so an agent reading a bare `Permission denied` learns why.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// What kind of denial a line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViolationKind {
    /// `Read-only file system` (EROFS): a write outside the writable set or to a protected path.
    WriteDenied,
    /// `Permission denied` (EACCES): typically a credential mask.
    AccessDenied,
    /// `Operation not permitted` (EPERM): typically the seccomp filter.
    OperationDenied,
    /// Network unreachable or socket refused while the network is denied.
    NetworkDenied,
    /// bubblewrap itself refused to set the jail up.
    JailSetup,
    /// An auto-run file the command created where none existed at launch, found on the host
    /// after the run and moved aside (sweep.rs).
    Planted,
}

/// One recognised denial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Its kind.
    pub kind: ViolationKind,
    /// The line it was recognised in (at most 240 bytes, lossy UTF-8).
    pub line: String,
    /// The path the line names, made absolute against the working directory, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The jail's rule that path met, in words (and the way out, where there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For a destination the proxy refused: the host the tool asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// For a destination the proxy refused: the port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

impl Violation {
    /// The violation of a request the proxy refused (`network-denied`, with host, port, rule).
    pub(crate) fn from_proxy(denied: &crate::proxy::Denied) -> Violation {
        let what = match (&denied.host, denied.port) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            _ => "a request".to_owned(),
        };
        Violation {
            kind: ViolationKind::NetworkDenied,
            line: format!("cordon's proxy refused {what}: {}", denied.rule),
            path: None,
            rule: Some(denied.rule.clone()),
            host: denied.host.clone(),
            port: denied.port,
        }
    }
}

const PATTERNS: &[(&str, ViolationKind)] = &[
    ("read-only file system", ViolationKind::WriteDenied),
    ("permission denied", ViolationKind::AccessDenied),
    ("operation not permitted", ViolationKind::OperationDenied),
    ("network is unreachable", ViolationKind::NetworkDenied),
    (
        "temporary failure in name resolution",
        ViolationKind::NetworkDenied,
    ),
    ("could not resolve host", ViolationKind::NetworkDenied),
    ("address family not supported", ViolationKind::NetworkDenied),
    // EBUSY: renaming or removing a protected path, which is a mount point in the jail.
    ("device or resource busy", ViolationKind::WriteDenied),
];

/// Scans `stderr` for denial texts; at most 64 events are kept.
pub fn recognise(stderr: &[u8]) -> Vec<Violation> {
    let mut out = Vec::new();
    for raw in stderr.split(|b| *b == b'\n') {
        let line = String::from_utf8_lossy(raw);
        let lower = line.to_lowercase();
        let kind = if lower.starts_with("bwrap:") {
            Some(ViolationKind::JailSetup)
        } else {
            PATTERNS
                .iter()
                .find(|(p, _)| lower.contains(p))
                .map(|(_, k)| *k)
        };
        if let Some(kind) = kind {
            let mut line = line.into_owned();
            if line.len() > 240 {
                let mut cut = 240;
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                line.truncate(cut);
            }
            out.push(Violation {
                kind,
                line,
                path: None,
                rule: None,
                host: None,
                port: None,
            });
            if out.len() == 64 {
                break;
            }
        }
    }
    out
}

/// What a denial is judged against: the jail's plan, as paths.
#[derive(Debug, Clone, Default)]
pub(crate) struct JailRules {
    cwd: PathBuf,
    writable: Vec<PathBuf>,
    protected: Vec<PathBuf>,
    masks: Vec<PathBuf>,
    /// The Landlock backend: nothing can be created directly in a root that holds protected
    /// paths (or in `.git`).
    landlock_alone: bool,
}

impl JailRules {
    pub(crate) fn new(plan: &cordon_policy::Plan, backend: &str) -> JailRules {
        JailRules {
            cwd: plan.cwd.clone(),
            writable: plan.writable.clone(),
            protected: plan.protected.iter().map(|p| p.path.clone()).collect(),
            masks: plan.masks.iter().map(|m| m.target.clone()).collect(),
            landlock_alone: backend == "landlock",
        }
    }

    /// The rule `path` (absolute, lexically clean) met, if one of the jail's explains it.
    fn rule_for(&self, path: &Path) -> Option<String> {
        if let Some(m) = self.masks.iter().find(|m| path.starts_with(m)) {
            return Some(format!(
                "credential mask: {} is hidden from every jail",
                m.display()
            ));
        }
        if let Some(p) = self.protected.iter().find(|p| path.starts_with(p)) {
            return Some(format!(
                "protected path: {} stays read-only inside the writable root (code the host runs later could be planted there)",
                p.display()
            ));
        }
        let Some(root) = self.writable.iter().find(|r| path.starts_with(r)) else {
            return Some(
                "outside the writable set: only the workspace and the --write roots are writable"
                    .into(),
            );
        };
        let parent = path.parent()?;
        let holds_protected = |dir: &Path| self.protected.iter().any(|p| p.starts_with(dir));
        let at_top = parent == root.as_path() || parent.file_name() == Some(".git".as_ref());
        if self.landlock_alone && at_top && holds_protected(parent) {
            return Some(format!(
                "the Landlock backend cannot create, remove or rename entries directly in {} (it holds protected paths, and a Landlock grant reaches everything beneath a directory); work in a subdirectory, or use the bubblewrap backend (--backend bwrap), which allows it",
                parent.display()
            ));
        }
        None
    }
}

/// Adds to each violation the path its line names and the rule that path met.
pub(crate) fn annotate(violations: &mut [Violation], rules: &JailRules) {
    for v in violations.iter_mut() {
        if v.kind == ViolationKind::JailSetup || v.kind == ViolationKind::NetworkDenied {
            continue;
        }
        let Some(named) = named_path(&v.line) else {
            continue;
        };
        let absolute = clean(&rules.cwd.join(named));
        v.rule = rules.rule_for(&absolute);
        v.path = Some(absolute.display().to_string());
    }
}

/// The path a tool's error line names: the first quoted word (`'p'`, `"p"`, `‘p’`, `` `p' ``)
/// that looks like a path, else the first bare word holding a `/` (`/p:` in `sh: 1: cannot
/// create /p: …`, `.git/config:` in git's messages).
fn named_path(line: &str) -> Option<&str> {
    // In a denial line a quoted word is the file the tool was refused (`touch: cannot touch
    // 'x': …`, Python's `… denied: '/x'`).
    let looks_like_path = |w: &str| !w.is_empty() && !w.contains(char::is_whitespace);
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let word = &after[..end];
            if looks_like_path(word) && !word.contains("://") {
                return Some(word);
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    line.split_whitespace()
        .map(|w| w.trim_end_matches([':', ',', ';']))
        .find(|w| w.contains('/') && w.len() > 1 && !w.contains("://"))
}

/// `path` without `.` and with `..` applied, lexically (the jail's view is not the host's, so
/// nothing is resolved on disk).
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_kernel_and_bubblewrap_texts() {
        let text = b"touch: cannot touch '/etc/x': Read-only file system\ncat: /home/u/.ssh/id: Permission denied\nok line\nbwrap: Can't mkdir /x: Read-only file system\ncurl: (7) Couldn't connect: Network is unreachable\nunshare: unshare failed: Operation not permitted\n";
        let kinds: Vec<ViolationKind> = recognise(text).into_iter().map(|v| v.kind).collect();
        assert_eq!(
            kinds,
            vec![
                ViolationKind::WriteDenied,
                ViolationKind::AccessDenied,
                ViolationKind::JailSetup,
                ViolationKind::NetworkDenied,
                ViolationKind::OperationDenied
            ]
        );
    }

    #[test]
    fn long_lines_are_cut_on_a_character_boundary() {
        let mut text = "é".repeat(300);
        text.push_str(": Permission denied");
        let v = recognise(text.as_bytes());
        assert!(v.is_empty() || v[0].line.len() <= 240);
    }

    fn rules(landlock: bool) -> JailRules {
        JailRules {
            cwd: PathBuf::from("/home/u/proj"),
            writable: vec![PathBuf::from("/home/u/proj")],
            protected: vec![
                PathBuf::from("/home/u/proj/.git/config"),
                PathBuf::from("/home/u/proj/.git/hooks"),
            ],
            masks: vec![PathBuf::from("/home/u/.ssh")],
            landlock_alone: landlock,
        }
    }

    fn annotated(text: &str, landlock: bool) -> Vec<Violation> {
        let mut v = recognise(text.as_bytes());
        annotate(&mut v, &rules(landlock));
        v
    }

    #[test]
    fn a_protected_path_a_mask_and_the_read_only_host_are_named() {
        let v = annotated(
            "error: could not lock config file .git/config: Read-only file system\n\
             cat: /home/u/.ssh/id_ed25519: Permission denied\n\
             sh: 1: cannot create /home/u/planted: Read-only file system\n\
             mv: cannot move '.git/hooks' to 'hooks.bak': Device or resource busy\n",
            false,
        );
        let got: Vec<(Option<&str>, &str)> = v
            .iter()
            .map(|v| (v.path.as_deref(), v.rule.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(got[0].0, Some("/home/u/proj/.git/config"));
        assert!(
            got[0]
                .1
                .starts_with("protected path: /home/u/proj/.git/config"),
            "{got:?}"
        );
        assert_eq!(got[1].0, Some("/home/u/.ssh/id_ed25519"));
        assert!(
            got[1].1.starts_with("credential mask: /home/u/.ssh"),
            "{got:?}"
        );
        assert_eq!(got[2].0, Some("/home/u/planted"));
        assert!(got[2].1.starts_with("outside the writable set"), "{got:?}");
        assert_eq!(v[3].kind, ViolationKind::WriteDenied);
        assert!(
            got[3]
                .1
                .starts_with("protected path: /home/u/proj/.git/hooks"),
            "{got:?}"
        );
    }

    #[test]
    fn the_landlock_root_entry_limit_names_the_way_out() {
        let v = annotated(
            "touch: cannot touch 'Cargo.lock': Permission denied\n",
            true,
        );
        assert_eq!(v[0].path.as_deref(), Some("/home/u/proj/Cargo.lock"));
        let rule = v[0].rule.as_deref().unwrap_or("");
        assert!(rule.contains("--backend bwrap"), "{rule}");
        // Under bubblewrap the same line is no rule of the jail's.
        let v = annotated(
            "touch: cannot touch 'Cargo.lock': Permission denied\n",
            false,
        );
        assert_eq!(v[0].rule, None);
        // A subdirectory is writable under Landlock too: not the limit.
        let v = annotated("touch: cannot touch 'src/x': Permission denied\n", true);
        assert_eq!(v[0].rule, None);
    }

    #[test]
    fn a_line_without_a_path_keeps_none() {
        let v = annotated("unshare: unshare failed: Operation not permitted\n", false);
        assert_eq!((v[0].path.as_deref(), v[0].rule.as_deref()), (None, None));
    }
}
