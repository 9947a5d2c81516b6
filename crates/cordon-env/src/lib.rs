//! Host environment + environment policy → the exact environment a jailed command receives.
//!
//! cordon clears the environment of every command it jails and rebuilds it from what this crate
//! computes. The child gets:
//!
//! 1. the fixed allowlist — `PATH HOME SHELL USER LOGNAME TERM TMPDIR TMP TEMP TZ PWD OLDPWD LANG
//!    LANGUAGE COLUMNS LINES` and every `LC_*` — whenever the host has them;
//! 2. the host variables the policy's `pass` list names, unless the name reads as a credential
//!    or belongs to a family that is never passed by name: dynamic loader, language injection,
//!    command hooks, proxies, agent sockets, desktop sockets;
//! 3. the policy's explicit `set` values, which may override the first two (`PATH`, `HOME`,
//!    even a scoped token) — except dynamic-loader and language-injection variables, which are
//!    refused even as explicit values, with an error that names the variable and the rule.
//!
//! Everything else is dropped, and [`ChildEnv::dropped`] says why, by name and never by value.
//! [`classify`] and [`reads_as_credential`] expose the classifier so that `cordon audit` can flag
//! a configured `pass` name, and [`RULES`] is the whole table, each rule with the reason it exists.
//!
//! It depends on serde and thiserror only, so filtering an environment pulls in nothing else.
//! [`EnvPolicy`] is defined here; `cordon-policy` depends on this crate and re-exports it as
//! `cordon_policy::EnvPolicy`.
//!
//! # What this crate is not for
//!
//! - It never changes the launcher's own environment: it calls neither `set_var` nor
//!   `remove_var`, and reads the host only through the input it is given ([`host_snapshot`] is
//!   the one place that reads `std::env::vars_os`). Applying the result is the launcher's job
//!   (`Command::env_clear().envs(&child.vars)`), inside the jail.
//! - It judges names, not values. A password inside `MY_SERVICE=https://u:p@host` passes when
//!   `MY_SERVICE` is requested; request only what the command needs.
//! - It spawns nothing, writes nothing, and has no opinion on files: credential files are the
//!   business of the mount masks.
//!
//! # Non-UTF-8
//!
//! Host values are kept byte for byte as [`OsString`](std::ffi::OsString)s: a non-UTF-8 `PWD`
//! is a real directory. A host *name* that is not UTF-8 can match no allowlist entry and no
//! `pass` name (policy names are `String`s), so it is dropped with
//! [`DropReason::NonUnicodeName`] and shown lossily in `dropped`.
//!
//! # Example
//!
//! ```
//! use cordon_env::{ChildEnv, DropReason, EnvPolicy};
//!
//! let host = [
//!     ("PATH", "/usr/bin:/bin"),
//!     ("LC_ALL", "C.UTF-8"),
//!     ("CARGO_TERM_COLOR", "always"),
//!     ("GITHUB_TOKEN", "ghp_secret"),
//!     ("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent"),
//! ];
//! let mut policy = EnvPolicy::default();
//! policy.pass.insert("CARGO_TERM_COLOR".into());
//! policy.pass.insert("GITHUB_TOKEN".into()); // reads as a credential: not passed
//! policy.set.insert("PAGER".into(), "cat".into());
//!
//! let child = ChildEnv::build(host, &policy)?;
//! assert_eq!(child.get("PATH").and_then(|v| v.to_str()), Some("/usr/bin:/bin"));
//! assert_eq!(child.get("CARGO_TERM_COLOR").and_then(|v| v.to_str()), Some("always"));
//! assert_eq!(child.get("PAGER").and_then(|v| v.to_str()), Some("cat"));
//! assert!(child.get("GITHUB_TOKEN").is_none());
//! assert!(child.get("SSH_AUTH_SOCK").is_none());
//!
//! let token = child.dropped.iter().find(|d| d.name == "GITHUB_TOKEN");
//! assert_eq!(token.map(|d| d.reason), Some(DropReason::Credential));
//!
//! // Loader and injection variables are refused even as explicit values.
//! policy.set.insert("LD_PRELOAD".into(), "/tmp/evil.so".into());
//! let err = ChildEnv::build(host, &policy).unwrap_err();
//! assert!(err.to_string().contains("LD_PRELOAD"));
//! # Ok::<(), cordon_env::EnvError>(())
//! ```

mod child;
mod error;
mod policy;
mod rules;
mod table;

pub use child::{ChildEnv, DropReason, Dropped, host_snapshot};
pub use error::{EnvError, NameProblem, PolicyList};
pub use policy::EnvPolicy;
pub use rules::{NameClass, Pattern, Rule, classify, matching_rule, reads_as_credential};
pub use table::{ALLOWLIST, ALLOWLIST_PREFIX, RULES};
