//! A resolved [`Plan`] → the `sandbox-exec` invocation that enforces it on macOS: a Seatbelt
//! profile (SBPL text) and the `-D` parameters it names.
//!
//! cordon jails a command on macOS by running it under `/usr/bin/sandbox-exec -p PROFILE
//! -DNAME=VALUE… -- COMMAND`. [`build`] writes that argument list from a plan and nothing else
//! that could vary: the host's symlink facts come through [`HostFacts`], the private temporary
//! directory and any glob rules are inputs. The crate is pure — it reads no file and spawns
//! nothing — so it builds and is tested on every OS, and no machine that runs these tests has to
//! run `sandbox-exec`.
//!
//! # What the profile says
//!
//! Deny by default. Processes may exec and fork; signals and process information stay inside the
//! sandbox. `sysctl` reads and `mach-lookup` are narrowed to the lists in [`lists`], each entry
//! with its reason written into the profile. Reads: the host posture reads everything except the
//! credential masks; the minimal posture reads only the system's runtime, the plan's vetted trees
//! and the writable roots. Writes: only the writable roots and the private `TMPDIR`, minus the
//! protected paths. Masks deny `file-read*` and `file-write*` (which includes
//! `file-write-unlink`, so a masked file can be neither deleted nor renamed). Writable roots and
//! the directories above a protected path or a mask cannot be renamed away. The character devices
//! (`/dev/null`, `/dev/zero`, `/dev/random`, `/dev/urandom`, `/dev/tty`) are readable and
//! writable. The network is denied unless the policy allows it.
//!
//! # Paths never become profile text
//!
//! Every path travels as a `-D` parameter and the profile names it with `(param "NAME")`, so no
//! path, however hostile, is ever parsed as profile text. What must be spliced — the regular
//! expressions compiled from globs ([`GlobRule`], for `**/.env`-style rules) — is written by one
//! function, [`sbpl::quote`], after [`sbpl::escape_regex_literal`].
//!
//! Two traits of the profile language are handled here: Seatbelt's regular expressions have no
//! working non-capturing group (`(?:…)` compiles and never matches), so none is ever emitted; and
//! Seatbelt matches symlink-resolved paths, so every path is also emitted in its `/private/tmp`,
//! `/private/var`, `/private/etc` spelling and in whatever form [`HostFacts`] resolves it to.
//!
//! # What this crate is not for
//!
//! - It does not find, probe or run `sandbox-exec`, make the temporary directory, or read the
//!   denial log: the launcher (`cordon-launch`) does. [`denial`] only parses lines given to it.
//! - It does not decide policy: the plan already holds canonical paths and the masks that exist.
//!   Callers cannot pass SBPL text.
//!
//! # Example
//!
//! ```
//! use std::ffi::OsString;
//! use std::path::Path;
//!
//! use cordon_policy::{FakeHost, Invocation, Plan, Policy, Profile};
//! use cordon_seatbelt::{GlobRule, Request, SeatbeltExtras, build};
//!
//! let host = FakeHost::typical(); // a user `u` with a repository at /home/u/proj
//! let plan = Plan::resolve(
//!     &Policy::for_profile(Profile::Shell),
//!     &Invocation::at("/home/u/proj"),
//!     &host,
//! )?;
//! let extras = SeatbeltExtras {
//!     deny_read: vec![GlobRule::new("/home/u/proj", "**/.env")],
//!     deny_write: Vec::new(),
//!     proxy_port: None,
//! };
//! let argv = [OsString::from("cargo"), OsString::from("test")];
//! let exec = build(&Request {
//!     plan: &plan,
//!     host: &host,
//!     tmpdir: Path::new("/tmp/cordon-1"),
//!     extras: &extras,
//!     stage: None,
//!     argv: &argv,
//! })?;
//!
//! let profile = exec.profile();
//! assert!(profile.contains("(deny default)"));
//! assert!(profile.contains(r#"(subpath (param "WRITABLE_0"))"#));
//! assert!(!profile.contains("/home/u/proj\"")); // the workspace is a parameter, not text
//! assert!(profile.contains(r#"(regex "^/home/u/proj(/[^/]*)*/\\.env(/[^/]*)*$")"#));
//! assert!(exec.params().iter().any(|p| p.name == "TMPDIR_1" && p.value == "/private/tmp/cordon-1"));
//!
//! let args = exec.args();
//! assert_eq!(args[0], "-p");
//! assert!(args.contains(&OsString::from("-DWRITABLE_0=/home/u/proj")));
//! assert_eq!(args[args.len() - 3..], ["--", "cargo", "test"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod denial;
mod error;
pub mod glob;
pub mod lists;
mod profile;
pub mod sbpl;
pub mod spelling;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use cordon_policy::{HostFacts, Plan};

pub use denial::{Denial, DenialKind, parse_denial, parse_denials};
pub use error::SeatbeltError;
pub use glob::GlobRule;

/// The only place cordon runs `sandbox-exec` from: the system's own copy, never one found on
/// `PATH`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The version of the profile generator. It changes whenever the same plan would give a different
/// profile, so a reviewer (and a cache) can tell.
pub const GENERATOR_VERSION: u32 = 1;

/// Rules beyond what a [`Plan`] can say today: globs, which Seatbelt can enforce for files
/// created later (a middle wildcard such as `**/.env`), and which a bind mount cannot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeatbeltExtras {
    /// Paths matching these are treated as credential masks: neither read nor written.
    pub deny_read: Vec<GlobRule>,
    /// Paths matching these are treated as protected paths: readable, not written.
    pub deny_write: Vec<GlobRule>,
    /// For a `proxy` network: the port of the proxy on the host's loopback, the only outbound
    /// TCP the profile allows. `None`: nothing outbound, as when the network is denied.
    pub proxy_port: Option<u16>,
}

/// Everything [`build`] needs.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// The resolved plan.
    pub plan: &'a Plan,
    /// What the host says a path resolves to.
    pub host: &'a dyn HostFacts,
    /// The private temporary directory the launcher makes for this command (writable, and set as
    /// `TMPDIR`). Absolute.
    pub tmpdir: &'a Path,
    /// Glob rules.
    pub extras: &'a SeatbeltExtras,
    /// cordon's stage binary: run first, with `argv` as its arguments, and readable in the minimal
    /// posture. `None` runs `argv` directly.
    pub stage: Option<&'a Path>,
    /// The command: program and arguments (with a stage: the stage's arguments).
    pub argv: &'a [OsString],
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("plan", &self.plan)
            .field("tmpdir", &self.tmpdir)
            .field("extras", &self.extras)
            .field("stage", &self.stage)
            .field("argv", &self.argv)
            .finish_non_exhaustive()
    }
}

/// One `-D` parameter: `-DNAME=VALUE`, named in the profile as `(param "NAME")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// `[A-Z]+_[0-9]+`.
    pub name: String,
    /// A path, passed as is.
    pub value: OsString,
}

/// The `sandbox-exec` invocation for one command. Built only by [`build`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxExec {
    profile: String,
    params: Vec<Param>,
    command: Vec<OsString>,
}

impl SandboxExec {
    /// The profile text: printable ASCII, one rule per form, comments saying why.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// The parameters the profile names, in order of first use.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// What runs in the sandbox.
    pub fn command(&self) -> &[OsString] {
        &self.command
    }

    /// `sandbox-exec`'s arguments after the program name: `-p PROFILE`, one `-DNAME=VALUE` per
    /// parameter, `--`, the command.
    pub fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-p".into(), self.profile.clone().into()];
        for p in &self.params {
            let mut arg = OsString::from(format!("-D{}=", p.name));
            arg.push(&p.value);
            args.push(arg);
        }
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }

    /// The profile, a blank line, then the whole argument list one per line starting with
    /// [`SANDBOX_EXEC`], the profile itself shown as `<the profile above>`. Paths are shown
    /// losslessly. The view `cordon explain --platform macos` prints and snapshots hold.
    pub fn render(&self) -> String {
        let mut out = self.profile.clone();
        out.push('\n');
        out.push_str(SANDBOX_EXEC);
        out.push_str("\n-p\n<the profile above>\n");
        for arg in self.args().iter().skip(2) {
            out.push_str(&error::show(arg.as_bytes()));
            out.push('\n');
        }
        out
    }
}

/// Builds the `sandbox-exec` invocation for `req`.
///
/// Refuses an empty command, a NUL byte in any path or argument, a relative path, and a glob
/// rule that cannot be written as a Seatbelt expression ([`GlobRule`] says which).
pub fn build(req: &Request<'_>) -> Result<SandboxExec, SeatbeltError> {
    match req.argv.first() {
        None => return Err(SeatbeltError::EmptyCommand),
        Some(program) if req.stage.is_none() && program.is_empty() => {
            return Err(SeatbeltError::EmptyCommand);
        }
        Some(_) => {}
    }
    let (profile, params) = profile::generate(req)?;
    let mut command: Vec<OsString> = Vec::with_capacity(req.argv.len() + 1);
    if let Some(stage) = req.stage {
        command.push(stage.as_os_str().to_owned());
    }
    command.extend(req.argv.iter().cloned());
    for arg in &command {
        if arg.as_bytes().contains(&0) {
            return Err(SeatbeltError::NulByte {
                what: "command argument",
                value: error::show(arg.as_bytes()),
            });
        }
    }
    Ok(SandboxExec {
        profile,
        params,
        command,
    })
}
