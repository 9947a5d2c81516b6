//! The stage: a few hundred microseconds of cordon that run *inside* the jail, before the payload.
//!
//! bubblewrap starts the stage (the cordon binary, bound read-only at
//! [`cordon_bwrap::STAGE_PATH`]) instead of the payload. The stage checks that the jail holds — a
//! write outside the writable set fails, a masked path is unreadable, a network socket is refused
//! when the network is denied — reports on a status descriptor, and only then `exec`s the payload
//! with nothing but stdio inherited. Any surprise ends the stage with exit 126 and the payload
//! never runs. The launcher reads the status descriptor: no `ok` line means no payload ran.
//!
//! In probe mode the stage writes a canary inside a writable root (proving it ran) and tries a
//! write outside it; the launcher judges both on the host.

pub(crate) mod entry;
#[cfg(linux_backends)]
pub(crate) mod init;
pub(crate) mod layer;

pub use layer::LayerOperand;

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use cordon_policy::{EntryKind, Plan, Posture};

/// The first argument that selects the stage in a binary that embeds it.
pub const STAGE_ARG: &str = "__cordon_stage";

/// What a jail built ahead with a layer writes on its status descriptor before it waits for
/// its command; its verdict (`ok` or `fail …`) follows once the command came.
pub(crate) const READY_LINE: &str = "ready\n";

/// The masked-path operand that tells the stage to keep inherited descriptors: the `keep-fds`
/// weakening of the mutants run, recognised only in a debug build with the `mutants` feature.
#[cfg(all(feature = "mutants", debug_assertions))]
pub(crate) const KEEP_FDS_MARK: &str = "cordon-mutant-keep-fds";

/// What the stage checks before the payload runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfCheck {
    /// Descriptor the verdict is written to.
    pub status_fd: i32,
    /// Whether socket creation must be refused.
    pub deny_network: bool,
    /// A path outside the writable set whose creation must fail.
    pub outside: PathBuf,
    /// A masked path that must read as empty or be unreadable, and whether it is a directory.
    pub masked: Option<(PathBuf, bool)>,
    /// A descriptor holding encoded Landlock rules (`cordon_landlock::Rules::encode`) that the
    /// stage applies as a second wall just before the payload runs.
    pub landlock_fd: Option<i32>,
    /// For a jail built ahead of its command (warm.rs): the descriptor the stage reads the
    /// command from (each argument NUL-terminated, then end of file), after its checks, its
    /// report and the second wall. `None`: the command is in the stage's own arguments.
    pub command_fd: Option<i32>,
    /// For a `proxy` network: the socket the stage sends its proxy listener on (proxy.rs),
    /// made inside the jail's own network namespace once the network checks passed.
    pub proxy_fd: Option<i32>,
    /// The copy-on-write layer the stage mounts, and how its confinement is checked
    /// (`layer.rs`).
    pub layer: LayerOperand,
    /// For a closed network without a namespace of its own (the Landlock backend's supervisor
    /// judges addresses): the port of the launcher's listener on the host's loopback, which the
    /// stage must fail to reach. Only with `deny_network` and no proxy.
    pub sentinel_port: Option<u16>,
    /// The stage stays as the jail's init and forks the payload (`init.rs`).
    pub init: bool,
}

/// The most bytes of command read from [`SelfCheck::command_fd`].
pub const COMMAND_LIMIT: u64 = 64 << 20;

/// Encodes `argv` as the stage reads it from [`SelfCheck::command_fd`]; `None` when an argument
/// holds a NUL byte (no program can receive it).
pub fn encode_command(argv: &[OsString]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for arg in argv {
        let bytes = arg.as_bytes();
        if bytes.contains(&0) {
            return None;
        }
        out.extend_from_slice(bytes);
        out.push(0);
    }
    Some(out)
}

/// The inverse of [`encode_command`]; `None` for an empty or unterminated command.
pub fn decode_command(bytes: &[u8]) -> Option<Vec<OsString>> {
    let body = bytes.strip_suffix(&[0])?;
    Some(
        body.split(|b| *b == 0)
            .map(|a| OsStr::from_bytes(a).to_owned())
            .collect(),
    )
}

/// Stage arguments for a self-checked run of `argv` (what follows the stage binary).
pub fn check_args(check: &SelfCheck, argv: &[OsString]) -> Vec<OsString> {
    let (kind, path) = match &check.masked {
        Some((p, true)) => ("d", p.as_os_str().to_owned()),
        Some((p, false)) => ("f", p.as_os_str().to_owned()),
        None => ("-", OsString::from("-")),
    };
    let mode = match (check.command_fd.is_some(), check.init) {
        (true, false) => "await",
        (true, true) => "await-init",
        (false, false) => "check",
        (false, true) => "check-init",
    };
    let mut out: Vec<OsString> = vec![
        STAGE_ARG.into(),
        mode.into(),
        check.status_fd.to_string().into(),
        // The network operand: `0` nothing checked, `1` the network is closed, `sPORT` closed
        // and the launcher's sentinel at PORT must not be reached, `pFD` closed and the
        // proxy's listener to be sent on descriptor FD.
        match (check.proxy_fd, check.deny_network, check.sentinel_port) {
            (Some(fd), _, _) => format!("p{fd}"),
            (None, true, Some(port)) => format!("s{port}"),
            (None, true, None) => "1".to_owned(),
            (None, false, _) => "0".to_owned(),
        }
        .into(),
        check.outside.as_os_str().to_owned(),
        kind.into(),
        path,
        check
            .landlock_fd
            .map_or_else(|| "-".to_owned(), |fd| fd.to_string())
            .into(),
        check.layer.arg().into(),
    ];
    match check.command_fd {
        Some(fd) => out.push(fd.to_string().into()),
        None => {
            out.push("--".into());
            out.extend(argv.iter().cloned());
        }
    }
    out
}

/// Stage arguments for a probe run.
pub fn probe_args(status_fd: i32, canary: &Path, nonce: &str, outside: &Path) -> Vec<OsString> {
    vec![
        STAGE_ARG.into(),
        "probe".into(),
        status_fd.to_string().into(),
        canary.as_os_str().to_owned(),
        nonce.into(),
        outside.as_os_str().to_owned(),
    ]
}

fn status_fd(arg: Option<&OsString>) -> Option<OwnedFd> {
    let fd: i32 = arg?.to_str()?.parse().ok()?;
    crate::host::sys::inherited_fd(fd)
}

fn report(status: Option<OwnedFd>, line: &str) {
    if let Some(fd) = status {
        let mut file = std::fs::File::from(fd);
        let _ = file.write_all(line.as_bytes());
    }
}

fn fail(status: Option<OwnedFd>, reason: &str) -> i32 {
    eprintln!("cordon: the jail's self-check failed, the command was not run: {reason}");
    report(status, &format!("fail {reason}\n"));
    126
}

/// Tries to create `path`; `Ok(())` when the jail refused it.
fn outside_write_refused(path: &Path) -> Result<(), String> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(path);
            Err(format!(
                "a file could be created outside the writable set: {}",
                path.display()
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(format!(
            "self-check path {} already exists; cannot tell whether writes are refused",
            path.display()
        )),
        Err(_) => Ok(()),
    }
}

fn mask_holds(path: &Path, is_dir: bool) -> Result<(), String> {
    if is_dir {
        if let Ok(mut entries) = std::fs::read_dir(path)
            && entries.next().is_some()
        {
            return Err(format!("masked directory {} is readable", path.display()));
        }
    } else if let Ok(mut file) = std::fs::File::open(path) {
        let mut byte = [0u8; 1];
        if matches!(file.read(&mut byte), Ok(n) if n > 0) {
            return Err(format!("masked file {} is readable", path.display()));
        }
    }
    Ok(())
}

/// The network is closed: either no socket can be made (the Landlock backend, where a UNIX
/// socket would reach the host's abstract names and every host socket file), or the jail lives
/// in a network namespace whose only interface is `lo` (bubblewrap's), so an IP socket reaches
/// nothing but the jail's own loopback and a UNIX socket the namespace's own abstract names and
/// the socket files of its view, where the host's listening ones are masked.
fn socket_refused() -> Result<(), String> {
    use rustix::net::{AddressFamily, SocketType, socket};
    let unix = socket(AddressFamily::UNIX, SocketType::STREAM, None).is_ok();
    if socket(AddressFamily::INET, SocketType::DGRAM, None).is_err() {
        return match unix {
            true => Err(
                "a UNIX socket could be created while the network is denied, outside \
                         a network namespace of the jail's own"
                    .into(),
            ),
            false => Ok(()),
        };
    }
    let devices = std::fs::read_to_string("/proc/self/net/dev").map_err(|e| {
        format!("an IP socket could be created and /proc/self/net/dev cannot be read: {e}")
    })?;
    // Two header lines, then `name: counters` per interface.
    let names: Vec<&str> = devices
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next().map(str::trim))
        .collect();
    match names.iter().find(|n| **n != "lo") {
        Some(other) => Err(format!(
            "an IP socket could be created while the network is denied, and the jail's network has the interface {other}"
        )),
        None if names.is_empty() => Err(
            "an IP socket could be created while the network is denied, and no interface was listed".into(),
        ),
        None => Ok(()),
    }
}

/// Sockets can be made (the Landlock backend's supervisor judges addresses), but the host's
/// listener at `127.0.0.1:port`, which the launcher holds open for the run, is not reached.
fn host_listener_unreached(port: &str) -> Result<(), String> {
    let port: u16 = port
        .parse()
        .map_err(|_| format!("malformed sentinel port {port:?}"))?;
    let at = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    match std::net::TcpStream::connect_timeout(&at, std::time::Duration::from_secs(5)) {
        Ok(_) => Err(format!(
            "a host listener ({at}, the launcher's sentinel) could be reached while the network is denied"
        )),
        Err(_) => Ok(()),
    }
}

/// The listening socket the stage makes inside the jail's own network namespace for the proxy
/// (`features/proxy.rs` serves it from outside).
pub(crate) fn listen_for_proxy() -> std::io::Result<std::net::TcpListener> {
    std::net::TcpListener::bind(std::net::SocketAddr::from((
        [127, 0, 0, 1],
        cordon_proxy::server::PORT,
    )))
}

/// Listens on the proxy's port in the jail's own network namespace, sends the listener to the
/// launcher on descriptor `channel` and closes this process's copies: the jail then holds no
/// socket of the proxy, only the address it can connect to.
fn hand_over_proxy_listener(channel: &str) -> Result<(), String> {
    let channel = channel
        .parse::<i32>()
        .ok()
        .and_then(crate::host::sys::inherited_fd)
        .ok_or("the proxy channel descriptor is missing")?;
    let listener = listen_for_proxy().map_err(|e| {
        format!(
            "cannot listen on the proxy's port 127.0.0.1:{} in the jail: {e}",
            cordon_proxy::server::PORT
        )
    })?;
    crate::host::sys::send_fd(&channel, &OwnedFd::from(listener))
        .map_err(|e| format!("cannot hand the proxy's listener to the launcher: {e}"))
}

/// The checks, the second wall, the report; then the payload: from the arguments after `--`,
/// or (`awaiting`) read from the command descriptor, the last argument. With `init` the stage
/// stays as the jail's init and forks the payload (init.rs).
pub(crate) fn check_then_exec(args: &[OsString], awaiting: bool, init: bool) -> i32 {
    let status = status_fd(args.first());
    let (
        Some(deny),
        Some(outside),
        Some(kind),
        Some(masked),
        Some(landlock),
        Some(layer),
        Some(sep),
    ) = (
        args.get(1),
        args.get(2),
        args.get(3),
        args.get(4),
        args.get(5),
        args.get(6),
        args.get(7),
    )
    else {
        return fail(status, "malformed stage arguments");
    };
    let well_formed = if awaiting {
        args.len() == 8
    } else {
        sep == "--" && args.len() >= 9
    };
    let Some(layer) = LayerOperand::parse(layer).filter(|_| well_formed) else {
        return fail(status, "malformed stage arguments");
    };
    // A jail built ahead with a layer takes the layer when its command comes, not before (an
    // overlay over a tree the host changes meanwhile is undefined): it says it is ready, waits
    // for the command, and only then does everything below, as a cold jail does.
    let deferred = if awaiting && matches!(layer, LayerOperand::Layered { .. }) {
        if let Some(copy) = status.as_ref().and_then(|fd| fd.try_clone().ok()) {
            let _ = std::fs::File::from(copy).write_all(READY_LINE.as_bytes());
        }
        match read_command(sep) {
            Some(argv) => Some(argv),
            // Nothing to run: a jail built ahead of a command that never came.
            None => return 0,
        }
    } else {
        None
    };
    // The layer first: every check below runs on the jail as the command will see it.
    if let LayerOperand::Layered {
        roots_fd,
        filter_fd,
    } = layer
        && let Err(reason) = layer::enter(roots_fd, filter_fd)
    {
        return fail(status, &reason);
    }
    if let Err(reason) = outside_write_refused(Path::new(outside)) {
        return fail(status, &reason);
    }
    let masked = Path::new(masked);
    let mask_result = match kind.as_bytes() {
        b"d" => mask_holds(masked, true),
        b"f" => mask_holds(masked, false),
        _ => Ok(()),
    };
    if let Err(reason) = mask_result {
        return fail(status, &reason);
    }
    let proxy_channel = deny.to_str().and_then(|d| d.strip_prefix('p'));
    if (deny == "1" || proxy_channel.is_some())
        && let Err(reason) = socket_refused()
    {
        return fail(status, &reason);
    }
    if let Some(port) = deny.to_str().and_then(|d| d.strip_prefix('s'))
        && let Err(reason) = host_listener_unreached(port)
    {
        return fail(status, &reason);
    }
    if let Some(channel) = proxy_channel
        && let Err(reason) = hand_over_proxy_listener(channel)
    {
        return fail(status, &reason);
    }
    // The `keep-fds` mutant (never in a default or release build) keeps inherited descriptors.
    #[cfg(all(feature = "mutants", debug_assertions))]
    let keep_fds = masked == Path::new(KEEP_FDS_MARK);
    #[cfg(not(all(feature = "mutants", debug_assertions)))]
    let keep_fds = false;
    if !keep_fds && crate::host::sys::cloexec_all_but_stdio().is_err() {
        return fail(status, "cannot close inherited descriptors");
    }
    if layer != LayerOperand::Unchecked
        && let Err(reason) = layer::confined(layer == LayerOperand::InPlace)
    {
        return fail(status, &reason);
    }
    let wall = if landlock == "-" {
        String::new()
    } else {
        match second_wall(landlock) {
            Ok(note) => note,
            Err(reason) => return fail(status, &reason),
        }
    };
    let init = match init.then(init_prepare).transpose() {
        Ok(init) => init,
        Err(reason) => return fail(status, &reason),
    };
    report(status, &format!("ok\n{wall}"));
    let argv: Vec<OsString> = if let Some(argv) = deferred {
        argv
    } else if awaiting {
        match read_command(sep) {
            Some(argv) => argv,
            // Nothing to run: a jail built ahead of a command that never came.
            None => return 0,
        }
    } else {
        args[8..].to_vec()
    };
    #[cfg(linux_backends)]
    if let Some(init) = init {
        return init.run(&argv);
    }
    #[cfg(not(linux_backends))]
    let _ = init;
    let (program, rest) = match argv.split_first() {
        Some(split) => split,
        None => return 0,
    };
    let err = std::process::Command::new(program).args(rest).exec();
    eprintln!(
        "cordon: cannot execute {}: {err}",
        program.to_string_lossy()
    );
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

#[cfg(linux_backends)]
fn init_prepare() -> Result<init::Init, String> {
    init::prepare()
}

#[cfg(not(linux_backends))]
fn init_prepare() -> Result<std::convert::Infallible, String> {
    Err("the stage is an init only on Linux".into())
}

/// Reads the command from descriptor `fd` (its text in `arg`); `None` when there is none.
fn read_command(arg: &OsStr) -> Option<Vec<OsString>> {
    let fd = arg
        .to_str()
        .and_then(|f| f.parse::<i32>().ok())
        .and_then(crate::host::sys::inherited_fd)?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(COMMAND_LIMIT)
        .read_to_end(&mut bytes)
        .ok()?;
    decode_command(&bytes).filter(|argv| !argv.is_empty())
}

/// Applies the Landlock rules read from descriptor `fd` to this process. `Ok` carries the line
/// reported to the launcher (`landlock ...`); a kernel without Landlock is reported, not fatal
/// (bubblewrap's wall holds alone); anything else refuses the run.
#[cfg(not(linux_backends))]
fn second_wall(_fd: &OsStr) -> Result<String, String> {
    Err("no second wall exists on this platform".into())
}

#[cfg(linux_backends)]
fn second_wall(fd: &OsStr) -> Result<String, String> {
    let fd = fd
        .to_str()
        .and_then(|f| f.parse::<i32>().ok())
        .and_then(crate::host::sys::inherited_fd)
        .ok_or("the second wall's rules descriptor is missing")?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(64 << 20)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the second wall's rules: {e}"))?;
    let rules = cordon_landlock::Rules::decode(&bytes)
        .map_err(|e| format!("the second wall's rules are malformed: {e}"))?;
    let abi = match cordon_landlock::Abi::detect() {
        Ok(abi) => abi,
        Err(e) => return Ok(format!("landlock unavailable: {e}\n")),
    };
    let (ruleset, report) = cordon_landlock::Ruleset::create(&rules, abi)
        .map_err(|e| format!("cannot build the second wall: {e}"))?;
    ruleset
        .restrict_self()
        .map_err(|e| format!("cannot apply the second wall: {e}"))?;
    Ok(format!("landlock {}\n", report.abi))
}

pub(crate) fn probe(args: &[OsString]) -> i32 {
    let status = status_fd(args.first());
    let (Some(canary), Some(nonce), Some(outside)) = (args.get(1), args.get(2), args.get(3)) else {
        return fail(status, "malformed probe arguments");
    };
    if std::fs::write(canary, nonce.as_bytes()).is_err() {
        return fail(
            status,
            "the canary could not be written inside the writable root",
        );
    }
    if let Err(reason) = outside_write_refused(Path::new(outside)) {
        return fail(status, &reason);
    }
    report(status, "ok\n");
    0
}

/// Chooses what the stage checks: a host-backed path outside the writable set whose creation must
/// fail, and the first credential mask.
pub(crate) fn self_check(plan: &Plan, status_fd: i32) -> SelfCheck {
    let name = format!(
        ".cordon-selfcheck-{}-{}",
        std::process::id(),
        crate::host::token::nonce()
    );
    let hidden = |d: &Path| {
        plan.writable.iter().any(|w| d.starts_with(w))
            || plan.private_dirs.iter().any(|p| d.starts_with(p))
            || plan.masks.iter().any(|m| d.starts_with(&m.target))
    };
    let candidates: Vec<PathBuf> = match plan.posture {
        Posture::Host => plan
            .workspace
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .chain([plan.home.clone(), PathBuf::from("/")])
            .collect(),
        Posture::Minimal => plan.read_only.iter().map(|b| b.dest.clone()).collect(),
    };
    let dir = candidates
        .into_iter()
        .find(|d| !hidden(d) && std::fs::metadata(d).is_ok_and(|m| m.is_dir()))
        .unwrap_or_else(|| PathBuf::from("/"));
    SelfCheck {
        status_fd,
        deny_network: plan.network != cordon_policy::Network::Allowed,
        outside: dir.join(name),
        masked: plan
            .masks
            .first()
            .map(|m| (m.target.clone(), m.kind == EntryKind::Dir)),
        landlock_fd: None,
        command_fd: None,
        proxy_fd: None,
        layer: LayerOperand::InPlace,
        sentinel_port: None,
        init: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_round_trips_through_its_encoding() {
        let argv: Vec<OsString> = ["/bin/sh", "-c", "", "a b\nc", "\u{e9}"]
            .iter()
            .map(OsString::from)
            .collect();
        let bytes = encode_command(&argv).expect("no NUL");
        assert_eq!(decode_command(&bytes), Some(argv));
        // An argument with a NUL byte cannot be encoded; nothing, or an unterminated tail,
        // does not decode.
        assert_eq!(encode_command(&[OsString::from("a\0b")]), None);
        assert_eq!(decode_command(b""), None);
        assert_eq!(decode_command(b"/bin/true\0--x"), None);
    }

    #[test]
    fn the_sentinel_check_fails_when_the_hosts_listener_is_reached() {
        // Unjailed, the launcher's listener is reachable: the check must say so.
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("listen");
        let port = listener.local_addr().expect("port").port().to_string();
        let reached = host_listener_unreached(&port).expect_err("reached, yet passed");
        assert!(reached.contains("could be reached"), "{reached}");
        drop(listener);
        // Nothing listening there (what a jail's refusal looks like from inside): it passes.
        assert_eq!(host_listener_unreached(&port), Ok(()));
        assert!(host_listener_unreached("x").is_err());
    }

    #[test]
    fn only_a_closed_networks_operand_becomes_the_sentinel_check() {
        let check = |deny_network, proxy_fd| SelfCheck {
            status_fd: 5,
            deny_network,
            outside: PathBuf::from("/x"),
            masked: None,
            landlock_fd: None,
            command_fd: None,
            proxy_fd,
            layer: LayerOperand::Live,
            sentinel_port: Some(4242),
            init: true,
        };
        let argv = [OsString::from("/bin/true")];
        let closed = check_args(&check(true, None), &argv);
        assert_eq!(
            (&closed[1], &closed[3]),
            (&"check-init".into(), &"s4242".into())
        );
        assert_eq!(check_args(&check(false, None), &argv)[3], "0");
        assert_eq!(check_args(&check(true, Some(9)), &argv)[3], "p9");
    }

    #[test]
    fn an_awaiting_stage_takes_its_command_from_the_descriptor_not_its_arguments() {
        let check = SelfCheck {
            status_fd: 5,
            deny_network: true,
            outside: PathBuf::from("/x"),
            masked: None,
            landlock_fd: Some(6),
            command_fd: Some(7),
            proxy_fd: None,
            layer: LayerOperand::Live,
            sentinel_port: None,
            init: false,
        };
        let args = check_args(&check, &[OsString::from("/bin/true")]);
        assert_eq!(
            args,
            [
                "__cordon_stage",
                "await",
                "5",
                "1",
                "/x",
                "-",
                "-",
                "6",
                "b",
                "7"
            ]
            .iter()
            .map(OsString::from)
            .collect::<Vec<_>>()
        );
    }
}
