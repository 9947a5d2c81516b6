//! Class 8: descriptors the caller leaves open. A root shell opens them (so even a file the
//! column's user could not open by name is offered), then becomes cordon.

use super::harness::{Ctx, cut, qp};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class};

pub fn cases() -> Vec<Case> {
    let c = Class::Descriptors;
    vec![
        Case::attack(
            "fds/inherited-file",
            c,
            "read a secret file through fd 9 and append to an outside file through fd 8, both inherited",
            files,
        ),
        Case::attack(
            "fds/inherited-directory",
            c,
            "openat(O_CREAT) relative to an inherited descriptor of a directory outside the jail",
            directory,
        ),
    ]
}

fn files(ctx: &Ctx<'_>) -> Outcome {
    let secret = ctx.dir.join("fd-secret");
    let append = ctx.outside.join("fd-append");
    if std::fs::write(&secret, ctx.secret("fd")).is_err()
        || ctx.plant(&append, "ORIGINAL\n").is_err()
    {
        return Outcome::new(Verdict::Inconclusive, "harness: cannot plant the files");
    }
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600));
    let out = ctx
        .cordon()
        .inherit(&format!("9<{}", qp(&secret)))
        .inherit(&format!("8>>{}", qp(&append)))
        .steps(&[
            "ls -l /proc/self/fd",
            "cat <&9 2>&1",
            "echo pwned >&8 2>&1",
            "for f in /proc/self/fd/*; do case ${f##*/} in 0|1|2) ;; *) timeout 2 head -c 200 \"$f\" </dev/null 2>/dev/null;; esac; done",
            "python3 -c 'import os\nfor fd in range(3, 64):\n  try: os.set_blocking(fd, False); print(fd, os.read(fd, 100)); os.write(fd, b\"pwned\")\n  except OSError: pass'",
        ])
        .run();
    let read = out.all().contains(&ctx.marker());
    let appended = std::fs::read_to_string(&append).unwrap_or_default() != "ORIGINAL\n";
    ctx.judge(
        &out,
        read || appended,
        format!("secret read through fd 9: {read}; outside file written through fd 8: {appended}"),
    )
}

fn directory(ctx: &Ctx<'_>) -> Outcome {
    let out = ctx
        .cordon()
        .inherit(&format!("7<{}", qp(&ctx.outside)))
        .py(
            "import os\n\
             for fd in range(3, 64):\n\
             \x20   try:\n\
             \x20       f = os.open('via-inherited-dir', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd); os.write(f, b'x'); print('CREATED via', fd)\n\
             \x20   except OSError: pass\n",
        )
        .run();
    let created = ctx.outside.join("via-inherited-dir").exists();
    ctx.judge(
        &out,
        created,
        format!(
            "file created through the inherited directory: {created}; {}",
            cut(&out.out, 120)
        ),
    )
}
