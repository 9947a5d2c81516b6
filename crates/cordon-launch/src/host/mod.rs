//! Host plumbing: the raw system calls (`sys.rs`, the crate's only `unsafe` code), process
//! groups and supervision, what a run holds on the host and the session reaper that removes it
//! when the launcher is killed, placeholders, the signals that end jails, the host's listening
//! Unix sockets (sockets.rs), and the planning host that remembers `PATH` programs' `#!` lines
//! (heads.rs) and the `PATH` walk's answer (walks.rs), both by the files' stamps (stamp.rs),
//! and asks each path once per plan (snapshot.rs).

pub(crate) mod cleanup;
pub(crate) mod ending;
pub(crate) mod groups;
pub(crate) mod heads;
pub(crate) mod placeholders;
pub(crate) mod reaper;
pub(crate) mod snapshot;
pub(crate) mod sockets;
pub(crate) mod stamp;
pub(crate) mod supervise;
pub(crate) mod sys;
pub(crate) mod token;
pub(crate) mod walks;
