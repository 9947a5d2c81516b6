//! No path or glob, however hostile — quotes, backslashes, parentheses, newlines, `#`, `;`,
//! non-UTF-8 bytes — changes the structure of the profile, and every one comes back as the exact
//! literal: as a `-D` value, or inside a regular expression that matches exactly it.
//!
//! Plans are built directly (every field of `Plan` is public) from a small pool of hostile path
//! components, so that generated paths nest, collide and tie. The structure of a profile is its
//! tree with every string emptied; it must equal the structure of the same plan with each
//! distinct component renamed to a tame one.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::common::{self, Judge, read, read_args, regex_matches};
use cordon_policy::{
    CredentialMask, EntryKind, FakeHost, Plan, Posture, Profile, ProtectedPath, SkipReason, Skipped,
};
use cordon_seatbelt::glob::escape_glob;
use cordon_seatbelt::sbpl::{MAX_STRING_BYTES, quote};
use cordon_seatbelt::{GlobRule, Request, SeatbeltExtras, build};
use proptest::prelude::*;

fn component() -> impl Strategy<Value = Vec<u8>> {
    let fixed = prop::sample::select(vec![
        "a b",
        "it's",
        "\"q\"",
        "\\\"",
        "new\nline",
        "#",
        ";",
        "(x)",
        "()",
        ")(",
        "back\\slash",
        "tab\there",
        "é",
        "[x]",
        "*",
        "?",
        "{a,b}",
        "(?:x)",
        "$^",
        ".hidden",
        "x",
    ])
    .prop_map(|s| s.as_bytes().to_vec());
    let bytes = prop::collection::vec(
        any::<u8>().prop_filter("no NUL or /", |b| *b != 0 && *b != b'/'),
        1..10,
    );
    prop_oneof![3 => fixed, 3 => bytes].prop_filter("canonical", |c| c != b"." && c != b"..")
}

fn join(parts: &[&[u8]]) -> PathBuf {
    let mut p = PathBuf::from("/r");
    for part in parts {
        p.push(OsStr::from_bytes(part));
    }
    p
}

/// The hostile inputs, by component: index 0 is the root's name, and so on.
#[derive(Debug, Clone)]
struct Names(Vec<Vec<u8>>);

struct Built {
    plan: Plan,
    tmpdir: PathBuf,
    extras: SeatbeltExtras,
    argv: Vec<OsString>,
}

fn base_plan() -> Plan {
    let host = FakeHost::typical();
    Plan::resolve(
        &cordon_policy::Policy::for_profile(Profile::Shell),
        &cordon_policy::Invocation::at("/home/u/proj"),
        &host,
    )
    .unwrap()
}

/// A plan with every path made of the given components.
fn plan_from(n: &Names, posture: Posture) -> Built {
    let c = |i: usize| n.0[i % n.0.len()].as_slice();
    let root = join(&[c(0)]);
    let mut plan = base_plan();
    plan.posture = posture;
    plan.home = join(&[c(1)]);
    plan.workspace = root.clone();
    plan.cwd = root.clone();
    plan.writable = vec![root.clone(), join(&[c(2), c(3)])];
    plan.protected = vec![ProtectedPath {
        path: join(&[c(0), c(4), c(5)]),
        kind: EntryKind::Dir,
        root: root.clone(),
    }];
    plan.masks = vec![
        CredentialMask {
            target: join(&[c(1), c(6)]),
            requested: join(&[c(1), c(7)]),
            kind: EntryKind::File,
        },
        CredentialMask {
            target: join(&[c(0), c(8)]),
            requested: join(&[c(0), c(8)]),
            kind: EntryKind::Dir,
        },
    ];
    plan.skipped = vec![
        Skipped {
            path: join(&[c(1), c(9)]),
            reason: SkipReason::MaskMissing,
        },
        Skipped {
            path: join(&[c(0), c(10)]),
            reason: SkipReason::ProtectedMissing,
        },
    ];
    plan.private_dirs = vec![join(&[c(11)])];
    plan.read_only = vec![cordon_policy::Bind {
        source: join(&[c(12)]),
        dest: join(&[c(12)]),
    }];
    let extras = SeatbeltExtras {
        deny_read: vec![GlobRule::new(
            join(&[c(0), c(13)]),
            OsString::from_vec([b"**/".to_vec(), escape_glob(c(14))].concat()),
        )],
        deny_write: vec![GlobRule::new(
            root,
            OsString::from_vec([escape_glob(c(15)), b"/*.pem".to_vec()].concat()),
        )],
        proxy_port: None,
    };
    Built {
        plan,
        tmpdir: join(&[c(16), c(17)]),
        extras,
        argv: vec![OsString::from_vec(c(18).to_vec()), OsString::from("--")],
    }
}

fn build_exec(b: &Built, host: &FakeHost) -> cordon_seatbelt::SandboxExec {
    build(&Request {
        plan: &b.plan,
        host,
        tmpdir: &b.tmpdir,
        extras: &b.extras,
        stage: Some(Path::new("/opt/cordon")),
        argv: &b.argv,
    })
    .unwrap()
}

fn names() -> impl Strategy<Value = Names> {
    prop::collection::vec(component(), 19).prop_map(Names)
}

fn tame(n: &Names) -> Names {
    let mut map: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    Names(
        n.0.iter()
            .map(|c| {
                let next = map.len();
                let i = *map.entry(c.clone()).or_insert(next);
                format!("c{i}").into_bytes()
            })
            .collect(),
    )
}

fn shapes(profile: &str) -> Vec<common::Sexp> {
    read(profile)
        .unwrap()
        .iter()
        .map(common::Sexp::shape)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn hostile_paths_keep_the_structure_and_come_back_exactly(
        n in names(),
        minimal in any::<bool>(),
    ) {
        let posture = if minimal { Posture::Minimal } else { Posture::Host };
        let host = FakeHost::new();
        let hostile = plan_from(&n, posture);
        let exec = build_exec(&hostile, &host);
        let tamed = build_exec(&plan_from(&tame(&n), posture), &host);

        // The profile is one line per datum of printable ASCII and reads back whole.
        prop_assert!(exec.profile().is_ascii());
        let args = read_args(&exec.args());
        prop_assert_eq!(shapes(&args.profile), shapes(tamed.profile()));
        let tamed_args = read_args(&tamed.args());
        prop_assert_eq!(
            args.params.keys().collect::<Vec<_>>(),
            tamed_args.params.keys().collect::<Vec<_>>()
        );

        // Every path of the plan is the exact value of a parameter.
        let values: Vec<&OsString> = args.params.values().collect();
        let plan = &hostile.plan;
        let mut expected: Vec<&Path> = vec![&hostile.tmpdir];
        expected.extend(plan.writable.iter().map(PathBuf::as_path));
        expected.extend(plan.protected.iter().map(|p| p.path.as_path()));
        expected.extend(plan.masks.iter().flat_map(|m| [m.target.as_path(), m.requested.as_path()]));
        expected.extend(plan.skipped.iter().map(|s| s.path.as_path()));
        for path in expected {
            prop_assert!(values.contains(&&path.as_os_str().to_owned()), "{:?} missing", path);
        }
        // The command comes back argument for argument.
        prop_assert_eq!(&args.command[1..], &hostile.argv[..]);

        // Every glob's expression comes back exactly, and matches exactly its literal parts.
        let mut strings = Vec::new();
        for form in read(&args.profile).unwrap() {
            form.strings(&mut strings);
        }
        for rule in hostile.extras.deny_read.iter().chain(&hostile.extras.deny_write) {
            let re = rule.regex().unwrap();
            prop_assert!(strings.contains(&re));
        }
        for s in &strings {
            prop_assert!(s.len() <= MAX_STRING_BYTES);
        }

        // And the decisions follow the literals, byte for byte.
        let judge = Judge::new(&exec);
        let c = |i: usize| n.0[i % n.0.len()].clone();
        let root = join(&[&c(0)]);
        let under = |base: &Path, rest: &[&[u8]]| {
            let mut p = base.to_path_buf();
            for r in rest { p.push(OsStr::from_bytes(r)); }
            p
        };
        let protected = join(&[&c(0), &c(4), &c(5)]);
        // A mask denies both the file and the name it was asked by (a symlink's own path).
        let masks = [
            join(&[&c(1), &c(6)]),
            join(&[&c(1), &c(7)]),
            join(&[&c(0), &c(8)]),
            join(&[&c(1), &c(9)]),
        ];
        let env_dir = join(&[&c(0), &c(13)]);
        let env_file = under(&env_dir, &[b"deep", &c(14)]);
        let pem = under(&root, &[&c(15), b"k.pem"]);
        let fresh = under(&root, &[b"fresh-file"]);
        let covered = |p: &Path| {
            [&protected].into_iter().chain(masks.iter()).any(|g| p.starts_with(g))
                || p.starts_with(&env_dir) && p == env_file
                || p == pem
        };
        if !covered(&fresh) {
            prop_assert!(judge.allows("file-write-create", &fresh));
        }
        prop_assert!(!judge.allows("file-write-create", under(&protected, &[b"x"])));
        for m in &masks {
            prop_assert!(!judge.allows("file-read-data", m));
            prop_assert!(!judge.allows("file-write-unlink", m));
        }
        prop_assert!(!judge.allows("file-read-data", &env_file));
        prop_assert!(!judge.allows("file-write-data", &pem));
        let mut near = env_file.clone().into_os_string();
        near.push("x");
        let near = PathBuf::from(near);
        if !masks.iter().any(|m| near.starts_with(m)) && !minimal {
            prop_assert!(judge.allows("file-read-data", &near), "{:?}", near);
        }
    }

    #[test]
    fn any_bytes_quote_to_one_ascii_line_that_reads_back_exactly(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let q = quote(&bytes);
        prop_assert!(q.is_ascii() && !q.contains('\n') && !q.contains('\r'));
        let forms = read(&format!("(x {q} y)")).unwrap();
        prop_assert_eq!(
            forms,
            vec![common::Sexp::List(vec![
                common::Sexp::Atom("x".into()),
                common::Sexp::Str(bytes),
                common::Sexp::Atom("y".into()),
            ])]
        );
    }

    #[test]
    fn any_glob_bytes_compile_to_the_dialect_or_are_refused(
        base in prop::collection::vec(component(), 1..4),
        pattern in prop::collection::vec(any::<u8>(), 1..40),
    ) {
        let base = join(&base.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let rule = GlobRule::new(&base, OsString::from_vec(pattern));
        if let Ok(re) = rule.regex() {
            prop_assert!(!re.windows(2).any(|w| w == b"(?"));
            let text = format!("(regex {})", quote(&re));
            let forms = read(&text).unwrap();
            prop_assert_eq!(forms[0].list().unwrap()[1].clone(), common::Sexp::Str(re.clone()));
            // It compiles, and it never matches a path outside its base.
            let mut outside = base.clone().into_os_string();
            outside.push("-sibling/x");
            prop_assert!(!regex_matches(&re, outside.as_bytes()));
        }
    }

    #[test]
    fn an_escaped_name_matches_itself_and_what_lies_below_only(
        base in prop::collection::vec(component(), 1..3),
        name in component(),
        below in component(),
    ) {
        let base = join(&base.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let rule = GlobRule::new(&base, OsString::from_vec(escape_glob(&name)));
        let re = rule.regex().unwrap();
        let exact = base.join(OsStr::from_bytes(&name));
        prop_assert!(regex_matches(&re, exact.as_os_str().as_bytes()));
        prop_assert!(regex_matches(&re, exact.join(OsStr::from_bytes(&below)).as_os_str().as_bytes()));
        let mut longer = exact.clone().into_os_string();
        longer.push("z");
        prop_assert!(!regex_matches(&re, longer.as_bytes()));
    }
}
