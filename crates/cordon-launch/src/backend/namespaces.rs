//! Why bubblewrap cannot make its namespaces here, which layer refuses them, and the one change
//! that would let it start: what `cordon doctor` tells a user whose runs fell back to the
//! Landlock backend (or were refused).
//!
//! The facts are read once ([`NamespaceFacts::read`]); the judgement ([`diagnose`]) is a pure
//! function of them, so every layer has a test with made-up facts. bubblewrap's own message
//! does not tell the layers apart (a seccomp profile and a sysctl both give "No permissions to
//! create new namespace"), so the judgement goes from the most specific evidence to the least:
//! a sysctl that says no, then AppArmor's restriction, then a seccomp filter on this very process
//! (a container's profile), then an AppArmor profile confining it.

use serde::Serialize;

/// What decides whether this process may make user namespaces.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NamespaceFacts {
    /// Why bubblewrap is not enforcing (its probe's or its failure's text), `None` when it is.
    pub bwrap_failure: Option<String>,
    /// Whether a bubblewrap binary was found at all.
    pub bwrap_found: bool,
    /// Whether that binary is set-user-ID root (it then needs no user namespace).
    pub bwrap_setuid: bool,
    /// `user.max_user_namespaces`.
    pub max_user_namespaces: Option<String>,
    /// `kernel.unprivileged_userns_clone` (Debian's older kernels).
    pub unprivileged_userns_clone: Option<String>,
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10 and later).
    pub apparmor_restrict: Option<String>,
    /// The `Seccomp:` field of `/proc/self/status` (2: a filter confines this process).
    pub seccomp_mode: Option<String>,
    /// The LSM label confining this process (`/proc/self/attr/current`).
    pub lsm_label: Option<String>,
    /// What says this process is in a container (`/.dockerenv`, `/run/.containerenv`, the
    /// `container` variable systemd's and podman's containers set, PID 1's cgroup).
    pub container: Option<String>,
    /// The effective user id.
    pub euid: u32,
}

/// Which layer refuses, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamespaceDiagnosis {
    /// A stable id: `bubblewrap-missing`, `sysctl-max-user-namespaces`,
    /// `sysctl-unprivileged-userns-clone`, `apparmor-userns-restriction`, `seccomp-profile`,
    /// `apparmor-profile`, `unknown`.
    pub layer: &'static str,
    /// The evidence, in a sentence.
    pub evidence: String,
    /// The one change that would let bubblewrap start here.
    pub change: String,
    /// What the Landlock backend, cordon's fallback here, does not do.
    pub fallback_lacks: Vec<&'static str>,
}

/// What the Landlock backend does not do that bubblewrap does (docs/backends.md has the list
/// with reasons).
pub const FALLBACK_LACKS: &[&str] = &[
    "no pid namespace: host processes stay visible in /proc",
    "no private /tmp: a per-run TMPDIR instead",
    "no network namespace: the supervisor lets the jail reach only sockets it bound (and the proxy), while /proc/net still lists the host's",
    "no mount namespace: the home cannot be replaced, only hidden",
    "no copy-on-write layer: the command writes the workspace live",
    "no /dev/shm of its own for reads: a read-only open below /dev/shm looks among the host's names (refused), not the run's",
];

impl NamespaceFacts {
    /// Reads the facts of this process and host. `bwrap_failure` is the probe's detail when
    /// bubblewrap is not enforcing.
    pub fn read(bwrap: Option<&std::path::Path>, bwrap_failure: Option<String>) -> NamespaceFacts {
        use std::os::unix::fs::MetadataExt;
        let read = |p: &str| std::fs::read_to_string(p).ok().map(|v| v.trim().to_owned());
        let seccomp_mode = read("/proc/self/status").and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Seccomp:"))
                .map(|v| v.trim().to_owned())
        });
        let lsm_label = read("/proc/self/attr/current")
            .map(|l| l.trim_end_matches('\0').to_owned())
            .filter(|l| !l.is_empty());
        let container = if std::path::Path::new("/.dockerenv").exists() {
            Some("/.dockerenv exists".to_owned())
        } else if std::path::Path::new("/run/.containerenv").exists() {
            Some("/run/.containerenv exists".to_owned())
        } else if let Some(v) = std::env::var_os("container") {
            Some(format!("container={}", v.to_string_lossy()))
        } else {
            read("/proc/1/cgroup").and_then(|c| {
                ["docker", "kubepods", "containerd", "lxc", "libpod"]
                    .into_iter()
                    .find(|k| c.contains(k))
                    .map(|k| format!("PID 1's cgroup names {k}"))
            })
        };
        let meta = bwrap.and_then(|b| std::fs::metadata(b).ok());
        NamespaceFacts {
            bwrap_failure,
            bwrap_found: bwrap.is_some(),
            bwrap_setuid: meta
                .as_ref()
                .is_some_and(|m| m.mode() & 0o4000 != 0 && m.uid() == 0),
            max_user_namespaces: read("/proc/sys/user/max_user_namespaces"),
            unprivileged_userns_clone: read("/proc/sys/kernel/unprivileged_userns_clone"),
            apparmor_restrict: read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            seccomp_mode,
            lsm_label,
            container,
            euid: rustix::process::geteuid().as_raw(),
        }
    }
}

/// Which layer keeps bubblewrap from starting, from `facts`; `None` when it is not refused.
pub fn diagnose(facts: &NamespaceFacts) -> Option<NamespaceDiagnosis> {
    let failure = facts.bwrap_failure.as_deref()?;
    let lacks = FALLBACK_LACKS.to_vec();
    let found = |layer, evidence: String, change: String| {
        Some(NamespaceDiagnosis {
            layer,
            evidence,
            change,
            fallback_lacks: lacks.clone(),
        })
    };
    if !facts.bwrap_found {
        return found(
            "bubblewrap-missing",
            format!("no trusted bubblewrap was found ({failure})"),
            "install it: `apt-get install bubblewrap` (or your distribution's package), owned by root in a root-owned directory".into(),
        );
    }
    let in_container = facts
        .container
        .as_deref()
        .map(|c| format!(" (this process is in a container: {c})"))
        .unwrap_or_default();
    if facts.bwrap_setuid {
        return found(
            "unknown",
            format!("a set-user-ID bubblewrap failed: {failure}"),
            "read bubblewrap's message above; a set-user-ID bubblewrap needs no user namespace, so the refusal is elsewhere (a mount or capability the confinement takes away)".into(),
        );
    }
    if facts.max_user_namespaces.as_deref() == Some("0") {
        return found(
            "sysctl-max-user-namespaces",
            format!("user.max_user_namespaces = 0{in_container}"),
            "on the host: `sysctl -w user.max_user_namespaces=15000` (and in /etc/sysctl.d to keep it)".into(),
        );
    }
    if facts.unprivileged_userns_clone.as_deref() == Some("0") && facts.euid != 0 {
        return found(
            "sysctl-unprivileged-userns-clone",
            "kernel.unprivileged_userns_clone = 0: only root may make user namespaces".into(),
            "on the host: `sysctl -w kernel.unprivileged_userns_clone=1`, or make bubblewrap set-user-ID root (`chmod u+s` on it; the distribution's choice)".into(),
        );
    }
    let unconfined = facts
        .lsm_label
        .as_deref()
        .is_none_or(|l| l == "unconfined" || l.starts_with("unconfined"));
    if facts.apparmor_restrict.as_deref() == Some("1") && unconfined && facts.euid != 0 {
        return found(
            "apparmor-userns-restriction",
            "kernel.apparmor_restrict_unprivileged_userns = 1: an unconfined program's user namespace gets no capabilities".into(),
            "give bubblewrap an AppArmor profile that allows `userns,` (Ubuntu ships /etc/apparmor.d/bwrap-userns-restrict in apparmor's extra profiles), or `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`".into(),
        );
    }
    if facts.seccomp_mode.as_deref() == Some("2") {
        return found(
            "seccomp-profile",
            format!("a seccomp filter confines this process and bubblewrap could not make a namespace{in_container}: {failure}"),
            "start the container with a seccomp profile that allows unshare and clone with CLONE_NEWUSER (Docker: `--security-opt seccomp=PROFILE.json` with those calls allowed; `seccomp=unconfined` also works but drops the whole profile)".into(),
        );
    }
    if let Some(label) = facts.lsm_label.as_deref().filter(|_| !unconfined) {
        return found(
            "apparmor-profile",
            format!("this process runs under the LSM profile `{label}`{in_container}, and bubblewrap failed: {failure}"),
            "allow `userns,` and `mount,` in that profile for bubblewrap, or run the container with `--security-opt apparmor=unconfined`".into(),
        );
    }
    found(
        "unknown",
        format!("bubblewrap failed and no layer explains it{in_container}: {failure}"),
        "read bubblewrap's message; `unshare --user --map-root-user true` tells whether this user may make a user namespace at all".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> NamespaceFacts {
        NamespaceFacts {
            bwrap_failure: Some("bwrap: No permissions to create new namespace".into()),
            bwrap_found: true,
            max_user_namespaces: Some("15000".into()),
            unprivileged_userns_clone: Some("1".into()),
            apparmor_restrict: Some("0".into()),
            seccomp_mode: Some("0".into()),
            lsm_label: Some("unconfined".into()),
            euid: 1000,
            ..NamespaceFacts::default()
        }
    }

    fn layer(f: &NamespaceFacts) -> &'static str {
        diagnose(f).map_or("none", |d| d.layer)
    }

    #[test]
    fn nothing_to_say_when_bubblewrap_enforces() {
        let f = NamespaceFacts {
            bwrap_failure: None,
            ..refused()
        };
        assert_eq!(diagnose(&f), None);
    }

    #[test]
    fn each_layer_is_named_from_its_own_evidence() {
        let mut f = refused();
        assert_eq!(layer(&f), "unknown");
        f.seccomp_mode = Some("2".into());
        f.container = Some("/.dockerenv exists".into());
        let d = diagnose(&f).expect("refused");
        assert_eq!(d.layer, "seccomp-profile");
        assert!(d.evidence.contains("/.dockerenv"), "{}", d.evidence);
        assert!(d.change.contains("seccomp"), "{}", d.change);
        assert!(!d.fallback_lacks.is_empty());
        f.lsm_label = Some("docker-default (enforce)".into());
        assert_eq!(
            layer(&f),
            "seccomp-profile",
            "the filter is the nearer cause"
        );
        f.seccomp_mode = Some("0".into());
        assert_eq!(layer(&f), "apparmor-profile");
        f.lsm_label = Some("unconfined".into());
        f.apparmor_restrict = Some("1".into());
        assert_eq!(layer(&f), "apparmor-userns-restriction");
        f.unprivileged_userns_clone = Some("0".into());
        assert_eq!(layer(&f), "sysctl-unprivileged-userns-clone");
        f.max_user_namespaces = Some("0".into());
        assert_eq!(layer(&f), "sysctl-max-user-namespaces");
        f.bwrap_found = false;
        assert_eq!(layer(&f), "bubblewrap-missing");
    }

    #[test]
    fn root_is_not_sent_to_the_sysctls_that_spare_it() {
        let mut f = refused();
        f.euid = 0;
        f.unprivileged_userns_clone = Some("0".into());
        f.apparmor_restrict = Some("1".into());
        assert_eq!(layer(&f), "unknown");
        f.seccomp_mode = Some("2".into());
        assert_eq!(layer(&f), "seccomp-profile");
    }

    #[test]
    fn a_setuid_bubblewrap_is_not_told_to_change_a_sysctl() {
        let mut f = refused();
        f.bwrap_setuid = true;
        f.max_user_namespaces = Some("0".into());
        assert_eq!(layer(&f), "unknown");
    }
}
