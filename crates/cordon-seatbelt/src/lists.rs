//! The fixed lists a profile allows, each entry with the reason it is there. The generator writes
//! every reason into the profile as a comment above its entries, so a reviewer reads the list and
//! its justification in one place, and a snapshot diff shows both.
//!
//! The rule for adding an entry: name a common program that fails without it, and say what it
//! exposes. An entry nobody can justify goes.

/// A `sysctl` name, exact or by prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sysctl {
    /// `(sysctl-name "…")`.
    Name(&'static str),
    /// `(sysctl-name-prefix "…")`.
    Prefix(&'static str),
}

/// Entries allowed for one reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reasoned<T: 'static> {
    /// Why they are allowed: what fails without them, and what they expose.
    pub why: &'static str,
    /// The entries.
    pub entries: &'static [T],
}

/// `sysctl-read`: the kernel values programs read to size themselves and to identify the
/// machine. Nothing here is a secret of the user; process lists (`kern.proc.*`) and boot
/// arguments are left out on purpose.
pub const SYSCTL_READ: &[Reasoned<Sysctl>] = &[
    Reasoned {
        why: "CPU counts: thread pools size themselves by them (Rust's available_parallelism, Go's GOMAXPROCS, Node's os.cpus, make -j, ninja)",
        entries: &[
            Sysctl::Name("hw.ncpu"),
            Sysctl::Name("hw.activecpu"),
            Sysctl::Name("hw.logicalcpu"),
            Sysctl::Name("hw.logicalcpu_max"),
            Sysctl::Name("hw.physicalcpu"),
            Sysctl::Name("hw.physicalcpu_max"),
            Sysctl::Name("hw.nperflevels"),
            Sysctl::Prefix("hw.perflevel"),
        ],
    },
    Reasoned {
        why: "memory, page and cache sizes: allocators and garbage collectors size heaps and arenas by them (jemalloc, Go, the JVM, V8)",
        entries: &[
            Sysctl::Name("hw.memsize"),
            Sysctl::Name("hw.pagesize"),
            Sysctl::Name("hw.pagesize_compat"),
            Sysctl::Name("hw.cachelinesize"),
            Sysctl::Name("hw.l1dcachesize"),
            Sysctl::Name("hw.l1icachesize"),
            Sysctl::Name("hw.l2cachesize"),
            Sysctl::Name("hw.l3cachesize"),
        ],
    },
    Reasoned {
        why: "CPU identity and features: libSystem picks optimized routines, Rust's std_detect and compilers targeting the native CPU probe features, tools detect Rosetta (sysctl.proc_translated)",
        entries: &[
            Sysctl::Name("hw.machine"),
            Sysctl::Name("hw.model"),
            Sysctl::Name("hw.cputype"),
            Sysctl::Name("hw.cpusubtype"),
            Sysctl::Name("hw.cpufamily"),
            Sysctl::Name("hw.byteorder"),
            Sysctl::Name("sysctl.proc_cputype"),
            Sysctl::Name("sysctl.proc_translated"),
            Sysctl::Prefix("hw.optional."),
            Sysctl::Prefix("machdep.cpu."),
        ],
    },
    Reasoned {
        why: "uname(3) and OS version checks (uname -a, Python's platform, build scripts choosing an SDK); libSystem reads kern.osvariant_status at start",
        entries: &[
            Sysctl::Name("kern.ostype"),
            Sysctl::Name("kern.osrelease"),
            Sysctl::Name("kern.osversion"),
            Sysctl::Name("kern.osproductversion"),
            Sysctl::Name("kern.version"),
            Sysctl::Name("kern.hostname"),
            Sysctl::Name("kern.osvariant_status"),
        ],
    },
    Reasoned {
        why: "limits programs fit themselves to: argument space (xargs, shells), the descriptor ceiling runtimes raise their limit to (Go, the JVM), the main thread's stack (Go, the JVM)",
        entries: &[
            Sysctl::Name("kern.argmax"),
            Sysctl::Name("kern.maxfiles"),
            Sysctl::Name("kern.maxfilesperproc"),
            Sysctl::Name("kern.usrstack64"),
        ],
    },
    Reasoned {
        why: "the load average: getloadavg(3) for load-aware job control (make -l)",
        entries: &[Sysctl::Name("vm.loadavg")],
    },
];

/// `mach-lookup` in every profile: the system services ordinary command-line programs cannot
/// start or work without. Logging, analytics, notifications, the pasteboard, Launch Services and
/// Apple Events are left out: a jailed command neither needs nor should reach them.
pub const MACH_LOOKUP: &[Reasoned<&str>] = &[
    Reasoned {
        why: "user and group lookups (getpwuid, getgrgid): whoami, id, git, ssh, Python's pwd, shells expanding ~",
        entries: &["com.apple.system.opendirectoryd.libinfo"],
    },
    Reasoned {
        why: "group membership checks behind getgrouplist and access decisions (id, file permission checks in libSystem)",
        entries: &["com.apple.system.opendirectoryd.membership"],
    },
    Reasoned {
        why: "confstr(_CS_DARWIN_USER_TEMP_DIR / _CACHE_DIR): tools that ignore TMPDIR ask it for their per-user directory (writes there stay denied)",
        entries: &["com.apple.bsd.dirhelper"],
    },
];

/// `mach-lookup` added when the policy allows the network: name resolution and certificate
/// checks go through system daemons on macOS, not through files.
pub const MACH_LOOKUP_NETWORK: &[Reasoned<&str>] = &[
    Reasoned {
        why: "the resolver's configuration and proxy settings (getaddrinfo, curl, git, Go's net)",
        entries: &[
            "com.apple.SystemConfiguration.DNSConfiguration",
            "com.apple.SystemConfiguration.configd",
        ],
    },
    Reasoned {
        why: "TLS certificate evaluation through Security.framework (curl, git over https, Go's crypto/x509, URLSession)",
        entries: &[
            "com.apple.SecurityServer",
            "com.apple.trustd.agent",
            "com.apple.ocspd",
        ],
    },
    Reasoned {
        why: "Network.framework connections (URLSession, swift package fetches)",
        entries: &["com.apple.networkd"],
    },
];

/// The Unix socket of the system resolver, reachable only when the network is allowed.
pub const RESOLVER_SOCKET: &str = "/private/var/run/mDNSResponder";

/// Character devices every jail may read and write.
pub const CHARACTER_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Of [`CHARACTER_DEVICES`], those that also take `ioctl` (isatty checks and the like).
/// `/dev/tty` does not: an `ioctl` on the controlling terminal could push keystrokes into the
/// caller's shell (`TIOCSTI`).
pub const IOCTL_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"];

/// What the minimal posture adds to the plan's vetted trees on macOS: the trees every program
/// needs to start there. (The plan's own list is written for Linux; `/usr` and `/bin` are in both.)
pub const MINIMAL_SYSTEM_READ: &[Reasoned<&str>] = &[
    Reasoned {
        why: "libSystem, the frameworks and the dyld shared cache (reached through /System/Cryptexes on macOS 13 and later): every program maps them at start",
        entries: &["/System", "/usr/lib", "/Library/Apple"],
    },
    Reasoned {
        why: "the dyld shared cache of macOS 12 and earlier",
        entries: &["/private/var/db/dyld"],
    },
    Reasoned {
        why: "the system's programs and their helpers (sh, env, git's wrapper, xcrun)",
        entries: &["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/libexec"],
    },
    Reasoned {
        why: "/bin/sh runs the shell that /private/var/select/sh points to",
        entries: &["/private/var/select"],
    },
    Reasoned {
        why: "time zones, terminfo and locales (date, less, Python's time)",
        entries: &["/usr/share", "/private/var/db/timezone"],
    },
    Reasoned {
        why: "the system's name-service files (getpwnam's fallback, getservbyname, /etc/hosts)",
        entries: &[
            "/private/etc/passwd",
            "/private/etc/group",
            "/private/etc/hosts",
            "/private/etc/services",
            "/private/etc/protocols",
            "/private/etc/localtime",
        ],
    },
];
