//! The corpus: real commands and the verdict each must get (tests/corpus.txt). Every line is
//! judged; the test lists every false refusal and every missed refusal at once.

use crate::common::{corpus, floor};
use cordon_floor::{Rule, Verdict};

#[test]
fn every_command_gets_its_verdict() {
    let floor = floor();
    let cases = corpus();
    assert!(
        cases.len() >= 300,
        "the corpus has {} commands",
        cases.len()
    );
    let mut false_refusals = Vec::new();
    let mut missed = Vec::new();
    for case in &cases {
        let verdict = floor.check(&case.command);
        match (case.expected, &verdict) {
            (None, Verdict::Allow) => {}
            (Some(rule), Verdict::Refuse { rule: got, .. }) if rule == *got => {}
            (None, Verdict::Refuse { .. }) => {
                false_refusals.push(format!(
                    "line {}: {:?} -> {verdict}",
                    case.line, case.command
                ));
            }
            (Some(rule), _) => {
                missed.push(format!(
                    "line {}: {:?} expected {rule}, got {verdict}",
                    case.line, case.command
                ));
            }
        }
    }
    let allowed = cases.iter().filter(|c| c.expected.is_none()).count();
    assert!(
        false_refusals.is_empty() && missed.is_empty(),
        "{} commands ({allowed} to allow): {} false refusals, {} missed or wrong\n\nfalse refusals:\n{}\n\nmissed:\n{}",
        cases.len(),
        false_refusals.len(),
        missed.len(),
        false_refusals.join("\n"),
        missed.join("\n"),
    );
}

#[test]
fn every_rule_is_in_the_corpus() {
    let cases = corpus();
    for rule in Rule::ALL {
        assert!(
            cases.iter().any(|c| c.expected == Some(*rule)),
            "no corpus line for {rule}"
        );
    }
}

#[test]
fn the_argv_form_agrees_for_simple_commands() {
    // A command without shell syntax means the same as an argv: both forms must agree.
    let floor = floor();
    for case in corpus() {
        let plain = case
            .command
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " -_./=:,+@%".contains(c));
        if !plain {
            continue;
        }
        let argv: Vec<&str> = case.command.split_whitespace().collect();
        assert_eq!(
            floor.check_argv(&argv).rule(),
            case.expected,
            "line {}: {:?}",
            case.line,
            case.command
        );
    }
}
