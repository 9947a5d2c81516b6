//! From the judge's verdicts to what becomes of each change: specials are never committed, no
//! set-id or world-writable bit is committed whatever the verdict, a path the host changed
//! after the run started is a conflict, and a kept directory keeps what is below it (and a
//! deletion that cannot finish keeps its directory).

use std::path::Path;

use cordon_changes::{ChangeKind, Node, Verdict};
use rustix::fs::FileType;

use crate::beneath::Found;
use crate::layer::Layer;
use crate::report::{Finding, Status};

/// What becomes of one change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decided {
    pub status: Status,
    pub finding: Option<Finding>,
    /// The judge's rewritten content, applied instead of the command's.
    pub rewrite: Option<Vec<u8>>,
    /// The judge's mode, applied instead of the command's.
    pub mode: Option<u32>,
}

fn finding_of(f: &cordon_changes::Finding) -> Finding {
    Finding {
        rule: f.rule.to_owned(),
        program: f.program.clone(),
        why: f.why.clone(),
        keys: dropped_keys(std::slice::from_ref(f)),
    }
}

/// The configuration keys among `findings`, each with its why.
fn dropped_keys(findings: &[cordon_changes::Finding]) -> Vec<crate::report::DroppedKey> {
    findings
        .iter()
        .filter_map(|f| {
            f.key.as_ref().map(|key| crate::report::DroppedKey {
                key: key.clone(),
                why: f.why.clone(),
            })
        })
        .collect()
}

/// The change time at or after which a host entry counts as changed during the run.
pub(crate) type Started = (i64, u32);

/// Whether the host's entry `host` at a changed path was changed after the run started (or
/// appeared, or a parent became a link): the reason, or `None`.
pub(crate) fn conflict(
    kind: ChangeKind,
    is_dir: bool,
    host: Found,
    started: Started,
) -> Option<String> {
    match host {
        Found::ParentIsLink => Some("a parent directory on the host is a symbolic link".into()),
        Found::Absent => match kind {
            ChangeKind::Modified => Some("the host removed it after the command started".into()),
            _ => None,
        },
        Found::Entry(m) => {
            let host_dir = m.kind == FileType::Directory;
            if kind == ChangeKind::Added && !(is_dir && host_dir) {
                return Some("the host created it after the command started".into());
            }
            // A directory's own change time moves with every entry; its entries are judged one by one.
            if !host_dir && m.ctime >= started {
                return Some("the host changed it after the command started".into());
            }
            None
        }
    }
}

/// Decides every change of `layer`, given the judge's `verdicts` (one per change, in order).
pub(crate) fn decide(layer: &Layer, verdicts: Vec<Verdict>, started: Started) -> Vec<Decided> {
    let changes = &layer.set.changes;
    let mut out: Vec<Decided> = verdicts
        .into_iter()
        .map(|v| match v {
            Verdict::Apply => Decided {
                status: Status::Pending,
                finding: None,
                rewrite: None,
                mode: None,
            },
            Verdict::ApplyRewritten { bytes, dropped } => Decided {
                status: Status::Pending,
                // Applied without what was dropped: the finding says what and why.
                finding: dropped.first().map(|first| Finding {
                    rule: first.rule.to_owned(),
                    program: first.program.clone(),
                    why: dropped
                        .iter()
                        .map(|d| d.why.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                    keys: dropped_keys(&dropped),
                }),
                rewrite: Some(bytes),
                mode: None,
            },
            Verdict::ApplyMode { mode, .. } => Decided {
                status: Status::Pending,
                finding: None,
                rewrite: None,
                mode: Some(mode),
            },
            Verdict::Refuse(f) => Decided {
                status: Status::Refused,
                finding: Some(finding_of(&f)),
                rewrite: None,
                mode: None,
            },
            Verdict::Hold(f) => Decided {
                status: Status::Held,
                finding: Some(finding_of(&f)),
                rewrite: None,
                mode: None,
            },
        })
        .collect();
    // A judge that answered for fewer changes than it was given: the rest are held.
    while out.len() < changes.len() {
        out.push(Decided {
            status: Status::Held,
            finding: Some(Finding::commit(
                "unjudged",
                "the judge gave no verdict".into(),
            )),
            rewrite: None,
            mode: None,
        });
    }
    for (i, c) in changes.iter().enumerate() {
        if c.kind != ChangeKind::Deleted && matches!(c.node, Node::Special(_)) {
            out[i] = Decided {
                status: Status::Refused,
                finding: Some(Finding::commit(
                    "special-file",
                    "fifos, sockets and devices are never committed".into(),
                )),
                rewrite: None,
                mode: None,
            };
        }
        if c.path.to_str().is_none() {
            out[i] = Decided {
                status: Status::Refused,
                finding: Some(Finding::commit(
                    "name-not-utf8",
                    "the name is not UTF-8, so cordon's record cannot name it".into(),
                )),
                rewrite: None,
                mode: None,
            };
        }
        if out[i].status == Status::Refused {
            continue;
        }
        // The mode rule whatever the verdict: a judge's branch that answers by its own rule
        // (a git configuration rewritten or applied) says nothing of the mode.
        if let (Node::File { mode, .. } | Node::Dir { mode }, None) = (&c.node, out[i].mode) {
            let allowed = cordon_changes::allowed_mode(*mode);
            if allowed != mode & 0o7777 {
                out[i].mode = Some(allowed);
            }
        }
        let is_dir = matches!(c.node, Node::Dir { .. });
        if let Some(why) = conflict(c.kind, is_dir, layer.host[i], started) {
            out[i] = Decided {
                status: Status::Conflict,
                finding: Some(Finding::commit("conflict", why)),
                rewrite: None,
                mode: None,
            };
        }
    }
    let paths: Vec<&Path> = changes.iter().map(|c| c.path.as_path()).collect();
    propagate(
        &paths,
        &changes.iter().map(|c| c.kind).collect::<Vec<_>>(),
        &mut out,
    );
    out
}

/// A kept (not pending) directory keeps every change below it, and a change that needs the host's
/// directory gone (a deletion, a directory replaced by a file) is kept when something below it is.
pub(crate) fn propagate(paths: &[&Path], kinds: &[ChangeKind], out: &mut [Decided]) {
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by(|a, b| paths[*a].cmp(paths[*b]));
    // Top-down: ancestors come first in path order.
    let mut kept: Vec<usize> = Vec::new();
    for &i in &order {
        while let Some(&k) = kept.last() {
            if paths[i].starts_with(paths[k]) {
                break;
            }
            kept.pop();
        }
        if let Some(&k) = kept.last() {
            let same_side = (kinds[k] == ChangeKind::Deleted) == (kinds[i] == ChangeKind::Deleted);
            if same_side && out[i].status == Status::Pending {
                out[i] = Decided {
                    status: out[k].status,
                    finding: Some(Finding::commit(
                        "inside-kept",
                        format!("it is inside {}, which is kept", paths[k].display()),
                    )),
                    rewrite: None,
                    mode: None,
                };
            }
        }
        if out[i].status != Status::Pending && out[i].status != Status::Applied {
            kept.push(i);
        }
    }
    // Bottom-up: a kept deletion below keeps the directory (and what replaces it).
    let mut blocked: std::collections::HashMap<&Path, usize> = std::collections::HashMap::new();
    for j in 0..paths.len() {
        if kinds[j] == ChangeKind::Deleted
            && out[j].status != Status::Pending
            && out[j].status != Status::Applied
        {
            for up in paths[j].ancestors().skip(1) {
                blocked.entry(up).or_insert(j);
            }
        }
    }
    for i in 0..paths.len() {
        if out[i].status != Status::Pending {
            continue;
        }
        if let Some(&j) = blocked.get(paths[i]) {
            out[i] = Decided {
                status: out[j].status,
                finding: Some(Finding::commit(
                    "holds-kept",
                    format!("{} below it is kept", paths[j].display()),
                )),
                rewrite: None,
                mode: None,
            };
        }
    }
}
