//! The registry of auto-run files: every file or directory inside a writable root that a program
//! on the host reads later and that can make it run code (a git hook, an editor task that runs
//! on folder open, an MCP server an agent starts). One line each, as data: where it is, which
//! program runs it, when, why it is protected, and how it is protected.
//!
//! Two scopes:
//!
//! - [`Scope::Root`] entries are relative to every granted writable root (the workspace, a
//!   `--write` directory). A [`Matcher::Path`] entry becomes a protected path of the default
//!   policy ([`root_paths`]); a [`Matcher::RootPattern`] entry (`*.code-workspace`) is matched
//!   against the names of one `readdir` of each root when the plan is resolved.
//! - [`Scope::GitDir`] entries are relative to every git directory found from the repository's
//!   own structure (`GitLayout::discover`): the repository's `.git`, each linked worktree's
//!   administrative directory and each submodule's directory below `.git/modules`.
//!
//! Every entry is [`Protection::ReadOnly`] today: bound read-only under bubblewrap, kept out of
//! the write grants by the Landlock backend, denied by name in the Seatbelt profile (which also
//! covers names that do not exist). A `Brokered` kind (the jail sees a private copy and cordon
//! merges back only allowed keys after the run) can be added to [`Protection`] without changing
//! the shape of an entry.
//!
//! What happens to an entry that does not exist at launch is the guard's and the launcher's
//! business (`docs/limits.md`, "Auto-run files that do not exist at launch"): a missing git
//! redirection gets a placeholder inside the `.git` directory cordon pins anyway; every other
//! missing entry is looked for after the run with one `readdir` per root, and what the command
//! created there is moved aside and reported.

/// How an entry is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matcher {
    /// A relative path, matched exactly.
    Path(&'static str),
    /// A pattern on the names directly in the root: one `*` stands for any run of characters
    /// (`*.code-workspace`, `.aider*`).
    RootPattern(&'static str),
}

/// Where an entry's path is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Each granted writable root.
    Root,
    /// Each git directory found from the repository's structure.
    GitDir,
    /// Each submodule's git directory (below `.git/modules`): overrides the [`Scope::GitDir`]
    /// entry of the same path there.
    SubmoduleGitDir,
}

/// When the program reads the file and can run what it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Any git command in the repository (`git status` from an editor's git view included).
    GitCommand,
    /// At the next commit (or push, checkout, merge: the hook's event).
    Commit,
    /// When the folder or project is opened in the editor.
    FolderOpen,
    /// When a coding agent starts in the project.
    AgentStart,
    /// When a shell enters the directory.
    EnterDirectory,
    /// When a development container is built or started for the project.
    ContainerStart,
    /// When cordon itself runs next in the project.
    CordonRun,
}

/// How an entry is kept from the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protection {
    /// Read-only (bound read-only, denied by name, or outside the write grants).
    ReadOnly,
    /// Writable while the command runs, its content read at launch and put back after the run
    /// when it changed (reported as a violation): for a file a routine command rewrites in
    /// place, such as a submodule's `config`, which `git submodule update` rewrites on every
    /// run. Seatbelt, which cannot put anything back, denies it like [`Protection::ReadOnly`].
    RestoredAfterRun,
}

/// One auto-run file or directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoRun {
    /// Where it is.
    pub(crate) matcher: Matcher,
    /// What its path is relative to.
    pub(crate) scope: Scope,
    /// The program that runs it (or runs what it names).
    pub program: &'static str,
    /// When.
    pub when: When,
    /// Why it is protected: what a planted copy would do.
    pub why: &'static str,
    /// How it is protected.
    pub(crate) protection: Protection,
}

const fn root(path: &'static str, program: &'static str, when: When, why: &'static str) -> AutoRun {
    AutoRun {
        matcher: Matcher::Path(path),
        scope: Scope::Root,
        program,
        when,
        why,
        protection: Protection::ReadOnly,
    }
}

const fn pattern(
    pattern: &'static str,
    program: &'static str,
    when: When,
    why: &'static str,
) -> AutoRun {
    AutoRun {
        matcher: Matcher::RootPattern(pattern),
        scope: Scope::Root,
        program,
        when,
        why,
        protection: Protection::ReadOnly,
    }
}

const fn git(path: &'static str, when: When, why: &'static str) -> AutoRun {
    AutoRun {
        matcher: Matcher::Path(path),
        scope: Scope::GitDir,
        program: "git",
        when,
        why,
        protection: Protection::ReadOnly,
    }
}

const fn submodule(path: &'static str, when: When, why: &'static str) -> AutoRun {
    AutoRun {
        matcher: Matcher::Path(path),
        scope: Scope::SubmoduleGitDir,
        program: "git",
        when,
        why,
        protection: Protection::RestoredAfterRun,
    }
}

use When::{AgentStart, Commit, ContainerStart, CordonRun, EnterDirectory, FolderOpen, GitCommand};

/// The registry ([`AutoRun::REGISTRY`]). Order is for the reader; nothing depends on it. One
/// entry per line.
#[rustfmt::skip]
const REGISTRY: &[AutoRun] = &[
    // Git, in every git directory the repository's structure names.
    git("hooks", Commit, "an executable hook runs at the hook's event"),
    git("config", GitCommand, "core.fsmonitor, core.hooksPath, core.pager, aliases, filter and diff drivers name programs git runs"),
    git("info/attributes", GitCommand, "attributes pick the filter and diff drivers git runs on files"),
    git("commondir", GitCommand, "redirects git to another directory's config and hooks"),
    git("config.worktree", GitCommand, "a worktree's own settings, read like config when extensions.worktreeConfig is set"),
    git("gitdir", GitCommand, "a linked worktree's back link; rewritten, git prunes or repairs the wrong worktree"),
    submodule("config", GitCommand, "a submodule's settings (core.fsmonitor runs on the superproject's `git status`); `git submodule update` rewrites it on every run, so it is put back after the run instead of bound read-only"),
    // Git, in the work tree.
    root(".gitmodules", "git", GitCommand, "submodule URLs and update commands (`update = !cmd`) that `git submodule update` runs"),
    root(".gitattributes", "git", GitCommand, "attributes pick the filter and diff drivers git runs on files"),
    // Hook managers: the hook installed in the protected hooks directory runs what these name.
    root(".husky", "husky (via core.hooksPath)", Commit, "each file is a shell script the hook runs"),
    root(".pre-commit-config.yaml", "pre-commit", Commit, "names the repositories and local commands the pre-commit hook runs"),
    root("lefthook.yml", "lefthook", Commit, "commands the lefthook hook runs"),
    root("lefthook.yaml", "lefthook", Commit, "commands the lefthook hook runs"),
    root(".lefthook.yml", "lefthook", Commit, "commands the lefthook hook runs"),
    root(".lefthook.yaml", "lefthook", Commit, "commands the lefthook hook runs"),
    root("lefthook-local.yml", "lefthook", Commit, "local commands the lefthook hook runs"),
    root(".lefthook-local.yml", "lefthook", Commit, "local commands the lefthook hook runs"),
    root(".lefthook", "lefthook", Commit, "scripts the lefthook hook runs"),
    root(".overcommit.yml", "overcommit", Commit, "hooks and commands the overcommit hook runs"),
    pattern(".lintstagedrc*", "lint-staged (from a pre-commit hook)", Commit, "commands run on the staged files"),
    pattern("lint-staged.config.*", "lint-staged (from a pre-commit hook)", Commit, "commands run on the staged files"),
    // Development containers: initializeCommand runs on the host.
    root(".devcontainer", "devcontainer CLI, VS Code, Codespaces", ContainerStart, "initializeCommand runs on the host before the container exists"),
    root(".devcontainer.json", "devcontainer CLI, VS Code, Codespaces", ContainerStart, "initializeCommand runs on the host before the container exists"),
    // Shells.
    root(".envrc", "direnv", EnterDirectory, "a shell script direnv evaluates once the user allowed the directory"),
    // Editors.
    root(".vscode", "VS Code and its forks", FolderOpen, "tasks.json runs tasks on folder open; settings.json names interpreters, formatters and terminals; mcp.json starts servers"),
    pattern("*.code-workspace", "VS Code and its forks", FolderOpen, "a workspace file holds settings and tasks like .vscode"),
    root(".idea", "JetBrains IDEs", FolderOpen, "run configurations, startup tasks, file watchers and external tools"),
    pattern("*.ipr", "JetBrains IDEs", FolderOpen, "a project file in the old format, with run configurations"),
    root(".fleet", "JetBrains Fleet", FolderOpen, "run configurations and settings"),
    root(".zed", "Zed", FolderOpen, "settings.json names language servers and formatters; tasks.json holds tasks"),
    root(".helix", "Helix", FolderOpen, "languages.toml names language servers and formatters it starts"),
    root(".dir-locals.el", "Emacs", FolderOpen, "directory variables, including eval forms"),
    root(".dir-locals-2.el", "Emacs", FolderOpen, "directory variables, including eval forms"),
    root(".exrc", "Vim, Neovim (with 'exrc')", FolderOpen, "Ex commands run at start-up in the directory"),
    root(".vimrc", "Vim (with 'exrc')", FolderOpen, "Vim script run at start-up in the directory"),
    root(".nvimrc", "Neovim (with 'exrc')", FolderOpen, "Vim script run at start-up in the directory"),
    root(".nvim.lua", "Neovim (with 'exrc')", FolderOpen, "Lua run at start-up in the directory"),
    // Coding agents' project configuration: hooks, MCP servers, commands they run.
    root(".claude", "Claude Code", AgentStart, "settings.json holds hooks (shell commands) and MCP servers"),
    root(".mcp.json", "Claude Code and other MCP clients", AgentStart, "the project's MCP servers: commands started with the agent"),
    root(".cursor", "Cursor", AgentStart, "mcp.json starts MCP servers; hooks.json runs commands"),
    root(".gemini", "Gemini CLI", AgentStart, "settings.json names MCP servers and tool commands"),
    root(".codex", "Codex CLI", AgentStart, "config.toml names MCP servers and the sandbox mode"),
    root(".continue", "Continue", AgentStart, "config and mcpServers/ start MCP servers"),
    root(".windsurf", "Windsurf", AgentStart, "workflows and rules the agent follows, with commands"),
    pattern(".aider*", "aider", AgentStart, ".aider.conf.yml sets lint-cmd and test-cmd, run after each edit"),
    root(".roo", "Roo Code", AgentStart, "mcp.json starts MCP servers"),
    root(".roomodes", "Roo Code", AgentStart, "modes that allow the agent to run commands"),
    root(".amazonq", "Amazon Q Developer", AgentStart, "mcp.json starts MCP servers"),
    root(".kiro", "Kiro", AgentStart, "settings/mcp.json starts MCP servers; hooks run commands"),
    root(".opencode", "opencode", AgentStart, "agents, commands and plugins it loads"),
    root("opencode.json", "opencode", AgentStart, "names MCP servers and commands"),
    root(".goose", "goose", AgentStart, "extensions it starts"),
    // cordon itself.
    root(".cordon", "cordon", CordonRun, "cordon's control directory"),
    root(".cordon.toml", "cordon", CordonRun, "the project configuration (tighten-only, but trusted to be the project's own)"),
];

impl AutoRun {
    /// The registry: every auto-run file or directory cordon knows, one entry each.
    pub const REGISTRY: &'static [AutoRun] = REGISTRY;

    /// The root-scope patterns (`*.code-workspace`), matched against the names directly in each
    /// root (one `*` stands for any run of characters).
    pub fn root_patterns() -> impl Iterator<Item = &'static str> {
        REGISTRY.iter().filter_map(|e| match (e.scope, e.matcher) {
            (Scope::Root, Matcher::RootPattern(p)) => Some(p),
            _ => None,
        })
    }

    /// Whether a name directly in a root is an auto-run name of the registry (exact or pattern).
    pub fn is_root_name(name: &str) -> bool {
        AutoRun::for_root_name(name).is_some()
    }

    /// The registry entry a name directly in a root belongs to (exact or pattern).
    pub fn for_root_name(name: &str) -> Option<&'static AutoRun> {
        REGISTRY.iter().find(|e| {
            e.scope == Scope::Root
                && match e.matcher {
                    Matcher::Path(p) => p == name,
                    Matcher::RootPattern(p) => pattern_matches(p, name),
                }
        })
    }
}

impl AutoRun {
    /// The registry entry a path inside a git directory falls under (`rel` uses `/`, relative
    /// to the git directory): the entry's path itself or a path below it (`hooks/pre-commit`
    /// falls under `hooks`). A submodule's git directory (`submodule`) takes the submodule
    /// entries over the git-directory ones of the same path.
    pub fn for_git_dir_path(rel: &str, submodule: bool) -> Option<&'static AutoRun> {
        let under = |p: &str| {
            rel == p
                || rel
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        let in_scope = |e: &&AutoRun, scope| {
            e.scope == scope && matches!(e.matcher, Matcher::Path(p) if under(p))
        };
        let sub = submodule
            .then(|| {
                REGISTRY
                    .iter()
                    .find(|e| in_scope(e, Scope::SubmoduleGitDir))
            })
            .flatten();
        sub.or_else(|| REGISTRY.iter().find(|e| in_scope(e, Scope::GitDir)))
    }

    /// The entry's path or pattern as written (`hooks`, `.envrc`, `*.code-workspace`).
    pub fn name(&self) -> &'static str {
        match self.matcher {
            Matcher::Path(p) | Matcher::RootPattern(p) => p,
        }
    }
}

/// The root-scope exact paths: protected paths of every default policy.
pub(crate) fn root_paths() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().filter_map(|e| match (e.scope, e.matcher) {
        (Scope::Root, Matcher::Path(p)) => Some(p),
        _ => None,
    })
}

/// The paths inside every git directory (main repository, linked worktree).
pub(crate) fn git_dir_paths() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().filter_map(|e| match (e.scope, e.matcher) {
        (Scope::GitDir, Matcher::Path(p)) => Some(p),
        _ => None,
    })
}

/// The paths inside a submodule's git directory, with how each is protected: the
/// [`Scope::GitDir`] entries, overridden by the [`Scope::SubmoduleGitDir`] ones.
pub(crate) fn submodule_dir_paths() -> Vec<(&'static str, Protection)> {
    let mut out: Vec<(&'static str, Protection)> = Vec::new();
    for scope in [Scope::GitDir, Scope::SubmoduleGitDir] {
        for e in REGISTRY.iter().filter(|e| e.scope == scope) {
            if let Matcher::Path(p) = e.matcher {
                out.retain(|(q, _)| *q != p);
                out.push((p, e.protection));
            }
        }
    }
    out
}

/// Whether `name` (one path component) matches `pattern` (at most one `*`).
pub(crate) fn pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((prefix, suffix)) => {
            name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_one_plain_relative_path_or_a_one_star_root_pattern() {
        for e in REGISTRY {
            let text = match e.matcher {
                Matcher::Path(p) => {
                    assert!(!p.contains('*'), "{p}");
                    p
                }
                Matcher::RootPattern(p) => {
                    assert_eq!(p.matches('*').count(), 1, "{p}");
                    assert!(!p.contains('/'), "{p}");
                    assert_eq!(e.scope, Scope::Root, "{p}");
                    p
                }
            };
            assert!(!text.starts_with('/') && !text.contains(".."), "{text}");
            assert!(!e.program.is_empty() && !e.why.is_empty(), "{text}");
            if e.scope == Scope::Root {
                assert!(!text.contains('/'), "root entries are names: {text}");
            }
        }
        let mut names: Vec<_> = REGISTRY.iter().map(|e| (e.scope, e.matcher)).collect();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn the_families_the_issue_names_are_listed() {
        for name in [
            ".gitmodules",
            ".gitattributes",
            ".husky",
            ".pre-commit-config.yaml",
            "lefthook.yml",
            ".overcommit.yml",
            ".devcontainer",
            ".devcontainer.json",
            ".envrc",
            ".vscode",
            "proj.code-workspace",
            ".idea",
            ".zed",
            ".helix",
            ".dir-locals.el",
            ".exrc",
            ".nvim.lua",
            ".claude",
            ".mcp.json",
            ".cursor",
            ".gemini",
            ".codex",
            ".continue",
            ".windsurf",
            ".aider.conf.yml",
            ".roo",
            ".amazonq",
        ] {
            assert!(AutoRun::is_root_name(name), "{name}");
        }
        assert!(!AutoRun::is_root_name("src") && !AutoRun::is_root_name(".code-workspace-notes/x"));
        assert!(!AutoRun::is_root_name("README.md") && !AutoRun::is_root_name(".gitignore"));
        let git: Vec<_> = git_dir_paths().collect();
        for p in [
            "hooks",
            "config",
            "commondir",
            "config.worktree",
            "info/attributes",
        ] {
            assert!(git.contains(&p), "{p}");
        }
    }

    #[test]
    fn git_dir_paths_fall_under_their_entry_and_submodules_take_theirs() {
        let hooks = AutoRun::for_git_dir_path("hooks/pre-commit", false);
        assert_eq!(hooks.map(AutoRun::name), Some("hooks"));
        assert_eq!(AutoRun::for_git_dir_path("hooksx", false), None);
        assert_eq!(AutoRun::for_git_dir_path("refs/heads/config", false), None);
        let plain = AutoRun::for_git_dir_path("config", false);
        let sub = AutoRun::for_git_dir_path("config", true);
        assert_eq!(plain.map(|e| e.protection), Some(Protection::ReadOnly));
        assert_eq!(
            sub.map(|e| e.protection),
            Some(Protection::RestoredAfterRun)
        );
        assert_eq!(
            AutoRun::for_git_dir_path("info/attributes", true).map(AutoRun::name),
            Some("info/attributes")
        );
    }

    #[test]
    fn patterns_match_prefix_and_suffix() {
        assert!(pattern_matches("*.code-workspace", "a.code-workspace"));
        assert!(pattern_matches("*.code-workspace", ".code-workspace"));
        assert!(!pattern_matches("*.code-workspace", "a.code-workspace.bak"));
        assert!(pattern_matches(".aider*", ".aider.conf.yml"));
        assert!(!pattern_matches(".aider*", "aider"));
    }
}
