//! The columns: who runs cordon (root, or an unprivileged user the suite creates) × the posture
//! (host: the `shell` profile; minimal: the `document-parser` profile).

use std::process::Command;

/// The unprivileged user the suite drops to (created when missing, as a system user without a
/// home directory or a login shell).
pub const USER: &str = "cordon-escape";

/// Who runs `cordon`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Who {
    Root,
    User,
}

/// The filesystem posture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Posture {
    Host,
    Minimal,
}

/// One column of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Column {
    pub who: Who,
    pub posture: Posture,
}

impl Column {
    pub const ALL: [Column; 4] = [
        Column {
            who: Who::Root,
            posture: Posture::Host,
        },
        Column {
            who: Who::Root,
            posture: Posture::Minimal,
        },
        Column {
            who: Who::User,
            posture: Posture::Host,
        },
        Column {
            who: Who::User,
            posture: Posture::Minimal,
        },
    ];

    pub fn name(self) -> String {
        format!(
            "{}/{}",
            match self.who {
                Who::Root => "root",
                Who::User => "user",
            },
            match self.posture {
                Posture::Host => "host",
                Posture::Minimal => "minimal",
            }
        )
    }

    pub fn parse(name: &str) -> Option<Column> {
        Column::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The `cordon run` options that select the posture.
    pub fn profile_args(self) -> &'static [&'static str] {
        match self.posture {
            Posture::Host => &[],
            Posture::Minimal => &["--profile", "document-parser"],
        }
    }
}

/// A user id and group id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    pub uid: u32,
    pub gid: u32,
}

/// How each kind of column runs on this machine.
#[derive(Debug, Clone)]
pub struct Identities {
    /// The ids the root columns run as, or why they cannot run.
    pub root: Result<Ids, String>,
    /// The ids the unprivileged columns run as, or why they cannot run.
    pub user: Result<Ids, String>,
    /// Whether the unprivileged columns drop privileges with `setpriv` (only when the suite runs as
    /// root; otherwise they run as the calling user itself).
    pub drop_with_setpriv: bool,
}

impl Identities {
    pub fn ids(&self, who: Who) -> Result<Ids, String> {
        match who {
            Who::Root => self.root.clone(),
            Who::User => self.user.clone(),
        }
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn egid() -> u32 {
    rustix::process::getegid().as_raw()
}

/// Finds (creating when root and missing) the identities the columns run as.
pub fn identities() -> Identities {
    if euid() != 0 {
        return Identities {
            root: Err(format!(
                "the suite runs as uid {}, not root: rerun as root for these columns",
                euid()
            )),
            user: Ok(Ids {
                uid: euid(),
                gid: egid(),
            }),
            drop_with_setpriv: false,
        };
    }
    let root = Ok(Ids { uid: 0, gid: 0 });
    let user = ensure_user().and_then(|ids| {
        if std::path::Path::new("/usr/bin/setpriv").exists() {
            Ok(ids)
        } else {
            Err("setpriv (util-linux) is missing: cannot drop to the unprivileged user".into())
        }
    });
    Identities {
        root,
        user,
        drop_with_setpriv: true,
    }
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
