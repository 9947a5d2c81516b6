//! TEMPORARY stand-in for the judge's crate (branch h-judge), with its fixed API, so that
//! cordon-commit builds until the real crate is merged. Reverted before that merge.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSet {
    pub root: PathBuf,
    pub changes: Vec<Change>,
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
    pub node: Node,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File { mode: u32, size: u64 },
    Dir { mode: u32 },
    Symlink { target: PathBuf },
    Special(Special),
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
}
pub trait Contents {
    fn new_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>>;
    fn old_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>>;
    fn old_node(&self, path: &Path) -> Option<Node>;
}
#[derive(Debug, Clone, Default)]
pub struct Rules {}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub program: String,
    pub why: String,
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Apply,
    ApplyRewritten {
        bytes: Vec<u8>,
        dropped: Vec<Finding>,
    },
    Refuse(Finding),
    Hold(Finding),
}
pub fn judge(set: &ChangeSet, _contents: &dyn Contents, _rules: &Rules) -> Vec<Verdict> {
    set.changes
        .iter()
        .map(|c| {
            let s = c.path.to_string_lossy();
            if s.starts_with(".git/hooks/") {
                Verdict::Refuse(Finding {
                    rule: "git-hook",
                    program: "git".into(),
                    why: "stub".into(),
                })
            } else if s == ".envrc" || s == ".npmrc" {
                Verdict::Hold(Finding {
                    rule: "autorun",
                    program: "direnv".into(),
                    why: "stub".into(),
                })
            } else {
                Verdict::Apply
            }
        })
        .collect()
}
