//! Project configuration by allowlist.

use cordon_changes::rules::{ANY_DEPTH, INERT};

use crate::support::Case;

#[test]
fn toolchain_configuration_the_issue_names_is_held_naming_the_tool() {
    let j = Case::new()
        .write(
            ".cargo/config.toml",
            b"[build]\nrustc-wrapper = \"/tmp/w\"\n",
        )
        .write(
            "crates/a/.cargo/config",
            b"[build]\nrustc-wrapper = \"/tmp/w\"\n",
        )
        .write("rust-toolchain.toml", b"[toolchain]\npath = \"/tmp/tc\"\n")
        .write("sub/dir/rust-toolchain", b"nightly\n")
        .write(".npmrc", b"script-shell=/tmp/sh\n")
        .write("web/app/.npmrc", b"script-shell=/tmp/sh\n")
        .write("web/.yarnrc.yml", b"yarnPath: ./x.cjs\n")
        .write("web/.pnpmfile.cjs", b"module.exports = {}\n")
        .judge();
    assert_eq!(
        j.held(".cargo/config.toml", "project-config").program,
        "cargo"
    );
    assert_eq!(
        j.held("crates/a/.cargo/config", "project-config").program,
        "cargo"
    );
    assert_eq!(
        j.held("rust-toolchain.toml", "project-config").program,
        "rustup"
    );
    assert_eq!(
        j.held("sub/dir/rust-toolchain", "project-config").program,
        "rustup"
    );
    assert_eq!(j.held(".npmrc", "project-config").program, "npm, pnpm");
    j.held("web/app/.npmrc", "project-config");
    j.held("web/.yarnrc.yml", "project-config");
    j.held("web/.pnpmfile.cjs", "project-config");
}

#[test]
fn dot_entries_nobody_listed_are_held_at_the_top() {
    // The held-out measure: names no list has heard of.
    let j = Case::new()
        .write(".frobnicaterc", b"cmd = /tmp/x\n")
        .write(".zz-tool/config.yml", b"run: /tmp/x\n")
        .write(".qwertyrc.json", b"{}")
        .judge();
    for p in [".frobnicaterc", ".zz-tool/config.yml", ".qwertyrc.json"] {
        let f = j.held(p, "project-config");
        assert_eq!(f.program, "an unlisted tool", "{p}");
    }
}

#[test]
fn a_nested_projects_top_is_judged_like_the_roots() {
    let j = Case::new()
        .host_file("pkgs/web/package.json", "{}")
        .write("pkgs/web/.frobrc", b"x")
        .write("pkgs/api/Cargo.toml", b"[package]\n")
        .write("pkgs/api/.weirdtool.toml", b"x")
        .write("src/.frobrc", b"x")
        .judge();
    j.held("pkgs/web/.frobrc", "project-config");
    j.held("pkgs/api/.weirdtool.toml", "project-config");
    // Not a project's top: nothing looks there but what the any-depth list names.
    j.applied("src/.frobrc");
    j.applied("pkgs/api/Cargo.toml");
}

#[test]
fn inert_entries_are_applied_where_configuration_is_held() {
    let j = Case::new()
        .write(".gitignore", b"target\n")
        .write(".editorconfig", b"root = true\n")
        .write(".pytest_cache/v/cache/lastfailed", b"{}")
        .write(".yarn/cache/left-pad.zip", b"PK")
        .write(".yarn/releases/yarn-4.cjs", b"//")
        .host_file("pkg/package.json", "{}")
        .write("pkg/.gitignore", b"dist\n")
        .judge();
    j.applied(".gitignore");
    j.applied(".editorconfig");
    j.applied(".pytest_cache/v/cache/lastfailed");
    j.applied(".yarn/cache/left-pad.zip");
    j.held(".yarn/releases/yarn-4.cjs", "project-config");
    j.applied("pkg/.gitignore");
}

#[test]
fn inside_node_modules_configuration_is_not_looked_for() {
    let j = Case::new()
        .write("node_modules/left-pad/package.json", b"{}")
        .write("node_modules/left-pad/.npmrc", b"x")
        .write("node_modules/left-pad/.eslintrc", b"{}")
        .write("node_modules/.package-lock.json", b"{}")
        // The registry still speaks there.
        .write("node_modules/left-pad/.envrc", b"x")
        .judge();
    j.applied("node_modules/left-pad/.npmrc");
    j.applied("node_modules/left-pad/.eslintrc");
    j.applied("node_modules/.package-lock.json");
    j.refused("node_modules/left-pad/.envrc", "auto-run-new");
}

#[test]
fn an_edit_or_a_deletion_of_existing_configuration_is_held() {
    let j = Case::new()
        .host_file(".cargo/config.toml", "[alias]\nb = \"build\"\n")
        .host_file(".npmrc", "ignore-scripts=true\n")
        .host_file(".mypy_cache/x.json", "{}")
        .write(
            ".cargo/config.toml",
            b"[build]\nrustc-wrapper = \"/tmp/w\"\n",
        )
        .delete(".npmrc")
        .delete(".mypy_cache/x.json")
        .judge();
    j.held(".cargo/config.toml", "project-config");
    assert!(j.held(".npmrc", "project-config").why.contains("deleted"));
    j.applied(".mypy_cache/x.json");
}

#[test]
fn the_lists_are_well_formed() {
    for c in ANY_DEPTH {
        assert!(
            !c.name.contains('/') && !c.tool.is_empty() && !c.runs.is_empty(),
            "{c:?}"
        );
        assert!(INERT.iter().all(|i| i.path != c.name), "{} is both", c.name);
    }
    for i in INERT {
        assert!(i.path.starts_with('.') && !i.why.is_empty(), "{i:?}");
        assert!(
            !cordon_policy::AutoRun::is_root_name(i.path.split('/').next().unwrap_or("")),
            "{} is in the registry",
            i.path
        );
    }
}
