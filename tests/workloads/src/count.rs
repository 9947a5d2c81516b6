//! Reading a test runner's output into passed / failed counts.

use super::projects::Counter;

/// What one run of a suite counted. `found` is false when the runner's closing lines were not in
/// the output at all (it never got that far): such a run counts as failed whatever its numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub found: bool,
}

/// The counts `counter` reads in `log`.
pub fn count(counter: Counter, log: &str) -> Counts {
    match counter {
        Counter::Cargo => cargo(log),
        Counter::Pytest => pytest(log),
        Counter::Unittest => unittest(log),
        Counter::Tap => tap(log),
        Counter::Prove => prove(log),
        Counter::Zlib => zlib(log),
    }
}

/// The number just before `word` in `text` (`"12 passed"` → 12 for `passed`).
fn number_before(text: &str, word: &str) -> Option<u64> {
    let at = text.find(word)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

/// The number just after `key` in `text` (`"failures=2"` → 2 for `failures=`).
fn number_after(text: &str, key: &str) -> Option<u64> {
    let at = text.find(key)? + key.len();
    let digits: String = text[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn cargo(log: &str) -> Counts {
    let mut counts = Counts::default();
    for line in log.lines().filter(|l| l.starts_with("test result: ")) {
        counts.found = true;
        counts.passed += number_before(line, " passed;").unwrap_or(0);
        counts.failed += number_before(line, " failed;").unwrap_or(0);
        counts.skipped += number_before(line, " ignored;").unwrap_or(0);
    }
    counts
}

fn pytest(log: &str) -> Counts {
    // The summary is the last line that names a duration (`in 1.23s`) and an outcome.
    let Some(line) = log.lines().rev().find(|l| {
        l.contains(" in ")
            && [" passed", " failed", " error", " skipped", "no tests ran"]
                .iter()
                .any(|w| l.contains(w))
    }) else {
        return Counts::default();
    };
    Counts {
        passed: number_before(line, " passed").unwrap_or(0),
        failed: number_before(line, " failed").unwrap_or(0)
            + number_before(line, " error").unwrap_or(0),
        skipped: number_before(line, " skipped").unwrap_or(0),
        found: true,
    }
}

fn unittest(log: &str) -> Counts {
    let Some(ran) = log
        .lines()
        .rev()
        .find(|l| l.starts_with("Ran ") && l.contains(" test"))
        .and_then(|l| number_after(l, "Ran "))
    else {
        return Counts::default();
    };
    let verdict = log
        .lines()
        .rev()
        .find(|l| l.starts_with("OK") || l.starts_with("FAILED"))
        .unwrap_or("");
    let failed = number_after(verdict, "failures=").unwrap_or(0)
        + number_after(verdict, "errors=").unwrap_or(0);
    let skipped = number_after(verdict, "skipped=").unwrap_or(0);
    let expected = number_after(verdict, "expected failures=").unwrap_or(0);
    Counts {
        passed: ran.saturating_sub(failed + skipped + expected),
        failed,
        skipped: skipped + expected,
        found: !verdict.is_empty(),
    }
}

fn tap(log: &str) -> Counts {
    let pass = log
        .lines()
        .rev()
        .find_map(|l| number_after(l.strip_prefix("# pass")?, ""));
    let fail = log
        .lines()
        .rev()
        .find_map(|l| number_after(l.strip_prefix("# fail")?, ""));
    Counts {
        passed: pass.unwrap_or(0),
        failed: fail.unwrap_or(0),
        skipped: 0,
        found: pass.is_some() || fail.is_some(),
    }
}

fn prove(log: &str) -> Counts {
    let Some(total) = log
        .lines()
        .rev()
        .find(|l| l.starts_with("Files="))
        .and_then(|l| number_after(l, "Tests="))
    else {
        return Counts::default();
    };
    // `Failed 2/11 test programs. 3/104 subtests failed.`: a program that died before its plan
    // counts as one failure even when no subtest failed.
    let summary = log
        .lines()
        .rev()
        .find(|l| l.starts_with("Failed ") && l.contains(" test programs"));
    let subtests = summary
        .and_then(|l| l.split(". ").nth(1))
        .and_then(|part| part.split('/').next())
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let programs = summary
        .and_then(|l| number_after(l, "Failed "))
        .unwrap_or(0);
    let failed = subtests.max(programs);
    Counts {
        passed: total.saturating_sub(subtests),
        failed,
        skipped: 0,
        found: true,
    }
}

fn zlib(log: &str) -> Counts {
    let passed = log
        .lines()
        .filter(|l| l.contains("*** zlib") && l.contains("test OK ***"))
        .count() as u64;
    let failed = log
        .lines()
        .filter(|l| l.contains("*** zlib") && l.contains("test FAILED ***"))
        .count() as u64;
    Counts {
        passed,
        failed,
        skipped: 0,
        found: passed + failed > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_sums_every_test_result_line() {
        let log = "running 3 tests\ntest result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n\
                   test result: FAILED. 10 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(
            count(Counter::Cargo, log),
            Counts {
                passed: 13,
                failed: 2,
                skipped: 1,
                found: true
            }
        );
        assert!(!count(Counter::Cargo, "error: could not compile `x`").found);
    }

    #[test]
    fn pytest_reads_the_last_summary_line() {
        let log = "tests/a.py ..F\n=== 7 passed, 1 failed, 2 skipped, 1 error in 0.52s ===\n";
        assert_eq!(
            count(Counter::Pytest, log),
            Counts {
                passed: 7,
                failed: 2,
                skipped: 2,
                found: true
            }
        );
        assert_eq!(count(Counter::Pytest, "12 passed in 1.00s").passed, 12);
        assert!(!count(Counter::Pytest, "ERROR: could not install").found);
    }

    #[test]
    fn unittest_subtracts_failures_errors_and_skips_from_ran() {
        let log =
            "....\n------\nRan 20 tests in 0.1s\n\nFAILED (failures=2, errors=1, skipped=3)\n";
        assert_eq!(
            count(Counter::Unittest, log),
            Counts {
                passed: 14,
                failed: 3,
                skipped: 3,
                found: true
            }
        );
        let ok = count(Counter::Unittest, "Ran 5 tests in 0.0s\n\nOK\n");
        assert_eq!((ok.passed, ok.failed, ok.found), (5, 0, true));
    }

    #[test]
    fn tap_reads_pass_and_fail_totals() {
        let log = "ok 1 x\nnot ok 2 y\n\n1..2\n# tests 2\n# pass  1\n# fail  1\n";
        assert_eq!(
            count(Counter::Tap, log),
            Counts {
                passed: 1,
                failed: 1,
                skipped: 0,
                found: true
            }
        );
        assert!(!count(Counter::Tap, "Error: Cannot find module 'tape'").found);
    }

    #[test]
    fn prove_reads_the_harness_summary() {
        let ok = "All tests successful.\nFiles=11, Tests=104,  1 wallclock secs\nResult: PASS\n";
        assert_eq!(
            count(Counter::Prove, ok),
            Counts {
                passed: 104,
                failed: 0,
                skipped: 0,
                found: true
            }
        );
        let bad = "Failed 2/11 test programs. 3/104 subtests failed.\nFiles=11, Tests=104, 1 wallclock secs\nResult: FAIL\n";
        assert_eq!(
            count(Counter::Prove, bad),
            Counts {
                passed: 101,
                failed: 3,
                skipped: 0,
                found: true
            }
        );
        assert!(!count(Counter::Prove, "make: *** No rule to make target").found);
    }

    #[test]
    fn zlib_counts_each_build_tested() {
        let log = "\t\t*** zlib test OK ***\n\t\t*** zlib shared test OK ***\n\t\t*** zlib 64-bit test FAILED ***\n";
        assert_eq!(
            count(Counter::Zlib, log),
            Counts {
                passed: 2,
                failed: 1,
                skipped: 0,
                found: true
            }
        );
    }
}
