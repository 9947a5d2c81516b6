//! The corpus loader shared by the integration tests.

use cordon_floor::{Floor, FloorConfig, Rule};

/// One corpus line.
pub struct Case {
    /// Line number in corpus.txt.
    pub line: usize,
    /// The rule that must refuse it, or `None` when it must be allowed.
    pub expected: Option<Rule>,
    /// The command, with `<NL>`, `<ESC>`, `<BEL>` and `<NUL>` replaced.
    pub command: String,
}

/// Every case of tests/corpus.txt.
pub fn corpus() -> Vec<Case> {
    let text = include_str!("../corpus.txt");
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim_end();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let (verdict, command) = raw
            .split_once(" | ")
            .unwrap_or_else(|| panic!("corpus line {}: no ` | `: {raw}", i + 1));
        let expected = match verdict.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["allow"] => None,
            ["refuse", id] => Some(
                Rule::from_id(id)
                    .unwrap_or_else(|| panic!("corpus line {}: unknown rule {id}", i + 1)),
            ),
            _ => panic!("corpus line {}: bad verdict {verdict:?}", i + 1),
        };
        let command = command
            .replace("<NL>", "\n")
            .replace("<ESC>", "\u{1b}")
            .replace("<BEL>", "\u{7}")
            .replace("<NUL>", "\0");
        cases.push(Case {
            line: i + 1,
            expected,
            command,
        });
    }
    cases
}

/// The floor the corpus is judged by: home /home/u, no sudo password, default process names.
pub fn floor() -> Floor {
    Floor::new(FloorConfig {
        home: Some("/home/u".into()),
        ..FloorConfig::default()
    })
}
