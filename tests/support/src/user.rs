//! The unprivileged user the escape suite drops to, that `cargo xtask ci` runs the load as, and
//! whose columns the workloads suite runs.

use std::process::Command;

/// The unprivileged user the escape suite drops to (created when missing, as a system user
/// without a home directory or a login shell).
pub const USER: &str = "cordon-escape";

/// A user id and group id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    /// The user id.
    pub uid: u32,
    /// The group id.
    pub gid: u32,
}

fn lookup(name: &str) -> Option<Ids> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&name) && fields.len() > 3).then(|| Ids {
            uid: fields[2].parse().unwrap_or(0),
            gid: fields[3].parse().unwrap_or(0),
        })
    })
}

/// The unprivileged user, created (`useradd --system`) when missing. Idempotent.
pub fn ensure_user() -> Result<Ids, String> {
    if let Some(ids) = lookup(USER).filter(|i| i.uid != 0) {
        return Ok(ids);
    }
    let status = Command::new("useradd")
        .args([
            "--system",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            "--user-group",
            USER,
        ])
        .status()
        .map_err(|e| format!("cannot run useradd: {e}"))?;
    if !status.success() && lookup(USER).is_none() {
        return Err(format!("useradd {USER} failed ({status})"));
    }
    lookup(USER)
        .filter(|i| i.uid != 0)
        .ok_or_else(|| format!("user {USER} still missing after useradd"))
}
