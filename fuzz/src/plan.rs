//! A [`Plan`] and the rest of a generator request, from a script.
//!
//! The plan starts as the Shell profile resolved on [`FakeHost::typical`] at `/home/u/proj`
//! (so an empty script is an ordinary request) and each line changes it. Paths go into the plan
//! exactly as written: relative, non-canonical, NUL-laden and overlapping paths are the point,
//! since the generators must refuse or handle every one of them.
//!
//! | line | effect |
//! |---|---|
//! | `Z` | empty every path list of the plan |
//! | `M` / `N` | minimal posture / network allowed |
//! | `w P` | writable root |
//! | `c P` / `o P` / `h P` | cwd / workspace / home |
//! | `p P` / `q P` | protected directory / protected file (its root: the first writable root) |
//! | `d P` / `f P` | credential mask on a directory / a file (`d P\tR`: requested as `R`) |
//! | `s P` / `S P` | skipped: missing mask / missing protected path |
//! | `t P` | private directory (tmpfs) |
//! | `r P` / `r S\tD` | read-only bind of `P` at `P` / of `S` at `D` |
//! | `l L\tT` | symlink at `L` pointing to `T` |
//! | `a ARG` | one argument of the command (the first is the program) |
//! | `e NAME=VALUE` | one variable of the child environment |
//! | `x P` | the stage binary |
//! | `T P` | the Seatbelt private temporary directory |
//! | `g B\tPAT` / `G B\tPAT` | Seatbelt glob rule: deny read / deny write of `PAT` below `B` |
//! | `H P` / `L P\tT` | a directory / a symlink on the fake host (Seatbelt spellings) |

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cordon_policy::{
    Bind, CredentialMask, EntryKind, FakeHost, Invocation, Network, Plan, Policy, Posture, Profile,
    ProtectedPath, SkipReason, Skipped, Symlink,
};

use crate::Line;

/// Everything a generator request holds besides fixed settings.
#[derive(Debug, Clone)]
pub struct Case {
    /// The plan, as fuzzed.
    pub plan: Plan,
    /// The fake host the plan's paths are spelled on.
    pub host: FakeHost,
    /// The command.
    pub argv: Vec<OsString>,
    /// The child environment.
    pub env: BTreeMap<OsString, OsString>,
    /// The stage binary, if any.
    pub stage: Option<PathBuf>,
    /// Seatbelt's private temporary directory.
    pub tmpdir: PathBuf,
    /// Seatbelt glob rules that deny reading: `(base, pattern)`.
    pub deny_read: Vec<(PathBuf, OsString)>,
    /// Seatbelt glob rules that deny writing: `(base, pattern)`.
    pub deny_write: Vec<(PathBuf, OsString)>,
}

/// The workspace of the base plan.
pub const WORKSPACE: &str = "/home/u/proj";

fn path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

fn os(bytes: &[u8]) -> OsString {
    OsStr::from_bytes(bytes).to_owned()
}

/// The Shell profile resolved on the typical fake host at [`WORKSPACE`]: every request's
/// starting point, resolved once per process.
pub fn base_plan() -> Option<&'static Plan> {
    static BASE: OnceLock<Option<Plan>> = OnceLock::new();
    BASE.get_or_init(|| {
        Plan::resolve(
            &Policy::for_profile(Profile::Shell),
            &Invocation::at(WORKSPACE),
            &FakeHost::typical(),
        )
        .ok()
    })
    .as_ref()
}

/// Decodes a script into a request. `None` only if the base plan does not resolve (a bug in the
/// fuzz setup, not in the input).
pub fn decode(lines: &[Line]) -> Option<Case> {
    let mut host = FakeHost::typical();
    for line in lines {
        let text = String::from_utf8_lossy(&line.operand);
        match line.op {
            b'H' if text.starts_with('/') => host = host.dir(&text),
            b'L' => {
                if let (link, Some(target)) = line.pair() {
                    let link = String::from_utf8_lossy(link);
                    if link.starts_with('/') && link.len() > 1 {
                        host = host.symlink(&link, &String::from_utf8_lossy(target));
                    }
                }
            }
            _ => {}
        }
    }
    let mut case = Case {
        plan: base_plan()?.clone(),
        host,
        argv: Vec::new(),
        env: BTreeMap::new(),
        stage: None,
        tmpdir: PathBuf::from("/tmp/cordon-fuzz"),
        deny_read: Vec::new(),
        deny_write: Vec::new(),
    };
    let plan = &mut case.plan;
    for line in lines {
        let (first, second) = line.pair();
        let p = path(&line.operand);
        match line.op {
            b'Z' => {
                plan.read_only.clear();
                plan.symlinks.clear();
                plan.private_dirs.clear();
                plan.writable.clear();
                plan.protected.clear();
                plan.masks.clear();
                plan.skipped.clear();
            }
            b'M' => plan.posture = Posture::Minimal,
            b'N' => plan.network = Network::Allowed,
            // A plan never holds a writable root in a system tree (`Plan::resolve` refuses it).
            b'w' if !cordon_policy::Plan::SYSTEM_TREES
                .iter()
                .any(|t| p.starts_with(t)) =>
            {
                plan.writable.push(p)
            }
            b'c' => plan.cwd = p,
            b'o' => plan.workspace = p,
            b'h' => plan.home = p,
            // A protected path lies strictly inside a writable root (`Plan::resolve` keeps no
            // other), which is its root.
            b'p' | b'q' => {
                if let Some(root) = plan
                    .writable
                    .iter()
                    .find(|r| p.starts_with(r) && p != **r)
                    .cloned()
                {
                    plan.protected.push(ProtectedPath {
                        path: p,
                        kind: if line.op == b'p' {
                            EntryKind::Dir
                        } else {
                            EntryKind::File
                        },
                        root,
                    })
                }
            }
            b'd' | b'f' => plan.masks.push(CredentialMask {
                target: path(first),
                requested: path(second.unwrap_or(first)),
                kind: if line.op == b'd' {
                    EntryKind::Dir
                } else {
                    EntryKind::File
                },
            }),
            b's' | b'S' => plan.skipped.push(Skipped {
                path: p,
                reason: if line.op == b's' {
                    SkipReason::MaskMissing
                } else {
                    SkipReason::ProtectedMissing
                },
            }),
            b't' => plan.private_dirs.push(p),
            b'r' => plan.read_only.push(Bind {
                source: path(first),
                dest: path(second.unwrap_or(first)),
            }),
            b'l' => {
                if let Some(target) = second {
                    plan.symlinks.push(Symlink {
                        link: path(first),
                        target: path(target),
                    });
                }
            }
            b'a' => case.argv.push(os(&line.operand)),
            b'e' => {
                let (name, value) = match line.operand.iter().position(|&b| b == b'=') {
                    Some(i) => (&line.operand[..i], &line.operand[i + 1..]),
                    None => (&line.operand[..], &b""[..]),
                };
                case.env.insert(os(name), os(value));
            }
            b'x' => case.stage = Some(p),
            b'T' => case.tmpdir = p,
            b'g' | b'G' => {
                let rule = (path(first), os(second.unwrap_or(b"")));
                if line.op == b'g' {
                    case.deny_read.push(rule);
                } else {
                    case.deny_write.push(rule);
                }
            }
            _ => {}
        }
    }
    if case.argv.is_empty() {
        case.argv = vec!["/bin/sh".into(), "-c".into(), "cargo test".into()];
    }
    Some(case)
}

/// True when `path` is absolute, has no `..` component and no NUL byte: what the generators
/// call canonical.
pub fn is_clean(path: &Path) -> bool {
    path.is_absolute()
        && !path.as_os_str().as_bytes().contains(&0)
        && !path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
}

/// The same plan with every list in reverse order: generators must not care.
pub fn reversed(plan: &Plan) -> Plan {
    let mut p = plan.clone();
    p.read_only.reverse();
    p.symlinks.reverse();
    p.private_dirs.reverse();
    p.writable.reverse();
    p.protected.reverse();
    p.masks.reverse();
    p.skipped.reverse();
    p
}
