//! The upstream projects of the workloads suite: what is fetched (every archive by exact version
//! and sha256), how each is built and tested, and how its test runner's output is counted.
//!
//! Archives are unpacked with `tar --no-same-owner`: as root in the jail, tar's default of
//! giving each file its archived owner fails on an owner the jail's user namespace does not map
//! (the `tar-owner` probe shows it), and the suites are to be compared, not that.
//!
//! A project's script runs with `sh -eu` in a fresh workspace that holds `dl/` (its archives,
//! checked against the table) and whatever [`Deps`] laid out on the host. The same script runs
//! on the host and in the jail, as root and as the unprivileged user.

use super::npm_pins::TAPE_TREE;

/// Where an archive comes from. Each is fetched with the registry's ordinary client on the host,
/// before any run, into the cache; nothing is fetched while a project runs.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// `pip download --no-deps` of `name==version`: a wheel, or the sdist with `sdist`.
    Pypi {
        name: &'static str,
        version: &'static str,
        sdist: bool,
    },
    /// A `.crate` already in cargo's registry cache (the workspace's own build put it there).
    CargoCache { krate: &'static str },
    /// `npm pack name@version`.
    Npm {
        name: &'static str,
        version: &'static str,
    },
    /// `apt-get source --download-only package=version`, from a deb-src list derived from the
    /// machine's own apt sources; only the named file of the source package is used.
    Debian {
        package: &'static str,
        version: &'static str,
    },
}

/// One fetched file: its name in the cache and in the workspace's `dl/`, and its sha256.
#[derive(Debug, Clone, Copy)]
pub struct Archive {
    pub file: &'static str,
    pub sha256: &'static str,
    pub source: Source,
}

/// What the host lays out in the workspace before the script runs, besides `dl/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deps {
    /// Nothing: the script unpacks and installs from `dl/` itself.
    None,
    /// tape's pinned tree ([`TAPE_TREE`]) as tarballs in `dl/npm/`, with `dl/npm/index.txt`
    /// naming each tarball's package.
    TapeTree,
    /// A cargo home of the workspace's own, `cargo-home/`, holding a copy of the host's
    /// registry index and `.crate` cache (what the workspace's build left there): the script
    /// sets `CARGO_HOME` to it, so the unprivileged user (who cannot read root's) and the jail
    /// (where the home is read-only) resolve and unpack the crate's dependencies offline.
    CargoHome,
}

/// How a runner's closing lines are read into passed / failed counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// libtest: every `test result:` line, summed.
    Cargo,
    /// pytest's last summary line (`N passed, M failed, K errors`).
    Pytest,
    /// unittest's `Ran N tests` and `FAILED (failures=, errors=, skipped=)`.
    Unittest,
    /// TAP as tape prints it: `# pass N`, `# fail M`.
    Tap,
    /// Perl's test harness (`make test`): `Files=N, Tests=M` and `K/M subtests failed`.
    Prove,
    /// zlib's `make test`: one `*** zlib test OK ***` (or `FAILED`) per build it tests.
    Zlib,
}

/// One upstream project.
#[derive(Debug, Clone, Copy)]
pub struct Project {
    pub name: &'static str,
    pub language: &'static str,
    pub version: &'static str,
    /// What its suite exercises, for the report.
    pub exercises: &'static str,
    pub archives: &'static [Archive],
    pub deps: Deps,
    /// Build and test, run with `sh -eu -c` in the workspace.
    pub script: &'static str,
    pub counter: Counter,
    /// In the CI subset: its sources are on the machine after the workspace build.
    pub ci: bool,
}

const fn pypi(
    file: &'static str,
    name: &'static str,
    version: &'static str,
    sha256: &'static str,
) -> Archive {
    Archive {
        file,
        sha256,
        source: Source::Pypi {
            name,
            version,
            sdist: false,
        },
    }
}

const fn sdist(
    file: &'static str,
    name: &'static str,
    version: &'static str,
    sha256: &'static str,
) -> Archive {
    Archive {
        file,
        sha256,
        source: Source::Pypi {
            name,
            version,
            sdist: true,
        },
    }
}

const PYTEST: Archive = pypi(
    "pytest-9.2.0-py3-none-any.whl",
    "pytest",
    "9.2.0",
    "07acdcf88ec174f907dc01af70bf52d49b014bbab03faeeade31c96b18c2e588",
);
const PLUGGY: Archive = pypi(
    "pluggy-1.7.0-py3-none-any.whl",
    "pluggy",
    "1.7.0",
    "7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec",
);
const INICONFIG: Archive = pypi(
    "iniconfig-2.3.1-py3-none-any.whl",
    "iniconfig",
    "2.3.1",
    "9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7",
);
const PACKAGING: Archive = pypi(
    "packaging-26.4-py3-none-any.whl",
    "packaging",
    "26.4",
    "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2",
);
const PYGMENTS: Archive = pypi(
    "pygments-2.21.0-py3-none-any.whl",
    "pygments",
    "2.21.0",
    "2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9",
);
const FLIT_CORE_3: Archive = pypi(
    "flit_core-3.12.0-py3-none-any.whl",
    "flit_core",
    "3.12.0",
    "e7a0304069ea895172e3c7bb703292e992c5d1555dd1233ab7b5621b5b69e62c",
);
const FLIT_CORE_4: Archive = pypi(
    "flit_core-4.2.0-py3-none-any.whl",
    "flit_core",
    "4.2.0",
    "2bee22dc8ba89c2e35b4e1ad575e596aac945c85672dd8f3cad21b629036e044",
);
const SETUPTOOLS: Archive = pypi(
    "setuptools-84.2.1-py3-none-any.whl",
    "setuptools",
    "84.2.1",
    "ca140b45d5325a9478f880e351484f62fef15f336462e449ca0c03c873d589c2",
);

/// The projects, in the order they run.
pub const PROJECTS: &[Project] = &[
    Project {
        name: "strsim",
        language: "Rust",
        version: "0.11.1",
        exercises: "cargo build + libtest unit, integration and doc tests, offline",
        archives: &[Archive {
            file: "strsim-0.11.1.crate",
            sha256: "7da8b5736845d9f2fcb837ea5d9e2628564b3b043a70948a3f0b778838c5fb4f",
            source: Source::CargoCache {
                krate: "strsim-0.11.1",
            },
        }],
        deps: Deps::None,
        script: "tar --no-same-owner -xzf dl/strsim-0.11.1.crate\ncd strsim-0.11.1\nrm -f Cargo.lock\ncargo test --offline",
        counter: Counter::Cargo,
        ci: true,
    },
    Project {
        name: "rusty-fork",
        language: "Rust",
        version: "0.3.1",
        exercises: "tests re-run in forked child processes with timeouts (fork, exec, waitpid, kill, tempfile in /tmp)",
        archives: &[Archive {
            file: "rusty-fork-0.3.1.crate",
            sha256: "cc6bf79ff24e648f6da1f8d1f011e9cac26491b619e6b9280f2b47f1774e6ee2",
            source: Source::CargoCache {
                krate: "rusty-fork-0.3.1",
            },
        }],
        deps: Deps::CargoHome,
        script: "export CARGO_HOME=\"$PWD/cargo-home\"\ntar --no-same-owner -xzf dl/rusty-fork-0.3.1.crate\ncd rusty-fork-0.3.1\nrm -f Cargo.lock\ncargo test --offline",
        counter: Counter::Cargo,
        ci: true,
    },
    Project {
        name: "more-itertools",
        language: "Python",
        version: "11.2.1",
        exercises: "venv + offline pip editable install (flit_core backend), stdlib unittest suite",
        archives: &[
            sdist(
                "more_itertools-11.2.1.tar.gz",
                "more-itertools",
                "11.2.1",
                "cbf08fd0af284dc69718b9b76a8e6203df624d70209ea511e4219d350c856f63",
            ),
            FLIT_CORE_4,
        ],
        deps: Deps::None,
        script: "tar --no-same-owner -xzf dl/more_itertools-11.2.1.tar.gz\npython3 -m venv venv\n\
                 venv/bin/pip install --no-index --find-links dl --quiet -e ./more_itertools-11.2.1\n\
                 cd more_itertools-11.2.1\n../venv/bin/python -m unittest discover -s tests -t .",
        counter: Counter::Unittest,
        ci: false,
    },
    Project {
        name: "ptyprocess",
        language: "Python",
        version: "0.7.0",
        exercises: "pytest; programs spawned in pseudo-terminals (openpty, fork, setsid, TIOCSCTTY, signals)",
        archives: &[
            sdist(
                "ptyprocess-0.7.0.tar.gz",
                "ptyprocess",
                "0.7.0",
                "5c5d0a3b48ceee0b48485e0c26037c0acd7d29765ca3fbb5cb3831d347423220",
            ),
            FLIT_CORE_3,
            PYTEST,
            PLUGGY,
            INICONFIG,
            PACKAGING,
            PYGMENTS,
        ],
        deps: Deps::None,
        script: "tar --no-same-owner -xzf dl/ptyprocess-0.7.0.tar.gz\npython3 -m venv venv\n\
                 venv/bin/pip install --no-index --find-links dl --quiet pytest -e ./ptyprocess-0.7.0\n\
                 cd ptyprocess-0.7.0\n../venv/bin/python -m pytest -rfE tests",
        counter: Counter::Pytest,
        ci: false,
    },
    Project {
        name: "markupsafe",
        language: "Python + C",
        version: "3.0.4",
        exercises: "C extension compiled by gcc in an offline pip build (setuptools backend), pytest over the C and the Python implementation",
        archives: &[
            sdist(
                "markupsafe-3.0.4.tar.gz",
                "markupsafe",
                "3.0.4",
                "2e9ad7dd851bf45fab9f75cbff4cb493fee9979e8d8c7c9c3ee119022518edd6",
            ),
            SETUPTOOLS,
            PYTEST,
            PLUGGY,
            INICONFIG,
            PACKAGING,
            PYGMENTS,
        ],
        deps: Deps::None,
        script: "tar --no-same-owner -xzf dl/markupsafe-3.0.4.tar.gz\npython3 -m venv venv\n\
                 venv/bin/pip install --no-index --find-links dl --quiet pytest -e ./markupsafe-3.0.4\n\
                 venv/bin/python -c 'import markupsafe._speedups'\n\
                 cd markupsafe-3.0.4\n../venv/bin/python -m pytest -rfE tests",
        counter: Counter::Pytest,
        ci: false,
    },
    Project {
        name: "minimist",
        language: "Node",
        version: "1.2.8",
        exercises: "the published package's own tape tests, with tape's pinned tree of 127 packages in node_modules",
        archives: &[],
        deps: Deps::TapeTree,
        script: "while read -r name file; do mkdir -p \"node_modules/$name\"; \
                 tar --no-same-owner -xzf \"dl/npm/$file\" -C \"node_modules/$name\" --strip-components=1; done < dl/npm/index.txt\n\
                 mkdir minimist\ntar --no-same-owner -xzf dl/npm/minimist-1.2.8.tgz -C minimist --strip-components=1\n\
                 cd minimist\nnode ../node_modules/tape/bin/tape 'test/*.js'",
        counter: Counter::Tap,
        ci: false,
    },
    Project {
        name: "zlib",
        language: "C",
        version: "1.2.13 (Debian 1:1.2.13.dfsg-1)",
        exercises: "./configure, make with gcc, make test: static, shared and 64-bit-offset builds",
        archives: &[Archive {
            file: "zlib_1.2.13.dfsg.orig.tar.bz2",
            sha256: "71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1",
            source: Source::Debian {
                package: "zlib",
                version: "1:1.2.13.dfsg-1",
            },
        }],
        deps: Deps::None,
        script: "tar --no-same-owner -xjf dl/zlib_1.2.13.dfsg.orig.tar.bz2\ncd zlib-1.2.13.dfsg\n./configure\nmake -j2 test",
        counter: Counter::Zlib,
        ci: false,
    },
    Project {
        name: "try-tiny",
        language: "Perl",
        version: "0.31 (Debian 0.31-2)",
        exercises: "perl Makefile.PL, make, make test: ExtUtils::MakeMaker and Test::Harness over 11 test programs",
        archives: &[Archive {
            file: "libtry-tiny-perl_0.31.orig.tar.gz",
            sha256: "3300d31d8a4075b26d8f46ce864a1d913e0e8467ceeba6655d5d2b2e206c11be",
            source: Source::Debian {
                package: "libtry-tiny-perl",
                version: "0.31-2",
            },
        }],
        deps: Deps::None,
        script: "tar --no-same-owner -xzf dl/libtry-tiny-perl_0.31.orig.tar.gz\ncd Try-Tiny-0.31\nperl Makefile.PL\nmake\nmake test",
        counter: Counter::Prove,
        ci: false,
    },
];

/// One file a project needs, as the fetch and the workspace see it.
#[derive(Debug, Clone)]
pub struct Needed {
    pub file: String,
    pub sha256: &'static str,
    pub source: Source,
}

/// The archives a project needs, its dependency tree's included.
pub fn needed(project: &Project) -> Vec<Needed> {
    let mut all: Vec<Needed> = project
        .archives
        .iter()
        .map(|a| Needed {
            file: a.file.to_owned(),
            sha256: a.sha256,
            source: a.source,
        })
        .collect();
    if project.deps == Deps::TapeTree {
        all.extend(TAPE_TREE.iter().map(|&(name, version, sha256)| Needed {
            file: npm_file(name, version),
            sha256,
            source: Source::Npm { name, version },
        }));
    }
    all
}

/// The file `npm pack name@version` writes: the scope's `@` dropped and its `/` made `-`.
pub fn npm_file(name: &str, version: &str) -> String {
    format!(
        "{}-{version}.tgz",
        name.trim_start_matches('@').replace('/', "-")
    )
}
