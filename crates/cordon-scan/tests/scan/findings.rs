//! Every finding kind on a real temporary tree, glob expansion, and the per-command snapshot.
//! Device nodes need root (CI runs as root); the test fails, saying so, rather than skip.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use cordon_scan::{DenyGlobs, EntryType, FindingKind, ScanError, SessionScan, scan};
use rustix::fs::{CWD, FileType, Mode};

/// A temporary directory holding a workspace `proj` and a sibling `outside`.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    // Canonical, so expected paths compare equal to the scan's.
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    let outside = base.join("outside");
    for d in [
        root.join("src/nested/deeper"),
        root.join("docs"),
        outside.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    for f in [
        "README.md",
        "src/main.rs",
        "src/nested/mod.rs",
        "src/nested/deeper/x.rs",
        "docs/guide.md",
    ] {
        std::fs::write(root.join(f), f).unwrap();
    }
    Tree {
        _dir: dir,
        root,
        outside,
    }
}

fn scan_root(root: &Path) -> SessionScan {
    scan(&[root], &DenyGlobs::none()).unwrap()
}

/// (rule, path) of every finding.
fn rules(s: &SessionScan) -> Vec<(&'static str, PathBuf)> {
    s.findings()
        .iter()
        .map(|f| (f.kind.rule(), f.path.clone()))
        .collect()
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn a_clean_tree_has_no_findings_and_is_counted() {
    let t = tree();
    std::os::unix::fs::symlink("src", t.root.join("link-to-src")).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(rules(&s), []);
    s.refusal().unwrap();
    let c = s.counts();
    assert_eq!(c.roots, 1);
    // proj, src, src/nested, src/nested/deeper, docs
    assert_eq!(c.dirs, 5);
    // 5 files + 4 subdirectories + 1 symlink
    assert_eq!(c.entries, 10);
    assert_eq!(c.files, 5);
    assert_eq!(c.symlinks, 1);
    // Only regular files were stat'ed: directories and the symlink came from d_type.
    assert_eq!(c.stats, 5);
    assert_eq!(s.roots(), std::slice::from_ref(&t.root));
}

#[test]
fn a_fifo_is_a_finding() {
    let t = tree();
    let fifo = t.root.join("src/nested/pipe");
    rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(rules(&s), [("fifo", fifo.clone())]);
    let text = s.refusal().unwrap_err().to_string();
    assert!(text.contains(&fifo.display().to_string()), "{text}");
    assert!(text.contains("rule fifo"), "{text}");
}

#[test]
fn a_bound_unix_socket_is_a_finding() {
    let t = tree();
    let path = t.root.join("docs/agent.sock");
    let _listener = UnixListener::bind(&path).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(rules(&s), [("socket", path.clone())]);
    let f = &s.findings()[0];
    assert_eq!(f.root, t.root);
    assert!(f.to_string().contains("rule socket"), "{f}");
}

#[test]
fn a_hard_link_to_a_file_outside_is_a_finding() {
    let t = tree();
    let target = t.outside.join("id_ed25519");
    std::fs::write(&target, "secret").unwrap();
    let link = t.root.join("src/innocent.txt");
    std::fs::hard_link(&target, &link).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(rules(&s), [("outside-hard-link", link.clone())]);
    assert_eq!(
        s.findings()[0].kind,
        FindingKind::OutsideHardLink { links: 2, seen: 1 }
    );
    let text = s.findings()[0].to_string();
    assert!(
        text.contains(&link.display().to_string()) && text.contains("rule outside-hard-link"),
        "{text}"
    );
}

#[test]
fn hard_links_whose_ends_are_all_inside_are_fine() {
    let t = tree();
    std::fs::hard_link(
        t.root.join("README.md"),
        t.root.join("src/nested/README.md"),
    )
    .unwrap();
    std::fs::hard_link(t.root.join("README.md"), t.root.join("docs/README.md")).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(rules(&s), []);

    // One more link, outside: now every inside link is a finding (3 of 4 seen).
    std::fs::hard_link(t.root.join("README.md"), t.outside.join("README.md")).unwrap();
    let s = scan_root(&t.root);
    let found = rules(&s);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.iter().all(|(rule, _)| *rule == "outside-hard-link"));
    assert_eq!(
        s.findings()[0].kind,
        FindingKind::OutsideHardLink { links: 4, seen: 3 }
    );
}

#[test]
fn a_hard_link_between_two_scanned_roots_is_fine() {
    let t = tree();
    std::fs::hard_link(t.root.join("README.md"), t.outside.join("README.md")).unwrap();
    // Scanned alone, `proj` has an outside link; scanned with `outside`, both ends are in.
    assert_eq!(rules(&scan_root(&t.root)).len(), 1);
    let s = scan(&[&t.root, &t.outside], &DenyGlobs::none()).unwrap();
    assert_eq!(rules(&s), []);
    assert_eq!(s.counts().roots, 2);
}

#[test]
fn device_nodes_are_findings() {
    assert!(
        is_root(),
        "creating device nodes needs root (euid {}); run this test as root, as CI does",
        rustix::process::geteuid().as_raw()
    );
    let t = tree();
    // Created and never opened: /dev/null's and loop0's numbers.
    let chr = t.root.join("src/null");
    let blk = t.root.join("docs/disk");
    let mode = Mode::from_raw_mode(0o600);
    let makedev = rustix::fs::makedev;
    rustix::fs::mknodat(CWD, &chr, FileType::CharacterDevice, mode, makedev(1, 3)).unwrap();
    rustix::fs::mknodat(CWD, &blk, FileType::BlockDevice, mode, makedev(7, 0)).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(
        rules(&s),
        [("block-device", blk.clone()), ("char-device", chr.clone())]
    );
}

#[test]
fn every_finding_is_reported_at_once() {
    let t = tree();
    let fifo = t.root.join("a-fifo");
    rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    let sock = t.root.join("src/s.sock");
    let _listener = UnixListener::bind(&sock).unwrap();
    std::fs::write(t.outside.join("f"), "x").unwrap();
    let link = t.root.join("docs/f");
    std::fs::hard_link(t.outside.join("f"), &link).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(
        rules(&s),
        [
            ("fifo", fifo),
            ("outside-hard-link", link),
            ("socket", sock)
        ]
    );
    match s.refusal() {
        Err(ScanError::Refused(list)) => assert_eq!(list.len(), 3),
        other => panic!("expected a refusal listing 3 findings, got {other:?}"),
    }
}

#[test]
fn symlinks_are_never_followed() {
    let t = tree();
    // Outside: a FIFO and a multiply-linked file. Inside: symlinks to both and to the directory.
    let fifo = t.outside.join("pipe");
    rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    std::fs::write(t.outside.join("a"), "x").unwrap();
    std::fs::hard_link(t.outside.join("a"), t.outside.join("b")).unwrap();
    std::os::unix::fs::symlink(&t.outside, t.root.join("out-dir")).unwrap();
    std::os::unix::fs::symlink(&fifo, t.root.join("out-pipe")).unwrap();
    std::os::unix::fs::symlink(t.outside.join("a"), t.root.join("out-a")).unwrap();
    let s = scan_root(&t.root);
    assert_eq!(rules(&s), []);
    assert_eq!(s.counts().symlinks, 3);
    assert_eq!(s.counts().dirs, 5, "the symlinked directory was entered");
}

#[test]
fn deny_globs_expand_during_the_walk() {
    let t = tree();
    for f in [
        ".env",
        "src/.env",
        "src/nested/deeper/.env",
        "key.pem",
        "src/cert.pem",
    ] {
        std::fs::write(t.root.join(f), "secret").unwrap();
    }
    std::fs::create_dir_all(t.root.join("docs/secrets/inner")).unwrap();
    std::fs::write(t.root.join("docs/secrets/inner/.env"), "x").unwrap();
    std::os::unix::fs::symlink("/nonexistent", t.root.join("src/nested/.env")).unwrap();

    let globs = DenyGlobs::new(["**/.env", "*.pem", "**/secrets"]).unwrap();
    let s = scan(&[&t.root], &globs).unwrap();
    let got: Vec<(PathBuf, &str, EntryType)> = s
        .deny_matches()
        .iter()
        .map(|m| (m.path.clone(), m.pattern.as_str(), m.entry))
        .collect();
    let r = |p: &str| t.root.join(p);
    assert_eq!(
        got,
        [
            (r(".env"), "**/.env", EntryType::File),
            // A matched directory covers what lies below it: its `.env` is not listed again.
            (r("docs/secrets"), "**/secrets", EntryType::Dir),
            (r("key.pem"), "*.pem", EntryType::File),
            (r("src/.env"), "**/.env", EntryType::File),
            (r("src/nested/.env"), "**/.env", EntryType::Symlink),
            (r("src/nested/deeper/.env"), "**/.env", EntryType::File),
        ]
    );
    // `*.pem` does not cross `/`: src/cert.pem is not matched.
    assert!(s.deny_matches().iter().all(|m| m.path != r("src/cert.pem")));
    assert!(s.deny_matches().iter().all(|m| m.root == t.root));
    assert_eq!(rules(&s), []);
}

#[test]
fn the_snapshot_passes_while_the_roots_stand() {
    let t = tree();
    let s = scan_root(&t.root);
    s.snapshot().check().unwrap();
    // Changing what is inside a root is not a replacement.
    std::fs::write(t.root.join("new.txt"), "x").unwrap();
    std::fs::remove_dir_all(t.root.join("docs")).unwrap();
    s.snapshot().check().unwrap();
    assert_eq!(s.snapshot().roots()[0].0, t.root);
}

#[test]
fn the_snapshot_detects_a_replaced_root() {
    let t = tree();
    let s = scan_root(&t.root);
    // Rename the scanned tree away and put another directory in its place.
    let moved = t.outside.join("moved-proj");
    std::fs::rename(&t.root, &moved).unwrap();
    std::fs::create_dir(&t.root).unwrap();
    let err = s.snapshot().check().unwrap_err();
    assert!(matches!(err, ScanError::RootReplaced { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&t.root.display().to_string()), "{text}");
    assert!(text.contains("replaced"), "{text}");

    // A symlink to the original tree, at the root's path, is a replacement too.
    std::fs::remove_dir(&t.root).unwrap();
    std::os::unix::fs::symlink(&moved, &t.root).unwrap();
    let err = s.snapshot().check().unwrap_err();
    assert!(matches!(err, ScanError::RootReplaced { .. }), "{err}");

    // Gone altogether.
    std::fs::remove_file(&t.root).unwrap();
    let err = s.snapshot().check().unwrap_err();
    assert!(matches!(err, ScanError::RootGone { .. }), "{err}");
}

#[test]
fn overlapping_and_relative_roots_are_refused() {
    let t = tree();
    let err = scan(&[&t.root, &t.root.join("src")], &DenyGlobs::none()).unwrap_err();
    assert!(matches!(err, ScanError::OverlappingRoots { .. }), "{err}");
    assert!(err.to_string().contains("overlap"), "{err}");

    let err = scan(&[&t.root, &t.root], &DenyGlobs::none()).unwrap_err();
    assert!(matches!(err, ScanError::OverlappingRoots { .. }), "{err}");

    // The same directory through a symlink is the same root.
    let alias = t.outside.join("alias");
    std::os::unix::fs::symlink(&t.root, &alias).unwrap();
    let err = scan(&[&t.root, &alias], &DenyGlobs::none()).unwrap_err();
    assert!(matches!(err, ScanError::OverlappingRoots { .. }), "{err}");

    let err = scan(&[Path::new("relative/proj")], &DenyGlobs::none()).unwrap_err();
    assert!(matches!(err, ScanError::RelativeRoot { .. }), "{err}");

    let err = scan(&[t.root.join("README.md")], &DenyGlobs::none()).unwrap_err();
    assert!(matches!(err, ScanError::RootUnreadable { .. }), "{err}");
}
