//! cordon-gitconfig's broker on fuzzed configurations.
//!
//! The input is three texts separated by `%%`: the copy the jail got, the copy it left, the
//! configuration now. Beyond "no panic": a merge's output parses; every variable it has that
//! the current configuration did not is one `judge` allows (nothing refused reaches the
//! repository); a jail that changed nothing changes nothing; and a sanitized text holds no
//! refused key.

#![no_main]

use cordon_gitconfig::{Verdict, entries, judge, merge, sanitize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, "%%");
    let base = parts.next().unwrap_or("");
    let jail = parts.next().unwrap_or(base);
    let current = parts.next().unwrap_or(base);

    if let Ok(m) = merge(base, jail, current) {
        let out = entries(&m.text).expect("a merge's output parses");
        let mut before = entries(current).expect("current parsed for the merge");
        for e in &out {
            match before.iter().position(|b| b == e) {
                Some(i) => {
                    before.remove(i);
                }
                None => assert_eq!(judge(e), Verdict::Allowed, "{} reached the config", e.key()),
            }
        }
    }
    if let Ok(m) = merge(base, base, current) {
        assert_eq!(
            m.text, current,
            "an unchanged copy changed the configuration"
        );
    }
    if let Ok((clean, _)) = sanitize(jail) {
        for e in entries(&clean).expect("a sanitized text parses") {
            assert_eq!(judge(&e), Verdict::Allowed, "{} survived sanitize", e.key());
        }
    }
});
