//! A fake host and layer, and builders for change sets.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cordon_changes::{
    Change, ChangeKind, ChangeSet, Contents, Finding, Node, Rules, Verdict, judge,
};

pub const ROOT: &str = "/home/u/proj";

/// The host before (nodes and bytes) and the command's bytes.
#[derive(Default)]
pub struct Fake {
    pub old: HashMap<PathBuf, (Node, Vec<u8>)>,
    pub new: HashMap<PathBuf, Vec<u8>>,
}

impl Contents for Fake {
    fn new_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>> {
        self.new.get(path).filter(|b| b.len() <= limit).cloned()
    }
    fn old_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>> {
        self.old
            .get(path)
            .map(|(_, b)| b)
            .filter(|b| b.len() <= limit)
            .cloned()
    }
    fn old_node(&self, path: &Path) -> Option<Node> {
        // The directories above the host's files exist too.
        self.old.get(path).map(|(n, _)| n.clone()).or_else(|| {
            self.old
                .keys()
                .any(|k| k != path && k.starts_with(path))
                .then(dir_node)
        })
    }
}

/// A change set and the fake it reads.
#[derive(Default)]
pub struct Case {
    pub fake: Fake,
    pub changes: Vec<Change>,
    pub rules: Option<Rules>,
}

pub fn file_node(len: usize) -> Node {
    Node::File {
        mode: 0o644,
        size: len as u64,
    }
}

pub fn dir_node() -> Node {
    Node::Dir { mode: 0o755 }
}

impl Case {
    pub fn new() -> Self {
        Case::default()
    }

    /// A file the host had.
    pub fn host_file(mut self, path: &str, text: &str) -> Self {
        self.fake.old.insert(
            path.into(),
            (file_node(text.len()), text.as_bytes().to_vec()),
        );
        self
    }

    /// A directory the host had.
    pub fn host_dir(mut self, path: &str) -> Self {
        self.fake.old.insert(path.into(), (dir_node(), Vec::new()));
        self
    }

    /// A change with a node.
    pub fn change(mut self, path: &str, kind: ChangeKind, node: Node) -> Self {
        self.changes.push(Change {
            path: path.into(),
            kind,
            node,
        });
        self
    }

    /// A file the command wrote (added, or modified when the host had it).
    pub fn write(mut self, path: &str, bytes: &[u8]) -> Self {
        let kind = if self.fake.old.contains_key(Path::new(path)) {
            ChangeKind::Modified
        } else {
            ChangeKind::Added
        };
        self.fake.new.insert(path.into(), bytes.to_vec());
        self.change(path, kind, file_node(bytes.len()))
    }

    /// A directory the command made.
    pub fn mkdir(self, path: &str) -> Self {
        self.change(path, ChangeKind::Added, dir_node())
    }

    /// A link the command made.
    pub fn link(self, path: &str, target: &str) -> Self {
        self.change(
            path,
            ChangeKind::Added,
            Node::Symlink {
                target: target.into(),
            },
        )
    }

    /// A path the command removed (the host's node).
    pub fn delete(self, path: &str) -> Self {
        let node = self
            .fake
            .old
            .get(Path::new(path))
            .map_or_else(|| file_node(0), |(n, _)| n.clone());
        self.change(path, ChangeKind::Deleted, node)
    }

    pub fn with_rules(mut self, rules: Rules) -> Self {
        self.rules = Some(rules);
        self
    }

    /// The verdicts, by path.
    pub fn judge(&self) -> Judged {
        let set = ChangeSet {
            root: ROOT.into(),
            changes: self.changes.clone(),
        };
        let default = Rules::default();
        let verdicts = judge(&set, &self.fake, self.rules.as_ref().unwrap_or(&default));
        assert_eq!(verdicts.len(), set.changes.len(), "one verdict per change");
        Judged(
            set.changes
                .iter()
                .map(|c| c.path.clone())
                .zip(verdicts)
                .collect(),
        )
    }
}

/// Verdicts by path.
pub struct Judged(pub Vec<(PathBuf, Verdict)>);

impl Judged {
    pub fn of(&self, path: &str) -> &Verdict {
        self.0
            .iter()
            .find(|(p, _)| p == Path::new(path))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no verdict for {path}"))
    }

    /// The refusal's finding, failing with the verdict if it is not one.
    pub fn refused(&self, path: &str, rule: &str) -> &Finding {
        match self.of(path) {
            Verdict::Refuse(f) if f.rule == rule => f,
            other => panic!("{path}: expected refusal by {rule}, got {other:?}"),
        }
    }

    pub fn held(&self, path: &str, rule: &str) -> &Finding {
        match self.of(path) {
            Verdict::Hold(f) if f.rule == rule => f,
            other => panic!("{path}: expected hold by {rule}, got {other:?}"),
        }
    }

    pub fn applied(&self, path: &str) {
        assert_eq!(self.of(path), &Verdict::Apply, "{path}");
    }

    /// The rewritten bytes and dropped findings.
    pub fn rewritten(&self, path: &str) -> (String, Vec<Finding>) {
        match self.of(path) {
            Verdict::ApplyRewritten { bytes, dropped } => {
                (String::from_utf8_lossy(bytes).into_owned(), dropped.clone())
            }
            other => panic!("{path}: expected a rewrite, got {other:?}"),
        }
    }
}
