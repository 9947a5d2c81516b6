//! Nested mounts, on real bind mounts made in a private mount namespace that belongs to one
//! thread of this test: the host never sees them, and they vanish with the thread even if an
//! assertion fails first. Needs root (CI runs as root); fails, saying so, rather than skip.

use std::path::{Path, PathBuf};

use cordon_scan::{DenyGlobs, FindingKind, MountTable, ScanError, scan, scan_with};
use rustix::fs::{CWD, FileType, Mode};
use rustix::mount::{MountPropagationFlags, UnmountFlags};

mod sys {
    //! The one `unsafe` call of this crate's tests.
    #![allow(unsafe_code)]

    /// Moves the calling thread into a new mount namespace whose mounts do not propagate back.
    pub fn private_mount_namespace() -> rustix::io::Result<()> {
        // SAFETY: only CLONE_NEWNS (which implies CLONE_FS) is unshared; the descriptor table
        // stays shared, which is the hazard `unshare_unsafe` documents, so no thread can see a
        // descriptor from a table it does not share.
        unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS) }?;
        rustix::mount::mount_change(
            "/",
            super::MountPropagationFlags::PRIVATE | super::MountPropagationFlags::REC,
        )
    }
}

/// Runs `body` on a fresh thread inside a private mount namespace.
fn in_private_namespace(body: impl FnOnce() + Send + 'static) {
    assert!(
        rustix::process::geteuid().is_root(),
        "bind mounts need root (euid {}); run this test as root, as CI does",
        rustix::process::geteuid().as_raw()
    );
    let outcome = std::thread::spawn(move || {
        sys::private_mount_namespace().expect("unshare(CLONE_NEWNS) and make / private");
        body();
    })
    .join();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    let other = base.join("other");
    std::fs::create_dir_all(root.join("sub/mnt")).unwrap();
    std::fs::write(root.join("sub/file.rs"), "x").unwrap();
    std::fs::create_dir_all(&other).unwrap();
    // If the walk crossed into the mount, this FIFO would be a finding too.
    rustix::fs::mknodat(
        CWD,
        other.join("pipe"),
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    (dir, root, other)
}

fn unmount(path: &Path) {
    rustix::mount::unmount(path, UnmountFlags::DETACH).unwrap();
}

#[test]
fn a_bind_mount_inside_a_root_is_a_finding_and_is_not_entered() {
    let (dir, root, other) = dirs();
    in_private_namespace(move || {
        let mnt = root.join("sub/mnt");
        rustix::mount::mount_bind(&other, &mnt).unwrap();

        let s = scan(&[&root], &DenyGlobs::none()).unwrap();
        let found: Vec<(&str, &Path)> = s
            .findings()
            .iter()
            .map(|f| (f.kind.rule(), f.path.as_path()))
            .collect();
        assert_eq!(found, [("nested-mount", mnt.as_path())]);
        // Named by the mount table, which knows the filesystem type.
        assert!(
            matches!(&s.findings()[0].kind, FindingKind::NestedMount { fstype: Some(t) } if !t.is_empty()),
            "{:?}",
            s.findings()[0]
        );
        let text = s.refusal().unwrap_err().to_string();
        assert!(text.contains("rule nested-mount"), "{text}");

        // Without the mount table the walk itself still refuses to enter it (EXDEV).
        let s = scan_with(&[&root], &DenyGlobs::none(), &MountTable::default()).unwrap();
        assert_eq!(s.findings().len(), 1, "{:?}", s.findings());
        assert_eq!(s.findings()[0].path, mnt);
        assert_eq!(
            s.findings()[0].kind,
            FindingKind::NestedMount { fstype: None }
        );
        // sub, sub/mnt: the mounted directory was not read.
        assert_eq!(s.counts().dirs, 2);

        unmount(&mnt);
        let s = scan(&[&root], &DenyGlobs::none()).unwrap();
        assert!(s.findings().is_empty(), "{:?}", s.findings());
    });
    drop(dir);
}

#[test]
fn a_mount_hidden_below_another_is_still_a_finding() {
    let (dir, root, other) = dirs();
    in_private_namespace(move || {
        // Mount on sub/mnt, then hide it by mounting over sub: the walk cannot reach sub/mnt's
        // mount, only the mount table can name it.
        let mnt = root.join("sub/mnt");
        let sub = root.join("sub");
        rustix::mount::mount_bind(&other, &mnt).unwrap();
        let cover = other.join("cover");
        std::fs::create_dir(&cover).unwrap();
        rustix::mount::mount_bind(&cover, &sub).unwrap();

        let s = scan(&[&root], &DenyGlobs::none()).unwrap();
        let paths: Vec<&Path> = s.findings().iter().map(|f| f.path.as_path()).collect();
        assert_eq!(paths, [sub.as_path(), mnt.as_path()]);
        assert!(
            s.findings()
                .iter()
                .all(|f| matches!(f.kind, FindingKind::NestedMount { .. }))
        );
        unmount(&sub);
        unmount(&mnt);
    });
    drop(dir);
}

#[test]
fn the_snapshot_detects_a_mount_over_the_root() {
    let (dir, root, _other) = dirs();
    in_private_namespace(move || {
        let s = scan(&[&root], &DenyGlobs::none()).unwrap();
        s.snapshot().check().unwrap();
        // The same directory bound onto itself: same device, same inode, another mount. Only
        // the mount ID tells them apart.
        rustix::mount::mount_bind(&root, &root).unwrap();
        let err = s.snapshot().check().unwrap_err();
        assert!(matches!(err, ScanError::RootReplaced { .. }), "{err}");
        assert!(err.to_string().contains("mount"), "{err}");
        unmount(&root);
        s.snapshot().check().unwrap();
    });
    drop(dir);
}
