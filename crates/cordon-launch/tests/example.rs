//! The crate's runnable example (`examples/echo.rs`) runs `echo hi` in a real jail. `cargo
//! test` builds examples before it runs tests; this one is run from where cargo put it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_echo_example_prints_hi_from_a_jail() {
    // This test's binary is target/<profile>/deps/example-<hash>; examples sit beside deps/.
    let exe = std::env::current_exe().unwrap();
    let profile_dir: PathBuf = exe.parent().and_then(|d| d.parent()).unwrap().to_path_buf();
    let example = profile_dir.join("examples").join("echo");
    assert!(
        example.exists(),
        "{} is missing: build the examples (`cargo test` does) before running this test",
        example.display()
    );
    let out = Command::new(&example).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout {:?} stderr {:?}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
}
