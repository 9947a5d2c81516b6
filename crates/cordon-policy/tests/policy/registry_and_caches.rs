//! What resolving costs the host (one `readdir` per root for the auto-run registry), and the
//! workspace's private toolchain cache in a plan.

use std::path::{Path, PathBuf};

use cordon_policy::{
    AutoRun, CacheLayout, EntryKind, FakeHost, Invocation, Plan, Policy, PolicyBuilder, Profile,
};

use super::shell;

/// Counts the host calls whose path lies in the workspace.
struct Counting<'a> {
    host: &'a FakeHost,
    work: PathBuf,
    calls: std::cell::Cell<usize>,
}

impl Counting<'_> {
    fn note(&self, p: &Path) {
        if p.starts_with(&self.work) {
            self.calls.set(self.calls.get() + 1);
        }
    }
}

impl cordon_policy::HostFacts for Counting<'_> {
    fn home_dir(&self) -> Option<PathBuf> {
        self.host.home_dir()
    }
    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        self.note(path);
        self.host.canonicalize(path)
    }
    fn kind(&self, path: &Path) -> Option<EntryKind> {
        self.note(path);
        self.host.kind(path)
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        self.note(path);
        self.host.read_link(path)
    }
    fn read_small_text(&self, path: &Path) -> Option<String> {
        self.note(path);
        self.host.read_small_text(path)
    }
    fn list_dir(&self, path: &Path) -> Option<Vec<std::ffi::OsString>> {
        self.note(path);
        self.host.list_dir(path)
    }
    fn list_dir_kinds(&self, path: &Path) -> Option<Vec<(std::ffi::OsString, EntryKind)>> {
        self.note(path);
        self.host.list_dir_kinds(path)
    }
    fn read_head(&self, path: &Path, max: usize) -> Option<Vec<u8>> {
        self.note(path);
        self.host.read_head(path, max)
    }
}

#[test]
fn the_registry_costs_one_readdir_per_root_not_one_call_per_entry() {
    use cordon_policy::HostFacts as _;
    let host = FakeHost::typical().file("/home/u/proj/.git/HEAD", "ref: refs/heads/main\n");
    let counting = Counting {
        host: &host,
        work: PathBuf::from("/home/u/proj"),
        calls: std::cell::Cell::new(0),
    };
    let plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at("/home/u/proj"),
        &counting,
    )
    .unwrap();
    let resolved = counting.calls.get();
    let _ = plan.guard(&counting);
    let guarded = counting.calls.get() - resolved;
    let registry = AutoRun::REGISTRY.len();
    println!("workspace calls: resolve {resolved}, guard {guarded}; registry {registry} entries");
    // Every root-level entry of the registry is missing here, yet the calls stay well below
    // one per entry: the names come from one readdir of the root.
    assert!(
        resolved + guarded < registry,
        "{resolved} calls to resolve and {guarded} to guard for a registry of {registry} entries"
    );
    assert!(counting.home_dir().is_some());
}

#[test]
fn the_workspace_cache_is_a_writable_root_of_cordons_with_its_variables() {
    let base = "/home/u/.cache/cordon/tools";
    let key = CacheLayout::workspace_key(Path::new("/home/u/proj"));
    let root = PathBuf::from(base).join(&key);
    let host = FakeHost::typical().dir(root.to_str().unwrap());
    let inv = Invocation::at("/home/u/proj").with_caches(base);
    let plan = Plan::resolve(&shell(), &inv, &host).unwrap();
    assert!(plan.writable.contains(&root), "{:?}", plan.writable);
    let caches = plan.caches.as_ref().unwrap();
    assert_eq!(caches.root, root);
    assert_eq!(
        plan.env.owned.get("GOCACHE").map(String::as_str),
        Some(root.join("go-build").to_str().unwrap())
    );
    // Nothing below cordon's cache is protected: the host runs nothing from it.
    assert!(!plan.protected.iter().any(|p| p.path.starts_with(&root)));
    assert!(!plan.skipped.iter().any(|s| s.path.starts_with(&root)));
    // The host's own caches and cordon's own state stay outside the writable set.
    for p in [
        "/home/u/.cache",
        "/home/u/.cache/cordon",
        "/home/u/.cache/go-build",
    ] {
        assert!(
            !plan.writable.iter().any(|w| Path::new(p).starts_with(w)),
            "{p} writable"
        );
    }
}

#[test]
fn no_cache_without_its_root_in_the_minimal_posture_or_through_a_link() {
    let base = "/home/u/.cache/cordon/tools";
    let key = CacheLayout::workspace_key(Path::new("/home/u/proj"));
    let root = format!("{base}/{key}");
    let inv = Invocation::at("/home/u/proj").with_caches(base);
    // Not created yet (explain creates nothing): no cache, no variables.
    let plan = Plan::resolve(&shell(), &inv, &FakeHost::typical().dir(base)).unwrap();
    assert!(plan.caches.is_none() && plan.env.owned.is_empty());
    // A link in its place is not followed.
    let linked = FakeHost::typical()
        .dir("/home/u/other")
        .symlink(&root, "/home/u/other");
    let plan = Plan::resolve(&shell(), &inv, &linked).unwrap();
    assert!(plan.caches.is_none());
    assert!(!plan.writable.contains(&PathBuf::from("/home/u/other")));
    // The minimal posture keeps no state between runs.
    let host = FakeHost::typical().dir(&root);
    let minimal = PolicyBuilder::new(Profile::DocumentParser).build();
    let plan = Plan::resolve(&minimal, &inv, &host).unwrap();
    assert!(plan.caches.is_none());
}
