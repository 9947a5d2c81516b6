//! The verdict does not change under inserted ANSI noise, NUL bytes, invisible characters or
//! NFKC look-alikes (full-width forms), for every command of the corpus.

use crate::common::{Case, corpus, floor};
use proptest::prelude::*;

/// Well-formed sequences a terminal, a log or an attacker might lace a command with.
const NOISE: &[&str] = &[
    "\u{1b}[0m",
    "\u{1b}[1;31m",
    "\u{1b}[38;5;196m",
    "\u{1b}[2K",
    "\u{1b}]0;title\u{7}",
    "\u{1b}]8;;http://e.invalid/\u{1b}\\",
    "\u{1b}(B",
    "\u{1b}7",
    "\u{9b}31m",
    "\0",
    "\u{200b}",
    "\u{feff}",
];

/// The full-width form of a printable ASCII character (NFKC maps it back).
fn full_width(c: char) -> char {
    match c {
        ' ' => '\u{3000}',
        '!'..='~' => char::from_u32(u32::from(c) - 0x21 + 0xff01).unwrap_or(c),
        _ => c,
    }
}

/// Cases whose text is plain (the noise must not land inside an escape the line already has).
fn plain_cases() -> Vec<Case> {
    corpus()
        .into_iter()
        .filter(|c| !c.command.contains(['\u{1b}', '\0']))
        .collect()
}

fn laced(command: &str, inserts: &[(usize, usize)], widen: &[usize]) -> String {
    let chars: Vec<char> = command.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        for (at, noise) in inserts {
            if at % (chars.len() + 1) == i {
                out.push_str(NOISE[noise % NOISE.len()]);
            }
        }
        if widen.iter().any(|w| w % chars.len().max(1) == i) {
            out.push(full_width(*c));
        } else {
            out.push(*c);
        }
    }
    for (at, noise) in inserts {
        if at % (chars.len() + 1) == chars.len() {
            out.push_str(NOISE[noise % NOISE.len()]);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn noise_does_not_change_the_verdict(
        case in any::<prop::sample::Index>(),
        inserts in prop::collection::vec((any::<usize>(), any::<usize>()), 0..6),
        widen in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let cases = plain_cases();
        let case = case.get(&cases);
        let floor = floor();
        let plain = floor.check(&case.command).rule();
        let noisy_text = laced(&case.command, &inserts, &widen);
        let noisy = floor.check(&noisy_text).rule();
        prop_assert_eq!(plain, case.expected, "line {}", case.line);
        prop_assert_eq!(noisy, plain, "line {}: {:?} became {:?}", case.line, case.command, noisy_text);
    }

    #[test]
    fn every_character_full_width(case in any::<prop::sample::Index>()) {
        let cases = plain_cases();
        let case = case.get(&cases);
        let wide: String = case.command.chars().map(full_width).collect();
        prop_assert_eq!(floor().check(&wide).rule(), case.expected, "line {}: {:?}", case.line, wide);
    }

    #[test]
    fn argv_noise_does_not_change_the_verdict(
        words in prop::collection::vec(prop::sample::select(vec![
            "rm", "-rf", "-r", "-f", "/", "~", "/usr", "./build", "kill", "-9", "-1", "1", "%1",
            "shutdown", "now", "sudo", "-S", "env", "nice", "ls", "dd", "of=/dev/sda", "of=x.img",
            "chmod", "-R", "777", "mkfs.ext4", "/dev/sdb", "pkill", "claude", "node",
        ]), 1..6),
        noise in any::<usize>(),
        at in any::<usize>(),
    ) {
        let floor = floor();
        let plain = floor.check_argv(&words).rule();
        let mut noisy: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        let i = at % noisy.len();
        let word: String = noisy[i].chars().map(full_width).collect();
        noisy[i] = format!("{}{word}", NOISE[noise % NOISE.len()]);
        prop_assert_eq!(floor.check_argv(&noisy).rule(), plain, "{:?} vs {:?}", words, noisy);
    }
}
