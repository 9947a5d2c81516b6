//! The wrapper table: each launcher's options, the ones that make it run nothing, and how it
//! finds the command it runs.

use crate::options::OptSpec;

/// How a wrapper finds what it runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Plain,
    Env,
    Sudo,
    Su,
    Xargs,
    Flock,
    Watch,
    Script,
}

/// One wrapper.
pub(super) struct Wrapper {
    /// Program names.
    pub(super) names: &'static [&'static str],
    /// Its options.
    pub(super) spec: OptSpec,
    /// Options that make it run no command.
    pub(super) nothing: &'static [&'static str],
    /// Operands before the command (timeout's duration, taskset's mask, chroot's directory).
    pub(super) skip: usize,
    /// `NAME=VALUE` words may precede the command.
    pub(super) assignments: bool,
    /// How it finds the command.
    pub(super) kind: Kind,
}

const fn spec(
    short_value: &'static str,
    short_flag: &'static str,
    long_value: &'static [&'static str],
    long_flag: &'static [&'static str],
) -> OptSpec {
    OptSpec {
        short_value,
        short_flag,
        long_value,
        long_flag,
        numeric: false,
    }
}

const HELP: &[&str] = &["help", "version"];

const fn plain(names: &'static [&'static str], spec: OptSpec) -> Wrapper {
    Wrapper {
        names,
        spec,
        nothing: HELP,
        skip: 0,
        assignments: false,
        kind: Kind::Plain,
    }
}

pub(super) const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        assignments: true,
        kind: Kind::Env,
        nothing: &["help", "version", "list-signal-handling"],
        ..plain(
            &["env"],
            spec(
                "uCS",
                "i0v",
                &[
                    "unset",
                    "chdir",
                    "split-string",
                    "default-signal",
                    "ignore-signal",
                    "block-signal",
                ],
                &[
                    "ignore-environment",
                    "null",
                    "debug",
                    "list-signal-handling",
                    "help",
                    "version",
                ],
            ),
        )
    },
    Wrapper {
        spec: OptSpec {
            numeric: true,
            ..spec("n", "", &["adjustment"], HELP)
        },
        ..plain(&["nice"], OptSpec::DEFAULT)
    },
    plain(
        &["nohup", "builtin", "noglob", "nocorrect", "catchsegv"],
        spec("", "", &[], HELP),
    ),
    Wrapper {
        skip: 1,
        ..plain(
            &["timeout", "gtimeout"],
            spec(
                "sk",
                "v",
                &["signal", "kill-after"],
                &[
                    "foreground",
                    "preserve-status",
                    "verbose",
                    "help",
                    "version",
                ],
            ),
        )
    },
    plain(
        &["stdbuf"],
        spec("ioe", "", &["input", "output", "error"], HELP),
    ),
    plain(
        &["time"],
        spec(
            "fo",
            "pavq",
            &["format", "output"],
            &[
                "portability",
                "append",
                "verbose",
                "quiet",
                "help",
                "version",
            ],
        ),
    ),
    plain(
        &["setsid"],
        spec("", "cfw", &[], &["ctty", "fork", "wait", "help", "version"]),
    ),
    Wrapper {
        nothing: &["p", "P", "u", "pid", "pgid", "uid", "help", "version"],
        ..plain(
            &["ionice"],
            spec(
                "cnpPu",
                "th",
                &["class", "classdata", "pid", "pgid", "uid"],
                &["ignore", "help", "version"],
            ),
        )
    },
    Wrapper {
        skip: 1,
        nothing: &["p", "pid", "help", "version"],
        ..plain(
            &["taskset"],
            spec(
                "",
                "acphV",
                &[],
                &["all-tasks", "cpu-list", "pid", "help", "version"],
            ),
        )
    },
    Wrapper {
        skip: 1,
        nothing: &["p", "m", "pid", "max", "help", "version"],
        ..plain(
            &["chrt"],
            spec(
                "TPD",
                "abdfiormpRv",
                &["sched-runtime", "sched-period", "sched-deadline"],
                &[
                    "all-tasks",
                    "batch",
                    "deadline",
                    "fifo",
                    "idle",
                    "other",
                    "rr",
                    "max",
                    "pid",
                    "reset-on-fork",
                    "verbose",
                    "help",
                    "version",
                ],
            ),
        )
    },
    Wrapper {
        assignments: true,
        kind: Kind::Sudo,
        nothing: &[
            "e",
            "K",
            "l",
            "V",
            "v",
            "h",
            "list",
            "validate",
            "version",
            "help",
            "edit",
            "remove-timestamp",
        ],
        ..plain(
            &["sudo"],
            spec(
                "CDgpRrTtUuc",
                "AbBEeHiKklnPSsVvh",
                &[
                    "chdir",
                    "close-from",
                    "group",
                    "host",
                    "prompt",
                    "chroot",
                    "role",
                    "type",
                    "command-timeout",
                    "other-user",
                    "user",
                    "login-class",
                ],
                &[
                    "askpass",
                    "background",
                    "bell",
                    "preserve-env",
                    "edit",
                    "help",
                    "set-home",
                    "login",
                    "reset-timestamp",
                    "remove-timestamp",
                    "list",
                    "non-interactive",
                    "preserve-groups",
                    "stdin",
                    "shell",
                    "validate",
                    "version",
                ],
            ),
        )
    },
    Wrapper {
        nothing: &["s", "C", "L"],
        ..plain(&["doas"], spec("uC", "nsL", &[], &[]))
    },
    Wrapper {
        kind: Kind::Su,
        ..plain(
            &["su", "runuser"],
            spec(
                "cgGsuwZ",
                "flmpPT",
                &[
                    "command",
                    "session-command",
                    "group",
                    "supp-group",
                    "shell",
                    "user",
                    "whitelist-environment",
                ],
                &[
                    "fast",
                    "login",
                    "preserve-environment",
                    "pty",
                    "no-pty",
                    "help",
                    "version",
                ],
            ),
        )
    },
    Wrapper {
        kind: Kind::Xargs,
        nothing: &["show-limits", "help", "version"],
        ..plain(
            &["xargs"],
            spec(
                "adEILnPs",
                "0oprtx",
                &[
                    "arg-file",
                    "delimiter",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ],
                &[
                    "null",
                    "interactive",
                    "no-run-if-empty",
                    "open-tty",
                    "verbose",
                    "exit",
                    "show-limits",
                    "help",
                    "version",
                    "replace",
                    "eof",
                    "max-lines",
                ],
            ),
        )
    },
    Wrapper {
        nothing: &["v", "V"],
        ..plain(&["command"], spec("", "pvV", &[], &[]))
    },
    plain(&["exec"], spec("a", "cl", &[], &[])),
    Wrapper {
        nothing: &["list", "list-full", "install", "help"],
        ..plain(
            &["busybox", "toybox"],
            spec("", "", &[], &["list", "list-full", "install", "help"]),
        )
    },
    Wrapper {
        skip: 1,
        ..plain(
            &["chroot"],
            spec(
                "",
                "",
                &["userspec", "groups"],
                &["skip-chdir", "help", "version"],
            ),
        )
    },
    Wrapper {
        kind: Kind::Flock,
        ..plain(
            &["flock"],
            spec(
                "cwEt",
                "sxnuoFhV",
                &["command", "timeout", "wait", "conflict-exit-code"],
                &[
                    "shared",
                    "exclusive",
                    "nonblock",
                    "nb",
                    "unlock",
                    "close",
                    "no-fork",
                    "verbose",
                    "help",
                    "version",
                ],
            ),
        )
    },
    Wrapper {
        kind: Kind::Watch,
        ..plain(
            &["watch"],
            spec(
                "nq",
                "dgtbecxpwrCh",
                &["interval", "equexit"],
                &[
                    "differences",
                    "chgexit",
                    "no-title",
                    "beep",
                    "errexit",
                    "color",
                    "no-color",
                    "exec",
                    "precise",
                    "no-wrap",
                    "no-rerun",
                    "help",
                    "version",
                ],
            ),
        )
    },
    Wrapper {
        kind: Kind::Script,
        ..plain(
            &["script"],
            spec(
                "cEIOTBmot",
                "aefqh",
                &[
                    "command",
                    "echo",
                    "log-in",
                    "log-out",
                    "log-timing",
                    "log-io",
                    "logging-format",
                    "output-limit",
                ],
                &[
                    "append", "return", "flush", "force", "quiet", "help", "version",
                ],
            ),
        )
    },
    Wrapper {
        nothing: &["p", "attach"],
        ..plain(
            &["strace", "ltrace"],
            spec(
                "abeEIoOpPsSuUX",
                "cCdDfFhiknqrtTvVwxyYz",
                &[],
                &["help", "version"],
            ),
        )
    },
    plain(&["unbuffer"], spec("", "p", &[], &[])),
    plain(
        &["npx", "pnpx", "bunx"],
        spec(
            "p",
            "yq",
            &["package", "call", "node-options"],
            &["yes", "no", "quiet", "ignore-existing", "help", "version"],
        ),
    ),
    plain(
        &["fakeroot"],
        spec(
            "lsib",
            "uh",
            &["lib", "faked"],
            &["unknown-is-real", "help", "version"],
        ),
    ),
    plain(
        &["pkexec"],
        spec(
            "",
            "",
            &["user"],
            &["keep-cwd", "disable-internal-agent", "help", "version"],
        ),
    ),
    plain(&["proxychains", "proxychains4"], spec("f", "q", &[], &[])),
    plain(
        &["torsocks", "tsocks"],
        spec("uPa", "diq", &[], &["shell", "help", "version"]),
    ),
    plain(
        &["dbus-run-session"],
        spec("", "", &["config-file", "dbus-daemon"], HELP),
    ),
    plain(&["caffeinate"], spec("tw", "dimsu", &[], &[])),
    plain(
        &["systemd-run"],
        spec(
            "pEuMHs",
            "tPGqdr",
            &[
                "unit",
                "property",
                "setenv",
                "machine",
                "host",
                "description",
                "slice",
                "working-directory",
                "uid",
                "gid",
                "nice",
            ],
            &[
                "user",
                "system",
                "scope",
                "pty",
                "pipe",
                "quiet",
                "wait",
                "collect",
                "same-dir",
                "no-block",
                "remain-after-exit",
                "shell",
            ],
        ),
    ),
    plain(
        &["unshare"],
        spec(
            "SGRwl",
            "mUinpuCTrfc",
            &["setuid", "setgid", "root", "wd", "load-interp"],
            &[
                "mount",
                "uts",
                "ipc",
                "net",
                "pid",
                "user",
                "cgroup",
                "time",
                "fork",
                "map-root-user",
                "map-current-user",
                "kill-child",
                "help",
                "version",
            ],
        ),
    ),
    plain(
        &["nsenter"],
        spec(
            "tSGrw",
            "amUinpuCTFZ",
            &["target", "setuid", "setgid", "root", "wd"],
            &[
                "all",
                "mount",
                "uts",
                "ipc",
                "net",
                "pid",
                "user",
                "cgroup",
                "time",
                "no-fork",
                "preserve-credentials",
                "help",
                "version",
            ],
        ),
    ),
    Wrapper {
        nothing: &["p", "pid"],
        ..plain(
            &["prlimit"],
            spec(
                "po",
                "",
                &["pid", "output"],
                &["noheadings", "raw", "verbose", "help", "version"],
            ),
        )
    },
    plain(
        &[
            "firejail",
            "valgrind",
            "numactl",
            "ccache",
            "sccache",
            "nix-shell-run",
        ],
        spec("", "", &[], &[]),
    ),
];

impl OptSpec {
    const DEFAULT: OptSpec = spec("", "", &[], &[]);
}
