//! cordon-floor's verdicts on fuzzed command text.
//!
//! The input is the command line, as UTF-8 (invalid sequences replaced). Beyond "no panic": the
//! verdict is deterministic; a refusal names a reason and evidence; `normalize` is idempotent;
//! and whatever `Floor::check` refuses as a shell line, `Floor::check_argv` refuses as the
//! argument vectors `sh -c -- LINE` and `sh -c LINE` — the forms `cordon run` is gated on, so a
//! difference there would let a refused command run.

#![no_main]

use cordon_floor::{Floor, FloorConfig, Verdict, normalize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let floor = Floor::new(FloorConfig {
        home: Some("/home/u".into()),
        ..FloorConfig::default()
    });

    let verdict = floor.check(&text);
    assert_eq!(
        floor.check(&text),
        verdict,
        "the verdict is not deterministic"
    );

    let once = normalize(&text);
    assert_eq!(normalize(&once), once, "normalize is not idempotent");

    if let Verdict::Refuse {
        reason, evidence, ..
    } = &verdict
    {
        assert!(!reason.is_empty(), "a refusal without a reason");
        assert!(!evidence.is_empty(), "a refusal without evidence");
        // A string that starts with `-` or `+` is read by sh as more options (and refused as
        // illegal ones), never as a command: only the `--` form must run it. The floor decides
        // that on the normalized argument, as it reads every argument (NUL bytes, which no real
        // argument holds, removed).
        let mut forms = vec![vec!["sh", "-c", "--", &text]];
        if !once.starts_with(['-', '+']) {
            forms.push(vec!["sh", "-c", &text]);
        }
        for argv in forms {
            assert!(
                !floor.check_argv(&argv).is_allow(),
                "check refuses ({verdict:?}) but check_argv allows {argv:?}"
            );
        }
    }
});
