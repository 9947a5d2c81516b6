//! Name classes, rule patterns, and the classifier that walks the table in `table.rs`.
//!
//! The table is ordered; the first rule that matches a name decides its class. The order is:
//! the exact allowlist, then the families that are never taken from the host (loader, injection,
//! command hook, proxy, agent socket, desktop), then the credential heuristic, and last the `LC_*`
//! locale wildcard. Putting the named families before the heuristic gives `SSH_AUTH_SOCK` the
//! precise class "agent socket" rather than "credential"; putting `LC_*` last means a name such as
//! `LC_API_TOKEN` is a credential, not a locale setting.
//!
//! Exact allowlist names and the `LC_` prefix match case-sensitively, because that is how programs
//! read them. Every other rule matches ASCII case-insensitively: refusing `ld_preload` or
//! `Github_Token` costs nothing, and `http_proxy` is the spelling curl actually reads.

use std::fmt;

use serde::Serialize;

use crate::table::RULES;

/// What a variable name is, for the purpose of building a child environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NameClass {
    /// On the fixed allowlist (including `LC_*`): passed whenever the host has it.
    Allowlisted,
    /// Changes how the dynamic loader or libc behave before `main` runs. Never passed, never set.
    Loader,
    /// Makes a shell or language runtime run code the command line does not name, on every start.
    /// Never passed, never set.
    Injection,
    /// Names a command that a tool runs for one action (pager, editor, ssh transport, password
    /// prompt). Never taken from the host; may be set explicitly (`PAGER=cat`, `GIT_EDITOR=true`).
    CommandHook,
    /// A network proxy, or a list of proxy exceptions. Never taken from the host; may be set.
    Proxy,
    /// A socket or handle to an agent or controller outside the jail (ssh-agent, gpg-agent,
    /// Kerberos cache, Docker daemon, terminal multiplexer, editor). Never taken from the host.
    AgentSocket,
    /// A socket to the desktop session (X11, Wayland, D-Bus, audio). Never taken from the host.
    Desktop,
    /// The name reads as a credential. Never taken from the host; may be set explicitly.
    Credential,
    /// cordon's own variables (`CORDON_*`): read by cordon itself, the launcher and the stage
    /// inside the jail, never by the command. Never passed, never set.
    Own,
}

impl NameClass {
    /// True when a host variable of this class is copied into the child.
    pub const fn passes_from_host(self) -> bool {
        matches!(self, NameClass::Allowlisted)
    }

    /// True when the caller may not set a variable of this class even with an explicit value.
    ///
    /// An explicit grant acts only inside the jail, so it is the harness's call (`CC`,
    /// `RUSTFLAGS`, `NODE_OPTIONS`: docs/cli.md, "Explicit grants"). Refused are only what acts
    /// before containment or on cordon itself: the loader's variables act before any program's
    /// own code, bubblewrap and the stage included (CVE-2023-4911), and cordon's own variables
    /// steer the launcher and the stage.
    pub const fn refused_as_explicit(self) -> bool {
        matches!(self, NameClass::Loader | NameClass::Own)
    }

    /// The class's name as it appears in reports and errors.
    pub const fn as_str(self) -> &'static str {
        match self {
            NameClass::Allowlisted => "allowlisted",
            NameClass::Loader => "dynamic-loader",
            NameClass::Injection => "language-injection",
            NameClass::CommandHook => "command-hook",
            NameClass::Proxy => "proxy",
            NameClass::AgentSocket => "agent-socket",
            NameClass::Desktop => "desktop",
            NameClass::Credential => "credential-shaped",
            NameClass::Own => "cordon's own",
        }
    }
}

impl fmt::Display for NameClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a rule matches a name. The text is stored in upper case for case-insensitive rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "match", content = "text", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Pattern {
    /// The whole name.
    Name(&'static str),
    /// The name starts with the text.
    Prefix(&'static str),
    /// The name ends with the text.
    Suffix(&'static str),
    /// The text appears anywhere in the name, as a whole word or as part of one.
    Contains(&'static str),
    /// The text is one whole word of the name. Words are separated by anything that is not an
    /// ASCII letter (`_`, digits, `-`, `.`), and also at a lower-to-upper case change (`ghPat`).
    Word(&'static str),
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Name(t) => write!(f, "name {t}"),
            Pattern::Prefix(t) => write!(f, "prefix {t}*"),
            Pattern::Suffix(t) => write!(f, "suffix *{t}"),
            Pattern::Contains(t) => write!(f, "contains {t}"),
            Pattern::Word(t) => write!(f, "word {t}"),
        }
    }
}

/// One row of the classification table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct Rule {
    /// The class a matching name belongs to.
    pub class: NameClass,
    /// What the rule matches.
    pub pattern: Pattern,
    /// Whether the match is case-sensitive (the allowlist) or ASCII case-insensitive (the rest).
    pub case_sensitive: bool,
    /// Why the rule exists, for `cordon audit`, `cordon explain` and reviewers.
    pub why: &'static str,
}

impl Rule {
    /// True when `name` matches this rule.
    pub fn matches(&self, name: &str) -> bool {
        self.matches_with_upper(name, &name.to_ascii_uppercase())
    }

    /// [`Rule::matches`] with `name` already upper-cased once, so scanning every rule of the
    /// table for one name allocates once instead of once per rule.
    fn matches_with_upper(&self, name: &str, upper: &str) -> bool {
        if self.case_sensitive {
            match self.pattern {
                Pattern::Name(t) => name == t,
                Pattern::Prefix(t) => name.starts_with(t),
                Pattern::Suffix(t) => name.ends_with(t),
                Pattern::Contains(t) => name.contains(t),
                Pattern::Word(t) => words(name).any(|w| w == t),
            }
        } else {
            match self.pattern {
                Pattern::Name(t) => upper == t,
                Pattern::Prefix(t) => upper.starts_with(t),
                Pattern::Suffix(t) => upper.ends_with(t),
                Pattern::Contains(t) => upper.contains(t),
                Pattern::Word(t) => words(name).any(|w| w.eq_ignore_ascii_case(t)),
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.pattern, self.class, self.why)
    }
}

/// Every word of `name`: the runs of ASCII letters, and each run split again at lower-to-upper
/// case changes. A run is yielded whole as well as split, so `TOKEN` in `pAt_TOKEN` and `Pat` in
/// `ghPat` are both words.
fn words(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|run| !run.is_empty())
        .flat_map(|run| std::iter::once(run).chain(camel_parts(run)))
}

/// `run` (ASCII letters only) split before each upper-case letter that follows a lower-case one.
/// Yields nothing when there is no such change, since the whole run is already a word.
fn camel_parts(run: &str) -> impl Iterator<Item = &str> {
    let bytes = run.as_bytes();
    let cuts: Vec<usize> = bytes
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase())
        .map(|(i, _)| i + 1)
        .collect();
    let mut starts = Vec::with_capacity(cuts.len() + 1);
    if !cuts.is_empty() {
        starts.push(0);
        starts.extend(cuts.iter().copied());
    }
    let ends: Vec<usize> = starts.iter().skip(1).copied().chain([run.len()]).collect();
    starts
        .into_iter()
        .zip(ends)
        .filter_map(move |(s, e)| run.get(s..e))
}

/// Names that contain a credential word but are the shell's working directories, not passwords.
const CREDENTIAL_EXEMPT: &[&str] = &["PWD", "OLDPWD"];

/// The rule that decides `name`'s class, or `None` for an ordinary name (one that `pass` may
/// request).
pub fn matching_rule(name: &str) -> Option<&'static Rule> {
    let upper = name.to_ascii_uppercase();
    RULES
        .iter()
        .find(|rule| rule.matches_with_upper(name, &upper))
}

/// The class of `name`, or `None` for an ordinary name that `pass` may request.
///
/// ```
/// use cordon_env::{classify, NameClass};
///
/// assert_eq!(classify("PATH"), Some(NameClass::Allowlisted));
/// assert_eq!(classify("LC_ALL"), Some(NameClass::Allowlisted));
/// assert_eq!(classify("LD_PRELOAD"), Some(NameClass::Loader));
/// assert_eq!(classify("GITHUB_TOKEN"), Some(NameClass::Credential));
/// assert_eq!(classify("CARGO_TERM_COLOR"), None);
/// ```
pub fn classify(name: &str) -> Option<NameClass> {
    matching_rule(name).map(|rule| rule.class)
}

/// True when `name` reads as a credential: it contains a credential word (see [`RULES`]), case
/// aside. `PWD` and `OLDPWD` are the only exemptions.
///
/// This looks at the credential words alone, whatever other family the name is in:
/// `SSH_AUTH_SOCK` reads as a credential although [`classify`] says it is an agent socket. Use it
/// to flag a configured `pass` name; use [`classify`] to know what building will do with it.
///
/// ```
/// use cordon_env::reads_as_credential;
///
/// assert!(reads_as_credential("OPENAI_API_KEY"));
/// assert!(reads_as_credential("db_Password"));
/// assert!(reads_as_credential("GH_PAT"));
/// assert!(!reads_as_credential("PATH"));
/// assert!(!reads_as_credential("PWD"));
/// ```
pub fn reads_as_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    !CREDENTIAL_EXEMPT.contains(&name)
        && RULES
            .iter()
            .filter(|rule| rule.class == NameClass::Credential)
            .any(|rule| rule.matches_with_upper(name, &upper))
}

#[cfg(test)]
mod tests;
