//! What a hidden home shows for the programs on `PATH`, and the credential configuration masked
//! inside every tree a jail is shown.
//!
//! A `PATH` entry below the home shows that directory and what its programs resolve to, never the
//! tree above it ([`path_trees`]): a symlinked program shows its target (the target's `bin`
//! directory, or the package directory of a target inside `node_modules`, or the file alone),
//! and a script whose `#!` interpreter lies below the home shows that interpreter's prefix (the
//! directory above its `bin`: a virtual environment, a node version's directory with its `lib`).
//! Nothing is shown for sharing a parent with a program. The walk is bounded: at most
//! [`MAX_PATH_ENTRIES`] entries, [`MAX_PROGRAMS`] programs per entry, [`HEAD_BYTES`] bytes read
//! of each program, one interpreter per program. A host may remember a walk's answer between
//! runs ([`HostFacts::recall_walk`]) while nothing the walk looked at has changed.
//!
//! Inside what is shown, configuration that holds credentials is masked: the stores of
//! [`STORES_IN_SHOWN_TREES`] (home-relative, a `*` component standing for any one name) wherever
//! they exist, and the names of [`CONFIG_IN_ANY_TREE`] at the root of every shown tree (a global
//! npm prefix's `etc/npmrc`, a virtual environment's `pip.conf`). `docs/credential-stores.md`
//! is the survey behind both lists.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::host::{EntryKind, HostFacts};
use super::parts::CredentialMask;
use crate::paths::{DisplayPath, is_within};

/// `PATH` entries looked at, in order.
pub(crate) const MAX_PATH_ENTRIES: usize = 64;
/// Programs looked at per `PATH` entry (in name order).
pub(crate) const MAX_PROGRAMS: usize = 256;
/// Bytes read of a program to find its `#!` line (Linux reads at most 256).
pub(crate) const HEAD_BYTES: usize = 256;
/// Names a `*` of a store pattern stands for, per directory.
const MAX_MATCHES: usize = 64;

/// Directories below the home too broad to be shown as an interpreter's prefix or a target's
/// `bin` tree: every tool of the user shares them. An interpreter directly in one shows its
/// own file only.
const SHARED_DIRS: &[&str] = &[
    ".local",
    ".local/share",
    ".local/state",
    ".config",
    ".cache",
];

/// A credential store inside a tree a jail may be shown, home-relative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShownStore {
    /// Relative to the home; a `*` component matches any one name.
    pub(crate) path: &'static str,
    /// The tool that keeps it.
    pub(crate) tool: &'static str,
}

const fn store(path: &'static str, tool: &'static str) -> ShownStore {
    ShownStore { path, tool }
}

/// Credential stores kept beside a tool's programs or inside a toolchain tree: masked wherever
/// they exist (with the home hidden, the ones outside every shown tree are hidden with it).
pub(crate) const STORES_IN_SHOWN_TREES: &[ShownStore] = &[
    store(".pulumi/credentials.json", "Pulumi"),
    store(".fly/config.yml", "flyctl"),
    store(".foundry/keystores", "Foundry"),
    store(".wasmer/wasmer.toml", "Wasmer"),
    store(".rye/credentials", "Rye"),
    store(".docker/key.pem", "Docker (TLS client key)"),
    store(".docker/contexts", "Docker (contexts' TLS keys)"),
    store(".nvm/versions/node/*/etc/npmrc", "nvm"),
    store(".nodenv/versions/*/etc/npmrc", "nodenv"),
    store(".asdf/installs/nodejs/*/etc/npmrc", "asdf"),
    store(".local/share/mise/installs/node/*/etc/npmrc", "mise"),
    store(".volta/tools/image/node/*/etc/npmrc", "volta"),
    store(
        ".local/share/fnm/node-versions/*/installation/etc/npmrc",
        "fnm",
    ),
    store(".local/share/pnpm/nodejs/*/etc/npmrc", "pnpm env"),
    store(".bun/install/global/.npmrc", "Bun"),
    store(".bun/install/global/bunfig.toml", "Bun"),
    store(".pyenv/versions/*/pip.conf", "pyenv"),
    store(".asdf/installs/python/*/pip.conf", "asdf"),
    store(".local/share/mise/installs/python/*/pip.conf", "mise"),
    store(".local/share/uv/python/*/pip.conf", "uv"),
    store("miniconda3/.condarc", "conda"),
    store("miniconda3/condarc", "conda"),
    store("miniconda3/envs/*/.condarc", "conda"),
    store("miniforge3/.condarc", "conda"),
    store("miniforge3/condarc", "conda"),
    store("miniforge3/envs/*/.condarc", "conda"),
    store("anaconda3/.condarc", "conda"),
    store("anaconda3/condarc", "conda"),
    store("anaconda3/envs/*/.condarc", "conda"),
];

/// Configuration that holds credentials at the root of an install prefix: masked at the root
/// of every shown tree, whatever its name.
pub(crate) const CONFIG_IN_ANY_TREE: &[&str] = &[
    "etc/npmrc",
    ".npmrc",
    "pip.conf",
    ".condarc",
    "condarc",
    "bunfig.toml",
];

/// The trees below `home` that the `PATH` value `path_var` shows, each with its reason, as
/// spelled (the caller resolves them): the entries themselves, the targets of their symlinked
/// programs, and the prefixes of their scripts' interpreters.
///
/// Nothing a jail can write steers the walk: an entry, a link or an interpreter whose
/// resolution passes through one of `roots` (the writable roots, where an earlier command may
/// have planted a link or a `#!` line naming any path of the home) is not followed.
pub(crate) fn path_trees(
    home: &Path,
    roots: &[PathBuf],
    path_var: &OsStr,
    host: &dyn HostFacts,
) -> Vec<(PathBuf, String)> {
    let inputs = walk_inputs(home, roots, path_var);
    if let Some(trees) = host.recall_walk(&inputs) {
        return trees;
    }
    let trees = walk_path(home, roots, path_var, host);
    host.remember_walk(&inputs, &trees);
    trees
}

/// Everything [`path_trees`]' answer depends on but the host: the walk's version (this crate's)
/// and its arguments, each preceded by its length.
fn walk_inputs(home: &Path, roots: &[PathBuf], path_var: &OsStr) -> Vec<u8> {
    let mut out = Vec::new();
    let mut put = |bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    put(env!("CARGO_PKG_VERSION").as_bytes());
    put(home.as_os_str().as_bytes());
    put(path_var.as_bytes());
    for r in roots {
        put(r.as_os_str().as_bytes());
    }
    out
}

/// [`path_trees`], asked of the host.
fn walk_path(
    home: &Path,
    roots: &[PathBuf],
    path_var: &OsStr,
    host: &dyn HostFacts,
) -> Vec<(PathBuf, String)> {
    let walk = Walk { home, roots, host };
    let entries: Vec<PathBuf> = std::env::split_paths(path_var)
        .filter(|e| e.is_absolute() && !e.components().any(|c| c == Component::ParentDir))
        .take(MAX_PATH_ENTRIES)
        .collect();
    let mut out = Vec::new();
    // A tree is named once, with the first reason found: the shims of one version manager all
    // name the same interpreter prefix, and every name costs the caller path comparisons.
    // Keyed by the path's bytes: comparing `Path`s parses their components every time.
    let mut named: BTreeSet<OsString> = BTreeSet::new();
    let mut push = |out: &mut Vec<(PathBuf, String)>, tree: PathBuf, why: &dyn Fn() -> String| {
        if !named.contains(tree.as_os_str()) {
            named.insert(tree.as_os_str().to_owned());
            out.push((tree, why()));
        }
    };
    // Interpreters repeat (a version manager's shims all name `bash`): each is looked up once.
    let mut seen = Interpreters::default();
    let mut walked: Vec<PathBuf> = Vec::new();
    for entry in &entries {
        let Some(canon) = walk.resolve(entry) else {
            continue;
        };
        // An entry named twice (or by two spellings) is walked once.
        if walked.contains(&canon) {
            continue;
        }
        walked.push(canon.clone());
        if !below(home, entry) && !below(home, &canon) {
            continue;
        }
        push(&mut out, entry.clone(), &|| {
            format!("PATH entry {}", DisplayPath(entry.clone()))
        });
        let Some(mut programs) = host.list_dir_kinds(&canon) else {
            continue;
        };
        programs.truncate(MAX_PROGRAMS);
        // The regular files' heads in one batch (most of the walk's cost is opening them).
        let files: Vec<OsString> = programs
            .iter()
            .filter(|(name, kind)| *kind == EntryKind::File && !walk.in_root(&canon.join(name)))
            .map(|(name, _)| name.clone())
            .collect();
        let mut heads = files
            .iter()
            .zip(host.read_heads(&canon, &files, HEAD_BYTES));
        for (name, kind) in &programs {
            let label = DisplayPath(entry.join(name));
            let found = match kind {
                EntryKind::Symlink => {
                    let Some(target) = walk.resolve_in(canon.clone(), Path::new(name)) else {
                        continue;
                    };
                    if host.kind(&target) != Some(EntryKind::File) {
                        continue;
                    }
                    if below(home, &target) && !is_within(&target, &canon) {
                        push(&mut out, needed_tree(home, &target), &|| {
                            format!("target of {label}")
                        });
                    }
                    seen.prefixes(&walk, &target, &entries)
                }
                EntryKind::File => {
                    // `files` is `programs`' regular files in order, less those in a root.
                    let Some((_, head)) = heads.by_ref().find(|(n, _)| *n == name) else {
                        continue;
                    };
                    seen.read.insert(canon.join(name).into_os_string());
                    match head {
                        Some(head) => seen.prefixes_of(&walk, &head, &entries),
                        None => continue,
                    }
                }
                _ => continue,
            };
            for prefix in found {
                push(&mut out, prefix, &|| {
                    format!("interpreter prefix of {label}")
                });
            }
        }
    }
    out
}

/// The host and what the walk must not pass through.
struct Walk<'a> {
    home: &'a Path,
    roots: &'a [PathBuf],
    host: &'a dyn HostFacts,
}

impl Walk<'_> {
    /// Whether `path` lies in a writable root (what a jail wrote there is not read).
    fn in_root(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| is_within(path, r))
    }

    /// `path` with every symlink resolved, one component at a time, or `None` when it does not
    /// resolve or a step lies in a writable root (what a jail wrote there is not followed).
    fn resolve(&self, path: &Path) -> Option<PathBuf> {
        self.resolve_in(PathBuf::from("/"), path)
    }

    /// [`Walk::resolve`] of `rest` below `dir`, a directory already resolved and checked.
    fn resolve_in(&self, dir: PathBuf, rest: &Path) -> Option<PathBuf> {
        let mut pending: Vec<OsString> = Vec::new();
        push_components(&mut pending, rest);
        let mut at = dir;
        let mut hops = 0;
        while let Some(part) = pending.pop() {
            if part == ".." {
                at.pop();
                continue;
            }
            let next = at.join(&part);
            if self.roots.iter().any(|r| is_within(&next, r)) {
                return None;
            }
            match self.host.kind(&next)? {
                EntryKind::Symlink => {
                    hops += 1;
                    let target = self.host.read_link(&next).filter(|_| hops <= 40)?;
                    if target.is_absolute() {
                        at = PathBuf::from("/");
                    }
                    push_components(&mut pending, &target);
                }
                _ => at = next,
            }
        }
        Some(at)
    }
}

/// Pushes the names of `path` (and its `..`) on `pending`, last first.
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    for c in path.components().rev() {
        match c {
            Component::Normal(p) => pending.push(p.to_owned()),
            Component::ParentDir => pending.push("..".into()),
            _ => {}
        }
    }
}

/// The stores of [`STORES_IN_SHOWN_TREES`] that exist below `home`, as masks. A store that
/// resolves to the home, one of its ancestors, or a directory holding one of `roots` is left
/// alone: masking it would hide what the jail is given.
pub(crate) fn stored_masks(
    home: &Path,
    roots: &[PathBuf],
    host: &dyn HostFacts,
) -> Vec<CredentialMask> {
    let mut out = Vec::new();
    for s in STORES_IN_SHOWN_TREES {
        for path in expand(home, s.path, host) {
            out.extend(mask_at(home, roots, host, path));
        }
    }
    out
}

/// The names of [`CONFIG_IN_ANY_TREE`] that exist at the root of one of `trees`, as masks.
pub(crate) fn masks_in_trees(
    home: &Path,
    roots: &[PathBuf],
    trees: &[PathBuf],
    host: &dyn HostFacts,
) -> Vec<CredentialMask> {
    trees
        .iter()
        .flat_map(|t| CONFIG_IN_ANY_TREE.iter().map(move |n| t.join(n)))
        .filter_map(|p| mask_at(home, roots, host, p))
        .collect()
}

impl super::Plan {
    /// With the home visible, the configuration at the root of every tree `PATH` shows, and of
    /// the prefix above each shown `bin` directory (a global npm prefix's `etc/npmrc`), is masked
    /// all the same.
    pub(super) fn mask_path_prefixes(&mut self, host: &dyn HostFacts, path_var: &OsStr) {
        let mut trees: Vec<PathBuf> = Vec::new();
        let roots: Vec<PathBuf> = self
            .writable
            .iter()
            .chain(&self.inner_roots)
            .cloned()
            .collect();
        for (tree, _) in path_trees(&self.home, &roots, path_var, host) {
            let Some(tree) = host.canonicalize(&tree) else {
                continue;
            };
            if let Some(prefix) = tree
                .parent()
                .filter(|_| tree.file_name() == Some(OsStr::new("bin")))
                .filter(|p| !too_broad(&self.home, p))
            {
                trees.push(prefix.to_path_buf());
            }
            trees.push(tree);
        }
        self.masks
            .extend(masks_in_trees(&self.home, &roots, &trees, host));
        self.masks.sort();
        self.masks.dedup_by(|a, b| a.target == b.target);
    }
}

fn mask_at(
    home: &Path,
    roots: &[PathBuf],
    host: &dyn HostFacts,
    requested: PathBuf,
) -> Option<CredentialMask> {
    // One `lstat` first: most of the names asked about do not exist.
    host.kind(&requested)?;
    let target = host.canonicalize(&requested)?;
    if home.starts_with(&target) || roots.iter().any(|r| is_within(r, &target)) {
        return None;
    }
    let kind = match host.kind(&target) {
        Some(EntryKind::Dir) => EntryKind::Dir,
        _ => EntryKind::File,
    };
    Some(CredentialMask {
        target,
        requested,
        kind,
    })
}

/// The paths below `home` that `pattern` names on this host (a `*` component lists its
/// directory, bounded by [`MAX_MATCHES`]); the ones that do not exist are left to the caller.
fn expand(home: &Path, pattern: &str, host: &dyn HostFacts) -> Vec<PathBuf> {
    let mut at = vec![home.to_path_buf()];
    for part in pattern.split('/') {
        if part == "*" {
            at = at
                .iter()
                .flat_map(|dir| {
                    host.list_dir(dir)
                        .unwrap_or_default()
                        .into_iter()
                        .take(MAX_MATCHES)
                        .map(move |n| dir.join(n))
                })
                .collect();
        } else {
            for p in &mut at {
                p.push(part);
            }
        }
    }
    at
}

/// Whether `p` lies strictly below `home`.
fn below(home: &Path, p: &Path) -> bool {
    p != home && p.starts_with(home)
}

/// Whether `dir` is the home, above it, or one of the directories every tool shares.
fn too_broad(home: &Path, dir: &Path) -> bool {
    !below(home, dir) || SHARED_DIRS.iter().any(|s| dir == home.join(s))
}

/// The smallest tree a program's target needs: the package directory of a target inside
/// `node_modules` (its own dependencies are below it), the target's `bin` directory (programs
/// call their siblings), or the file alone.
fn needed_tree(home: &Path, target: &Path) -> PathBuf {
    let parts: Vec<&OsStr> = target.iter().collect();
    if let Some(i) = parts.iter().position(|c| *c == OsStr::new("node_modules")) {
        let mut last = i + 1;
        if parts
            .get(last)
            .is_some_and(|n| n.as_bytes().starts_with(b"@"))
        {
            last += 1;
        }
        if last + 1 < parts.len() {
            let package: PathBuf = parts[..=last].iter().collect();
            if below(home, &package) {
                return package;
            }
        }
    }
    match target.parent() {
        Some(dir) if dir.file_name() == Some(OsStr::new("bin")) && !too_broad(home, dir) => {
            dir.to_path_buf()
        }
        _ => target.to_path_buf(),
    }
}

/// The interpreters already looked up: an `env` name's path on `PATH`, an interpreter's
/// prefixes, and the files already read.
#[derive(Default)]
struct Interpreters {
    on_path: BTreeMap<OsString, Option<PathBuf>>,
    prefixes: BTreeMap<PathBuf, Vec<PathBuf>>,
    /// The files read, by their path's bytes.
    read: BTreeSet<OsString>,
}

impl Interpreters {
    /// The prefixes below the home of the interpreter of `file`'s `#!` line, as named and as
    /// resolved (a virtual environment's `bin/python` links to its base Python: both are
    /// needed). A file in a writable root is not read.
    fn prefixes(&mut self, walk: &Walk<'_>, file: &Path, entries: &[PathBuf]) -> Vec<PathBuf> {
        // A file many links lead to (rustup's proxies) is read once.
        if walk.in_root(file) || !self.read.insert(file.as_os_str().to_owned()) {
            return Vec::new();
        }
        let Some(head) = walk.host.read_head(file, HEAD_BYTES) else {
            return Vec::new();
        };
        self.prefixes_of(walk, &head, entries)
    }

    /// The prefixes below the home of the interpreter the `#!` line at the start of `head`
    /// names.
    fn prefixes_of(&mut self, walk: &Walk<'_>, head: &[u8], entries: &[PathBuf]) -> Vec<PathBuf> {
        let named = match shebang(head) {
            Some(Interpreter::Path(p)) => p,
            Some(Interpreter::Env(name)) => {
                let found = self.on_path.entry(name).or_insert_with_key(|name| {
                    entries.iter().map(|e| e.join(name)).find(|p| {
                        walk.resolve(p)
                            .is_some_and(|c| walk.host.kind(&c) == Some(EntryKind::File))
                    })
                });
                match found {
                    Some(p) => p.clone(),
                    None => return Vec::new(),
                }
            }
            None => return Vec::new(),
        };
        self.prefixes
            .entry(named)
            .or_insert_with_key(|named| interpreter_prefixes(walk, named))
            .clone()
    }
}

/// The prefixes below the home of the interpreter `named`, as named and as resolved; none when
/// it does not resolve to a file, or its resolution passes through a writable root.
fn interpreter_prefixes(walk: &Walk<'_>, named: &Path) -> Vec<PathBuf> {
    let home = walk.home;
    let Some(resolved) = walk.resolve(named) else {
        return Vec::new();
    };
    if walk.host.kind(&resolved) != Some(EntryKind::File) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for spelling in [named.to_path_buf(), resolved] {
        if !below(home, &spelling) {
            continue;
        }
        let prefix = spelling.parent().map(|dir| {
            if dir.file_name() == Some(OsStr::new("bin")) {
                dir.parent().unwrap_or(dir)
            } else {
                dir
            }
        });
        match prefix {
            Some(p) if !too_broad(home, p) => out.push(p.to_path_buf()),
            _ => out.push(spelling),
        }
    }
    out
}

/// What a `#!` line names.
#[derive(Debug, PartialEq, Eq)]
enum Interpreter {
    /// An absolute path.
    Path(PathBuf),
    /// A name `/usr/bin/env` looks up on `PATH`.
    Env(OsString),
}

/// The interpreter of a script's first line, if it is a `#!` line naming an absolute path
/// (`#!/usr/bin/env [-S] [NAME=VALUE…] name` names `name`, looked up on `PATH`).
fn shebang(head: &[u8]) -> Option<Interpreter> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let mut words = line
        .split(|b| *b == b' ' || *b == b'\t' || *b == b'\r')
        .filter(|w| !w.is_empty());
    let first = PathBuf::from(OsStr::from_bytes(words.next()?));
    if !first.is_absolute() {
        return None;
    }
    if first.file_name() != Some(OsStr::new("env")) {
        return Some(Interpreter::Path(first));
    }
    let name = words.find(|w| !w.starts_with(b"-") && !w.contains(&b'='))?;
    let name = PathBuf::from(OsStr::from_bytes(name));
    if name.is_absolute() {
        Some(Interpreter::Path(name))
    } else if name.components().count() == 1 {
        Some(Interpreter::Env(name.into_os_string()))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_is_remembered_under_all_its_inputs() {
        let p = |s: &str| PathBuf::from(s);
        let base = walk_inputs(&p("/h"), &[p("/w")], OsStr::new("/h/bin"));
        for other in [
            walk_inputs(&p("/g"), &[p("/w")], OsStr::new("/h/bin")),
            walk_inputs(&p("/h"), &[p("/v")], OsStr::new("/h/bin")),
            walk_inputs(&p("/h"), &[p("/w"), p("/h/x")], OsStr::new("/h/bin")),
            walk_inputs(&p("/h"), &[], OsStr::new("/h/bin")),
            walk_inputs(&p("/h"), &[p("/w")], OsStr::new("/h/bin:/x")),
            // The same bytes, cut elsewhere.
            walk_inputs(&p("/h"), &[p("/w/h/bin")], OsStr::new("")),
        ] {
            assert_ne!(base, other);
        }
        assert_eq!(
            base,
            walk_inputs(&p("/h"), &[p("/w")], OsStr::new("/h/bin"))
        );
    }

    #[test]
    fn shebang_lines_name_a_path_or_an_env_lookup() {
        assert_eq!(
            shebang(b"#!/home/u/venv/bin/python -I\nimport x"),
            Some(Interpreter::Path("/home/u/venv/bin/python".into()))
        );
        assert_eq!(
            shebang(b"#!/usr/bin/env -S NODE_OPTIONS=1 node --x\n"),
            Some(Interpreter::Env("node".into()))
        );
        assert_eq!(shebang(b"#!relative/sh\n"), None);
        assert_eq!(shebang(b"\x7fELF\x02\x01"), None);
        assert_eq!(shebang(b"#!/usr/bin/env ../x\n"), None);
    }

    #[test]
    fn a_target_needs_its_package_its_bin_or_itself() {
        let h = Path::new("/home/u");
        assert_eq!(
            needed_tree(
                h,
                Path::new("/home/u/.npm-global/lib/node_modules/@s/tool/bin/t.js")
            ),
            PathBuf::from("/home/u/.npm-global/lib/node_modules/@s/tool")
        );
        assert_eq!(
            needed_tree(h, Path::new("/home/u/.pulumi/bin/pulumi")),
            PathBuf::from("/home/u/.pulumi/bin")
        );
        assert_eq!(
            needed_tree(h, Path::new("/home/u/apps/x/run")),
            PathBuf::from("/home/u/apps/x/run")
        );
        // Shared directories are never shown whole for a program in them.
        assert_eq!(
            needed_tree(h, Path::new("/home/u/.local/bin/x")),
            PathBuf::from("/home/u/.local/bin")
        );
        assert_eq!(
            needed_tree(h, Path::new("/home/u/bin/x")),
            PathBuf::from("/home/u/bin")
        );
    }

    #[test]
    fn every_store_is_relative_and_plain() {
        for s in STORES_IN_SHOWN_TREES {
            assert!(
                Path::new(s.path).is_relative()
                    && !s.path.contains("..")
                    && !s.path.ends_with('/')
                    && s.path.split('/').all(|c| c == "*" || !c.contains('*')),
                "{}",
                s.path
            );
            assert!(!s.tool.is_empty());
        }
    }
}
