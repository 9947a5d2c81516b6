//! Host edits made while the command ran are never lost; jails committing into one workspace
//! take turns and see each other's changes as conflicts.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use cordon_commit::{Mode, Status, commit_root};

use crate::support::{Fixture, paths, read};

/// Waits until a change made now has a change time at or after the marker's (the host's edit
/// below must count as made during the run).
fn after_marker(f: &Fixture, path: &Path) {
    let m = std::fs::metadata(f.marker()).unwrap();
    let p = std::fs::metadata(path).unwrap();
    assert!(
        (p.ctime(), p.ctime_nsec()) >= (m.ctime(), m.ctime_nsec()),
        "the host's edit is older than the marker"
    );
}

#[test]
fn a_path_the_host_changed_during_the_run_is_a_conflict_and_the_host_version_stays() {
    let f = Fixture::new("echo host-v1 > f; echo other > g; echo gone > h");
    f.jail("echo command > f; echo command > g; rm h; echo new > host-made");
    std::fs::write(f.ws().join("f"), "host-v2\n").unwrap();
    after_marker(&f, &f.ws().join("f"));
    std::fs::write(f.ws().join("h"), "host edited it\n").unwrap();
    std::fs::write(f.ws().join("host-made"), "the host made it\n").unwrap();
    let report = f.commit(Mode::Apply);
    let mut conflicts = paths(&report.conflicts);
    conflicts.sort();
    assert_eq!(conflicts, ["f", "h", "host-made"], "{report:?}");
    assert_eq!(paths(&report.modified), ["g"]);
    assert_eq!(read(f.ws().join("f")), "host-v2\n");
    assert_eq!(read(f.ws().join("h")), "host edited it\n");
    assert_eq!(read(f.ws().join("host-made")), "the host made it\n");
    assert_eq!(read(f.ws().join("g")), "command\n");
    let run = report.run_dir.unwrap();
    assert_eq!(read(run.join("kept/f")), "command\n");
    // The run is listed, with its conflicts.
    let runs = cordon_commit::list_runs(&f.state()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].conflicts, 3);
}

#[test]
fn two_jails_committing_at_once_take_turns_and_the_second_sees_the_first_as_conflicts() {
    let f = Fixture::new("echo base > shared; echo base > only-a; echo base > only-b");
    let (up2, wk2) = (f.path().join("layer2/upper"), f.path().join("layer2/work"));
    std::fs::create_dir_all(&up2).unwrap();
    std::fs::create_dir_all(&wk2).unwrap();
    f.jail("echo from-a > shared; echo from-a > only-a; echo a > new-a");
    f.jail_in(
        &up2,
        &wk2,
        "echo from-b > shared; echo from-b > only-b; echo b > new-b",
    );
    let (ws, state, marker) = (f.ws(), f.state(), f.marker());
    let reports: Vec<_> = std::thread::scope(|s| {
        let a = s.spawn(|| commit_root(&ws, &f.upper(), &state, &marker, Mode::Apply).unwrap());
        let b = s.spawn(|| commit_root(&ws, &up2, &state, &marker, Mode::Apply).unwrap());
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    let shared = read(ws.join("shared"));
    assert!(shared == "from-a\n" || shared == "from-b\n");
    // Exactly one of them applied `shared`; the other has it as a conflict.
    let conflicted: Vec<Vec<String>> = reports.iter().map(|r| paths(&r.conflicts)).collect();
    let applied = conflicted.iter().filter(|c| c.is_empty()).count();
    assert_eq!(applied, 1, "{reports:?}");
    assert!(
        conflicted.iter().any(|c| c == &["shared".to_string()]),
        "{reports:?}"
    );
    assert_eq!(read(ws.join("only-a")), "from-a\n");
    assert_eq!(read(ws.join("only-b")), "from-b\n");
    assert_eq!(read(ws.join("new-a")), "a\n");
    assert_eq!(read(ws.join("new-b")), "b\n");
    let runs = cordon_commit::list_runs(&state).unwrap();
    assert_eq!(runs.len(), 1);
    let (manifest, _) = cordon_commit::read_run(&state, &runs[0].run).unwrap();
    let e = manifest
        .entries
        .iter()
        .find(|e| e.path == Path::new("shared"))
        .unwrap();
    assert_eq!(e.status, Status::Conflict);
}
