//! docs/architecture.md is a true map: every rule it states that a program can check is checked
//! here, against the manifests and the sources as they are.
//!
//! - the dependency arrows it lists are exactly the normal dependencies between the crates;
//! - the crates it calls pure depend on no system-call crate, and their library code spawns
//!   nothing, writes nothing and reads no environment variable; cordon-policy reads files only
//!   through `HostFacts` and `ConfigLayer::load`;
//! - unsafe code, print macros, file sizes and cordon-launch's top level are where it says;
//! - xtask and cordon-test-support depend on no cordon crate but cordon-test-support;
//! - every repository path it names exists, and it stays under 2,000 words.
//!
//! The source checks read code lexically: a line's `//` comment is dropped (doc comments too),
//! and "library code" leaves out `#[cfg(test)]` items and `tests.rs` modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// What the document states, as data; each list is named where the document states it.

/// The crates the document calls pure ("The pure crates: …").
const PURE: &[&str] = &[
    "cordon-bwrap",
    "cordon-changes",
    "cordon-env",
    "cordon-gitconfig",
    "cordon-policy",
    "cordon-proxy",
    "cordon-seatbelt",
    "cordon-seccomp",
];

/// Crates that make system calls; a pure crate names none of them.
const SYSTEM_CALL_CRATES: &[&str] = &["nix", "rustix", "libc"];

/// The one exception the document states: cordon-seccomp takes errno and action constants from
/// libc.
const SYSTEM_CALL_EXCEPTIONS: &[(&str, &str)] = &[("cordon-seccomp", "libc")];

/// Pure library code that is compiled only with a feature the document names: cordon-proxy's
/// proxy server, behind `server`.
const BEHIND_A_FEATURE: &[&str] = &["crates/cordon-proxy/src/server/"];

/// What spawns a process or writes a file.
const SPAWNS_OR_WRITES: &[&str] = &[
    "std::process",
    "Command::new",
    "fs::write",
    "File::create",
    "OpenOptions",
    "create_dir",
    "remove_file",
    "remove_dir",
    "fs::rename",
    "fs::copy",
    "set_permissions",
    "hard_link",
    "unix::fs::symlink",
];

/// What reads or changes the process's environment.
const TOUCHES_THE_ENVIRONMENT: &[&str] = &["env::var", "set_var", "remove_var"];

/// The library files with unsafe code (tests and examples opt in file by file).
const UNSAFE_LIBRARY_FILES: &[&str] = &[
    "crates/cordon-landlock/src/sys.rs",
    "crates/cordon-launch/src/host/sys.rs",
    "crates/cordon-launch/src/stage/init.rs",
    "crates/cordon-supervisor/src/netsys.rs",
    "crates/cordon-supervisor/src/sys.rs",
];

/// Where library sources may use the print macros: the binary, and the stage (the binary again,
/// inside the jail).
const MAY_PRINT: &[&str] = &["crates/cordon/src/", "crates/cordon-launch/src/stage/"];

/// The largest a Rust file under `crates/` may be, in lines.
const MAX_LINES: usize = 800;

/// The most entries (files and folders) at the top of `crates/cordon-launch/src`.
const MAX_LAUNCH_TOP_LEVEL: usize = 12;

/// The document's length: a map a newcomer reads in ten minutes.
const MAX_WORDS: usize = 2000;

// ---------------------------------------------------------------------------------------------
// Reading the tree.

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

fn document() -> String {
    read("docs/architecture.md")
}

/// Every `.rs` file below `rel`, as paths from the repository's root with `/`, sorted.
fn rust_files(rel: &str) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root().join(rel), &mut paths);
    let mut files: Vec<String> = paths
        .iter()
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    files
}

/// The lines of `text` without their `//` comments.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
}

/// `text` without its `#[cfg(test)]` items: a one-line item (`mod tests;`), or a block from
/// its opening line to the `}` at the attribute's indentation (rustfmt's layout).
fn without_test_items(text: &str) -> String {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut kept = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            kept.push(line);
            continue;
        }
        if lines
            .next()
            .is_some_and(|item| item.trim_end().ends_with('{'))
        {
            let end = |l: &&str| l.trim() == "}" && indent(l) == indent(line);
            lines.by_ref().find(end);
        }
    }
    kept.join("\n")
}

/// A crate's library code: each file under its `src/` but `tests.rs` modules, without its
/// `#[cfg(test)]` items and comments.
fn library_code(crate_name: &str) -> Vec<(String, String)> {
    rust_files(&format!("crates/{crate_name}/src"))
        .into_iter()
        .filter(|f| !f.ends_with("/tests.rs"))
        .map(|f| {
            let library = without_test_items(&read(&f));
            let code = code_lines(&library).collect::<Vec<_>>().join("\n");
            (f, code)
        })
        .collect()
}

/// The dependency lines of a manifest's normal dependencies (`[dependencies]` and
/// `[target.….dependencies]`), by dependency name.
fn normal_dependencies(manifest: &str) -> BTreeMap<String, String> {
    let mut deps = BTreeMap::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            // Target-specific ones too: cordon-launch's Linux backends are Linux-only.
            in_deps = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
        if in_deps && !name.is_empty() && !name.starts_with('#') {
            deps.insert(name.to_owned(), line.to_owned());
        }
    }
    deps
}

/// A manifest's `[features]` table's `default` line, if it has one.
fn default_features(manifest: &str) -> Option<&str> {
    manifest
        .split("[features]")
        .nth(1)?
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find(|l| l.starts_with("default"))
}

fn package_name(manifest: &str) -> String {
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap()
        .to_owned()
}

/// The inline code spans of the document, outside fenced blocks.
fn code_spans(doc: &str) -> Vec<String> {
    let mut in_fence = false;
    let prose: Vec<&str> = doc
        .lines()
        .filter(|l| {
            if l.starts_with("```") {
                in_fence = !in_fence;
                return false;
            }
            !in_fence
        })
        .collect();
    prose
        .join("\n")
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The crate arrows.

/// The cordon crates each crate's normal dependencies name.
fn from_manifests() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let Ok(text) = std::fs::read_to_string(entry.unwrap().path().join("Cargo.toml")) else {
            continue;
        };
        let deps = normal_dependencies(&text)
            .into_keys()
            .filter(|d| d.starts_with("cordon-"))
            .collect();
        out.insert(package_name(&text), deps);
    }
    out
}

/// The arrows the document lists: lines "- `a` → `b`, `c`" (or "`a`, `b` → none").
fn from_document() -> BTreeMap<String, BTreeSet<String>> {
    let text = document();
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

#[test]
fn xtask_and_test_support_depend_on_no_cordon_crate_but_test_support() {
    for manifest in ["xtask/Cargo.toml", "tests/support/Cargo.toml"] {
        let text = read(manifest);
        let cordon: Vec<String> = normal_dependencies(&text)
            .into_keys()
            .filter(|d| d.starts_with("cordon") && *d != package_name(&text))
            .filter(|d| d != "cordon-test-support")
            .collect();
        assert!(cordon.is_empty(), "{manifest} depends on {cordon:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Pure crates.

#[test]
fn the_pure_crates_are_the_ones_the_document_names() {
    // The paragraph's words after "The pure crates:", wherever its lines break.
    let paragraphs: Vec<String> = document()
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let list = paragraphs
        .iter()
        .find_map(|p| p.split_once("The pure crates:"))
        .expect("the document names the pure crates")
        .1;
    let named: BTreeSet<String> = code_spans(list)
        .into_iter()
        .filter(|s| s.starts_with("cordon-"))
        .collect();
    let pure: BTreeSet<String> = PURE.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(named, pure);
}

/// The system-call crates a manifest brings in by default, but its stated exceptions.
fn system_calls_by_default(crate_name: &str, manifest: &str) -> Vec<String> {
    // An optional dependency is off unless a default feature turns it on: a pure crate with
    // one has no default features at all.
    let has_defaults = default_features(manifest).is_some();
    normal_dependencies(manifest)
        .into_iter()
        .filter(|(dep, _)| SYSTEM_CALL_CRATES.contains(&dep.as_str()))
        .filter(|(dep, _)| !SYSTEM_CALL_EXCEPTIONS.contains(&(crate_name, dep.as_str())))
        .filter(|(_, line)| !line.contains("optional = true") || has_defaults)
        .map(|(dep, _)| dep)
        .collect()
}

#[test]
fn pure_crates_depend_on_no_system_call_crate() {
    for name in PURE {
        let manifest = read(&format!("crates/{name}/Cargo.toml"));
        let found = system_calls_by_default(name, &manifest);
        assert!(
            found.is_empty(),
            "{name}, called pure, depends on {found:?}"
        );
    }
    // The check sees them where they are: the launcher calls the kernel.
    let launch = read("crates/cordon-launch/Cargo.toml");
    assert!(!system_calls_by_default("cordon-launch", &launch).is_empty());
}

/// The places in `code` that name one of `apis`.
fn naming(code: &[(String, String)], apis: &[&str]) -> Vec<String> {
    code.iter()
        .flat_map(|(file, text)| {
            apis.iter()
                .filter(|api| text.contains(**api))
                .map(move |api| format!("{file}: {api}"))
        })
        .collect()
}

#[test]
fn pure_library_code_spawns_nothing_writes_nothing_and_reads_no_environment() {
    for name in PURE {
        let code: Vec<(String, String)> = library_code(name)
            .into_iter()
            .filter(|(f, _)| !BEHIND_A_FEATURE.iter().any(|p| f.starts_with(p)))
            .collect();
        assert!(!code.is_empty(), "{name} has no library code");
        let found = naming(&code, SPAWNS_OR_WRITES);
        assert!(found.is_empty(), "{name} is called pure: {found:?}");
        // cordon-env's `host_snapshot` is the one reader of the environment, by design.
        let readers: Vec<(String, String)> = code
            .into_iter()
            .filter(|(_, text)| !text.contains("fn host_snapshot"))
            .collect();
        let found = naming(&readers, TOUCHES_THE_ENVIRONMENT);
        assert!(found.is_empty(), "{name} is called pure: {found:?}");
    }
    // The check sees what the launcher does.
    assert!(!naming(&library_code("cordon-launch"), SPAWNS_OR_WRITES).is_empty());
}

#[test]
fn cordon_policy_reads_files_only_through_host_facts_and_config_load() {
    let mut readers = Vec::new();
    for (file, code) in library_code("cordon-policy") {
        if ["std::fs", "fs::read", "File::open"]
            .iter()
            .any(|api| code.contains(api))
        {
            let allowed =
                code.contains("impl HostFacts for RealHost") || code.contains("pub fn load(");
            assert!(allowed, "{file} reads the host outside HostFacts");
            readers.push(file);
        }
    }
    // The check sees the readers that are allowed.
    assert!(!readers.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Unsafe code, printing, sizes.

/// Whether a line (without its comment) is unsafe code: an `unsafe` block, function, impl,
/// extern block, trait or attribute, or an opt-in past the workspace's `unsafe_code = "deny"`.
fn is_unsafe_code(line: &str) -> bool {
    line.contains("allow(unsafe_code)")
        || line.match_indices("unsafe").any(|(i, _)| {
            let word_starts = !line[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            let rest = line[i + "unsafe".len()..].trim_start();
            word_starts
                && ["{", "fn ", "impl", "extern", "trait", "("]
                    .iter()
                    .any(|k| rest.starts_with(k))
        })
}

/// A file in a crate's `tests/` or `examples/` folder.
fn is_test_or_example(file: &str) -> bool {
    let mut parts = file.split('/');
    parts
        .nth(2)
        .is_some_and(|p| p == "tests" || p == "examples")
}

#[test]
fn unsafe_code_is_only_in_the_documented_files() {
    let unsafe_files: Vec<String> = rust_files("crates")
        .into_iter()
        .filter(|f| code_lines(&read(f)).any(is_unsafe_code))
        .collect();
    let library: Vec<&str> = unsafe_files
        .iter()
        .map(String::as_str)
        .filter(|f| !is_test_or_example(f))
        .collect();
    assert_eq!(
        library, UNSAFE_LIBRARY_FILES,
        "library files with unsafe code (the document names them)"
    );
}

#[test]
fn only_the_binary_and_the_stage_print() {
    let mut printing = Vec::new();
    for file in rust_files("crates") {
        let in_src = file.split('/').nth(2) == Some("src");
        let prints =
            code_lines(&read(&file)).any(|l| l.contains("print!") || l.contains("println!"));
        if in_src && prints {
            printing.push(file);
        }
    }
    let elsewhere: Vec<&String> = printing
        .iter()
        .filter(|f| !MAY_PRINT.iter().any(|p| f.starts_with(p)))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "printing outside the binary: {elsewhere:?}"
    );
    assert!(printing.iter().any(|f| f.starts_with("crates/cordon/src/")));
}

#[test]
fn no_rust_file_under_crates_is_over_800_lines() {
    let too_long: Vec<String> = rust_files("crates")
        .into_iter()
        .filter_map(|f| {
            let lines = read(&f).lines().count();
            (lines > MAX_LINES).then(|| format!("{f}: {lines} lines"))
        })
        .collect();
    assert!(too_long.is_empty(), "split these: {too_long:?}");
}

#[test]
fn cordon_launch_has_at_most_12_entries_at_its_top_level() {
    let entries: Vec<String> = std::fs::read_dir(root().join("crates/cordon-launch/src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        entries.len() <= MAX_LAUNCH_TOP_LEVEL,
        "{} entries, put some in a wing: {entries:?}",
        entries.len()
    );
}

// ---------------------------------------------------------------------------------------------
// The document itself.

/// Whether a code span is a repository path: no spaces, not a host path (`/…`, `~…`), and with
/// a `/` or a `.rs`, `.md` or `.toml` ending.
fn is_repository_path(span: &str) -> bool {
    !span.is_empty()
        && !span.contains(char::is_whitespace)
        && !span.starts_with(['/', '~'])
        && (span.contains('/') || [".rs", ".md", ".toml"].iter().any(|e| span.ends_with(e)))
}

#[test]
fn every_path_the_document_names_exists() {
    let paths: Vec<String> = code_spans(&document())
        .into_iter()
        .filter(|s| is_repository_path(s))
        .collect();
    assert!(paths.len() >= 20, "too few paths found: {paths:?}");
    // A pattern (`crates/*/Cargo.toml`) must at least have its fixed beginning.
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !root().join(p.split('*').next().unwrap()).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "no such path in the repository: {missing:?}"
    );
}

#[test]
fn the_document_is_under_2000_words() {
    let words = document().split_whitespace().count();
    assert!(
        words < MAX_WORDS,
        "{words} words; a map a newcomer reads in ten minutes"
    );
}
