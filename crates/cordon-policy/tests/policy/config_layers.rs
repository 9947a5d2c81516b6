//! Configuration files: parsing, unknown keys, the tighten-only project layer, provenance.

use std::path::Path;

use cordon_policy::{
    ConfigLayer, LayerKind, Network, Overrides, PathSpec, PolicyError, Profile, Source,
    effective_policy,
};
use proptest::prelude::*;

fn global(text: &str) -> ConfigLayer {
    ConfigLayer::parse(
        text,
        Path::new("/home/u/.config/cordon/config.toml"),
        LayerKind::Global,
    )
    .unwrap()
}

fn project(text: &str) -> Result<ConfigLayer, PolicyError> {
    ConfigLayer::parse(text, Path::new("/w/.cordon.toml"), LayerKind::Project)
}

const FULL: &str = r#"
profile = "shell"
[filesystem]
writable = ["~/scratch"]
deny_read = ["~/.secrets"]
deny_write = ["vendor/locked"]
[network]
mode = "deny"
[env]
pass = ["RUST_LOG"]
set = { FOO = "bar" }
[limits]
timeout_secs = 600
[backend]
unavailable = "refuse"
"#;

#[test]
fn the_documented_shape_parses() {
    let layer = global(FULL);
    let eff = effective_policy(Some(&layer), None, &Overrides::default()).unwrap();
    let p = &eff.policy;
    assert!(p.masks().contains(&PathSpec::parse("~/.secrets").unwrap()));
    assert!(
        p.protected()
            .contains(&PathSpec::parse("vendor/locked").unwrap())
    );
    assert!(p.env().pass.contains("RUST_LOG"));
    assert_eq!(p.env().set.get("FOO").map(String::as_str), Some("bar"));
    assert_eq!(p.limits().timeout_secs, Some(600));
    assert_eq!(
        eff.provenance.get("filesystem.deny_read:~/.secrets"),
        Some(&Source::Global("/home/u/.config/cordon/config.toml".into()))
    );
}

#[test]
fn unknown_keys_name_the_key_and_the_file() {
    for (text, key) in [
        ("netwrk = 1", "netwrk"),
        ("[filesystem]\nwriteable = []", "filesystem.writeable"),
        ("[limits]\ntimeout = 3", "limits.timeout"),
    ] {
        let err = project(text).unwrap_err();
        assert!(matches!(err, PolicyError::UnknownKey { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(key) && msg.contains("/w/.cordon.toml"),
            "{msg}"
        );
    }
    let err = project("[network]\nmode = \"sometimes\"").unwrap_err();
    assert!(err.to_string().contains("/w/.cordon.toml"), "{err}");
}

#[test]
fn project_files_that_loosen_are_refused_naming_key_and_file() {
    for (text, key) in [
        (
            "[filesystem]\nwritable = [\"/srv/data\"]",
            "filesystem.writable",
        ),
        (
            "[filesystem]\nwritable = [\"~/scratch\"]",
            "filesystem.writable",
        ),
        (
            "[filesystem]\nallow_read = [\"~/.ssh\"]",
            "filesystem.allow_read",
        ),
        ("[network]\nmode = \"allow\"", "network.mode"),
        ("[backend]\nunavailable = \"warn\"", "backend.unavailable"),
        ("[env]\npass = [\"RUST_LOG\"]", "env.pass"),
        ("[env]\nset = { PATH = \"/w/bin\" }", "env.set"),
        ("[limits]\ntimeout_secs = 100000", "limits.timeout_secs"),
        ("profile = \"quality-gate\"", "profile"),
    ] {
        let layer = project(text).unwrap();
        let err = effective_policy(None, Some(&layer), &Overrides::default()).unwrap_err();
        assert!(
            matches!(err, PolicyError::ProjectLoosens { .. }),
            "{text}: {err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(key) && msg.contains("/w/.cordon.toml"),
            "{msg}"
        );
    }
}

#[test]
fn project_files_may_tighten() {
    let layer = project("[filesystem]\nwritable = [\"build\"]\ndeny_read = [\".env\"]\n[limits]\ntimeout_secs = 60\n[env]\ndrop = [\"FOO\"]\n").unwrap();
    let g = global("[env]\nset = { FOO = \"1\" }\n[network]\nmode = \"allow\"");
    let eff = effective_policy(Some(&g), Some(&layer), &Overrides::default()).unwrap();
    assert_eq!(eff.policy.limits().timeout_secs, Some(60));
    assert!(!eff.policy.env().set.contains_key("FOO"));
    assert_eq!(
        eff.policy.network(),
        Network::Allowed,
        "the global file may allow it"
    );
}

#[test]
fn caller_overrides_come_last_and_choose_the_profile() {
    let g = global("profile = \"quality-gate\"\n[network]\nmode = \"allow\"");
    let over = Overrides {
        profile: Some(Profile::Shell),
        network: Some(Network::Denied),
        timeout_secs: Some(5),
        ..Default::default()
    };
    let eff = effective_policy(Some(&g), None, &over).unwrap();
    assert_eq!(eff.policy.profile(), Profile::Shell);
    assert_eq!(eff.policy.network(), Network::Denied);
    assert_eq!(eff.policy.limits().timeout_secs, Some(5));
    assert_eq!(eff.provenance.get("profile"), Some(&Source::Caller));
    let eff = effective_policy(Some(&g), None, &Overrides::default()).unwrap();
    assert_eq!(eff.policy.profile(), Profile::QualityGate);
}

#[test]
fn bad_values_are_refused_with_the_rule() {
    let err = effective_policy(
        None,
        None,
        &Overrides {
            timeout_secs: Some(0),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("timeout of 0"), "{err}");
    let err = effective_policy(
        None,
        None,
        &Overrides {
            pass_env: vec!["A=B".into()],
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("\"A=B\""), "{err}");
    let g = global("[filesystem]\ndeny_read = [\"~/../etc\"]");
    let err = effective_policy(Some(&g), None, &Overrides::default()).unwrap_err();
    assert!(
        err.to_string().contains("filesystem.deny_read") && err.to_string().contains(".."),
        "{err}"
    );
    let g = global("profile = \"nope\"");
    let err = effective_policy(Some(&g), None, &Overrides::default()).unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn global_path_follows_xdg_then_home() {
    assert_eq!(
        ConfigLayer::global_path(Some("/x".as_ref()), Some("/h".as_ref())),
        Some("/x/cordon/config.toml".into())
    );
    assert_eq!(
        ConfigLayer::global_path(Some("rel".as_ref()), Some("/h".as_ref())),
        Some("/h/.config/cordon/config.toml".into())
    );
    assert_eq!(ConfigLayer::global_path(None, None), None);
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

prop_compose! {
    fn project_text()(
        writable in proptest::collection::vec(prop_oneof!["[a-z]{1,6}", "/[a-z]{1,6}", "~/[a-z]{1,6}", "[a-z]{1,3}/\\.\\./[a-z]{1,3}"], 0..3),
        deny_read in proptest::collection::vec(prop_oneof!["~/\\.[a-z]{1,6}", "[a-z]{1,6}"], 0..3),
        allow_read in proptest::collection::vec(Just("~/.ssh".to_string()), 0..2),
        network in proptest::option::of(prop_oneof![Just("deny"), Just("allow"), Just("proxy")]),
        allow in proptest::option::of(proptest::collection::vec(prop_oneof![Just("a.test".to_string()), Just("*.b.test".to_string()), Just("c.test:8080".to_string()), Just("127.0.0.1:9".to_string())], 0..3)),
        unavailable in proptest::option::of(prop_oneof![Just("refuse"), Just("warn")]),
        pass in proptest::collection::vec("[A-Z_]{1,8}", 0..2),
        drop in proptest::collection::vec("[A-Z_]{1,8}", 0..2),
        set in proptest::collection::btree_map("[A-Z]{1,5}", "[a-z]{0,5}", 0..2),
        timeout in proptest::option::of(1u64..5000),
        cpu in proptest::option::of(1u64..5000),
        output in proptest::option::of(0u64..100_000_000),
        profile in proptest::option::of(prop_oneof![Just("shell"), Just("quality-gate"), Just("mcp-stdio")]),
    ) -> String {
        let mut t = String::new();
        if let Some(p) = profile { t += &format!("profile = {p:?}\n"); }
        t += &format!("[filesystem]\nwritable = {}\ndeny_read = {}\nallow_read = {}\n", toml_list(&writable), toml_list(&deny_read), toml_list(&allow_read));
        t += "[network]\n";
        if let Some(n) = network { t += &format!("mode = {n:?}\n"); }
        if let Some(a) = allow { t += &format!("allow = {}\n", toml_list(&a)); }
        t += &format!("[env]\npass = {}\ndrop = {}\n", toml_list(&pass), toml_list(&drop));
        t += "set = {";
        t += &set.iter().map(|(k, v)| format!("{k} = {v:?}")).collect::<Vec<_>>().join(", ");
        t += "}\n[limits]\n";
        if let Some(v) = timeout { t += &format!("timeout_secs = {v}\n"); }
        if let Some(v) = cpu { t += &format!("cpu_secs = {v}\n"); }
        if let Some(v) = output { t += &format!("output_cap_bytes = {v}\n"); }
        if let Some(u) = unavailable { t += &format!("[backend]\nunavailable = {u:?}\n"); }
        t
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// No project file, however generated, yields a policy looser than the one without it.
    #[test]
    fn no_project_file_loosens_the_policy(
        text in project_text(),
        global_text in prop_oneof![
            Just(String::new()),
            Just("[network]\nmode = \"allow\"\n[env]\npass = [\"RUST_LOG\"]\n".to_string()),
            Just("[network]\nmode = \"proxy\"\nallow = [\"a.test\", \"*.b.test\"]\n".to_string()),
        ],
        profile in proptest::option::of(proptest::sample::select(Profile::ALL.to_vec())),
    ) {
        let g = global(&global_text);
        let over = Overrides { profile, ..Default::default() };
        let baseline = effective_policy(Some(&g), None, &over).unwrap().policy;
        if let Ok(layer) = project(&text)
            && let Ok(eff) = effective_policy(Some(&g), Some(&layer), &over)
        {
            prop_assert!(eff.policy.no_looser_than(&baseline), "project file loosened:\n{text}");
        }
    }
}

fn proxy_global() -> ConfigLayer {
    global("[network]\nmode = \"proxy\"\nallow = [\"A.test\", \"*.b.test\", \"127.0.0.1:8080\"]")
}

#[test]
fn proxy_mode_takes_its_destinations_from_files_and_caller() {
    let eff = effective_policy(Some(&proxy_global()), None, &Overrides::default()).unwrap();
    assert_eq!(eff.policy.network(), Network::Proxy);
    let listed: Vec<&str> = eff
        .policy
        .network_allow()
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        listed,
        ["*.b.test", "127.0.0.1:8080", "a.test"],
        "normalized and sorted"
    );
    let over = Overrides {
        network: Some(Network::Proxy),
        allow_hosts: vec!["c.test:3000".into()],
        ..Default::default()
    };
    let eff = effective_policy(None, None, &over).unwrap();
    assert_eq!(eff.policy.network(), Network::Proxy);
    assert!(eff.policy.network_allow().contains("c.test:3000"));
    assert_eq!(
        eff.provenance.get("network.allow:c.test:3000"),
        Some(&Source::Caller)
    );
    // The hash of a policy without destinations is the one it had before the mode existed.
    let plain = effective_policy(None, None, &Overrides::default())
        .unwrap()
        .policy;
    let body = serde_json::to_string(&plain).unwrap();
    assert!(!body.contains("network_allow"), "{body}");
    assert_ne!(eff.policy.hash(), plain.hash());
}

#[test]
fn a_project_file_may_only_remove_destinations_or_deny() {
    let g = proxy_global();
    let p = project("[network]\nallow = [\"a.test\"]").unwrap();
    let eff = effective_policy(Some(&g), Some(&p), &Overrides::default()).unwrap();
    let listed: Vec<&str> = eff
        .policy
        .network_allow()
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(listed, ["a.test"]);
    let p = project("[network]\nmode = \"deny\"").unwrap();
    let eff = effective_policy(Some(&g), Some(&p), &Overrides::default()).unwrap();
    assert_eq!(eff.policy.network(), Network::Denied);
    for (text, key, why) in [
        (
            "[network]\nallow = [\"a.test\", \"d.test\"]",
            "network.allow",
            "d.test",
        ),
        (
            "[network]\nmode = \"allow\"",
            "network.mode",
            "allows the network",
        ),
    ] {
        let err = effective_policy(
            Some(&g),
            Some(&project(text).unwrap()),
            &Overrides::default(),
        )
        .unwrap_err();
        match &err {
            PolicyError::ProjectLoosens {
                key: k,
                why: w,
                file,
            } => {
                assert_eq!(k, key, "{text}");
                assert!(w.contains(why), "{w}");
                assert_eq!(file, Path::new("/w/.cordon.toml"));
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    // Where the network is denied, a project file cannot open a proxy.
    let err = effective_policy(
        None,
        Some(&project("[network]\nmode = \"proxy\"\nallow = [\"a.test\"]").unwrap()),
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, PolicyError::ProjectLoosens { ref key, .. } if key == "network.mode"),
        "{err:?}"
    );
    // Where the global file allows the whole network, a project's proxy list narrows it.
    let open = global("[network]\nmode = \"allow\"");
    let p = project("[network]\nmode = \"proxy\"\nallow = [\"a.test\"]").unwrap();
    let eff = effective_policy(Some(&open), Some(&p), &Overrides::default()).unwrap();
    assert_eq!(eff.policy.network(), Network::Proxy);
    assert!(
        eff.policy.no_looser_than(
            &effective_policy(Some(&open), None, &Overrides::default())
                .unwrap()
                .policy
        )
    );
}

#[test]
fn home_and_read_keys_layer_as_documented() {
    let g = ConfigLayer::parse(
        "[filesystem]\nhome = \"visible\"\nread = [\"~/.config/rclone\", \"~/.local/share/x\"]\n",
        std::path::Path::new("g.toml"),
        LayerKind::Global,
    )
    .unwrap();
    let eff = effective_policy(Some(&g), None, &Default::default()).unwrap();
    assert_eq!(eff.policy.home(), cordon_policy::HomeMode::Visible);
    assert_eq!(eff.policy.read().len(), 2);
    // A project file may only remove grants, and may never show the home.
    let p = |text: &str| {
        ConfigLayer::parse(
            text,
            std::path::Path::new(".cordon.toml"),
            LayerKind::Project,
        )
        .unwrap()
    };
    let narrowed = effective_policy(
        Some(&g),
        Some(&p("[filesystem]\nread = [\"~/.config/rclone\"]\n")),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(narrowed.policy.read().len(), 1);
    let err = effective_policy(
        Some(&g),
        Some(&p("[filesystem]\nread = [\"~/.gnupg-like\"]\n")),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("filesystem.read"), "{err}");
    let err = effective_policy(
        None,
        Some(&p("[filesystem]\nhome = \"visible\"\n")),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("filesystem.home"), "{err}");
    let err = ConfigLayer::parse(
        "[filesystem]\nread = [\"~\"]\n",
        std::path::Path::new("g.toml"),
        LayerKind::Global,
    )
    .and_then(|g| effective_policy(Some(&g), None, &Default::default()))
    .unwrap_err();
    assert!(
        err.to_string().contains("filesystem.read") && err.to_string().contains("whole home"),
        "{err}"
    );
}

#[test]
fn bad_destinations_are_refused_naming_the_key_and_the_rule() {
    for (entry, rule) in [
        ("*", "allows every destination"),
        ("https://a.test", "has a scheme"),
        ("a.test/x", "has a path"),
        ("a.*.test", "wildcard"),
        ("10.0.0.1", "without a port"),
        ("", "is empty"),
    ] {
        let text = format!("[network]\nmode = \"proxy\"\nallow = [{entry:?}]");
        let layer = ConfigLayer::parse(&text, Path::new("/g.toml"), LayerKind::Global).unwrap();
        let err = effective_policy(Some(&layer), None, &Overrides::default()).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("network.allow"), "{shown}");
        assert!(shown.contains(rule), "{entry}: {shown}");
        assert!(shown.contains("/g.toml"), "{shown}");
        let over = Overrides {
            network: Some(Network::Proxy),
            allow_hosts: vec![entry.into()],
            ..Default::default()
        };
        let shown = effective_policy(None, None, &over).unwrap_err().to_string();
        assert!(
            shown.contains("--allow-host") && shown.contains(rule),
            "{shown}"
        );
    }
    let over = Overrides {
        network: Some(Network::Proxy),
        ..Default::default()
    };
    let err = effective_policy(None, None, &over).unwrap_err();
    assert!(
        matches!(err, PolicyError::ProxyWithoutDestinations { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("empty network.allow"), "{err}");
    let g = global("[network]\nmode = \"proxy\"\nallow = []");
    let err = effective_policy(Some(&g), None, &Overrides::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("global /home/u/.config/cordon/config.toml"),
        "{err}"
    );
    // A destination without the proxy mode would be silently unused: refused.
    let over = Overrides {
        allow_hosts: vec!["a.test".into()],
        ..Default::default()
    };
    let err = effective_policy(None, None, &over).unwrap_err().to_string();
    assert!(
        err.contains("--allow-host") && err.contains("--network proxy"),
        "{err}"
    );
}

#[test]
fn audit_fails_a_visible_home_and_passes_the_default() {
    let layer = |text: &str| {
        ConfigLayer::parse(text, std::path::Path::new("g.toml"), LayerKind::Global).unwrap()
    };
    let check = |global: &ConfigLayer| {
        cordon_policy::audit(Some(global), None, &Overrides::default(), None, None)
            .checks
            .into_iter()
            .find(|c| c.name == "home-visible")
            .unwrap()
    };
    assert!(!check(&layer("[filesystem]\nhome = \"visible\"\n")).passed);
    assert!(check(&layer("[filesystem]\nread = [\"~/.config/rclone\"]\n")).passed);
}
