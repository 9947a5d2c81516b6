//! Where a word points, read lexically: `~`, `$HOME`, `.` and `..`, the working directory a
//! script `cd`'d to, and globs. The floor never touches the filesystem to judge a command; a
//! symlink can hide a target from it, and the jail is what stops that.

/// Top-level directories whose recursive deletion the floor refuses. macOS names are included:
/// the floor judges commands the same on every platform.
const TOP_LEVEL: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "media",
    "mnt",
    "nix",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "snap",
    "srv",
    "sys",
    "tmp",
    "usr",
    "var",
    "Applications",
    "Library",
    "System",
    "Users",
    "Volumes",
    "cores",
    "private",
];

/// System directories one level down that are as vital as a top-level one.
const SECOND_LEVEL: &[&[&str]] = &[
    &["usr", "bin"],
    &["usr", "sbin"],
    &["usr", "lib"],
    &["usr", "lib32"],
    &["usr", "lib64"],
    &["usr", "libexec"],
    &["usr", "share"],
    &["usr", "include"],
    &["var", "lib"],
    &["private", "etc"],
    &["private", "var"],
];

/// Top-level directories whose contents are scratch: `rm -rf /tmp/*` is housekeeping.
const SCRATCH: &[&str] = &["tmp"];

/// System trees a recursive permission change must not touch (besides `/` itself).
const PERMISSION_TREES: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "proc", "root", "sbin",
    "sys", "usr", "var", "System", "Library", "Users", "private",
];

/// What a path is relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Base {
    /// `/`.
    Root,
    /// The home directory, when the floor does not know where it is.
    Home,
    /// Somebody's home directory (`~name`).
    OtherHome,
    /// Above a home directory whose location is unknown (`~/..`).
    AboveHome,
}

/// A path resolved lexically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub base: Base,
    pub comps: Vec<String>,
}

impl Resolved {
    pub fn root() -> Resolved {
        Resolved {
            base: Base::Root,
            comps: Vec::new(),
        }
    }

    /// `/a/b`, `~/a`, for messages.
    pub fn display(&self) -> String {
        let prefix = match self.base {
            Base::Root => "",
            Base::Home => "~",
            Base::OtherHome => "~user",
            Base::AboveHome => "~/..",
        };
        if self.comps.is_empty() {
            return if prefix.is_empty() {
                "/".into()
            } else {
                prefix.into()
            };
        }
        format!("{prefix}/{}", self.comps.join("/"))
    }

    fn is(&self, comps: &[&str]) -> bool {
        self.base == Base::Root
            && self
                .comps
                .iter()
                .map(String::as_str)
                .eq(comps.iter().copied())
    }
}

/// The facts a path is resolved against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PathCtx<'a> {
    /// The home directory's components, when known.
    pub home: Option<&'a [String]>,
    /// The working directory, when a `cd` in the script made it known.
    pub cwd: Option<&'a Resolved>,
}

/// Splits an absolute host path into components.
pub(crate) fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_owned)
        .collect()
}

/// Resolves one reading of a word. `None` when it depends on something unknown (a variable, a
/// substitution, a relative path from an unknown directory).
pub(crate) fn resolve(reading: &str, ctx: PathCtx<'_>) -> Option<Resolved> {
    let (mut resolved, rest) = if reading == "~" || reading.starts_with("~/") {
        (home(ctx), &reading[1..])
    } else if reading == "~+" || reading.starts_with("~+/") {
        (ctx.cwd?.clone(), &reading[2..])
    } else if reading.starts_with("~-") {
        return None;
    } else if let Some(user) = reading.strip_prefix('~') {
        let end = user.find('/').unwrap_or(user.len());
        (
            Resolved {
                base: Base::OtherHome,
                comps: Vec::new(),
            },
            &user[end..],
        )
    } else if let Some(rest) = strip_var(reading, "HOME") {
        (home(ctx), rest)
    } else if reading.starts_with('/') {
        (Resolved::root(), reading)
    } else if reading.starts_with('$') || reading.is_empty() {
        return None;
    } else {
        (ctx.cwd?.clone(), reading)
    };
    for comp in rest.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                if resolved.comps.pop().is_none() {
                    resolved.base = match resolved.base {
                        Base::Root => Base::Root,
                        _ => Base::AboveHome,
                    };
                }
            }
            c => resolved.comps.push(c.to_owned()),
        }
    }
    Some(resolved)
}

/// `$NAME` or `${NAME}` followed by `/` or the end: the rest.
fn strip_var<'a>(reading: &'a str, name: &str) -> Option<&'a str> {
    let rest = reading.strip_prefix('$')?.strip_prefix(name).or_else(|| {
        reading
            .strip_prefix("${")?
            .strip_prefix(name)?
            .strip_prefix('}')
    })?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

fn home(ctx: PathCtx<'_>) -> Resolved {
    match ctx.home {
        Some(comps) => Resolved {
            base: Base::Root,
            comps: comps.to_vec(),
        },
        None => Resolved {
            base: Base::Home,
            comps: Vec::new(),
        },
    }
}

/// Why recursively deleting `r` is refused, if it is.
pub(crate) fn deletion_danger(r: &Resolved, ctx: PathCtx<'_>) -> Option<String> {
    let last = r.comps.last().map(String::as_str);
    let parent = Resolved {
        base: r.base.clone(),
        comps: r.comps[..r.comps.len().saturating_sub(1)].to_vec(),
    };
    match r.base {
        Base::AboveHome => return Some("it is above the home directory".into()),
        Base::Home | Base::OtherHome => {
            return match last {
                None => Some("it is a home directory".into()),
                Some(l) if r.comps.len() == 1 && wildcard_only(l) => {
                    Some("it is everything in a home directory".into())
                }
                _ => None,
            };
        }
        Base::Root => {}
    }
    if r.comps.is_empty() {
        return Some("it is the root directory".into());
    }
    if let Some(home) = ctx.home {
        if r.comps.as_slice() == home {
            return Some("it is the home directory".into());
        }
        if home.starts_with(&r.comps) {
            return Some("it is an ancestor of the home directory".into());
        }
        if parent.comps.as_slice() == home && last.is_some_and(wildcard_only) {
            return Some("it is everything in the home directory".into());
        }
    }
    if vital(r) {
        return Some(format!("{} is a top-level system directory", r.display()));
    }
    let last = last.unwrap_or_default();
    if has_glob(last) {
        if parent.comps.is_empty() {
            if wildcard_only(last) || TOP_LEVEL.iter().any(|t| glob_match(last, t)) {
                return Some(format!(
                    "`{}` matches top-level system directories",
                    r.display()
                ));
            }
        } else if vital(&parent)
            && wildcard_only(last)
            && !(parent.comps.len() == 1 && SCRATCH.contains(&parent.comps[0].as_str()))
        {
            return Some(format!(
                "it is everything in the system directory {}",
                parent.display()
            ));
        }
    }
    None
}

fn vital(r: &Resolved) -> bool {
    r.base == Base::Root
        && match r.comps.as_slice() {
            [one] => TOP_LEVEL.contains(&one.as_str()),
            _ => SECOND_LEVEL.iter().any(|s| r.is(s)),
        }
}

/// Why a recursive permission change of `r` is refused, if it is.
pub(crate) fn permission_danger(r: &Resolved) -> Option<String> {
    if r.base != Base::Root {
        return None;
    }
    match r.comps.as_slice() {
        [] => Some("it is the root directory".into()),
        [one] if PERMISSION_TREES.contains(&one.as_str()) => {
            Some(format!("{} is a system tree", r.display()))
        }
        [one] if has_glob(one) => Some(format!("`{}` matches system trees", r.display())),
        [one, two] if PERMISSION_TREES.contains(&one.as_str()) && wildcard_only(two) => {
            Some(format!("it is everything in the system tree /{one}"))
        }
        _ => None,
    }
}

/// True for a block device, a partition, or a memory device.
pub(crate) fn is_block_device(r: &Resolved) -> bool {
    if r.base != Base::Root {
        return false;
    }
    let comps: Vec<&str> = r.comps.iter().map(String::as_str).collect();
    let ["dev", rest @ ..] = comps.as_slice() else {
        return false;
    };
    match rest {
        [] => false,
        [name] => device_name(name),
        // /dev/mapper/x, /dev/disk/by-id/x, LVM's /dev/VG/LV; but not descriptors, terminals or
        // shared memory, nor bash's `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT`: bash opens a
        // socket for them and never the file (no kernel has a device there).
        [dir, ..] => !matches!(
            *dir,
            "fd" | "pts"
                | "tcp"
                | "udp"
                | "shm"
                | "mqueue"
                | "hugepages"
                | "snd"
                | "dri"
                | "input"
                | "net"
                | "usb"
                | "bus"
                | "char"
                | "cpu"
                | "vfio"
                | "serial"
                | "v4l"
                | "dma_heap"
        ),
    }
}

fn device_name(name: &str) -> bool {
    fn letters_then_digits(rest: &str) -> bool {
        let letters = rest.chars().take_while(char::is_ascii_lowercase).count();
        letters > 0
            && rest[letters..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == 'p')
    }
    fn starts_with_digit(rest: &str) -> bool {
        rest.chars().next().is_some_and(|c| c.is_ascii_digit())
    }
    if matches!(name, "mem" | "kmem" | "port" | "nvram" | "root") {
        return true;
    }
    for prefix in ["sd", "hd", "vd", "xvd"] {
        if let Some(rest) = name.strip_prefix(prefix)
            && letters_then_digits(rest)
        {
            return true;
        }
    }
    for prefix in [
        "nvme", "mmcblk", "loop", "dm-", "md", "sr", "scd", "fd", "nbd", "rbd", "zram", "pmem",
        "ram", "mtdblock", "mtd", "sg", "st", "nst", "bcache", "drbd", "zd", "disk", "rdisk",
        "ubiblock",
    ] {
        if let Some(rest) = name.strip_prefix(prefix)
            && starts_with_digit(rest)
        {
            return true;
        }
    }
    false
}

/// True when the component has glob characters.
pub(crate) fn has_glob(comp: &str) -> bool {
    comp.contains(['*', '?', '['])
}

/// True for a component that matches (nearly) every name: `*`, `.*`, `*.*`, `.[!.]*`, `.??*`.
pub(crate) fn wildcard_only(comp: &str) -> bool {
    let mut without_classes = String::new();
    let mut chars = comp.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' {
            for d in chars.by_ref() {
                if d == ']' {
                    break;
                }
            }
        } else {
            without_classes.push(c);
        }
    }
    comp.contains('*')
        && without_classes
            .chars()
            .all(|c| matches!(c, '*' | '?' | '.'))
}

/// Shell glob matching of one component (`*`, `?`, `[…]`). An unterminated `[` is literal.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&p, &n)
}

fn glob_at(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| glob_at(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && glob_at(&p[1..], &n[1..]),
        Some('[') => match class(p) {
            Some((matches, len)) => !n.is_empty() && matches(n[0]) && glob_at(&p[len..], &n[1..]),
            None => n.first() == Some(&'[') && glob_at(&p[1..], &n[1..]),
        },
        Some(c) => n.first() == Some(c) && glob_at(&p[1..], &n[1..]),
    }
}

type ClassMatch = (Box<dyn Fn(char) -> bool>, usize);

/// A bracket expression at the start of `p`: its matcher and its length.
fn class(p: &[char]) -> Option<ClassMatch> {
    let mut i = 1;
    let negated = matches!(p.get(1), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let start = i;
    // A `]` first in the class is literal.
    if p.get(i) == Some(&']') {
        i += 1;
    }
    while p.get(i).is_some_and(|c| *c != ']') {
        i += 1;
    }
    if i >= p.len() {
        return None;
    }
    let items: Vec<char> = p[start..i].to_vec();
    let matcher = move |c: char| {
        let mut j = 0;
        let mut hit = false;
        while j < items.len() {
            if j + 2 < items.len() && items[j + 1] == '-' {
                hit |= items[j] <= c && c <= items[j + 2];
                j += 3;
            } else {
                hit |= items[j] == c;
                j += 1;
            }
        }
        hit != negated
    };
    Some((Box::new(matcher), i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx_home() -> Vec<String> {
        components("/home/u")
    }

    fn danger(s: &str) -> Option<String> {
        let home = ctx_home();
        let ctx = PathCtx {
            home: Some(&home),
            cwd: None,
        };
        deletion_danger(&resolve(s, ctx)?, ctx)
    }

    #[test]
    fn roots_homes_and_system_directories() {
        for s in [
            "/",
            "//",
            "/.",
            "/./",
            "/usr/..",
            "/tmp/../",
            "~",
            "~/",
            "$HOME",
            "${HOME}/",
            "/home/u",
            "/home/u/",
            "/home",
            "/usr",
            "/etc/",
            "/*",
            "/.*",
            "~/*",
            "$HOME/.*",
            "/usr/*",
            "/u*",
            "~/..",
            "/home/u/proj/../..",
            "~root",
            "/usr/lib",
            "/var/lib/",
            "/Users",
        ] {
            assert!(danger(s).is_some(), "{s} should be refused");
        }
    }

    #[test]
    fn everything_else_is_not() {
        for s in [
            "./build",
            "build",
            "/tmp/x",
            "/tmp/*",
            "~/proj",
            "~/.cache/pip",
            "/home/u/proj",
            "/usr/local/go",
            "/*.log",
            "$DIR",
            "$HOME_DIR",
            "/var/tmp/cache",
            "~/*/node_modules",
            "~/*.log",
            "/opt/tool/*",
            "/home/u/x/*",
        ] {
            assert_eq!(danger(s), None, "{s} should be allowed");
        }
    }

    #[test]
    fn relative_paths_resolve_against_a_known_cwd() {
        let cwd = Resolved::root();
        let ctx = PathCtx {
            home: None,
            cwd: Some(&cwd),
        };
        let r = resolve("*", ctx).unwrap_or_else(Resolved::root);
        assert!(deletion_danger(&r, ctx).is_some());
        let r = resolve("./tmp/x", ctx).unwrap_or_else(Resolved::root);
        assert!(deletion_danger(&r, ctx).is_none());
        let no_cwd = PathCtx {
            home: None,
            cwd: None,
        };
        assert_eq!(resolve("*", no_cwd), None);
    }

    #[test]
    fn block_devices() {
        let dev = |s: &str| {
            resolve(
                s,
                PathCtx {
                    home: None,
                    cwd: None,
                },
            )
            .is_some_and(|r| is_block_device(&r))
        };
        for s in [
            "/dev/sda",
            "/dev/sdb1",
            "/dev/nvme0n1",
            "/dev/nvme0n1p2",
            "/dev/mmcblk0",
            "/dev/loop0",
            "/dev/dm-0",
            "/dev/md0",
            "/dev/mapper/root",
            "/dev/disk/by-id/x",
            "/dev/vg0/lv",
            "/dev/mem",
            "/dev/xvda",
            "/dev/vda1",
            "/dev/disk2",
            "/dev/hda",
        ] {
            assert!(dev(s), "{s}");
        }
        for s in [
            "/dev/null",
            "/dev/zero",
            "/dev/stdout",
            "/dev/stderr",
            "/dev/tty",
            "/dev/fd/1",
            "/dev/pts/0",
            "/dev/shm/x",
            "/dev/urandom",
            "/dev/random",
            "./dev/sda",
            "/dev/ttyUSB0",
            "/dev/full",
            "/dev/console",
            "/dev/sdcard_",
            "/dev/tcp/127.0.0.1/80",
            "/dev/tcp/example.com/443",
            "/dev/udp/127.0.0.1/53",
        ] {
            assert!(!dev(s), "{s}");
        }
    }

    #[test]
    fn globs() {
        assert!(glob_match("u*", "usr"));
        assert!(glob_match("[a-v]sr", "usr"));
        assert!(!glob_match("[!u]sr", "usr"));
        assert!(glob_match("[1", "[1"));
        assert!(!glob_match("*.log", "usr"));
        assert!(wildcard_only(".[!.]*"));
        assert!(wildcard_only(".??*"));
        assert!(!wildcard_only("*.log"));
    }

    #[test]
    fn permissions() {
        let p = |s: &str| {
            resolve(
                s,
                PathCtx {
                    home: None,
                    cwd: None,
                },
            )
            .and_then(|r| permission_danger(&r))
        };
        assert!(p("/").is_some());
        assert!(p("/usr").is_some());
        assert!(p("/*").is_some());
        assert!(p("/etc/*").is_some());
        assert!(p("/usr/local").is_none());
        assert!(p("/opt/app").is_none());
        assert!(p("~").is_none());
    }
}
