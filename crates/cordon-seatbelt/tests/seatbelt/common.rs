//! Shared by the integration tests: fixed inputs, an independent reader of the profile language,
//! a reader of `sandbox-exec`'s argument list, and a small evaluator that answers "would this
//! profile allow operation O on path P?" the way Seatbelt decides it (the last matching rule
//! wins), with regular expressions run by regex-automata.
//!
//! The reader follows the profile reader's own rules (TinyScheme's): strings with `\"`, `\\`,
//! `\n`, `\t`, `\r`, `\xHH` and octal escapes, `;` comments, atoms up to a delimiter. It shares no
//! code with the generator.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use cordon_policy::{FakeHost, Invocation, Plan, Policy, PolicyBuilder, Posture, Profile, Source};
use cordon_seatbelt::{Request, SandboxExec, SeatbeltExtras, build};

pub const STAGE: &str = "/opt/cordon/bin/cordon";

/// A host shaped like a Mac: `/tmp`, `/var` and `/etc` are links into `/private`, the user `u`
/// lives in `/Users/u` with a repository at `/Users/u/proj`, and `TMPDIR` is under `/var/folders`.
pub fn mac_host() -> FakeHost {
    FakeHost::new()
        .with_home("/Users/u")
        .dir("/private/tmp")
        .dir("/private/var/tmp")
        .dir("/private/var/folders/xx/yy/T")
        .dir("/private/var/db/timezone")
        .dir("/private/var/select")
        .file("/private/etc/passwd", "")
        .file("/private/etc/hosts", "")
        .dir("/private/etc/ssl")
        .symlink("/tmp", "private/tmp")
        .symlink("/var", "private/var")
        .symlink("/etc", "private/etc")
        .dir("/usr/bin")
        .dir("/usr/lib")
        .dir("/bin")
        .dir("/sbin")
        .dir("/System/Library")
        .dir("/Users/u/.ssh")
        .file("/Users/u/.netrc", "")
        .dir("/Users/u/.aws")
        .file("/Users/u/.cargo/credentials.toml", "")
        .dir("/Users/u/.cargo/bin")
        .dir("/Users/u/.rustup")
        .dir("/Users/u/proj/.git/hooks")
        .file("/Users/u/proj/.git/config", "")
        .dir("/Users/u/proj/src")
}

pub const MAC_WORKSPACE: &str = "/Users/u/proj";
pub const MAC_TMPDIR: &str = "/var/folders/xx/yy/T/cordon-1";

pub fn policy(profile: Profile, posture: Posture) -> Policy {
    let mut b = PolicyBuilder::new(profile);
    b.set_posture(posture, Source::Caller);
    b.build()
}

pub fn plan_at(policy: &Policy, host: &FakeHost, cwd: &str) -> Plan {
    Plan::resolve(policy, &Invocation::at(cwd), host).unwrap()
}

pub fn argv(parts: &[&str]) -> Vec<OsString> {
    parts.iter().map(OsString::from).collect()
}

pub fn build_with(
    plan: &Plan,
    host: &FakeHost,
    tmpdir: &str,
    extras: &SeatbeltExtras,
    stage: Option<&str>,
) -> SandboxExec {
    let argv = argv(&["/bin/sh", "-c", "cargo test"]);
    build(&Request {
        plan,
        host,
        tmpdir: Path::new(tmpdir),
        extras,
        stage: stage.map(Path::new),
        argv: &argv,
    })
    .unwrap()
}

/// The invocation for `profile` on the Mac-shaped host.
pub fn mac_exec(profile: Profile, posture: Posture, extras: &SeatbeltExtras) -> SandboxExec {
    let host = mac_host();
    let plan = plan_at(&policy(profile, posture), &host, MAC_WORKSPACE);
    build_with(&plan, &host, MAC_TMPDIR, extras, Some(STAGE))
}

// ---------------------------------------------------------------------------------------------
// The reader.

/// One datum of the profile language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sexp {
    List(Vec<Sexp>),
    Atom(String),
    Str(Vec<u8>),
}

impl Sexp {
    pub fn atom(&self) -> Option<&str> {
        match self {
            Sexp::Atom(a) => Some(a),
            _ => None,
        }
    }

    pub fn list(&self) -> Option<&[Sexp]> {
        match self {
            Sexp::List(l) => Some(l),
            _ => None,
        }
    }

    /// The same tree with every string replaced by an empty one: what "structure" means.
    pub fn shape(&self) -> Sexp {
        match self {
            Sexp::List(l) => Sexp::List(l.iter().map(Sexp::shape).collect()),
            Sexp::Atom(a) => Sexp::Atom(a.clone()),
            Sexp::Str(_) => Sexp::Str(Vec::new()),
        }
    }

    /// Every string in the tree, in order.
    pub fn strings(&self, out: &mut Vec<Vec<u8>>) {
        match self {
            Sexp::List(l) => l.iter().for_each(|s| s.strings(out)),
            Sexp::Atom(_) => {}
            Sexp::Str(s) => out.push(s.clone()),
        }
    }
}

/// The longest string the profile reader accepts (its buffer).
pub const READER_STRING_MAX: usize = 1023;

/// Reads a whole profile; an error names the byte offset.
pub fn read(text: &str) -> Result<Vec<Sexp>, String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut stack: Vec<Vec<Sexp>> = vec![Vec::new()];
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\n' | b'\t' | b'\r' => i += 1,
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' => {
                stack.push(Vec::new());
                i += 1;
            }
            b')' => {
                let done = stack.pop().ok_or(format!("unbalanced ) at {i}"))?;
                stack
                    .last_mut()
                    .ok_or(format!("unbalanced ) at {i}"))?
                    .push(Sexp::List(done));
                i += 1;
            }
            b'"' => {
                let (s, next) = read_string(bytes, i + 1)?;
                stack.last_mut().unwrap().push(Sexp::Str(s));
                i = next;
            }
            b'#' => return Err(format!("unexpected # at {i}")),
            c if c.is_ascii_graphic() => {
                let start = i;
                while i < bytes.len()
                    && bytes[i].is_ascii_graphic()
                    && !b"()\";".contains(&bytes[i])
                {
                    i += 1;
                }
                stack
                    .last_mut()
                    .unwrap()
                    .push(Sexp::Atom(text[start..i].to_owned()));
            }
            other => return Err(format!("unexpected byte {other:#x} at {i}")),
        }
    }
    if stack.len() != 1 {
        return Err("unclosed (".into());
    }
    Ok(stack.pop().unwrap())
}

fn read_string(bytes: &[u8], mut i: usize) -> Result<(Vec<u8>, usize), String> {
    let mut out = Vec::new();
    loop {
        let Some(&b) = bytes.get(i) else {
            return Err("unterminated string".into());
        };
        i += 1;
        match b {
            b'"' => break,
            b'\\' => {
                let Some(&e) = bytes.get(i) else {
                    return Err("unterminated escape".into());
                };
                i += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'x' | b'X' => {
                        let hex = bytes.get(i..i + 2).ok_or("short \\x escape")?;
                        let hex = std::str::from_utf8(hex).map_err(|e| e.to_string())?;
                        out.push(u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
                        i += 2;
                    }
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        let mut n = 1;
                        while n < 3 && matches!(bytes.get(i), Some(b'0'..=b'7')) {
                            v = v * 8 + u32::from(bytes[i] - b'0');
                            i += 1;
                            n += 1;
                        }
                        out.push(u8::try_from(v).map_err(|e| e.to_string())?);
                    }
                    other => out.push(other),
                }
            }
            other => out.push(other),
        }
        if out.len() > READER_STRING_MAX {
            return Err("string longer than the reader's buffer".into());
        }
    }
    Ok((out, i))
}

// ---------------------------------------------------------------------------------------------
// Rules.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Allow,
    Deny,
}

/// One `(allow|deny op… filter…)` form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub action: Action,
    pub ops: Vec<String>,
    pub filters: Vec<Sexp>,
}

/// The profile's forms: `(version 1)` first, then only rules. Panics on anything else: that
/// would be a change of structure.
pub fn rules(profile: &str) -> Vec<Rule> {
    let forms =
        read(profile).unwrap_or_else(|e| panic!("profile does not read back: {e}\n{profile}"));
    assert_eq!(
        forms.first(),
        Some(&Sexp::List(vec![
            Sexp::Atom("version".into()),
            Sexp::Atom("1".into())
        ])),
        "the profile must start with (version 1)"
    );
    forms[1..]
        .iter()
        .map(|form| {
            let items = form
                .list()
                .unwrap_or_else(|| panic!("top-level datum {form:?}"));
            let action = match items.first().and_then(Sexp::atom) {
                Some("allow") => Action::Allow,
                Some("deny") => Action::Deny,
                other => panic!("unexpected form head {other:?}"),
            };
            let ops: Vec<String> = items[1..]
                .iter()
                .map_while(|s| s.atom().map(str::to_owned))
                .collect();
            assert!(!ops.is_empty(), "a rule without operations: {form:?}");
            let filters = items[1 + ops.len()..].to_vec();
            assert!(
                filters.iter().all(|f| f.list().is_some()),
                "a filter that is not a list in {form:?}"
            );
            Rule {
                action,
                ops,
                filters,
            }
        })
        .collect()
}

/// Reads `sandbox-exec`'s argument list: `-p PROFILE`, `-DNAME=VALUE`…, `--`, command.
pub struct Args {
    pub profile: String,
    pub params: BTreeMap<String, OsString>,
    pub command: Vec<OsString>,
}

pub fn read_args(args: &[OsString]) -> Args {
    assert_eq!(args[0], "-p");
    let profile = args[1].to_str().expect("the profile is text").to_owned();
    let mut params = BTreeMap::new();
    let mut i = 2;
    while args[i] != "--" {
        let bytes = args[i].as_bytes();
        let rest = bytes.strip_prefix(b"-D").expect("only -D options after -p");
        let eq = rest.iter().position(|&b| b == b'=').expect("-DNAME=VALUE");
        let name = String::from_utf8(rest[..eq].to_vec()).unwrap();
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
            "{name}"
        );
        let old = params.insert(name.clone(), OsString::from_vec(rest[eq + 1..].to_vec()));
        assert!(old.is_none(), "parameter {name} given twice");
        i += 1;
    }
    Args {
        profile,
        params,
        command: args[i + 1..].to_vec(),
    }
}

// ---------------------------------------------------------------------------------------------
// The evaluator.

/// A Seatbelt regular expression (bytes) as a regex-automata pattern: bytes outside printable
/// ASCII become `\xHH` escapes, everything else is the same syntax.
pub fn to_automata(re: &[u8]) -> String {
    let mut out = String::new();
    for &b in re {
        if (0x20..0x7f).contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

pub fn regex_matches(re: &[u8], path: &[u8]) -> bool {
    use regex_automata::meta::Regex;
    use regex_automata::util::syntax;
    let compiled = Regex::builder()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .configure(Regex::config().utf8_empty(false))
        .build(&to_automata(re))
        .unwrap_or_else(|e| panic!("{:?} does not compile: {e}", String::from_utf8_lossy(re)));
    compiled.is_match(path)
}

fn subpath(path: &[u8], base: &[u8]) -> bool {
    let base = if base.len() > 1 && base.ends_with(b"/") {
        &base[..base.len() - 1]
    } else {
        base
    };
    path == base
        || (path.starts_with(base) && (base == b"/" || path.get(base.len()) == Some(&b'/')))
}

/// What a path-based question is about.
pub struct Query<'a> {
    pub op: &'a str,
    pub path: &'a [u8],
    pub is_dir: bool,
}

fn string_arg(s: &Sexp, params: &BTreeMap<String, OsString>) -> Vec<u8> {
    match s {
        Sexp::Str(b) => b.clone(),
        Sexp::List(l) if l.first().and_then(Sexp::atom) == Some("param") => {
            let Some(Sexp::Str(name)) = l.get(1) else {
                panic!("bad param form {l:?}")
            };
            let name = String::from_utf8(name.clone()).unwrap();
            params
                .get(&name)
                .unwrap_or_else(|| panic!("(param {name:?}) is not among the -D parameters"))
                .as_bytes()
                .to_vec()
        }
        other => panic!("not a string operand: {other:?}"),
    }
}

fn filter_matches(f: &Sexp, q: &Query<'_>, params: &BTreeMap<String, OsString>) -> bool {
    let l = f.list().unwrap();
    let head = l[0].atom().unwrap();
    match head {
        "subpath" => subpath(q.path, &string_arg(&l[1], params)),
        "literal" => q.path == string_arg(&l[1], params).as_slice(),
        "regex" => regex_matches(&string_arg(&l[1], params), q.path),
        "vnode-type" => q.is_dir && l[1].atom() == Some("DIRECTORY"),
        "require-all" => l[1..].iter().all(|f| filter_matches(f, q, params)),
        "require-any" => l[1..].iter().any(|f| filter_matches(f, q, params)),
        "require-not" => !filter_matches(&l[1], q, params),
        // Filters about something other than a path never match a path question.
        _ => false,
    }
}

fn op_matches(rule_op: &str, op: &str) -> bool {
    rule_op == "default"
        || rule_op == op
        || rule_op
            .strip_suffix('*')
            .is_some_and(|prefix| op.starts_with(prefix))
}

/// The decision for `q`: the last rule whose operation and filters match.
pub fn decide(rules: &[Rule], params: &BTreeMap<String, OsString>, q: &Query<'_>) -> Action {
    let mut verdict = None;
    for r in rules {
        if !r.ops.iter().any(|o| op_matches(o, q.op)) {
            continue;
        }
        if r.filters.is_empty() || r.filters.iter().any(|f| filter_matches(f, q, params)) {
            verdict = Some(r.action);
        }
    }
    verdict.expect("(deny default) matches everything")
}

/// A profile read back and ready for questions.
pub struct Judge {
    pub rules: Vec<Rule>,
    pub params: BTreeMap<String, OsString>,
}

impl Judge {
    pub fn new(exec: &SandboxExec) -> Judge {
        let args = read_args(&exec.args());
        Judge {
            rules: rules(&args.profile),
            params: args.params,
        }
    }

    pub fn allows(&self, op: &str, path: impl AsRef<OsStr>) -> bool {
        self.allows_kind(op, path, false)
    }

    pub fn allows_kind(&self, op: &str, path: impl AsRef<OsStr>, is_dir: bool) -> bool {
        let q = Query {
            op,
            path: path.as_ref().as_bytes(),
            is_dir,
        };
        decide(&self.rules, &self.params, &q) == Action::Allow
    }
}

pub fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}
