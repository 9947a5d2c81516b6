//! The generated expressions mean what the glob means: checked against globset (with `*` and `?`
//! kept within a component), run by regex-automata on the exact bytes Seatbelt would get.
//!
//! A generated expression also matches everything below a match (a deny covers a subtree, like
//! `subpath`), so it must match a path exactly when globset matches the path or one of its
//! ancestors below the base.

use std::ffi::OsString;

use crate::common::regex_matches;
use cordon_seatbelt::GlobRule;
use proptest::prelude::*;

const BASE: &str = "/w/a.b";

fn glob_component() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "b", "ab", ".x", "a.x", "*", "?", "*.x", "a*", "?b", "[ab]", "[a-c]x", "**",
    ])
    .prop_map(str::to_owned)
}

fn path_component() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "ab", ".x", "a.x", "bx", "cx", "b.x", "z"])
        .prop_map(str::to_owned)
}

fn globset_matches(pattern: &str, relative: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .unwrap()
        .compile_matcher()
        .is_match(relative)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_globset_below_the_base(
        glob in prop::collection::vec(glob_component(), 1..4),
        path in prop::collection::vec(path_component(), 1..5),
    ) {
        let pattern = glob.join("/");
        let re = GlobRule::new(BASE, OsString::from(&pattern)).regex().unwrap();
        let full = format!("{BASE}/{}", path.join("/"));
        let expected = (1..=path.len()).any(|n| globset_matches(&pattern, &path[..n].join("/")));
        prop_assert_eq!(
            regex_matches(&re, full.as_bytes()),
            expected,
            "{} on {} ({})",
            pattern,
            full,
            String::from_utf8_lossy(&re)
        );
    }
}

#[test]
fn a_middle_wildcard_matches_at_any_depth_and_nothing_else() {
    let re = GlobRule::new("/w", "**/.env").regex().unwrap();
    for yes in ["/w/.env", "/w/a/.env", "/w/a/b/c/.env", "/w/a/.env/inside"] {
        assert!(regex_matches(&re, yes.as_bytes()), "{yes}");
    }
    for no in [
        "/w/a.env",
        "/w/.envrc",
        "/w/a/.env.example",
        "/v/.env",
        "/w",
        "/wx/.env",
    ] {
        assert!(!regex_matches(&re, no.as_bytes()), "{no}");
    }
}

#[test]
fn sets_and_single_characters_stay_within_one_component() {
    let re = GlobRule::new("/w", "id_[!x]?a").regex().unwrap();
    assert!(regex_matches(&re, b"/w/id_rsa"));
    assert!(!regex_matches(&re, b"/w/id_xsa"));
    assert!(!regex_matches(&re, b"/w/id_/sa"));
    assert!(!regex_matches(&re, b"/w/id_r/a"));
    let star = GlobRule::new("/w", "*.key").regex().unwrap();
    assert!(regex_matches(&star, b"/w/a\nb.key"));
    assert!(!regex_matches(&star, b"/w/a/b.key"));
}
