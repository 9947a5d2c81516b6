//! A change set in, a verdict per change out: the pure judge of what a jailed command wrote to a
//! writable root, decided by the structure of the paths (at any depth), never by where the
//! command ran.
//!
//! (Draft: the rules are being filled in; the API below is the one the commit calls.)

mod model;
mod rules;

pub use model::{Change, ChangeKind, ChangeSet, Contents, Finding, Node, Special, Verdict};
pub use rules::{RULE_IDS, Rules, allowed_mode};

/// One verdict per change of `set`, in the same order.
pub fn judge(set: &ChangeSet, contents: &dyn Contents, rules: &Rules) -> Vec<Verdict> {
    let _ = (contents, rules);
    set.changes
        .iter()
        .map(|c| match c.node {
            Node::Special(_) if c.kind != ChangeKind::Deleted => Verdict::Refuse(Finding::new(
                "special-file",
                "cordon",
                "a device, fifo or socket is never committed",
            )),
            _ => Verdict::Apply,
        })
        .collect()
}
