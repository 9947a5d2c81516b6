//! No module of cordon-launch imports a module that imports it back: the crate's rooms depend on
//! each other in one direction only. Run it alone with
//! `cargo test -p cordon-launch --test module_graph -- --nocapture` (it prints the graph).
//!
//! Each file under `src/` is one module (`backend/mod.rs` is `backend`, `backend/bwrap.rs` is
//! `backend::bwrap`); an edge is any `crate::…` or `super::…` path in its code (a `use` or an
//! inline path), resolved to the longest module it names. `mod` declarations are not edges, and
//! `lib.rs`, the facade that re-exports, is left out.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every path of the form `crate::a::b…` or `super::…`, with `use` groups (`crate::{a, b::c}`)
/// expanded, as module-path segments relative to the crate root.
fn referenced(code: &str, module: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for (start, prefix) in [("crate::", None), ("super::", Some(()))] {
        let mut from = 0;
        while let Some(found) = code[from..].find(start) {
            let at = from + found;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            // `use super::*` is a test module's view of its own file, not an edge.
            if prefix.is_some() && code[from..].starts_with('*') {
                continue;
            }
            let base: Vec<String> = match prefix {
                None => Vec::new(),
                Some(()) => {
                    let mut m: Vec<String> = module.split("::").map(str::to_owned).collect();
                    m.pop();
                    m
                }
            };
            for path in expand(&code[from..]) {
                let mut full = base.clone();
                full.extend(path);
                out.push(full);
            }
        }
    }
    out
}

/// The paths a `use` tail (after `crate::`) names: `a::b::C`, or a group `{a, b::{c, d}}`.
fn expand(tail: &str) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    let mut rest = tail;
    loop {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 1;
                let mut close = 0;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        close = i;
                        break;
                    }
                }
                let inner = &group[..close];
                let mut items = Vec::new();
                let (mut depth, mut last) = (0, 0);
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            items.push(&inner[last..i]);
                            last = i + 1;
                        }
                        _ => {}
                    }
                }
                items.push(&inner[last..]);
                return items
                    .into_iter()
                    .map(str::trim)
                    .filter(|i| !i.is_empty())
                    .flat_map(expand)
                    .map(|p| segs.iter().cloned().chain(p).collect())
                    .collect();
            }
            return vec![segs];
        }
        segs.push(rest[..end].to_owned());
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![segs],
        }
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let modules: BTreeSet<String> = all
        .iter()
        .map(|p| module_of(p.strip_prefix(&src).unwrap()))
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &all {
        let module = module_of(path.strip_prefix(&src).unwrap());
        if module == "lib" {
            continue;
        }
        let code: String = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                !t.starts_with("//")
            })
            .collect::<Vec<_>>()
            .join("\n");
        let targets = edges.entry(module.clone()).or_default();
        for segs in referenced(&code, &module) {
            let named = (1..=segs.len())
                .rev()
                .map(|n| segs[..n].join("::"))
                .find(|m| modules.contains(m));
            if let Some(target) = named
                && target != module
                && target != "lib"
            {
                targets.insert(target);
            }
        }
    }
    edges
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let edges = graph();
    for (m, to) in &edges {
        println!(
            "{m} -> {}",
            to.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    // Depth-first search for a cycle, reported as the path that closes it.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == m) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(m.to_owned());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_owned());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        if let Some(cycle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
    // The reader itself finds what it should: the launcher uses the backends, and the probe
    // sits between the trait and the implementations.
    assert!(edges["launcher"].contains("backend::bwrap"), "{edges:?}");
    assert!(edges["backend::probe"].contains("backend"), "{edges:?}");
    assert!(
        edges["backend::bwrap"].contains("backend::probe"),
        "{edges:?}"
    );
}

#[test]
fn the_reader_sees_groups_and_super_paths() {
    let code = "use crate::{a::{b, c::D}, e};\nlet x = super::f::g();\nmy_crate::z;";
    let found = referenced(code, "m::n");
    let names: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(names, ["a::b", "a::c::D", "e", "m::f::g"]);
}

/// The wings depend downward only: host plumbing knows nothing of the jail's features, the
/// backends or the launcher; the in-jail stage only host plumbing; a feature never the launcher
/// or the session; a backend never a feature, the launcher or the session.
#[test]
fn the_wings_depend_downward() {
    let edges = graph();
    let wing = |m: &str| m.split("::").next().unwrap_or("").to_owned();
    let forbidden: &[(&str, &[&str])] = &[
        (
            "host",
            &["backend", "features", "launcher", "session", "weaken"],
        ),
        (
            "stage",
            &["backend", "features", "launcher", "session", "violations"],
        ),
        ("features", &["launcher", "session"]),
        ("backend", &["features", "launcher", "session"]),
    ];
    let mut seen = 0;
    for (m, targets) in &edges {
        for (from, never) in forbidden {
            if wing(m) != *from {
                continue;
            }
            seen += 1;
            for t in targets {
                assert!(
                    !never.contains(&wing(t).as_str()),
                    "{m} imports {t}: the {from} wing must not reach {never:?}"
                );
            }
        }
    }
    // The reader found modules in every wing it judges.
    assert!(seen >= 20, "only {seen} modules judged: {edges:?}");
}
