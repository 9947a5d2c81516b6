#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::{OsStr, OsString};

use super::*;

fn policy(pass: &[&str], set: &[(&str, &str)]) -> EnvPolicy {
    EnvPolicy {
        pass: pass.iter().map(|s| (*s).to_owned()).collect(),
        set: set
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..EnvPolicy::default()
    }
}

#[test]
fn owned_values_replace_host_and_pass_values_and_set_replaces_them() {
    let mut p = policy(&["GOCACHE"], &[("PIP_CACHE_DIR", "/explicit/pip")]);
    p.owned.insert("GOCACHE".into(), "/cordon/go-build".into());
    p.owned.insert("PIP_CACHE_DIR".into(), "/cordon/pip".into());
    p.owned
        .insert("npm_config_cache".into(), "/cordon/npm".into());
    let host = [
        ("GOCACHE", "/home/u/.cache/go-build"),
        ("PIP_CACHE_DIR", "/home/u/.cache/pip"),
        ("PATH", "/bin"),
    ];
    let child = ChildEnv::build(host, &p).unwrap();
    // The host's (passed) value never reaches the jail: cordon's replaces it, and says so.
    assert_eq!(value(&child, "GOCACHE"), Some("/cordon/go-build"));
    let replaced = child.dropped.iter().find(|d| d.name == "GOCACHE").unwrap();
    assert_eq!(replaced.reason, DropReason::CordonOwned);
    assert!(replaced.requested);
    // An explicit value wins over cordon's.
    assert_eq!(value(&child, "PIP_CACHE_DIR"), Some("/explicit/pip"));
    // A name the injection rules refuse as an explicit value is still cordon's to set.
    assert_eq!(value(&child, "npm_config_cache"), Some("/cordon/npm"));
    assert_eq!(value(&child, "PATH"), Some("/bin"));
}

#[test]
fn owned_values_are_checked_like_set_values() {
    let mut p = policy(&[], &[]);
    p.owned.insert("BAD=NAME".into(), "/x".into());
    assert!(ChildEnv::build([("PATH", "/bin")], &p).is_err());
    let mut p = policy(&[], &[]);
    p.owned.insert("GOCACHE".into(), "/x\u{0}y".into());
    let err = ChildEnv::build([("PATH", "/bin")], &p).unwrap_err();
    assert!(err.to_string().contains("GOCACHE"), "{err}");
}

fn value<'a>(child: &'a ChildEnv, name: &str) -> Option<&'a str> {
    child.get(name).and_then(OsStr::to_str)
}

fn reason(child: &ChildEnv, name: &str) -> Option<DropReason> {
    child
        .dropped
        .iter()
        .find(|d| d.name == name)
        .map(|d| d.reason)
}

#[test]
fn allowlist_passes_without_being_requested() {
    let host = [
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("SHELL", "/bin/bash"),
        ("USER", "u"),
        ("LOGNAME", "u"),
        ("TERM", "xterm"),
        ("TMPDIR", "/tmp/x"),
        ("TMP", "/tmp/x"),
        ("TEMP", "/tmp/x"),
        ("TZ", "UTC"),
        ("PWD", "/home/u/p"),
        ("OLDPWD", "/home/u"),
        ("LANG", "C.UTF-8"),
        ("LANGUAGE", "en"),
        ("COLUMNS", "80"),
        ("LINES", "24"),
    ];
    let child = ChildEnv::build(host, &EnvPolicy::default()).unwrap();
    for (name, v) in host {
        assert_eq!(value(&child, name), Some(v), "{name}");
    }
    assert_eq!(child.vars.len(), host.len());
    assert!(child.dropped.is_empty(), "{:?}", child.dropped);
}

#[test]
fn every_lc_category_passes_but_not_a_credential_dressed_as_one() {
    let host = [
        ("LC_ALL", "C"),
        ("LC_CTYPE", "C.UTF-8"),
        ("LC_TIME", "C"),
        ("LC_TERMINAL", "iTerm2"),
        ("LC_API_TOKEN", "t"),
        ("lc_all", "C"),
    ];
    let child = ChildEnv::build(host, &policy(&["LC_API_TOKEN"], &[])).unwrap();
    for name in ["LC_ALL", "LC_CTYPE", "LC_TIME", "LC_TERMINAL"] {
        assert!(child.get(name).is_some(), "{name}");
    }
    assert!(child.get("LC_API_TOKEN").is_none());
    assert_eq!(reason(&child, "LC_API_TOKEN"), Some(DropReason::Credential));
    assert_eq!(reason(&child, "lc_all"), Some(DropReason::NotRequested));
}

#[test]
fn unrequested_host_names_are_dropped_by_name_only() {
    let host = [("CARGO_TERM_COLOR", "always"), ("PATH", "/bin")];
    let child = ChildEnv::build(host, &EnvPolicy::default()).unwrap();
    assert!(child.get("CARGO_TERM_COLOR").is_none());
    assert_eq!(
        child.dropped,
        [Dropped {
            name: "CARGO_TERM_COLOR".into(),
            reason: DropReason::NotRequested,
            requested: false,
        }]
    );
}

#[test]
fn requested_ordinary_names_pass() {
    let host = [("CARGO_TERM_COLOR", "always"), ("RUST_LOG", "debug")];
    let child = ChildEnv::build(host, &policy(&["CARGO_TERM_COLOR", "RUST_LOG"], &[])).unwrap();
    assert_eq!(value(&child, "CARGO_TERM_COLOR"), Some("always"));
    assert_eq!(value(&child, "RUST_LOG"), Some("debug"));
}

/// One representative per family, requested by `pass` and present on the host: none passes, and
/// each is dropped with its family's reason, marked as requested.
#[test]
fn each_family_is_never_passed_by_name() {
    let cases = [
        ("GITHUB_TOKEN", DropReason::Credential),
        ("AWS_SECRET_ACCESS_KEY", DropReason::Credential),
        ("MYSQL_PWD", DropReason::Credential),
        ("DB_PASSWORD", DropReason::Credential),
        ("LD_PRELOAD", DropReason::Loader),
        ("LD_LIBRARY_PATH", DropReason::Loader),
        ("GLIBC_TUNABLES", DropReason::Loader),
        ("DYLD_INSERT_LIBRARIES", DropReason::Loader),
        ("BASH_ENV", DropReason::Injection),
        ("BASH_FUNC_ls%%", DropReason::Injection),
        ("PYTHONPATH", DropReason::Injection),
        ("NODE_OPTIONS", DropReason::Injection),
        ("GIT_CONFIG_PARAMETERS", DropReason::Injection),
        ("GIT_SSH_COMMAND", DropReason::CommandHook),
        ("GIT_ASKPASS", DropReason::CommandHook),
        ("EDITOR", DropReason::CommandHook),
        ("HTTPS_PROXY", DropReason::Proxy),
        ("https_proxy", DropReason::Proxy),
        ("NO_PROXY", DropReason::Proxy),
        ("SSH_AUTH_SOCK", DropReason::AgentSocket),
        ("GPG_AGENT_INFO", DropReason::AgentSocket),
        ("DOCKER_HOST", DropReason::AgentSocket),
        ("DBUS_SESSION_BUS_ADDRESS", DropReason::Desktop),
        ("DISPLAY", DropReason::Desktop),
        ("WAYLAND_DISPLAY", DropReason::Desktop),
        ("XDG_RUNTIME_DIR", DropReason::Desktop),
        ("XAUTHORITY", DropReason::Desktop),
    ];
    let names: Vec<&str> = cases.iter().map(|(n, _)| *n).collect();
    let host: Vec<(&str, &str)> = names.iter().map(|n| (*n, "host-value")).collect();
    let child = ChildEnv::build(host, &policy(&names, &[])).unwrap();
    assert!(child.vars.is_empty(), "{child:?}");
    for (name, expected) in cases {
        let d = child.dropped.iter().find(|d| d.name == name).unwrap();
        assert_eq!(d.reason, expected, "{name}");
        assert!(d.requested, "{name}");
    }
}

#[test]
fn families_on_the_host_are_dropped_with_their_reason_even_unrequested() {
    let host = [("LD_PRELOAD", "/x.so"), ("HTTP_PROXY", "http://u:p@proxy")];
    let child = ChildEnv::build(host, &EnvPolicy::default()).unwrap();
    assert_eq!(reason(&child, "LD_PRELOAD"), Some(DropReason::Loader));
    assert_eq!(reason(&child, "HTTP_PROXY"), Some(DropReason::Proxy));
    assert!(child.dropped.iter().all(|d| !d.requested));
}

#[test]
fn requested_but_absent_is_reported() {
    let child = ChildEnv::build(
        [("PATH", "/bin")],
        &policy(&["RUST_LOG", "GITHUB_TOKEN", "PATH"], &[]),
    )
    .unwrap();
    assert_eq!(reason(&child, "RUST_LOG"), Some(DropReason::NotOnHost));
    assert_eq!(reason(&child, "GITHUB_TOKEN"), Some(DropReason::Credential));
    assert_eq!(reason(&child, "PATH"), None);
}

#[test]
fn explicit_values_override_allowlisted_host_values() {
    let host = [
        ("PATH", "/host/bin"),
        ("HOME", "/home/u"),
        ("TMPDIR", "/tmp"),
    ];
    let p = policy(&[], &[("PATH", "/jail/bin"), ("TMPDIR", "/tmp/cordon-1")]);
    let child = ChildEnv::build(host, &p).unwrap();
    assert_eq!(value(&child, "PATH"), Some("/jail/bin"));
    assert_eq!(value(&child, "TMPDIR"), Some("/tmp/cordon-1"));
    assert_eq!(value(&child, "HOME"), Some("/home/u"));
    assert!(child.dropped.is_empty());
}

#[test]
fn explicit_values_may_name_credential_proxy_hook_and_socket_variables() {
    let host = [
        ("GITHUB_TOKEN", "host-token"),
        ("HTTP_PROXY", "http://host"),
    ];
    let p = policy(
        &["GITHUB_TOKEN"],
        &[
            ("GITHUB_TOKEN", "scoped-token"),
            ("HTTP_PROXY", "http://127.0.0.1:3128"),
            ("PAGER", "cat"),
            ("GIT_EDITOR", "true"),
            ("NEW_VAR", ""),
        ],
    );
    let child = ChildEnv::build(host, &p).unwrap();
    assert_eq!(value(&child, "GITHUB_TOKEN"), Some("scoped-token"));
    assert_eq!(value(&child, "HTTP_PROXY"), Some("http://127.0.0.1:3128"));
    assert_eq!(value(&child, "PAGER"), Some("cat"));
    assert_eq!(value(&child, "GIT_EDITOR"), Some("true"));
    assert_eq!(value(&child, "NEW_VAR"), Some(""));
    assert!(child.dropped.is_empty(), "{:?}", child.dropped);
}

#[test]
fn loader_and_own_values_are_refused_naming_the_variable_and_rule() {
    for (name, class, pattern) in [
        ("LD_PRELOAD", NameClass::Loader, "prefix LD_*"),
        ("ld_preload", NameClass::Loader, "prefix LD_*"),
        ("GLIBC_TUNABLES", NameClass::Loader, "name GLIBC_TUNABLES"),
        ("CORDON_MUTANT", NameClass::Own, "prefix CORDON_*"),
        ("cordon_anything", NameClass::Own, "prefix CORDON_*"),
    ] {
        let p = policy(&[], &[("PATH", "/bin"), (name, "/tmp/evil")]);
        let err = ChildEnv::build([("PATH", "/usr/bin")], &p).unwrap_err();
        match &err {
            EnvError::Refused { name: n, rule } => {
                assert_eq!(n, name);
                assert_eq!(rule.class, class);
            }
            other => panic!("{name}: unexpected {other:?}"),
        }
        let message = err.to_string();
        assert!(message.contains(name), "{message}");
        assert!(message.contains(pattern), "{message}");
        assert!(message.contains(class.as_str()), "{message}");
        assert!(!message.contains("/tmp/evil"), "{message}");
        assert_eq!(err.name(), name);
    }
}

/// An explicit grant acts only inside the jail: the harness's call, even for the names that are
/// never taken from the host (docs/cli.md, "Explicit grants").
#[test]
fn explicit_injection_grants_are_the_harness_call() {
    let grants = [
        ("CC", "clang"),
        ("CXX", "clang++"),
        ("RUSTFLAGS", "-C opt-level=0"),
        ("CARGO_ENCODED_RUSTFLAGS", "-Copt-level=0"),
        ("BASH_ENV", "/home/u/proj/env.sh"),
        ("NODE_OPTIONS", "--max-old-space-size=512"),
        ("PYTHONPATH", "/home/u/proj/src"),
        ("MAKEFLAGS", "-j2"),
    ];
    let mut set = vec![("PATH", "/bin")];
    set.extend(grants);
    let p = policy(&[], &set);
    // The host's values of the same names stay out.
    let child = ChildEnv::build([("PATH", "/usr/bin"), ("CC", "host-cc")], &p).unwrap();
    for (name, granted) in grants {
        assert_eq!(value(&child, name), Some(granted), "{name}");
    }
    let host_only =
        ChildEnv::build([("PATH", "/usr/bin"), ("CC", "host-cc")], &policy(&[], &[])).unwrap();
    assert_eq!(value(&host_only, "CC"), None);
    assert!(host_only.dropped.iter().any(|d| d.name == "CC"));
}

#[test]
fn refusal_message_reads_well() {
    let p = policy(&[], &[("LD_PRELOAD", "/tmp/evil.so")]);
    let err = ChildEnv::build(Vec::<(OsString, OsString)>::new(), &p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "refusing to set LD_PRELOAD inside the jail: it matches the dynamic-loader rule \
         `prefix LD_*` (dynamic loader (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, …) loads code \
         into every program); dynamic-loader variables act before the jail holds or on cordon \
         itself, so they are never set, not even explicitly"
    );
}

#[test]
fn invalid_names_are_refused_naming_the_name() {
    for (pass, set, bad, list, problem) in [
        (vec![""], vec![], "", PolicyList::Pass, NameProblem::Empty),
        (
            vec!["A=B"],
            vec![],
            "A=B",
            PolicyList::Pass,
            NameProblem::ContainsEquals,
        ),
        (
            vec!["A\0B"],
            vec![],
            "A\0B",
            PolicyList::Pass,
            NameProblem::ContainsNul,
        ),
        (
            vec![],
            vec![("", "v")],
            "",
            PolicyList::Set,
            NameProblem::Empty,
        ),
        (
            vec![],
            vec![("X=Y", "v")],
            "X=Y",
            PolicyList::Set,
            NameProblem::ContainsEquals,
        ),
        (
            vec![],
            vec![("X\0", "v")],
            "X\0",
            PolicyList::Set,
            NameProblem::ContainsNul,
        ),
    ] {
        let err = ChildEnv::build([("PATH", "/bin")], &policy(&pass, &set)).unwrap_err();
        assert_eq!(
            err,
            EnvError::InvalidName {
                name: bad.to_owned(),
                list,
                problem
            }
        );
        assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
    }
}

#[test]
fn nul_in_a_value_is_refused_without_showing_the_value() {
    let p = policy(&[], &[("API_TOKEN", "hunter2\0tail")]);
    let err = ChildEnv::build([("PATH", "/bin")], &p).unwrap_err();
    assert_eq!(
        err,
        EnvError::NulInValue {
            name: "API_TOKEN".into(),
            offset: 7
        }
    );
    let message = err.to_string();
    assert!(message.contains("API_TOKEN"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
}

#[cfg(unix)]
#[test]
fn non_utf8_names_are_dropped_and_non_utf8_values_kept() {
    use std::os::unix::ffi::OsStringExt;
    let bad_name = OsString::from_vec(b"FOO\xffBAR".to_vec());
    let bad_value = OsString::from_vec(b"/home/u/caf\xe9".to_vec());
    let host = vec![
        (bad_name, OsString::from("x")),
        (OsString::from("PWD"), bad_value.clone()),
    ];
    let child = ChildEnv::build(host, &EnvPolicy::default()).unwrap();
    assert_eq!(child.vars.get(OsStr::new("PWD")), Some(&bad_value));
    assert_eq!(
        child.dropped,
        [Dropped {
            name: "FOO\u{fffd}BAR".into(),
            reason: DropReason::NonUnicodeName,
            requested: false,
        }]
    );
}

#[test]
fn malformed_host_entries_are_dropped() {
    let host = [
        ("", "x"),
        ("A=B", "x"),
        ("PATH", "/bin\0/evil"),
        ("HOME", "/h"),
    ];
    let child = ChildEnv::build(host, &policy(&["A"], &[])).unwrap();
    assert_eq!(child.vars.len(), 1);
    assert_eq!(value(&child, "HOME"), Some("/h"));
    assert_eq!(reason(&child, "PATH"), Some(DropReason::Malformed));
    assert_eq!(reason(&child, "A=B"), Some(DropReason::Malformed));
    assert_eq!(reason(&child, ""), Some(DropReason::Malformed));
}

#[test]
fn first_duplicate_wins_like_getenv() {
    let host = [
        ("PATH", "/first"),
        ("PATH", "/second"),
        ("X", "1"),
        ("X", "2"),
    ];
    let child = ChildEnv::build(host, &EnvPolicy::default()).unwrap();
    assert_eq!(value(&child, "PATH"), Some("/first"));
    assert_eq!(child.dropped.len(), 1, "{:?}", child.dropped);
}

#[test]
fn dropped_is_sorted_disjoint_from_vars_and_counted() {
    let host = [
        ("ZED", "1"),
        ("LD_PRELOAD", "x"),
        ("PATH", "/bin"),
        ("AWS_SECRET_ACCESS_KEY", "s"),
        ("ALPHA", "1"),
    ];
    let child = ChildEnv::build(host, &policy(&["ZED", "MISSING"], &[])).unwrap();
    let names: Vec<&str> = child.dropped.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["ALPHA", "AWS_SECRET_ACCESS_KEY", "LD_PRELOAD", "MISSING"]
    );
    for d in &child.dropped {
        assert!(child.get(&d.name).is_none(), "{}", d.name);
    }
    let counts = child.dropped_counts();
    assert_eq!(counts.get(&DropReason::NotRequested), Some(&1));
    assert_eq!(counts.get(&DropReason::Credential), Some(&1));
    assert_eq!(counts.get(&DropReason::Loader), Some(&1));
    assert_eq!(counts.get(&DropReason::NotOnHost), Some(&1));
}

#[test]
fn debug_output_hides_values() {
    let host = [
        ("PATH", "/very/visible/path"),
        ("GITHUB_TOKEN", "ghp_hidden"),
    ];
    let p = policy(&[], &[("OPENAI_API_KEY", "sk-hidden")]);
    let child = ChildEnv::build(host, &p).unwrap();
    let debug = format!("{child:?}");
    assert!(debug.contains("OPENAI_API_KEY"), "{debug}");
    assert!(debug.contains("PATH"), "{debug}");
    for secret in ["/very/visible/path", "ghp_hidden", "sk-hidden"] {
        assert!(!debug.contains(secret), "{debug}");
    }
}

#[test]
fn policy_errors_come_before_anything_is_built() {
    // The invalid `pass` name is reported even though `set` also has a problem.
    let p = policy(&["A=B"], &[("LD_PRELOAD", "x")]);
    let err = ChildEnv::build([("PATH", "/bin")], &p).unwrap_err();
    assert!(matches!(
        err,
        EnvError::InvalidName {
            list: PolicyList::Pass,
            ..
        }
    ));
}
