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
    /// The git configuration broker did not keep a key the jail set in a repository's
    /// configuration (`key` names it).
    GitConfigRefused,
    /// A change of the command's copy-on-write layer the commit refused (or held for the
    /// user's consent): kept in cordon's state for review, not applied (`rule` names the rule
    /// and the program that would have run it).
    ChangeRefused,
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
    /// The configuration key, for a [`ViolationKind::GitConfigRefused`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The refused operation (a system call, or `TIOCSTI`), when the line or the traceback
    /// lines just above it name one of those the jail refuses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
}

impl Violation {
    /// The violation of a request the proxy refused (`network-denied`, with host, port, rule).
    pub(crate) fn from_proxy(denied: &crate::features::proxy::Denied) -> Violation {
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
            key: None,
            operation: None,
        }
    }
}

impl Violation {
    /// A call the Landlock backend's supervisor refused (`cordon-supervisor`): the real path
    /// it would have changed and the supervisor's rule.
    pub(crate) fn from_supervisor(refused: &crate::host::supervise::Refused) -> Violation {
        let path = refused.path.to_string_lossy().into_owned();
        if refused.rule == "network" {
            let inet = path.parse::<std::net::SocketAddr>().ok();
            return Violation {
                kind: ViolationKind::NetworkDenied,
                line: format!("cordon's supervisor refused to reach {path}"),
                path: inet.is_none().then(|| path.clone()),
                rule: Some(
                    "the network is denied: only sockets the jail itself bound are reachable"
                        .into(),
                ),
                host: inet.map(|a| a.ip().to_string()),
                port: inet.map(|a| a.port()),
                key: None,
                operation: None,
            };
        }
        let rule = match refused.rule {
            "outside-writable" => "outside the writable set",
            "masked" => "a credential mask",
            "protected" => "a protected path (read-only in every writable root)",
            "git-directory" => {
                "a git directory's hooks or configuration, which host git runs or reads"
            }
            "auto-run" => "an auto-run file a host program runs later",
            "writable-root" => "a writable root itself, which may not be removed or renamed",
            other => other,
        };
        if let Some(key) = &refused.key {
            return Violation {
                kind: ViolationKind::GitConfigRefused,
                line: format!("cordon's supervisor left {key} out of {path}"),
                path: Some(path),
                rule: Some("a git configuration key that makes host git run a program".into()),
                host: None,
                port: None,
                key: Some(key.clone()),
                operation: None,
            };
        }
        Violation {
            kind: ViolationKind::WriteDenied,
            line: format!(
                "cordon's supervisor refused a change at {path}: {}",
                refused.rule
            ),
            path: Some(path),
            rule: Some(rule.to_owned()),
            host: None,
            port: None,
            key: None,
            operation: None,
        }
    }
}

/// The operations the jail refuses that programs name in their messages, and the rule each met.
const OPERATIONS: &[(&[&str], &str)] = &[
    (
        &["socket", "connect", "bind", "sendto", "sendmsg"],
        "refused socket: the seccomp filter refuses raw and packet sockets and every address family but Unix and inet, and inet works only on the jail's own loopback (bubblewrap, network denied) or with --network allow",
    ),
    (
        &[
            "unshare",
            "setns",
            "clone",
            "clone3",
            "mount",
            "umount",
            "umount2",
            "pivot_root",
            "fsopen",
            "fsmount",
            "move_mount",
            "open_tree",
            "mount_setattr",
        ],
        "refused system call: the seccomp filter refuses mounts and creating or entering namespaces in every jail",
    ),
    (
        &["ptrace", "process_vm_readv", "process_vm_writev"],
        "refused system call: the seccomp filter refuses tracing and reading other processes in every jail",
    ),
    (
        &[
            "bpf",
            "perf_event_open",
            "keyctl",
            "add_key",
            "request_key",
            "init_module",
            "finit_module",
            "delete_module",
            "kexec_load",
            "kexec_file_load",
            "open_by_handle_at",
            "name_to_handle_at",
            "userfaultfd",
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
        ],
        "refused system call: the seccomp filter refuses this kernel interface in every jail (an agent's command does not need it)",
    ),
    (
        &["setsid", "setpgid"],
        "refused system call: on a kernel without Landlock's signal scope (ABI 6) the Landlock backend refuses setsid and setpgid, so the whole command stays in the process group killed when it ends (bubblewrap allows them, and so does this backend on a newer kernel)",
    ),
    (
        &["TIOCSTI", "TIOCLINUX"],
        "refused ioctl: the seccomp filter refuses typing into the caller's terminal",
    ),
];

/// The refused operation `line` names, as a whole word (`unshare: unshare failed`,
/// `ptrace(PTRACE_SEIZE, 1)`, `_socket.socket.__init__`).
fn operation_in(line: &str) -> Option<&'static str> {
    let words: Vec<&str> = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    // `PTRACE_SEIZE` names ptrace, `TIOCSTI` itself.
    let named = |w: &str, op: &str| {
        w == op
            || (w.len() > op.len()
                && w.is_char_boundary(op.len())
                && w[..op.len()].eq_ignore_ascii_case(op)
                && w[op.len()..].starts_with('_')
                && w.chars().all(|c| !c.is_ascii_lowercase()))
    };
    OPERATIONS
        .iter()
        .flat_map(|(ops, _)| ops.iter())
        .find(|op| words.iter().any(|w| named(w, op)))
        .copied()
}

/// The operation a Python traceback's last line (`PermissionError: …`) was raised by: named on
/// the indented source lines just above it (at most two, never past another unindented line).
fn traceback_operation(lines: &[std::borrow::Cow<'_, str>], i: usize) -> Option<&'static str> {
    let line = lines.get(i)?;
    let head = line.split(':').next().unwrap_or("");
    let exception = !head.is_empty()
        && !head.contains(char::is_whitespace)
        && (head.ends_with("Error") || head.ends_with("Exception"));
    if !exception {
        return None;
    }
    lines[i.saturating_sub(2)..i]
        .iter()
        .rev()
        .take_while(|l| l.starts_with([' ', '\t']))
        .find_map(|l| operation_in(l))
}

fn operation_rule(op: &str) -> Option<&'static str> {
    OPERATIONS
        .iter()
        .find(|(ops, _)| ops.contains(&op))
        .map(|(_, rule)| *rule)
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
    let lines: Vec<std::borrow::Cow<'_, str>> = stderr
        .split(|b| *b == b'\n')
        .map(String::from_utf8_lossy)
        .collect();
    for (i, line) in lines.iter().enumerate() {
        let line = line.clone();
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
            // A Python traceback names the call on the lines above its last.
            let operation = match kind {
                ViolationKind::OperationDenied
                | ViolationKind::AccessDenied
                | ViolationKind::NetworkDenied => {
                    operation_in(&line).or_else(|| traceback_operation(&lines, i))
                }
                _ => None,
            };
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
                key: None,
                operation: operation.map(str::to_owned),
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
    /// The Landlock backend: the jail shares the host's network namespace.
    landlock_alone: bool,
    /// The network is denied.
    network_denied: bool,
}

impl JailRules {
    pub(crate) fn new(plan: &cordon_policy::Plan, landlock_alone: bool) -> JailRules {
        JailRules {
            cwd: plan.cwd.clone(),
            writable: plan.writable.clone(),
            protected: plan.protected.iter().map(|p| p.path.clone()).collect(),
            masks: plan.masks.iter().map(|m| m.target.clone()).collect(),
            landlock_alone,
            network_denied: plan.network == cordon_policy::Network::Denied,
        }
    }

    /// The writable roots.
    pub(crate) fn writable(&self) -> &[PathBuf] {
        &self.writable
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
        let _ = root;
        None
    }
}

/// Adds to each violation the path its line names and the rule that path met.
pub(crate) fn annotate(violations: &mut [Violation], rules: &JailRules) {
    for v in violations.iter_mut() {
        if let Some(rule) = v.operation.as_deref().and_then(operation_rule) {
            // A refused operation explains the line better than any path it names.
            v.rule = Some(rule.to_owned());
            continue;
        }
        if v.kind == ViolationKind::NetworkDenied && rules.network_denied {
            v.rule = Some(if rules.landlock_alone {
                "network denied: under the Landlock backend the jail shares the host's network namespace, so inet sockets are refused (loopback too); --backend bwrap gives the jail a loopback of its own, --network allow the host's network".into()
            } else {
                "network denied: the jail has a network namespace of its own with only loopback; nothing beyond it is reachable (--network allow gives the host's network)".into()
            });
            continue;
        }
        if matches!(
            v.kind,
            ViolationKind::JailSetup
                | ViolationKind::NetworkDenied
                | ViolationKind::GitConfigRefused
        ) {
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
    // Unquoted, the first word with a `/`; but a first word that ends in `:` is the program
    // that speaks (`/bin/sh: 1: cannot create x/y: …`) when a later word is a path too.
    let is_path = |w: &&str| w.contains('/') && w.len() > 1 && !w.contains("://");
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let later = words
        .map(|w| w.trim_end_matches([':', ',', ';']))
        .find(is_path);
    let first_path = Some(first.trim_end_matches([':', ',', ';'])).filter(is_path);
    match (first_path, later) {
        (Some(_), Some(later)) if first.ends_with(':') => Some(later),
        (Some(first), _) => Some(first),
        (None, later) => later,
    }
}

/// `path` without `.` and with `..` applied, lexically (the jail's view is not the host's, so
/// nothing is resolved on disk).
pub(crate) fn clean(path: &Path) -> PathBuf {
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
            network_denied: true,
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
             mv: cannot move '.git/hooks' to 'hooks.bak': Device or resource busy\n\
             /bin/sh: 1: cannot create .git/commondir: Read-only file system\n\
             /home/u/proj/.envrc: Read-only file system\n",
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
        // dash names itself first; a line that starts with the path names it first.
        assert_eq!(got[4].0, Some("/home/u/proj/.git/commondir"), "{got:?}");
        assert_eq!(got[5].0, Some("/home/u/proj/.envrc"), "{got:?}");
    }

    #[test]
    fn a_denial_at_the_top_of_a_workspace_is_no_rule_of_the_jails() {
        // The Landlock backend's supervisor creates entries at a root's top like bubblewrap:
        // such a denial is the program's own, under either backend.
        for landlock in [true, false] {
            let v = annotated(
                "touch: cannot touch 'Cargo.lock': Permission denied\n",
                landlock,
            );
            assert_eq!(v[0].path.as_deref(), Some("/home/u/proj/Cargo.lock"));
            assert_eq!(v[0].rule, None);
        }
    }

    #[test]
    fn a_line_without_a_path_keeps_none() {
        let v = annotated("frobnicate failed: Operation not permitted\n", false);
        assert_eq!((v[0].path.as_deref(), v[0].rule.as_deref()), (None, None));
        assert_eq!(v[0].operation, None);
    }

    #[test]
    fn refused_operations_are_named_from_the_line_or_the_traceback_above_it() {
        let text = "unshare: unshare failed: Operation not permitted\n\
            strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n\
            Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n\
            \x20   _socket.socket.__init__(self, family, type, proto, fileno)\n\
            PermissionError: [Errno 1] Operation not permitted\n\
            ValueError: Operation not permitted\n\
            mount: /mnt: permission denied.\n\
            curl: (6) Could not resolve host: example.invalid\n";
        let v = annotated(text, false);
        let ops: Vec<Option<&str>> = v.iter().map(|v| v.operation.as_deref()).collect();
        // The ValueError has no indented source line right above it: nothing is guessed.
        assert_eq!(
            ops,
            [
                Some("unshare"),
                Some("ptrace"),
                Some("socket"),
                None,
                Some("mount"),
                None
            ]
        );
        assert!(v[0].rule.as_deref().unwrap().contains("namespaces"));
        assert!(v[2].rule.as_deref().unwrap().starts_with("refused socket"));
        // The mount's rule, not the path's.
        assert!(
            v[4].rule.as_deref().unwrap().contains("mounts"),
            "{:?}",
            v[4]
        );
        assert_eq!(v[5].kind, ViolationKind::NetworkDenied);
        assert!(v[5].rule.as_deref().unwrap().contains("only loopback"));
        let landlock = annotated("curl: (6) Could not resolve host: example.invalid\n", true);
        assert!(
            landlock[0]
                .rule
                .as_deref()
                .unwrap()
                .contains("--backend bwrap")
        );
    }
}
