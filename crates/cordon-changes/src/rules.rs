//! The rules the judge applies, as data: the auto-run registry (from `cordon-policy`), where host
//! tools look for project configuration, the entries known to be inert, and the bounds.
//! `docs/project-config.md` is the survey these lists come from.

use cordon_policy::AutoRun;

/// Every rule id a [`Finding`](crate::Finding) can carry, stable and kebab-case.
pub const RULE_IDS: &[&str] = &[
    // Structure.
    "path-not-plain",
    "special-file",
    "symlink-out-of-root",
    // The auto-run registry.
    "auto-run-new",
    "auto-run-modified",
    "auto-run-deleted",
    // Git directories.
    "git-hook",
    "git-config-key",
    "git-config-unreadable",
    "git-config-not-utf8",
    "git-config-unparsable",
    "git-config-symlink",
    "git-pointer-outside-root",
    "git-pointer-unreadable",
    "git-redirected",
    "git-deletion",
    "git-dir-over-host-config",
    // Project configuration.
    "project-config",
];

/// A project configuration name a tool finds wherever it runs (by walking up from its working
/// directory, or in every project directory), judged at any depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigName {
    /// The file or directory name.
    pub name: &'static str,
    /// The tool that reads it.
    pub tool: &'static str,
    /// What in it runs a program.
    pub runs: &'static str,
}

/// An entry known to be inert: a name (or a `/`-path below one) at a configuration location
/// whose content names no program any surveyed tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inert {
    /// The name, or a path whose first component is the configuration entry (`.yarn/cache`);
    /// everything below it is inert too.
    pub path: &'static str,
    /// Why it is inert.
    pub why: &'static str,
}

const fn name(name: &'static str, tool: &'static str, runs: &'static str) -> ConfigName {
    ConfigName { name, tool, runs }
}

const fn inert(path: &'static str, why: &'static str) -> Inert {
    Inert { path, why }
}

/// Names tools look for wherever they run: judged at any depth (but inside `node_modules`).
#[rustfmt::skip]
pub const ANY_DEPTH: &[ConfigName] = &[
    name(".cargo", "cargo", "config.toml names build.rustc-wrapper, linkers and runners cargo runs; cargo reads it in every directory from its working directory up"),
    name("rust-toolchain", "rustup", "selects the toolchain whose cargo and rustc run, found from the working directory up"),
    name("rust-toolchain.toml", "rustup", "`path` names a toolchain directory whose programs run, found from the working directory up"),
    name(".npmrc", "npm, pnpm", "script-shell and node-options name what runs every package script"),
    name(".yarnrc", "yarn (classic)", "yarn-path names a script run in place of yarn, found from the working directory up"),
    name(".yarnrc.yml", "yarn", "yarnPath and plugins name scripts yarn runs"),
    name(".pnpmfile.cjs", "pnpm", "its hooks are JavaScript run at every install"),
    name(".tool-versions", "asdf, mise", "a `path:` version names a directory whose programs run, found from the working directory up"),
    name(".mise.toml", "mise", "env `_.source`, hooks and tasks run scripts"),
    name("mise.toml", "mise", "env `_.source`, hooks and tasks run scripts"),
    name("mise.local.toml", "mise", "env `_.source`, hooks and tasks run scripts"),
    name(".mise", "mise", "config.toml and tasks it runs"),
    name(".python-version", "pyenv", "a version name pyenv resolves to a directory of programs (CVE-2022-35861 ran a planted one)"),
    name(".ruby-version", "rbenv, chruby", "a version name resolved to a directory of programs"),
    name(".nvmrc", "nvm", "a version or alias name resolved to a directory of programs"),
    name(".node-version", "fnm, nodenv, volta", "a version name resolved to a directory of programs"),
    name(".bazelrc", "bazel", "--run_under, --action_env and startup options name programs bazel runs"),
    name(".bazelversion", "bazelisk", "names the bazel release (a fork's, too) bazelisk downloads and runs"),
    name("Directory.Build.props", "MSBuild, dotnet", "imported by every project below it: Exec tasks run programs"),
    name("Directory.Build.targets", "MSBuild, dotnet", "imported by every project below it: Exec tasks run programs"),
    name("Directory.Build.rsp", "MSBuild, dotnet", "command-line switches for every build below it (loggers are code)"),
    name("global.json", "dotnet", "selects the .NET SDK the host's dotnet runs"),
    name("uv.toml", "uv", "indexes and build settings: where the packages whose builds run come from"),
    name(".env", "docker compose, direnv (dotenv), dotenv loaders", "variables handed to the programs they start (COMPOSE_FILE picks what compose runs)"),
];

/// Names at a root's top (or a nested project's top) that are not dot-entries but are
/// configuration: the toolchain files beside them. The [`ANY_DEPTH`] names count too.
pub const TOP_NAMES: &[&str] = &["rust-toolchain", "rust-toolchain.toml"];

/// What makes a directory below the root a project's top (tools run there as at the root):
/// its manifest, or a `.git`.
pub const PROJECT_MARKERS: &[&str] = &[
    ".git",
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "go.mod",
    "Gemfile",
    "composer.json",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "deno.json",
];

/// Entries known to be inert at a configuration location.
#[rustfmt::skip]
pub const INERT: &[Inert] = &[
    inert(".gitignore", "patterns of untracked files git ignores; git runs nothing from it"),
    inert(".editorconfig", "indentation, charset and line-ending properties; no property names a program"),
    inert(".gitkeep", "an empty marker that keeps a directory in git"),
    inert(".keep", "an empty marker that keeps a directory in git"),
    inert(".dockerignore", "patterns of the build context docker leaves out"),
    inert(".npmignore", "patterns of files npm leaves out of a published package"),
    inert(".prettierignore", "patterns of files prettier leaves alone"),
    inert(".eslintignore", "patterns of files eslint leaves alone"),
    inert(".stylelintignore", "patterns of files stylelint leaves alone"),
    inert(".ignore", "ignore patterns of ripgrep and fd"),
    inert(".rgignore", "ignore patterns of ripgrep"),
    inert(".fdignore", "ignore patterns of fd"),
    inert(".hgignore", "ignore patterns of Mercurial (its configuration is .hg/hgrc, not this)"),
    inert(".mailmap", "maps authors' names and addresses in git log and shortlog"),
    inert(".git-blame-ignore-revs", "commit ids git blame skips when configured to"),
    inert(".clang-format", "formatting options; clang-format runs nothing it names"),
    inert(".rustfmt.toml", "formatting options; rustfmt runs nothing it names"),
    inert(".pytest_cache", "pytest's cache: JSON data (last failures), never run"),
    inert(".mypy_cache", "mypy's cache: type data, never run"),
    inert(".ruff_cache", "ruff's cache: lint results, never run"),
    inert(".hypothesis", "hypothesis's example database: test inputs, never run"),
    inert(".eslintcache", "eslint's cache: lint results, never run"),
    inert(".DS_Store", "Finder's view settings"),
    inert(".yarn/cache", "package archives yarn unpacks as data, like node_modules; yarn runs nothing from them by itself"),
    inert(".yarn/install-state.gz", "yarn's record of the last install, data"),
];

/// What the judge applies. `Rules::default()` is cordon's.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The auto-run registry.
    pub registry: &'static [AutoRun],
    /// Project configuration names judged at any depth.
    pub any_depth: &'static [ConfigName],
    /// Non-dot names judged at a project's top.
    pub top_names: &'static [&'static str],
    /// What marks a nested project's top.
    pub project_markers: &'static [&'static str],
    /// The inert allowlist.
    pub inert: &'static [Inert],
    /// The largest git configuration judged (bigger: refused).
    pub max_config_bytes: usize,
    /// The largest git pointer file (`.git` file, `commondir`, `gitdir`) read (bigger: refused).
    pub max_pointer_bytes: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            registry: AutoRun::REGISTRY,
            any_depth: ANY_DEPTH,
            top_names: TOP_NAMES,
            project_markers: PROJECT_MARKERS,
            inert: INERT,
            max_config_bytes: 1 << 20,
            max_pointer_bytes: 4096,
        }
    }
}

impl Rules {
    /// The registry entry a name (one path component) is, anywhere in a root.
    pub(crate) fn registry_entry(&self, name: &str) -> Option<&'static AutoRun> {
        // The registry's own matcher decides (exact names and one-star patterns); `self.registry`
        // may be narrowed by a caller, so the entry must be one of it.
        AutoRun::for_root_name(name).filter(|e| self.registry.iter().any(|r| r == *e))
    }

    /// The any-depth configuration name `name` is.
    pub(crate) fn any_depth_entry(&self, name: &str) -> Option<&ConfigName> {
        self.any_depth.iter().find(|c| c.name == name)
    }

    /// Whether `name` at a project's top is a configuration entry: a dot-entry, a toolchain
    /// file, or an any-depth name.
    pub(crate) fn is_top_config(&self, name: &str) -> bool {
        (name.starts_with('.') && name != "." && name != "..")
            || self.top_names.contains(&name)
            || self.any_depth_entry(name).is_some()
    }

    /// The inert entry `rel` (components from the configuration entry down) falls under.
    pub(crate) fn inert_entry(&self, rel: &[&str]) -> Option<&Inert> {
        self.inert.iter().find(|i| {
            let parts: Vec<&str> = i.path.split('/').collect();
            rel.len() >= parts.len() && rel[..parts.len()] == parts[..]
        })
    }
}

/// The mode a committed node gets: `mode` without set-id bits (04000, 02000) and without the
/// world-writable bit (0002).
pub fn allowed_mode(mode: u32) -> u32 {
    mode & 0o7777 & !0o6002
}
