//! Normalization before any matching: a command is judged as a terminal would show it, and
//! what an escape sequence could hide from that view is judged too.
//!
//! - [`normalize`] gives the **display** view: ECMA-48 escape sequences dropped whole (CSI, OSC
//!   and the other control strings, the short escapes, their 8-bit C1 forms), NUL bytes and
//!   invisible format characters removed, then Unicode NFKC. `ｒｍ　－ｒｆ　／` and
//!   `r\e[0mm -rf /` read as `rm -rf /`.
//! - [`hidden_tails`] gives what a shell would see that the display view hides. A shell does not
//!   know escape sequences: one whose parameters or string hold `;`, a newline, `&`, `|`, a
//!   backtick, a parenthesis or a redirection can end a command and start another there
//!   (`\e[1;rm -rf /` runs `rm -rf /`). For each such sequence the tail holds the commands
//!   entirely inside it (`inner`) and the command that starts in it and runs on into the rest of
//!   the line (`glued`: the sequence's text after its last special character, then the rest in
//!   the display view). Ordinary colour codes only glue a parameter onto the next word
//!   (`31mcargo`), so they never change a verdict.

use unicode_normalization::UnicodeNormalization;

const ESC: char = '\u{1b}';
const BEL: char = '\u{07}';
const C1_CSI: char = '\u{9b}';
const C1_ST: char = '\u{9c}';
const C1_OSC: char = '\u{9d}';
const C1_DCS: char = '\u{90}';
const C1_SOS: char = '\u{98}';
const C1_PM: char = '\u{9e}';
const C1_APC: char = '\u{9f}';

/// Characters a terminal draws as nothing: removing them makes `r\u{200b}m` read as `rm`.
const INVISIBLE: &[char] = &[
    '\u{00ad}', '\u{200b}', '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{2060}', '\u{2061}',
    '\u{2062}', '\u{2063}', '\u{2064}', '\u{feff}',
];

/// The display view of `input`: escape sequences, NUL and invisible characters removed, then
/// NFKC. This is the form the floor matches and an approval is keyed on.
///
/// ```
/// assert_eq!(cordon_floor::normalize("\u{1b}[31mｒｍ\u{1b}[0m -rf\0 /"), "rm -rf /");
/// ```
pub fn normalize(input: &str) -> String {
    let stripped = strip(input, View::Display);
    let nfkc: String = stripped.nfkc().collect();
    // NFKC never produces an escape, but a second pass keeps the function idempotent whatever
    // a future Unicode version maps.
    strip(&nfkc, View::Display)
}

/// Most tails one command may have; more is refused as too complex by the caller.
pub(crate) const MAX_TAILS: usize = 64;

/// Most characters all tails together may carry after their sequences (each tail's `glued` runs
/// on to the end of the line, and is read again for each): more is refused as too complex by the
/// caller. Eight passes over a megabyte line, so that judging stays linear in the line.
pub(crate) const MAX_TAIL_CHARS: usize = 8 << 20;

/// Why [`hidden_tails`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TooComplex {
    /// More than [`MAX_TAILS`] sequences that could hide a command.
    Tails,
    /// Their tails would carry more than [`MAX_TAIL_CHARS`] characters; how many.
    Text(usize),
}

/// Characters that let a shell start a command, or redirect one, inside an escape sequence.
const SHELL_SPECIAL: &[char] = &[';', '\n', '&', '|', '`', '(', ')', '<', '>'];

/// What one escape sequence may hide: see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tail {
    /// The sequence's text from its first special character to its last: whole commands.
    pub inner: String,
    /// The sequence's text after its last special character, then the rest of the line: only
    /// its first command starts in the sequence.
    pub glued: String,
}

/// The commands escape sequences in `input` may hide from the display view, normalized. An
/// error when there are more than [`MAX_TAILS`], or when they would carry more than
/// [`MAX_TAIL_CHARS`] characters.
pub(crate) fn hidden_tails(input: &str) -> Result<Vec<Tail>, TooComplex> {
    let chars: Vec<char> = input.chars().collect();
    // First where they are (cheap), and whether they are too many or would carry too much;
    // only then is each tail's text normalized.
    let mut found: Vec<(String, usize, usize, usize)> = Vec::new();
    let mut carried = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let (payload, end) = match c {
            ESC | C1_CSI | C1_OSC | C1_DCS | C1_SOS | C1_PM | C1_APC => {
                let mut kept = String::new();
                let end = if c == ESC {
                    escape(&chars, i, View::Payload, &mut kept)
                } else if c == C1_CSI {
                    csi(&chars, i + 1, View::Payload, &mut kept, "[")
                } else {
                    control_string(&chars, i + 1, c == C1_OSC, View::Payload, &mut kept)
                };
                (kept, end.max(i + 1))
            }
            _ => {
                i += 1;
                continue;
            }
        };
        if let (Some(first), Some(last)) =
            (payload.find(SHELL_SPECIAL), payload.rfind(SHELL_SPECIAL))
        {
            if found.len() == MAX_TAILS {
                return Err(TooComplex::Tails);
            }
            carried = carried.saturating_add(chars.len() - end);
            let last_end = last + payload[last..].chars().next().map_or(1, char::len_utf8);
            found.push((payload, first, last_end, end));
        }
        i = end;
    }
    if carried > MAX_TAIL_CHARS {
        return Err(TooComplex::Text(carried));
    }
    Ok(found
        .into_iter()
        .map(|(payload, first, last_end, end)| {
            let rest: String = chars[end..].iter().collect();
            Tail {
                inner: normalize(&payload[first..last_end]),
                glued: normalize(&format!("{}{rest}", &payload[last_end..])),
            }
        })
        .collect())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum View {
    Display,
    Payload,
}

fn strip(input: &str, view: View) -> String {
    let chars: Vec<char> = input.chars().collect();
    let mut out = String::with_capacity(input.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\0' => i += 1,
            ESC => i = escape(&chars, i, view, &mut out),
            C1_CSI => i = csi(&chars, i + 1, view, &mut out, "["),
            C1_OSC | C1_DCS | C1_SOS | C1_PM | C1_APC => {
                i = control_string(&chars, i + 1, c == C1_OSC, view, &mut out)
            }
            '\u{80}'..='\u{9f}' => i += 1,
            _ if view == View::Display && INVISIBLE.contains(&c) => i += 1,
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Handles the sequence starting with ESC at `start`; returns the index after it.
fn escape(chars: &[char], start: usize, view: View, out: &mut String) -> usize {
    let Some(&next) = chars.get(start + 1) else {
        return start + 1;
    };
    match next {
        '[' => csi(chars, start + 2, view, out, "["),
        ']' => control_string(chars, start + 2, true, view, out),
        'P' | 'X' | '^' | '_' => control_string(chars, start + 2, false, view, out),
        '\u{20}'..='\u{2f}' => {
            // nF: intermediates, then a final byte. Short and payload-free: dropped in both views.
            let mut j = start + 1;
            while chars
                .get(j)
                .is_some_and(|c| ('\u{20}'..='\u{2f}').contains(c))
            {
                j += 1;
            }
            match chars.get(j) {
                Some(c) if ('\u{30}'..='\u{7e}').contains(c) => j + 1,
                _ => start + 1,
            }
        }
        // Fp, Fe, Fs: ESC and one character.
        '\u{30}'..='\u{7e}' => start + 2,
        _ => start + 1,
    }
}

/// A CSI whose parameters start at `body`: parameters, intermediates, final byte. Dropped whole
/// in the display view; in the payload view only the introducer goes (`kept` is what a shell sees
/// of it). An incomplete sequence loses only its introducer.
fn csi(chars: &[char], body: usize, view: View, out: &mut String, kept: &str) -> usize {
    let mut j = body;
    while chars
        .get(j)
        .is_some_and(|c| ('\u{30}'..='\u{3f}').contains(c))
    {
        j += 1;
    }
    while chars
        .get(j)
        .is_some_and(|c| ('\u{20}'..='\u{2f}').contains(c))
    {
        j += 1;
    }
    match chars.get(j) {
        Some(c) if ('\u{40}'..='\u{7e}').contains(c) => {
            if view == View::Payload {
                out.push_str(kept);
                out.extend(&chars[body..=j]);
            }
            j + 1
        }
        _ => {
            if view == View::Payload {
                out.push_str(kept);
            }
            body
        }
    }
}

/// OSC, DCS, SOS, PM, APC: a string up to ST (or BEL for OSC). Dropped whole in the display view;
/// the payload view keeps the string and drops the framing. Unterminated: only the introducer goes,
/// so nothing after it can hide.
fn control_string(
    chars: &[char],
    body: usize,
    bel_ends: bool,
    view: View,
    out: &mut String,
) -> usize {
    let mut j = body;
    while j < chars.len() {
        let c = chars[j];
        let end = match c {
            BEL if bel_ends => Some(j + 1),
            C1_ST => Some(j + 1),
            ESC if chars.get(j + 1) == Some(&'\\') => Some(j + 2),
            _ => None,
        };
        if let Some(after) = end {
            if view == View::Payload {
                out.extend(chars[body..j].iter().filter(|c| **c != '\0'));
            }
            return after;
        }
        j += 1;
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sequences_nul_and_look_alikes() {
        assert_eq!(normalize("\u{1b}[1;31mrm\u{1b}[0m -rf /"), "rm -rf /");
        assert_eq!(normalize("r\u{0}m -rf /"), "rm -rf /");
        assert_eq!(normalize("ｒｍ\u{3000}－ｒｆ\u{3000}／"), "rm -rf /");
        assert_eq!(normalize("\u{1b}]0;title\u{7}rm -rf /"), "rm -rf /");
        assert_eq!(
            normalize("\u{1b}]8;;http://x\u{1b}\\rm\u{1b}]8;;\u{1b}\\ -rf /"),
            "rm -rf /"
        );
        assert_eq!(normalize("\u{9b}31mrm -rf /"), "rm -rf /");
        assert_eq!(normalize("\u{1b}(Brm\u{1b}7 -rf /"), "rm -rf /");
        assert_eq!(normalize("r\u{200b}m -rf /"), "rm -rf /");
    }

    fn tail(inner: &str, glued: &str) -> Tail {
        Tail {
            inner: inner.to_owned(),
            glued: glued.to_owned(),
        }
    }

    #[test]
    fn what_a_sequence_hides_from_the_display_view() {
        assert_eq!(normalize("\u{1b}[1;rm -rf /"), "m -rf /");
        assert_eq!(
            hidden_tails("\u{1b}[1;rm -rf /"),
            Ok(vec![tail(";", "rm -rf /")])
        );
        assert_eq!(
            hidden_tails("\u{1b}]0;\nrm -rf /\n\u{7}echo"),
            Ok(vec![tail(";\nrm -rf /\n", "echo")])
        );
        assert_eq!(hidden_tails("a\u{1b}[0mb"), Ok(vec![]));
        assert_eq!(
            hidden_tails("cargo \u{1b}[1;31mtest"),
            Ok(vec![tail(";", "31mtest")])
        );
        let many = "\u{1b}[1;m".repeat(MAX_TAILS + 1);
        assert_eq!(hidden_tails(&many), Err(TooComplex::Tails));
        // Each tail runs on to the end of the line: what they would carry together is bounded,
        // so a few sequences before a long text cannot make judging quadratic.
        let long = format!("{}{}", "\u{1b}[1;m".repeat(9), "x".repeat(1 << 20));
        assert!(
            matches!(hidden_tails(&long), Err(TooComplex::Text(n)) if n > MAX_TAIL_CHARS),
            "{:?}",
            hidden_tails(&long).map(|t| t.len())
        );
        let fits = format!("{}{}", "\u{1b}[1;m".repeat(2), "x".repeat(1 << 20));
        assert_eq!(hidden_tails(&fits).map(|t| t.len()), Ok(2));
    }

    #[test]
    fn an_unterminated_string_hides_nothing() {
        assert_eq!(normalize("\u{1b}]0;rm -rf /"), "0;rm -rf /");
        assert_eq!(normalize("\u{1b}["), "");
    }

    #[test]
    fn idempotent() {
        for s in ["a\u{1b}[0mb", "ｆｕｌｌ", "plain", "\u{1b}]0;x"] {
            let once = normalize(s);
            assert_eq!(normalize(&once), once);
        }
    }
}
