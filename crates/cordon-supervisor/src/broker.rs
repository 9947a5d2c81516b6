//! The renames the supervisor brokers rather than performs: a file of the caller's put over a
//! name the host's git reads, replaced by a copy the supervisor wrote itself of what it judged.
//!
//! The caller's file is read once (at most 1 MiB, a regular file, not followed); what is judged
//! is that copy, written to a file of the supervisor's own beside the target and renamed into
//! place; the caller's file is then removed. The caller's descriptors still point at its own
//! file, so nothing it writes later reaches the judged one.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use crate::judge::Refusal;
use crate::ops::Outcome;
use crate::resolve::{Caller, Place};
use crate::sys;

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Outcome::Errno(io::Error::raw_os_error(&e).unwrap_or(libc::EIO)),
        }
    };
}

/// The most bytes of a brokered file the supervisor reads.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

fn read_capped(fd: OwnedFd) -> io::Result<Option<String>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Ok(None);
    }
    Ok(String::from_utf8(bytes).ok())
}

/// `git config` (and every git command that writes a configuration) writes `config.lock` and
/// renames it over `config`. The supervisor reads the lock file once, keeps only what
/// `cordon-gitconfig` allows (the caller's changes to the current file, merged; a new file
/// sanitized), writes that to a file of its own and renames it into place, then removes the
/// caller's lock file: the caller's descriptors still point at its own file, never at the live
/// configuration.
pub(crate) fn config(c: &Caller<'_>, from: &Place, to: &Place) -> Outcome {
    let refuse = |rule: &'static str| {
        Outcome::Refused(Refusal {
            path: to.path.clone(),
            rule,
            errno: libc::EACCES,
            key: None,
        })
    };
    let Some(jail) = tri!(read_source(from)) else {
        return refuse("git-config-unreadable");
    };
    let current = match sys::openat(
        Some(to.dir.as_fd()),
        to.name.as_bytes(),
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0,
    ) {
        Ok(f) => {
            if tri!(sys::file_type(f.as_fd())) != libc::S_IFREG {
                return refuse("git-config-unreadable");
            }
            match tri!(read_capped(f)) {
                Some(text) => Some(text),
                None => return refuse("git-config-unreadable"),
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
        Err(e) => return Outcome::Errno(e.raw_os_error().unwrap_or(libc::EIO)),
    };
    let judged = match &current {
        Some(now) => cordon_gitconfig::merge(now, &jail, now)
            .map(|m| (m.text, m.refused))
            .map_err(drop),
        None => cordon_gitconfig::sanitize(&jail).map_err(drop),
    };
    let Ok((text, dropped)) = judged else {
        return refuse("git-config-unparsable");
    };
    if let Err(e) = replace_with(c, from, to, &text) {
        return Outcome::Errno(e.raw_os_error().unwrap_or(libc::EIO));
    }
    Outcome::Brokered(
        dropped
            .into_iter()
            .map(|r| Refusal {
                path: to.path.clone(),
                rule: "git-config",
                errno: 0,
                key: Some(r.key),
            })
            .collect(),
    )
}

/// Writes `text` to a file of the supervisor's own beside `to`, renames it over `to`, and
/// removes the caller's file at `from`.
fn replace_with(c: &Caller<'_>, from: &Place, to: &Place, text: &str) -> io::Result<()> {
    let mut tmp = to.name.clone();
    tmp.push(format!(".cordon-{}", std::process::id()));
    sys::set_umask(c.umask());
    let out = sys::openat(
        Some(to.dir.as_fd()),
        tmp.as_bytes(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
        0o644,
    )?;
    let written = {
        use std::io::Write;
        let mut file = std::fs::File::from(out);
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_data())
    };
    if let Err(e) =
        written.and_then(|()| sys::renameat2(to.dir.as_fd(), &tmp, to.dir.as_fd(), &to.name, 0))
    {
        let _ = sys::unlinkat(to.dir.as_fd(), &tmp, 0);
        return Err(e);
    }
    let _ = sys::unlinkat(from.dir.as_fd(), &from.name, 0);
    Ok(())
}

/// The caller's file at `from`, read once: `None` when it is not a regular file, is larger than
/// the cap, or is not UTF-8.
fn read_source(from: &Place) -> io::Result<Option<String>> {
    let src = sys::openat(
        Some(from.dir.as_fd()),
        from.name.as_bytes(),
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0,
    )?;
    if sys::file_type(src.as_fd())? != libc::S_IFREG {
        return Ok(None);
    }
    read_capped(src)
}

/// `git submodule add` (and `git config -f .gitmodules`) writes `.gitmodules.lock` and renames
/// it over `.gitmodules`, an auto-run name of the registry. The rename goes through when the
/// new text holds only plain submodule registrations (`cordon_gitconfig::plain_gitmodules`:
/// the same rule the bubblewrap layer's commit applies); anything else is refused as the
/// registry's.
pub(crate) fn gitmodules(c: &Caller<'_>, from: &Place, to: &Place) -> Outcome {
    let refused = Outcome::Refused(Refusal {
        path: to.path.clone(),
        rule: "auto-run",
        errno: libc::EACCES,
        key: None,
    });
    let Some(text) = tri!(read_source(from)) else {
        return refused;
    };
    if !cordon_gitconfig::plain_gitmodules(&text) {
        return refused;
    }
    match replace_with(c, from, to, &text) {
        Ok(()) => Outcome::Value(0),
        Err(e) => Outcome::Errno(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}
