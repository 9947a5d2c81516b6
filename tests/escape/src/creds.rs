//! Class 3: credential reads. Every default mask is planted with a sentinel (as a file, and as a
//! directory), and the payload's output must never contain the sentinel's marker.

use std::path::Path;

use cordon_policy::Policy;

use super::harness::{Ctx, cut, q};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class, Users};

pub fn cases() -> Vec<Case> {
    let c = Class::Credentials;
    vec![
        Case::attack(
            "creds/every-mask-as-file",
            c,
            "read every default home mask planted as a file (cat, cp into the workspace, mmap)",
            as_files,
        ),
        Case::attack(
            "creds/every-mask-as-dir",
            c,
            "list and read every default home mask planted as a directory with nested files",
            as_dirs,
        ),
        Case::attack(
            "creds/absent-masks",
            c,
            "no credential exists: start-up works, and none can be created at a mask path",
            absent,
        ),
        Case::attack(
            "creds/deletion-probe",
            c,
            "`rm -rf` every planted mask: the host keeps every file",
            deletion,
        ),
        Case::attack(
            "creds/symlinks-and-links",
            c,
            "read ~/.ssh through a symlink planted in the workspace, one made inside, a hardlink, /proc/*/root",
            links,
        ),
        Case::attack(
            "creds/host-tmp-contents",
            c,
            "read other programs' files in the host's /tmp and /var/tmp (readable by the user there)",
            host_tmp,
        ),
        Case::attack(
            "creds/other-users-files",
            c,
            "read another user's private files (root's jail has no capability to override modes)",
            other_users,
        )
        .no_jail_impossible(
            Users::Unprivileged,
            "the files are root's, mode 0600 in a 0700 directory: the host's modes already \
             refuse an unprivileged user (the attack is root's capability to override modes)",
        ),
        Case::attack(
            "creds/system-secrets",
            c,
            "/etc/shadow, /etc/gshadow and the SSH host keys read as empty or not at all",
            system,
        )
        .no_jail_impossible(
            Users::Unprivileged,
            "they are root's files, not readable by others: the host's modes already refuse an \
             unprivileged user (root reads them there)",
        ),
    ]
}

/// Removes the standard sentinels, leaving only the workspace.
pub(crate) fn clear_home(ctx: &Ctx<'_>) {
    if let Ok(entries) = std::fs::read_dir(&ctx.home) {
        for e in entries.flatten() {
            if e.path() != ctx.work {
                let _ = std::fs::remove_dir_all(e.path());
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

pub(crate) fn leak(ctx: &Ctx<'_>, text: &str) -> Vec<String> {
    let marker = ctx.marker();
    text.lines()
        .filter(|l| l.contains(&marker))
        .map(|l| cut(l, 100))
        .take(5)
        .collect()
}

/// Every line of the workspace's files that holds the marker (a payload may copy secrets there).
pub(crate) fn leak_in_workspace(ctx: &Ctx<'_>) -> Vec<String> {
    fn walk(p: &Path, marker: &str, out: &mut Vec<String>) {
        let Ok(m) = std::fs::symlink_metadata(p) else {
            return;
        };
        if m.is_dir() {
            if let Ok(d) = std::fs::read_dir(p) {
                for e in d.flatten() {
                    walk(&e.path(), marker, out);
                }
            }
        } else if m.is_file()
            && std::fs::read(p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(marker))
        {
            out.push(p.display().to_string());
        }
    }
    let mut out = Vec::new();
    walk(&ctx.work, &ctx.marker(), &mut out);
    out
}

fn read_all(ctx: &Ctx<'_>, paths: &[String]) -> super::harness::RunOut {
    // A missing scratch/ only loses the copies; the reads are judged all the same.
    let _ = ctx.scratch();
    let list = paths.iter().map(|p| q(p)).collect::<Vec<_>>().join(" ");
    ctx.sh_steps(&[
        &format!(
            "for p in {list}; do f=\"$HOME/$p\"; cat \"$f\" 2>&1; find \"$f\" -type f -exec cat {{}} + 2>&1; \
             ls -la \"$f\" >/dev/null 2>&1; cp -r \"$f\" ./scratch/copied-$(echo \"$p\" | tr / _) 2>/dev/null; done"
        ),
        &format!(
            "python3 -c 'import mmap,os,sys\nfor p in sys.argv[1:]:\n  try:\n    f=open(os.path.expanduser(\"~/\"+p),\"rb\"); print(mmap.mmap(f.fileno(),0,prot=mmap.PROT_READ)[:80])\n  except Exception as e: pass' {list}"
        ),
    ])
}

fn judge_leaks(ctx: &Ctx<'_>, out: &super::harness::RunOut, planted: usize) -> Outcome {
    let mut seen = leak(ctx, &out.all());
    seen.extend(leak_in_workspace(ctx));
    ctx.judge(
        out,
        !seen.is_empty(),
        if seen.is_empty() {
            format!("{planted} sentinel(s) planted, none read")
        } else {
            format!("read: {seen:?}")
        },
    )
}

fn as_files(ctx: &Ctx<'_>) -> Outcome {
    clear_home(ctx);
    let mut planted = Vec::new();
    for m in Policy::HOME_CREDENTIAL_MASKS {
        let path = ctx.home.join(m);
        // A mask nested in another mask's path (none today) could not be both a file and a dir.
        if path.parent().is_some_and(|p| p.is_file()) {
            continue;
        }
        if ctx.plant(&path, &ctx.secret(m)).is_ok() {
            planted.push((*m).to_owned());
        }
    }
    let out = read_all(ctx, &planted);
    judge_leaks(ctx, &out, planted.len())
}

fn as_dirs(ctx: &Ctx<'_>) -> Outcome {
    clear_home(ctx);
    let mut planted = Vec::new();
    for m in Policy::HOME_CREDENTIAL_MASKS {
        let path = ctx.home.join(m);
        if ctx.plant(&path.join("inner"), &ctx.secret(m)).is_ok()
            && ctx.plant(&path.join("sub/deep"), &ctx.secret(m)).is_ok()
        {
            planted.push((*m).to_owned());
        }
    }
    let out = read_all(ctx, &planted);
    judge_leaks(ctx, &out, planted.len())
}

fn absent(ctx: &Ctx<'_>) -> Outcome {
    clear_home(ctx);
    let out = ctx.sh_steps(&[
        "mkdir -p ~/.ssh ~/.aws",
        "echo 'ssh-ed25519 AAAA evil' > ~/.ssh/authorized_keys",
        "echo '[default]' > ~/.aws/credentials",
        "echo 'machine evil' > ~/.netrc",
        "ls -la ~ >/dev/null",
    ]);
    let created: Vec<&str> = [".ssh", ".aws", ".netrc"]
        .into_iter()
        .filter(|p| ctx.home.join(p).exists())
        .collect();
    ctx.judge(
        &out,
        !created.is_empty(),
        format!(
            "start-up {}; created on the host: {created:?}",
            if ctx.canary() { "worked" } else { "FAILED" }
        ),
    )
}

fn deletion(ctx: &Ctx<'_>) -> Outcome {
    let before: Vec<String> = super::harness::SENTINELS
        .iter()
        .filter(|s| ctx.home.join(s).exists())
        .map(|s| (*s).to_owned())
        .collect();
    let list = Policy::HOME_CREDENTIAL_MASKS
        .iter()
        .map(|p| q(p))
        .collect::<Vec<_>>()
        .join(" ");
    // Relative paths from the (test-owned) home only: without it, nothing is removed at all.
    let out = ctx.sh_steps(&[
        "cd \"$HOME\" || exit 97",
        "rm -f .netrc 2>/dev/null; echo \"rm-existing $?\"",
        "rm -f .pgpass 2>/dev/null; echo \"rm-absent $?\"",
        &format!(
            "for p in {list}; do rm -rf \"$p\" 2>/dev/null; rm -f \"$p\"/* 2>/dev/null; \
             unlink \"$p\" 2>/dev/null; done"
        ),
    ]);
    let status = |what: &str| {
        out.out
            .lines()
            .find_map(|l| l.strip_prefix(what))
            .unwrap_or("?")
            .trim()
            .to_owned()
    };
    // On Linux a mask is a mount, so `stat` (and so `rm -f`'s answer) still tells an existing
    // masked path from an absent one; the detail records it, the verdict is about the host files.
    let oracle = format!(
        "`rm -f` exit on an existing masked file {}, on an absent one {}",
        status("rm-existing "),
        status("rm-absent ")
    );
    let gone: Vec<&String> = before
        .iter()
        .filter(|s| std::fs::read_to_string(ctx.home.join(s)).map_or(true, |t| t != ctx.secret(s)))
        .collect();
    ctx.judge(
        &out,
        !gone.is_empty(),
        format!(
            "{} planted file(s), removed or changed on the host: {gone:?}; {oracle}",
            before.len()
        ),
    )
}

fn links(ctx: &Ctx<'_>) -> Outcome {
    let planted = ctx.work.join("keys");
    if std::os::unix::fs::symlink(ctx.home.join(".ssh"), &planted).is_err()
        || std::os::unix::fs::symlink(ctx.home.join(".netrc"), ctx.work.join("netrc")).is_err()
    {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot plant symlinks");
    }
    let _ = ctx.own(&planted);
    let _ = ctx.own(&ctx.work.join("netrc"));
    if let Err(e) = ctx.scratch() {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let out = ctx.sh_steps(&[
        "cat keys/id_ed25519 netrc 2>&1",
        "ln -s ~/.aws scratch/made",
        "cat scratch/made/credentials 2>&1",
        "ln ~/.netrc scratch/hard 2>&1",
        "cat scratch/hard 2>&1",
        "cat /proc/*/root$HOME/.ssh/id_ed25519 2>&1",
        "cat /proc/self/cwd/../.ssh/id_ed25519 2>&1",
        "cat ~/.ssh/../.ssh/id_ed25519 2>&1",
        "tar -C ~ -cf - .ssh .aws .netrc 2>/dev/null | tar -xOf - 2>/dev/null",
    ]);
    judge_leaks(ctx, &out, 3)
}

fn system(ctx: &Ctx<'_>) -> Outcome {
    let list = Policy::SYSTEM_CREDENTIAL_MASKS
        .iter()
        .map(|p| q(p))
        .collect::<Vec<_>>()
        .join(" ");
    // Sizes only: the real secrets are never read by the harness, nor printed by the payload.
    let out = ctx.sh(&format!(
        "for f in {list}; do if [ -e \"$f\" ]; then n=$(cat \"$f\" 2>/dev/null | wc -c); echo \"$f $n\"; fi; done"
    ));
    let readable: Vec<&str> = out
        .out
        .lines()
        .filter(|l| l.rsplit(' ').next().is_some_and(|n| n.trim() != "0"))
        .collect();
    ctx.judge(
        &out,
        !readable.is_empty(),
        format!(
            "non-empty reads: {readable:?} (of {} present)",
            out.out.lines().count()
        ),
    )
}

fn host_tmp(ctx: &Ctx<'_>) -> Outcome {
    use std::os::unix::fs::PermissionsExt;
    let name = format!("cordon-escape-{}-secret", ctx.token);
    let planted: Vec<std::path::PathBuf> = ["/tmp", "/var/tmp"]
        .iter()
        .map(|d| Path::new(d).join(&name))
        .collect();
    for p in &planted {
        if std::fs::write(p, ctx.secret("tmp")).is_err()
            || std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).is_err()
        {
            return Outcome::new(
                Verdict::Inconclusive,
                format!("harness: cannot plant {}", p.display()),
            );
        }
    }
    let out = ctx.sh_steps(&[
        "ls -la /tmp /var/tmp 2>&1 | grep -c cordon-escape",
        &format!("cat /tmp/{name} /var/tmp/{name} 2>&1"),
    ]);
    for p in &planted {
        let _ = std::fs::remove_file(p);
    }
    judge_leaks(ctx, &out, planted.len())
}

fn other_users(ctx: &Ctx<'_>) -> Outcome {
    use std::os::unix::fs::PermissionsExt;
    // Owned by someone else than the column's user: nobody for root, root for the user.
    let owner = if ctx.ids.uid == 0 { 65534 } else { 0 };
    let dir = ctx.outside.join("someone-else");
    let file = dir.join("private.txt");
    let open_file = ctx.outside.join("someone-else-0600.txt");
    let planted = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&file, ctx.secret("other-user")))
        .and_then(|()| std::fs::write(&open_file, ctx.secret("other-user-file")))
        .and_then(|()| std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)))
        .and_then(|()| std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)))
        .and_then(|()| std::fs::set_permissions(&open_file, std::fs::Permissions::from_mode(0o600)))
        .and_then(|()| std::os::unix::fs::chown(&dir, Some(owner), Some(owner)))
        .and_then(|()| std::os::unix::fs::chown(&file, Some(owner), Some(owner)))
        .and_then(|()| std::os::unix::fs::chown(&open_file, Some(owner), Some(owner)));
    if let Err(e) = planted {
        return Outcome::new(Verdict::Inconclusive, format!("harness: {e}"));
    }
    let out = ctx.sh_steps(&[
        &format!(
            "cat {} {} 2>&1",
            super::harness::qp(&file),
            super::harness::qp(&open_file)
        ),
        &format!("ls -la {} 2>&1", super::harness::qp(&dir)),
    ]);
    judge_leaks(ctx, &out, 2)
}
