//! Verdicts and the four views of one run: the table on stdout, the JSON file,
//! `docs/escape-matrix.md` and `docs/backends.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::columns::Column;
use super::{Case, Class};

/// What one case showed in one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The attack ran (canary seen) and failed.
    Blocked,
    /// The attack ran and succeeded.
    Escaped,
    /// No proof the payload ran, or the harness could not judge.
    Inconclusive,
    /// A control row worked.
    Ok,
    /// A control row failed although the tool works on the host.
    Broken,
    /// The column, or the tool a control row needs, does not exist on this machine.
    Unavailable,
    /// Escaped (or broken) in a landlock column, as the case declares the backend cannot help.
    Limit,
    /// The case declares a Landlock limit, yet the landlock column blocked it (or served it).
    StaleLimit,
    /// No-jail column: the attack succeeded without a jail, so the case can tell an escape.
    Escapes,
    /// No-jail column: the attack did not succeed even without a jail: the case tests nothing.
    NoEscape,
    /// No-jail column: did not escape, as the case declares it cannot for this user without a
    /// jail (the host itself refuses). Never counted as passed.
    Impossible,
    /// No-jail column: escaped although the case declares that impossible.
    StaleImpossible,
    /// No-jail column: not run, as the case declares its payload could harm the host without a
    /// jail. Never counted as passed.
    Unsafe,
}

impl Verdict {
    /// The word in the table.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Blocked => "blocked",
            Verdict::Escaped => "ESCAPED",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::Ok => "ok",
            Verdict::Broken => "BROKEN",
            Verdict::Unavailable => "unavailable",
            Verdict::Limit => "LIMIT",
            Verdict::StaleLimit => "STALE-LIMIT",
            Verdict::Escapes => "escapes",
            Verdict::NoEscape => "NO-ESCAPE",
            Verdict::Impossible => "impossible",
            Verdict::StaleImpossible => "STALE-IMPOSSIBLE",
            Verdict::Unsafe => "unsafe",
        }
    }

    /// Whether this verdict fails the suite.
    pub fn fails(self) -> bool {
        matches!(
            self,
            Verdict::Escaped
                | Verdict::Inconclusive
                | Verdict::Broken
                | Verdict::StaleLimit
                | Verdict::NoEscape
                | Verdict::StaleImpossible
        )
    }
}

/// A verdict and what was seen.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub verdict: Verdict,
    pub detail: String,
}

impl Outcome {
    pub fn new(verdict: Verdict, detail: impl Into<String>) -> Outcome {
        Outcome {
            verdict,
            detail: detail.into(),
        }
    }
}

/// The verdict of an attack case in a no-jail column, from what its judge said: ESCAPED is what
/// must happen there (`escapes`), blocked means the case cannot see its own attack succeed
/// (NO-ESCAPE, a failure), unless the case declares that impossible for this user without a jail
/// (`impossible`; and then an escape fails as STALE-IMPOSSIBLE). INCONCLUSIVE and unavailable
/// stay as they are.
pub fn no_jail_verdict(impossible: Option<&'static str>, o: Outcome) -> Outcome {
    match (o.verdict, impossible) {
        (Verdict::Escaped, None) => Outcome::new(Verdict::Escapes, o.detail),
        (Verdict::Escaped, Some(why)) => Outcome::new(
            Verdict::StaleImpossible,
            format!(
                "escaped without a jail although the case declares that impossible ({why}): \
                 remove the declaration; {}",
                o.detail
            ),
        ),
        (Verdict::Blocked, None) => Outcome::new(
            Verdict::NoEscape,
            format!(
                "did not escape even without a jail: the case does not attempt (or cannot see) \
                 its attack, fix it; {}",
                o.detail
            ),
        ),
        (Verdict::Blocked, Some(why)) => Outcome::new(
            Verdict::Impossible,
            format!("declared impossible without a jail ({why}): {}", o.detail),
        ),
        _ => o,
    }
}

/// Applies a case's declared Landlock limit to its cells in the landlock columns: ESCAPED or
/// BROKEN becomes LIMIT. If no landlock cell shows the limit and one was blocked (or, for a
/// control, worked), those cells become STALE-LIMIT: the declaration must go. INCONCLUSIVE and
/// unavailable cells are left as they are. Without a declaration nothing changes.
fn apply_limit(why: &'static str, cells: &mut [&mut Outcome]) {
    for o in cells.iter_mut() {
        if matches!(o.verdict, Verdict::Escaped | Verdict::Broken) {
            **o = Outcome::new(
                Verdict::Limit,
                format!(
                    "{} (declared Landlock limit: {why}): {}",
                    o.verdict.word(),
                    o.detail
                ),
            );
        }
    }
    if cells.iter().any(|o| o.verdict == Verdict::Limit) {
        return;
    }
    for o in cells.iter_mut() {
        if matches!(o.verdict, Verdict::Blocked | Verdict::Ok) {
            **o = Outcome::new(
                Verdict::StaleLimit,
                format!(
                    "{} in every landlock column although the case declares a Landlock limit \
                     ({why}): remove the declaration; {}",
                    o.verdict.word(),
                    o.detail
                ),
            );
        }
    }
}

/// How one case fared across the columns of one backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fared {
    /// Blocked (ok, for a control) in every column of the backend that ran.
    Held,
    /// A declared limit showed in at least one column.
    Limit,
    /// At least one failing cell.
    Failed,
    /// No column of the backend ran it.
    NotRun,
}

/// Every result of one run.
#[derive(Debug, Default, Serialize)]
pub struct Matrix {
    pub columns: Vec<String>,
    /// Columns that could not run, and why.
    pub unavailable_columns: BTreeMap<String, String>,
    pub rows: Vec<Row>,
    pub took_secs: f64,
}

/// One case across the columns.
#[derive(Debug, Serialize)]
pub struct Row {
    pub id: &'static str,
    pub class: &'static str,
    pub about: &'static str,
    pub control: bool,
    pub results: BTreeMap<String, Outcome>,
}

impl Matrix {
    pub fn new(cases: &[&Case], columns: &[Column]) -> Matrix {
        Matrix {
            columns: columns.iter().map(|c| c.name()).collect(),
            unavailable_columns: BTreeMap::new(),
            rows: cases
                .iter()
                .map(|c| Row {
                    id: c.id,
                    class: c.class.title(),
                    about: c.about,
                    control: c.class == Class::Usability,
                    results: BTreeMap::new(),
                })
                .collect(),
            took_secs: 0.0,
        }
    }

    /// Applies every case's declared Landlock limit (see [`apply_limit`]) to the landlock columns.
    pub fn apply_limits(&mut self, cases: &[&Case]) {
        for (row, case) in self.rows.iter_mut().zip(cases) {
            let Some(why) = case.landlock_limit else {
                continue;
            };
            let mut cells: Vec<&mut Outcome> = row
                .results
                .iter_mut()
                .filter(|(c, _)| Column::parse(c).is_some_and(Column::landlock))
                .map(|(_, o)| o)
                .collect();
            apply_limit(why, &mut cells);
        }
    }

    /// Every failing cell: (case, column, outcome).
    pub fn failures(&self) -> Vec<(&str, &str, &Outcome)> {
        let mut out = Vec::new();
        for row in &self.rows {
            for (col, o) in &row.results {
                if o.verdict.fails() {
                    out.push((row.id, col.as_str(), o));
                }
            }
        }
        out
    }

    /// Counts of each verdict.
    pub fn counts(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for row in &self.rows {
            for o in row.results.values() {
                *counts.entry(o.verdict.word()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// The table printed on stdout.
    pub fn table(&self) -> String {
        let width = self
            .rows
            .iter()
            .map(|r| r.id.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = String::new();
        let _ = write!(out, "{:width$}", "case");
        for c in &self.columns {
            let _ = write!(out, "  {c:<13}");
        }
        out.push('\n');
        let mut class = "";
        for row in &self.rows {
            if row.class != class {
                class = row.class;
                let _ = writeln!(out, "-- {class}");
            }
            let _ = write!(out, "{:width$}", row.id);
            for c in &self.columns {
                let word = row.results.get(c).map_or("-", |o| o.verdict.word());
                let _ = write!(out, "  {word:<13}");
            }
            out.push('\n');
        }
        out
    }

    /// `docs/escape-matrix.md`: verdicts only (details vary from run to run).
    pub fn markdown(&self, cases: &[&Case]) -> String {
        let mut out = String::new();
        out.push_str(
            "# Escape matrix\n\n\
             Generated by `cargo xtask escape-suite` (a full run, every column); do not edit by hand.\n\
             Every row is a real attack (or, under *Usability*, a control) run through the real \
             `cordon run` on the real kernel, under bubblewrap or the Landlock backend. An attack counts only when its payload \
             proved it ran (a canary written in the workspace), and wherever possible the harness \
             judges the effect on the host (the file is absent, the listener saw no connection, the \
             process is alive). The rules and every case are in `tests/escape/src/`.\n\n\
             Verdicts: **blocked** (the attack ran and failed), **ESCAPED**, **INCONCLUSIVE** (no \
             proof the payload ran, or a step of a multi-step payload never ran: each step prints \
             a marker after it, whatever its outcome, and every marker must be seen), **ok** / \
             **BROKEN** (controls), **unavailable** (the column or the tool does not exist on the \
             machine; never counted as passed).\n\n\
             Columns: the user cordon runs as (root, or an unprivileged user the suite creates and \
             drops to with `setpriv`) × the jail (*host*: the `shell` profile under bubblewrap; \
             *minimal*: the `document-parser` profile under bubblewrap; *landlock*: the `shell` \
             profile under the Landlock backend; *serve*: the `shell` profile under bubblewrap \
             with `--live`, each attack sent to `cordon serve` as the session's second request, \
             so it runs in a jail built ahead of it (the suite fails if one did not; runs that \
             feed stdin, inherit a descriptor or need a bubblewrap override stay `cordon run`); \
             *serve-layer*: the same with serve's default, the copy-on-write layer, which the \
             jail built ahead takes when the request comes (proxy runs stay `cordon run`: a \
             layered proxy session builds no jail ahead). Every column passes `--backend` \
             explicitly. \
             **LIMIT** marks a landlock cell the case declares the Landlock backend cannot block \
             or serve (listed with reasons in `docs/backends.md`); a declared limit that no longer \
             shows reads **STALE-LIMIT** and fails the suite.\n\n\
             The *none* columns (`root/none`, `user/none`; alone: `cargo xtask escape-suite \
             --no-jail`) prove that every attack case can fail: each payload runs with **no jail \
             at all**, directly as that user, in the same workspace with the same planted home, \
             sentinels, environment, working directory and stdin, judged by the same judge (only \
             what cordon itself would apply, its options and the project file's limits, is \
             absent). There an attack must read **escapes**; **NO-ESCAPE** (it did not escape even \
             without a jail: the case does not attempt, or cannot see, its attack) fails the \
             suite. A case the host itself refuses for some user (file modes, missing \
             capabilities, a kernel feature) declares it and reads **impossible**, never counted \
             as passed; if it escapes after all it reads **STALE-IMPOSSIBLE** and fails. A payload \
             that could harm the host without a jail declares it and reads **unsafe**: it is not \
             run there. Both lists, with their reasons, are at the end. The controls do not run \
             in these columns (`-`).\n\n\
             `cargo xtask escape-suite --mutants` proves the suite can fail: it reruns the cases \
             against launchers weakened one defence at a time (no network namespace, no seccomp \
             filter, no PID namespace, no credential masks, a writable root, inherited descriptors \
             kept, the whole environment, no private `/tmp`, writable protected paths, the home shown as on the host, no \
             timeout, nothing killing a jail whose launcher died) and fails unless each weakening turns at least one case ESCAPED, in the first \
             bubblewrap column and in the serve column (jails built ahead of their command are \
             weakened the same way). A weakening is one value the CLI of a mutants build sets on \
             the launcher (`Launcher::weakened`); the weakenings exist only in a debug build with \
             the `mutants` feature.\n\n",
        );
        let counts = self.counts();
        let _ = writeln!(
            out,
            "{} cases × {} columns: {}.\n",
            self.rows.len(),
            self.columns.len(),
            counts
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (col, why) in &self.unavailable_columns {
            let _ = writeln!(out, "- column `{col}` unavailable: {why}");
        }
        let mut class = None;
        for (row, case) in self.rows.iter().zip(cases) {
            if class != Some(case.class) {
                class = Some(case.class);
                let _ = write!(out, "\n## {}\n\n| case | attack |", case.class.title());
                for c in &self.columns {
                    let _ = write!(out, " {c} |");
                }
                out.push_str("\n|---|---|");
                for _ in &self.columns {
                    out.push_str("---|");
                }
                out.push('\n');
            }
            let _ = write!(out, "| `{}` | {} |", row.id, row.about.replace('|', "\\|"));
            for c in &self.columns {
                let word = row.results.get(c).map_or("-", |o| o.verdict.word());
                let word = if matches!(
                    word,
                    "ESCAPED"
                        | "INCONCLUSIVE"
                        | "BROKEN"
                        | "STALE-LIMIT"
                        | "NO-ESCAPE"
                        | "STALE-IMPOSSIBLE"
                ) {
                    format!("**{word}**")
                } else {
                    word.to_owned()
                };
                let _ = write!(out, " {word} |");
            }
            out.push('\n');
        }
        let unavailable: Vec<String> = self
            .rows
            .iter()
            .flat_map(|r| {
                r.results
                    .iter()
                    .filter(|(_, o)| o.verdict == Verdict::Unavailable)
                    .map(move |(c, o)| format!("- `{}` in `{c}`: {}", r.id, o.detail))
            })
            .collect();
        out.push_str(
            "\n## Without a jail: declared impossible or unsafe\n\n\
             Every other attack case must escape in the *none* columns.\n\n",
        );
        for case in cases {
            if let Some((users, applies, why)) = case.no_jail_impossible {
                let _ = writeln!(
                    out,
                    "- `{}`: impossible for {}{}: {why}",
                    case.id,
                    users.words(),
                    if applies.is_some() {
                        " on the machines it names"
                    } else {
                        ""
                    }
                );
            }
            if let Some((users, why)) = case.no_jail_unsafe {
                let _ = writeln!(
                    out,
                    "- `{}`: unsafe for {}, not run: {why}",
                    case.id,
                    users.words()
                );
            }
        }
        if !unavailable.is_empty() {
            out.push_str("\n## Cells that could not run here\n\n");
            for line in unavailable {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }

    /// How `row` fared in the columns of one backend.
    fn fared(&self, row: &Row, landlock: bool) -> Fared {
        let cells: Vec<&Outcome> = row
            .results
            .iter()
            .filter(|(c, _)| {
                Column::parse(c).is_some_and(|c| !c.unjailed() && c.landlock() == landlock)
            })
            .map(|(_, o)| o)
            .filter(|o| o.verdict != Verdict::Unavailable)
            .collect();
        if cells.is_empty() {
            Fared::NotRun
        } else if cells.iter().any(|o| o.verdict.fails()) {
            Fared::Failed
        } else if cells.iter().any(|o| o.verdict == Verdict::Limit) {
            Fared::Limit
        } else {
            Fared::Held
        }
    }

    /// `docs/backends.md`: the escape classes against both backends, the Landlock backend's
    /// declared limits, and how `auto` chooses.
    pub fn backends(&self, cases: &[&Case]) -> String {
        let mut out = String::new();
        out.push_str(
            "# Backends\n\n\
             Generated by `cargo xtask escape-suite` (a full run, every column) from the same run \
             as `docs/escape-matrix.md`; do not edit by hand. The cases, and the reason for each \
             Landlock limit, are in `tests/escape/src/`.\n\n\
             On Linux `cordon run` jails a command with one of two backends, chosen with \
             `--backend auto|bwrap|landlock`. The escape suite runs every case against both: \
             bubblewrap in four columns (root and an unprivileged user × the *host* and *minimal* \
             postures), Landlock in two (root and the unprivileged user × the *host* posture).\n\n\
             ## Escape classes against the backends\n\n\
             A case counts as *blocked* for a backend when it was blocked (for a control: worked) \
             in every column of that backend that could run it. *LIMIT* counts the cases that \
             escaped (or, for a control, did not work) under Landlock exactly as they declare: the \
             documented limits listed below. Any other outcome fails the suite.\n\n\
             | class | cases | bubblewrap: blocked | landlock: blocked | landlock: LIMIT |\n\
             |---|---|---|---|---|\n",
        );
        let mut classes: Vec<&'static str> = Vec::new();
        for row in &self.rows {
            if !classes.contains(&row.class) {
                classes.push(row.class);
            }
        }
        let mut total = [0usize; 4];
        let mut other: Vec<String> = Vec::new();
        for class in classes {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.class == class).collect();
            let count = |landlock: bool, want: Fared| {
                rows.iter()
                    .filter(|r| self.fared(r, landlock) == want)
                    .count()
            };
            let line = [
                rows.len(),
                count(false, Fared::Held),
                count(true, Fared::Held),
                count(true, Fared::Limit),
            ];
            for (t, n) in total.iter_mut().zip(line) {
                *t += n;
            }
            let _ = writeln!(
                out,
                "| {class} | {} | {} | {} | {} |",
                line[0], line[1], line[2], line[3]
            );
            for r in &rows {
                for (landlock, backend) in [(false, "bubblewrap"), (true, "landlock")] {
                    match self.fared(r, landlock) {
                        Fared::Failed => other.push(format!("- `{}` failed under {backend}", r.id)),
                        Fared::NotRun => {
                            other.push(format!("- `{}` could not run under {backend}", r.id));
                        }
                        Fared::Held | Fared::Limit => {}
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "| **all** | {} | {} | {} | {} |",
            total[0], total[1], total[2], total[3]
        );
        if !other.is_empty() {
            out.push_str("\nNot counted above (this run):\n\n");
            for line in other {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out.push_str(
            "\n## The Landlock backend's documented limits\n\n\
             Each is declared by its case; the suite fails if a declared limit stops showing \
             (STALE-LIMIT), and every case not listed here must be blocked under Landlock too.\n\n",
        );
        let mut any = false;
        for case in cases {
            if let Some(why) = case.landlock_limit {
                any = true;
                let _ = writeln!(
                    out,
                    "- `{}` ({}): {why}",
                    case.id,
                    case.about.replace('|', "\\|")
                );
            }
        }
        if !any {
            out.push_str("None: every case is blocked under Landlock too.\n");
        }
        out.push_str(BACKENDS_PROSE);
        out
    }
}

/// The hand-written part of `docs/backends.md`.
const BACKENDS_PROSE: &str = "
## How each backend works

**bubblewrap** (`--backend bwrap`). cordon runs `bwrap`, found only at trusted root-owned \
paths, with arguments generated from the resolved plan: new user, PID, mount, IPC and UTS \
namespaces, and a network namespace whenever the plan denies the network; a root filesystem built from read-only binds of the host, the writable set \
bound writable and protected paths bound read-only on top; credential paths masked; a private \
`/tmp`; no capabilities; and the seccomp filter. The jail is built before the command starts and \
the command sees only what was bound into it.

**landlock** (`--backend landlock`). No helper program: between `fork` and `exec` the child \
itself sets the parent-death signal, drops every capability (for root: the bounding and ambient \
sets and `SECBIT_NOROOT`), sets no-new-privileges, restricts itself with a Landlock ruleset built \
from the same plan (read and execute where the plan allows reading, write only in the writable \
set, TCP left to the supervisor when the plan denies the network), then installs the seccomp filter \
with a listener it hands to the launcher. The stage then stays as the jail's **init**: a child \
subreaper out of the run's process group, which the command (in a nested Landlock domain) cannot \
signal or trace, and which ends every process of its domain when the run ends, so `setsid` and \
`setpgid` work (on a kernel without Landlock's signal scope the filter refuses them and the run \
is held by its process group). Every call that creates, removes, renames or links a \
name, opens a file for writing, or changes a mode, owner, time or extended attribute then goes to \
the launcher's **supervisor** (`cordon-supervisor`, seccomp user notification): it copies the path \
out of the caller once, resolves it itself (directories by descriptor, the last name one link at \
a time), judges the real path (inside the writable set, outside every mask and protected path, \
not at a name the auto-run registry lists, at any depth) and performs the call with the \
caller's umask and no capability, installing an opened descriptor in the caller; it never lets \
the kernel continue a call it judged. So entries come and go anywhere in a workspace, top level \
and `.git` included, while hooks and configurations stay refused at the moment of the call; git \
configurations are brokered (git renames a lock file over `config`: the supervisor puts the \
current file with only the allowed changes in its place, and reports each key it dropped); and \
metadata outside the writable set is refused. With the network denied, every call that names \
an address (`bind`, `connect`, `listen`, `sendto` with a destination, `sendmsg`, `sendmmsg`) goes \
to the supervisor too: it takes the caller's socket (`pidfd_getfd`), lands binds on loopback, and \
lets a connect or a send reach only a socket the jail bound in this run (checked in the kernel's \
tables at the call), a socket file it bound, or the proxy's listener on the host's loopback \
(proxy mode works here); abstract Unix names get a prefix of the run's, so local test servers \
work and no host listener is reached. The stage proves it before the command runs by failing to \
reach a listener the launcher holds on the host's loopback. The command shares the host's \
namespaces: host processes stay visible in `/proc` (though not signalable nor traceable), the \
host's `/tmp` stays listable (a fresh per-run directory, removed afterwards, is its `TMPDIR`), \
and masked directories show their entries' names but not their contents. `cargo xtask ci \
workloads` runs the probes and the on-machine projects a second time where a container refuses \
namespaces (`--container`: `auto` must fall back to this backend and say so), root and \
unprivileged; what still differs there (a read-only open below `/dev/shm`) is listed with its \
reason in `tests/workloads/src/main.rs`. Terminals are the host's devpts through the supervisor: \
a new one is the jail's, and `/dev/pts/N` opens only for a process holding N's master.

## What `auto` picks

`--backend auto` (the default) tries **bubblewrap first**: it is used when a trusted `bwrap` \
exists and its probe proves it jails (a probe command run inside it writes its canary in its \
workspace and is refused outside it; every real run also checks its jail from inside before \
the command starts). Only when bubblewrap cannot be used does `auto` consider **Landlock**, and \
only when the Landlock backend's own probe proves enforcement (the kernel has a Landlock ABI, \
and a probe command run under the full Landlock and seccomp jail writes its canary in its \
workspace and is refused outside it). When neither probe passes, the run is refused (exit 126) \
with the reason and the ways out, unless the global configuration sets `[backend] unavailable = \
\"warn\"`, which runs the command without a jail and reports that on every run. Naming a backend with `--backend bwrap` or \
`--backend landlock` never falls back to the other; the escape suite names one in every column \
for that reason. A run that falls back says so in its warnings (`--json`: `warnings`), naming the backend \
that could not start and why. The probe's cache is keyed by what confines cordon's own process \
too (its seccomp mode and filter count, no-new-privileges, its LSM label, its user namespace), \
so a probe cached on the host does not claim bubblewrap works inside a container that refuses \
namespaces (`crates/cordon/tests/cli/container.rs` makes such a container: an outer bubblewrap \
with a filter that refuses `unshare` and `clone` with namespace flags as Docker's default \
profile does).

## The supervisor, and why bubblewrap does not use it

The Landlock backend's supervisor costs a round trip to the launcher for every call it sees. \
Measured by `cargo xtask bench` (its layer rows; release build, this 2-core machine, medians of \
3 rounds): 10,000 new files took 1,026 ms under the Landlock backend against 318 ms under \
bubblewrap's live run (3.2×; 6.3× in an earlier run whose bubblewrap rows took 160 ms: about \
70–85 µs a supervised create), a `cargo build` of `strsim` 543 ms against 547 ms (0.99×), an \
`npm install` of tape's tree (127 packages from local tarballs, offline) 12.8 s against 7.3 s \
(1.76×), and 1,000 TCP round trips between a server and a client of the command's own on \
loopback 295 ms against 247 ms (1.19×: the supervisor performs each `connect` and reads the \
kernel's socket diagnostics for the destination). bubblewrap does not use it: its mount namespace already keeps protected paths \
read-only, the copy-on-write layer already judges every change before the host sees it, and its \
network namespace already gives the jail a loopback of its own, all at no cost per call, \
whereas the supervisor would add that cost and a second judge to keep in step with the commit's. \
What would change the decision: a call bubblewrap's namespaces cannot judge (none is known).

## Where namespaces are refused

`cordon doctor` names the layer that keeps bubblewrap from starting and the one change that \
would let it (`--json`: `namespaces`), from the most specific evidence to the least: no \
trusted bubblewrap (`bubblewrap-missing`: install it); `user.max_user_namespaces = 0` \
(`sysctl-max-user-namespaces`); `kernel.unprivileged_userns_clone = 0` for a user other than \
root (`sysctl-unprivileged-userns-clone`: the sysctl, or a set-user-ID bubblewrap); Ubuntu's \
`kernel.apparmor_restrict_unprivileged_userns = 1` for an unconfined program \
(`apparmor-userns-restriction`: an AppArmor profile for bubblewrap that allows `userns,`); a \
seccomp filter on cordon's own process, as a container's profile is (`seccomp-profile`: a \
profile that allows `unshare` and `clone` with `CLONE_NEWUSER`); an AppArmor profile confining \
the process (`apparmor-profile`). It also lists what the Landlock fallback does not do: no pid, \
network or mount namespace, no private `/tmp`, no copy-on-write layer.
";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::harness::Ctx;

    fn never(_: &Ctx<'_>) -> Outcome {
        Outcome::new(Verdict::Inconclusive, "not run in unit tests")
    }

    fn case(id: &'static str, class: Class, limit: Option<&'static str>) -> Case {
        let c = Case::attack(id, class, "about", never);
        match limit {
            Some(why) => c.landlock_limit(why),
            None => c,
        }
    }

    /// A matrix of one row per case, with `cells` as (column, verdict) for every row.
    fn matrix(cases: &[&Case], cells: &[&[(&str, Verdict)]]) -> Matrix {
        let mut m = Matrix::new(cases, &Column::ALL);
        for (row, cells) in m.rows.iter_mut().zip(cells) {
            for (col, v) in *cells {
                row.results
                    .insert((*col).to_owned(), Outcome::new(*v, "detail"));
            }
        }
        m.apply_limits(cases);
        m
    }

    fn verdict(m: &Matrix, row: usize, col: &str) -> Verdict {
        m.rows[row].results[col].verdict
    }

    #[test]
    fn a_declared_limit_turns_escaped_into_limit_in_landlock_columns_only() {
        let c = case("x/limited", Class::Processes, Some("no PID namespace"));
        let m = matrix(
            &[&c],
            &[&[
                ("root/host", Verdict::Escaped),
                ("root/landlock", Verdict::Escaped),
                ("user/landlock", Verdict::Escaped),
            ]],
        );
        assert_eq!(verdict(&m, 0, "root/landlock"), Verdict::Limit);
        assert_eq!(verdict(&m, 0, "user/landlock"), Verdict::Limit);
        assert_eq!(verdict(&m, 0, "root/host"), Verdict::Escaped);
        assert!(
            m.rows[0].results["root/landlock"]
                .detail
                .contains("no PID namespace")
        );
        let failing: Vec<_> = m.failures().into_iter().map(|(_, c, _)| c).collect();
        assert_eq!(failing, ["root/host"]);
    }

    #[test]
    fn an_undeclared_escape_in_a_landlock_column_fails() {
        let c = case("x/plain", Class::Network, None);
        let m = matrix(&[&c], &[&[("user/landlock", Verdict::Escaped)]]);
        assert_eq!(verdict(&m, 0, "user/landlock"), Verdict::Escaped);
        assert_eq!(m.failures().len(), 1);
    }

    #[test]
    fn a_limit_blocked_in_every_landlock_column_is_stale_and_fails() {
        let c = case("x/stale", Class::Kernel, Some("reason"));
        let m = matrix(
            &[&c],
            &[&[
                ("root/landlock", Verdict::Blocked),
                ("user/landlock", Verdict::Blocked),
            ]],
        );
        assert_eq!(verdict(&m, 0, "root/landlock"), Verdict::StaleLimit);
        assert_eq!(verdict(&m, 0, "user/landlock"), Verdict::StaleLimit);
        assert_eq!(m.failures().len(), 2);
    }

    #[test]
    fn a_limit_shown_in_one_landlock_column_may_be_blocked_in_the_other() {
        let c = case("x/half", Class::Kernel, Some("reason"));
        let m = matrix(
            &[&c],
            &[&[
                ("root/landlock", Verdict::Blocked),
                ("user/landlock", Verdict::Escaped),
            ]],
        );
        assert_eq!(verdict(&m, 0, "root/landlock"), Verdict::Blocked);
        assert_eq!(verdict(&m, 0, "user/landlock"), Verdict::Limit);
        assert!(m.failures().is_empty());
    }

    #[test]
    fn a_broken_control_with_a_limit_reads_limit_and_inconclusive_still_fails() {
        let control = case("use/x", Class::Usability, Some("root not writable"));
        let attack = case("x/inconclusive", Class::Writes, Some("reason"));
        let m = matrix(
            &[&control, &attack],
            &[
                &[("root/landlock", Verdict::Broken)],
                &[("root/landlock", Verdict::Inconclusive)],
            ],
        );
        assert_eq!(verdict(&m, 0, "root/landlock"), Verdict::Limit);
        assert_eq!(verdict(&m, 1, "root/landlock"), Verdict::Inconclusive);
        assert_eq!(m.failures().len(), 1);
    }

    #[test]
    fn without_a_jail_an_escape_passes_and_anything_blocked_fails_unless_declared() {
        let o = |v| Outcome::new(v, "detail");
        let escapes = no_jail_verdict(None, o(Verdict::Escaped));
        assert_eq!(escapes.verdict, Verdict::Escapes);
        assert!(!escapes.verdict.fails());
        let broken = no_jail_verdict(None, o(Verdict::Blocked));
        assert_eq!(broken.verdict, Verdict::NoEscape);
        assert!(broken.verdict.fails());
        let declared = no_jail_verdict(Some("the host refuses it"), o(Verdict::Blocked));
        assert_eq!(declared.verdict, Verdict::Impossible);
        assert!(!declared.verdict.fails());
        assert!(declared.detail.contains("the host refuses it"));
        let stale = no_jail_verdict(Some("the host refuses it"), o(Verdict::Escaped));
        assert_eq!(stale.verdict, Verdict::StaleImpossible);
        assert!(stale.verdict.fails());
        for v in [Verdict::Inconclusive, Verdict::Unavailable] {
            assert_eq!(no_jail_verdict(None, o(v)).verdict, v);
            assert_eq!(no_jail_verdict(Some("x"), o(v)).verdict, v);
        }
    }

    #[test]
    fn the_matrix_lists_the_no_jail_declarations_and_keeps_them_out_of_the_backends() {
        let impossible = Case::attack("x/impossible", Class::Credentials, "about", never)
            .no_jail_impossible(crate::Users::Unprivileged, "modes refuse the user");
        let dangerous = Case::attack("x/unsafe", Class::Kernel, "about", never)
            .no_jail_unsafe(crate::Users::Root, "it would mount over the host");
        let m = matrix(
            &[&impossible, &dangerous],
            &[
                &[
                    ("root/host", Verdict::Blocked),
                    ("user/none", Verdict::Impossible),
                ],
                &[
                    ("root/host", Verdict::Blocked),
                    ("root/none", Verdict::Unsafe),
                ],
            ],
        );
        let md = m.markdown(&[&impossible, &dangerous]);
        assert!(
            md.contains(
                "- `x/impossible`: impossible for the unprivileged user: modes refuse the user"
            ),
            "{md}"
        );
        assert!(
            md.contains("- `x/unsafe`: unsafe for root, not run: it would mount over the host"),
            "{md}"
        );
        assert!(m.failures().is_empty());
        let doc = m.backends(&[&impossible, &dangerous]);
        assert!(!doc.contains("failed under"), "{doc}");
    }

    #[test]
    fn backends_doc_counts_each_backend_and_lists_the_limits() {
        let held = case("x/held", Class::Processes, None);
        let limited = case("x/limited", Class::Processes, Some("the stated reason"));
        let m = matrix(
            &[&held, &limited],
            &[
                &[
                    ("root/host", Verdict::Blocked),
                    ("root/landlock", Verdict::Blocked),
                ],
                &[
                    ("root/host", Verdict::Blocked),
                    ("root/landlock", Verdict::Escaped),
                ],
            ],
        );
        let doc = m.backends(&[&held, &limited]);
        assert!(
            doc.contains("Generated by `cargo xtask escape-suite`"),
            "{doc}"
        );
        assert!(
            doc.contains(&format!("| {} | 2 | 2 | 1 | 1 |", Class::Processes.title())),
            "{doc}"
        );
        assert!(
            doc.contains("- `x/limited` (about): the stated reason"),
            "{doc}"
        );
        assert!(!doc.contains("- `x/held`"), "{doc}");
    }
}
