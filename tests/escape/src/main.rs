//! cordon-escape, the escape suite (`cargo xtask escape-suite` runs it): real attacks through the
//! real `cordon run` on the real kernel. Every case is in this package, one module per class.
//!
//! The rules every case follows:
//!
//! - **An attack proves nothing unless the payload ran.** Each payload first writes a canary (a
//!   random token) into the workspace; without it the cell reads INCONCLUSIVE, which fails the
//!   suite like an escape.
//! - **Nor unless every step of it ran.** A payload that tries several things is built with
//!   [`Run::steps`](harness::Run::steps): after each step it prints that step's marker, whatever
//!   the step's outcome, and the judge wants every marker, so a step the shell never reached (a
//!   failed redirection on a special built-in such as `:` or `exec` makes `sh` exit) reads
//!   INCONCLUSIVE, never blocked. Files the harness judges a payload by are left in a `scratch/`
//!   directory made beforehand, never directly in the workspace root (where Landlock refuses any
//!   new entry, which would read blocked for that reason alone).
//! - **An attack must be able to succeed.** The no-jail columns (`root/none`, `user/none`; alone
//!   with `--no-jail`) run every attack case with no jail at all: the payload runs directly as
//!   that user, in the same workspace, with the same planted home and sentinels, environment,
//!   working directory and stdin (cordon's own options and the project file's limits have no one
//!   to apply them), judged by the same judge, and must read `escapes` there; NO-ESCAPE fails the
//!   suite (the case tests nothing). A case the host itself refuses for some user says so in
//!   [`Case::no_jail_impossible`] (`impossible`, never counted as passed; STALE-IMPOSSIBLE, a
//!   failure, if it escapes after all), and a payload that would harm the host without a jail
//!   (mounts over it, opens its disks, floods it) says so in [`Case::no_jail_unsafe`] (`unsafe`,
//!   not run there). The controls do not run in these columns.
//! - **Judge on the host.** Wherever possible the harness checks the effect from outside: the file
//!   on the host is absent or unchanged, the host listener saw no connection, the host process is
//!   alive. Otherwise the payload's output is searched for a sentinel it must not have seen.
//! - **Test-owned sentinels only.** Fake credentials with random markers are planted in a fresh
//!   home per case; no real user data, kernel tunable or device is ever written.
//! - **Controls.** The usability rows run in the same columns: a launcher that refuses everything
//!   scores zero.
//! - **Columns.** root and an unprivileged user ([`USER`](cordon_test_support::user::USER),
//!   created when missing, dropped to with `setpriv`) × the host and minimal postures under
//!   bubblewrap, plus the host posture under the Landlock backend, root through `cordon serve`,
//!   and both users with no jail. A column that cannot run is reported as unavailable, never as
//!   passed, and under `CI=true` that is a failure.
//! - **Landlock limits are declared, never inferred.** A case the Landlock backend cannot block
//!   (or serve) says why in [`Case::landlock_limit`]; only then does ESCAPED (or BROKEN) in a
//!   landlock column read LIMIT. A declared limit that shows in no landlock column (blocked there)
//!   fails the suite as STALE-LIMIT, so the list in `docs/backends.md` stays true.
//!
//! `--mutants` reruns the attack cases against launchers weakened one defence at a time (the
//! `mutants` feature of `cordon-launch`, debug builds only) and fails unless every weakening turns
//! at least one case ESCAPED.

mod autorun;
mod backend;
mod bounds;
mod columns;
mod creds;
mod descriptors;
mod destination;
mod env;
mod harness;
mod input;
mod kernel;
mod layer;
mod loopback;
mod matrix;
mod neighbours;
mod network;
mod processes;
mod protected;
mod resources;
mod sockets;
mod stage;
mod survey;
mod usability;
mod writes;

use std::collections::{BTreeMap, VecDeque};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;
use cordon_test_support::cmd::Cmd;
use cordon_test_support::error::Error;

use columns::{Column, Identities};
use harness::{Ctx, Suite};
use matrix::{Matrix, Outcome, Verdict};

/// The classes of ESCAPES.md, plus the controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// 1: writes outside the writable set.
    Writes,
    /// 2: writes to protected paths inside the workspace.
    Protected,
    /// 3: credential reads.
    Credentials,
    /// 4: the environment.
    Environment,
    /// 5: processes.
    Processes,
    /// 6: the network and IPC.
    Network,
    /// 7: the kernel surface.
    Kernel,
    /// 8: descriptors.
    Descriptors,
    /// 9: resources.
    Resources,
    /// 10: the launcher's own input.
    LauncherInput,
    /// 11: a backend that fails.
    Backend,
    /// 12: network by destination (the proxy mode).
    Destination,
    /// The controls: what must keep working.
    Usability,
}

impl Class {
    /// The class's heading in the matrix.
    pub fn title(self) -> &'static str {
        match self {
            Class::Writes => "1. Writes outside the writable set",
            Class::Protected => "2. Writes to protected paths inside the workspace",
            Class::Credentials => "3. Credential reads",
            Class::Environment => "4. Environment",
            Class::Processes => "5. Processes",
            Class::Network => "6. Network and IPC",
            Class::Kernel => "7. Kernel surface",
            Class::Descriptors => "8. Descriptors",
            Class::Resources => "9. Resources",
            Class::LauncherInput => "10. Launcher input",
            Class::Backend => "11. Backend failure",
            Class::Destination => "12. Network by destination",
            Class::Usability => "Usability (controls)",
        }
    }
}

/// One attack (or control).
pub struct Case {
    /// Stable id, `class/what`.
    pub id: &'static str,
    /// The class it belongs to (its section of the matrix).
    pub class: Class,
    /// One line: the attack and what must hold.
    pub about: &'static str,
    /// Runs alone (timing-sensitive or heavy), after the others.
    pub exclusive: bool,
    /// Whether the mutant runs include it (cases that test the launcher's refusals or usability
    /// say nothing about a weakened jail).
    pub in_mutants: bool,
    /// Why the Landlock backend cannot block (or serve) this case, if it cannot.
    pub landlock_limit: Option<&'static str>,
    /// For whom, and why, this attack cannot succeed even without a jail (the host itself
    /// refuses it), if it cannot: its no-jail cells then read `impossible` (never passed), and
    /// STALE-IMPOSSIBLE if it escapes there after all.
    pub no_jail_impossible: Option<(Users, Option<Applies>, &'static str)>,
    /// For whom, and why, this payload must not run without a jail (it would harm the host):
    /// its no-jail cells read `unsafe` and it is not run there.
    pub no_jail_unsafe: Option<(Users, &'static str)>,
    /// Runs the case in one column and gives its verdict.
    pub run: fn(&Ctx<'_>) -> Outcome,
}

impl Case {
    /// A case that runs in parallel with others and in the mutant runs, with no Landlock limit.
    pub const fn attack(
        id: &'static str,
        class: Class,
        about: &'static str,
        run: fn(&Ctx<'_>) -> Outcome,
    ) -> Case {
        Case {
            id,
            class,
            about,
            exclusive: false,
            in_mutants: true,
            landlock_limit: None,
            no_jail_impossible: None,
            no_jail_unsafe: None,
            run,
        }
    }

    /// Runs alone, after the others.
    pub const fn exclusive(mut self) -> Case {
        self.exclusive = true;
        self
    }

    /// Left out of the mutant runs.
    pub const fn not_in_mutants(mut self) -> Case {
        self.in_mutants = false;
        self
    }

    /// Declares a documented limit of the Landlock backend: ESCAPED (BROKEN for a control) in a
    /// landlock column reads LIMIT, and anything else there fails as a stale limit.
    pub const fn landlock_limit(mut self, why: &'static str) -> Case {
        self.landlock_limit = Some(why);
        self
    }

    /// Declares that the attack cannot succeed for `users` even without a jail, because the
    /// host itself refuses it (file modes, missing capabilities): in their no-jail column it
    /// reads `impossible`, and STALE-IMPOSSIBLE (a failure) if it escapes there.
    pub const fn no_jail_impossible(mut self, users: Users, why: &'static str) -> Case {
        self.no_jail_impossible = Some((users, None, why));
        self
    }

    /// The same, only on machines where `applies` holds (a kernel feature, a device): elsewhere
    /// the case must escape without a jail like any other.
    pub const fn no_jail_impossible_where(
        mut self,
        users: Users,
        applies: Applies,
        why: &'static str,
    ) -> Case {
        self.no_jail_impossible = Some((users, Some(applies), why));
        self
    }

    /// Declares that the payload must not run for `users` without a jail, because it would
    /// harm the host there (mounts, devices, unbounded memory or processes): in their no-jail
    /// column it is not run and reads `unsafe`.
    pub const fn no_jail_unsafe(mut self, users: Users, why: &'static str) -> Case {
        self.no_jail_unsafe = Some((users, why));
        self
    }

    /// The declared impossibility without a jail for `who`, if any.
    pub fn impossible_for(&self, who: columns::Who) -> Option<&'static str> {
        self.no_jail_impossible.and_then(|(users, applies, why)| {
            (users.include(who) && applies.is_none_or(|f| f())).then_some(why)
        })
    }

    /// The declared danger without a jail for `who`, if any.
    pub fn unsafe_for(&self, who: columns::Who) -> Option<&'static str> {
        self.no_jail_unsafe
            .and_then(|(users, why)| users.include(who).then_some(why))
    }

    /// Whether this is an attack (the no-jail columns run attacks, not the controls).
    pub fn is_attack(&self) -> bool {
        self.class != Class::Usability
    }
}

/// Whether a machine-dependent no-jail declaration holds on this machine.
pub type Applies = fn() -> bool;

/// Whom a no-jail declaration concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Users {
    /// root and the unprivileged user.
    Both,
    /// root only.
    Root,
    /// The unprivileged user only.
    Unprivileged,
}

impl Users {
    /// Whether `who` is among them.
    pub fn include(self, who: columns::Who) -> bool {
        matches!(
            (self, who),
            (Users::Both, _)
                | (Users::Root, columns::Who::Root)
                | (Users::Unprivileged, columns::Who::User)
        )
    }

    /// In words, for the matrix.
    pub fn words(self) -> &'static str {
        match self {
            Users::Both => "root and the user",
            Users::Root => "root",
            Users::Unprivileged => "the unprivileged user",
        }
    }
}

/// Every case, in matrix order.
pub fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(writes::cases());
    cases.extend(protected::cases());
    cases.extend(autorun::cases());
    cases.extend(layer::cases());
    cases.extend(creds::cases());
    cases.extend(survey::cases());
    cases.extend(env::cases());
    cases.extend(processes::cases());
    cases.extend(neighbours::cases());
    cases.extend(network::cases());
    cases.extend(sockets::cases());
    cases.extend(loopback::cases());
    cases.extend(kernel::cases());
    cases.extend(descriptors::cases());
    cases.extend(resources::cases());
    cases.extend(bounds::cases());
    cases.extend(input::cases());
    cases.extend(backend::cases());
    cases.extend(destination::cases());
    cases.extend(stage::cases());
    cases.extend(usability::cases());
    cases
}

/// The weakenings `--mutants` tries, one at a time.
pub const MUTANTS: &[&str] = &[
    "no-netns",
    "no-seccomp",
    "no-pidns",
    "no-masks",
    "root-writable",
    "keep-fds",
    "env-whole",
    "no-private-tmp",
    "protected-writable",
    "home-visible",
    "no-timeout",
    "no-kill-after-launcher-death",
];

/// Cases run in parallel by default.
pub const DEFAULT_JOBS: usize = 6;

/// Options of `cargo xtask escape-suite`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Also write the results as JSON here.
    pub json: Option<PathBuf>,
    /// Run the mutants instead of the matrix.
    pub mutants: bool,
    /// Only these columns (default: all).
    pub columns: Vec<String>,
    /// Only cases whose id starts with one of these.
    pub only: Vec<String>,
    /// Parallel cases.
    pub jobs: usize,
    /// Keep the case directories.
    pub keep: bool,
    /// Only these weakenings (default: all).
    pub mutant: Vec<String>,
    /// Only the no-jail columns (`root/none`, `user/none`), attack cases only.
    pub no_jail: bool,
}

fn err(msg: impl Into<String>) -> Error {
    Error::Escape(msg.into())
}

/// Run real attacks through `cordon run` in every column; `--mutants` proves the suite can fail.
#[derive(Debug, Parser)]
#[command(name = "cordon-escape", version)]
struct EscapeArgs {
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Run the cases against deliberately weakened launchers; fail unless each is caught.
    #[arg(long)]
    mutants: bool,
    /// Only these columns (root/host, root/minimal, user/host, user/minimal, root/landlock, user/landlock, root/serve, root/serve-layer, root/none, user/none; root/live runs only when named); default: all but root/live.
    #[arg(long, value_delimiter = ',')]
    columns: Vec<String>,
    /// Only the cases whose id starts with one of these prefixes.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Cases run in parallel (most of a case is waiting on the kernel, not computing).
    #[arg(long, default_value_t = DEFAULT_JOBS)]
    jobs: usize,
    /// Keep the case directories (under /var/lib/cordon-escape when root).
    #[arg(long)]
    keep: bool,
    /// With --mutants: only these weakenings.
    #[arg(long, value_delimiter = ',')]
    mutant: Vec<String>,
    /// Only the no-jail columns (root/none, user/none): every attack case run with no jail at
    /// all must escape (or declare why it cannot); with --columns, only those of them.
    #[arg(long, conflicts_with = "mutants")]
    no_jail: bool,
}

fn main() -> ExitCode {
    let args = EscapeArgs::parse();
    let opts = Options {
        json: args.json,
        mutants: args.mutants,
        columns: args.columns,
        only: args.only,
        jobs: args.jobs,
        keep: args.keep,
        mutant: args.mutant,
        no_jail: args.no_jail,
    };
    match run(&cordon_test_support::workspace_root(), &opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the suite; `Err` when anything fails.
pub fn run(root: &Path, opts: &Options) -> Result<(), Error> {
    let started = Instant::now();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let columns: Vec<Column> = if opts.columns.is_empty() {
        if opts.no_jail {
            Column::NO_JAIL.to_vec()
        } else {
            Column::ALL.to_vec()
        }
    } else {
        opts.columns
            .iter()
            .map(|n| {
                Column::parse(n).ok_or_else(|| {
                    err(format!(
                        "unknown column {n:?}; known: {}, and {} when named",
                        Column::ALL.map(Column::name).join(", "),
                        Column::EXTRA.map(Column::name).join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?
    };
    if opts.no_jail
        && let Some(jailed) = columns.iter().find(|c| !c.unjailed())
    {
        return Err(err(format!(
            "--no-jail runs only {}; {} has a jail",
            Column::NO_JAIL.map(Column::name).join(" and "),
            jailed.name()
        )));
    }
    let ids = columns::identities();
    let suite = prepare(root, &ids, opts)?;
    let cases = all_cases();
    let selected: Vec<&Case> = cases
        .iter()
        .filter(|c| opts.only.is_empty() || opts.only.iter().any(|o| c.id.starts_with(o.as_str())))
        .filter(|c| !opts.no_jail || c.is_attack())
        .collect();
    if selected.is_empty() {
        return Err(err("no case matches --only"));
    }
    let result = if opts.mutants {
        run_mutants(root, &suite, &ids, &columns, &selected, opts, ci)
    } else {
        run_matrix(root, &suite, &ids, &columns, &selected, opts, ci)
    };
    if !opts.keep {
        let _ = std::fs::remove_dir_all(&suite.base);
    } else {
        println!("case directories kept in {}", suite.base.display());
    }
    println!(
        "escape-suite{}: {:.1} s",
        if opts.mutants {
            " --mutants"
        } else if opts.no_jail {
            " --no-jail"
        } else {
            ""
        },
        started.elapsed().as_secs_f64()
    );
    result
}

/// Builds both CLIs and lays out the run's directory.
fn prepare(root: &Path, ids: &Identities, opts: &Options) -> Result<Suite, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = cordon_test_support::target_dir(root);
    Cmd::new(&cargo)
        .args(["build", "--locked", "-p", "cordon"])
        .current_dir(root)
        .run()?;
    let mutants_target = target.join("mutants");
    Cmd::new(&cargo)
        .args(["build", "--locked", "-p", "cordon", "--features", "mutants"])
        .env("CARGO_TARGET_DIR", &mutants_target)
        .current_dir(root)
        .run()?;
    // Under /var/lib when root (outside the jail's private /tmp, so a mask is what hides a planted
    // credential, and reachable by the unprivileged user); in target/ otherwise.
    let parent = if rustix::process::geteuid().is_root() {
        PathBuf::from("/var/lib/cordon-escape")
    } else {
        target.join("escape-suite")
    };
    let base = parent.join(format!(
        "run-{}{}",
        std::process::id(),
        if opts.mutants { "-mutants" } else { "" }
    ));
    let io = |what: &str, e: std::io::Error| err(format!("{what}: {e}"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(base.join("bin")).map_err(|e| io("creating the run directory", e))?;
    for dir in [&parent, &base, &base.join("bin")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| io("chmod", e))?;
    }
    let cordon = base.join("bin").join("cordon");
    let cordon_mutants = base.join("bin").join("cordon-mutants");
    std::fs::copy(target.join("debug/cordon"), &cordon)
        .map_err(|e| io("copying target/debug/cordon", e))?;
    std::fs::copy(mutants_target.join("debug/cordon"), &cordon_mutants)
        .map_err(|e| io("copying target/mutants/debug/cordon", e))?;
    for who in [columns::Who::Root, columns::Who::User] {
        if let Ok(i) = ids.ids(who) {
            let cache = base.join(format!("cache-{}", i.uid));
            std::fs::create_dir_all(&cache).map_err(|e| io("cache dir", e))?;
            std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| io("chmod", e))?;
            std::os::unix::fs::chown(&cache, Some(i.uid), Some(i.gid))
                .map_err(|e| io("chown", e))?;
        }
    }
    let python = ["/usr/bin/python3", "/bin/python3", "/usr/local/bin/python3"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    Ok(Suite {
        base,
        cordon,
        cordon_mutants,
        mutant: None,
        drop_with_setpriv: ids.drop_with_setpriv,
        python,
    })
}

/// One (case, column) job.
struct Job<'c> {
    row: usize,
    case: &'c Case,
    column: Column,
}

/// Runs `jobs` with `parallel` workers (exclusive cases afterwards, one at a time).
fn execute(
    suite: &Suite,
    ids: &Identities,
    jobs: Vec<Job<'_>>,
    parallel: usize,
) -> Vec<(usize, Column, Outcome)> {
    let (exclusive, shared): (Vec<_>, Vec<_>) = jobs.into_iter().partition(|j| j.case.exclusive);
    let results = Mutex::new(Vec::new());
    let one = |job: &Job<'_>| {
        let started = Instant::now();
        let unjailed = job.column.unjailed();
        let outcome = match ids.ids(job.column.who) {
            Err(why) => Outcome::new(Verdict::Unavailable, why),
            Ok(_) if unjailed && job.case.unsafe_for(job.column.who).is_some() => Outcome::new(
                Verdict::Unsafe,
                format!(
                    "not run without a jail: {}",
                    job.case.unsafe_for(job.column.who).unwrap_or_default()
                ),
            ),
            Ok(i) => match Ctx::new(suite, job.column, i, job.case.id) {
                Err(e) => Outcome::new(Verdict::Inconclusive, format!("harness: {e}")),
                Ok(ctx) => {
                    let mut o = (job.case.run)(&ctx);
                    if unjailed {
                        o = matrix::no_jail_verdict(job.case.impossible_for(job.column.who), o);
                    }
                    // A case whose directory other jails may be mounting over (a host socket's,
                    // sockets.rs) keeps it until the suite's end removes the run directory.
                    if matches!(
                        o.verdict,
                        Verdict::Blocked | Verdict::Ok | Verdict::Escapes | Verdict::Impossible
                    ) && !ctx.dir.join(harness::KEEP_UNTIL_END).exists()
                    {
                        let _ = std::fs::remove_dir_all(&ctx.dir);
                    }
                    o
                }
            },
        };
        if outcome.verdict.fails() && suite.mutant.is_none() {
            eprintln!(
                "  {} [{}]: {} — {}",
                job.case.id,
                job.column.name(),
                outcome.verdict.word(),
                harness::cut(&outcome.detail, 400)
            );
        }
        let took = started.elapsed();
        if took.as_secs() >= 20 {
            eprintln!(
                "  slow: {} [{}{}] took {:.1} s",
                job.case.id,
                job.column.name(),
                suite.mutant.map(|m| format!(", {m}")).unwrap_or_default(),
                took.as_secs_f64()
            );
        }
        if let Ok(mut r) = results.lock() {
            r.push((job.row, job.column, outcome));
        }
    };
    let queue = Mutex::new(VecDeque::from(shared));
    std::thread::scope(|s| {
        for _ in 0..parallel.max(1) {
            s.spawn(|| {
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.pop_front());
                    match next {
                        Some(job) => one(&job),
                        None => break,
                    }
                }
            });
        }
    });
    for job in &exclusive {
        one(job);
    }
    results.into_inner().unwrap_or_default()
}

fn run_matrix(
    root: &Path,
    suite: &Suite,
    ids: &Identities,
    columns: &[Column],
    cases: &[&Case],
    opts: &Options,
    ci: bool,
) -> Result<(), Error> {
    let started = Instant::now();
    let mut matrix = Matrix::new(cases, columns);
    for c in columns {
        if let Err(why) = ids.ids(c.who) {
            matrix.unavailable_columns.insert(c.name(), why);
        }
    }
    let mut jobs = Vec::new();
    for (row, case) in cases.iter().enumerate() {
        // The no-jail columns run the attacks only: a control proves nothing without a jail.
        for column in columns.iter().filter(|c| case.is_attack() || !c.unjailed()) {
            jobs.push(Job {
                row,
                case,
                column: *column,
            });
        }
    }
    println!(
        "escape-suite: {} cases × {} columns, {} parallel",
        cases.len(),
        columns.len(),
        opts.jobs
    );
    for (row, column, outcome) in execute(suite, ids, jobs, opts.jobs) {
        matrix.rows[row].results.insert(column.name(), outcome);
    }
    matrix.apply_limits(cases);
    matrix.took_secs = started.elapsed().as_secs_f64();
    println!("\n{}", matrix.table());
    let counts = matrix.counts();
    println!(
        "{}",
        counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (col, why) in &matrix.unavailable_columns {
        println!("column {col} UNAVAILABLE: {why}");
    }
    if let Some(path) = &opts.json {
        let text = serde_json::to_string_pretty(&matrix).map_err(|e| err(e.to_string()))?;
        std::fs::write(path, text).map_err(|e| err(format!("{}: {e}", path.display())))?;
    }
    let full = opts.only.is_empty() && columns.len() == Column::ALL.len();
    if full {
        let md = root.join("docs").join("escape-matrix.md");
        std::fs::write(&md, matrix.markdown(cases))
            .map_err(|e| err(format!("{}: {e}", md.display())))?;
        println!("wrote {}", md.display());
        let md = root.join("docs").join("backends.md");
        std::fs::write(&md, matrix.backends(cases))
            .map_err(|e| err(format!("{}: {e}", md.display())))?;
        println!("wrote {}", md.display());
    }
    let cold = harness::SERVED_COLD
        .lock()
        .map(|c| c.clone())
        .unwrap_or_default();
    if !cold.is_empty() {
        return Err(err(format!(
            "{} command(s) of the serve column ran without a jail built ahead, so the column \
             proves nothing about those jails: {}",
            cold.len(),
            cold.join("; ")
        )));
    }
    let failures = matrix.failures();
    if !failures.is_empty() {
        println!("\nfailing cells:");
        for (id, col, o) in &failures {
            println!(
                "  {id} [{col}] {}: {}",
                o.verdict.word(),
                harness::cut(&o.detail, 600)
            );
        }
        return Err(err(format!("{} failing cell(s)", failures.len())));
    }
    if ci && !matrix.unavailable_columns.is_empty() {
        return Err(err(format!(
            "CI=true and {} column(s) are unavailable",
            matrix.unavailable_columns.len()
        )));
    }
    Ok(())
}

/// The columns the mutants run in: the first selected bubblewrap column that can run (the
/// weakenings are bubblewrap's defences), and the serve column when it is selected, so that
/// jails built ahead of their command are weakened and caught too.
fn mutant_columns(ids: &Identities, columns: &[Column]) -> Vec<Column> {
    let runnable = |c: &Column| !c.landlock() && !c.unjailed() && ids.ids(c.who).is_ok();
    let cold = columns.iter().copied().find(|c| runnable(c) && !c.served());
    let served = columns.iter().copied().find(|c| runnable(c) && c.served());
    cold.into_iter().chain(served).collect()
}

fn run_mutants(
    root: &Path,
    base_suite: &Suite,
    ids: &Identities,
    columns: &[Column],
    cases: &[&Case],
    opts: &Options,
    ci: bool,
) -> Result<(), Error> {
    let mutant_cols = mutant_columns(ids, columns);
    if mutant_cols.is_empty() {
        return Err(err(
            "no selected bubblewrap column can run here (the mutants weaken bubblewrap's jail)",
        ));
    }
    if ci && ids.ids(columns::Who::Root).is_err() {
        return Err(err("CI=true requires running as root"));
    }
    hooks_unreachable(root, base_suite)?;
    mutant_jails_independent(base_suite)?;
    if let Some(unknown) = opts.mutant.iter().find(|m| !MUTANTS.contains(&m.as_str())) {
        return Err(err(format!(
            "unknown weakening {unknown:?}; known: {}",
            MUTANTS.join(", ")
        )));
    }
    let cases: Vec<&Case> = cases.iter().copied().filter(|c| c.in_mutants).collect();
    let mutants: Vec<&str> = MUTANTS
        .iter()
        .copied()
        .filter(|m| opts.mutant.is_empty() || opts.mutant.iter().any(|o| o == m))
        .collect();
    println!(
        "escape-suite --mutants: {} weakenings × {} cases in column(s) {}",
        mutants.len(),
        cases.len(),
        mutant_cols
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut report: BTreeMap<&str, Vec<(&str, Outcome)>> = BTreeMap::new();
    let mut survivors = Vec::new();
    for mutant in &mutants {
        let started = Instant::now();
        let suite = Suite {
            base: base_suite.base.clone(),
            cordon: base_suite.cordon.clone(),
            cordon_mutants: base_suite.cordon_mutants.clone(),
            mutant: Some(mutant),
            drop_with_setpriv: base_suite.drop_with_setpriv,
            python: base_suite.python.clone(),
        };
        let closed_in: Vec<String> = mutant_cols
            .iter()
            .filter(|c| fails_closed(&suite, mutant, **c))
            .map(|c| c.name())
            .collect();
        let jobs: Vec<Job<'_>> = mutant_cols
            .iter()
            .filter(|c| !closed_in.contains(&c.name()))
            .flat_map(|&column| {
                cases
                    .iter()
                    .enumerate()
                    .map(move |(row, case)| Job { row, case, column })
            })
            .collect();
        let results = execute(&suite, ids, jobs, opts.jobs);
        // Caught only when some case turns ESCAPED in every column it runs in, but for a
        // column whose weakened jail does not start at all (its self-check refuses it: the
        // layered stage refuses a jail without its own pid namespace, say), where no case
        // runs.
        let mut caught: Vec<(&str, Outcome)> = Vec::new();
        let mut missed_in: Vec<String> = Vec::new();
        for column in &mutant_cols {
            if closed_in.contains(&column.name()) {
                continue;
            }
            let mut here: Vec<(&str, Outcome)> = results
                .iter()
                .filter(|(_, c, o)| c == column && o.verdict == Verdict::Escaped)
                .map(|(row, _, o)| (cases[*row].id, o.clone()))
                .collect();
            if here.is_empty() {
                missed_in.push(column.name());
            }
            caught.append(&mut here);
        }
        caught.sort_by_key(|(id, _)| *id);
        println!(
            "  {mutant:<20} {:>5.1} s  {}",
            started.elapsed().as_secs_f64(),
            if !missed_in.is_empty() {
                format!(
                    "SURVIVED in {}: no case turned ESCAPED",
                    missed_in.join(", ")
                )
            } else if caught.is_empty() {
                format!(
                    "the self-check refused the weakened jail in {}",
                    closed_in.join(", ")
                )
            } else {
                format!(
                    "caught by {} case(s): {}{}",
                    caught.len(),
                    caught
                        .iter()
                        .map(|(id, _)| *id)
                        .collect::<Vec<_>>()
                        .join(", "),
                    if closed_in.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; in {} the self-check refused every command",
                            closed_in.join(", ")
                        )
                    }
                )
            }
        );
        if !missed_in.is_empty() {
            survivors.push(*mutant);
        }
        report.insert(mutant, caught);
    }
    if let Some(path) = &opts.json {
        let json: BTreeMap<&str, Vec<serde_json::Value>> = report
            .iter()
            .map(|(m, c)| {
                (
                    *m,
                    c.iter()
                        .map(|(id, o)| serde_json::json!({"case": id, "detail": o.detail}))
                        .collect(),
                )
            })
            .collect();
        let text = serde_json::to_string_pretty(&json).map_err(|e| err(e.to_string()))?;
        std::fs::write(path, text).map_err(|e| err(format!("{}: {e}", path.display())))?;
    }
    let cold = harness::SERVED_COLD
        .lock()
        .map(|c| c.clone())
        .unwrap_or_default();
    if !cold.is_empty() {
        return Err(err(format!(
            "{} weakened command(s) of the serve column ran without a jail built ahead, so the \
             mutants run proves nothing about those jails: {}",
            cold.len(),
            cold.join("; ")
        )));
    }
    if survivors.is_empty() {
        println!("every weakening was caught");
        Ok(())
    } else {
        Err(err(format!(
            "weakening(s) no case caught: {}",
            survivors.join(", ")
        )))
    }
}

/// The weakenings must be unreachable outside a debug build with the `mutants` feature: the
/// default build and a release build *with* the feature contain none of the hooks' names, and the
/// release build ignores both variables (its jail still has a seccomp filter).
fn hooks_unreachable(root: &Path, suite: &Suite) -> Result<(), Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = cordon_test_support::target_dir(root).join("mutants");
    Cmd::new(&cargo)
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "cordon",
            "--features",
            "mutants",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(root)
        .run()?;
    let release = target.join("release").join("cordon");
    let has = |path: &Path, needle: &[u8]| {
        std::fs::read(path).is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
    };
    for (what, path) in [
        ("default debug build", &suite.cordon),
        ("release build with --features mutants", &release),
    ] {
        for needle in [b"CORDON_MUTANT".as_slice(), b"CORDON_TEST_BWRAP".as_slice()] {
            if has(path, needle) {
                return Err(err(format!(
                    "the {what} ({}) contains {}: the weakenings are reachable",
                    path.display(),
                    String::from_utf8_lossy(needle)
                )));
            }
        }
    }
    if !has(&suite.cordon_mutants, b"CORDON_MUTANT") {
        return Err(err(
            "the mutants build does not contain its hooks: the check above proves nothing",
        ));
    }
    let home = suite.base.join("release-check");
    let work = home.join("proj");
    std::fs::create_dir_all(&work).map_err(|e| err(format!("{}: {e}", work.display())))?;
    let out = std::process::Command::new(&release)
        .args([
            "run",
            "--",
            "/bin/sh",
            "-c",
            "grep ^Seccomp: /proc/self/status",
        ])
        .env_clear()
        .env("HOME", &home)
        .env("PATH", harness::STD_PATH)
        .env("CORDON_MUTANT", "no-seccomp")
        .env("CORDON_TEST_BWRAP", "/nonexistent/bwrap")
        .current_dir(&work)
        .output()
        .map_err(|e| err(format!("{}: {e}", release.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !text.contains("Seccomp:\t2") {
        return Err(err(format!(
            "CORDON_MUTANT=no-seccomp {} run: exit {:?}, {text:?}: the release build honours a weakening",
            release.display(),
            out.status.code()
        )));
    }
    println!(
        "weakenings unreachable: no hook names in the default build nor in a release build with the feature; \
         CORDON_MUTANT=no-seccomp on the release build still runs with Seccomp: 2"
    );
    Ok(())
}

/// Weakened jails must stay independent of each other, as real ones are: a launcher killed
/// mid-run (`proc/launcher-killed`) has its session reaper kill its own jail, found by a marker
/// in the jail's command line, and must not take down another case's jail running at the same
/// time (which would turn that case's verdict into noise: a fixed marker once made every
/// weakening look caught by `proc/timeout-kills-tree`). One weakened run is started, a second
/// one is SIGKILLed beside it, and the first must finish on its own.
/// Whether `mutant`'s weakened jail refuses to start in `column` (root columns only): the
/// self-check found the weakening and ran nothing, so the jail failed closed.
fn fails_closed(suite: &Suite, mutant: &str, column: Column) -> bool {
    if column.who != columns::Who::Root {
        return false;
    }
    let home = suite.base.join(format!(
        "mutants-closed-{mutant}-{}",
        column.name().replace('/', "-")
    ));
    let work = home.join("proj");
    if std::fs::create_dir_all(&work).is_err() {
        return false;
    }
    let mut args: Vec<&str> = vec!["run", "--json"];
    args.extend(column.profile_args());
    args.extend(column.backend_args());
    if column.live() {
        args.push("--live");
    }
    args.extend(["--", "/bin/true"]);
    let out = std::process::Command::new(&suite.cordon_mutants)
        .args(&args)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", harness::STD_PATH)
        .env("CORDON_MUTANT", mutant)
        .current_dir(&work)
        .stdin(std::process::Stdio::null())
        .output();
    let closed = out.is_ok_and(|o| {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        v["status"] == "refused"
            && v["refusal"]
                .as_str()
                .is_some_and(|r| r.contains("self-check"))
    });
    let _ = std::fs::remove_dir_all(&home);
    closed
}

fn mutant_jails_independent(suite: &Suite) -> Result<(), Error> {
    let base = suite.base.join("mutants-independent");
    let start = |name: &str, script: &str| -> Result<std::process::Child, Error> {
        let home = base.join(name);
        let work = home.join("proj");
        std::fs::create_dir_all(&work).map_err(|e| err(format!("{}: {e}", work.display())))?;
        std::process::Command::new(&suite.cordon_mutants)
            .args([
                "run",
                "--json",
                "--timeout",
                "20",
                "--",
                "/bin/sh",
                "-c",
                script,
            ])
            .env_clear()
            .env("HOME", &home)
            .env("PATH", harness::STD_PATH)
            .env("CORDON_MUTANT", "no-masks")
            .current_dir(&work)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| err(format!("{}: {e}", suite.cordon_mutants.display())))
    };
    let survivor = start("survivor", "sleep 1.5; echo finished")?;
    std::thread::sleep(Duration::from_millis(200));
    let mut killed = start("killed", "sleep 30")?;
    std::thread::sleep(Duration::from_millis(500));
    let _ = killed.kill();
    let _ = killed.wait();
    let out = survivor
        .wait_with_output()
        .map_err(|e| err(format!("waiting for the weakened run: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if out.status.code() != Some(0) || !text.contains("finished") {
        return Err(err(format!(
            "a weakened jail did not survive another weakened launcher's SIGKILL (exit {:?}): {text}",
            out.status.code()
        )));
    }
    println!(
        "weakened jails independent: a SIGKILLed weakened launcher left another's jail running"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use columns::Ids;

    #[test]
    fn the_mutants_run_cold_and_served_never_in_a_landlock_column() {
        let ids = Identities {
            root: Ok(Ids { uid: 0, gid: 0 }),
            user: Ok(Ids { uid: 1, gid: 1 }),
            drop_with_setpriv: true,
        };
        let landlock: Vec<Column> = Column::ALL.into_iter().filter(|c| c.landlock()).collect();
        assert!(mutant_columns(&ids, &landlock).is_empty());
        let mut order = landlock.clone();
        order.extend(Column::ALL);
        let picked = mutant_columns(&ids, &order);
        assert_eq!(
            picked.len(),
            2,
            "a cold bubblewrap column and the serve column"
        );
        assert!(picked.iter().all(|c| !c.landlock()), "{picked:?}");
        assert!(!picked[0].served() && picked[1].served(), "{picked:?}");
    }

    #[test]
    fn the_no_jail_declarations_give_their_reasons_and_concern_attacks_only() {
        let cases = all_cases();
        let mut declared = 0;
        for c in &cases {
            for (users, why) in [
                c.no_jail_impossible.map(|(u, _, w)| (u, w)),
                c.no_jail_unsafe,
            ]
            .into_iter()
            .flatten()
            {
                declared += 1;
                assert!(
                    c.is_attack(),
                    "{}: a control never runs without a jail",
                    c.id
                );
                assert!(why.split_whitespace().count() >= 8, "{}: {why:?}", c.id);
                assert!(!users.words().is_empty());
            }
            // One user cannot be both: a case is either run (and judged) there or not.
            if let (Some((a, _, _)), Some((b, _))) = (c.no_jail_impossible, c.no_jail_unsafe) {
                for who in [columns::Who::Root, columns::Who::User] {
                    assert!(!(a.include(who) && b.include(who)), "{}", c.id);
                }
            }
        }
        assert!(declared > 0);
        let attacks = cases.iter().filter(|c| c.is_attack()).count();
        assert!(
            declared * 5 < attacks,
            "{declared} of {attacks} attacks declared: the no-jail check would prove little"
        );
    }

    #[test]
    fn no_jail_declarations_name_their_users() {
        use columns::Who;
        assert!(Users::Both.include(Who::Root) && Users::Both.include(Who::User));
        assert!(Users::Root.include(Who::Root) && !Users::Root.include(Who::User));
        assert!(!Users::Unprivileged.include(Who::Root) && Users::Unprivileged.include(Who::User));
        let c = Case::attack("x/y", Class::Kernel, "about", |_| {
            Outcome::new(Verdict::Inconclusive, "")
        })
        .no_jail_impossible_where(Users::Unprivileged, || false, "never on this machine")
        .no_jail_unsafe(Users::Root, "as root it would harm the host");
        assert_eq!(
            c.impossible_for(Who::User),
            None,
            "the condition does not hold"
        );
        assert_eq!(c.impossible_for(Who::Root), None);
        assert_eq!(
            c.unsafe_for(Who::Root),
            Some("as root it would harm the host")
        );
        assert_eq!(c.unsafe_for(Who::User), None);
    }

    #[test]
    fn every_declared_limit_gives_its_reason_in_words() {
        let cases = all_cases();
        let limited: Vec<&Case> = cases
            .iter()
            .filter(|c| c.landlock_limit.is_some())
            .collect();
        assert!(!limited.is_empty());
        for c in limited {
            let why = c.landlock_limit.unwrap();
            assert!(why.split_whitespace().count() >= 5, "{}: {why:?}", c.id);
        }
    }
}
