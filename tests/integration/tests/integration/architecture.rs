//! docs/architecture.md's dependency arrows are the tree's: every normal dependency of a cordon
//! crate on another is listed, and nothing listed is missing from its `Cargo.toml`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

/// The cordon crates each crate's `[dependencies]` (and `[target.….dependencies]`) names.
fn from_manifests() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .unwrap()
            .to_owned();
        let mut deps = BTreeSet::new();
        let mut in_deps = false;
        for line in text.lines() {
            if line.starts_with('[') {
                // Target-specific ones too: cordon-launch's Linux backends are Linux-only.
                in_deps = line == "[dependencies]"
                    || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
                continue;
            }
            if in_deps && line.starts_with("cordon-") {
                deps.insert(line.split(['.', ' ', '=']).next().unwrap().to_owned());
            }
        }
        out.insert(name, deps);
    }
    out
}

/// The arrows the document lists: lines "- `a` → `b`, `c`" (or "`a`, `b` → none").
fn from_document() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("- `cordon")) {
        let Some((from, to)) = line[2..].split_once(" → ") else {
            continue;
        };
        let names = |s: &str| -> Vec<String> {
            s.split(',')
                .map(|n| n.trim().trim_matches('`').to_owned())
                .filter(|n| n.starts_with("cordon"))
                .collect()
        };
        let targets: BTreeSet<String> = names(to).into_iter().collect();
        for crate_name in names(from) {
            out.insert(crate_name, targets.clone());
        }
    }
    out
}

#[test]
fn the_documented_dependency_arrows_are_the_manifests() {
    let manifests = from_manifests();
    assert!(manifests.len() >= 10, "{manifests:?}");
    assert_eq!(from_document(), manifests);
}
