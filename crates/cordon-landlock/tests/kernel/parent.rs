//! The parent: lay out, build rules, run cases, judge.

use std::fs;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use cordon_landlock::{
    Abi, Access, FsLister, LandlockError, Options, PathRule, Rules, Ruleset, SkipReason,
};
use cordon_policy::{Invocation, Plan, Policy, PolicyBuilder, Posture, Profile, RealHost, Source};

use crate::judge::{Expect, Judge, judge_outcomes, run_child};
use crate::layout::layout;
use crate::{ABSTRACT_VAR, CONFIG, ENVRC, HOOK, OUTSIDE, PID_VAR, PORT_VAR};

pub fn parent() -> ExitCode {
    let mut j = Judge {
        failures: Vec::new(),
    };
    let abi = match Abi::detect() {
        Ok(abi) => abi,
        Err(e) => {
            println!("FAIL  Landlock is required for these tests: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("kernel Landlock {abi}");
    let layout = layout();
    let root = &layout.root;
    let ws = root.join("ws");
    let home = root.join("home");

    // The plan and its rules, as the landlock backend would build them, with the home visible
    // (`home = "visible"`), so the masks below it are Landlock's to hold piecewise.
    let mut visible = PolicyBuilder::new(Profile::Shell);
    visible.set_home(cordon_policy::HomeMode::Visible, Source::Caller);
    let plan = Plan::resolve(
        &visible.build(),
        &Invocation::at(&ws),
        &RealHost::new(Some(home.clone().into_os_string())),
    )
    .unwrap();
    let masked: Vec<&Path> = plan.masks.iter().map(|m| m.target.as_path()).collect();
    let protected: Vec<&Path> = plan.protected.iter().map(|p| p.path.as_path()).collect();
    j.check(
        "plan",
        masked.contains(&home.join(".ssh").as_path())
            && masked.contains(&home.join(".netrc").as_path())
            && protected.contains(&ws.join(".git/hooks").as_path())
            && protected.contains(&ws.join(".git/config").as_path())
            && protected.contains(&ws.join(".envrc").as_path()),
        || format!("masks {masked:?}, protected {protected:?}"),
    );
    let started = std::time::Instant::now();
    let rules = Rules::from_plan(&plan, &Options::alone(&layout.tmp), &FsLister).unwrap();
    let built = started.elapsed();
    let rules_file = root.join("rules.bin");
    fs::write(&rules_file, rules.encode()).unwrap();
    // Created after the rules were made: a new sibling of masked paths.
    fs::write(home.join("later.txt"), "later\n").unwrap();

    // The report names the ABI, and the full ruleset builds on this kernel.
    let started = std::time::Instant::now();
    let created = Ruleset::create(&rules, abi);
    println!(
        "info  {} rules ({} bytes encoded): built from the plan in {built:?}, ruleset created in {:?}",
        rules.paths.len(),
        rules.encode().len(),
        started.elapsed()
    );
    match created {
        Ok((_, report)) => {
            j.check("report", report.abi == abi, || format!("{report}"));
            j.check(
                "report",
                report
                    .to_string()
                    .contains(&format!("Landlock ABI {}", abi.version())),
                || "the report's text names the ABI".to_owned(),
            );
            j.check("report", abi < Abi::V6 || report.dropped.is_empty(), || {
                format!("nothing dropped at {abi}: {:?}", report.dropped)
            });
        }
        Err(e) => j.check("report", false, || format!("Ruleset::create failed: {e}")),
    }

    // A rule never lands on a symlink's target, a missing path is skipped and reported, a
    // missing writable root is an error.
    let odd = Rules {
        paths: vec![
            PathRule {
                path: home.join("notes.txt"),
                access: Access::READ,
            },
            PathRule {
                path: home.join("ssh-link"),
                access: Access::READ,
            },
            PathRule {
                path: home.join("ssh-link/id_test"),
                access: Access::READ,
            },
            PathRule {
                path: root.join("missing"),
                access: Access::READ,
            },
            PathRule {
                path: home.join("notes.txt"),
                access: Access::READ_DIR,
            },
        ],
        ..Rules::default()
    };
    match Ruleset::create(&odd, abi) {
        Ok((_, report)) => {
            let reasons: Vec<(PathBuf, SkipReason)> = report
                .skipped
                .iter()
                .map(|s| (s.path.clone(), s.reason))
                .collect();
            j.check(
                "skips",
                report.rules_added == 1
                    && reasons
                        == vec![
                            (home.join("ssh-link"), SkipReason::Symlink),
                            (home.join("ssh-link/id_test"), SkipReason::Symlink),
                            (root.join("missing"), SkipReason::Missing),
                            (home.join("notes.txt"), SkipReason::NoRightApplies),
                        ],
                || format!("{} added, skipped {reasons:?}", report.rules_added),
            );
        }
        Err(e) => j.check("skips", false, || format!("Ruleset::create failed: {e}")),
    }
    let required = Rules {
        must_exist: vec![root.join("missing-root")],
        ..Rules::default()
    };
    let err = Ruleset::create(&required, abi).map(|_| ()).unwrap_err();
    j.check(
        "skips",
        matches!(err, LandlockError::RequiredUnavailable { .. })
            && err.to_string().contains("missing-root"),
        || format!("a missing writable root is an error: {err}"),
    );

    // Masks.
    let (seen, _) = run_child("masks", &layout, &rules_file, true, &[]);
    judge_outcomes(
        &mut j,
        "masks",
        &seen,
        &[
            ("read neighbour", Expect::Ok),
            ("read neighbour dir file", Expect::Ok),
            ("read masked file", Expect::Errno(libc::EACCES)),
            ("read in masked dir", Expect::Errno(libc::EACCES)),
            ("read via symlink in home", Expect::Errno(libc::EACCES)),
            ("read via symlink in workspace", Expect::Errno(libc::EACCES)),
            // Documented limit: a masked directory's names can be listed.
            ("list masked dir", Expect::Ok),
            // Documented limit: a sibling created after the rules is unreadable.
            ("read sibling created later", Expect::Errno(libc::EACCES)),
            ("read outside tree", Expect::Ok),
            ("read host tmp sentinel", Expect::Errno(libc::EACCES)),
            ("exec /bin/true", Expect::Ok),
            ("create in home", Expect::Errno(libc::EACCES)),
        ],
    );
    j.check("masks", !home.join("planted").exists(), || {
        "nothing was planted in home".to_owned()
    });

    // The default: the home hidden. Nothing of it is readable but the workspace (and vetted
    // trees, none here); the rest of the host is.
    let hidden_plan = Plan::resolve(
        &Policy::for_profile(Profile::Shell),
        &Invocation::at(&ws),
        &RealHost::new(Some(home.clone().into_os_string())),
    )
    .unwrap();
    let hidden_rules =
        Rules::from_plan(&hidden_plan, &Options::alone(&layout.tmp), &FsLister).unwrap();
    let hidden_file = root.join("hidden.bin");
    fs::write(&hidden_file, hidden_rules.encode()).unwrap();
    let (seen, _) = run_child("hidden home", &layout, &hidden_file, true, &[]);
    judge_outcomes(
        &mut j,
        "hidden home",
        &seen,
        &[
            ("read neighbour", Expect::Errno(libc::EACCES)),
            ("read neighbour dir file", Expect::Errno(libc::EACCES)),
            ("read masked file", Expect::Errno(libc::EACCES)),
            ("read in masked dir", Expect::Errno(libc::EACCES)),
            ("read via symlink in workspace", Expect::Errno(libc::EACCES)),
            // Documented limit: the listing right of `/`'s piecewise grant reaches every
            // directory below it, so names in the home can be listed (never read).
            ("list masked dir", Expect::Ok),
            ("read outside tree", Expect::Ok),
            ("exec /bin/true", Expect::Ok),
            ("create in home", Expect::Errno(libc::EACCES)),
        ],
    );

    // The minimal posture: only the vetted system trees, the workspace and the temporary
    // directory are readable; the home (private) and the rest of the host are not.
    let mut minimal = PolicyBuilder::new(Profile::Shell);
    minimal.set_posture(Posture::Minimal, Source::Caller);
    let minimal_plan = Plan::resolve(
        &minimal.build(),
        &Invocation::at(&ws),
        &RealHost::new(Some(home.clone().into_os_string())),
    )
    .unwrap();
    let minimal_rules =
        Rules::from_plan(&minimal_plan, &Options::alone(&layout.tmp), &FsLister).unwrap();
    let minimal_file = root.join("minimal.bin");
    fs::write(&minimal_file, minimal_rules.encode()).unwrap();
    let (seen, _) = run_child("minimal", &layout, &minimal_file, true, &[]);
    judge_outcomes(
        &mut j,
        "minimal",
        &seen,
        &[
            ("read neighbour", Expect::Errno(libc::EACCES)),
            ("read masked file", Expect::Errno(libc::EACCES)),
            ("read in masked dir", Expect::Errno(libc::EACCES)),
            ("list masked dir", Expect::Errno(libc::EACCES)),
            ("read via symlink in workspace", Expect::Errno(libc::EACCES)),
            ("read outside tree", Expect::Errno(libc::EACCES)),
            ("read host tmp sentinel", Expect::Errno(libc::EACCES)),
            ("exec /bin/true", Expect::Ok),
            ("create in home", Expect::Errno(libc::EACCES)),
        ],
    );

    // Writes.
    if j.require_abi(
        "writes",
        abi,
        Abi::V3,
        "moving between directories and truncation",
    ) {
        let (seen, _) = run_child("writes", &layout, &rules_file, true, &[]);
        judge_outcomes(
            &mut j,
            "writes",
            &seen,
            &[
                ("write existing", Expect::Ok),
                ("create in subdir", Expect::Ok),
                ("mkdir in subdir", Expect::Ok),
                ("create in new subdir", Expect::Ok),
                ("rename in subdir", Expect::Ok),
                ("move between subdirs", Expect::Ok),
                ("unlink in subdir", Expect::Ok),
                ("mkfifo in subdir", Expect::Ok),
                ("symlink in subdir", Expect::Ok),
                // Never granted (root could otherwise make a raw disk node); EPERM unprivileged.
                ("mknod char device in subdir", Expect::Refused),
                ("write existing top-level file", Expect::Ok),
                // The documented cost of piecewise protection: nothing new at the top level.
                ("create at top level", Expect::Errno(libc::EACCES)),
                ("mkdir at top level", Expect::Errno(libc::EACCES)),
                ("unlink at top level", Expect::Errno(libc::EACCES)),
                ("create outside", Expect::Errno(libc::EACCES)),
                ("write outside", Expect::Errno(libc::EACCES)),
                ("truncate outside", Expect::Errno(libc::EACCES)),
                ("create in temp dir", Expect::Ok),
                ("read back in temp dir", Expect::Ok),
                ("write /dev/null", Expect::Ok),
                ("read /dev/zero", Expect::Ok),
            ],
        );
        for (what, path) in [
            ("no top-level file left behind", ws.join("new-top")),
            ("no top-level dir left behind", ws.join("newdir")),
            ("nothing created outside", root.join("outside/new")),
        ] {
            j.check("writes", !path.exists(), || what.to_owned());
        }
        j.check(
            "writes",
            fs::read_to_string(root.join("outside/file.txt")).unwrap() == OUTSIDE,
            || "the outside file is intact".to_owned(),
        );
        j.check("writes", ws.join("src/sub/x").exists(), || {
            "the allowed create landed on disk".to_owned()
        });
    }

    // Protected paths.
    if j.require_abi(
        "protected",
        abi,
        Abi::V3,
        "refusing truncation of protected files",
    ) {
        let (seen, _) = run_child("protected", &layout, &rules_file, true, &[]);
        judge_outcomes(
            &mut j,
            "protected",
            &seen,
            &[
                ("write protected file", Expect::Errno(libc::EACCES)),
                ("truncate protected file", Expect::Errno(libc::EACCES)),
                ("unlink protected file", Expect::Errno(libc::EACCES)),
                ("rename over protected file from subdir", Expect::Refused),
                ("rename over protected file in same dir", Expect::Refused),
                (
                    "write protected top-level file",
                    Expect::Errno(libc::EACCES),
                ),
                (
                    "unlink protected top-level file",
                    Expect::Errno(libc::EACCES),
                ),
                ("create hook", Expect::Errno(libc::EACCES)),
                ("symlink hook", Expect::Errno(libc::EACCES)),
                ("link hook", Expect::Refused),
                ("write existing hook", Expect::Errno(libc::EACCES)),
                ("unlink existing hook", Expect::Errno(libc::EACCES)),
                ("rename hooks dir", Expect::Refused),
                ("rename .git", Expect::Refused),
                // The documented cost: git cannot take its lock (and leaves none behind).
                ("create git lock", Expect::Errno(libc::EACCES)),
                ("write existing file in .git", Expect::Ok),
                ("mkdir in .git/objects", Expect::Ok),
            ],
        );
        let git = ws.join(".git");
        j.check(
            "protected",
            fs::read_to_string(git.join("config")).unwrap() == CONFIG
                && fs::read_to_string(ws.join(".envrc")).unwrap() == ENVRC
                && fs::read_to_string(git.join("hooks/existing")).unwrap() == HOOK,
            || "protected files are byte-for-byte intact".to_owned(),
        );
        j.check(
            "protected",
            fs::symlink_metadata(git.join("hooks/pre-commit")).is_err()
                && !git.join("index.lock").exists()
                && git.join("hooks").is_dir()
                && ws.join("README.md").exists(),
            || "no hook planted, no lock left, hooks and README.md still in place".to_owned(),
        );
    }

    // TCP and abstract UNIX sockets.
    if j.require_abi(
        "network",
        abi,
        Abi::V6,
        "TCP rules (ABI 4) and abstract-socket scoping",
    ) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let name = format!("cordon-landlock-kernel-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let _unix = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        let extra = [(PORT_VAR, port), (ABSTRACT_VAR, name)];
        let (seen, _) = run_child("network", &layout, &rules_file, false, &extra);
        judge_outcomes(
            &mut j,
            "network baseline",
            &seen,
            &[
                ("tcp connect", Expect::Ok),
                ("tcp bind", Expect::Ok),
                ("abstract unix connect", Expect::Ok),
            ],
        );
        let (seen, _) = run_child("network", &layout, &rules_file, true, &extra);
        judge_outcomes(
            &mut j,
            "network",
            &seen,
            &[
                ("tcp connect", Expect::Errno(libc::EACCES)),
                ("tcp bind", Expect::Errno(libc::EACCES)),
                ("abstract unix connect", Expect::Errno(libc::EPERM)),
            ],
        );
    }

    // Signals.
    if j.require_abi("signals", abi, Abi::V6, "signal scoping") {
        let mut target = Command::new("/bin/sleep").arg("1000").spawn().unwrap();
        let extra = [(PID_VAR, target.id().to_string())];
        let (seen, _) = run_child("signals", &layout, &rules_file, false, &extra);
        judge_outcomes(
            &mut j,
            "signals baseline",
            &seen,
            &[
                ("probe outside process", Expect::Ok),
                ("own child killed", Expect::Ok),
            ],
        );
        let (seen, _) = run_child("signals", &layout, &rules_file, true, &extra);
        judge_outcomes(
            &mut j,
            "signals",
            &seen,
            &[
                ("probe outside process", Expect::Errno(libc::EPERM)),
                ("signal outside process", Expect::Errno(libc::EPERM)),
                ("signal own child", Expect::Ok),
                ("own child killed", Expect::Ok),
            ],
        );
        j.check("signals", target.try_wait().unwrap().is_none(), || {
            "the outside process was not ended".to_owned()
        });
        target.kill().unwrap();
        target.wait().unwrap();
    }

    // The `landlock` backend's path: ruleset built in the parent, applied between fork and exec.
    match Ruleset::create(&rules, abi) {
        Ok((ruleset, _)) => {
            let ruleset = std::sync::Arc::new(ruleset);
            let spawn = |file: &Path| {
                let rs = ruleset.clone();
                let mut cmd = Command::new("/bin/cat");
                cmd.arg(file).stdin(Stdio::null());
                // SAFETY: restrict_self is async-signal-safe (two system calls, no allocation).
                unsafe {
                    cmd.pre_exec(move || {
                        rs.restrict_self()
                            .map_err(|e| std::io::Error::from_raw_os_error(e.errno))
                    });
                }
                cmd.output().unwrap()
            };
            let neighbour = spawn(&home.join("notes.txt"));
            j.check(
                "pre_exec",
                neighbour.status.success() && neighbour.stdout == b"notes\n",
                || format!("cat of a neighbour works: {:?}", neighbour.status),
            );
            let masked = spawn(&home.join(".netrc"));
            j.check(
                "pre_exec",
                !masked.status.success()
                    && masked.stdout.is_empty()
                    && String::from_utf8_lossy(&masked.stderr).contains("Permission denied"),
                || format!("cat of a masked file is refused: {:?}", masked.status),
            );
        }
        Err(e) => j.check("pre_exec", false, || format!("Ruleset::create failed: {e}")),
    }

    // Design evidence: why ancestors of protected paths keep no make_reg right. With make_reg
    // but not write_file, open(O_CREAT|O_WRONLY) creates the file and then fails.
    let evidence = root.join("evidence");
    let make_reg_only = Rules {
        paths: vec![PathRule {
            path: evidence.clone(),
            access: Access::MAKE_REG,
        }],
        ..Rules::default()
    };
    let make_reg_file = root.join("make-reg-only.bin");
    fs::write(&make_reg_file, make_reg_only.encode()).unwrap();
    let (seen, _) = run_child("make_reg_only", &layout, &make_reg_file, true, &[]);
    judge_outcomes(
        &mut j,
        "make_reg without write_file",
        &seen,
        &[("create and open for writing", Expect::Errno(libc::EACCES))],
    );
    j.check(
        "make_reg without write_file",
        evidence.join("f").exists(),
        || "the failed open left an empty file behind (why ancestors get no make_reg)".to_owned(),
    );

    println!();
    if j.failures.is_empty() {
        println!("kernel: all cases passed");
        ExitCode::SUCCESS
    } else {
        println!("kernel: {} failure(s)", j.failures.len());
        for f in &j.failures {
            println!("  {f}");
        }
        ExitCode::FAILURE
    }
}
