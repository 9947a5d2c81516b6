//! The profile itself: a [`Plan`] (with the host's symlink facts, the private temporary directory
//! and any glob rules) → SBPL text plus the `-D` parameters it names.
//!
//! The order of the sections is part of the meaning. Seatbelt lets the last matching rule win,
//! so everything that takes access away — protected paths, masks, pinned directories — comes
//! after everything that grants it, and nothing is granted after it.

use std::collections::{BTreeMap, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cordon_policy::{Network, Plan, Posture, SkipReason};

use crate::error::{SeatbeltError, show};
use crate::glob::GlobRule;
use crate::lists::{
    CHARACTER_DEVICES, IOCTL_DEVICES, MACH_LOOKUP, MACH_LOOKUP_NETWORK, MINIMAL_SYSTEM_READ,
    RESOLVER_SOCKET, Reasoned, SYSCTL_READ, Sysctl,
};
use crate::sbpl::{Action, Filter, Item, Operand, Rule, Section, quote, render};
use crate::spelling::{spellings, strictly_within};
use crate::{GENERATOR_VERSION, Param, Request};

/// The parameters of one profile: a name per (role, path), numbered per role in order of first
/// use, so the same plan always gives the same names.
#[derive(Debug, Default)]
struct Params {
    list: Vec<Param>,
    seen: BTreeMap<(&'static str, PathBuf), String>,
    next: BTreeMap<&'static str, usize>,
}

impl Params {
    fn name(&mut self, role: &'static str, path: &Path) -> String {
        if let Some(name) = self.seen.get(&(role, path.to_path_buf())) {
            return name.clone();
        }
        let n = self.next.entry(role).or_insert(0);
        let name = format!("{role}_{n}");
        *n += 1;
        self.seen.insert((role, path.to_path_buf()), name.clone());
        self.list.push(Param {
            name: name.clone(),
            value: path.as_os_str().to_owned(),
        });
        name
    }

    fn subpaths(&mut self, role: &'static str, paths: &[PathBuf]) -> Vec<Filter> {
        paths
            .iter()
            .map(|p| Filter::Subpath(Operand::Param(self.name(role, p))))
            .collect()
    }

    fn literals(&mut self, role: &'static str, paths: &[PathBuf]) -> Vec<Filter> {
        paths
            .iter()
            .map(|p| Filter::Literal(Operand::Param(self.name(role, p))))
            .collect()
    }
}

fn check_path(what: &'static str, path: &Path) -> Result<(), SeatbeltError> {
    if path.as_os_str().as_bytes().contains(&0) {
        return Err(SeatbeltError::NulByte {
            what,
            value: show(path.as_os_str().as_bytes()),
        });
    }
    if !path.is_absolute() {
        return Err(SeatbeltError::NotAbsolute {
            what,
            path: show(path.as_os_str().as_bytes()),
        });
    }
    Ok(())
}

/// Drops every path equal to an earlier one, keeping the order of first appearance, in linear
/// time: a plan may name ten thousand masks, and a `contains` scan per path was quadratic.
/// `Path` hashes and compares by component.
fn dedup_in_order(paths: &mut Vec<PathBuf>) {
    let mut seen: HashSet<PathBuf> = HashSet::with_capacity(paths.len());
    paths.retain(|p| seen.insert(p.clone()));
}

/// The paths of the plan (and request) the profile names, each in every spelling.
struct Paths {
    writable: Vec<PathBuf>,
    tmpdir: Vec<PathBuf>,
    protected: Vec<PathBuf>,
    masks: Vec<PathBuf>,
    private: Vec<PathBuf>,
    read: Vec<PathBuf>,
}

fn collect(req: &Request<'_>) -> Result<Paths, SeatbeltError> {
    let plan = req.plan;
    let host = req.host;
    let spelled = |what: &'static str, p: &Path| -> Result<Vec<PathBuf>, SeatbeltError> {
        check_path(what, p)?;
        // Seatbelt compares path strings, so `//h` or `/h/./` would match nothing, yet they
        // compare equal to `/h` by component and would take its place below: spell each path
        // canonically first (doubled separators, `.` and a trailing `/` removed).
        let canonical: PathBuf = p.components().collect();
        Ok(spellings(&canonical, host))
    };
    let mut paths = Paths {
        writable: Vec::new(),
        tmpdir: spelled("temporary directory", req.tmpdir)?,
        protected: Vec::new(),
        masks: Vec::new(),
        private: Vec::new(),
        read: Vec::new(),
    };
    for w in &plan.writable {
        paths.writable.extend(spelled("writable root", w)?);
    }
    // Files cordon puts back after a run elsewhere are denied here: nothing restores them.
    for p in plan.protected.iter().chain(&plan.restored) {
        paths.protected.extend(spelled("protected path", &p.path)?);
    }
    for m in &plan.masks {
        paths.masks.extend(spelled("credential mask", &m.target)?);
        paths
            .masks
            .extend(spelled("credential mask", &m.requested)?);
    }
    // Seatbelt matches names, not mounts: a path that does not exist yet can be ruled on too, so
    // a mask or protected path created later is covered from the start (unlike a bind mount).
    for s in &plan.skipped {
        match s.reason {
            SkipReason::MaskMissing => {
                paths.masks.extend(spelled("credential mask", &s.path)?);
            }
            // cordon's own missing directory: no write below it, so it cannot be created with
            // anything in it.
            SkipReason::ProtectedMissing | SkipReason::OwnStateMissing => {
                paths.protected.extend(spelled("protected path", &s.path)?);
            }
            // Outside every writable root: read-only already.
            SkipReason::ProtectedOutsideWritable => {}
            // Below the hidden home: the private-directory rule denies it; named again so that
            // a visible tree granted later cannot reopen it.
            SkipReason::HiddenWithHome => {
                paths.masks.extend(spelled("credential mask", &s.path)?);
            }
        }
    }
    for d in &plan.private_dirs {
        paths.private.extend(spelled("private directory", d)?);
    }
    for b in &plan.read_only {
        paths.read.extend(spelled("read-only tree", &b.source)?);
        paths.read.extend(spelled("read-only tree", &b.dest)?);
    }
    for s in &plan.symlinks {
        paths.read.extend(spelled("symlink", &s.link)?);
    }
    if let Some(stage) = req.stage {
        paths.read.extend(spelled("stage", stage)?);
    }
    for list in [
        &mut paths.writable,
        &mut paths.protected,
        &mut paths.masks,
        &mut paths.private,
        &mut paths.read,
    ] {
        dedup_in_order(list);
    }
    Ok(paths)
}

/// Each glob rule, once per spelling of its base.
fn glob_regexes(req: &Request<'_>, rules: &[GlobRule]) -> Result<Vec<Vec<u8>>, SeatbeltError> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for rule in rules {
        rule.regex()?; // refuse a bad rule under its own spelling first
        for base in spellings(&rule.base, req.host) {
            let re = rule.regex_at(&base)?;
            if !out.contains(&re) {
                out.push(re);
            }
        }
    }
    Ok(out)
}

/// Directories that must not be renamed or removed: every writable root (moving one into another
/// root or into TMPDIR would carry its protected paths out from under their rules), and every
/// directory strictly between a root and a protected path, a mask, or a glob's literal prefix.
fn pins(req: &Request<'_>, paths: &Paths) -> Result<Vec<PathBuf>, SeatbeltError> {
    let roots: Vec<PathBuf> = paths
        .writable
        .iter()
        .chain(&paths.tmpdir)
        .cloned()
        .collect();
    let mut out: Vec<PathBuf> = roots.clone();
    let mut guarded: Vec<PathBuf> = paths
        .protected
        .iter()
        .chain(&paths.masks)
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    for rule in req.extras.deny_read.iter().chain(&req.extras.deny_write) {
        for base in spellings(&rule.base, req.host) {
            let spelled = GlobRule::new(base, rule.pattern.clone());
            guarded.extend(spelled.static_dirs()?);
        }
    }
    for dir in guarded {
        for root in &roots {
            if !dir.starts_with(root) {
                continue;
            }
            for ancestor in dir.ancestors() {
                if !strictly_within(ancestor, root) {
                    break;
                }
                out.push(ancestor.to_path_buf());
            }
        }
    }
    // A stable sort keeps equal paths in the order they came, so dedup keeps the first.
    out.sort();
    out.dedup();
    Ok(out)
}

fn reasoned_items<T>(lists: &[Reasoned<T>], filter: impl Fn(&T) -> Filter) -> Vec<Item> {
    let mut items = Vec::new();
    for list in lists {
        items.push(Item::Comment(list.why));
        items.extend(list.entries.iter().map(|e| Item::Filter(filter(e))));
    }
    items
}

fn sysctl_filter(s: &Sysctl) -> Filter {
    match s {
        Sysctl::Name(n) => Filter::Fixed(format!("(sysctl-name {})", quote(n.as_bytes()))),
        Sysctl::Prefix(n) => Filter::Fixed(format!("(sysctl-name-prefix {})", quote(n.as_bytes()))),
    }
}

fn service_filter(name: &&str) -> Filter {
    Filter::Fixed(format!("(global-name {})", quote(name.as_bytes())))
}

fn constants(kind: fn(Operand) -> Filter, list: &'static [&'static str]) -> Vec<Filter> {
    list.iter().map(|p| kind(Operand::Const(p))).collect()
}

/// The sections every profile starts with: what does not depend on the plan.
fn fixed_sections() -> Vec<Section> {
    vec![
        Section::new(
            &["Everything the rules below do not allow is denied."],
            vec![Rule::everything(Action::Deny, &["default"])],
        ),
        Section::new(
            &[
                "Processes: programs run programs, and children inherit this profile. Signals and",
                "process information stay within the sandbox.",
            ],
            vec![
                Rule::everything(Action::Allow, &["process-exec"]),
                Rule::everything(Action::Allow, &["process-fork"]),
                Rule::filters(
                    Action::Allow,
                    &["signal"],
                    vec![Filter::Fixed("(target same-sandbox)".into())],
                ),
                Rule::filters(
                    Action::Allow,
                    &["process-info*"],
                    vec![Filter::Fixed("(target same-sandbox)".into())],
                ),
            ],
        ),
        Section::new(
            &["Kernel values programs read to size and identify themselves; nothing else."],
            vec![Rule::only(
                Action::Allow,
                &["sysctl-read"],
                reasoned_items(SYSCTL_READ, sysctl_filter),
            )],
        ),
        Section::new(
            &["System services a command-line program cannot work without; no other."],
            vec![Rule::only(
                Action::Allow,
                &["mach-lookup"],
                reasoned_items(MACH_LOOKUP, service_filter),
            )],
        ),
        Section::new(
            &[
                "Host statistics (libuv's and Node's os.cpus), read-only preferences (Apple's tools),",
                "POSIX semaphores (Python's multiprocessing), and Unix socket pairs between a program and",
                "its children: with no network rule, no socket path can be reached.",
            ],
            vec![
                Rule::everything(Action::Allow, &["mach-host*"]),
                Rule::everything(Action::Allow, &["user-preference-read"]),
                Rule::everything(Action::Allow, &["ipc-posix-sem"]),
                Rule::filters(
                    Action::Allow,
                    &["system-socket"],
                    vec![Filter::Fixed("(socket-domain AF_UNIX)".into())],
                ),
            ],
        ),
        Section::new(
            &[
                "Character devices, readable and writable. /dev/fd names descriptors the process",
                "already holds (/dev/stdout, process substitution). No ioctl on /dev/tty: it could push",
                "keystrokes into the caller's shell.",
            ],
            vec![
                Rule::filters(
                    Action::Allow,
                    &["file-read*", "file-write-data"],
                    constants(Filter::Literal, CHARACTER_DEVICES),
                ),
                Rule::filters(
                    Action::Allow,
                    &["file-ioctl"],
                    constants(Filter::Literal, IOCTL_DEVICES),
                ),
                Rule::filters(
                    Action::Allow,
                    &["file-read-data", "file-write-data"],
                    vec![Filter::Subpath(Operand::Const("/dev/fd"))],
                ),
            ],
        ),
    ]
}

/// The profile text and its parameters.
pub(crate) fn generate(req: &Request<'_>) -> Result<(String, Vec<Param>), SeatbeltError> {
    let plan: &Plan = req.plan;
    let paths = collect(req)?;
    let deny_read_regexes = glob_regexes(req, &req.extras.deny_read)?;
    // The registry's root-level patterns (`*.code-workspace`, `.aider*`): Seatbelt matches names,
    // so a file created later under such a name is denied too, in every granted root.
    let mut deny_write = req.extras.deny_write.clone();
    for root in plan.writable.iter().chain(&plan.inner_roots) {
        for pattern in cordon_policy::AutoRun::root_patterns() {
            let rule = GlobRule::new(root.clone(), pattern);
            // A root so long that the expression passes Seatbelt's length limit keeps only the
            // names that existed at launch (protected by path): docs/limits.md.
            if rule.regex().is_ok() {
                deny_write.push(rule);
            }
        }
    }
    let deny_write_regexes = glob_regexes(req, &deny_write)?;
    let pinned = pins(req, &paths)?;
    let mut params = Params::default();
    let mut sections = fixed_sections();

    let writable = params.subpaths("WRITABLE", &paths.writable);
    let tmpdir = params.subpaths("TMPDIR", &paths.tmpdir);
    match plan.posture {
        Posture::Host => {
            // Reads of what lies inside a private directory are given back below it.
            let inside_private = |p: &PathBuf| paths.private.iter().any(|d| p.starts_with(d));
            let mut back = Vec::new();
            for p in paths.writable.iter().filter(|p| inside_private(p)) {
                back.push(Filter::Subpath(Operand::Param(params.name("WRITABLE", p))));
            }
            for p in paths.tmpdir.iter().filter(|p| inside_private(p)) {
                back.push(Filter::Subpath(Operand::Param(params.name("TMPDIR", p))));
            }
            let read_inside: Vec<PathBuf> = paths
                .read
                .iter()
                .filter(|p| inside_private(p))
                .cloned()
                .collect();
            back.extend(params.subpaths("READ", &read_inside));
            let private = params.subpaths("PRIVATE", &paths.private);
            sections.push(Section::new(
                &[
                    "Reads (host posture): the whole filesystem, minus the masks below. The shared",
                    "temporary directories are private and empty on Linux; here their listings and",
                    "contents stay unreadable, except the roots that lie inside them.",
                ],
                vec![
                    Rule::everything(Action::Allow, &["file-read*"]),
                    Rule::everything(Action::Allow, &["file-map-executable"]),
                    Rule::filters(Action::Deny, &["file-read-data"], private),
                    Rule::filters(Action::Allow, &["file-read*"], back),
                ],
            ));
        }
        Posture::Minimal => {
            let mut items = vec![
                Item::Comment("the root directory itself: dyld and getcwd read it"),
                Item::Filter(Filter::Literal(Operand::Const("/"))),
            ];
            items.extend(reasoned_items(MINIMAL_SYSTEM_READ, |p: &&'static str| {
                Filter::Subpath(Operand::Const(p))
            }));
            let read = params.subpaths("READ", &paths.read);
            if !read.is_empty() {
                items.push(Item::Comment(
                    "the policy's vetted trees (and cordon's stage)",
                ));
                items.extend(read.into_iter().map(Item::Filter));
            }
            items.push(Item::Comment("the writable roots and TMPDIR"));
            items.extend(writable.iter().cloned().map(Item::Filter));
            items.extend(tmpdir.iter().cloned().map(Item::Filter));
            sections.push(Section::new(
                &[
                    "Reads (minimal posture): only what programs need to start, the policy's vetted",
                    "trees and the writable roots. Directory metadata stays readable everywhere so",
                    "that paths resolve (realpath, getcwd); listings and contents do not.",
                ],
                vec![
                    Rule::filters(
                        Action::Allow,
                        &["file-read-metadata"],
                        vec![Filter::Fixed("(vnode-type DIRECTORY)".into())],
                    ),
                    Rule::only(Action::Allow, &["file-read*", "file-map-executable"], items),
                ],
            ));
        }
    }

    let mut write_items: Vec<Item> = writable.into_iter().map(Item::Filter).collect();
    write_items.extend(tmpdir.into_iter().map(Item::Filter));
    sections.push(Section::new(
        &["Writes: only the writable roots and the private temporary directory (TMPDIR)."],
        vec![Rule::only(Action::Allow, &["file-write*"], write_items)],
    ));

    let mut protected = params.subpaths("PROTECTED", &paths.protected);
    protected.extend(deny_write_regexes.into_iter().map(Filter::Regex));
    sections.push(Section::new(
        &[
            "Protected paths inside writable roots stay read-only, including those that do not",
            "exist yet: creating one is refused too.",
        ],
        vec![Rule::filters(Action::Deny, &["file-write*"], protected)],
    ));

    let mut masks = params.subpaths("MASK", &paths.masks);
    masks.extend(deny_read_regexes.into_iter().map(Filter::Regex));
    sections.push(Section::new(
        &[
            "Credential masks: neither read nor written. file-write* includes file-write-unlink,",
            "so a masked path cannot be deleted (which would tell whether it exists) or renamed",
            "(which would carry it out from under this rule).",
        ],
        vec![Rule::filters(
            Action::Deny,
            &["file-read*", "file-write*"],
            masks,
        )],
    ));

    let pins = params.literals("PIN", &pinned);
    sections.push(Section::new(
        &[
            "Writable roots, and the directories between a root and a protected path or a mask:",
            "they cannot be renamed or removed, so the rules above keep naming the same files.",
        ],
        vec![Rule::filters(Action::Deny, &["file-write-unlink"], pins)],
    ));

    if plan.network == Network::Allowed {
        let lookups = reasoned_items(MACH_LOOKUP_NETWORK, service_filter);
        sections.push(Section::new(
            &[
                "Network (allowed by the policy): IP sockets in and out, and the system resolver.",
                "No other Unix socket: agent, container-engine and desktop sockets stay out of reach.",
            ],
            vec![
                Rule::everything(Action::Allow, &["system-socket"]),
                Rule::filters(
                    Action::Allow,
                    &["network-outbound"],
                    vec![
                        Filter::Fixed("(remote ip \"*:*\")".into()),
                        Filter::Fixed(format!(
                            "(remote unix-socket (path-literal {}))",
                            quote(RESOLVER_SOCKET.as_bytes())
                        )),
                    ],
                ),
                Rule::filters(
                    Action::Allow,
                    &["network-bind", "network-inbound"],
                    vec![Filter::Fixed("(local ip \"*:*\")".into())],
                ),
                Rule::only(Action::Allow, &["mach-lookup"], lookups),
            ],
        ));
    }

    if let (Network::Proxy, Some(port)) = (plan.network, req.extras.proxy_port) {
        sections.push(Section::new(
            &[
                "Network (proxy mode): TCP out to the proxy on this host's loopback, and nothing else:",
                "no other address, no listening, no resolver (the proxy resolves names itself).",
            ],
            vec![
                Rule::everything(Action::Allow, &["system-socket"]),
                Rule::filters(
                    Action::Allow,
                    &["network-outbound"],
                    vec![Filter::Fixed(format!("(remote tcp \"localhost:{port}\")"))],
                ),
            ],
        ));
    }

    let header = vec![
        format!("; cordon Seatbelt profile (generator {GENERATOR_VERSION})"),
        format!(
            "; profile {}, posture {}, network {}",
            plan.profile, plan.posture, plan.network
        ),
        "; Paths are -D parameters, named here as (param \"NAME\"); see the argument list.".into(),
        "(version 1)".into(),
    ];
    let text = render(&header, &sections);
    Ok((text, params.list))
}
