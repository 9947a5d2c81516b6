//! A workspace, a real overlay over it made by `unshare -Urm` (root and unprivileged alike), the
//! workspace's state directory and the run's start marker.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use cordon_commit::{CommitReport, Mode, commit_root};
use sha2::{Digest, Sha256};

pub struct Fixture {
    pub base: tempfile::TempDir,
}

impl Fixture {
    /// A fresh fixture; `host` fills the workspace before the run starts.
    pub fn new(host: &str) -> Fixture {
        let base = tempfile::Builder::new()
            .prefix("cordon-commit-")
            .tempdir()
            .unwrap();
        let f = Fixture { base };
        for d in ["ws", "layer/upper", "layer/work", "state", "outside"] {
            std::fs::create_dir_all(f.path().join(d)).unwrap();
        }
        sh(&f.ws(), host);
        f
    }

    pub fn path(&self) -> &Path {
        self.base.path()
    }
    pub fn ws(&self) -> PathBuf {
        self.path().join("ws")
    }
    pub fn upper(&self) -> PathBuf {
        self.path().join("layer/upper")
    }
    pub fn state(&self) -> PathBuf {
        self.path().join("state")
    }
    pub fn marker(&self) -> PathBuf {
        self.path().join("layer/started")
    }
    pub fn outside(&self) -> PathBuf {
        self.path().join("outside")
    }
    /// The permission bits (set-id and sticky included) of `rel` in the workspace.
    pub fn mode(&self, rel: &str) -> u32 {
        std::fs::metadata(self.ws().join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    /// Records the run's start: after the last host change of the set-up has a strictly older
    /// change time (the clock of change times is coarse), the marker is made.
    pub fn start(&self) {
        let tick = self.path().join("tick");
        std::fs::write(&tick, b"").unwrap();
        let before = std::fs::metadata(&tick).unwrap();
        loop {
            let _ = std::fs::remove_file(self.marker());
            std::fs::write(self.marker(), b"").unwrap();
            let m = std::fs::metadata(self.marker()).unwrap();
            if (m.ctime(), m.ctime_nsec()) > (before.ctime(), before.ctime_nsec()) {
                break;
            }
        }
    }

    /// Runs `script` in the workspace seen through a fresh overlay whose upper is ours (the
    /// marker is made first).
    pub fn jail(&self, script: &str) {
        self.start();
        self.jail_in(&self.upper(), &self.path().join("layer/work"), script);
    }

    /// The same with another upper and work directory (a second jail over the workspace).
    pub fn jail_in(&self, upper: &Path, work: &Path, script: &str) {
        let mount = format!(
            "mount -t overlay -o userxattr,lowerdir={ws},upperdir={up},workdir={wk} none {ws} && cd {ws} && {{ {script}\n}}",
            ws = self.ws().display(),
            up = upper.display(),
            wk = work.display(),
        );
        let out = Command::new("unshare")
            .args(["-Urm", "sh", "-ec", &mount])
            .output()
            .expect("unshare runs");
        assert!(
            out.status.success(),
            "the jail's script failed (unshare -Urm with an overlay must work here, as root and unprivileged): {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            script
        );
    }

    pub fn commit(&self, mode: Mode) -> CommitReport {
        commit_root(
            &self.ws(),
            &self.upper(),
            &self.state(),
            &self.marker(),
            mode,
        )
        .unwrap()
    }
}

/// Runs a shell script in `dir` on the host.
pub fn sh(dir: &Path, script: &str) {
    if script.is_empty() {
        return;
    }
    let out = Command::new("sh")
        .args(["-ec", script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "set-up failed: {}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every entry below `dir`: type, mode, and the content's SHA-256 or the link's target.
pub fn listing(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for p in names {
        let m = std::fs::symlink_metadata(&p).unwrap();
        let rel = p.strip_prefix(base).unwrap().to_path_buf();
        let mode = m.permissions().mode() & 0o7777;
        let t = m.file_type();
        let desc = if t.is_dir() {
            walk(base, &p, out);
            format!("dir {mode:o}")
        } else if t.is_symlink() {
            format!("link -> {}", std::fs::read_link(&p).unwrap().display())
        } else if t.is_file() {
            let hash = Sha256::digest(std::fs::read(&p).unwrap());
            let hex: String = hash.iter().take(12).map(|b| format!("{b:02x}")).collect();
            format!("file {mode:o} {hex}")
        } else if t.is_fifo() {
            "fifo".into()
        } else {
            "other".into()
        };
        out.insert(rel, desc);
    }
}

pub fn paths(list: &[cordon_commit::Listed]) -> Vec<String> {
    list.iter()
        .map(|l| l.path.to_string_lossy().into_owned())
        .collect()
}

pub fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap()
}
