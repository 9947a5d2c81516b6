//! Running one case in a child and judging what it saw.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use cordon_landlock::Abi;

use crate::layout::Layout;
use crate::{CASE_VAR, RESTRICT_VAR, ROOT_VAR, RULES_VAR, SENTINEL_VAR, TMP_VAR};

#[derive(Debug, Clone, Copy)]
pub enum Expect {
    Ok,
    Errno(i32),
    /// Refused, with whichever errno the kernel picks for the path (EACCES, EXDEV for a
    /// cross-directory move, EPERM).
    Refused,
}

pub struct Judge {
    pub failures: Vec<String>,
}

impl Judge {
    pub fn check(&mut self, case: &str, cond: bool, what: impl FnOnce() -> String) {
        if cond {
            println!("ok    {case}: {}", what());
        } else {
            let msg = format!("{case}: {}", what());
            println!("FAIL  {msg}");
            self.failures.push(msg);
        }
    }

    pub fn require_abi(&mut self, case: &str, abi: Abi, needed: Abi, what: &str) -> bool {
        let ok = abi >= needed;
        self.check(case, ok, || {
            format!("{what} needs Landlock {needed}; this kernel has {abi}")
        });
        ok
    }
}

pub fn run_child(
    case: &str,
    layout: &Layout,
    rules: &Path,
    restrict: bool,
    extra: &[(&str, String)],
) -> (BTreeMap<String, String>, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(CASE_VAR, case)
        .env(ROOT_VAR, &layout.root)
        .env(TMP_VAR, &layout.tmp)
        .env(SENTINEL_VAR, &layout.sentinel)
        .env(RULES_VAR, rules)
        .env(RESTRICT_VAR, if restrict { "1" } else { "0" })
        .stdin(Stdio::null());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut seen = BTreeMap::new();
    for line in stdout.lines() {
        if let Some((k, v)) = line.split_once('\t') {
            seen.insert(k.to_owned(), v.to_owned());
        }
    }
    if !output.status.success() {
        seen.insert(
            "child exit".to_owned(),
            format!("{} {stderr}", output.status),
        );
    }
    (seen, stderr)
}

pub fn judge_outcomes(
    j: &mut Judge,
    case: &str,
    seen: &BTreeMap<String, String>,
    expected: &[(&str, Expect)],
) {
    if let Some(exit) = seen.get("child exit") {
        j.check(case, false, || format!("child failed: {exit}"));
    }
    for (op, want) in expected {
        let got = seen.get(*op).map(String::as_str).unwrap_or("<missing>");
        let errno = got
            .strip_prefix("errno:")
            .and_then(|e| e.parse::<i32>().ok());
        let pass = match want {
            Expect::Ok => got == "ok",
            Expect::Errno(e) => errno == Some(*e),
            Expect::Refused => {
                matches!(errno, Some(libc::EACCES | libc::EXDEV | libc::EPERM))
            }
        };
        j.check(case, pass, || format!("{op}: want {want:?}, got {got}"));
    }
}
