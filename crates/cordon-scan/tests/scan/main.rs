//! cordon-scan's integration tests, one test binary, on real trees: `findings` walks temporary
//! trees on the host, `mounts` makes its bind mounts in a private mount namespace of one thread,
//! which the other tests never see. The tests that need root (device nodes, bind mounts) fail,
//! saying so, without it; CI runs as root.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod findings;
mod mounts;
