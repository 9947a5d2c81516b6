//! Properties over generated change sets: one verdict each, no panic, nothing of the registry
//! or an unlisted dot-entry applied, no set-id bit applied.

use std::path::PathBuf;

use cordon_changes::rules::INERT;
use cordon_changes::{Change, ChangeKind, ChangeSet, Node, Rules, Special, Verdict, judge};
use proptest::prelude::*;

use crate::support::{Fake, ROOT};

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,6}",
        "\\.[a-z]{1,8}",
        Just(".git".to_owned()),
        Just("hooks".to_owned()),
        Just("config".to_owned()),
        Just("HEAD".to_owned()),
        Just("objects".to_owned()),
        Just("refs".to_owned()),
        Just("modules".to_owned()),
        Just(".envrc".to_owned()),
        Just(".cargo".to_owned()),
        Just("node_modules".to_owned()),
        Just("..".to_owned()),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        (0u32..0o10000, 0u64..100).prop_map(|(mode, size)| Node::File { mode, size }),
        (0u32..0o10000).prop_map(|mode| Node::Dir { mode }),
        "(/|\\.\\./)?[a-z.]{0,6}(/[a-z.]{1,6}){0,3}"
            .prop_map(|t| Node::Symlink { target: t.into() }),
        Just(Node::Special(Special::Fifo)),
    ]
}

fn kind() -> impl Strategy<Value = ChangeKind> {
    prop_oneof![
        Just(ChangeKind::Added),
        Just(ChangeKind::Modified),
        Just(ChangeKind::Deleted),
    ]
}

fn change() -> impl Strategy<Value = Change> {
    (prop::collection::vec(component(), 1..6), kind(), node()).prop_map(|(parts, kind, node)| {
        Change {
            path: parts.iter().collect(),
            kind,
            node,
        }
    })
}

fn fake_for(changes: &[Change], bytes: &[u8]) -> Fake {
    let mut fake = Fake::default();
    for c in changes {
        fake.new.insert(c.path.clone(), bytes.to_vec());
    }
    fake
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_change_gets_one_verdict_and_none_applies_what_the_rules_forbid(
        changes in prop::collection::vec(change(), 0..24),
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let set = ChangeSet { root: ROOT.into(), changes: changes.clone() };
        let fake = fake_for(&changes, &bytes);
        let verdicts = judge(&set, &fake, &Rules::default());
        prop_assert_eq!(verdicts.len(), changes.len());
        for (c, v) in changes.iter().zip(&verdicts) {
            let names: Vec<String> = c
                .path
                .components()
                .map(|p| p.as_os_str().to_string_lossy().into_owned())
                .collect();
            if c.kind == ChangeKind::Deleted {
                continue;
            }
            if names.iter().any(|n| n == "..") || matches!(c.node, Node::Special(_)) {
                prop_assert!(matches!(v, Verdict::Refuse(_)), "{:?} → {:?}", c, v);
            }
            if names.iter().any(|n| n == ".envrc") && !names.iter().any(|n| n == ".git") {
                prop_assert!(!v.applies(), "{:?} → {:?}", c, v);
            }
            if let Verdict::ApplyMode { mode, .. } = v {
                prop_assert_eq!(mode & 0o6002, 0);
            }
            if *v == Verdict::Apply
                && let Node::File { mode, .. } | Node::Dir { mode } = c.node
            {
                prop_assert_eq!(mode & 0o6002, 0, "{:?}", c);
            }
        }
    }

    #[test]
    fn a_made_up_dot_entry_at_the_top_is_never_applied(
        name in "\\.[a-z][a-z0-9_-]{0,15}",
        below in prop::option::of("[a-z]{1,8}"),
        modified in any::<bool>(),
    ) {
        prop_assume!(!INERT.iter().any(|i| i.path.split('/').next() == Some(name.as_str())));
        prop_assume!(name != ".git");
        let mut path = PathBuf::from(&name);
        if let Some(b) = below {
            path.push(b);
        }
        let kind = if modified { ChangeKind::Modified } else { ChangeKind::Added };
        let set = ChangeSet {
            root: ROOT.into(),
            changes: vec![Change { path, kind, node: Node::File { mode: 0o644, size: 1 } }],
        };
        let v = judge(&set, &Fake::default(), &Rules::default());
        prop_assert!(matches!(&v[0], Verdict::Hold(_) | Verdict::Refuse(_)), "{name}: {:?}", v[0]);
    }
}
