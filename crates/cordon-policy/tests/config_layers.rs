//! Configuration files: parsing, unknown keys, the tighten-only project layer, provenance.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::path::Path;

use cordon_policy::config::{
    ConfigLayer, LayerKind, Overrides, effective_policy, global_config_path, parse_str,
};
use cordon_policy::{Network, PathSpec, PolicyError, Profile, Source};
use proptest::prelude::*;

fn global(text: &str) -> ConfigLayer {
    parse_str(
        text,
        Path::new("/home/u/.config/cordon/config.toml"),
        LayerKind::Global,
    )
    .unwrap()
}

fn project(text: &str) -> Result<ConfigLayer, PolicyError> {
    parse_str(text, Path::new("/w/.cordon.toml"), LayerKind::Project)
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
        global_config_path(Some("/x".as_ref()), Some("/h".as_ref())),
        Some("/x/cordon/config.toml".into())
    );
    assert_eq!(
        global_config_path(Some("rel".as_ref()), Some("/h".as_ref())),
        Some("/h/.config/cordon/config.toml".into())
    );
    assert_eq!(global_config_path(None, None), None);
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
        network in proptest::option::of(prop_oneof![Just("deny"), Just("allow")]),
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
        if let Some(n) = network { t += &format!("[network]\nmode = {n:?}\n"); }
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
        global_text in prop_oneof![Just(String::new()), Just("[network]\nmode = \"allow\"\n[env]\npass = [\"RUST_LOG\"]\n".to_string())],
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

#[test]
fn home_and_read_keys_layer_as_documented() {
    let g = cordon_policy::config::parse_str(
        "[filesystem]\nhome = \"visible\"\nread = [\"~/.config/rclone\", \"~/.local/share/x\"]\n",
        std::path::Path::new("g.toml"),
        cordon_policy::config::LayerKind::Global,
    )
    .unwrap();
    let eff = cordon_policy::config::effective_policy(Some(&g), None, &Default::default()).unwrap();
    assert_eq!(eff.policy.home(), cordon_policy::HomeMode::Visible);
    assert_eq!(eff.policy.read().len(), 2);
    // A project file may only remove grants, and may never show the home.
    let p = |text: &str| {
        cordon_policy::config::parse_str(
            text,
            std::path::Path::new(".cordon.toml"),
            cordon_policy::config::LayerKind::Project,
        )
        .unwrap()
    };
    let narrowed = cordon_policy::config::effective_policy(
        Some(&g),
        Some(&p("[filesystem]\nread = [\"~/.config/rclone\"]\n")),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(narrowed.policy.read().len(), 1);
    let err = cordon_policy::config::effective_policy(
        Some(&g),
        Some(&p("[filesystem]\nread = [\"~/.gnupg-like\"]\n")),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("filesystem.read"), "{err}");
    let err = cordon_policy::config::effective_policy(
        None,
        Some(&p("[filesystem]\nhome = \"visible\"\n")),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("filesystem.home"), "{err}");
    let err = cordon_policy::config::parse_str(
        "[filesystem]\nread = [\"~\"]\n",
        std::path::Path::new("g.toml"),
        cordon_policy::config::LayerKind::Global,
    )
    .and_then(|g| cordon_policy::config::effective_policy(Some(&g), None, &Default::default()))
    .unwrap_err();
    assert!(
        err.to_string().contains("filesystem.read") && err.to_string().contains("whole home"),
        "{err}"
    );
}

#[test]
fn audit_fails_a_visible_home_and_passes_the_default() {
    let layer = |text: &str| {
        cordon_policy::config::parse_str(
            text,
            std::path::Path::new("g.toml"),
            cordon_policy::config::LayerKind::Global,
        )
        .unwrap()
    };
    let check = |global: &cordon_policy::config::ConfigLayer| {
        cordon_policy::audit::audit(Some(global), None, None, None)
            .checks
            .into_iter()
            .find(|c| c.name == "home-visible")
            .unwrap()
    };
    assert!(!check(&layer("[filesystem]\nhome = \"visible\"\n")).passed);
    assert!(check(&layer("[filesystem]\nread = [\"~/.config/rclone\"]\n")).passed);
}
