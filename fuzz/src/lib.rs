//! Input decoding shared by cordon's fuzz targets.
//!
//! Every target reads its input as a small line-oriented script instead of raw structured
//! bytes: one operation per line, an operation letter, a space, and operand bytes. Seeds are
//! then readable files a reviewer can open (`corpus/<target>/`), libFuzzer's byte mutations
//! still produce scripts, and its dictionaries (`dicts/`) splice in whole operations. Operand
//! bytes are taken as they are, except `\xHH`, which stands for the byte `0xHH`: that is how a
//! seed writes a newline or a NUL inside a path.
//!
//! This crate is not part of cordon and is built only by `cargo fuzz` (see `../README.md`).

pub mod plan;

/// The longest script the targets read; libFuzzer's own `-max_len` is usually lower.
pub const MAX_LINES: usize = 512;

/// One decoded script line: the operation letter and its operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The first byte of the line.
    pub op: u8,
    /// The rest of the line after one optional space, `\xHH` escapes decoded.
    pub operand: Vec<u8>,
}

impl Line {
    /// The operand split at its first tab, for operations with two operands.
    pub fn pair(&self) -> (&[u8], Option<&[u8]>) {
        match self.operand.iter().position(|&b| b == b'\t') {
            Some(i) => (&self.operand[..i], Some(&self.operand[i + 1..])),
            None => (&self.operand, None),
        }
    }
}

/// Splits `data` into script lines (empty lines skipped), at most [`MAX_LINES`].
pub fn lines(data: &[u8]) -> Vec<Line> {
    data.split(|&b| b == b'\n')
        .filter_map(|raw| {
            let (&op, rest) = raw.split_first()?;
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            Some(Line {
                op,
                operand: unescape(rest),
            })
        })
        .take(MAX_LINES)
        .collect()
}

/// Decodes `\xHH` escapes; any other byte, and a malformed escape, stands for itself.
pub fn unescape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && bytes.get(i + 1) == Some(&b'x')
            && let Some(hex) = bytes.get(i + 2..i + 4)
            && let Some(value) = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(value);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}
