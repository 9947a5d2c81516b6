//! cordon-workloads, the workloads suite (`cargo xtask workloads` runs it): real upstream
//! projects' own test suites, and the probes test suites need, run on the host and in a bubblewrap jail (`cordon run --backend bwrap` from the built
//! binary), as root and as the unprivileged user, with the counts compared.
//!
//! 1. **Fetch** (on the host, with the network): every archive of [`projects::PROJECTS`] into
//!    the cache (`/var/lib/cordon-workloads` unless `--cache`), each checked against the sha256
//!    of the table. What is cached is not fetched again. Rust crates come from cargo's own
//!    registry cache, so the CI subset needs no network at all.
//! 2. **Prepare** (on the host): the unprivileged user's copy of the Rust toolchain (root's lives
//!    under `/root`, which that user cannot enter), vendored crate dependencies, and the `cordon`
//!    binary copied where that user can execute it.
//! 3. **Run**: each project's script, and each probe, in a fresh workspace per column (host/jail
//!    × root/user). The jail denies the network: everything it needs is in the workspace.
//! 4. **Compare**: per project and user, the jail must count what the host counted (passed and
//!    failed) and exit as it did; per probe, it must work where it works on the host. A
//!    difference that [`KNOWN`] does not explain fails the task, naming the project and the
//!    difference, with the jail's error lines the host did not print. A host run that fails
//!    fails the task too: that comparison would say nothing.
//!
//! Sources are never committed: only the table of versions and digests, and the scripts.

mod count;
mod doc;
mod npm_pins;
mod probes;
mod projects;
mod served;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use clap::Parser;
use cordon_test_support::cmd::Cmd;
use cordon_test_support::error::Error;
use cordon_test_support::user::Ids;

use count::Counts;
use projects::{Deps, Needed, Project, Source};

/// Real upstream projects' test suites (Python, Node, Rust, C) and the probes test suites need,
/// on the host and in a bubblewrap jail, as root and as the unprivileged user; fails on a
/// difference (docs/workloads.md). Without --all: the probes and the CI subset.
#[derive(Debug, Clone, Default, Parser)]
#[command(name = "cordon-workloads", version)]
pub struct Options {
    /// Every project, not only the CI subset (fetches what is not cached: needs the registries).
    #[arg(long)]
    pub all: bool,
    /// Only these projects or probes (comma-separated; `probes` names every probe).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Where the archives, the user's toolchain copy and the runs live
    /// (default /var/lib/cordon-workloads; not under /tmp or /var/tmp, which the jail replaces).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Write docs/workloads.md from this run.
    #[arg(long)]
    pub write_doc: bool,
    /// Keep the logs of this run (their directory is printed).
    #[arg(long)]
    pub keep: bool,
    /// Run the jailed column under the copy-on-write layer (`cordon run --layer`); the
    /// comparison is the same. Not with --write-doc (docs/workloads.md is the default mode's).
    #[arg(long)]
    pub layer: bool,
    /// Run the jailed column under the Landlock backend (`cordon run --backend landlock`, live,
    /// with its supervisor): where containers and CI runners put a harness. Not with
    /// --write-doc or --layer.
    #[arg(long)]
    pub landlock: bool,
    /// Run the jailed column where a container puts a harness: namespaces refused around cordon
    /// (an outer bubblewrap's seccomp filter, as Docker's default profile refuses them) and
    /// `--backend auto`, which must fall back to the Landlock backend and say so in every run.
    /// Implies --landlock.
    #[arg(long)]
    pub container: bool,
    /// Run the jailed column through a `cordon serve` session per item, as a harness does: the
    /// script is the session's second command, handed to the jail built ahead while the first
    /// was answered (layered in the default mode: the layer is taken when the command comes).
    /// Not with --write-doc.
    #[arg(long)]
    pub serve: bool,
}

fn main() -> ExitCode {
    match run(&cordon_test_support::workspace_root(), &Options::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A difference that is understood: the project (or probe) and user where the jail differs, and
/// why. The task still prints it; it does not fail on it.
struct Known {
    item: &'static str,
    user: Who,
    /// Under the Landlock backend (`--landlock`, `--container`), else under bubblewrap.
    landlock: bool,
    why: &'static str,
}

/// The differences understood so far. Each names the rule of the jail, and the issue whose
/// work removes it; when one no longer happens, the run says so and it should be removed.
const KNOWN: &[Known] = &[
    Known {
        item: "tar-owner",
        user: Who::Root,
        landlock: false,
        why: TAR_OWNER,
    },
    landlock_known("dev-shm", Who::Root, LANDLOCK_SHM),
    landlock_known("dev-shm", Who::User, LANDLOCK_SHM),
];

const fn landlock_known(item: &'static str, user: Who, why: &'static str) -> Known {
    Known {
        item,
        user,
        landlock: true,
        why,
    }
}

const LANDLOCK_SHM: &str = "`cat: /dev/shm/cordon-workloads-N: No such file or directory`: under \
     the Landlock backend a file made below /dev/shm (a write-open, which the supervisor \
     performs) lands in the run's own directory, but a read-only open never reaches the \
     supervisor (seccomp cannot read the path, and sending every open there would tax every \
     build) and looks among the host's, which hold no such name and which Landlock refuses to \
     read. A limit of the backend (docs/limits.md); shm_open, sem_open and multiprocessing, which \
     open for writing, work.";

const TAR_OWNER: &str = "`tar: f: Cannot change ownership to uid 1000, gid 1000: Invalid argument`, tar exits 2: \
     as root, tar's default (--same-owner) chowns each file to its archived owner, and the jail's \
     user namespace maps uid 0 alone (bubblewrap maps only the caller's id), so fchownat(2) to \
     an unmapped id fails with EINVAL. As the unprivileged user tar does not chown, so it works \
     in both places. The projects unpack with --no-same-owner; pip and npm unpack without it \
     failing.";

/// Whose columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Who {
    /// Root, with the caller's `PATH` and home.
    Root,
    /// The unprivileged user ([`USER`](cordon_test_support::user::USER)), with a home of its own.
    User,
}

impl Who {
    fn label(self) -> &'static str {
        match self {
            Who::Root => "root",
            Who::User => "user",
        }
    }
}

/// Where a run happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Host,
    Jail,
}

impl Place {
    fn label(self) -> &'static str {
        match self {
            Place::Host => "host",
            Place::Jail => "jail",
        }
    }
}

/// A project or a probe: what runs in one workspace.
#[derive(Debug, Clone, Copy)]
enum Item {
    Project(&'static Project),
    Probe(&'static probes::Probe),
}

impl Item {
    fn name(self) -> &'static str {
        match self {
            Item::Project(p) => p.name,
            Item::Probe(p) => p.name,
        }
    }

    /// Seconds a run may take: cordon's `--timeout` in the jail, and on the host too.
    fn timeout_secs(self) -> u32 {
        match self {
            Item::Project(_) => 1500,
            Item::Probe(_) => 120,
        }
    }

    fn script(self) -> &'static str {
        match self {
            Item::Project(p) => p.script,
            Item::Probe(p) => p.script,
        }
    }
}

/// One run of one item in one column.
#[derive(Debug, Clone)]
struct Run {
    exit: Option<i32>,
    counts: Counts,
    log: String,
}

impl Run {
    fn ok(&self) -> bool {
        self.exit == Some(0)
    }
}

/// An item's four runs (user runs absent when not root).
#[derive(Debug, Clone)]
pub struct Row {
    item: Item,
    runs: Vec<(Who, Place, Run)>,
}

impl Row {
    fn run(&self, who: Who, place: Place) -> Option<&Run> {
        self.runs
            .iter()
            .find(|(w, p, _)| *w == who && *p == place)
            .map(|(_, _, r)| r)
    }
}

/// The fixed parts of a run: paths and identities.
struct Setup {
    cache: PathBuf,
    runs: PathBuf,
    cordon: PathBuf,
    /// `--layer` for the jailed runs, or nothing.
    mode: &'static [&'static str],
    /// The backend the jailed runs name.
    backend: &'static str,
    /// The container's filter file, when the jailed runs are in one (`--container`).
    container: Option<PathBuf>,
    /// Through a `cordon serve` session (`--serve`).
    serve: bool,
    root_path: String,
    root_home: PathBuf,
    user: Option<(Ids, PathBuf, String)>,
}

/// Runs the suite in the workspace at `root`; `Err` when a comparison (or the set-up) fails.
pub fn run(root: &Path, opts: &Options) -> Result<(), Error> {
    if (opts.layer || opts.serve) && opts.write_doc {
        return Err(fail(
            "--layer or --serve with --write-doc: docs/workloads.md records `cordon run` in the default mode; run them apart",
        ));
    }
    let landlock = opts.landlock || opts.container;
    if landlock && (opts.write_doc || opts.layer) {
        return Err(fail(
            "--landlock (or --container) with --write-doc or --layer: docs/workloads.md records bubblewrap's default mode, and the Landlock backend makes no layer",
        ));
    }
    let items = select(opts)?;
    let cache = match &opts.cache {
        Some(dir) => dir.clone(),
        None => PathBuf::from("/var/lib/cordon-workloads"),
    };
    make_dir(&cache)?;
    let cache = fs::canonicalize(&cache)
        .map_err(|e| fail(format!("cannot resolve {}: {e}", cache.display())))?;
    let projects: Vec<&Project> = items
        .iter()
        .filter_map(|i| match i {
            Item::Project(p) => Some(*p),
            Item::Probe(_) => None,
        })
        .collect();

    println!("workloads: fetching into {}", cache.display());
    fetch(&cache, &projects)?;

    cordon_test_support::cargo(root)
        .args(["build", "--locked", "-p", "cordon", "--bin", "cordon"])
        .run()?;
    let built = cordon_test_support::target_dir(root).join("debug/cordon");
    let cordon = cache.join("bin/cordon");
    make_dir(&cache.join("bin"))?;
    let _ = fs::remove_file(&cordon);
    fs::copy(&built, &cordon).map_err(|e| {
        fail(format!(
            "cannot copy {} to {}: {e}",
            built.display(),
            cordon.display()
        ))
    })?;

    let runs = cache.join(format!("runs-{}", std::process::id()));
    let _ = fs::remove_dir_all(&runs);
    make_dir(&runs)?;
    let root_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    let root_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into());
    let user = if rustix::process::geteuid().is_root() {
        let ids = cordon_test_support::user::ensure_user().map_err(fail)?;
        let toolchain = user_toolchain(root, &cache)?;
        let home = runs.join("home");
        make_dir(&home)?;
        chown(&home, ids)?;
        chmod_readable(&cache, &runs)?;
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            toolchain.join("bin").display()
        );
        Some((ids, home, path))
    } else {
        println!("workloads: not root, so the unprivileged user's columns do not run");
        None
    };
    let setup = Setup {
        cache: cache.clone(),
        runs: runs.clone(),
        cordon,
        mode: if opts.layer { &["--layer"] } else { &[] },
        backend: match (opts.container, landlock) {
            (true, _) => "auto",
            (false, true) => "landlock",
            (false, false) => "bwrap",
        },
        container: if opts.container {
            Some(container_filter(&cache)?)
        } else {
            None
        },
        serve: opts.serve,
        root_path,
        root_home,
        user,
    };

    let mut rows = Vec::new();
    for item in &items {
        rows.push(run_item(&setup, *item)?);
    }

    let verdict = judge(&rows, landlock);
    print_table(&rows);
    if opts.write_doc {
        let path = root.join("docs/workloads.md");
        fs::write(&path, doc::render(&rows, &verdict, &tools(&setup)))
            .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
        println!("workloads: wrote {}", path.display());
    }
    if opts.keep {
        println!("workloads: workspaces and logs kept in {}", runs.display());
    } else {
        let _ = fs::remove_dir_all(&runs);
    }
    for line in &verdict.notes {
        println!("{line}");
    }
    if verdict.failures.is_empty() {
        println!(
            "workloads: every item ran in the jail as on the host ({} item(s))",
            rows.len()
        );
        Ok(())
    } else {
        Err(fail(format!(
            "{} comparison(s) failed:\n{}",
            verdict.failures.len(),
            verdict.failures.join("\n")
        )))
    }
}

/// The versions of the tools the projects ran with (root's), for the document.
fn tools(setup: &Setup) -> doc::Tools {
    let probe = |program: &str, args: &[&str]| {
        Cmd::new(program)
            .args(args)
            .env("PATH", &setup.root_path)
            .current_dir(&setup.cache)
            .probe()
            .and_then(|out| out.lines().next().map(str::to_owned))
            .unwrap_or_else(|| "missing".into())
    };
    doc::Tools(vec![
        ("kernel".into(), probe("uname", &["-r"])),
        ("bubblewrap".into(), probe("bwrap", &["--version"])),
        ("python3 (root)".into(), probe("python3", &["--version"])),
        (
            "python3 (user)".into(),
            probe("/usr/bin/python3", &["--version"]),
        ),
        ("perl".into(), probe("perl", &["-e", "print $^V"])),
        ("node".into(), probe("node", &["--version"])),
        ("cargo".into(), probe("cargo", &["--version"])),
        ("gcc".into(), probe("gcc", &["-dumpfullversion"])),
    ])
}

fn fail(message: impl Into<String>) -> Error {
    Error::Workloads(message.into())
}

/// The items to run: the probes, then the projects (the CI subset unless `--all`), narrowed by
/// `--only`; an unknown name is refused.
fn select(opts: &Options) -> Result<Vec<Item>, Error> {
    let known: BTreeSet<&str> = probes::PROBES
        .iter()
        .map(|p| p.name)
        .chain(projects::PROJECTS.iter().map(|p| p.name))
        .chain(["probes"])
        .collect();
    if let Some(bad) = opts.only.iter().find(|n| !known.contains(n.as_str())) {
        return Err(fail(format!(
            "--only {bad}: no project or probe of that name (known: {})",
            known.iter().copied().collect::<Vec<_>>().join(", ")
        )));
    }
    let wanted = |name: &str, probe: bool| {
        opts.only.is_empty()
            || opts
                .only
                .iter()
                .any(|n| n == name || (probe && n == "probes"))
    };
    let mut items: Vec<Item> = probes::PROBES
        .iter()
        .filter(|p| wanted(p.name, true))
        .map(Item::Probe)
        .collect();
    items.extend(
        projects::PROJECTS
            .iter()
            .filter(|p| (opts.all || p.ci || !opts.only.is_empty()) && wanted(p.name, false))
            .map(Item::Project),
    );
    Ok(items)
}

// ---------------------------------------------------------------------------------------------
// Fetch

fn fetch(cache: &Path, projects: &[&Project]) -> Result<(), Error> {
    let archives = cache.join("archives");
    make_dir(&archives)?;
    let mut missing: Vec<Needed> = Vec::new();
    let mut seen = BTreeSet::new();
    for need in projects.iter().flat_map(|p| projects::needed(p)) {
        if !seen.insert(need.file.clone()) {
            continue;
        }
        let path = archives.join(&need.file);
        if path.is_file() && sha256(&path)? == need.sha256 {
            continue;
        }
        missing.push(need);
    }
    if missing.is_empty() {
        return Ok(());
    }
    let staging = cache.join(format!("staging-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    make_dir(&staging)?;
    let outcome = (|| {
        let npm: Vec<String> = missing
            .iter()
            .filter_map(|n| match n.source {
                Source::Npm { name, version } => Some(format!("{name}@{version}")),
                _ => None,
            })
            .collect();
        if !npm.is_empty() {
            Cmd::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(&staging)
                .args(&npm)
                .current_dir(&staging)
                .read()?;
        }
        for need in &missing {
            match need.source {
                Source::Npm { .. } => {}
                Source::Pypi {
                    name,
                    version,
                    sdist,
                } => {
                    Cmd::new("python3")
                        .args(["-m", "pip", "download", "--quiet", "--no-deps"])
                        .arg(if sdist {
                            "--no-binary"
                        } else {
                            "--only-binary"
                        })
                        .arg(":all:")
                        .arg("--dest")
                        .arg(&staging)
                        .arg(format!("{name}=={version}"))
                        .run()?;
                }
                Source::CargoCache { krate } => {
                    let found = cargo_cached(krate)?;
                    copy(&found, &staging.join(&need.file))?;
                }
                Source::Debian { package, version } => {
                    debian_source(cache, &staging, package, version)?
                }
            }
            let got = staging.join(&need.file);
            if !got.is_file() {
                return Err(fail(format!(
                    "fetching {:?} did not produce {}",
                    need.source,
                    got.display()
                )));
            }
            let digest = sha256(&got)?;
            if digest != need.sha256 {
                return Err(fail(format!(
                    "{}: sha256 {digest}, the table pins {} ({:?}); not used",
                    need.file, need.sha256, need.source
                )));
            }
            fs::rename(&got, archives.join(&need.file)).map_err(|e| {
                fail(format!(
                    "cannot move {} into {}: {e}",
                    got.display(),
                    archives.display()
                ))
            })?;
            println!("workloads: fetched {} (sha256 ok)", need.file);
        }
        Ok(())
    })();
    let _ = fs::remove_dir_all(&staging);
    outcome
}

/// Cargo's home on the host: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Result<PathBuf, Error> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or_else(|| {
            fail("neither CARGO_HOME nor HOME is set: cannot find cargo's registry cache")
        })
}

/// `krate.crate` in cargo's registry cache.
fn cargo_cached(krate: &str) -> Result<PathBuf, Error> {
    let registries = cargo_home()?.join("registry/cache");
    let entries = fs::read_dir(&registries)
        .map_err(|e| fail(format!("cannot read {}: {e}", registries.display())))?;
    for entry in entries.flatten() {
        let candidate = entry.path().join(format!("{krate}.crate"));
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(fail(format!(
        "{krate}.crate is not in cargo's registry cache {} (the workspace's build puts it there: run `cargo fetch --locked`)",
        registries.display()
    )))
}

/// Downloads one Debian source package with apt's own client, from a deb-src list derived from
/// the machine's apt sources (Types: deb → deb-src), kept in the cache: the machine's apt
/// configuration is not changed.
fn debian_source(cache: &Path, dest: &Path, package: &str, version: &str) -> Result<(), Error> {
    let apt = cache.join("apt");
    let parts = apt.join("sources.list.d");
    let lists = apt.join("lists");
    make_dir(&parts)?;
    make_dir(&lists.join("partial"))?;
    let mut derived = String::new();
    if let Ok(dir) = fs::read_dir("/etc/apt/sources.list.d") {
        for entry in dir.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "sources") {
                let text = fs::read_to_string(&path).unwrap_or_default();
                for line in text.lines() {
                    let line = if line.trim() == "Types: deb" {
                        "Types: deb-src"
                    } else {
                        line
                    };
                    derived.push_str(line);
                    derived.push('\n');
                }
                derived.push('\n');
            }
        }
    }
    let mut legacy = String::new();
    for line in fs::read_to_string("/etc/apt/sources.list")
        .unwrap_or_default()
        .lines()
    {
        if let Some(rest) = line.trim().strip_prefix("deb ") {
            legacy.push_str(&format!("deb-src {rest}\n"));
        }
    }
    if derived.trim().is_empty() && legacy.is_empty() {
        return Err(fail(
            "no apt source of type deb in /etc/apt: cannot derive a deb-src list",
        ));
    }
    fs::write(parts.join("workloads.sources"), derived)
        .and_then(|()| fs::write(apt.join("sources.list"), legacy))
        .map_err(|e| {
            fail(format!(
                "cannot write the deb-src list under {}: {e}",
                apt.display()
            ))
        })?;
    let opts = [
        format!(
            "Dir::Etc::SourceList={}",
            apt.join("sources.list").display()
        ),
        format!("Dir::Etc::SourceParts={}", parts.display()),
        format!("Dir::State::Lists={}", lists.display()),
    ];
    let with_opts = |cmd: Cmd| opts.iter().fold(cmd, |c, o| c.arg("-o").arg(o));
    with_opts(Cmd::new("apt-get"))
        .args(["-q", "update"])
        .run()?;
    with_opts(Cmd::new("apt-get"))
        .args(["-q", "source", "--download-only"])
        .arg(format!("{package}={version}"))
        .current_dir(dest)
        .run()?;
    Ok(())
}

fn sha256(path: &Path) -> Result<String, Error> {
    let out = Cmd::new("sha256sum").arg(path).read()?;
    out.split_whitespace()
        .next()
        .map(str::to_owned)
        .ok_or_else(|| fail(format!("sha256sum printed nothing for {}", path.display())))
}

// ---------------------------------------------------------------------------------------------
// Prepare

/// A copy of the toolchain the workspace pins (`rustc --print sysroot`) that the unprivileged
/// user can execute: hard links where the file system allows, else a copy.
fn user_toolchain(root: &Path, cache: &Path) -> Result<PathBuf, Error> {
    // In the workspace root, so that rustup picks the toolchain the workspace pins.
    let rustc = Cmd::new("rustc").current_dir(root);
    let sysroot = rustc.clone().args(["--print", "sysroot"]).read()?;
    let sysroot = fs::canonicalize(&sysroot)
        .map_err(|e| fail(format!("cannot resolve the sysroot {sysroot}: {e}")))?;
    // Named by the compiler's release and commit, so an updated toolchain gets a fresh copy.
    let version = rustc.arg("-vV").read()?;
    let field = |key: &str| {
        version
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().chars().take(12).collect::<String>())
            .unwrap_or_else(|| "unknown".into())
    };
    let name = format!("{}-{}", field("release:"), field("commit-hash:"));
    let dest = cache.join("toolchain").join(name);
    if dest.join("bin/cargo").is_file() {
        return Ok(dest);
    }
    make_dir(&cache.join("toolchain"))?;
    let linked = Cmd::new("cp")
        .arg("-al")
        .arg(&sysroot)
        .arg(&dest)
        .probe()
        .is_some();
    if !linked {
        let _ = fs::remove_dir_all(&dest);
        Cmd::new("cp").arg("-a").arg(&sysroot).arg(&dest).run()?;
    }
    if !dest.join("bin/cargo").is_file() {
        return Err(fail(format!(
            "{} has no bin/cargo: not a toolchain",
            sysroot.display()
        )));
    }
    Ok(dest)
}

/// A fresh workspace for `item`: `dl/` with its archives, and what its [`Deps`] lay out.
fn workspace(setup: &Setup, item: Item, dir: &Path) -> Result<(), Error> {
    make_dir(dir)?;
    let Item::Project(project) = item else {
        return Ok(());
    };
    let dl = dir.join("dl");
    make_dir(&dl)?;
    let archives = setup.cache.join("archives");
    for need in projects::needed(project) {
        let to = match need.source {
            Source::Npm { .. } => {
                make_dir(&dl.join("npm"))?;
                dl.join("npm").join(&need.file)
            }
            _ => dl.join(&need.file),
        };
        copy(&archives.join(&need.file), &to)?;
    }
    match project.deps {
        Deps::None => {}
        Deps::TapeTree => {
            let index: String = npm_pins::TAPE_TREE
                .iter()
                .map(|(name, version, _)| format!("{name} {}\n", projects::npm_file(name, version)))
                .collect();
            fs::write(dl.join("npm/index.txt"), index)
                .map_err(|e| fail(format!("cannot write the npm index: {e}")))?;
        }
        Deps::CargoHome => {
            let registry = cargo_home()?.join("registry");
            let to = dir.join("cargo-home/registry");
            make_dir(&to)?;
            for part in ["index", "cache"] {
                let status = Command::new("cp")
                    .arg("-a")
                    .arg(registry.join(part))
                    .arg(to.join(part))
                    .status()
                    .map_err(|e| fail(format!("cannot run cp: {e}")))?;
                if !status.success() {
                    return Err(fail(format!(
                        "cannot copy {} into {} ({status})",
                        registry.join(part).display(),
                        to.display()
                    )));
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Run

fn run_item(setup: &Setup, item: Item) -> Result<Row, Error> {
    let mut row = Row {
        item,
        runs: Vec::new(),
    };
    let mut columns = vec![(Who::Root, Place::Host), (Who::Root, Place::Jail)];
    if setup.user.is_some() {
        columns.extend([(Who::User, Place::Host), (Who::User, Place::Jail)]);
    }
    for (who, place) in columns {
        let dir = setup
            .runs
            .join(format!("{}-{}", who.label(), place.label()))
            .join(item.name());
        workspace(setup, item, &dir)?;
        let log_path = dir.with_extension("log");
        let mut cmd = match (who, &setup.user) {
            (Who::User, Some((ids, _, _))) => {
                chown(&dir, *ids)?;
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={}", ids.uid))
                    .arg(format!("--regid={}", ids.gid))
                    .args(["--clear-groups", "--"]);
                c
            }
            _ => Command::new("env"),
        };
        if who == Who::User {
            cmd.arg("env");
        }
        let (home, path) = match (who, &setup.user) {
            (Who::User, Some((_, home, path))) => (home.clone(), path.clone()),
            _ => (setup.root_home.clone(), setup.root_path.clone()),
        };
        cmd.arg("-i")
            .arg(format!("PATH={path}"))
            .arg(format!("HOME={}", home.display()))
            .arg("LANG=C.UTF-8");
        let limit = item.timeout_secs();
        let served = place == Place::Jail && setup.serve;
        if place == Place::Jail {
            if let Some(filter) = &setup.container {
                cmd.arg("/bin/sh")
                    .args(cordon_test_support::container::wrap_args(filter));
            }
            cmd.arg(&setup.cordon)
                .args([
                    if served { "serve" } else { "run" },
                    "--backend",
                    setup.backend,
                ])
                .args(setup.mode)
                .arg("--timeout")
                .arg(limit.to_string());
        }
        if !served {
            if place == Place::Jail {
                cmd.arg("--");
            }
            cmd.args(["sh", "-eu", "-c", item.script()]);
        }
        cmd.current_dir(&dir);
        print!(
            "workloads: {:<16} {} {} ... ",
            item.name(),
            who.label(),
            place.label()
        );
        let started = Instant::now();
        let exit = if served {
            served::run_served(&mut cmd, item.script(), limit, &log_path)?
        } else {
            let log = fs::File::create(&log_path)
                .map_err(|e| fail(format!("cannot create {}: {e}", log_path.display())))?;
            let err = log
                .try_clone()
                .map_err(|e| fail(format!("cannot duplicate the log: {e}")))?;
            run_bounded(cmd.stdin(Stdio::null()).stdout(log).stderr(err), limit)?
        };
        let took = started.elapsed();
        let text = String::from_utf8_lossy(&fs::read(&log_path).unwrap_or_default()).into_owned();
        let counts = match item {
            Item::Project(p) => count::count(p.counter, &text),
            Item::Probe(_) => Counts::default(),
        };
        let run = Run {
            exit,
            counts,
            log: text,
        };
        println!("{} ({:.1}s)", describe(item, &run), took.as_secs_f64());
        if place == Place::Jail
            && setup.container.is_some()
            && !run.log.contains(cordon_test_support::container::FELL_BACK)
        {
            return Err(fail(format!(
                "{} ({}): in the container, `--backend auto` did not say it fell back to the Landlock backend:\n{}",
                item.name(),
                who.label(),
                indent(&tail(&run.log, 12))
            )));
        }
        // The workspace goes at once (builds are large); the log stays with the run.
        let _ = fs::remove_dir_all(&dir);
        row.runs.push((who, place, run));
    }
    Ok(row)
}

/// Writes the container's seccomp filter (`cordon_test_support::container`) into the cache,
/// readable by the unprivileged user.
fn container_filter(cache: &Path) -> Result<PathBuf, Error> {
    let bytes = cordon_test_support::container::filter()
        .ok_or_else(|| fail("--container: no container filter for this architecture"))?;
    let path = cache.join("container.bpf");
    fs::write(&path, bytes).map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644))
        .map_err(|e| fail(format!("cannot chmod {}: {e}", path.display())))?;
    Ok(path)
}

/// Runs `cmd` in a process group of its own, killed whole after `limit` seconds (on the host
/// as in the jail, where cordon's own `--timeout` ends the jail first), and killed whole when it
/// ends too, so nothing a run left behind outlives it. Its exit code; `None` when killed.
fn run_bounded(cmd: &mut Command, limit: u32) -> Result<Option<i32>, Error> {
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .process_group(0)
        .spawn()
        .map_err(|e| fail(format!("cannot start {cmd:?}: {e}")))?;
    let group = rustix::process::Pid::from_child(&child);
    let deadline = Instant::now() + std::time::Duration::from_secs(u64::from(limit) + 30);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() > deadline => break None,
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(100)),
            Err(e) => return Err(fail(format!("cannot wait for {cmd:?}: {e}"))),
        }
    };
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    match status {
        Some(status) => Ok(status.code()),
        None => {
            let _ = child.wait();
            Ok(None)
        }
    }
}

/// One cell: a project's counts, or a probe's verdict, and the exit status when not 0.
fn describe(item: Item, run: &Run) -> String {
    let exit = match run.exit {
        Some(0) => String::new(),
        Some(code) => format!(", exit {code}"),
        None => ", killed".into(),
    };
    match item {
        Item::Probe(_) => {
            if run.ok() {
                "works".into()
            } else {
                format!("FAILS{exit}")
            }
        }
        Item::Project(_) if !run.counts.found => format!("no test summary{exit}"),
        Item::Project(_) => {
            let skipped = if run.counts.skipped > 0 {
                format!(", {} skipped", run.counts.skipped)
            } else {
                String::new()
            };
            format!(
                "{} passed, {} failed{skipped}{exit}",
                run.counts.passed, run.counts.failed
            )
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Compare

/// Where the jail's run differed from the host's.
pub struct Difference {
    /// The project or probe.
    pub name: String,
    /// Whose host and jail runs differ.
    pub who: Who,
    /// The known explanation, or "not explained yet".
    pub why: String,
    /// The jail's error lines the host did not print.
    pub evidence: String,
}

/// What the comparison found.
pub struct Verdict {
    /// Differences nothing explains, and host runs that failed: each fails the task.
    pub failures: Vec<String>,
    /// Per item and user, a difference, its explanation and the jail's error lines.
    pub differences: Vec<Difference>,
    /// Known differences that did not happen: remove them from [`KNOWN`].
    pub notes: Vec<String>,
}

fn same(item: Item, host: &Run, jail: &Run) -> bool {
    match item {
        Item::Probe(_) => host.ok() == jail.ok(),
        Item::Project(_) => {
            host.exit == jail.exit
                && host.counts.found == jail.counts.found
                && host.counts.passed == jail.counts.passed
                && host.counts.failed == jail.counts.failed
        }
    }
}

fn judge(rows: &[Row], landlock: bool) -> Verdict {
    let mut verdict = Verdict {
        failures: Vec::new(),
        differences: Vec::new(),
        notes: Vec::new(),
    };
    for row in rows {
        let name = row.item.name();
        for who in [Who::Root, Who::User] {
            let (Some(host), Some(jail)) = (row.run(who, Place::Host), row.run(who, Place::Jail))
            else {
                continue;
            };
            let known = KNOWN
                .iter()
                .find(|k| k.item == name && k.user == who && k.landlock == landlock);
            let host_good = host.ok()
                && (matches!(row.item, Item::Probe(_))
                    || (host.counts.found && host.counts.passed > 0));
            if !host_good {
                verdict.failures.push(format!(
                    "  - {name} ({}): the host run itself failed ({}), so the jail's run is compared with nothing:\n{}",
                    who.label(),
                    describe(row.item, host),
                    indent(&tail(&host.log, 12))
                ));
                continue;
            }
            if same(row.item, host, jail) {
                if let Some(k) = known {
                    verdict.notes.push(format!(
                        "workloads: NOTE {name} ({}) no longer differs; remove its KNOWN entry (\"{}\")",
                        who.label(),
                        k.why
                    ));
                }
                continue;
            }
            let evidence = jail_only_errors(&host.log, &jail.log);
            verdict.differences.push(Difference {
                name: name.to_owned(),
                who,
                why: known.map_or_else(
                    || "Not explained yet: this difference fails the task.".to_owned(),
                    |k| k.why.to_owned(),
                ),
                evidence: evidence.clone(),
            });
            if known.is_none() {
                verdict.failures.push(format!(
                    "  - {name} ({}): host {}, jail {}; the jail printed:\n{}",
                    who.label(),
                    describe(row.item, host),
                    describe(row.item, jail),
                    indent(&evidence)
                ));
            }
        }
    }
    verdict
}

/// The jail's lines that look like errors and that the host's log does not contain (at most 8),
/// else the jail log's last lines.
fn jail_only_errors(host: &str, jail: &str) -> String {
    let host_lines: BTreeSet<&str> = host.lines().map(str::trim).collect();
    let markers = [
        "error",
        "denied",
        "read-only",
        "not permitted",
        "failed",
        "no such file",
        "traceback",
        "assert",
        "cannot",
        "refused",
        "fatal",
    ];
    let mut seen = BTreeSet::new();
    let picked: Vec<&str> = jail
        .lines()
        .map(str::trim)
        .filter(|l| !host_lines.contains(l) && !l.is_empty())
        .filter(|l| {
            let lower = l.to_lowercase();
            markers.iter().any(|m| lower.contains(m))
        })
        .filter(|l| seen.insert(*l))
        .take(8)
        .collect();
    if picked.is_empty() {
        tail(jail, 8)
    } else {
        picked.join("\n")
    }
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn print_table(rows: &[Row]) {
    println!(
        "\n{:<16} {:<34} {:<34}",
        "item", "root: host | jail", "user: host | jail"
    );
    for row in rows {
        let cell = |who| match (row.run(who, Place::Host), row.run(who, Place::Jail)) {
            (Some(h), Some(j)) => format!("{} | {}", describe(row.item, h), describe(row.item, j)),
            _ => "-".into(),
        };
        println!(
            "{:<16} {:<34} {:<34}",
            row.item.name(),
            cell(Who::Root),
            cell(Who::User)
        );
    }
    println!();
}

// ---------------------------------------------------------------------------------------------
// Files

fn make_dir(dir: &Path) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))
}

fn copy(from: &Path, to: &Path) -> Result<(), Error> {
    fs::copy(from, to).map(|_| ()).map_err(|e| {
        fail(format!(
            "cannot copy {} to {}: {e}",
            from.display(),
            to.display()
        ))
    })
}

fn chown(path: &Path, ids: Ids) -> Result<(), Error> {
    std::os::unix::fs::lchown(path, Some(ids.uid), Some(ids.gid))
        .map_err(|e| fail(format!("cannot give {} to the user: {e}", path.display())))?;
    let meta = fs::symlink_metadata(path)
        .map_err(|e| fail(format!("cannot stat {}: {e}", path.display())))?;
    if meta.is_dir() {
        let entries =
            fs::read_dir(path).map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?;
        for entry in entries {
            let entry = entry.map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?;
            chown(&entry.path(), ids)?;
        }
    }
    Ok(())
}

/// The cache and the runs directory are opened to other users (they hold nothing secret); every
/// directory above them must already let them through, or the user's columns could not run.
fn chmod_readable(cache: &Path, runs: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    for d in [cache, runs] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o755))
            .map_err(|e| fail(format!("cannot open {} to other users: {e}", d.display())))?;
    }
    for d in cache.ancestors().skip(1) {
        let mode = fs::metadata(d).map(|m| m.permissions().mode()).unwrap_or(0);
        if mode & 0o001 == 0 {
            return Err(fail(format!(
                "{} (mode {mode:o}) does not let other users through, so the unprivileged user cannot reach the cache {}: choose another --cache",
                d.display(),
                cache.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exit: i32, passed: u64, failed: u64, log: &str) -> Run {
        Run {
            exit: Some(exit),
            counts: Counts {
                passed,
                failed,
                skipped: 0,
                found: true,
            },
            log: log.into(),
        }
    }

    fn project(name: &str) -> Item {
        projects::PROJECTS
            .iter()
            .find(|p| p.name == name)
            .map(Item::Project)
            .unwrap_or_else(|| panic!("no project {name}"))
    }

    #[test]
    fn a_jail_that_counts_fewer_passes_fails_naming_the_project_and_the_error() {
        let row = Row {
            item: project("zlib"),
            runs: vec![
                (Who::Root, Place::Host, run(0, 3, 0, "ok\n")),
                (
                    Who::Root,
                    Place::Jail,
                    run(2, 1, 2, "ok\nminigzip: /tmp/x: Read-only file system\n"),
                ),
            ],
        };
        let verdict = judge(&[row], false);
        assert_eq!(verdict.failures.len(), 1, "{:?}", verdict.failures);
        let failure = &verdict.failures[0];
        assert!(failure.contains("zlib (root)"), "{failure}");
        assert!(
            failure.contains("host 3 passed, 0 failed, jail 1 passed, 2 failed, exit 2"),
            "{failure}"
        );
        assert!(failure.contains("Read-only file system"), "{failure}");
        assert!(
            !failure.contains("      ok"),
            "a line the host printed too is no evidence: {failure}"
        );
    }

    #[test]
    fn equal_counts_pass_and_a_failed_host_run_fails() {
        let same_row = Row {
            item: project("strsim"),
            runs: vec![
                (Who::User, Place::Host, run(0, 107, 0, "")),
                (Who::User, Place::Jail, run(0, 107, 0, "")),
            ],
        };
        assert!(judge(&[same_row], false).failures.is_empty());
        let broken_host = Row {
            item: project("strsim"),
            runs: vec![
                (
                    Who::User,
                    Place::Host,
                    run(101, 0, 0, "error: could not compile"),
                ),
                (
                    Who::User,
                    Place::Jail,
                    run(101, 0, 0, "error: could not compile"),
                ),
            ],
        };
        let verdict = judge(&[broken_host], false);
        assert_eq!(verdict.failures.len(), 1);
        assert!(
            verdict.failures[0].contains("the host run itself failed"),
            "{:?}",
            verdict.failures
        );
    }

    #[test]
    fn a_known_difference_is_reported_but_does_not_fail() {
        let probe = probes::PROBES
            .iter()
            .find(|p| p.name == "tar-owner")
            .map(Item::Probe)
            .unwrap_or_else(|| panic!("no tar-owner probe"));
        let evidence = "tar: f: Cannot change ownership to uid 1000, gid 1000: Invalid argument";
        let row = Row {
            item: probe,
            runs: vec![
                (Who::Root, Place::Host, run(0, 0, 0, "")),
                (Who::Root, Place::Jail, run(2, 0, 0, evidence)),
            ],
        };
        let verdict = judge(&[row], false);
        assert!(verdict.failures.is_empty(), "{:?}", verdict.failures);
        assert_eq!(verdict.differences.len(), 1);
        assert!(verdict.differences[0].why.contains("fchownat"));
        assert_eq!(verdict.differences[0].evidence, evidence);
        // The same difference for the user is not known: it fails.
        let row = Row {
            item: probe,
            runs: vec![
                (Who::User, Place::Host, run(0, 0, 0, "")),
                (Who::User, Place::Jail, run(2, 0, 0, evidence)),
            ],
        };
        assert_eq!(judge(&[row], false).failures.len(), 1);
    }

    #[test]
    fn an_unknown_name_is_refused_and_the_default_is_the_ci_subset() {
        let bad = select(&Options {
            only: vec!["left-pad".into()],
            ..Options::default()
        });
        assert!(matches!(bad, Err(Error::Workloads(m)) if m.contains("--only left-pad")));
        let names: Vec<&str> = select(&Options::default())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|i| match i {
                Item::Project(p) => Some(p.name),
                Item::Probe(_) => None,
            })
            .collect();
        assert_eq!(names, ["strsim", "rusty-fork"]);
        let all = select(&Options {
            all: true,
            ..Options::default()
        })
        .unwrap_or_default();
        assert_eq!(all.len(), probes::PROBES.len() + projects::PROJECTS.len());
    }

    #[test]
    fn every_pin_is_a_sha256_and_npm_files_are_named_as_npm_pack_names_them() {
        for p in projects::PROJECTS {
            for need in projects::needed(p) {
                assert!(
                    need.sha256.len() == 64 && need.sha256.chars().all(|c| c.is_ascii_hexdigit()),
                    "{}: {}",
                    need.file,
                    need.sha256
                );
            }
        }
        assert_eq!(
            projects::npm_file("@ljharb/through", "2.3.14"),
            "ljharb-through-2.3.14.tgz"
        );
        assert_eq!(
            projects::npm_file("minimist", "1.2.8"),
            "minimist-1.2.8.tgz"
        );
    }
}
