//! cordon's policy model: what a jailed command may do, as plain data, and the plan it resolves
//! to on one host.
//!
//! A [`Policy`] starts from one of eight named [`Profile`]s and is refined by configuration
//! layers: the user's global file, the repository's `.cordon.toml` (which may only tighten), and
//! the caller's [`Overrides`] ([`ConfigLayer`], combined by [`effective_policy`]; [`audit`] runs
//! a reviewer's named checks over them). A policy is host-independent and immutable once built;
//! it carries a stable [`PolicyHash`] over its normalized form and a format epoch, so a harness
//! can tell when the meaning of a policy changed.
//!
//! A [`Plan`] is a policy resolved against one invocation on one host, through the small
//! [`HostFacts`] trait: every path canonical, writable roots checked against the path rules (no
//! broad or system roots, no root inside a credential mask, the cwd inside the writable set),
//! masks and protected paths that exist listed, and the ones left out listed with the reason.
//! [`Plan::guard`] closes, in the plan itself, what read-only binds of the protected paths leave
//! open: it pins the directories above them and lists the placeholders to make for missing ones,
//! as a [`GuardedPlan`]. The bubblewrap generator takes a `GuardedPlan` (so no caller can build a
//! jail without the guard); the Seatbelt and Landlock generators take a `Plan` (a `GuardedPlan`
//! dereferences to one) and the host facts they need.
//!
//! Every public name is exported at the crate root; the modules behind them are private. The
//! model (policy, profiles, configuration layers, audit) and the plan (resolution, its parts,
//! the guard, the host facts) are separate module trees, and the model does not depend on the
//! plan.
//!
//! This crate does not spawn processes, touch the environment, or enforce anything: it reads the
//! host only through [`HostFacts`] (and [`ConfigLayer::load`] reads the file it is given). It
//! depends on `cordon-env` (which defines [`EnvPolicy`], re-exported here), `cordon-proxy` (the
//! `network.allow` patterns; it depends on thiserror only), serde (with toml for the files and
//! serde_json for the hash's input), thiserror and sha2 only, so a harness can use it on its own.
//!
//! ```
//! use cordon_policy::{FakeHost, Invocation, Network, Plan, Policy, Profile};
//!
//! let policy = Policy::for_profile(Profile::Shell);
//! assert_eq!(policy.network(), Network::Denied);
//!
//! let host = FakeHost::typical(); // a user `u` with a repository at /home/u/proj
//! let plan = Plan::resolve(&policy, &Invocation::at("/home/u/proj"), &host)?;
//! assert_eq!(plan.writable, vec![std::path::PathBuf::from("/home/u/proj")]);
//! // The home directory is private in the jail, but for vetted toolchain trees; the masks
//! // below it that no visible tree holds are left to it.
//! assert!(plan.private_dirs.contains(&std::path::PathBuf::from("/home/u")));
//! assert!(plan.read_only.iter().any(|b| b.dest.ends_with(".rustup")));
//! assert!(plan.masks.iter().any(|m| m.target.ends_with("shadow")));
//!
//! // A cwd that would make the whole home directory writable is refused, naming the rule.
//! let err = Plan::resolve(&policy, &Invocation::at("/home/u"), &host).unwrap_err();
//! assert!(err.to_string().contains("home directory"));
//! # Ok::<(), cordon_policy::PolicyError>(())
//! ```

mod autorun;
mod defaults;
mod error;
mod model;
mod paths;
mod plan;

pub use cordon_env::EnvPolicy;

// Shared by the model and the plan.
pub use autorun::{AutoRun, When};
pub use error::PolicyError;
pub use paths::{DisplayPath, PathSpec};

// The policy model.
pub use model::audit::{AuditReport, Check, audit};
pub use model::config::{ConfigLayer, Effective, LayerKind, Overrides, effective_policy};
pub use model::modes::{HomeMode, Limits, Network, Posture, Unavailable, WorkspaceMode};
pub use model::policy::{Policy, PolicyBuilder, PolicyHash, Source, WritableSpec};
pub use model::profile::Profile;

// The plan, resolved against a host, and its guard.
pub use plan::caches::{CacheLayout, CacheLink, ToolCache};
pub use plan::gitdirs::GitLayout;
pub use plan::guard::{
    BROKER_BOUND, BROKER_POINTER, COMMONDIR_SELF, ConfigBroker, GuardedPlan, Placeholder,
    PlaceholderKind,
};
pub use plan::host::{EntryKind, FakeHost, HostFacts, RealHost};
pub use plan::parts::{
    Bind, CachePlan, CredentialMask, HomeTree, ProtectedPath, RelocatedStore, SkipReason, Skipped,
    Symlink,
};
pub use plan::sockets::listening_paths;
pub use plan::{Invocation, Plan};
