//! Class 10: launcher input. Bad input must be refused with 125 and run nothing; hostile but valid
//! names must work inside the jail exactly as given and never be interpreted by a shell.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use super::harness::{Ctx, cut, qp};
use super::matrix::{Outcome, Verdict};
use super::{Case, Class, Users};

pub fn cases() -> Vec<Case> {
    let c = Class::LauncherInput;
    vec![
        Case::attack(
            "input/cwd-outside",
            c,
            "--cwd /, /etc, $HOME, /usr/bin, ~/.ssh, a missing directory: 125, nothing runs",
            cwd_outside,
        )
        .not_in_mutants(),
        Case::attack(
            "input/broad-roots",
            c,
            "--write /, $HOME, /home, /tmp, /usr, /etc, ~/.ssh: 125, nothing runs",
            broad_roots,
        )
        .not_in_mutants(),
        Case::attack(
            "input/hostile-paths",
            c,
            "workspaces named with quotes, newlines, spaces, $(…), backticks, non-UTF-8, 255 bytes, a leading dash",
            hostile_paths,
        )
        .not_in_mutants()
        .no_jail_impossible(
            Users::Both,
            "the attack is the launcher mishandling a hostile name (expanding `$(…)`, splitting \
             it, taking a leading dash for an option); with no launcher nothing interprets the \
             names, and every payload runs in its directory as given",
        ),
        Case::attack(
            "input/hostile-arguments",
            c,
            "payload arguments that look like bubblewrap options (--bind / /) and bad --env/--timeout values",
            hostile_args,
        )
        .not_in_mutants(),
        Case::attack(
            "input/loosening-project-file",
            c,
            "a .cordon.toml that allows the network, adds roots, removes masks, warns, raises limits: 125",
            loosening,
        )
        .not_in_mutants(),
    ]
}

/// Runs each of `tries` (cordon options) with a payload that would leave a marker; every one must
/// exit 125 and leave none. A control run first proves the payload works.
fn refusals(ctx: &Ctx<'_>, tries: Vec<Vec<OsString>>) -> Outcome {
    let live = ctx.sh("true");
    if !ctx.canary() {
        return ctx.judge(&live, false, "control run did not run");
    }
    let mut bad = Vec::new();
    for (i, args) in tries.iter().enumerate() {
        let marker = ctx.work.join(format!("ran-{i}"));
        let out = ctx
            .cordon()
            .args(args.clone())
            .payload(["/bin/sh", "-c", &format!("touch {}", qp(&marker))])
            .run();
        if marker.exists() || out.code != Some(125) {
            bad.push(format!(
                "{:?}: exit {:?}, ran {}",
                args,
                out.code,
                marker.exists()
            ));
        }
    }
    ctx.judge(
        &live,
        !bad.is_empty(),
        if bad.is_empty() {
            format!("all {} refused with 125, nothing ran", tries.len())
        } else {
            format!("{bad:?}")
        },
    )
}

fn os(parts: &[&str]) -> Vec<OsString> {
    parts.iter().map(OsString::from).collect()
}

fn cwd_outside(ctx: &Ctx<'_>) -> Outcome {
    let home = ctx.home.display().to_string();
    let missing = ctx.dir.join("missing").display().to_string();
    let in_mask = ctx.home.join(".ssh").display().to_string();
    refusals(
        ctx,
        vec![
            os(&["--cwd", "/"]),
            os(&["--cwd", "/etc"]),
            os(&["--cwd", &home]),
            os(&["--cwd", "/usr/bin"]),
            os(&["--cwd", &missing]),
            os(&["--cwd", &in_mask]),
        ],
    )
}

fn broad_roots(ctx: &Ctx<'_>) -> Outcome {
    let home = ctx.home.display().to_string();
    let ssh = ctx.home.join(".ssh").display().to_string();
    refusals(
        ctx,
        vec![
            os(&["--write", "/"]),
            os(&["--write", &home]),
            os(&["--write", "/home"]),
            os(&["--write", "/tmp"]),
            os(&["--write", "/usr"]),
            os(&["--write", "/etc"]),
            os(&["--write", &ssh]),
            os(&["--write", "/proc/self"]),
        ],
    )
}

fn hostile_paths(ctx: &Ctx<'_>) -> Outcome {
    let live = ctx.sh("true");
    if !ctx.canary() {
        return ctx.judge(&live, false, "control run did not run");
    }
    let pwned = ctx.dir.join("pwned");
    let names: Vec<OsString> = vec![
        "it's \"quoted\"".into(),
        "new\nline".into(),
        "  spaces  and\ttabs".into(),
        format!("$(touch {})", pwned.display()).into(),
        format!("`touch {}`", pwned.display()).into(),
        OsString::from_vec(b"bad-utf8-\xff\xfe".to_vec()),
        "x".repeat(255).into(),
        "-rf".into(),
        "--bind".into(),
    ];
    let mut problems = Vec::new();
    let mut ran = 0;
    for name in &names {
        let dir = ctx.home.join(name);
        if std::fs::create_dir_all(&dir).is_err() || ctx.own(&dir).is_err() {
            problems.push(format!("harness: cannot create {:?}", name));
            continue;
        }
        let inside = dir.join("made-inside");
        if ctx.column.landlock() {
            // Nothing can be created directly in a workspace root under Landlock (a documented
            // limit, judged by the usability rows); an existing file can be written.
            if let Err(e) = ctx.plant(&inside, "") {
                problems.push(format!("harness: {e}"));
                continue;
            }
        }
        let out = ctx
            .cordon()
            .cwd(&dir)
            .args([OsString::from("--cwd"), dir.clone().into_os_string()])
            .payload([
                OsString::from("/bin/sh"),
                "-c".into(),
                "echo made > \"$PWD/made-inside\"".into(),
            ])
            .run();
        let made = std::fs::read_to_string(&inside).is_ok_and(|t| t == "made\n");
        if out.code == Some(125) && !made {
            continue; // refused cleanly
        }
        if out.code == Some(0) && made {
            ran += 1;
            continue;
        }
        problems.push(format!(
            "{:?}: exit {:?}; {}",
            name,
            out.code,
            cut(&out.err, 120)
        ));
    }
    let expanded = pwned.exists();
    ctx.judge(
        &live,
        expanded || !problems.is_empty(),
        format!(
            "{ran} of {} ran inside as given, the rest refused with 125; a name was expanded by a shell: {expanded}; {problems:?}",
            names.len()
        ),
    )
}

fn hostile_args(ctx: &Ctx<'_>) -> Outcome {
    let outside = ctx.outside.join("via-option");
    let out = ctx
        .cordon()
        .payload([
            OsString::from("/bin/sh"),
            "-c".into(),
            format!(
                "{}; echo x > {} ; echo \"args: $*\"",
                ctx.canary_sh(),
                qp(&outside)
            )
            .into(),
            "--bind".into(),
            "/".into(),
            "/".into(),
            "--".into(),
            "--unshare-net".into(),
        ])
        .run();
    let written = outside.exists();
    let mut bad = Vec::new();
    for args in [
        os(&["--env", "NOEQUALS"]),
        os(&["--env", "=value"]),
        os(&["--timeout", "0"]),
        os(&["--timeout", "-5"]),
        os(&["--pass-env", ""]),
        os(&["--profile", "nonexistent"]),
        os(&["--network", "maybe"]),
    ] {
        let marker = ctx.work.join("ran-bad-arg");
        let r = ctx
            .cordon()
            .args(args.clone())
            .payload(["/bin/sh", "-c", &format!("touch {}", qp(&marker))])
            .run();
        if marker.exists() || r.code != Some(125) {
            bad.push(format!(
                "{args:?}: exit {:?}, ran {}",
                r.code,
                marker.exists()
            ));
        }
    }
    ctx.judge(
        &out,
        written || !bad.is_empty(),
        format!("write outside through option-like arguments: {written}; bad values not refused: {bad:?}"),
    )
}

fn loosening(ctx: &Ctx<'_>) -> Outcome {
    let live = ctx.sh("true");
    if !ctx.canary() {
        return ctx.judge(&live, false, "control run did not run");
    }
    let configs = [
        "[network]\nmode = \"allow\"\n",
        "[filesystem]\nwritable = [\"/\"]\n",
        "[filesystem]\nwritable = [\"~\"]\n",
        "[filesystem]\nwritable = [\"../\"]\n",
        "[filesystem]\nallow_read = [\"~/.ssh\"]\n",
        "[backend]\nunavailable = \"warn\"\n",
        "[limits]\ntimeout_secs = 999999\n",
        "[limits]\nprocesses = 99999999\n",
        "profile = \"language-server\"\n",
        "[env]\npass = [\"GITHUB_TOKEN\"]\nset = { LD_PRELOAD = \"/x.so\" }\n",
        "[unknown]\nkey = 1\n",
        "not toml at all [[[",
    ];
    let mut bad = Vec::new();
    for (i, cfg) in configs.iter().enumerate() {
        if let Err(e) = ctx.file(".cordon.toml", cfg) {
            return Outcome::new(Verdict::Inconclusive, e);
        }
        let marker = ctx.work.join(format!("ran-{i}"));
        let out = ctx
            .cordon()
            .env("GITHUB_TOKEN", &ctx.marker())
            .payload(["/bin/sh", "-c", &format!("touch {}", qp(&marker))])
            .run();
        if marker.exists() || out.code != Some(125) {
            bad.push(format!(
                "{cfg:?}: exit {:?}, ran {}",
                out.code,
                marker.exists()
            ));
        }
    }
    let _ = std::fs::remove_file(ctx.work.join(".cordon.toml"));
    ctx.judge(
        &live,
        !bad.is_empty(),
        if bad.is_empty() {
            format!(
                "all {} loosening project files refused with 125",
                configs.len()
            )
        } else {
            format!("{bad:?}")
        },
    )
}
