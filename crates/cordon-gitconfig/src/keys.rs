//! Which keys a jail may change in a repository's configuration: an allowlist, like the
//! environment's, so a key git adds tomorrow is refused until someone reads what it does.
//!
//! The survey of git's keys that run a program or move where git reads and writes (each refused
//! with its reason, so the violation says what the key would have done on the host):
//! `core.fsmonitor`, `core.hooksPath`, `core.pager`, `pager.*`, `core.editor`,
//! `sequence.editor`, `core.sshCommand`, `ssh.*`, `core.askPass`, `core.gitProxy`,
//! `core.worktree`, `core.attributesFile`, `alias.*`, `filter.*`, `diff.external`,
//! `diff.*.textconv`/`command`, `merge.*.driver`, `include.*`, `includeIf.*`, `credential.*`,
//! `gpg.*`, `uploadpack.*`, `receive.*`, `remote.*.uploadpack`/`receivepack`/`proxy`/`vcs`,
//! `url.*.insteadOf`/`pushInsteadOf` (reroute the host's fetches and pushes, with its
//! credentials, anywhere), `submodule.*.update=!command`, `protocol.*`, `http.*`, `trace2.*`
//! (writes to a path it names), `extensions.*` (`worktreeConfig` makes a jail-written
//! `config.worktree` live), `difftool.*`, `mergetool.*`, `browser.*`, `web.*`, `man.*`,
//! `sendemail.*`, `instaweb.*`, `gui.*`, `guitool.*`, `interactive.diffFilter`, `lfs.*`
//! (its filter runs), `safe.*`, `maintenance.*`, `transfer.*`, `fetch.fsck*`.

/// What [`judge`] says of one variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A jail may add, change or remove it.
    Allowed,
    /// Refused, and why.
    Refused(&'static str),
}

/// Keys without a subsection a jail may change: `(section, name)`; `*` allows every name.
const PLAIN: &[(&str, &str)] = &[
    ("user", "name"),
    ("user", "email"),
    ("user", "signingkey"),
    ("user", "useconfigonly"),
    ("core", "repositoryformatversion"),
    ("core", "filemode"),
    ("core", "bare"),
    ("core", "logallrefupdates"),
    ("core", "ignorecase"),
    ("core", "precomposeunicode"),
    ("core", "symlinks"),
    ("core", "autocrlf"),
    ("core", "eol"),
    ("core", "safecrlf"),
    ("core", "quotepath"),
    ("core", "abbrev"),
    ("core", "untrackedcache"),
    ("core", "commentchar"),
    ("init", "defaultbranch"),
    ("pull", "rebase"),
    ("pull", "ff"),
    ("push", "default"),
    ("push", "autosetupremote"),
    ("push", "followtags"),
    ("fetch", "prune"),
    ("fetch", "prunetags"),
    ("merge", "ff"),
    ("merge", "conflictstyle"),
    ("rebase", "autosquash"),
    ("rebase", "autostash"),
    ("rebase", "updaterefs"),
    ("rerere", "enabled"),
    ("rerere", "autoupdate"),
    ("status", "showuntrackedfiles"),
    ("status", "short"),
    ("status", "branch"),
    ("diff", "renames"),
    ("diff", "algorithm"),
    ("diff", "mnemonicprefix"),
    ("diff", "noprefix"),
    ("diff", "colormoved"),
    ("diff", "context"),
    ("branch", "autosetupmerge"),
    ("branch", "autosetuprebase"),
    ("branch", "sort"),
    ("gc", "auto"),
    ("gc", "autodetach"),
    ("worktree", "guessremote"),
    ("color", "*"),
    ("advice", "*"),
];

/// Keys with a subsection a jail may change: `(section, name)`.
const SUBSECTIONED: &[(&str, &str)] = &[
    ("remote", "url"),
    ("remote", "pushurl"),
    ("remote", "fetch"),
    ("remote", "push"),
    ("remote", "tagopt"),
    ("remote", "prune"),
    ("remote", "prunetags"),
    ("remote", "mirror"),
    ("remote", "skipdefaultupdate"),
    ("remote", "skipfetchall"),
    ("branch", "remote"),
    ("branch", "pushremote"),
    ("branch", "merge"),
    ("branch", "rebase"),
    ("branch", "description"),
    ("submodule", "url"),
    ("submodule", "active"),
    ("submodule", "branch"),
    ("submodule", "shallow"),
    ("submodule", "ignore"),
    ("submodule", "fetchrecursesubmodules"),
    ("submodule", "update"),
    ("color", "*"),
];

/// Known dangerous keys and what they would do on the host: `(section, name or *)`, first match.
const DANGEROUS: &[(&str, &str, &str)] = &[
    (
        "core",
        "fsmonitor",
        "host git runs this program on every `git status`",
    ),
    (
        "core",
        "hookspath",
        "host git runs hooks from this directory instead of the protected .git/hooks",
    ),
    (
        "core",
        "pager",
        "host git runs this program to page its output",
    ),
    (
        "core",
        "editor",
        "host git runs this program for commit messages",
    ),
    (
        "core",
        "sshcommand",
        "host git runs this program for every ssh fetch and push",
    ),
    (
        "core",
        "askpass",
        "host git runs this program to ask for credentials",
    ),
    (
        "core",
        "gitproxy",
        "host git runs this program for git:// connections",
    ),
    (
        "core",
        "worktree",
        "host git would check files out, and read them, somewhere else",
    ),
    (
        "core",
        "attributesfile",
        "an attributes file assigns filter and diff drivers, which run programs",
    ),
    (
        "pager",
        "*",
        "host git runs this program to page that command's output",
    ),
    (
        "sequence",
        "editor",
        "host git runs this program for interactive rebases",
    ),
    ("ssh", "*", "changes how host git runs ssh"),
    (
        "alias",
        "*",
        "an alias runs a command (`!…`) when the host types it",
    ),
    (
        "filter",
        "*",
        "a filter driver runs a program on checkout and add",
    ),
    (
        "diff",
        "*",
        "a diff driver (external, textconv, command) runs a program",
    ),
    ("merge", "*", "a merge driver runs a program"),
    (
        "include",
        "*",
        "an include reads more configuration from a file the jail could write",
    ),
    (
        "includeif",
        "*",
        "an include reads more configuration from a file the jail could write",
    ),
    (
        "credential",
        "*",
        "a credential helper runs a program and is handed the host's credentials",
    ),
    ("gpg", "*", "host git runs this program to sign and verify"),
    (
        "uploadpack",
        "*",
        "changes what host git runs and serves when fetched from",
    ),
    (
        "receive",
        "*",
        "changes what host git runs and accepts when pushed to",
    ),
    (
        "remote",
        "uploadpack",
        "host git runs this program on the remote side of a fetch",
    ),
    (
        "remote",
        "receivepack",
        "host git runs this program on the remote side of a push",
    ),
    (
        "remote",
        "proxy",
        "routes the host's fetches through a proxy the jail chose",
    ),
    (
        "remote",
        "vcs",
        "host git runs a remote helper the jail chose",
    ),
    (
        "url",
        "*",
        "rewrites the URLs of the host's fetches and pushes (and where its credentials go)",
    ),
    (
        "protocol",
        "*",
        "allows transports (ext:: runs a program) that git refuses by default",
    ),
    (
        "http",
        "*",
        "changes the host's proxies, certificate checks and cookie files",
    ),
    (
        "trace2",
        "*",
        "host git writes traces to the path this names",
    ),
    (
        "extensions",
        "*",
        "changes the repository format (worktreeConfig makes a config.worktree the jail could write live)",
    ),
    ("difftool", "*", "a diff tool runs a program"),
    ("mergetool", "*", "a merge tool runs a program"),
    ("browser", "*", "runs a program to open a browser"),
    ("web", "*", "runs a program to open a browser"),
    ("man", "*", "runs a program to show manuals"),
    ("sendemail", "*", "runs programs and sends mail"),
    ("instaweb", "*", "runs a web server"),
    ("gui", "*", "runs programs from git gui"),
    ("guitool", "*", "runs programs from git gui"),
    (
        "interactive",
        "difffilter",
        "host git runs this program on interactive diffs",
    ),
    (
        "lfs",
        "*",
        "configures git-lfs, whose filter runs on checkout",
    ),
    ("safe", "*", "loosens git's ownership checks"),
    (
        "maintenance",
        "*",
        "schedules host git to run maintenance tasks",
    ),
    (
        "transfer",
        "*",
        "changes what host git checks and hides when it fetches and serves",
    ),
    (
        "core",
        "*",
        "not a key a jail may change (only the repository's plain core settings are)",
    ),
];

const NOT_LISTED: &str =
    "not on the list of keys a jail may change in the repository's configuration";

/// Whether a jail may add, change or remove `e`. Values are checked too: a remote or submodule
/// URL may not use a transport helper (`ext::…` runs a program) or start with `-`, and a
/// submodule's `update` must be `checkout`, `rebase`, `merge` or `none` (`!command` runs one).
pub fn judge(e: &crate::Entry) -> Verdict {
    let name = e.name.as_str();
    let section = e.section.as_str();
    let listed = |table: &[(&str, &str)]| {
        table
            .iter()
            .any(|(s, n)| *s == section && (*n == "*" || *n == name))
    };
    let allowed = match e.subsection {
        None => listed(PLAIN),
        Some(_) => listed(SUBSECTIONED),
    };
    if !allowed {
        let reason = DANGEROUS
            .iter()
            .find(|(s, n, _)| *s == section && (*n == "*" || *n == name))
            .map_or(NOT_LISTED, |(_, _, why)| *why);
        return Verdict::Refused(reason);
    }
    let value = e.value.as_deref().unwrap_or("");
    let url_key = matches!(
        (section, name),
        ("remote", "url" | "pushurl") | ("submodule", "url") | ("branch", "remote" | "pushremote")
    );
    if url_key && !safe_url(value) {
        return Verdict::Refused(
            "a URL that names a transport helper (`ext::…` runs a program) or starts with `-`",
        );
    }
    if (section, name) == ("submodule", "update")
        && !matches!(value, "checkout" | "rebase" | "merge" | "none")
    {
        return Verdict::Refused(
            "a submodule update command (`!…`) runs a program on `git submodule update`",
        );
    }
    Verdict::Allowed
}

/// A URL or remote name host git may use: no `transport::address` helper syntax, no leading
/// `-` (an option to the program git runs), no control characters.
fn safe_url(v: &str) -> bool {
    if v.starts_with('-') || v.chars().any(char::is_control) {
        return false;
    }
    // `<transport>::<address>`: git runs `git-remote-<transport>`.
    match v.find("::") {
        Some(i) => !v[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | '_')),
        None => true,
    }
}
