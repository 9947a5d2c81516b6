//! Property tests for the invariants that matter: no credential-shaped name reaches the child
//! through `pass`, and the child holds nothing that was neither allowlisted, passed nor set.
//!
//! The oracles here are written independently of the crate's table (the credential words are
//! listed again below), so that dropping a word from the table makes these tests fail.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use cordon_env::{ChildEnv, EnvError, EnvPolicy, NameClass, classify, reads_as_credential};
use proptest::prelude::*;

/// Words that mark a credential wherever they appear in a name.
const CREDENTIAL_PARTS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "PASSW",
    "PASSWD",
    "PASSWORD",
    "PASSPHRASE",
    "PWD",
    "CRED",
    "CREDENTIAL",
    "AUTH",
    "OAUTH",
    "PRIVATE",
    "SESSION",
    "COOKIE",
    "SIGNATURE",
    "BEARER",
    "JWT",
    "KUBECONFIG",
    "NETRC",
];

/// Words that mark a credential when they stand as a whole word of the name.
const CREDENTIAL_WORDS: &[&str] = &["PAT", "PW", "PIN", "OTP", "PSK", "DSN"];

const ALLOWLIST: &[&str] = &[
    "PATH", "HOME", "SHELL", "USER", "LOGNAME", "TERM", "TMPDIR", "TMP", "TEMP", "TZ", "PWD",
    "OLDPWD", "LANG", "LANGUAGE", "COLUMNS", "LINES",
];

/// The test's own idea of a credential-shaped name.
fn oracle_reads_as_credential(name: &str) -> bool {
    if name == "PWD" || name == "OLDPWD" {
        return false;
    }
    let upper = name.to_ascii_uppercase();
    CREDENTIAL_PARTS.iter().any(|w| upper.contains(w))
        || upper
            .split(|c: char| !c.is_ascii_alphabetic())
            .any(|seg| CREDENTIAL_WORDS.contains(&seg))
}

/// `word` with each letter's case chosen at random.
fn mixed_case(word: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<bool>(), word.len()).prop_map(move |upper| {
        word.chars()
            .zip(upper)
            .map(|(c, u)| {
                if u {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect()
    })
}

fn affix() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("LC_".to_owned()),
        Just("_".to_owned()),
        "[A-Za-z0-9_]{1,8}",
    ]
}

/// A name that embeds a credential word: anywhere for the parts, as a whole word for the words.
fn credential_name() -> impl Strategy<Value = String> {
    let part = (
        affix(),
        prop::sample::select(CREDENTIAL_PARTS).prop_flat_map(mixed_case),
        "[A-Za-z0-9_]{0,8}",
    )
        .prop_map(|(p, w, s)| format!("{p}{w}{s}"));
    let word = (
        prop_oneof![
            Just(String::new()),
            Just("LC_".to_owned()),
            "[A-Za-z0-9]{0,6}[_0-9]"
        ],
        prop::sample::select(CREDENTIAL_WORDS).prop_flat_map(mixed_case),
        prop_oneof![Just(String::new()), "[_0-9][A-Za-z0-9_]{0,6}"],
    )
        .prop_map(|(p, w, s)| format!("{p}{w}{s}"));
    prop_oneof![3 => part, 1 => word]
}

fn identifier() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_]{0,12}"
}

/// Names of every kind a host may hold, as strings.
fn host_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(ALLOWLIST).prop_map(str::to_owned),
        identifier().prop_map(|s| format!("LC_{s}")),
        prop::sample::select(
            &[
                "LD_PRELOAD",
                "BASH_ENV",
                "NODE_OPTIONS",
                "HTTP_PROXY",
                "http_proxy",
                "SSH_AUTH_SOCK",
                "DISPLAY",
                "XDG_RUNTIME_DIR",
                "EDITOR",
                "CARGO_TERM_COLOR",
                "RUST_LOG",
            ][..]
        )
        .prop_map(str::to_owned),
        identifier(),
        credential_name(),
    ]
}

/// A host environment: mostly plausible names, some arbitrary bytes (non-UTF-8, `=`, NUL, empty).
/// Every value starts with `VALUE-` so that a leak into `dropped` can be spotted.
fn host_env() -> impl Strategy<Value = Vec<(OsString, OsString)>> {
    let name = prop_oneof![
        8 => host_name().prop_map(OsString::from),
        1 => prop::collection::vec(any::<u8>(), 0..10).prop_map(os_from_bytes),
    ];
    let value = prop_oneof![
        4 => "[ -~]{0,16}".prop_map(|v| OsString::from(format!("VALUE-{v}"))),
        1 => prop::collection::vec(any::<u8>(), 0..10).prop_map(|mut b| {
            let mut v = b"VALUE-".to_vec();
            v.append(&mut b);
            os_from_bytes(v)
        }),
    ];
    prop::collection::vec((name, value), 0..24)
}

#[cfg(unix)]
fn os_from_bytes(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}

#[cfg(not(unix))]
fn os_from_bytes(bytes: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&bytes).into_owned())
}

fn valid_policy_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('=') && !name.contains('\0')
}

fn first_values(host: &[(OsString, OsString)]) -> BTreeMap<OsString, OsString> {
    let mut first = BTreeMap::new();
    for (k, v) in host {
        first.entry(k.clone()).or_insert_with(|| v.clone());
    }
    first
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every credential-shaped name is requested by `pass` and present on the host; none of
    /// them reaches the child, whatever else the host holds.
    #[test]
    fn no_credential_shaped_name_reaches_the_child_through_pass(
        credentials in prop::collection::vec(credential_name(), 1..8),
        others in host_env(),
        extra_pass in prop::collection::vec(identifier(), 0..4),
    ) {
        let mut host: Vec<(OsString, OsString)> = credentials
            .iter()
            .map(|n| (OsString::from(n), OsString::from("VALUE-secret")))
            .collect();
        host.extend(others.iter().cloned());
        let pass: BTreeSet<String> = credentials
            .iter()
            .cloned()
            .chain(extra_pass)
            .chain(others.iter().filter_map(|(k, _)| k.to_str().map(str::to_owned)))
            .filter(|n| valid_policy_name(n))
            .collect();
        let policy = EnvPolicy { pass, set: BTreeMap::new(), ..EnvPolicy::default() };

        let child = ChildEnv::build(host.iter().map(|(k, v)| (k, v)), &policy)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;

        for name in &credentials {
            if name == "PWD" || name == "OLDPWD" {
                // The generator can spell the allowlisted working directories; they pass.
                prop_assert!(child.get(name).is_some());
                continue;
            }
            prop_assert!(oracle_reads_as_credential(name), "generator made a non-credential {name:?}");
            prop_assert!(reads_as_credential(name), "crate does not flag {name:?}");
            prop_assert!(child.get(name).is_none(), "{name:?} reached the child");
        }
        for name in child.vars.keys() {
            let name = name.to_str().unwrap();
            prop_assert!(!oracle_reads_as_credential(name), "{name:?} reached the child");
        }
    }

    /// The child holds only allowlisted (including `LC_*`), passed or set names; set values win,
    /// other values are the host's first; `dropped` is disjoint from the child and holds no value.
    #[test]
    fn the_child_holds_nothing_unrequested(
        host in host_env(),
        pass_from_host in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        extra_pass in prop::collection::vec(host_name(), 0..4),
        set in prop::collection::btree_map(host_name(), "[ -~]{0,12}", 0..5),
    ) {
        let host_names: Vec<String> = host
            .iter()
            .filter_map(|(k, _)| k.to_str().map(str::to_owned))
            .collect();
        let mut pass: BTreeSet<String> = extra_pass.into_iter().collect();
        if !host_names.is_empty() {
            pass.extend(pass_from_host.iter().map(|i| i.get(&host_names).clone()));
        }
        pass.retain(|n| valid_policy_name(n));
        let set: BTreeMap<String, String> = set
            .into_iter()
            .filter(|(k, _)| !classify(k).is_some_and(NameClass::refused_as_explicit))
            .map(|(k, v)| (k, format!("SET-{v}")))
            .collect();
        let policy = EnvPolicy { pass, set, ..EnvPolicy::default() };

        let child = ChildEnv::build(host.clone(), &policy)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;

        let first = first_values(&host);
        for (name, value) in &child.vars {
            let name = name.to_str().unwrap();
            prop_assert!(
                ALLOWLIST.contains(&name)
                    || name.starts_with("LC_")
                    || policy.pass.contains(name)
                    || policy.set.contains_key(name),
                "{name:?} was neither allowlisted, passed nor set"
            );
            match policy.set.get(name) {
                Some(explicit) => prop_assert_eq!(value, &OsString::from(explicit)),
                None => prop_assert_eq!(Some(value), first.get(&OsString::from(name))),
            }
        }
        for name in policy.set.keys() {
            prop_assert!(child.get(name).is_some(), "set {name:?} is missing");
        }
        for dropped in &child.dropped {
            prop_assert!(child.get(&dropped.name).is_none(), "{:?} both kept and dropped", dropped.name);
        }
        let log = serde_json::to_string(&child.dropped).unwrap();
        prop_assert!(!log.contains("VALUE-"), "a value leaked into dropped: {log}");
        prop_assert!(!log.contains("SET-"), "a value leaked into dropped: {log}");
    }

    /// Any `LD_*` name, in any case, is refused as an explicit value, and the error names it.
    #[test]
    fn loader_names_are_refused_as_explicit_values(
        prefix in mixed_case("LD_"),
        rest in "[A-Za-z0-9_]{0,10}",
    ) {
        let name = format!("{prefix}{rest}");
        let policy = EnvPolicy {
            pass: BTreeSet::new(),
            set: BTreeMap::from([(name.clone(), "/tmp/x.so".to_owned())]),
            ..EnvPolicy::default()
        };
        let err = ChildEnv::build([("PATH", "/bin")], &policy).unwrap_err();
        let is_refusal = matches!(&err, EnvError::Refused { name: n, .. } if *n == name);
        prop_assert!(is_refusal, "{err:?}");
        prop_assert!(err.to_string().contains(&name));
    }

    /// The classifier is total: no input makes it panic.
    #[test]
    fn classifier_never_panics(name in any::<String>()) {
        let _ = classify(&name);
        let _ = reads_as_credential(&name);
    }
}
