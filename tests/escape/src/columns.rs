//! The columns: who runs cordon (root, or an unprivileged user the suite creates) × the jail
//! (host: the `shell` profile under bubblewrap, the workspace under its default copy-on-write
//! layer, a transaction judged at the commit; minimal: the `document-parser` profile, likewise;
//! landlock: the `shell` profile under the Landlock backend, which writes live; serve: the
//! `shell` profile under bubblewrap with `--live`, each attack sent to `cordon serve` as the
//! session's second command, so that it runs in a jail built ahead of it and live mode stays
//! proven; serve-layer: the same with serve's default, the layer, which the jail built ahead
//! takes when the request comes; live: `cordon run --live`, run only when named; none:
//! no jail at all, the payload run directly as the user, to prove every attack case escapes
//! without one). Every jailed column names its
//! backend with `--backend`, so a broken bubblewrap can never fall back to Landlock unnoticed.

pub use cordon_test_support::user::Ids;
use cordon_test_support::user::ensure_user;

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

/// The backend a column forces with `--backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Jail {
    Bwrap,
    Landlock,
    /// bubblewrap through `cordon serve --live`: the attack is the session's second request,
    /// handed to the jail the session built while idle (cordon-launch's warm.rs).
    Served,
    /// The same through `cordon serve` with its default, the layer: the jail built ahead takes
    /// the layer, its filter and its checks when the request comes.
    ServedLayer,
    /// bubblewrap with `cordon run --live`: the workspace written as the command runs, with live
    /// mode's protections (read-only protected paths, the sweep, the git broker).
    Live,
    /// No jail at all: the payload runs directly as the column's user, with the environment,
    /// working directory, stdin and planted files cordon would have been given. Every attack case
    /// must escape here (or declare why it cannot), else it tests nothing.
    None,
}

/// One column of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Column {
    pub who: Who,
    pub posture: Posture,
    pub jail: Jail,
}

impl Column {
    pub const ALL: [Column; 10] = [
        Column::new(Who::Root, Posture::Host, Jail::Bwrap),
        Column::new(Who::Root, Posture::Minimal, Jail::Bwrap),
        Column::new(Who::User, Posture::Host, Jail::Bwrap),
        Column::new(Who::User, Posture::Minimal, Jail::Bwrap),
        Column::new(Who::Root, Posture::Host, Jail::Landlock),
        Column::new(Who::User, Posture::Host, Jail::Landlock),
        Column::new(Who::Root, Posture::Host, Jail::Served),
        Column::new(Who::Root, Posture::Host, Jail::ServedLayer),
        Column::new(Who::Root, Posture::Host, Jail::None),
        Column::new(Who::User, Posture::Host, Jail::None),
    ];

    /// Columns run only when named (`--columns root/live`): live mode under `cordon run`, which
    /// the serve column proves already in a jail built ahead.
    pub const EXTRA: [Column; 1] = [Column::new(Who::Root, Posture::Host, Jail::Live)];

    /// The no-jail columns (`--no-jail`).
    pub const NO_JAIL: [Column; 2] = [
        Column::new(Who::Root, Posture::Host, Jail::None),
        Column::new(Who::User, Posture::Host, Jail::None),
    ];

    const fn new(who: Who, posture: Posture, jail: Jail) -> Column {
        Column { who, posture, jail }
    }

    pub fn name(self) -> String {
        format!(
            "{}/{}",
            match self.who {
                Who::Root => "root",
                Who::User => "user",
            },
            match (self.jail, self.posture) {
                (Jail::Landlock, _) => "landlock",
                (Jail::Served, _) => "serve",
                (Jail::ServedLayer, _) => "serve-layer",
                (Jail::Live, _) => "live",
                (Jail::None, _) => "none",
                (Jail::Bwrap, Posture::Host) => "host",
                (Jail::Bwrap, Posture::Minimal) => "minimal",
            }
        )
    }

    /// Whether this column sends its attacks through `cordon serve`.
    pub fn served(self) -> bool {
        matches!(self.jail, Jail::Served | Jail::ServedLayer)
    }

    /// Whether this column runs the payload without any jail.
    pub fn unjailed(self) -> bool {
        self.jail == Jail::None
    }

    /// Whether this column writes the workspace live (`--live`): serve's built-ahead jails and
    /// the live column. The other bubblewrap columns take the default copy-on-write layer.
    pub fn live(self) -> bool {
        matches!(self.jail, Jail::Served | Jail::Live)
    }

    /// Whether this column runs the minimal posture.
    pub fn minimal(self) -> bool {
        self.posture == Posture::Minimal
    }

    /// Whether this column runs the Landlock backend.
    pub fn landlock(self) -> bool {
        self.jail == Jail::Landlock
    }

    /// The `cordon run` options that select the backend.
    pub fn backend_args(self) -> &'static [&'static str] {
        match self.jail {
            Jail::Bwrap | Jail::Served | Jail::ServedLayer | Jail::Live => &["--backend", "bwrap"],
            Jail::Landlock => &["--backend", "landlock"],
            Jail::None => &[],
        }
    }

    pub fn parse(name: &str) -> Option<Column> {
        Column::ALL
            .into_iter()
            .chain(Column::EXTRA)
            .find(|c| c.name() == name)
    }

    /// The `cordon run` options that select the posture.
    pub fn profile_args(self) -> &'static [&'static str] {
        match self.posture {
            Posture::Host => &[],
            Posture::Minimal => &["--profile", "document-parser"],
        }
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn ten_columns_with_unique_names_that_parse_back() {
        let names: Vec<String> = Column::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "root/host",
                "root/minimal",
                "user/host",
                "user/minimal",
                "root/landlock",
                "user/landlock",
                "root/serve",
                "root/serve-layer",
                "root/none",
                "user/none"
            ]
        );
        assert!(Column::NO_JAIL.iter().all(|c| c.unjailed()));
        assert_eq!(Column::ALL.iter().filter(|c| c.unjailed()).count(), 2);
        for c in Column::ALL {
            assert_eq!(Column::parse(&c.name()), Some(c));
        }
    }

    #[test]
    fn every_column_names_its_backend() {
        for c in Column::ALL.into_iter().filter(|c| !c.unjailed()) {
            let want = if c.landlock() { "landlock" } else { "bwrap" };
            assert_eq!(c.backend_args(), ["--backend", want], "{}", c.name());
        }
        let landlock: Vec<_> = Column::ALL.iter().filter(|c| c.landlock()).collect();
        assert_eq!(landlock.len(), 2);
        assert!(landlock.iter().all(|c| c.posture == Posture::Host));
        for c in Column::NO_JAIL {
            assert!(c.backend_args().is_empty(), "{}", c.name());
        }
    }
}
