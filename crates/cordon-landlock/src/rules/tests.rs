use std::path::{Path, PathBuf};

use cordon_policy::{
    EntryKind, FakeHost, Invocation, PathSpec, Plan, Policy, PolicyBuilder, Posture, Profile,
    Source,
};
use proptest::prelude::*;

use super::*;
use crate::lister::{DirEntry, FakeLister};

/// The tree of `FakeHost::typical()`, plus what a listing shows beyond the plan's paths.
fn tree() -> FakeLister {
    FakeLister::new()
        .dir("/usr/bin")
        .dir("/usr/lib")
        .dir("/usr/lib64")
        .symlink("/bin")
        .symlink("/lib")
        .symlink("/lib64")
        .dir("/etc/ssl")
        .dir("/etc/alternatives")
        .file("/etc/passwd")
        .file("/etc/shadow")
        .file("/etc/ld.so.cache")
        .symlink("/etc/resolv.conf")
        .file("/run/systemd/resolve/stub-resolv.conf")
        .dir("/tmp")
        .dir("/var/tmp")
        .dir("/var/lib")
        .dir("/proc")
        .file("/dev/null")
        .file("/dev/tty")
        .dir("/home/u/.ssh")
        .file("/home/u/.netrc")
        .dir("/home/u/.aws")
        .file("/home/u/.cargo/credentials.toml")
        .dir("/home/u/.cargo/bin")
        .dir("/home/u/.rustup")
        .file("/home/u/.bashrc")
        .symlink("/home/u/ssh-link")
        .dir("/home/u/proj/.git/hooks")
        .file("/home/u/proj/.git/config")
        .dir("/home/u/proj/.git/objects")
        .file("/home/u/proj/.git/HEAD")
        .dir("/home/u/proj/src")
        .file("/home/u/proj/README.md")
}

fn plan_with(policy: &Policy) -> Plan {
    Plan::resolve(
        policy,
        &Invocation::at("/home/u/proj"),
        &FakeHost::typical(),
    )
    .unwrap()
}

/// The shell profile with the home visible (`home = "visible"`): the masks below the home are
/// in the plan, so these tests exercise their piecewise grants.
fn shell_plan() -> Plan {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_home(cordon_policy::HomeMode::Visible, Source::Caller);
    plan_with(&b.build())
}

#[test]
fn host_alone_hides_the_home_but_for_its_vetted_trees_and_the_workspace() {
    let plan = plan_with(&Policy::for_profile(Profile::Shell));
    let rules = Rules::from_plan(&plan, &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    for hidden in [
        "/home/u/.bashrc",
        "/home/u/.ssh/id_ed25519",
        "/home/u/.aws/credentials",
        "/home/u/.config/some-tool/token",
        "/home/u/.cargo/credentials.toml",
    ] {
        assert_eq!(
            at(&rules, hidden) & Access::READ_FILE,
            Access::NONE,
            "{hidden}"
        );
    }
    assert_eq!(
        rule(&rules, "/home/u"),
        None,
        "the home itself: not even listable"
    );
    assert_eq!(rule(&rules, "/home/u/.rustup"), Some(Access::READ));
    assert_eq!(rule(&rules, "/home/u/.cargo/bin"), Some(Access::READ));
    assert!(
        at(&rules, "/home/u/proj/src/main.rs").contains(Access::READ_FILE | Access::WRITE_FILE)
    );
    assert_eq!(rule(&rules, "/usr"), Some(Access::READ));
}

fn minimal_plan() -> Plan {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_posture(Posture::Minimal, Source::Caller);
    plan_with(&b.build())
}

fn rule(rules: &Rules, path: &str) -> Option<Access> {
    rules
        .paths
        .iter()
        .find(|r| r.path == Path::new(path))
        .map(|r| r.access)
}

fn at(rules: &Rules, path: &str) -> Access {
    rules.effective(Path::new(path))
}

#[test]
fn host_alone_reads_everything_but_masks_hidden_dirs_and_dev() {
    let rules = Rules::from_plan(&shell_plan(), &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    // Ancestors of masks are listable only; their other entries are readable whole.
    assert_eq!(rule(&rules, "/"), Some(Access::READ_DIR));
    assert_eq!(rule(&rules, "/etc"), Some(Access::READ_DIR));
    assert_eq!(rule(&rules, "/home/u"), Some(Access::READ_DIR));
    assert_eq!(rule(&rules, "/usr"), Some(Access::READ));
    assert_eq!(rule(&rules, "/etc/passwd"), Some(Access::READ));
    assert_eq!(rule(&rules, "/home/u/.bashrc"), Some(Access::READ));
    assert_eq!(rule(&rules, "/home/u/.cargo/bin"), Some(Access::READ));
    // Masks: nothing but the ancestors' listing right reaches them.
    for masked in [
        "/etc/shadow",
        "/home/u/.ssh",
        "/home/u/.ssh/id_ed25519",
        "/home/u/.netrc",
        "/home/u/.aws/credentials",
        "/home/u/.cargo/credentials.toml",
    ] {
        assert!(at(&rules, masked).contains(Access::READ_DIR), "{masked}");
        assert_eq!(
            at(&rules, masked) & !Access::READ_DIR,
            Access::NONE,
            "{masked}"
        );
    }
    // A symlink entry gets no rule of its own: its target's place decides.
    assert_eq!(rule(&rules, "/home/u/ssh-link"), None);
    assert_eq!(rule(&rules, "/bin"), None);
    // Alone, the private directories and /dev are the host's: hidden, except what is granted.
    assert_eq!(at(&rules, "/tmp/other-user-file"), Access::READ_DIR);
    assert_eq!(at(&rules, "/run/user/1000/bus"), Access::READ_DIR);
    assert_eq!(at(&rules, "/dev/sda"), Access::READ_DIR);
    assert_eq!(rule(&rules, "/var/lib"), Some(Access::READ));
    assert_eq!(at(&rules, "/tmp/cordon-1/x"), Access::READ | Access::WRITE);
    assert_eq!(rule(&rules, "/dev/null"), Some(Access::DEVICE));
    assert_eq!(rule(&rules, "/dev/tty"), Some(Access::DEVICE));
    assert_eq!(
        rules.must_exist,
        vec![
            PathBuf::from("/home/u/proj"),
            PathBuf::from("/tmp/cordon-1")
        ]
    );
    assert!(rules.deny_tcp && rules.scope_signals && rules.scope_abstract_unix);
}

#[test]
fn piecewise_protection_writes_existing_entries_and_nothing_directly_in_ancestors() {
    let rules = Rules::from_plan(&shell_plan(), &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    let rw = Access::READ | Access::WRITE;
    // Entries that existed: fully writable.
    assert_eq!(at(&rules, "/home/u/proj/src/main.rs"), rw);
    assert_eq!(at(&rules, "/home/u/proj/README.md"), rw);
    assert_eq!(at(&rules, "/home/u/proj/.git/objects/ab/cdef"), rw);
    assert_eq!(at(&rules, "/home/u/proj/.git/HEAD"), rw);
    // Protected paths and everything in them: readable, never writable.
    for p in [
        "/home/u/proj/.git/hooks",
        "/home/u/proj/.git/hooks/pre-commit",
        "/home/u/proj/.git/config",
    ] {
        assert_eq!(at(&rules, p), Access::READ, "{p}");
    }
    // The ancestors, and so anything created directly in them later: read only.
    for p in [
        "/home/u/proj",
        "/home/u/proj/new-file",
        "/home/u/proj/.git",
        "/home/u/proj/.git/index.lock",
    ] {
        assert_eq!(at(&rules, p), Access::READ, "{p}");
    }
    assert_eq!(
        rule(&rules, "/home/u/proj"),
        Some(Access::READ),
        "an ancestor of protected paths keeps no write right"
    );
}

#[test]
fn inside_bubblewrap_leaves_protected_paths_to_mounts_and_grants_private_dirs() {
    let rules = Rules::from_plan(&shell_plan(), &Options::inside_bubblewrap(), &tree()).unwrap();
    let rw = Access::READ | Access::WRITE;
    assert_eq!(rule(&rules, "/home/u/proj"), Some(rw));
    assert_eq!(at(&rules, "/home/u/proj/.git/index.lock"), rw);
    assert_eq!(at(&rules, "/tmp/anything"), rw);
    assert_eq!(at(&rules, "/run/x"), rw);
    assert_eq!(at(&rules, "/dev/shm/sem.x"), rw);
    // bubblewrap's own devpts: the jail's terminals, usable.
    assert_eq!(at(&rules, "/dev/pts/0"), Access::READ | Access::DEVICE);
    assert_eq!(at(&rules, "/dev/tty"), Access::READ | Access::DEVICE);
    // Masks stay excluded: bubblewrap hides them, Landlock refuses them as well.
    assert_eq!(at(&rules, "/home/u/.ssh/id"), Access::READ_DIR);

    let mut strict = Options::inside_bubblewrap();
    strict.protected = ProtectedPaths::Piecewise;
    let rules = Rules::from_plan(&shell_plan(), &strict, &tree()).unwrap();
    assert_eq!(at(&rules, "/home/u/proj/.git/hooks/x"), Access::READ);
    assert_eq!(at(&rules, "/home/u/proj/.git/index.lock"), Access::READ);
}

#[test]
fn protected_paths_left_to_mounts_are_refused_without_bubblewrap() {
    let mut opts = Options::alone("/tmp/cordon-1");
    opts.protected = ProtectedPaths::LeftToMounts;
    let err = Rules::from_plan(&shell_plan(), &opts, &tree()).unwrap_err();
    assert!(matches!(err, LandlockError::ProtectedUnheld { .. }));
    assert!(
        err.to_string().contains("/home/u/proj/.git/config"),
        "{err}"
    );
}

#[test]
fn minimal_posture_reads_only_the_vetted_trees_the_roots_and_proc() {
    let plan = minimal_plan();
    let rules = Rules::from_plan(&plan, &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    assert_eq!(rule(&rules, "/"), None);
    assert_eq!(rule(&rules, "/usr"), Some(Access::READ));
    assert_eq!(at(&rules, "/usr/bin/ls"), Access::READ);
    assert_eq!(rule(&rules, "/etc/passwd"), Some(Access::READ));
    assert_eq!(rule(&rules, "/proc"), Some(Access::READ));
    // The toolchain tree below home is split around the masked credentials file.
    assert_eq!(rule(&rules, "/home/u/.cargo"), Some(Access::READ_DIR));
    assert_eq!(rule(&rules, "/home/u/.cargo/bin"), Some(Access::READ));
    for hidden in [
        "/etc/shadow",
        "/home/u/.bashrc",
        "/home/u/.ssh/id",
        "/home/u/.cargo/credentials.toml",
        "/var/lib/x",
        "/tmp/x",
        "/dev/sda",
    ] {
        assert_eq!(
            at(&rules, hidden) & !Access::READ_DIR,
            Access::NONE,
            "{hidden}"
        );
    }
    assert_eq!(
        at(&rules, "/home/u/proj/src/a"),
        Access::READ | Access::WRITE
    );
    for p in &plan.read_only {
        assert!(at(&rules, &p.dest.to_string_lossy()).contains(Access::READ_DIR));
    }

    // Inside bubblewrap the private home is a fresh tmpfs: readable and writable, except the
    // read-only toolchain trees bound into it when Landlock holds them too.
    let mut strict = Options::inside_bubblewrap();
    strict.protected = ProtectedPaths::Piecewise;
    let rules = Rules::from_plan(&plan, &strict, &tree()).unwrap();
    assert_eq!(at(&rules, "/home/u/.cargo/bin/cargo"), Access::READ);
    assert_eq!(at(&rules, "/home/u/.rustup/x"), Access::READ);
    assert_eq!(at(&rules, "/home/u/.bashrc"), Access::READ | Access::WRITE);
    assert_eq!(at(&rules, "/dev/pts/0"), Access::READ | Access::DEVICE);
}

#[test]
fn a_mask_inside_the_workspace_splits_it_for_reads_and_writes() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_mask(PathSpec::parse("src").unwrap(), Source::Caller)
        .unwrap();
    // With the home hidden, the workspace lies in the private home, which the second wall grants
    // whole (like a workspace under the private /tmp): the mask is bubblewrap's alone there
    // (docs/limits.md). With the home visible the second wall holds it too.
    let hidden = plan_with(&b.clone().build());
    let rules = Rules::from_plan(&hidden, &Options::inside_bubblewrap(), &tree()).unwrap();
    assert!(at(&rules, "/home/u/proj/src/main.rs").contains(Access::READ_FILE));
    b.set_home(cordon_policy::HomeMode::Visible, Source::Caller);
    let plan = plan_with(&b.build());
    let rules = Rules::from_plan(&plan, &Options::inside_bubblewrap(), &tree()).unwrap();
    assert_eq!(at(&rules, "/home/u/proj/src/main.rs"), Access::READ_DIR);
    assert_eq!(
        at(&rules, "/home/u/proj/README.md"),
        Access::READ | Access::WRITE
    );
    // A new file directly in the workspace is neither readable nor writable: the documented cost.
    assert_eq!(at(&rules, "/home/u/proj/new-file"), Access::READ_DIR);
}

#[test]
fn network_allowed_does_not_deny_tcp() {
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_network(cordon_policy::Network::Allowed, Source::Caller);
    let rules = Rules::from_plan(&plan_with(&b.build()), &Options::alone("/t"), &tree()).unwrap();
    assert!(!rules.deny_tcp);
}

#[test]
fn listing_failures_and_bad_names_are_errors_not_silent_grants() {
    struct Failing;
    impl Lister for Failing {
        fn list(&self, _: &Path) -> std::io::Result<Vec<DirEntry>> {
            Err(std::io::Error::from_raw_os_error(13))
        }
    }
    let err = Rules::from_plan(&shell_plan(), &Options::alone("/t"), &Failing).unwrap_err();
    assert!(
        matches!(err, LandlockError::List { ref dir, .. } if dir == "/"),
        "{err}"
    );

    struct Hostile(&'static str);
    impl Lister for Hostile {
        fn list(&self, _: &Path) -> std::io::Result<Vec<DirEntry>> {
            Ok(vec![DirEntry {
                name: self.0.into(),
                kind: EntryKind::Dir,
            }])
        }
    }
    for name in ["..", ".", "a/b", "", "/", "a/"] {
        let err = Rules::from_plan(&shell_plan(), &Options::alone("/t"), &Hostile(name));
        assert!(
            matches!(err, Err(LandlockError::BadEntry { .. })),
            "{name:?}: {err:?}"
        );
    }
}

#[test]
fn the_rendering_lists_one_rule_per_line() {
    let rules = Rules::from_plan(&shell_plan(), &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    let text = rules.to_string();
    assert!(text.starts_with("read_dir\t/\n"), "{text}");
    assert!(
        text.contains("\nexecute|read_file|read_dir\t/usr\n"),
        "{text}"
    );
    assert!(text.contains("\nmust exist\t/tmp/cordon-1\n"), "{text}");
    assert!(
        text.ends_with("abstract unix sockets outside: denied\n"),
        "{text}"
    );
    assert_eq!(text.lines().count(), rules.paths.len() + 2 + 3);
}

// The piecewise grant against a model, over random trees.

fn random_tree() -> impl Strategy<Value = (FakeLister, Vec<(PathBuf, EntryKind)>)> {
    let kind = prop_oneof![
        3 => Just(EntryKind::Dir),
        2 => Just(EntryKind::File),
        1 => Just(EntryKind::Symlink),
    ];
    proptest::collection::vec((proptest::collection::vec("[abc]", 1..5), kind), 1..25).prop_map(
        |entries| {
            let mut lister = FakeLister::new();
            for (parts, kind) in entries {
                let path = PathBuf::from(format!("/{}", parts.join("/")));
                lister = lister.with(&path, kind);
            }
            // Only real paths: nothing beneath a file or a symlink.
            let all: Vec<(PathBuf, EntryKind)> =
                lister.paths().map(|(p, k)| (p.to_path_buf(), k)).collect();
            let real: Vec<(PathBuf, EntryKind)> = all
                .iter()
                .filter(|(p, _)| {
                    p.ancestors()
                        .skip(1)
                        .all(|a| all.iter().any(|(q, k)| q == a && *k == EntryKind::Dir))
                })
                .cloned()
                .collect();
            let mut clean = FakeLister::new();
            for (p, k) in &real {
                clean = clean.with(p, *k);
            }
            (clean, real)
        },
    )
}

proptest! {
    #[test]
    fn piecewise_grants_give_exactly_the_model_outside_ancestors(
        (lister, paths) in random_tree(),
        picks in proptest::collection::vec(any::<proptest::sample::Index>(), 1..4),
        zone_pick in any::<proptest::sample::Index>(),
    ) {
        let dirs: Vec<&PathBuf> = paths
            .iter()
            .filter(|(_, k)| *k == EntryKind::Dir)
            .map(|(p, _)| p)
            .collect();
        let zone = dirs[zone_pick.index(dirs.len())].clone();
        let excluded: Vec<PathBuf> = picks
            .iter()
            .map(|i| paths[i.index(paths.len())].0.clone())
            .filter(|p| p != Path::new("/"))
            .collect();
        let (access, ancestor) = (Access::READ | Access::WRITE, Access::READ_DIR);
        let mut g = Grants { lister: &lister, out: BTreeMap::new() };
        g.grant(&zone, access, ancestor, &excluded).unwrap();
        let rules = Rules {
            paths: g.out.into_iter().map(|(path, access)| PathRule { path, access }).collect(),
            ..Rules::default()
        };

        for (p, kind) in &paths {
            // Landlock never checks a symlink's own rights (opening it reaches its target).
            if *kind == EntryKind::Symlink {
                continue;
            }
            let got = rules.effective(p);
            let inside_excluded = excluded.iter().any(|e| p.starts_with(e));
            let holds_excluded = excluded.iter().any(|e| e.starts_with(p) && e != p);
            if !p.starts_with(&zone) && !zone.starts_with(p) {
                prop_assert_eq!(got, Access::NONE, "{:?} outside the zone", p);
            } else if zone.starts_with(p) && p != &zone {
                prop_assert_eq!(got, Access::NONE, "{:?} above the zone", p);
            } else if inside_excluded {
                prop_assert!(ancestor.contains(got), "{:?} excluded got {}", p, got);
            } else if holds_excluded {
                prop_assert_eq!(got, ancestor, "{:?} ancestor", p);
                let newcomer = p.join("created-later");
                prop_assert_eq!(rules.effective(&newcomer), ancestor);
            } else {
                prop_assert_eq!(got, access, "{:?} granted", p);
            }
        }
    }
}

#[test]
fn excluded_lookups_agree_with_a_pass_over_every_path() {
    let paths: Vec<PathBuf> = [
        "/a/b", "/a/b c", "/a/bc", "/a/b/c/d", "/a/b-", "/z", "/a/b/c/e", "/m/n/o",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let mut sorted: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    sorted.sort_unstable();
    let excluded = Excluded(sorted);
    for probe in [
        "/",
        "/a",
        "/a/b",
        "/a/b/c",
        "/a/b/c/d/x",
        "/a/b c",
        "/a/b co",
        "/a/bc/x",
        "/a/b-/y",
        "/m",
        "/m/n",
        "/m/n/o/p",
        "/m/nn",
        "/y",
        "/z/z",
        "/a/a",
    ] {
        let p = Path::new(probe);
        assert_eq!(
            excluded.covers(p),
            paths.iter().any(|e| p.starts_with(e)),
            "covers {probe}"
        );
        assert_eq!(
            excluded.any_beneath(p),
            paths.iter().any(|e| e.starts_with(p)),
            "any_beneath {probe}"
        );
    }
}

#[test]
fn an_executable_in_a_hidden_directory_gets_read_and_execute_on_the_file_alone() {
    let stage = "/tmp/unpacked/bin/cordon";
    let opts = Options::alone("/tmp/cordon-1").with_executable(stage);
    let rules = Rules::from_plan(&shell_plan(), &opts, &tree()).unwrap();
    assert_eq!(
        rule(&rules, stage),
        Some(Access::EXECUTE | Access::READ_FILE)
    );
    // Nothing of its directory, nor a sibling, nor the rest of /tmp.
    assert_eq!(at(&rules, "/tmp/unpacked/bin"), Access::READ_DIR);
    assert_eq!(at(&rules, "/tmp/unpacked/bin/secret"), Access::READ_DIR);
    assert_eq!(at(&rules, "/tmp/other-user-file"), Access::READ_DIR);
    // Never writable, and it must exist.
    assert_eq!(at(&rules, stage) & Access::WRITE, Access::NONE);
    assert!(rules.must_exist.contains(&PathBuf::from(stage)));

    // In the minimal posture too, where nothing outside the vetted trees is readable.
    let rules = Rules::from_plan(&minimal_plan(), &opts, &tree()).unwrap();
    assert_eq!(
        rule(&rules, stage),
        Some(Access::EXECUTE | Access::READ_FILE)
    );
    assert_eq!(at(&rules, "/tmp/unpacked/bin/secret"), Access::NONE);
}

#[test]
fn an_executable_the_rules_already_run_adds_no_rule() {
    let plain = Rules::from_plan(&shell_plan(), &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    let opts = Options::alone("/tmp/cordon-1").with_executable("/usr/bin/cordon");
    let rules = Rules::from_plan(&shell_plan(), &opts, &tree()).unwrap();
    assert_eq!(rules, plain);
}

#[test]
fn an_executable_inside_a_mask_is_refused() {
    let opts = Options::alone("/tmp/cordon-1").with_executable("/home/u/.ssh/cordon");
    let err = Rules::from_plan(&shell_plan(), &opts, &tree()).unwrap_err();
    assert!(
        matches!(err, LandlockError::ExecutableMasked { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("/home/u/.ssh/cordon"), "{err}");
}

#[test]
fn private_terminals_are_usable_inside_bubblewrap_and_never_alone() {
    let inside = Rules::from_plan(&shell_plan(), &Options::inside_bubblewrap(), &tree()).unwrap();
    assert_eq!(rule(&inside, "/dev/ptmx"), Some(Access::DEVICE));
    assert_eq!(rule(&inside, "/dev/pts"), Some(Access::DEVICE));
    let alone = Rules::from_plan(&shell_plan(), &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    assert_eq!(rule(&alone, "/dev/ptmx"), None);
    assert_eq!(at(&alone, "/dev/pts/0") & Access::DEVICE, Access::NONE);
}

#[test]
fn tcp_is_refused_alone_and_left_to_the_jails_own_loopback_inside_bubblewrap() {
    let alone = Rules::from_plan(&shell_plan(), &Options::alone("/tmp/cordon-1"), &tree()).unwrap();
    assert!(alone.deny_tcp);
    let inside = Rules::from_plan(&shell_plan(), &Options::inside_bubblewrap(), &tree()).unwrap();
    assert!(!inside.deny_tcp);
}

#[test]
fn a_root_holding_the_workspace_keeps_the_workspace_protected_piecewise() {
    // `--write /home/u/src` with the workspace /home/u/src/proj: the plan lists the workspace's
    // protected paths under the merged root, and the rules follow.
    let host = FakeHost::typical()
        .dir("/home/u/src/proj/.git/hooks")
        .file("/home/u/src/proj/.git/config", "")
        .dir("/home/u/src/lib");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_writable(
        PathSpec::parse("/home/u/src").unwrap(),
        false,
        Source::Caller,
    );
    let plan = Plan::resolve(&b.build(), &Invocation::at("/home/u/src/proj"), &host).unwrap();
    let tree = tree()
        .dir("/home/u/src/proj/.git/hooks")
        .file("/home/u/src/proj/.git/config")
        .dir("/home/u/src/proj/.git/objects")
        .file("/home/u/src/proj/main.rs")
        .dir("/home/u/src/lib");
    let rules = Rules::from_plan(&plan, &Options::alone("/tmp/cordon-1"), &tree).unwrap();
    let rw = Access::READ | Access::WRITE;
    assert_eq!(at(&rules, "/home/u/src/lib/x"), rw);
    assert_eq!(at(&rules, "/home/u/src/proj/main.rs"), rw);
    assert_eq!(at(&rules, "/home/u/src/proj/.git/objects/ab"), rw);
    for p in [
        "/home/u/src/proj/.git/config",
        "/home/u/src/proj/.git/hooks/pre-commit",
        "/home/u/src/proj/.git/new",
        "/home/u/src/proj/new",
        "/home/u/src/new",
    ] {
        assert_eq!(at(&rules, p), Access::READ, "{p}");
    }
}
