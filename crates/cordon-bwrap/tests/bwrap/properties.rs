//! No path, however hostile, changes the structure of the list, and the mount order holds for
//! every plan. Plans are built directly (every field of `Plan` is public) from a small pool of
//! hostile path components, so that generated paths nest, collide and tie.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::common::{self, FDS, Step, features, read_options};
use cordon_bwrap::{BwrapArgs, BwrapError, Request, STAGE_PATH, build};
use cordon_policy::{
    Bind, CredentialMask, EntryKind, Network, Plan, Posture, Profile, ProtectedPath, Symlink,
};
use proptest::prelude::*;

fn component() -> impl Strategy<Value = OsString> {
    let fixed = prop::sample::select(vec![
        "a b",
        "it's",
        "\"q\"",
        "new\nline",
        "$(rm -rf ~)",
        "`id`",
        "-rf",
        "--bind",
        "--",
        "*",
        "~",
        "back\\slash",
        "semi;colon",
        "tab\there",
        "é",
        ".hidden",
        "x",
    ])
    .prop_map(OsString::from);
    let bytes = prop::collection::vec(
        any::<u8>().prop_filter("no NUL or /", |b| *b != 0 && *b != b'/'),
        1..12,
    )
    .prop_map(OsString::from_vec);
    let long = (1usize..3, any::<u8>()).prop_map(|(n, b)| {
        let b = if b == 0 || b == b'/' { b'L' } else { b };
        OsString::from_vec(vec![b; 120 * n])
    });
    prop_oneof![4 => fixed, 4 => bytes, 1 => long]
        .prop_filter("canonical, and clear of the reserved /run", |c| {
            c != "." && c != ".." && c != "run"
        })
}

fn join(pool: &[OsString], picks: &[usize]) -> PathBuf {
    let mut p = PathBuf::from("/");
    for i in picks {
        p.push(&pool[i % pool.len()]);
    }
    p
}

#[derive(Debug, Clone)]
struct Case {
    plan: Plan,
    stage: Option<PathBuf>,
    argv: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
}

fn env_name() -> impl Strategy<Value = OsString> {
    prop::collection::vec(
        any::<u8>().prop_filter("settable", |b| *b != 0 && *b != b'='),
        1..10,
    )
    .prop_map(OsString::from_vec)
}

fn os_value() -> impl Strategy<Value = OsString> {
    prop::collection::vec(any::<u8>().prop_filter("no NUL", |b| *b != 0), 0..16)
        .prop_map(OsString::from_vec)
}

fn case() -> impl Strategy<Value = Case> {
    let pool = prop::collection::vec(component(), 2..6);
    pool.prop_flat_map(|pool| {
        let path = prop::collection::vec(0usize..8, 1..4);
        let paths = |max| prop::collection::vec(path.clone(), 0..max);
        (
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(path.clone(), 1..3),
            paths(3),
            paths(3),
            prop::collection::vec((path.clone(), component()), 0..2),
            prop::collection::vec((0usize..3, prop::collection::vec(0usize..8, 1..3)), 0..3),
            prop::collection::vec(
                (any::<bool>(), 0usize..3, path.clone(), any::<bool>()),
                0..4,
            ),
            (
                prop::option::of(path.clone()),
                (
                    os_value().prop_filter("a program", |v| !v.is_empty()),
                    prop::collection::vec(os_value(), 0..3),
                )
                    .prop_map(|(program, mut args)| {
                        args.insert(0, program);
                        args
                    }),
                prop::collection::btree_map(env_name(), os_value(), 0..3),
            ),
        )
            .prop_map(
                move |(
                    minimal,
                    allowed,
                    writable,
                    private,
                    read_only,
                    symlinks,
                    protected,
                    masks,
                    (stage, argv, env),
                )| {
                    let mut plan = base_plan();
                    plan.posture = if minimal {
                        Posture::Minimal
                    } else {
                        Posture::Host
                    };
                    plan.network = if allowed {
                        Network::Allowed
                    } else {
                        Network::Denied
                    };
                    // Writable roots: none inside another, as the plan promises.
                    let mut roots: Vec<PathBuf> = writable.iter().map(|w| join(&pool, w)).collect();
                    roots.sort();
                    roots.dedup();
                    let mut cover: Vec<PathBuf> = Vec::new();
                    for r in roots {
                        if !cover.iter().any(|c| r.starts_with(c)) {
                            cover.push(r);
                        }
                    }
                    plan.cwd = cover[0].clone();
                    plan.workspace = cover[0].clone();
                    plan.private_dirs = private.iter().map(|p| join(&pool, p)).collect();
                    // The stage needs a private /run, as both postures have.
                    plan.private_dirs.push("/run".into());
                    plan.read_only = read_only
                        .iter()
                        .map(|p| {
                            let p = join(&pool, p);
                            Bind {
                                source: p.clone(),
                                dest: p,
                            }
                        })
                        .collect();
                    plan.symlinks = symlinks
                        .iter()
                        .map(|(p, target)| Symlink {
                            link: join(&pool, p),
                            target: PathBuf::from(target),
                        })
                        .collect();
                    plan.protected = protected
                        .iter()
                        .map(|(root, suffix)| {
                            let root = cover[root % cover.len()].clone();
                            let mut path = root.clone();
                            for i in suffix {
                                path.push(&pool[i % pool.len()]);
                            }
                            ProtectedPath {
                                path,
                                kind: EntryKind::Dir,
                                root,
                            }
                        })
                        .collect();
                    plan.masks = masks
                        .iter()
                        .map(|(inside_root, root, p, dir)| {
                            let target = if *inside_root {
                                cover[root % cover.len()]
                                    .join(join(&pool, p).strip_prefix("/").unwrap())
                            } else {
                                join(&pool, p)
                            };
                            CredentialMask {
                                requested: target.clone(),
                                target,
                                kind: if *dir {
                                    EntryKind::Dir
                                } else {
                                    EntryKind::File
                                },
                            }
                        })
                        .collect();
                    plan.writable = cover;
                    Case {
                        plan,
                        stage: stage.map(|s| join(&pool, &s)),
                        argv,
                        env,
                    }
                },
            )
    })
}

fn base_plan() -> Plan {
    common::typical_plan(Profile::Shell, Posture::Host)
}

fn build_case(case: &Case) -> Result<BwrapArgs, BwrapError> {
    let features = features();
    build(&Request {
        plan: &case.plan.guard(&cordon_policy::FakeHost::typical()),
        brokers: &[],
        features: &features,
        env: &case.env,
        fds: FDS,
        stage: case.stage.as_deref(),
        argv: &case.argv,
    })
}

fn step(flag: &str, operands: &[&OsStr]) -> Step {
    Step {
        flag: flag.to_owned(),
        operands: operands.iter().map(|o| o.to_os_string()).collect(),
    }
}

fn strictly_below(path: &Path, base: &Path) -> bool {
    path != base && path.starts_with(base)
}

/// What the plan says must be mounted, written out independently of the crate: each entry of
/// each list as its steps, minus what lies strictly below a mask.
fn expected_mounts(case: &Case) -> Vec<Step> {
    // The builder takes the guarded plan: the pins and placeholders are part of what it mounts.
    let guarded = case.plan.guard(&cordon_policy::FakeHost::typical());
    let plan = guarded.plan();
    let mut tagged: Vec<(u8, PathBuf, Vec<Step>)> = vec![
        (0, "/dev".into(), vec![step("--dev", &["/dev".as_ref()])]),
        (0, "/proc".into(), vec![step("--proc", &["/proc".as_ref()])]),
    ];
    for (flag, name) in [
        ("--ro-bind", "sys"),
        ("--ro-bind-try", "irq"),
        ("--ro-bind-try", "bus"),
    ] {
        let p = Path::new("/proc").join(name);
        tagged.push((
            0,
            p.clone(),
            vec![step(flag, &[p.as_os_str(), p.as_os_str()])],
        ));
    }
    if plan.posture == Posture::Host {
        tagged.push((
            0,
            "/".into(),
            vec![step("--ro-bind", &["/".as_ref(), "/".as_ref()])],
        ));
    }
    for p in &plan.private_dirs {
        tagged.push((1, p.clone(), vec![step("--tmpfs", &[p.as_os_str()])]));
    }
    // A size for the private tmpfs brings a sized private /dev/shm (common::features has
    // `--size`).
    if plan.limits.tmp_bytes.is_some() {
        let shm: &std::ffi::OsStr = "/dev/shm".as_ref();
        tagged.push((
            1,
            shm.into(),
            vec![step("--perms", &["1777".as_ref()]), step("--tmpfs", &[shm])],
        ));
    }
    for b in &plan.read_only {
        let s = step("--ro-bind", &[b.source.as_os_str(), b.dest.as_os_str()]);
        tagged.push((2, b.dest.clone(), vec![s]));
    }
    for s in &plan.symlinks {
        let st = step("--symlink", &[s.target.as_os_str(), s.link.as_os_str()]);
        tagged.push((3, s.link.clone(), vec![st]));
    }
    for w in &plan.writable {
        tagged.push((
            4,
            w.clone(),
            vec![step("--bind", &[w.as_os_str(), w.as_os_str()])],
        ));
    }
    for p in &plan.protected {
        let s = step("--ro-bind", &[p.path.as_os_str(), p.path.as_os_str()]);
        tagged.push((5, p.path.clone(), vec![s]));
    }
    if let Some(stage) = &case.stage {
        let s = step("--ro-bind", &[stage.as_os_str(), STAGE_PATH.as_ref()]);
        tagged.push((6, STAGE_PATH.into(), vec![s]));
    }
    for m in &plan.masks {
        let t = m.target.as_os_str();
        let steps = match m.kind {
            EntryKind::Dir => vec![
                step("--perms", &["0000".as_ref()]),
                step("--tmpfs", &[t]),
                step("--remount-ro", &[t]),
            ],
            _ => vec![step("--ro-bind", &["/dev/null".as_ref(), t])],
        };
        tagged.push((7, m.target.clone(), steps));
    }
    tagged.sort();
    tagged.dedup();
    let masks: Vec<PathBuf> = plan.masks.iter().map(|m| m.target.clone()).collect();
    let mut out: Vec<Step> = tagged
        .into_iter()
        .filter(|(_, dest, _)| !masks.iter().any(|m| strictly_below(dest, m)))
        .flat_map(|(_, _, steps)| steps)
        .collect();
    out.sort();
    out
}

const MOUNT_FLAGS: &[&str] = &[
    "--ro-bind",
    "--ro-bind-try",
    "--bind",
    "--tmpfs",
    "--dev",
    "--proc",
    "--symlink",
    "--perms",
    "--remount-ro",
];

fn is_mask_at(steps: &[Step], i: usize) -> bool {
    let s = &steps[i];
    (s.flag == "--ro-bind" && s.operands[0] == "/dev/null")
        || (s.flag == "--tmpfs" && i > 0 && steps[i - 1].flag == "--perms")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn hostile_paths_never_change_the_structure(case in case()) {
        let args = build_case(&case).unwrap();
        let options = args.options();
        // The structure: an independent reader that knows each option's arity consumes the
        // whole list; an unknown option or a missing operand fails the test.
        let steps = read_options(&options);
        prop_assert_eq!(args.steps().concat(), options.clone());

        // Every mount step is exactly the one the plan asks for, each path one whole argument
        // in its slot, and every path slot absolute (so never readable as an option).
        let mut seal = 0;
        let mut mounts: Vec<Step> = Vec::new();
        for s in &steps {
            if !MOUNT_FLAGS.contains(&s.flag.as_str()) {
                continue;
            }
            if s.flag == "--remount-ro" && s.operands[0] == "/" {
                seal += 1;
                continue;
            }
            let slots: &[OsString] = match s.flag.as_str() {
                "--symlink" => &s.operands[1..],
                "--perms" => &[],
                _ => &s.operands,
            };
            for slot in slots {
                prop_assert!(slot.as_bytes().starts_with(b"/"), "{:?} in {:?}", slot, s);
            }
            mounts.push(s.clone());
        }
        mounts.sort();
        prop_assert_eq!(mounts, expected_mounts(&case));
        // Every private tmpfs (each `--tmpfs` that is not a mask) is sized by the policy.
        let size = case.plan.limits.tmp_bytes.map(|b| OsString::from(b.to_string()));
        for (i, s) in steps.iter().enumerate() {
            if s.flag == "--tmpfs" && !is_mask_at(&steps, i) {
                let before = i.checked_sub(1).map(|j| &steps[j]);
                match &size {
                    Some(n) => prop_assert!(
                        before.is_some_and(|b| b.flag == "--size" && &b.operands[0] == n),
                        "{:?} is not sized", s
                    ),
                    None => prop_assert!(before.is_none_or(|b| b.flag != "--size")),
                }
            }
        }
        prop_assert_eq!(seal, usize::from(case.plan.posture == Posture::Minimal));

        // The process part.
        let at = |flag: &str| steps.iter().filter(|s| s.flag == flag).count();
        prop_assert_eq!(at("--chdir"), 1);
        prop_assert_eq!(at("--clearenv"), 1);
        prop_assert_eq!(at("--seccomp"), 1);
        prop_assert_eq!(at("--unshare-net"), usize::from(case.plan.network == Network::Denied));
        let chdir = steps.iter().find(|s| s.flag == "--chdir").unwrap();
        prop_assert_eq!(&chdir.operands[0], case.plan.cwd.as_os_str());
        let clear = steps.iter().position(|s| s.flag == "--clearenv").unwrap();
        let setenv: Vec<(usize, &Step)> =
            steps.iter().enumerate().filter(|(_, s)| s.flag == "--setenv").collect();
        prop_assert!(setenv.iter().all(|(i, _)| *i > clear));
        let pairs: Vec<(OsString, OsString)> = setenv
            .iter()
            .map(|(_, s)| (s.operands[0].clone(), s.operands[1].clone()))
            .collect();
        let wanted: Vec<(OsString, OsString)> = case.env.clone().into_iter().collect();
        prop_assert_eq!(pairs, wanted);

        // The command, untouched, after `--`.
        let mut command = Vec::new();
        if case.stage.is_some() {
            command.push(OsString::from(STAGE_PATH));
        }
        command.extend(case.argv.iter().cloned());
        prop_assert_eq!(args.command(), command.as_slice());
        let list = args.to_list();
        prop_assert_eq!(&list[options.len()], "--");
        prop_assert_eq!(&list[options.len() + 1..], command.as_slice());

        // The --args bytes read back as exactly the options.
        let bytes = args.to_nul_separated().unwrap();
        let back: Vec<OsString> = bytes
            .split(|b| *b == 0)
            .take(options.len())
            .map(|s| OsStr::from_bytes(s).to_os_string())
            .collect();
        prop_assert_eq!(back, options);
        prop_assert_eq!(bytes.iter().filter(|b| **b == 0).count(), steps.iter().map(|s| 1 + s.operands.len()).sum::<usize>());
    }

    #[test]
    fn the_mount_order_holds_for_every_plan(case in case()) {
        let args = build_case(&case).unwrap();
        let steps: Vec<Step> = read_options(&args.options())
            .into_iter()
            .filter(|s| s.dest().is_some() && !(s.flag == "--remount-ro" && s.operands[0] == "/"))
            .collect();
        let dests: Vec<PathBuf> = steps.iter().map(|s| s.dest().unwrap()).collect();
        for i in 0..steps.len() {
            for j in i + 1..steps.len() {
                // Parent before child: nothing is followed by a mount of one of its ancestors.
                prop_assert!(
                    !strictly_below(&dests[i], &dests[j]),
                    "{:?} comes before its ancestor {:?}", steps[i], steps[j]
                );
            }
        }
        for m in (0..steps.len()).filter(|m| is_mask_at(&steps, *m)) {
            for (j, dest) in dests.iter().enumerate() {
                let inside_or_same = dests[m].starts_with(dest);
                let mask_step = is_mask_at(&steps, j) || (steps[j].flag == "--remount-ro" && j == m + 1);
                // Every bind, tmpfs or symlink that contains the mask comes before it.
                if inside_or_same && !mask_step {
                    prop_assert!(j < m, "{:?} covers the mask {:?}", steps[j], steps[m]);
                }
                // Nothing after the mask lies below it.
                if j > m {
                    prop_assert!(!strictly_below(dest, &dests[m]), "{:?} below the mask {:?}", steps[j], steps[m]);
                }
            }
        }
        // Every private directory comes before any bind below it.
        for (t, s) in steps.iter().enumerate().filter(|(_, s)| s.flag == "--tmpfs") {
            for (b, other) in steps.iter().enumerate() {
                if other.flag.ends_with("bind") && strictly_below(&dests[b], &dests[t]) {
                    prop_assert!(t < b, "{:?} after {:?}", s, other);
                }
            }
        }
        // Protected paths after their writable root. A protected path is bound onto itself:
        // the stage's bind has the same source when the generator gives both one path.
        let onto_itself = |s: &Step, flag: &str, path: &Path| {
            s.flag == flag && s.operands.len() == 2 && s.operands.iter().all(|o| o == path.as_os_str())
        };
        for p in &case.plan.protected {
            let root = steps.iter().position(|s| onto_itself(s, "--bind", &p.root));
            let prot = steps.iter().rposition(|s| onto_itself(s, "--ro-bind", &p.path));
            if let (Some(root), Some(prot)) = (root, prot) {
                prop_assert!(root < prot);
            }
        }
    }

    #[test]
    fn a_nul_byte_anywhere_is_refused_never_emitted(case in case(), which in 0usize..5, at in any::<prop::sample::Index>()) {
        let mut case = case;
        let poison = |p: &mut PathBuf| {
            let mut bytes = p.as_os_str().as_bytes().to_vec();
            let i = 1 + at.index(bytes.len());
            bytes.insert(i.min(bytes.len()), 0);
            *p = PathBuf::from(OsString::from_vec(bytes));
        };
        match which {
            0 => poison(&mut case.plan.writable[0]),
            1 => poison(&mut case.plan.cwd),
            2 => case.argv.push(OsString::from_vec(b"a\0b".to_vec())),
            3 => { case.env.insert("K".into(), OsString::from_vec(b"v\0".to_vec())); }
            _ => poison(&mut case.plan.private_dirs[0]),
        }
        let result = build_case(&case);
        prop_assert!(matches!(result, Err(BwrapError::NulByte { .. })), "{:?}", result);
    }
}
