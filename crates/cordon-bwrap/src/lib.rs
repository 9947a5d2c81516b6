//! A resolved [`Plan`](cordon_policy::Plan) → the bubblewrap argument list that enforces it.
//!
//! cordon jails a command on Linux with bubblewrap (`bwrap`): new user, PID, IPC, UTS and cgroup
//! namespaces (and a new network namespace when the network is denied), no capabilities, a new
//! terminal session, death with the launcher, an environment rebuilt from nothing, cordon's
//! seccomp filter, and a mount namespace built from the plan. [`build`] turns a guarded plan
//! ([`GuardedPlan`], from [`Plan::guard`](cordon_policy::Plan::guard)) into that argument list
//! and nothing else.
//!
//! # One owner for the jail
//!
//! Everything that decides what cordon's bubblewrap jail contains is decided here and in the
//! plan's guard, from the plan and the host facts alone: the namespaces, the masks, the
//! protected paths, the pins of the directories above them and the placeholders for missing
//! ones ([`GuardedPlan::placeholders`], which the caller makes before the jail starts), the
//! read-only `/proc/sys`, `/proc/irq` and `/proc/bus`, and whether bubblewrap can start with
//! the list at all ([`BwrapArgs::startable`]: its argument limit and its mount path length).
//! cordon's launcher adds nothing to the list, so a project that builds it with this crate
//! alone gets the jail `cordon run` hands bubblewrap.
//!
//! # The order of the mounts
//!
//! bubblewrap applies mounts in the order given and a later mount hides what lies below it, so
//! the order *is* the security property: a private `/tmp` must come before a workspace under
//! `/tmp`, a credential mask after the writable root it sits in. Every mount gets one sort key:
//!
//! 1. its destination, compared component by component — a parent always before its children;
//! 2. for mounts at the same destination, a rank from the blank slate to the final word:
//!    host root / private tmpfs / `/dev` / `/proc` < read-only tree or symlink < writable root <
//!    protected re-bind < the stage < credential mask.
//!
//! Two rules complete it: nothing is mounted strictly below a mask (the mask hides it, and
//! bubblewrap could not create a mount point in the read-only empty tmpfs), and the minimal
//! posture ends with `--remount-ro /` so its root tmpfs is read-only once every mount point
//! exists. `src/mounts.rs` explains each choice; [`BwrapArgs::render`] is the rule-list view a
//! reviewer reads.
//!
//! A masked directory is `--perms 0000 --tmpfs P --remount-ro P`: empty, unreadable (the jail has
//! no capabilities to bypass the mode), and read-only, so the jailed user, who owns the tmpfs,
//! can neither `chmod` it back nor stash files there. A masked file is `--ro-bind /dev/null P`.
//! A mask on a symlink masks its target, as the plan resolves it (a mount cannot sit on a
//! symlink).
//!
//! The result has two parts, because bubblewrap reads them from two places: the *options* go,
//! NUL-separated, to the descriptor named by `--args FD` ([`BwrapArgs::to_nul_separated`]), which
//! keeps environment values out of `/proc/PID/cmdline`; the *command* must follow `--args FD --`
//! on bubblewrap's own command line ([`BwrapArgs::command_line`]), since bubblewrap ignores
//! anything after the options in the `--args` data.
//!
//! # What this crate is not for
//!
//! - It does not find, probe or run bubblewrap, open descriptors or write the seccomp program:
//!   the launcher does. It reads no file and spawns nothing, so the same inputs always give the
//!   same list, and a fake host makes it snapshot-testable.
//! - It does not decide policy. The plan already holds canonical paths, only the masks and
//!   protected paths that exist, and the environment is already filtered; this crate only refuses
//!   what bubblewrap cannot express safely (a NUL byte, a relative path, a missing option).
//! - Callers cannot add bubblewrap options: the command goes after `--`, and every path lands as
//!   exactly one operand.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::ffi::OsString;
//!
//! use cordon_bwrap::{Descriptors, Features, Request, build};
//! use cordon_policy::{FakeHost, Invocation, Plan, Policy, Profile};
//!
//! let host = FakeHost::typical(); // a user `u` with a repository at /home/u/proj
//! let plan = Plan::resolve(
//!     &Policy::for_profile(Profile::Shell),
//!     &Invocation::at("/home/u/proj"),
//!     &host,
//! )?;
//! // In real use: Features::parse(<bwrap --version>, <bwrap --help>).
//! let features = Features::parse(
//!     "bubblewrap 0.8.0",
//!     "--args\n--seccomp\n--clearenv\n--cap-drop\n--die-with-parent\n--new-session\n--perms\n\
//!      --disable-userns\n--unshare-cgroup-try\n",
//! );
//! assert!(features.missing_required().is_empty());
//!
//! let env = BTreeMap::from([(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))]);
//! let argv = [OsString::from("cargo"), OsString::from("test")];
//! // The guard pins the directories above protected paths and lists the placeholders for
//! // git's missing redirections (a missing auto-run name is swept after the run instead): the
//! // launcher makes them before bubblewrap starts.
//! let plan = plan.guard(&host);
//! assert!(plan.placeholders().iter().any(|p| p.path.ends_with(".git/commondir")));
//! let args = build(&Request {
//!     plan: &plan,
//!     brokers: &[],
//!     features: &features,
//!     env: &env,
//!     fds: Descriptors { seccomp: 4 },
//!     stage: None,
//!     argv: &argv,
//! })?;
//!
//! let rules = args.render();
//! let position = |line: &str| rules.lines().position(|l| l == line).unwrap();
//! assert!(position("--ro-bind / /") < position("--bind /home/u/proj /home/u/proj"));
//! assert!(
//!     position("--bind /home/u/proj /home/u/proj")
//!         < position("--ro-bind /home/u/proj/.git/hooks /home/u/proj/.git/hooks")
//! );
//! // The home is private and read-only but for its vetted trees; the masks outside it stay.
//! assert!(position("--tmpfs /home/u") < position("--ro-bind /home/u/.rustup /home/u/.rustup"));
//! assert!(rules.contains("--ro-bind /dev/null /etc/shadow"));
//! assert!(rules.contains("--remount-ro /home/u\n--"));
//! assert!(rules.contains("--bind /home/u/proj/.git /home/u/proj/.git")); // a pin
//! assert!(rules.contains("--ro-bind /proc/sys /proc/sys"));
//! args.startable()?;
//! assert!(rules.ends_with("-- cargo test"));
//!
//! let _bytes_for_the_args_fd = args.to_nul_separated()?;
//! assert_eq!(args.command_line(3), ["--args", "3", "--", "cargo", "test"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod features;
mod mounts;
mod render;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use cordon_policy::DisplayPath;
use cordon_policy::{GuardedPlan, Network};

pub use error::BwrapError;
pub use features::{FEATURE_USES, FeatureUse, Features, MIN_VERSION, Need};

/// Where cordon's in-jail stage is bound (read-only) when [`Request::stage`] is given. It lies
/// in the private `/run`, so binding it creates nothing on the host.
pub const STAGE_PATH: &str = "/run/cordon/stage";

/// Most arguments bubblewrap takes: its `--args` data and the arguments after the descriptor,
/// together (bubblewrap 0.8's `MAX_ARGS`; measured: 8,993 options from `--args` with
/// `--args FD --ro-bind / / -- /bin/true` start, 8,994 do not). See [`check_argument_count`].
pub const MAX_ARGUMENTS: usize = 9_000;

/// Refuses, naming the count, `options` read from `--args` and a `command_line` (as
/// [`BwrapArgs::command_line`] gives it) that bubblewrap would refuse to start with.
pub fn check_argument_count(options: usize, command_line: usize) -> Result<(), BwrapError> {
    let count = options.saturating_add(command_line);
    if count > MAX_ARGUMENTS {
        return Err(BwrapError::TooManyArguments { count });
    }
    Ok(())
}

/// Longest path bubblewrap can mount: it reaches a source as `/oldroot` + path and a
/// destination as `/newroot` + path, which must fit PATH_MAX (4096 with its NUL). Measured with
/// bubblewrap 0.8: a 4,087-byte workspace mounts, a 4,088-byte one fails ("Can't get type of
/// source"). See [`check_mount_paths`].
pub const MAX_MOUNT_PATH: usize = 4_087;

/// Refuses, naming it, the first path of a mount step (`--bind`, `--ro-bind`, `--dev-bind` and
/// their `-try` forms, `--tmpfs`, `--dir`, `--proc`, `--dev`, `--remount-ro`, `--mqueue`) longer
/// than [`MAX_MOUNT_PATH`], which bubblewrap could not mount.
pub fn check_mount_paths(steps: &[Vec<OsString>]) -> Result<(), BwrapError> {
    for step in steps {
        let Some(option) = step.first().and_then(|o| o.to_str()) else {
            continue;
        };
        let roles: &[&'static str] = match option {
            "--bind" | "--ro-bind" | "--dev-bind" | "--bind-try" | "--ro-bind-try"
            | "--dev-bind-try" => &["mount source", "mount destination"],
            "--tmpfs" | "--dir" | "--proc" | "--dev" | "--remount-ro" | "--mqueue" => {
                &["mount destination"]
            }
            _ => continue,
        };
        for (what, path) in roles.iter().zip(&step[1..]) {
            let len = path.len();
            if len > MAX_MOUNT_PATH {
                return Err(BwrapError::PathTooLong {
                    what,
                    path: path.to_string_lossy().into_owned(),
                    len,
                });
            }
        }
    }
    Ok(())
}

/// The directory of [`STAGE_PATH`], reserved: a plan path inside it is refused.
pub const STAGE_DIR: &str = "/run/cordon";

/// Where, in a layered jail ([`build_layered`]), the stage finds the directory of layer `N`
/// (holding its `upper` and `work` directories, bound read-write) at `LAYER_DIR/N`, and the
/// root it covers (bound read-only, the overlay's lower layer) at [`LOWER_DIR`]`/N`. The stage
/// detaches both once the overlay is mounted: the command never reaches the upper directly.
pub const LAYER_DIR: &str = "/run/cordon/layer";

/// See [`LAYER_DIR`].
pub const LOWER_DIR: &str = "/run/cordon/lower";

/// The capabilities bubblewrap leaves the stage of a layered jail, in its own user namespace
/// only (where it is uid 0): enough to mount the overlay and for the overlay's own work (it
/// copies files up with its mounter's credentials: owners, modes, times, the mode-0 work
/// directory), and `CAP_SETFCAP`, without which the kernel refuses a nested user namespace the
/// map of uid 0 (the caller's id when the caller is root). The stage drops every capability,
/// enters a nested user namespace that maps the caller's own ids back, sets no-new-privileges and installs the seccomp filter before it
/// checks the jail and runs the command; its self-check refuses a payload that would keep any.
pub const LAYER_CAPS: &[&str] = &[
    "CAP_SYS_ADMIN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_CHOWN",
    "CAP_FSETID",
    "CAP_SETFCAP",
];

/// One writable root under a copy-on-write layer ([`build_layered`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRoot {
    /// The writable root, one of the plan's `writable`.
    pub root: std::path::PathBuf,
    /// The host directory holding the layer's `upper` and `work` directories (one mount, as
    /// overlayfs requires), made by the launcher for this run.
    pub dir: std::path::PathBuf,
}

impl LayerRoot {
    /// Where the jail's stage finds layer `index`: its directory and its lower root.
    pub fn jail_paths(index: usize) -> (std::path::PathBuf, std::path::PathBuf) {
        (
            Path::new(LAYER_DIR).join(index.to_string()),
            Path::new(LOWER_DIR).join(index.to_string()),
        )
    }
}

/// The descriptors the launcher hands to bubblewrap, besides the `--args` one (which the
/// launcher names on the command line itself; see [`BwrapArgs::command_line`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptors {
    /// The descriptor bubblewrap reads the seccomp BPF program from (`--seccomp FD`).
    pub seccomp: i32,
}

/// Everything [`build`] needs.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The resolved plan, guarded ([`Plan::guard`](cordon_policy::Plan::guard)): the pins and
    /// placeholders that keep protected paths in place are part of it, so the argument list is
    /// the jail cordon itself runs. Make (or join) its
    /// [`placeholders`](GuardedPlan::placeholders) before bubblewrap starts: each is bound
    /// read-only, and a missing one stops bubblewrap.
    pub plan: &'a GuardedPlan,
    /// The git configuration broker's shadows the launcher made on the host for this jail
    /// (`cordon_policy::ConfigBroker`): each bound over its repository's `commondir`
    /// placeholder. Made on the host at run time, so they are beside the plan, not in it.
    pub brokers: &'a [cordon_policy::ConfigBroker],
    /// What the installed bubblewrap supports.
    pub features: &'a Features,
    /// The exact environment of the jailed command, already filtered (`cordon-env`). Set inside
    /// the jail after `--clearenv`, in the map's (sorted) order.
    pub env: &'a BTreeMap<OsString, OsString>,
    /// Descriptor numbers as the launcher will hand them to bubblewrap.
    pub fds: Descriptors,
    /// The host path of cordon's stage binary: bound read-only at [`STAGE_PATH`], and the command
    /// becomes `STAGE_PATH argv...`. `None` runs `argv` directly.
    pub stage: Option<&'a Path>,
    /// The command: program and arguments (with a stage: the stage's arguments, which the
    /// launcher decides).
    pub argv: &'a [OsString],
}

/// bubblewrap's arguments for one jailed command. Built only by [`build`], so it never holds a
/// NUL byte, a relative path, or an option a caller chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwrapArgs {
    /// Options, one step (an option with its operands) per entry.
    steps: Vec<Vec<OsString>>,
    /// What runs in the jail.
    command: Vec<OsString>,
}

impl BwrapArgs {
    /// The options, flat: what goes into the `--args` descriptor.
    pub fn options(&self) -> Vec<OsString> {
        self.steps.concat()
    }

    /// The options grouped by step: an option with its operands (a directory mask's `--perms`,
    /// `--tmpfs` and `--remount-ro` form one step).
    pub fn steps(&self) -> &[Vec<OsString>] {
        &self.steps
    }

    /// The command that runs in the jail.
    pub fn command(&self) -> &[OsString] {
        &self.command
    }

    /// Whether bubblewrap can start with these arguments: refused, named, when they exceed its
    /// argument limit ([`check_argument_count`]) or hold a path longer than it can mount
    /// ([`check_mount_paths`]). The list is still there to show (`cordon explain`).
    pub fn startable(&self) -> Result<(), BwrapError> {
        check_argument_count(
            self.steps.iter().map(Vec::len).sum(),
            self.command_line(0).len(),
        )?;
        check_mount_paths(&self.steps)
    }

    /// The whole list as if given on one command line: options, `--`, command.
    pub fn to_list(&self) -> Vec<OsString> {
        let mut list = self.options();
        list.push("--".into());
        list.extend(self.command.iter().cloned());
        list
    }

    /// The bytes to write to the descriptor named by `--args FD`: every option followed by a NUL
    /// byte. The command is not included (bubblewrap ignores it there; see
    /// [`BwrapArgs::command_line`]). Refuses an argument that contains a NUL byte rather than
    /// let it split in two.
    pub fn to_nul_separated(&self) -> Result<Vec<u8>, BwrapError> {
        let mut bytes = Vec::new();
        for arg in self.steps.iter().flatten() {
            mounts::check_no_nul("argument", arg)?;
            bytes.extend_from_slice(arg.as_bytes());
            bytes.push(0);
        }
        Ok(bytes)
    }

    /// bubblewrap's own command line (after the program name) when the options are written to
    /// descriptor `args_fd`: `--args FD -- command...`.
    pub fn command_line(&self, args_fd: i32) -> Vec<OsString> {
        let mut line: Vec<OsString> =
            vec!["--args".into(), args_fd.to_string().into(), "--".into()];
        line.extend(self.command.iter().cloned());
        line
    }

    /// One step per line, then `-- command`, every argument quoted so that bash would read it
    /// back as the same single argument: the view a reviewer reads like a firewall rule list.
    pub fn render(&self) -> String {
        let mut lines: Vec<String> = self.steps.iter().map(|s| render_line(s)).collect();
        let mut last = vec![OsString::from("--")];
        last.extend(self.command.iter().cloned());
        lines.push(render_line(&last));
        lines.join("\n")
    }
}

impl fmt::Display for BwrapArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

fn render_line(args: &[OsString]) -> String {
    let parts: Vec<String> = args.iter().map(|a| render::quote(a)).collect();
    parts.join(" ")
}

/// Builds bubblewrap's arguments for `req`.
///
/// Refuses when bubblewrap lacks a required option ([`Features::missing_required`]), when the
/// command is empty, when a plan path is relative or not canonical, when an argument holds a NUL
/// byte, when an environment name cannot be set, when the seccomp descriptor is 0, 1, 2 or
/// negative, or when a plan path lies in [`STAGE_DIR`].
pub fn build(req: &Request<'_>) -> Result<BwrapArgs, BwrapError> {
    build_layered(req, &[])
}

/// [`build`] for a jail whose writable roots `layers` name are each covered by a copy-on-write
/// layer that cordon's stage mounts inside the jail (bubblewrap 0.8 has no overlay option).
/// With no layer it is [`build`]. With layers the list differs in four ways, and only these:
/// the jail's first user namespace maps the caller to uid 0 (`--uid 0 --gid 0`: a mount needs
/// the mount namespace's own user namespace), bubblewrap leaves the stage [`LAYER_CAPS`] instead
/// of none, gives no `--seccomp` and no `--disable-userns` (the stage installs the same filter
/// after its mount and its nested user namespace, which refuses new ones), and binds each
/// layer's directories at [`LAYER_DIR`] and [`LOWER_DIR`]. Every other mount, below the roots
/// too, is the same: the stage carries those below a root over onto the overlay.
///
/// Refuses a layer whose root is not one of the plan's writable roots, and one given without
/// the stage.
pub fn build_layered(req: &Request<'_>, layers: &[LayerRoot]) -> Result<BwrapArgs, BwrapError> {
    let plan = req.plan.plan();
    let layered = !layers.is_empty();
    for layer in layers {
        mounts::check_canonical("layer directory", &layer.dir)?;
        if req.stage.is_none() || !plan.writable.contains(&layer.root) {
            return Err(BwrapError::LayerNotARoot {
                path: DisplayPath(layer.root.clone()).to_string(),
            });
        }
    }
    let layer_binds: Vec<mounts::LayerBind> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            let (dir, lower) = LayerRoot::jail_paths(i);
            [
                mounts::LayerBind {
                    source: l.dir.clone(),
                    dest: dir,
                    writable: true,
                },
                mounts::LayerBind {
                    source: l.root.clone(),
                    dest: lower,
                    writable: false,
                },
            ]
        })
        .collect();
    let features = req.features;
    let missing = features.missing_required();
    if !missing.is_empty() {
        return Err(BwrapError::MissingFeatures {
            found: features.version_text(),
            missing,
        });
    }
    if req.fds.seccomp < 3 && !layered {
        return Err(BwrapError::InvalidDescriptor {
            what: "seccomp program",
            fd: req.fds.seccomp,
        });
    }
    mounts::check_paths(plan)?;
    if let Some(stage) = req.stage {
        mounts::check_canonical("stage", stage)?;
    }

    let mut steps: Vec<Vec<OsString>> = Vec::new();
    let mut flag = |f: &str| steps.push(vec![OsString::from(f)]);

    // Process and namespaces. No `--unshare-all`: what it implies for the network and cgroup
    // namespaces differs between versions, so each namespace is named.
    flag("--new-session");
    flag("--die-with-parent");
    flag("--unshare-user");
    if !layered && features.disable_userns {
        flag("--disable-userns");
    }
    flag("--unshare-pid");
    flag("--unshare-ipc");
    flag("--unshare-uts");
    if features.unshare_cgroup_try {
        flag("--unshare-cgroup-try");
    }
    if plan.network != Network::Allowed {
        flag("--unshare-net");
    }
    steps.push(vec!["--cap-drop".into(), "ALL".into()]);
    if layered {
        steps.push(vec!["--uid".into(), "0".into()]);
        steps.push(vec!["--gid".into(), "0".into()]);
        for cap in LAYER_CAPS {
            steps.push(vec!["--cap-add".into(), (*cap).into()]);
        }
    }

    // Filesystem, in the order documented in `mounts`.
    // Private tmpfs are memory: each gets the policy's size where bubblewrap can set one.
    let tmp_size = plan.limits.tmp_bytes.filter(|_| features.size);
    steps.extend(proc_sys_read_only(
        mounts::ordered(plan, req.brokers, req.stage, tmp_size, &layer_binds)?,
        plan,
    ));

    // What runs: where, with which environment, under which filter.
    steps.push(vec!["--chdir".into(), plan.cwd.clone().into()]);
    steps.push(vec!["--clearenv".into()]);
    // The environment, then what the plan sets itself (`Plan::jail_env`: with the home
    // hidden, git reads no global configuration), which wins over a value of the same name.
    let mut env = req.env.clone();
    for (name, value) in plan.jail_env() {
        env.insert(name.into(), value.into());
    }
    for (name, value) in &env {
        check_env_name(name)?;
        mounts::check_no_nul("environment value", value)?;
        steps.push(vec!["--setenv".into(), name.clone(), value.clone()]);
    }
    if !layered {
        steps.push(vec!["--seccomp".into(), req.fds.seccomp.to_string().into()]);
    }

    let mut command: Vec<OsString> = Vec::with_capacity(req.argv.len() + 1);
    if req.stage.is_some() {
        command.push(STAGE_PATH.into());
    }
    match req.argv.first() {
        None => return Err(BwrapError::EmptyCommand),
        Some(program) if req.stage.is_none() && program.is_empty() => {
            return Err(BwrapError::EmptyCommand);
        }
        Some(_) => {}
    }
    for arg in req.argv {
        mounts::check_no_nul("command argument", arg)?;
        command.push(arg.clone());
    }

    Ok(BwrapArgs { steps, command })
}

/// `--proc` leaves `/proc/sys` writable for a jail whose user is the host's root: its files
/// belong to root with mode 0644, the kernel's sysctl check is by owner alone (no capability),
/// and bubblewrap covers `/proc/sys` (and `irq`, `bus`) only when the directory itself is
/// writable, which a 0555 directory is not. A root-run jail could so set `kernel.core_pattern`
/// or `kernel.modprobe` for the whole host (escape suite: `kernel/tunables-and-devices`). Every
/// `--proc DEST` is therefore followed by read-only binds of `/proc/sys`, `/proc/irq` and
/// `/proc/bus` at `DEST/…` (what a reader sees in them depends on its own namespaces, not on the
/// proc instance, so the view is unchanged). Like every mount, none is made strictly below a
/// credential mask.
fn proc_sys_read_only(steps: Vec<Vec<OsString>>, plan: &cordon_policy::Plan) -> Vec<Vec<OsString>> {
    let mut out = Vec::with_capacity(steps.len() + 3);
    for step in steps {
        let dest = (step.first().is_some_and(|f| f == "--proc"))
            .then(|| step.get(1).cloned())
            .flatten();
        out.push(step);
        if let Some(dest) = dest {
            for (flag, name) in [
                ("--ro-bind", "sys"),
                ("--ro-bind-try", "irq"),
                ("--ro-bind-try", "bus"),
            ] {
                let at = Path::new(&dest).join(name);
                if plan
                    .masks
                    .iter()
                    .any(|m| at != m.target && at.starts_with(&m.target))
                {
                    continue;
                }
                out.push(vec![
                    flag.into(),
                    Path::new("/proc").join(name).into_os_string(),
                    at.into_os_string(),
                ]);
            }
        }
    }
    out
}

fn check_env_name(name: &OsStr) -> Result<(), BwrapError> {
    mounts::check_no_nul("environment name", name)?;
    if name.is_empty() || name.as_bytes().contains(&b'=') {
        return Err(BwrapError::InvalidEnvName {
            name: DisplayPath(name.into()).to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn proc_sys_irq_and_bus_are_bound_read_only_after_proc() {
        let steps: Vec<Vec<OsString>> = vec![
            vec!["--dev".into(), "/dev".into()],
            vec!["--proc".into(), "/proc".into()],
            vec!["--tmpfs".into(), "/run".into()],
        ];
        let plan = cordon_policy::Plan::resolve(
            &cordon_policy::Policy::for_profile(cordon_policy::Profile::Shell),
            &cordon_policy::Invocation::at("/home/u/proj"),
            &cordon_policy::FakeHost::typical(),
        )
        .unwrap();
        let flat: Vec<String> = proc_sys_read_only(steps, &plan)
            .iter()
            .map(|s| {
                s.iter()
                    .map(|w| w.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            flat,
            [
                "--dev /dev",
                "--proc /proc",
                "--ro-bind /proc/sys /proc/sys",
                "--ro-bind-try /proc/irq /proc/irq",
                "--ro-bind-try /proc/bus /proc/bus",
                "--tmpfs /run",
            ]
        );
    }

    #[test]
    fn no_proc_bind_is_made_below_a_mask() {
        let mut plan = cordon_policy::Plan::resolve(
            &cordon_policy::Policy::for_profile(cordon_policy::Profile::Shell),
            &cordon_policy::Invocation::at("/home/u/proj"),
            &cordon_policy::FakeHost::typical(),
        )
        .unwrap();
        plan.masks.push(cordon_policy::CredentialMask {
            target: "/proc".into(),
            requested: "/proc".into(),
            kind: cordon_policy::EntryKind::Dir,
        });
        let steps = vec![vec![OsString::from("--proc"), OsString::from("/proc")]];
        assert_eq!(proc_sys_read_only(steps.clone(), &plan), steps);
    }

    #[test]
    fn nul_separated_output_refuses_a_nul_byte_rather_than_split_it() {
        let args = BwrapArgs {
            steps: vec![vec![
                "--tmpfs".into(),
                OsString::from_vec(b"/a\0--bind".to_vec()),
            ]],
            command: vec!["true".into()],
        };
        let err = args.to_nul_separated().unwrap_err();
        assert_eq!(
            err.to_string(),
            r"refused to pass argument /a\x00--bind to bubblewrap: it contains a NUL byte"
        );

        let fine = BwrapArgs {
            steps: vec![
                vec!["--tmpfs".into(), "/tmp".into()],
                vec!["--clearenv".into()],
            ],
            command: vec!["true".into()],
        };
        assert_eq!(
            fine.to_nul_separated().unwrap(),
            b"--tmpfs\0/tmp\0--clearenv\0"
        );
    }
}
