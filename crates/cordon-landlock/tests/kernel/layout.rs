//! The test-owned tree the cases run in.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use crate::{CONFIG, ENVRC, HOOK, OUTSIDE};

pub struct Layout {
    _keep: tempfile::TempDir,
    _tmp_keep: tempfile::TempDir,
    _sentinel: tempfile::NamedTempFile,
    pub root: PathBuf,
    pub tmp: PathBuf,
    pub sentinel: PathBuf,
}

pub fn layout() -> Layout {
    const PRIVATE: [&str; 3] = ["/tmp", "/var/tmp", "/run"];
    let base = std::env::var_os("CORDON_LANDLOCK_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            // A checkout under /tmp (a CI clone, say): root can use /var/lib instead.
            if PRIVATE.iter().any(|p| target.starts_with(p))
                && fs::create_dir_all("/var/lib/cordon-test-landlock").is_ok()
            {
                PathBuf::from("/var/lib/cordon-test-landlock")
            } else {
                target
            }
        });
    fs::create_dir_all(&base).unwrap();
    let base = fs::canonicalize(&base).unwrap();
    for private in PRIVATE {
        assert!(
            !base.starts_with(private),
            "the test tree must lie outside {private}: the landlock backend hides the host's \
             private directories, so the tree's read checks would fail for the wrong reason \
             (set CORDON_LANDLOCK_TEST_DIR to a directory elsewhere; it is {})",
            base.display()
        );
    }
    let keep = tempfile::Builder::new()
        .prefix("landlock-kernel-")
        .tempdir_in(&base)
        .unwrap();
    let root = fs::canonicalize(keep.path()).unwrap();
    let files: &[(&str, &str)] = &[
        ("home/.ssh/id_test", "TEST-KEY-NOT-A-REAL-ONE\n"),
        ("home/.netrc", "machine example.invalid password test\n"),
        ("home/notes.txt", "notes\n"),
        ("home/.config/tool.toml", "x = 1\n"),
        ("ws/src/main.rs", "fn main() {}\n"),
        ("ws/README.md", "readme\n"),
        ("ws/.envrc", ENVRC),
        ("ws/.git/config", CONFIG),
        ("ws/.git/HEAD", "ref: refs/heads/main\n"),
        ("ws/.git/hooks/existing", HOOK),
        ("outside/file.txt", OUTSIDE),
    ];
    for (rel, text) in files {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
    }
    for dir in ["ws/target", "ws/.git/objects", "evidence"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    // Symlinks into a masked directory: in the home (split around the masks) and in the
    // workspace.
    std::os::unix::fs::symlink(".ssh", root.join("home/ssh-link")).unwrap();
    std::os::unix::fs::symlink("../../home/.ssh/id_test", root.join("ws/src/key-link")).unwrap();
    // The launcher's private temporary directory, and a file of "another program" beside it.
    let tmp_keep = tempfile::Builder::new()
        .prefix("cordon-landlock-tmp-")
        .tempdir()
        .unwrap();
    let tmp = fs::canonicalize(tmp_keep.path()).unwrap();
    let mut sentinel = tempfile::Builder::new()
        .prefix("cordon-landlock-sentinel-")
        .tempfile()
        .unwrap();
    sentinel
        .write_all(b"another program's temp file\n")
        .unwrap();
    let sentinel_path = fs::canonicalize(sentinel.path()).unwrap();
    Layout {
        _keep: keep,
        _tmp_keep: tmp_keep,
        _sentinel: sentinel,
        root,
        tmp,
        sentinel: sentinel_path,
    }
}
