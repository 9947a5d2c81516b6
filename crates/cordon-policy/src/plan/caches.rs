//! cordon's private toolchain caches: which tools get one, through which variables, and where.
//!
//! A jail's home directory is read-only, and the host's own caches must stay so (a jail that
//! could write `~/.cache/go-build` could poison the user's own builds). So every jail of a
//! workspace gets one writable directory that belongs to cordon, outside every workspace:
//! `<cordon's cache directory>/tools/<workspace key>` (the CLI uses `$XDG_CACHE_HOME/cordon/tools`,
//! else `~/.cache/cordon/tools`), and each tool is pointed into it with its own variable and
//! the XDG default ([`ToolCache::ALL`]).
//!
//! Per workspace, not per user: a cache shared by every workspace would be a channel between
//! them (a test in one repository writes a Go build-cache entry or a wheel that a build in
//! another repository then trusts), while a workspace's own cache gives a jail nothing it does
//! not already have: it can write the workspace itself. The price is a colder first run per
//! workspace; docs/caches.md argues it.
//!
//! With the network denied nothing can be downloaded, so the download caches are filled only
//! by the host: cargo reads the host's registry and git checkouts (read-only, through links in
//! its private `CARGO_HOME`, whose locks and tracking database are private), Go reads the host's
//! module download cache as a file proxy, Gradle and Maven the host's dependency caches as
//! read-only fallbacks. With the network allowed each tool gets a download cache of its own.
//!
//! Everything here is pure: [`CacheLayout::for_workspace`] takes plain data and the host facts of
//! [`HostFacts`] and returns what to create and what to set; the CLI creates it, bounds its
//! size and clears it (`cordon cache`). [`Plan::resolve`](crate::Plan::resolve) adds the cache
//! to a plan when its root exists ([`CachePlan`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::Invocation;
use super::host::{EntryKind, HostFacts};
use super::parts::{CachePlan, CredentialMask};
use super::roots::check_own_root;
use crate::model::modes::{HomeMode, Network, Posture};
use crate::model::policy::Policy;
use crate::paths::{is_within, serialize_path};

/// One tool's cache: the variable that moves it, and the directory below the workspace's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ToolCache {
    /// The tool.
    pub tool: &'static str,
    /// The variable the tool reads its cache location from.
    pub var: &'static str,
    /// The directory below the workspace's cache root.
    pub dir: &'static str,
    /// What the tool keeps there.
    pub what: &'static str,
}

const fn tool(
    tool: &'static str,
    var: &'static str,
    dir: &'static str,
    what: &'static str,
) -> ToolCache {
    ToolCache {
        tool,
        var,
        dir,
        what,
    }
}

impl ToolCache {
    /// Every tool cordon points at its private cache, by its own variable. `CARGO_HOME` is
    /// listed apart (`cargo` with the network denied, `cargo-online` with it allowed): its
    /// directory depends on the network.
    pub const ALL: &'static [ToolCache] = TOOL_CACHES;
}

/// [`ToolCache::ALL`].
const TOOL_CACHES: &[ToolCache] = &[
    tool(
        "XDG base directories",
        "XDG_CACHE_HOME",
        "xdg",
        "every tool that follows the XDG base directories (pip, uv, pre-commit, yarn 1, pnpm's metadata, sccache, ccache 4, go-build, node-gyp, …) when its own variable is not set",
    ),
    tool("go", "GOCACHE", "go-build", "the build and test cache"),
    tool(
        "go",
        "GOMODCACHE",
        "go-mod",
        "downloaded modules (filled from the host's download cache when the network is denied)",
    ),
    tool(
        "npm",
        "npm_config_cache",
        "npm",
        "the package cache and npm's logs",
    ),
    tool(
        "pnpm",
        "PNPM_HOME",
        "pnpm",
        "the content-addressed store ($PNPM_HOME/store; globally installed binaries found through the host's PATH still run)",
    ),
    tool(
        "yarn",
        "YARN_CACHE_FOLDER",
        "yarn",
        "yarn 1's cache and yarn 2+'s cache folder",
    ),
    tool(
        "yarn",
        "YARN_GLOBAL_FOLDER",
        "yarn-global",
        "yarn 2+'s global folder (global cache, metadata)",
    ),
    tool("pip", "PIP_CACHE_DIR", "pip", "downloaded and built wheels"),
    tool("uv", "UV_CACHE_DIR", "uv", "uv's cache"),
    tool(
        "gradle",
        "GRADLE_USER_HOME",
        "gradle",
        "Gradle's caches, daemons and wrapper distributions (the host's dependency cache is read through GRADLE_RO_DEP_CACHE)",
    ),
    tool("ccache", "CCACHE_DIR", "ccache", "compiled objects"),
    tool("sccache", "SCCACHE_DIR", "sccache", "compiled objects"),
    tool(
        "pre-commit",
        "PRE_COMMIT_HOME",
        "pre-commit",
        "hook environments",
    ),
    tool(
        "maven",
        "MAVEN_OPTS",
        "m2/repository",
        "the local repository, as -Dmaven.repo.local (the host's ~/.m2/repository read as -Dmaven.repo.local.tail, Maven 3.9+)",
    ),
];

/// `CARGO_HOME` with the network denied: locks, the tracking database and crates cordon cannot
/// download, with `registry`, `git`, `bin` and the configuration linked to the host's `~/.cargo`
/// (read-only in the jail), so `cargo build --offline` finds what the host fetched.
const CARGO_DIR: &str = "cargo";
/// `CARGO_HOME` with the network allowed: a registry and git checkouts of its own; only `bin`
/// and the configuration are linked to the host's.
const CARGO_ONLINE_DIR: &str = "cargo-online";

/// The entries of the host's `~/.cargo` that a private `CARGO_HOME` links to: installed binaries
/// and the configuration always, the registry and git checkouts when the network is denied.
/// (`credentials*` never: they are masked.)
const CARGO_LINKS_ALWAYS: &[&str] = &["bin", "config.toml", "config"];
const CARGO_LINKS_OFFLINE: &[&str] = &["registry", "git"];

/// A link in a workspace's cache that points at a host directory (read-only in every jail).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CacheLink {
    /// Where the link is, below the cache root.
    #[serde(serialize_with = "serialize_path")]
    pub link: PathBuf,
    /// The host path it points to.
    #[serde(serialize_with = "serialize_path")]
    pub target: PathBuf,
}

/// A workspace's toolchain cache: where it is, what cordon creates in it, what it sets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheLayout {
    /// The workspace's cache root: `<base>/<key>`.
    #[serde(serialize_with = "serialize_path")]
    pub root: PathBuf,
    /// The variables cordon sets in the jail, each a path below `root` (or a value built from
    /// one), never a value from the host.
    pub vars: BTreeMap<String, String>,
    /// The directories created below `root` before a jail starts (under the Landlock backend a
    /// jail can create nothing directly in a root, so every tool's directory exists first).
    pub dirs: Vec<PathBuf>,
    /// The links created below `root` when missing.
    pub links: Vec<CacheLink>,
    /// The workspace's private home: `<base>/<key>.home`, beside the cache root, not in it (the
    /// jail writes the cache root, so it could replace a directory there with a link; it
    /// cannot touch the base). Bound writable at the home's path under bubblewrap, named by
    /// `HOME` where the backend has no mount namespace (docs/home.md).
    #[serde(serialize_with = "serialize_path")]
    pub home: PathBuf,
}

impl CacheLayout {
    /// The directory below cordon's cache directory that holds every workspace's toolchain cache.
    pub const TOOLS_DIR: &'static str = "tools";

    /// The suffix of a workspace's private home beside its cache root (`<key>.home`).
    pub const HOME_SUFFIX: &'static str = ".home";

    /// The default bound on the size of all toolchain caches and private homes together, in
    /// bytes (10 GiB). Checked at launch; the least recently used workspaces' caches and homes
    /// are removed first (docs/caches.md).
    pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024 * 1024;

    /// The name of a workspace's cache below the base: the workspace's last component (for the
    /// reader of `cordon cache show`, made of `[A-Za-z0-9._-]` only, at most 32 characters) and 16
    /// hex digits of SHA-256 over the canonical workspace path (what tells two apart).
    pub fn workspace_key(workspace: &Path) -> String {
        let digest = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let name: String = workspace
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .take(32)
            .collect();
        let name = name.trim_start_matches('.');
        if name.is_empty() {
            hex
        } else {
            format!("{name}-{hex}")
        }
    }

    /// The layout of `workspace`'s cache below `base` (cordon's `tools` directory, absolute), for a
    /// jail with `network`, on a host whose home directory is `home`; `None` when the cache root's
    /// path is not UTF-8, so no variable can name it. Only [`HostFacts::kind`] and
    /// [`HostFacts::canonicalize`] are asked (which host caches exist to link or read).
    pub fn for_workspace(
        base: &Path,
        workspace: &Path,
        home: &Path,
        network: Network,
        host: &dyn HostFacts,
    ) -> Option<CacheLayout> {
        let key = Self::workspace_key(workspace);
        let root = base.join(&key);
        let private_home = base.join(format!("{key}{}", Self::HOME_SUFFIX));
        let text = |p: &Path| p.to_str().map(str::to_owned);
        let mut vars = BTreeMap::new();
        let mut dirs = Vec::new();
        for cache in TOOL_CACHES {
            let dir = root.join(cache.dir);
            let value = text(&dir)?;
            if cache.var == "MAVEN_OPTS" {
                // mvn splits MAVEN_OPTS on blanks: a path holding one cannot be passed this way.
                if value.contains(char::is_whitespace) {
                    continue;
                }
                let mut opts = format!("-Dmaven.repo.local={value}");
                let host_repo = home.join(".m2/repository");
                if network == Network::Denied
                    && host.resolved_kind(&host_repo) == Some(EntryKind::Dir)
                    && let Some(tail) = host_repo.to_str()
                    && !tail.contains(char::is_whitespace)
                {
                    opts.push_str(&format!(" -Dmaven.repo.local.tail={tail}"));
                }
                vars.insert(cache.var.to_owned(), opts);
            } else {
                vars.insert(cache.var.to_owned(), value);
            }
            dirs.push(dir);
        }

        // Go: with the network denied, the host's module download cache is a file proxy, and
        // nothing else is tried (a denied network fails fast instead of timing out).
        let go_download = home.join("go/pkg/mod/cache/download");
        if network == Network::Denied && host.resolved_kind(&go_download) == Some(EntryKind::Dir) {
            vars.insert(
                "GOPROXY".into(),
                format!("file://{},off", text(&go_download)?),
            );
        }
        // Gradle reads a read-only dependency cache before downloading.
        let gradle_caches = home.join(".gradle/caches");
        if host.resolved_kind(&gradle_caches) == Some(EntryKind::Dir) {
            vars.insert("GRADLE_RO_DEP_CACHE".into(), text(&gradle_caches)?);
        }

        let (cargo_dir, offline) = match network {
            Network::Denied => (CARGO_DIR, true),
            // Through the proxy the registry is reachable: cargo fetches into a registry of its own.
            Network::Allowed | Network::Proxy => (CARGO_ONLINE_DIR, false),
        };
        let cargo_home = root.join(cargo_dir);
        vars.insert("CARGO_HOME".into(), text(&cargo_home)?);
        dirs.push(cargo_home.clone());
        let host_cargo = home.join(".cargo");
        let mut links = Vec::new();
        let linked =
            CARGO_LINKS_ALWAYS
                .iter()
                .chain(if offline { CARGO_LINKS_OFFLINE } else { &[] });
        for name in linked {
            let target = host_cargo.join(name);
            if host.resolved_kind(&target).is_some() {
                links.push(CacheLink {
                    link: cargo_home.join(name),
                    target,
                });
            }
        }
        dirs.sort();
        dirs.dedup();
        links.sort();
        Some(CacheLayout {
            root,
            vars,
            dirs,
            links,
            home: private_home,
        })
    }
}

/// The workspace's private toolchain cache: in the host posture only (the minimal posture is
/// for untrusted documents and servers, which get no state that outlives a run), when its root
/// exists as a directory (not a link), and only when it is a root the path rules accept and lies
/// neither inside the workspace nor around it. Otherwise none, and tools see a read-only home.
/// With it, the workspace's private home when the real home is hidden (`home_in_root`: the
/// caller granted a root holding the home, which then stays as it is).
pub(super) fn resolve_caches(
    policy: &Policy,
    invocation: &Invocation,
    host: &dyn HostFacts,
    home: &Path,
    workspace: &Path,
    masks: &[CredentialMask],
    home_in_root: bool,
) -> Option<CachePlan> {
    if policy.posture() != Posture::Host {
        return None;
    }
    let base = invocation.caches.as_ref().filter(|b| b.is_absolute())?;
    let base = host.canonicalize(base)?;
    let wanted = CacheLayout::for_workspace(&base, workspace, home, policy.network(), host)?;
    if host.kind(&wanted.root) != Some(EntryKind::Dir) {
        return None;
    }
    let root = check_own_root(host, &wanted.root, home, workspace, masks).ok()?;
    if root != wanted.root || is_within(&root, workspace) || is_within(workspace, &root) {
        return None;
    }
    // The private home: a directory (not a link) the path rules accept, outside the workspace
    // and not around it, when the plan hides the real home.
    let home_root = (policy.home() == HomeMode::Hidden && !home_in_root)
        .then_some(&wanted.home)
        .filter(|h| host.kind(h) == Some(EntryKind::Dir))
        .and_then(|h| check_own_root(host, h, home, workspace, masks).ok())
        .filter(|h| *h == wanted.home && !is_within(h, workspace) && !is_within(workspace, h));
    Some(CachePlan {
        root,
        layout: wanted,
        home: home_root,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::plan::host::FakeHost;

    #[test]
    fn keys_are_stable_readable_and_distinct() {
        let a = CacheLayout::workspace_key(Path::new("/home/u/proj"));
        assert_eq!(a, CacheLayout::workspace_key(Path::new("/home/u/proj")));
        assert!(a.starts_with("proj-") && a.len() == 5 + 16, "{a}");
        assert_ne!(a, CacheLayout::workspace_key(Path::new("/home/v/proj")));
        let odd = CacheLayout::workspace_key(Path::new("/w/..my proj$(x)"));
        assert!(odd.starts_with("my_proj__x_-"), "{odd}");
        assert_eq!(CacheLayout::workspace_key(Path::new("/")).len(), 16);
    }

    #[test]
    fn every_variable_points_below_the_workspace_root() {
        let host = FakeHost::typical();
        let base = Path::new("/home/u/.cache/cordon/tools");
        let l = CacheLayout::for_workspace(
            base,
            Path::new("/home/u/proj"),
            Path::new("/home/u"),
            Network::Denied,
            &host,
        )
        .unwrap();
        assert!(l.root.starts_with(base));
        for var in [
            "XDG_CACHE_HOME",
            "GOCACHE",
            "GOMODCACHE",
            "npm_config_cache",
            "PNPM_HOME",
            "YARN_CACHE_FOLDER",
            "PIP_CACHE_DIR",
            "UV_CACHE_DIR",
            "CARGO_HOME",
            "GRADLE_USER_HOME",
            "CCACHE_DIR",
            "SCCACHE_DIR",
            "PRE_COMMIT_HOME",
        ] {
            let v = l.vars.get(var).expect(var);
            assert!(Path::new(v).starts_with(&l.root), "{var}={v}");
            assert!(l.dirs.contains(&PathBuf::from(v)), "{var} not created");
        }
        assert!(
            l.vars["MAVEN_OPTS"].starts_with("-Dmaven.repo.local=/home/u/.cache/cordon/tools/")
        );
        assert_eq!(
            l.vars["CARGO_HOME"],
            l.root.join(CARGO_DIR).to_str().unwrap()
        );
    }

    #[test]
    fn cargo_reads_the_hosts_registry_offline_and_has_its_own_online() {
        let host = FakeHost::typical()
            .dir("/home/u/.cargo/registry")
            .dir("/home/u/.cargo/bin")
            .file("/home/u/.cargo/config.toml", "");
        let ws = Path::new("/home/u/proj");
        let base = Path::new("/c");
        let home = Path::new("/home/u");
        let off = CacheLayout::for_workspace(base, ws, home, Network::Denied, &host).unwrap();
        let linked: Vec<&Path> = off.links.iter().map(|l| l.target.as_path()).collect();
        assert_eq!(
            linked,
            [
                Path::new("/home/u/.cargo/bin"),
                Path::new("/home/u/.cargo/config.toml"),
                Path::new("/home/u/.cargo/registry"),
            ]
        );
        let on = CacheLayout::for_workspace(base, ws, home, Network::Allowed, &host).unwrap();
        assert!(on.vars["CARGO_HOME"].ends_with(CARGO_ONLINE_DIR));
        assert!(!on.links.iter().any(|l| l.target.ends_with("registry")));
    }

    #[test]
    fn go_reads_the_hosts_download_cache_only_offline() {
        let host = FakeHost::typical().dir("/home/u/go/pkg/mod/cache/download");
        let ws = Path::new("/home/u/proj");
        let home = Path::new("/home/u");
        let off =
            CacheLayout::for_workspace(Path::new("/c"), ws, home, Network::Denied, &host).unwrap();
        assert_eq!(
            off.vars["GOPROXY"],
            "file:///home/u/go/pkg/mod/cache/download,off"
        );
        let on =
            CacheLayout::for_workspace(Path::new("/c"), ws, home, Network::Allowed, &host).unwrap();
        assert!(!on.vars.contains_key("GOPROXY"));
    }

    #[test]
    fn a_base_that_is_not_utf8_gives_no_caches() {
        use std::os::unix::ffi::OsStrExt;
        let base = Path::new(std::ffi::OsStr::from_bytes(b"/c/\xff"));
        let none = CacheLayout::for_workspace(
            base,
            Path::new("/home/u/proj"),
            Path::new("/home/u"),
            Network::Denied,
            &FakeHost::typical(),
        );
        assert_eq!(none, None);
    }
}
