//! Git directories made or touched by the command, at any depth.

use cordon_changes::{ChangeKind, Node, Rules, Verdict};

use crate::support::Case;

const CLEAN: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
const FSMONITOR: &str =
    "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = /tmp/evil.sh\n[user]\n\tname = Agent\n";

/// `git init` at `dir`: the directory, HEAD, objects, refs and a config.
fn init(case: Case, git_dir: &str, config: &str) -> Case {
    case.mkdir(git_dir)
        .write(&format!("{git_dir}/HEAD"), b"ref: refs/heads/main\n")
        .mkdir(&format!("{git_dir}/objects"))
        .mkdir(&format!("{git_dir}/refs"))
        .write(&format!("{git_dir}/config"), config.as_bytes())
}

#[test]
fn a_new_repository_at_any_depth_has_its_command_running_keys_dropped() {
    let j = init(Case::new(), "vendor/lib/.git", FSMONITOR).judge();
    let (text, dropped) = j.rewritten("vendor/lib/.git/config");
    assert!(
        !text.contains("fsmonitor") && text.contains("name = Agent"),
        "{text}"
    );
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].rule, "git-config-key");
    assert!(dropped[0].why.contains("core.fsmonitor"), "{dropped:?}");
    j.applied("vendor/lib/.git/HEAD");
    j.applied("vendor/lib/.git");
}

#[test]
fn a_clean_configuration_is_applied_as_written() {
    let j = init(Case::new(), ".git", CLEAN).judge();
    j.applied(".git/config");
}

#[test]
fn a_bare_repository_is_found_by_its_shape() {
    let j = init(Case::new(), "backup/mirror.git", FSMONITOR)
        .write("backup/mirror.git/hooks/post-update", b"#!/bin/sh\n")
        .judge();
    j.rewritten("backup/mirror.git/config");
    j.refused("backup/mirror.git/hooks/post-update", "git-hook");
}

#[test]
fn without_the_shape_the_same_names_are_plain_files() {
    // A directory named like a config with `hooks` in it is no git directory: applied.
    let j = Case::new()
        .write("settings/config", FSMONITOR.as_bytes())
        .write("settings/hooks/useThing.ts", b"export {}")
        .judge();
    j.applied("settings/config");
    j.applied("settings/hooks/useThing.ts");
}

#[test]
fn hooks_are_refused_but_the_samples_git_writes() {
    let case = Case::new()
        .host_dir(".git")
        .host_file(".git/HEAD", "ref: refs/heads/main\n");
    let j = case
        .host_dir(".git/objects")
        .host_dir(".git/refs")
        .host_file(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n")
        .write(".git/hooks/post-checkout", b"#!/bin/sh\n")
        .write(
            ".git/hooks/pre-commit",
            b"#!/bin/sh\ncurl example.invalid\n",
        )
        .write(".git/hooks/pre-push.sample", b"#!/bin/sh\n")
        .link(".git/hooks/commit-msg", "/tmp/x")
        .judge();
    j.refused(".git/hooks/post-checkout", "git-hook");
    j.refused(".git/hooks/pre-commit", "git-hook");
    j.refused(".git/hooks/commit-msg", "git-hook");
    j.applied(".git/hooks/pre-push.sample");
}

#[test]
fn an_edit_of_the_users_config_keeps_allowed_changes_and_drops_the_rest() {
    let old = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n";
    let ok = format!("{old}[user]\n\temail = a@example.com\n");
    let bad = format!("{old}[alias]\n\tst = !curl example.invalid\n");
    let host = |c: Case| {
        c.host_dir("a/.git")
            .host_file("a/.git/config", old)
            .host_dir("b/.git")
            .host_file("b/.git/config", old)
    };
    let j = host(Case::new())
        .write("a/.git/config", ok.as_bytes())
        .write("b/.git/config", bad.as_bytes())
        .judge();
    j.applied("a/.git/config");
    let (text, dropped) = j.rewritten("b/.git/config");
    assert_eq!(text, old);
    assert!(dropped[0].why.contains("alias.st"), "{dropped:?}");
}

#[test]
fn configurations_that_cannot_be_judged_are_refused() {
    let big = format!("{CLEAN}# {}\n", "x".repeat(2 << 20));
    let j = Case::new()
        .mkdir("a/.git")
        .write("a/.git/config", &[0x5b, 0xff, 0xfe, 0x5d, b'\n'])
        .mkdir("b/.git")
        .write("b/.git/config", big.as_bytes())
        .mkdir("c/.git")
        .link("c/.git/config", "/home/u/.gitconfig")
        .mkdir("d/.git")
        .write("d/.git/config", b"[core\n\tfsmonitor = x\n")
        .judge();
    j.refused("a/.git/config", "git-config-not-utf8");
    j.refused("b/.git/config", "git-config-unreadable");
    j.refused("c/.git/config", "git-config-symlink");
    j.refused("d/.git/config", "git-config-unparsable");
}

#[test]
fn a_git_file_pointing_out_of_the_root_is_refused_and_one_inside_applied() {
    let j = Case::new()
        .write("x/.git", b"gitdir: /tmp/planted\n")
        .write("y/.git", b"gitdir: ../../../../elsewhere\n")
        .write("z/.git", b"gitdir: ../.git/modules/z\n")
        .link("w/.git", "/var/tmp/repo")
        .write("v/.git", b"not a pointer\n")
        .judge();
    j.refused("x/.git", "git-pointer-outside-root");
    j.refused("y/.git", "git-pointer-outside-root");
    j.refused("w/.git", "git-pointer-outside-root");
    j.refused("v/.git", "git-pointer-unreadable");
    j.applied("z/.git");
}

#[test]
fn a_git_file_names_a_git_directory_whose_config_is_then_judged() {
    // `planted/` has no shape of its own (no HEAD); the `.git` file naming it makes it one.
    let j = Case::new()
        .write("w/.git", b"gitdir: ../planted\n")
        .write("planted/config", FSMONITOR.as_bytes())
        .write("planted/hooks/pre-commit", b"#!/bin/sh\n")
        .judge();
    j.applied("w/.git");
    j.rewritten("planted/config");
    j.refused("planted/hooks/pre-commit", "git-hook");
}

#[test]
fn git_worktree_add_is_applied_when_it_stays_in_the_root() {
    let case = Case::new()
        .host_dir(".git")
        .host_file(".git/HEAD", "ref: refs/heads/main\n")
        .host_file(".git/config", CLEAN)
        .mkdir(".git/worktrees/wt")
        .write(".git/worktrees/wt/HEAD", b"ref: refs/heads/wt\n")
        .write(".git/worktrees/wt/commondir", b"../..\n")
        .write(".git/worktrees/wt/gitdir", b"/home/u/proj/wt/.git\n")
        .write("wt/.git", b"gitdir: /home/u/proj/.git/worktrees/wt\n")
        .write("wt/README", b"hi");
    let j = case.judge();
    for p in [
        ".git/worktrees/wt/HEAD",
        ".git/worktrees/wt/commondir",
        ".git/worktrees/wt/gitdir",
        "wt/.git",
        "wt/README",
    ] {
        j.applied(p);
    }
    let j = Case::new()
        .host_dir(".git")
        .write(".git/worktrees/wt/HEAD", b"ref: refs/heads/wt\n")
        .write(".git/worktrees/wt/commondir", b"/tmp/common\n")
        .write(".git/worktrees/wt/config.worktree", FSMONITOR.as_bytes())
        .judge();
    j.refused(".git/worktrees/wt/commondir", "git-pointer-outside-root");
    j.rewritten(".git/worktrees/wt/config.worktree");
}

#[test]
fn a_new_submodule_is_sanitized_keeping_its_way_back_to_its_checkout() {
    let config = "[core]\n\tworktree = ../../../lib\n\tfsmonitor = evil\n";
    let escaping = "[core]\n\tworktree = ../../../../../../elsewhere\n";
    let j = Case::new()
        .host_dir(".git")
        .mkdir(".git/modules/lib")
        .write(".git/modules/lib/HEAD", b"ref: refs/heads/main\n")
        .write(".git/modules/lib/config", config.as_bytes())
        .write(".git/modules/lib/hooks/post-merge", b"#!/bin/sh\n")
        .write(".git/modules/other/config", escaping.as_bytes())
        .write("lib/.git", b"gitdir: ../.git/modules/lib\n")
        .write(".gitmodules", b"[submodule \"lib\"]\n\tpath = lib\n")
        .judge();
    let (text, dropped) = j.rewritten(".git/modules/lib/config");
    assert!(text.contains("worktree = ../../../lib") && !text.contains("fsmonitor"));
    assert_eq!(dropped.len(), 1);
    let (text, _) = j.rewritten(".git/modules/other/config");
    assert!(!text.contains("worktree"), "{text}");
    j.refused(".git/modules/lib/hooks/post-merge", "git-hook");
    j.applied("lib/.git");
    // A plain registration, as `git submodule add` writes it (registry.rs judges the others).
    j.applied(".gitmodules");
}

#[test]
fn refs_named_like_git_files_are_not_judged_as_them() {
    let j = Case::new()
        .host_dir(".git")
        .host_file(".git/HEAD", "ref: refs/heads/main\n")
        .write(
            ".git/refs/heads/config",
            b"0123456789abcdef0123456789abcdef01234567\n",
        )
        .write(
            ".git/refs/heads/hooks/x",
            b"0123456789abcdef0123456789abcdef01234567\n",
        )
        .write(".git/info/exclude", b"target\n")
        .write(".git/info/attributes", b"* filter=x\n")
        .judge();
    j.applied(".git/refs/heads/config");
    j.applied(".git/refs/heads/hooks/x");
    j.applied(".git/info/exclude");
    assert_eq!(
        j.refused(".git/info/attributes", "auto-run-new").program,
        "git"
    );
}

#[test]
fn deleting_inside_a_git_directory_is_held_and_elsewhere_applied() {
    let j = Case::new()
        .host_dir(".git")
        .host_file(".git/HEAD", "ref: refs/heads/main\n")
        .host_file(".git/refs/heads/topic", "0123\n")
        .host_dir("old/.git")
        .host_file("src/main.rs", "fn main() {}")
        .delete(".git/refs/heads/topic")
        .delete("old/.git")
        .delete("src/main.rs")
        .judge();
    j.held(".git/refs/heads/topic", "git-deletion");
    j.held("old/.git", "git-deletion");
    j.applied("src/main.rs");
}

#[test]
fn making_a_directory_a_repository_over_an_unjudged_host_config_is_refused() {
    // An earlier run left `stash/config` (a plain file then); this run adds the shape.
    let j = Case::new()
        .host_file("stash/config", FSMONITOR)
        .write("stash/HEAD", b"ref: refs/heads/main\n")
        .mkdir("stash/objects")
        .mkdir("stash/refs")
        .judge();
    j.refused("stash/HEAD", "git-dir-over-host-config");
}

#[test]
fn a_narrower_bound_refuses_what_the_default_takes() {
    let rules = Rules {
        max_config_bytes: 8,
        ..Rules::default()
    };
    let j = init(Case::new(), ".git", CLEAN).with_rules(rules).judge();
    j.refused(".git/config", "git-config-unreadable");
    let j = init(Case::new(), ".git", CLEAN).judge();
    assert_eq!(j.of(".git/config"), &Verdict::Apply);
    let _ = (ChangeKind::Added, Node::Dir { mode: 0 });
}

#[test]
fn a_pointer_at_a_host_directory_with_unjudged_hooks_is_refused() {
    // A fixture repository kept as data (`_git` instead of `.git`): a `.git` file naming it
    // would make host git run its hooks.
    let j = Case::new()
        .host_file("tests/fixture/_git/HEAD", "ref: refs/heads/main\n")
        .host_file("tests/fixture/_git/hooks/post-checkout", "#!/bin/sh\n")
        .host_file("tests/other/_git/config", FSMONITOR)
        .write("tests/fixture/.git", b"gitdir: _git\n")
        .link("tests/other/.git", "_git")
        .write("tests/fresh/.git", b"gitdir: _git\n")
        .write("tests/fresh/_git/config", CLEAN.as_bytes())
        .judge();
    j.refused("tests/fixture/.git", "git-dir-over-host-config");
    j.refused("tests/other/.git", "git-dir-over-host-config");
    j.applied("tests/fresh/.git");
    j.applied("tests/fresh/_git/config");
}

#[test]
fn a_worktree_of_a_bare_repository_points_back_at_its_own_repository() {
    let j = Case::new()
        .host_file("r.git/HEAD", "ref: refs/heads/main\n")
        .host_dir("r.git/objects")
        .host_dir("r.git/refs")
        .host_file("r.git/config", "[core]\n\tbare = true\n")
        .write("r.git/worktrees/w/HEAD", b"ref: refs/heads/w\n")
        .write("r.git/worktrees/w/commondir", b"../..\n")
        .write("w/.git", b"gitdir: ../r.git/worktrees/w\n")
        .judge();
    j.applied("r.git/worktrees/w/commondir");
    j.applied("w/.git");
}

#[test]
fn an_existing_repository_redirected_is_refused_or_held() {
    let j = Case::new()
        .host_file(".git/HEAD", "ref: refs/heads/main\n")
        .host_dir(".git/objects")
        .host_dir(".git/refs")
        .host_file(".git/config", CLEAN)
        .host_file(".git/modules/lib/HEAD", "ref: refs/heads/main\n")
        .host_dir(".git/modules/lib/objects")
        .host_dir(".git/modules/lib/refs")
        .host_file("lib/.git", "gitdir: ../.git/modules/lib\n")
        // A copy of the repository with a planted configuration, and the pointers moved to it.
        .write("scratch/evil/HEAD", b"ref: refs/heads/main\n")
        .mkdir("scratch/evil/objects")
        .mkdir("scratch/evil/refs")
        .write("scratch/evil/config", FSMONITOR.as_bytes())
        .write(".git/commondir", b"../scratch/evil\n")
        .write(".git/modules/lib/commondir", b"../../../scratch/evil\n")
        .write("lib/.git", b"gitdir: ../scratch/evil\n")
        .judge();
    // git never adds a commondir to a repository that exists.
    j.refused(".git/commondir", "git-redirected");
    j.refused(".git/modules/lib/commondir", "git-redirected");
    // A moved `.git` file is what `git submodule absorbgitdirs` leaves: held for the user.
    j.held("lib/.git", "git-redirected");
    // The copy itself is a new repository, its configuration sanitized.
    j.rewritten("scratch/evil/config");
}

#[test]
fn a_root_that_is_a_worktree_s_administrative_directory_is_a_git_directory() {
    // The `git-worktree` profile grants `.git/worktrees/wt` as a root of its own.
    let j = Case::new()
        .host_file("HEAD", "ref: refs/heads/wt\n")
        .host_file("commondir", "../..\n")
        .host_file("gitdir", "/home/u/wt/.git\n")
        .write("config.worktree", b"evil\n")
        .write("hooks/pre-commit", b"#!/bin/sh\n")
        .write("commondir", b"../../../../evil-common\n")
        .write("ORIG_HEAD", b"0000\n")
        .judge();
    j.refused("config.worktree", "git-config-unparsable");
    j.refused("hooks/pre-commit", "git-hook");
    j.refused("commondir", "git-pointer-outside-root");
    j.applied("ORIG_HEAD");
}

#[test]
fn a_pointer_rewritten_to_what_it_said_is_applied() {
    // `git submodule update` may write a submodule's `.git` file again, the same.
    let j = Case::new()
        .host_file(".git/HEAD", "ref: refs/heads/main\n")
        .host_file(".git/modules/lib/HEAD", "ref: refs/heads/main\n")
        .host_dir(".git/modules/lib/objects")
        .host_dir(".git/modules/lib/refs")
        .host_file("lib/.git", "gitdir: ../.git/modules/lib\n")
        .write("lib/.git", b"gitdir: ../.git/modules/lib\n")
        .judge();
    j.applied("lib/.git");
}
