//! Denials recognised in what the jailed command printed: the kernel's and bubblewrap's texts
//! turned into structured events, so a harness can tell "the jail said no" from "the tool failed".

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
}

/// One recognised denial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Its kind.
    pub kind: ViolationKind,
    /// The line it was recognised in (at most 240 bytes, lossy UTF-8).
    pub line: String,
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
            out.push(Violation { kind, line });
            if out.len() == 64 {
                break;
            }
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
}
