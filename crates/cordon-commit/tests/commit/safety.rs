//! Never written through: hard links, symbolic links, specials, set-id bits, parents that became
//! links on the host.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use cordon_commit::Mode;

use crate::support::{Fixture, paths, read};

#[test]
fn a_file_hard_linked_on_the_host_is_replaced_and_its_other_name_keeps_its_content() {
    let f = Fixture::new("echo shared > f; echo other > g");
    let store = f.outside().join("store-copy");
    std::fs::hard_link(f.ws().join("f"), &store).unwrap();
    std::fs::hard_link(f.ws().join("g"), f.outside().join("g-copy")).unwrap();
    f.jail("echo appended >> f; chmod 600 g; : > g");
    let report = f.commit(Mode::Apply);
    let mut modified = paths(&report.modified);
    modified.sort();
    assert_eq!(modified, ["f", "g"]);
    assert_eq!(read(f.ws().join("f")), "shared\nappended\n");
    assert_eq!(
        read(&store),
        "shared\n",
        "the store's name changed through the link"
    );
    assert_eq!(read(f.outside().join("g-copy")), "other\n");
    let copy = std::fs::metadata(f.outside().join("g-copy")).unwrap();
    assert_eq!(copy.permissions().mode() & 0o777, 0o644);
    assert_ne!(
        copy.ino(),
        std::fs::metadata(f.ws().join("g")).unwrap().ino()
    );
}

#[test]
fn a_symbolic_link_to_outside_is_committed_as_a_link_and_never_followed() {
    let f = Fixture::new("echo mine > victim-name");
    let outside = f.outside().join("target");
    std::fs::write(&outside, "outside\n").unwrap();
    let script = format!(
        "ln -s {o} out; rm victim-name; ln -s {o} victim-name",
        o = outside.display()
    );
    f.jail(&script);
    let report = f.commit(Mode::Apply);
    assert!(report.refused.is_empty(), "{report:?}");
    assert_eq!(std::fs::read_link(f.ws().join("out")).unwrap(), outside);
    assert_eq!(
        std::fs::read_link(f.ws().join("victim-name")).unwrap(),
        outside
    );
    assert_eq!(read(&outside), "outside\n");
}

#[test]
fn a_parent_that_became_a_link_on_the_host_is_a_conflict_and_nothing_is_written_outside() {
    let f = Fixture::new("mkdir sub; echo a > sub/a");
    f.jail("echo planted > sub/new; echo changed > sub/a");
    // Meanwhile on the host, `sub` is swapped for a link out of the root.
    std::fs::rename(f.ws().join("sub"), f.path().join("sub-moved")).unwrap();
    std::os::unix::fs::symlink(f.outside(), f.ws().join("sub")).unwrap();
    let report = f.commit(Mode::Apply);
    let mut conflicts = paths(&report.conflicts);
    conflicts.sort();
    // `sub` is a link on the host now: the directory itself is the conflict, and what is in it.
    assert_eq!(conflicts, ["sub", "sub/a", "sub/new"], "{report:?}");
    assert!(!f.outside().join("new").exists());
    assert!(!f.outside().join("a").exists());
    // The command's versions are kept in the run.
    let kept = report.run_dir.unwrap().join(cordon_commit::KEPT_DIR);
    assert_eq!(read(kept.join("sub/new")), "planted\n");
}

#[test]
fn a_fifo_is_refused_and_never_made_on_the_host() {
    let f = Fixture::new("");
    f.jail("mkfifo pipe; echo ok > ok");
    let report = f.commit(Mode::Apply);
    assert_eq!(paths(&report.refused), ["pipe"]);
    assert_eq!(
        report.refused[0].finding.as_ref().unwrap().rule,
        "special-file"
    );
    assert!(std::fs::symlink_metadata(f.ws().join("pipe")).is_err());
    assert_eq!(read(f.ws().join("ok")), "ok\n");
}

#[test]
fn set_id_bits_are_stripped() {
    let f = Fixture::new("echo x > existing");
    f.jail(
        "echo '#!/bin/sh' > tool; chmod 4755 tool; chmod 2755 existing; mkdir sg; chmod 3777 sg",
    );
    f.commit(Mode::Apply);
    let mode = |p: &str| f.mode(p);
    assert_eq!(mode("tool"), 0o755);
    assert_eq!(mode("existing"), 0o755);
    assert_eq!(mode("sg") & 0o7002, 0);
}

#[test]
fn a_world_writable_file_the_judge_lets_through_by_its_own_rule_is_committed_without_the_bit() {
    // The judge's git-configuration branch answers without the mode rule: the commit applies it
    // to every file and directory whatever the verdict.
    let f = Fixture::new("mkdir -p repo && git -C repo init -q");
    f.jail(
        "git -C repo config core.fsmonitor 'touch /tmp/pwned'; chmod 666 repo/.git/config; \
         mkdir -p other && git -C other init -q && chmod 646 other/.git/config; echo x > plain; chmod 666 plain",
    );
    let report = f.commit(Mode::Apply);
    let mode = |p: &str| f.mode(p);
    assert_eq!(mode("repo/.git/config"), 0o664, "{report:?}");
    assert_eq!(mode("other/.git/config"), 0o644, "{report:?}");
    assert_eq!(mode("plain"), 0o664);
    assert!(!read(f.ws().join("repo/.git/config")).contains("fsmonitor"));
}

#[test]
fn files_are_owned_by_the_user_who_commits() {
    let f = Fixture::new("");
    f.jail("echo x > made");
    f.commit(Mode::Apply);
    let uid = std::fs::metadata(f.ws().join("made")).unwrap().uid();
    assert_eq!(uid, rustix::process::geteuid().as_raw());
}

#[test]
fn a_parent_swapped_for_a_link_after_the_journal_is_sealed_is_not_followed() {
    let f = Fixture::new("mkdir sub; echo a > sub/a");
    f.jail("echo planted > sub/new; echo changed > sub/a");
    let (ws, outside, aside) = (f.ws(), f.outside(), f.path().join("sub-moved"));
    let mut swap = |p: cordon_commit::Point| {
        if p == cordon_commit::Point::Sealed {
            std::fs::rename(ws.join("sub"), &aside).unwrap();
            std::os::unix::fs::symlink(&outside, ws.join("sub")).unwrap();
        }
    };
    let report = cordon_commit::commit_root_with(
        &f.ws(),
        &f.upper(),
        &f.state(),
        &f.marker(),
        Mode::Apply,
        cordon_commit::CommitOptions {
            hook: Some(&mut swap),
            ..Default::default()
        },
    )
    .unwrap();
    let mut conflicts = paths(&report.conflicts);
    conflicts.sort();
    assert_eq!(conflicts, ["sub/a", "sub/new"], "{report:?}");
    assert_eq!(std::fs::read_dir(f.outside()).unwrap().count(), 0);
    assert_eq!(read(f.path().join("sub-moved/a")), "a\n");
}

#[test]
fn a_state_directory_on_another_file_system_copies_and_still_never_writes_through() {
    let f = Fixture::new("echo shared > f");
    std::fs::hard_link(f.ws().join("f"), f.outside().join("f-copy")).unwrap();
    let shm = tempfile::Builder::new()
        .prefix("cordon-commit-state-")
        .tempdir_in("/dev/shm")
        .expect("/dev/shm (a tmpfs) holds the state directory of this test");
    assert_ne!(
        std::fs::metadata(shm.path()).unwrap().dev(),
        std::fs::metadata(f.ws()).unwrap().dev(),
        "/dev/shm must be another file system than the workspace's for this test"
    );
    f.jail("echo more >> f; echo new > g; chmod 4755 g; ln -s f link; mkdir -p d; echo x > d/x");
    let report =
        cordon_commit::commit_root(&f.ws(), &f.upper(), shm.path(), &f.marker(), Mode::Apply)
            .unwrap();
    assert!(
        report.conflicts.is_empty() && report.refused.is_empty(),
        "{report:?}"
    );
    assert_eq!(read(f.ws().join("f")), "shared\nmore\n");
    assert_eq!(read(f.outside().join("f-copy")), "shared\n");
    assert_eq!(read(f.ws().join("d/x")), "x\n");
    assert_eq!(
        std::fs::read_link(f.ws().join("link")).unwrap(),
        std::path::Path::new("f")
    );
    let g = std::fs::metadata(f.ws().join("g")).unwrap();
    assert_eq!(g.permissions().mode() & 0o7777, 0o755);
    // No temporary name is left beside the targets.
    let mut names: Vec<String> = std::fs::read_dir(f.ws())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["d", "f", "g", "link"]);
}
