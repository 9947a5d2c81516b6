//! Cross-crate integration tests of cordon. The tests live in `tests/integration/tests/`; this
//! library only holds what they share: finding the `cordon` binary built for this test run.

use std::path::PathBuf;

/// The `cordon` binary of this build (`target/<profile>/cordon`), next to the test executable's
/// parent directory.
pub fn cordon_binary() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap_or_default();
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join("cordon")
}
