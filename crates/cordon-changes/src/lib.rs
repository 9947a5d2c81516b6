//! A change set in, a verdict per change out: the pure judge of what a jailed command left in
//! its copy-on-write layer over a writable root, before any of it reaches the host.
//!
//! The caller (the commit) reads the layer into a [`ChangeSet`] (paths relative to the root),
//! hands over a [`Contents`] through which the judge reads the command's and the host's bytes
//! (capped), and gets one [`Verdict`] per change, in order: [`Verdict::Apply`],
//! [`Verdict::ApplyRewritten`] (a git configuration with its command-running keys dropped),
//! [`Verdict::ApplyMode`] (set-id and world-writable bits stripped), [`Verdict::Hold`] (needs
//! the user's consent) or [`Verdict::Refuse`] (never applied; a violation). Every refusal and
//! hold carries a [`Finding`]: a stable rule id ([`RULE_IDS`]), the program that would have run
//! what the change holds, and why.
//!
//! Judged by structure, at any depth, in this order (the first rule that speaks decides):
//!
//! 1. **Structure.** A path with `..`, `.` or a root is refused (`path-not-plain`); a fifo,
//!    socket or device is refused (`special-file`).
//! 2. **Deletions** are applied, except inside a git directory or of a `.git` itself, which
//!    are held (`git-deletion`): a careful user expects a deleted repository, branch or object
//!    to be recoverable, so the host keeps it until the user applies the deletion. A deletion
//!    at an auto-run name (`auto-run-deleted`) or of project configuration not known to be
//!    inert (`project-config`) is held too: removing a `.pre-commit-config.yaml` turns checks
//!    off, removing an `.npmrc` with `ignore-scripts=true` runs the next install's scripts.
//! 3. **Git directories**, found by shape before and after the command: a `.git` directory, a
//!    directory a `.git` file or link of the change set names, `HEAD` with `objects` and
//!    `refs` (a bare repository, a module) or with `commondir` (a linked worktree's), and
//!    below another git directory's `modules/` or `worktrees/` any directory with one of git's
//!    names. In the deepest one above a path, the registry's git-directory entries decide:
//!    `hooks/*` refused but git's own `*.sample` files (`git-hook`); `config` and
//!    `config.worktree` judged by `cordon-gitconfig` (a new one sanitized, an edit merged so
//!    only the command's changes are judged; dropped keys make `ApplyRewritten`, and a
//!    configuration that is a link, unreadable, over [`Rules::max_config_bytes`], not UTF-8
//!    or unparsable is refused); `commondir` and a worktree's `gitdir`, like a `.git` file or
//!    link anywhere, refused when they point out of the root (`git-pointer-outside-root`) or
//!    cannot be read (`git-pointer-unreadable`); an existing pointer changed is held and a
//!    `commondir` added to a git directory the host had is refused (`git-redirected`: host
//!    git would take an existing repository's configuration and hooks from elsewhere). The
//!    root itself may be a git directory (a worktree's administrative directory granted alone). Host `config` or `hooks` the change set does
//!    not hold (a fixture repository kept as data) must not become live: a new `HEAD` or
//!    `commondir` that makes their directory a git directory, or a pointer at it from outside
//!    a `.git` directory and its own repository, is refused (`git-dir-over-host-config`).
//! 4. **The auto-run registry** (`cordon_policy::AutoRun`), its names and patterns matched on
//!    every component at any depth (editors open subfolders, direnv and agents walk up from
//!    where they start, git reads `.gitattributes` everywhere): new is refused
//!    (`auto-run-new`), changed is held (`auto-run-modified`), deleted is held (rule 2), the
//!    program named from the registry. A `.gitmodules` whose every entry is a plain submodule
//!    registration (`path`, and keys `cordon-gitconfig` allows: what `git submodule add`
//!    writes) is applied. A link at such a name is judged as the name.
//! 5. **Project configuration, by allowlist** (`docs/project-config.md`): a dot-entry or
//!    toolchain file at the root's top, a name tools look for wherever they run
//!    ([`rules::ANY_DEPTH`]: `.cargo`, `.npmrc`, `rust-toolchain.toml`, …) at any depth, and a
//!    dot-entry at a nested project's top (a directory with a manifest or a `.git`), nothing
//!    below `node_modules`: new or changed is held (`project-config`) unless on the inert list
//!    ([`rules::INERT`]). A name nobody listed is held.
//! 6. **Links out of the root** are applied as links, but one whose target lands outside the
//!    root at an auto-run name is refused and at configuration is held
//!    (`symlink-out-of-root`).
//! 7. **Modes**: set-id and world-writable bits are stripped ([`allowed_mode`]).
//!
//! Pure: no file IO, no process, no environment; the host comes through [`Contents`].
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use cordon_changes::{Change, ChangeKind, ChangeSet, Contents, Node, Rules, Verdict, judge};
//!
//! struct Nothing;
//! impl Contents for Nothing {
//!     fn new_bytes(&self, _: &Path, _: usize) -> Option<Vec<u8>> { None }
//!     fn old_bytes(&self, _: &Path, _: usize) -> Option<Vec<u8>> { None }
//!     fn old_node(&self, _: &Path) -> Option<Node> { None }
//! }
//! let file = |p: &str| Change {
//!     path: PathBuf::from(p),
//!     kind: ChangeKind::Added,
//!     node: Node::File { mode: 0o644, size: 1 },
//! };
//! let set = ChangeSet {
//!     root: "/home/u/proj".into(),
//!     changes: vec![file("src/main.rs"), file("sub/.envrc"), file(".cargo/config.toml")],
//! };
//! let v = judge(&set, &Nothing, &Rules::default());
//! assert_eq!(v[0], Verdict::Apply);
//! assert!(matches!(&v[1], Verdict::Refuse(f) if f.rule == "auto-run-new" && f.program == "direnv"));
//! assert!(matches!(&v[2], Verdict::Hold(f) if f.rule == "project-config" && f.program == "cargo"));
//! ```

mod git;
mod judge;
mod model;
pub mod rules;
mod view;

pub use model::{Change, ChangeKind, ChangeSet, Contents, Finding, Node, Special, Verdict};
pub use rules::{RULE_IDS, Rules, allowed_mode};

/// One verdict per change of `set`, in the same order.
pub fn judge(set: &ChangeSet, contents: &dyn Contents, rules: &Rules) -> Vec<Verdict> {
    let mut view = view::View::new(set, contents);
    view.named_git_dirs = git::named_git_dirs(&view, rules);
    set.changes
        .iter()
        .map(|c| judge::judge_one(&view, c, rules))
        .collect()
}
