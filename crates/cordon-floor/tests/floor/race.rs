//! `open_beneath` under a race: one thread swaps a directory inside the root for a symlink that
//! leads outside, over and over, while another opens through it. No descriptor may ever point
//! outside the root, and nothing outside may change.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cordon_floor::{FloorError, OFlags, open_beneath};

fn identity(path: &Path) -> (u64, u64) {
    let m = std::fs::metadata(path).unwrap();
    (m.dev(), m.ino())
}

#[test]
fn a_directory_swapped_for_a_symlink_never_leads_outside() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("sub/f"), "inside").unwrap();
    std::fs::write(outside.join("f"), "outside").unwrap();
    let inside_id = identity(&root.join("sub/f"));
    let outside_id = identity(&outside.join("f"));

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (root, outside, stop, swaps) =
            (root.clone(), outside.clone(), stop.clone(), swaps.clone());
        std::thread::spawn(move || {
            let sub = root.join("sub");
            let parked = root.join("sub.real");
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&sub, &parked).unwrap();
                // Alternate a relative link up and out, and an absolute one.
                if n.is_multiple_of(2) {
                    std::os::unix::fs::symlink("../outside", &sub).unwrap();
                } else {
                    std::os::unix::fs::symlink(&outside, &sub).unwrap();
                }
                std::fs::remove_file(&sub).unwrap();
                std::fs::rename(&parked, &sub).unwrap();
                n += 1;
                swaps.store(n, Ordering::Relaxed);
            }
        })
    };

    let root_fd = std::fs::File::open(&root).unwrap();
    let deadline = Instant::now() + Duration::from_millis(1500);
    let (mut opened, mut refused) = (0usize, 0usize);
    let mut i = 0usize;
    while Instant::now() < deadline {
        let flags = if i.is_multiple_of(3) {
            OFlags::WRONLY | OFlags::APPEND
        } else {
            OFlags::RDONLY
        };
        i += 1;
        match open_beneath(&root_fd, Path::new("sub/f"), flags) {
            Ok(fd) => {
                let file = std::fs::File::from(fd);
                let m = file.metadata().unwrap();
                let id = (m.dev(), m.ino());
                assert_ne!(id, outside_id, "a descriptor escaped the root");
                assert_eq!(id, inside_id, "opened something else than the file inside");
                opened += 1;
            }
            Err(FloorError::SymlinkBeneath { .. } | FloorError::EscapesRoot { .. }) => refused += 1,
            Err(FloorError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                refused += 1;
            }
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    assert_eq!(
        std::fs::read_to_string(outside.join("f")).unwrap(),
        "outside"
    );
    assert!(swaps.load(Ordering::Relaxed) > 10, "the swapper barely ran");
    assert!(
        opened > 0,
        "no open succeeded: the race was not exercised ({refused} refused)"
    );
    eprintln!(
        "{opened} opens inside, {refused} refused, {} swaps",
        swaps.load(Ordering::Relaxed)
    );
}
