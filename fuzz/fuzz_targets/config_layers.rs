//! cordon-policy's configuration layers: parsing a global and a project file, combining them with
//! caller overrides, and resolving the result on a fake host.
//!
//! The input is up to three parts separated by a line `%%`: the global file (TOML), the project
//! file (TOML), and overrides, one per line: `profile=NAME`, `network=allow|deny`, `write=PATH`,
//! `pass=NAME`, `env=KEY=VALUE`, `timeout=SECS`.
//!
//! Beyond "no panic": a parse error names the file; combining is deterministic (same hash); a
//! project file never yields a policy looser than the same layers without it; and a plan that
//! resolves keeps the path rules (canonical absolute paths, the cwd inside the writable set, no
//! root inside another or inside a mask).

#![no_main]

use std::path::{Path, PathBuf};

use cordon_policy::{
    ConfigLayer, FakeHost, HostFacts, Invocation, LayerKind, Network, Overrides, Plan, Policy,
    Posture, Profile, Unavailable, effective_policy,
};
use libfuzzer_sys::fuzz_target;

const GLOBAL: &str = "/home/u/.config/cordon/config.toml";
const PROJECT: &str = "/home/u/proj/.cordon.toml";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split("\n%%\n");
    let global_text = parts.next().unwrap_or_default();
    let project_text = parts.next();
    let overrides = overrides(parts.next().unwrap_or_default());

    let Some(global) = layer(global_text, GLOBAL, LayerKind::Global) else {
        return;
    };
    let project = match project_text {
        Some(t) => match layer(t, PROJECT, LayerKind::Project) {
            Some(l) => Some(l),
            None => return,
        },
        None => None,
    };

    let first = effective_policy(Some(&global), project.as_ref(), &overrides);
    let second = effective_policy(Some(&global), project.as_ref(), &overrides);
    let policy = match (first, second) {
        (Ok(a), Ok(b)) => {
            assert_eq!(
                a.policy.hash(),
                b.policy.hash(),
                "combining is not deterministic"
            );
            assert_eq!(a.provenance, b.provenance);
            a.policy
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            assert!(!a.to_string().is_empty());
            return;
        }
        (a, b) => panic!("same layers, different outcomes: {a:?} / {b:?}"),
    };

    if project.is_some() {
        let baseline = effective_policy(Some(&global), None, &overrides)
            .expect("the layers without the project file must combine when they do with it")
            .policy;
        assert!(
            tightens(&policy, &baseline),
            "the project file loosened the policy\n--- with it: {policy:#?}\n--- without: {baseline:#?}\n--- project:\n{}",
            project_text.unwrap_or_default()
        );
    }

    let host = FakeHost::typical()
        .dir("/home/u/proj/build")
        .dir("/home/u/proj/vendor/locked")
        .dir("/home/u/scratch")
        .symlink("/home/u/proj/out", "../scratch")
        .symlink("/home/u/proj/esc", "/etc");
    if let Ok(plan) = Plan::resolve(&policy, &Invocation::at("/home/u/proj"), &host) {
        check_plan(&plan, &host);
    }
});

fn layer(text: &str, file: &str, kind: LayerKind) -> Option<ConfigLayer> {
    match ConfigLayer::parse(text, Path::new(file), kind) {
        Ok(l) => Some(l),
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains(file),
                "error does not name the file: {message}"
            );
            None
        }
    }
}

fn overrides(text: &str) -> Overrides {
    let mut o = Overrides::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match key {
            "profile" => o.profile = Profile::from_name(value).ok(),
            "network" => {
                o.network = match value {
                    "allow" => Some(Network::Allowed),
                    "deny" => Some(Network::Denied),
                    _ => None,
                }
            }
            "write" => o.writable.push(PathBuf::from(value)),
            "pass" => o.pass_env.push(value.to_owned()),
            "env" => {
                let (k, v) = value.split_once('=').unwrap_or((value, ""));
                o.set_env.push((k.to_owned(), v.to_owned()));
            }
            "timeout" => o.timeout_secs = value.parse().ok(),
            _ => {}
        }
    }
    o
}

/// `Policy::no_looser_than`, except that an explicit variable the project dropped counts as
/// tightening (`env.drop` removes a name from `set` as well as from `pass`).
fn tightens(with: &Policy, without: &Policy) -> bool {
    let writable_ok = with.writable().iter().all(|w| {
        without.writable().contains(w) || (w.confined_to_workspace && w.path.is_relative())
    });
    let set_ok = with
        .env()
        .set
        .iter()
        .all(|(k, v)| without.env().set.get(k) == Some(v));
    writable_ok
        && with.masks().is_superset(without.masks())
        && with.protected().is_superset(without.protected())
        && (with.network() == Network::Denied || without.network() == Network::Allowed)
        && (with.posture() == without.posture() || with.posture() == Posture::Minimal)
        && (with.unavailable() == Unavailable::Refuse || without.unavailable() == Unavailable::Warn)
        && with.env().pass.is_subset(&without.env().pass)
        && set_ok
        && with.limits().no_looser_than(without.limits())
        && (!with.git_admin_writable() || without.git_admin_writable())
}

fn check_plan(plan: &Plan, host: &FakeHost) {
    let all = plan
        .writable
        .iter()
        .chain(plan.masks.iter().map(|m| &m.target))
        .chain(plan.protected.iter().map(|p| &p.path))
        .chain([&plan.cwd, &plan.workspace, &plan.home]);
    for p in all {
        assert!(p.is_absolute(), "relative path {} in a plan", p.display());
        assert_eq!(
            host.canonicalize(p).as_deref(),
            Some(p.as_path()),
            "{} is not canonical",
            p.display()
        );
    }
    assert!(
        plan.writable.iter().any(|r| plan.cwd.starts_with(r)),
        "cwd outside the writable set"
    );
    for (i, a) in plan.writable.iter().enumerate() {
        for b in &plan.writable[i + 1..] {
            assert!(
                !a.starts_with(b) && !b.starts_with(a),
                "nested roots {a:?} {b:?}"
            );
        }
        for m in &plan.masks {
            assert!(!a.starts_with(&m.target), "root {a:?} inside mask {m:?}");
        }
    }
    for p in &plan.protected {
        assert!(
            plan.writable.iter().any(|r| p.path.starts_with(r)),
            "protected path {:?} outside every root",
            p.path
        );
    }
}
