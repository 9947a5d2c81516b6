//! The sandbox's denial lines → structured events.
//!
//! When Seatbelt refuses an operation the kernel logs a line such as
//!
//! ```text
//! 2025-01-02 10:11:12.345678+0100 0x1a2b Error 0x0 0 0 kernel: (Sandbox) Sandbox: cat(4242) deny(1) file-read-data /Users/u/.ssh/id_ed25519
//! ```
//!
//! (`log show --style compact --predicate 'sender == "Sandbox"'` prints them; the program itself
//! only sees `Operation not permitted`). [`parse_denial`] reads the part from `Sandbox:` on:
//! the process name (which may hold spaces and parentheses) and pid, the operation, and its
//! argument — a path for file operations, an address or socket path for network ones, a service
//! or `sysctl` name otherwise. `sandbox-exec`'s own complaints (a profile that does not compile,
//! `sandbox_apply` refused) are recognised too, as [`DenialKind::JailSetup`].
//!
//! The kinds are the launcher's violation kinds, one for one, so the launcher maps a
//! [`Denial`] onto its own event without interpretation.

/// What kind of denial a line shows. One variant per kind of the launcher's violations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DenialKind {
    /// A `file-write*` operation (and `file-link`, `file-clone`): a write outside the writable
    /// set or to a protected path.
    WriteDenied,
    /// A `file-read*` operation: typically a credential mask.
    AccessDenied,
    /// Any other operation: `process-*`, `signal`, `sysctl-*`, `mach-lookup`, `file-ioctl`, ...
    OperationDenied,
    /// A `network-*` or `system-socket` operation.
    NetworkDenied,
    /// `sandbox-exec` itself could not set the sandbox up.
    JailSetup,
}

/// One denial, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// Its kind.
    pub kind: DenialKind,
    /// The line it was read from (at most [`MAX_LINE_BYTES`] bytes, lossy UTF-8).
    pub line: String,
    /// The operation, such as `file-read-data`; `sandbox-exec` for the tool's own messages.
    pub operation: String,
    /// The operation's argument: a path for file operations, an address or socket path for
    /// network ones, a service or `sysctl` name otherwise. `None` when the line gives none.
    pub path: Option<String>,
    /// The process that was refused, as the kernel names it.
    pub process: Option<String>,
    /// Its pid.
    pub pid: Option<u32>,
}

/// The longest line kept in a [`Denial`], the same cap the launcher uses.
pub const MAX_LINE_BYTES: usize = 240;

/// The most denials [`parse_denials`] returns.
pub const MAX_DENIALS: usize = 64;

/// Reads one line; `None` unless it is a Seatbelt denial or a `sandbox-exec` error.
pub fn parse_denial(line: &str) -> Option<Denial> {
    let trimmed = line.trim();
    if let Some(message) = trimmed.strip_prefix("sandbox-exec:") {
        return Some(Denial {
            kind: DenialKind::JailSetup,
            line: cut(trimmed),
            operation: "sandbox-exec".into(),
            path: Some(message.trim().to_owned()).filter(|m| !m.is_empty()),
            process: Some("sandbox-exec".into()),
            pid: None,
        });
    }
    let at = trimmed.find("Sandbox: ")?;
    let rest = &trimmed[at + "Sandbox: ".len()..];
    let verdict = rest.find(") deny")?;
    let head = &rest[..verdict];
    let open = head.rfind('(')?;
    let process = head[..open].trim();
    let pid: u32 = head[open + 1..].trim().parse().ok()?;
    let mut tail = &rest[verdict + ") deny".len()..];
    // `deny(1)`: the count of identical denials folded into this line.
    if let Some(after) = tail.strip_prefix('(') {
        let close = after.find(')')?;
        if !after[..close].bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        tail = &after[close + 1..];
    }
    let tail = tail.trim_start();
    let (operation, argument) = match tail.find(char::is_whitespace) {
        Some(space) => (&tail[..space], tail[space..].trim()),
        None => (tail, ""),
    };
    if operation.is_empty() {
        return None;
    }
    Some(Denial {
        kind: kind_of(operation),
        line: cut(trimmed),
        operation: operation.to_owned(),
        path: (!argument.is_empty()).then(|| argument.to_owned()),
        process: (!process.is_empty()).then(|| process.to_owned()),
        pid: Some(pid),
    })
}

/// Reads every line of `text` (lossy UTF-8); at most [`MAX_DENIALS`] are kept.
pub fn parse_denials(text: &[u8]) -> Vec<Denial> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(parse_denial)
        .take(MAX_DENIALS)
        .collect()
}

/// The kind of a denial of `operation`.
pub fn kind_of(operation: &str) -> DenialKind {
    if operation.starts_with("file-write") || operation == "file-link" || operation == "file-clone"
    {
        DenialKind::WriteDenied
    } else if operation.starts_with("file-read") || operation == "file-test-existence" {
        DenialKind::AccessDenied
    } else if operation.starts_with("network") || operation == "system-socket" {
        DenialKind::NetworkDenied
    } else {
        DenialKind::OperationDenied
    }
}

fn cut(line: &str) -> String {
    let mut end = line.len().min(MAX_LINE_BYTES);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_compact_log_line() {
        let d = parse_denial(
            "2025-01-02 10:11:12.345678+0100 0x1a2b Error 0x0 0 0 kernel: (Sandbox) Sandbox: cat(4242) deny(1) file-read-data /Users/u/.ssh/id_ed25519",
        )
        .unwrap();
        assert_eq!(d.kind, DenialKind::AccessDenied);
        assert_eq!(d.operation, "file-read-data");
        assert_eq!(d.path.as_deref(), Some("/Users/u/.ssh/id_ed25519"));
        assert_eq!(d.process.as_deref(), Some("cat"));
        assert_eq!(d.pid, Some(4242));
    }

    #[test]
    fn process_names_and_paths_may_hold_spaces_and_parentheses() {
        let d = parse_denial(
            "Sandbox: Code Helper (Plugin)(77) deny(3) file-write-create /Users/u/My Project (old)/x",
        )
        .unwrap();
        assert_eq!(d.process.as_deref(), Some("Code Helper (Plugin)"));
        assert_eq!(d.pid, Some(77));
        assert_eq!(d.kind, DenialKind::WriteDenied);
        assert_eq!(d.path.as_deref(), Some("/Users/u/My Project (old)/x"));
    }

    #[test]
    fn kinds_follow_the_operation() {
        let kind = |l: &str| parse_denial(l).unwrap().kind;
        assert_eq!(
            kind("Sandbox: curl(9) deny(1) network-outbound 93.184.216.34:443"),
            DenialKind::NetworkDenied
        );
        assert_eq!(
            kind("Sandbox: python3(9) deny(1) system-socket"),
            DenialKind::NetworkDenied
        );
        assert_eq!(
            kind("Sandbox: sh(9) deny(1) mach-lookup com.apple.pasteboard.1"),
            DenialKind::OperationDenied
        );
        assert_eq!(
            kind("Sandbox: ln(9) deny file-link /w/x"),
            DenialKind::WriteDenied
        );
        let no_arg = parse_denial("Sandbox: a(1) deny(1) system-socket").unwrap();
        assert_eq!(no_arg.path, None);
    }

    #[test]
    fn sandbox_exec_errors_are_jail_setup() {
        let d = parse_denial("sandbox-exec: sandbox_apply: Operation not permitted").unwrap();
        assert_eq!(d.kind, DenialKind::JailSetup);
        assert_eq!(
            d.path.as_deref(),
            Some("sandbox_apply: Operation not permitted")
        );
    }

    #[test]
    fn other_lines_are_not_denials() {
        for line in [
            "",
            "cat: /x: Operation not permitted",
            "Sandbox: npm(102) allow file-write-data /work/out",
            "Sandbox: broken deny(1) file-read-data /x",
            "Sandbox: x(notapid) deny(1) file-read-data /x",
            "Sandbox: x(1) deny(one) file-read-data /x",
            "Sandbox: x(1) deny(1)",
        ] {
            assert_eq!(parse_denial(line), None, "{line:?}");
        }
    }

    #[test]
    fn long_lines_are_cut_on_a_character_boundary_and_the_count_is_capped() {
        let line = format!("Sandbox: a(1) deny(1) file-read-data /{}", "é".repeat(300));
        let d = parse_denial(&line).unwrap();
        assert!(d.line.len() <= MAX_LINE_BYTES);
        let many = "Sandbox: a(1) deny(1) file-read-data /x\n".repeat(100);
        assert_eq!(parse_denials(many.as_bytes()).len(), MAX_DENIALS);
    }
}
