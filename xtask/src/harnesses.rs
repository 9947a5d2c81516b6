//! The escape suite, the load, the bench and the workloads: packages of their own under `tests/`,
//! each a binary that xtask builds and runs with `cargo run`, passing its arguments through. They
//! depend on the cordon crates or build the `cordon` binary; xtask does neither, so it builds in
//! seconds.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// One harness package.
pub struct Harness {
    /// The package (`cargo run -p`), also the name of its binary.
    pub package: &'static str,
    /// Whether it runs as a release build.
    pub release: bool,
}

/// `cargo xtask escape-suite`: `tests/escape`, a debug build (the `cordon` binaries it runs
/// attacks through are its own builds).
pub const ESCAPE: Harness = Harness {
    package: "cordon-escape",
    release: false,
};

/// `cargo xtask load`: `tests/load`, a debug build.
pub const LOAD: Harness = Harness {
    package: "cordon-load",
    release: false,
};

/// `cargo xtask bench`: `tests/bench`, a release build (its in-process rows time optimized code).
pub const BENCH: Harness = Harness {
    package: "cordon-bench",
    release: true,
};

/// `cargo xtask workloads`: `tests/workloads`, a debug build (it builds and runs the debug
/// `cordon` binary).
pub const WORKLOADS: Harness = Harness {
    package: "cordon-workloads",
    release: false,
};

impl Harness {
    /// The arguments of `cargo run --locked [--release] -p <package> -- <args>`.
    pub fn cargo_args<I>(&self, args: I) -> Vec<OsString>
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        let mut all: Vec<OsString> = vec!["run".into(), "--locked".into()];
        if self.release {
            all.push("--release".into());
        }
        all.extend(["-p".into(), self.package.into(), "--".into()]);
        all.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        all
    }

    /// Where `cargo run` leaves the binary, for running it again without cargo.
    pub fn binary(&self, root: &Path) -> PathBuf {
        let profile = if self.release { "release" } else { "debug" };
        cordon_test_support::target_dir(root)
            .join(profile)
            .join(self.package)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_follow_the_separator() {
        assert_eq!(
            BENCH.cargo_args(["--runs", "5"]),
            [
                "run",
                "--locked",
                "--release",
                "-p",
                "cordon-bench",
                "--",
                "--runs",
                "5"
            ]
        );
        assert_eq!(
            LOAD.cargo_args::<[&str; 0]>([]),
            ["run", "--locked", "-p", "cordon-load", "--"]
        );
    }
}
