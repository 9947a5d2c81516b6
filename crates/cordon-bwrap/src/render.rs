//! Lossless, shell-compatible display of arguments, for `cordon explain` and snapshots.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;

/// Quotes one argument the way bash reads it back: bare when that is unambiguous, in single
/// quotes when it is printable UTF-8, and as `$'...'` with `\xNN` escapes otherwise. Two different
/// arguments never render the same, and a rendered argument never splits into two.
pub(crate) fn quote(arg: &OsStr) -> String {
    let bytes = arg.as_bytes();
    let bare = !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"/._+,:=@%-".contains(b));
    if bare {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    if let Some(text) = arg.to_str()
        && !text.chars().any(char::is_control)
    {
        return format!("'{}'", text.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '\\' => out.push_str(r"\\"),
                '\'' => out.push_str(r"\'"),
                '\n' => out.push_str(r"\n"),
                '\t' => out.push_str(r"\t"),
                '\r' => out.push_str(r"\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn quoting() {
        let q = |b: &[u8]| quote(OsStr::from_bytes(b));
        assert_eq!(q(b"/home/u/proj"), "/home/u/proj");
        assert_eq!(q(b"--ro-bind"), "--ro-bind");
        assert_eq!(q(b""), "''");
        assert_eq!(q(b"/a b"), "'/a b'");
        assert_eq!(q(b"it's"), r"'it'\''s'");
        assert_eq!(q(b"$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(q(b"a\nb"), r"$'a\nb'");
        assert_eq!(q(b"\xff'\\"), r"$'\xff\'\\'");
        assert_eq!(q(b"\x1b[31m"), r"$'\x1b[31m'");
    }
}
