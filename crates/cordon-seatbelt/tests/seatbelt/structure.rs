//! What the issue asks of the profile, checked on the profile read back: the rules, the
//! parameters they name, and the decision the last matching rule gives for a path.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use crate::common::{
    self, Action, Judge, MAC_TMPDIR, MAC_WORKSPACE, STAGE, build_with, mac_exec, mac_host, plan_at,
    policy, read_args, regex_matches, rules,
};
use cordon_policy::{FakeHost, Network, PolicyBuilder, Posture, Profile, Source};
use cordon_seatbelt::{GlobRule, Request, SeatbeltError, SeatbeltExtras, build};

fn shell() -> Judge {
    Judge::new(&mac_exec(
        Profile::Shell,
        Posture::Host,
        &SeatbeltExtras::default(),
    ))
}

#[test]
fn every_profile_reads_back_and_names_only_parameters_it_is_given() {
    for profile in Profile::ALL {
        for posture in [Posture::Host, Posture::Minimal] {
            let exec = mac_exec(profile, posture, &SeatbeltExtras::default());
            let args = read_args(&exec.args());
            let rules = rules(&args.profile);
            assert_eq!(rules[0].action, Action::Deny);
            assert_eq!(rules[0].ops, ["default"]);
            assert!(rules[0].filters.is_empty());
            let mut strings = Vec::new();
            for form in common::read(&args.profile).unwrap() {
                form.strings(&mut strings);
            }
            // Every parameter is used, and every (param "X") has a -DX.
            let judge = Judge::new(&exec);
            for name in args.params.keys() {
                assert!(
                    strings.contains(&name.as_bytes().to_vec()),
                    "{profile}/{posture}: {name} is given but never named"
                );
            }
            let _ = judge.allows("file-read-data", "/x"); // panics on an unknown (param …)
            assert!(args.profile.is_ascii());
            assert_eq!(args.command[0], STAGE);
        }
    }
}

#[test]
fn only_these_rules_apply_to_everything() {
    let unconditional = |exec: &cordon_seatbelt::SandboxExec| -> Vec<String> {
        rules(exec.profile())
            .into_iter()
            .filter(|r| r.filters.is_empty())
            .map(|r| format!("{:?} {}", r.action, r.ops.join(" ")))
            .collect()
    };
    let host = mac_exec(Profile::Shell, Posture::Host, &SeatbeltExtras::default());
    assert_eq!(
        unconditional(&host),
        [
            "Deny default",
            "Allow process-exec",
            "Allow process-fork",
            "Allow mach-host*",
            "Allow user-preference-read",
            "Allow ipc-posix-sem",
            "Allow file-read*",
            "Allow file-map-executable",
        ]
    );
    let minimal = mac_exec(
        Profile::McpStdio,
        Posture::Minimal,
        &SeatbeltExtras::default(),
    );
    assert!(!unconditional(&minimal).iter().any(|r| r.contains("file-")));
}

#[test]
fn processes_signals_sysctl_and_services_are_narrowed() {
    let exec = mac_exec(Profile::Shell, Posture::Host, &SeatbeltExtras::default());
    for rule in rules(exec.profile()) {
        let heads: Vec<String> = rule
            .filters
            .iter()
            .map(|f| f.list().unwrap()[0].atom().unwrap().to_owned())
            .collect();
        for op in &rule.ops {
            match op.as_str() {
                "signal" | "process-info*" => {
                    assert_eq!(
                        format!("{:?}", rule.filters),
                        format!(
                            "{:?}",
                            vec![common::Sexp::List(vec![
                                common::Sexp::Atom("target".into()),
                                common::Sexp::Atom("same-sandbox".into())
                            ])]
                        )
                    );
                }
                "sysctl-read" => assert!(
                    !heads.is_empty()
                        && heads
                            .iter()
                            .all(|h| h == "sysctl-name" || h == "sysctl-name-prefix"),
                    "{heads:?}"
                ),
                "mach-lookup" => {
                    assert!(!heads.is_empty() && heads.iter().all(|h| h == "global-name"))
                }
                o if o.starts_with("network") => {
                    panic!("network rule with the network denied: {rule:?}")
                }
                "system-socket" => assert_eq!(
                    format!("{:?}", rule.filters[0]),
                    "List([Atom(\"socket-domain\"), Atom(\"AF_UNIX\")])"
                ),
                "sysctl-write" | "mach-register" | "iokit-open" | "ipc-posix-shm" => {
                    panic!("unexpected operation {op}")
                }
                _ => {}
            }
        }
    }
    // Every entry of the lists comes with its reason in the text.
    for list in cordon_seatbelt::lists::SYSCTL_READ {
        assert!(exec.profile().contains(list.why), "{}", list.why);
    }
    for list in cordon_seatbelt::lists::MACH_LOOKUP {
        assert!(exec.profile().contains(list.why), "{}", list.why);
    }
}

#[test]
fn character_devices_are_readable_and_writable() {
    let j = shell();
    for dev in [
        "/dev/null",
        "/dev/zero",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
    ] {
        assert!(j.allows("file-read-data", dev), "{dev}");
        assert!(j.allows("file-write-data", dev), "{dev}");
        assert!(!j.allows("file-write-unlink", dev), "{dev}");
    }
    assert!(j.allows("file-ioctl", "/dev/null"));
    assert!(!j.allows("file-ioctl", "/dev/tty"));
    assert!(!j.allows("file-write-data", "/dev/disk0"));
    assert!(j.allows("file-write-data", "/dev/fd/1"));
}

#[test]
fn masks_deny_reading_and_unlinking_even_where_not_yet_present() {
    let j = shell();
    for path in [
        "/Users/u/.ssh",
        "/Users/u/.ssh/id_ed25519",
        "/Users/u/.netrc",
        "/Users/u/.aws/credentials",
        "/Users/u/.cargo/credentials.toml",
        // Not on the host when the profile was made: still masked.
        "/Users/u/.gnupg/private-keys-v1.d/k",
        "/Users/u/.config/gh/hosts.yml",
        "/private/etc/shadow",
    ] {
        for op in ["file-read-data", "file-read-metadata", "file-read-xattr"] {
            assert!(!j.allows(op, path), "{op} {path}");
        }
        for op in ["file-write-unlink", "file-write-data", "file-write-create"] {
            assert!(!j.allows(op, path), "{op} {path}");
        }
    }
    assert!(j.allows("file-read-data", "/Users/u/.cargo/bin/cargo"));
}

#[test]
fn the_home_is_readable_only_where_the_allowlist_says() {
    let j = shell();
    // The vetted toolchain trees and the workspace.
    assert!(j.allows("file-read-data", "/Users/u/.cargo/bin/cargo"));
    assert!(j.allows("file-read-data", "/Users/u/.rustup/toolchains/x/bin/rustc"));
    assert!(j.allows("file-read-data", "/Users/u/proj/src/main.rs"));
    // Anything else of the home: a store nobody listed, a document, the home's listing.
    for path in [
        "/Users/u/Documents/notes.txt",
        "/Users/u/.config/some-new-tool/token",
        "/Users/u/.gitconfig",
        "/Users/u",
    ] {
        assert!(!j.allows("file-read-data", path), "{path}");
    }
    // Outside the home, the host posture still reads everything but the masks.
    assert!(j.allows("file-read-data", "/usr/lib/libc.dylib"));
}

#[test]
fn writes_only_to_the_writable_roots_and_tmpdir_minus_protected_paths() {
    let j = shell();
    for path in [
        "/Users/u/proj/src/main.rs",
        "/Users/u/proj/new/dir/file",
        "/private/var/folders/xx/yy/T/cordon-1/x",
    ] {
        for op in ["file-write-create", "file-write-data", "file-write-unlink"] {
            assert!(j.allows(op, path), "{op} {path}");
        }
    }
    for path in [
        "/Users/u/x",
        "/Users/u/proj2/x",
        "/private/tmp/x",
        "/tmp/x",
        "/private/var/folders/xx/yy/T/other",
        "/usr/local/bin/x",
        "/Users/u/proj/.git/hooks/pre-commit",
        "/Users/u/proj/.git/config",
        // Protected and not present: creating it is refused too.
        "/Users/u/proj/.vscode/settings.json",
        "/Users/u/proj/.envrc",
    ] {
        assert!(!j.allows("file-write-create", path), "{path}");
        assert!(!j.allows("file-write-data", path), "{path}");
    }
    assert!(j.allows("file-read-data", "/Users/u/proj/.git/hooks/pre-commit"));
}

#[test]
fn roots_and_directories_above_protected_paths_cannot_be_renamed_away() {
    let j = shell();
    for dir in [
        "/Users/u/proj",
        "/Users/u/proj/.git",
        "/private/var/folders/xx/yy/T/cordon-1",
    ] {
        assert!(!j.allows("file-write-unlink", dir), "{dir}");
    }
    assert!(j.allows("file-write-unlink", "/Users/u/proj/src"));
    assert!(j.allows("file-write-unlink", "/Users/u/proj/.git/HEAD"));
}

#[test]
fn host_posture_hides_the_shared_temporary_directories() {
    let j = shell();
    assert!(!j.allows("file-read-data", "/private/tmp/someone-elses-file"));
    assert!(j.allows("file-read-metadata", "/private/tmp"));
    // A workspace under /tmp stays readable.
    let host = mac_host().dir("/private/tmp/ws/src");
    let plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, "/tmp/ws");
    let exec = build_with(&plan, &host, MAC_TMPDIR, &SeatbeltExtras::default(), None);
    let j = Judge::new(&exec);
    assert!(j.allows("file-read-data", "/private/tmp/ws/src/main.rs"));
    assert!(j.allows("file-write-create", "/private/tmp/ws/src/new.rs"));
    assert!(!j.allows("file-read-data", "/private/tmp/other"));
}

#[test]
fn symlink_resolved_spellings_are_emitted() {
    // A Linux-shaped host: /tmp is a real directory, yet the macOS spelling is emitted.
    let host = FakeHost::typical()
        .dir("/tmp/ws/src")
        .file("/tmp/ws/.git/HEAD", "ref: refs/heads/main\n");
    let plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, "/tmp/ws");
    let exec = build_with(
        &plan,
        &host,
        "/var/tmp/cordon-1",
        &SeatbeltExtras::default(),
        None,
    );
    let values: Vec<String> = exec
        .params()
        .iter()
        .map(|p| format!("{}={}", p.name, p.value.to_string_lossy()))
        .collect();
    for expected in [
        "WRITABLE_0=/tmp/ws",
        "WRITABLE_1=/private/tmp/ws",
        "TMPDIR_0=/var/tmp/cordon-1",
        "TMPDIR_1=/private/var/tmp/cordon-1",
    ] {
        assert!(
            values.contains(&expected.to_owned()),
            "{expected} in {values:?}"
        );
    }
    let j = Judge::new(&exec);
    assert!(j.allows("file-write-create", "/private/tmp/ws/x"));
    assert!(!j.allows("file-write-create", "/private/tmp/ws/.git/hooks/x"));
    // Auto-run names that do not exist are denied by name (Seatbelt needs no placeholder).
    assert!(!j.allows("file-write-create", "/private/tmp/ws/.vscode/tasks.json"));
    assert!(!j.allows("file-write-create", "/private/tmp/ws/.git/info/attributes"));
    assert!(!j.allows("file-write-create", "/private/tmp/ws/new.code-workspace"));
    assert!(!j.allows("file-write-create", "/private/tmp/ws/.aider.conf.yml"));
    assert!(j.allows(
        "file-write-create",
        "/private/tmp/ws/notes.code-workspace.txt"
    ));
    assert!(!j.allows("file-read-data", "/private/etc/shadow"));

    // A prefix the host says is a link elsewhere.
    let host = mac_host()
        .dir("/Volumes/keys/ssh")
        .symlink("/Users/u/.ssh-link", "/Volumes/keys/ssh");
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.add_mask(
        cordon_policy::PathSpec::parse("~/.ssh-link/sub").unwrap(),
        Source::Caller,
    )
    .unwrap();
    let plan = plan_at(&b.build(), &host, MAC_WORKSPACE);
    let exec = build_with(&plan, &host, MAC_TMPDIR, &SeatbeltExtras::default(), None);
    let j = Judge::new(&exec);
    assert!(!j.allows("file-read-data", "/Volumes/keys/ssh/sub/id"));
}

#[test]
fn globs_mask_and_protect_files_created_later() {
    let extras = SeatbeltExtras {
        deny_read: vec![GlobRule::new(MAC_WORKSPACE, "**/.env")],
        deny_write: vec![GlobRule::new(MAC_WORKSPACE, "secrets/*.pem")],
        proxy_port: None,
    };
    let j = Judge::new(&mac_exec(Profile::Shell, Posture::Host, &extras));
    for path in [
        "/Users/u/proj/.env",
        "/Users/u/proj/a/b/.env",
        "/Users/u/proj/a/.env/x",
    ] {
        assert!(!j.allows("file-read-data", path), "{path}");
        assert!(!j.allows("file-write-unlink", path), "{path}");
    }
    assert!(j.allows("file-read-data", "/Users/u/proj/a/b/x.env"));
    assert!(j.allows("file-read-data", "/Users/u/proj/.envrc"));
    assert!(!j.allows("file-write-data", "/Users/u/proj/secrets/k.pem"));
    assert!(j.allows("file-read-data", "/Users/u/proj/secrets/k.pem"));
    assert!(j.allows("file-write-data", "/Users/u/proj/secrets/k.txt"));
    assert!(!j.allows("file-write-unlink", "/Users/u/proj/secrets"));
    for rule in rules(&read_args(&mac_exec(Profile::Shell, Posture::Host, &extras).args()).profile)
    {
        let mut strings = Vec::new();
        for f in &rule.filters {
            f.strings(&mut strings);
        }
        for s in strings {
            assert!(
                !s.windows(2).any(|w| w == b"(?"),
                "non-capturing group in {:?}",
                String::from_utf8_lossy(&s)
            );
        }
    }
    assert!(regex_matches(
        &GlobRule::new(MAC_WORKSPACE, "**/.env").regex().unwrap(),
        b"/Users/u/proj/x/.env"
    ));
}

#[test]
fn glob_bases_are_spelled_canonically() {
    // Seatbelt compares path strings: a base written `//Users/u/./proj/` must rule on the same
    // paths as `/Users/u/proj`, not on a spelling no operation ever reaches.
    let extras = SeatbeltExtras {
        deny_read: vec![GlobRule::new("//Users/u/./proj/", "**/.env")],
        deny_write: vec![GlobRule::new("/Users/u/proj//secrets/.", "*.pem")],
        proxy_port: None,
    };
    let j = Judge::new(&mac_exec(Profile::Shell, Posture::Host, &extras));
    for path in ["/Users/u/proj/.env", "/Users/u/proj/a/.env"] {
        assert!(!j.allows("file-read-data", path), "{path}");
    }
    assert!(!j.allows("file-write-data", "/Users/u/proj/secrets/k.pem"));
    assert!(j.allows("file-read-data", "/Users/u/proj/a/x.env"));
    assert!(j.allows("file-write-data", "/Users/u/proj/secrets/k.txt"));
}

#[test]
fn the_network_is_denied_unless_the_policy_allows_it() {
    let denied = shell();
    assert!(
        !denied
            .rules
            .iter()
            .any(|r| r.ops.iter().any(|o| o.starts_with("network")))
    );
    let mut b = PolicyBuilder::new(Profile::Shell);
    b.set_network(Network::Allowed, Source::Caller);
    let host = mac_host();
    let plan = plan_at(&b.build(), &host, MAC_WORKSPACE);
    let exec = build_with(&plan, &host, MAC_TMPDIR, &SeatbeltExtras::default(), None);
    let allowed = rules(exec.profile());
    let outbound: Vec<_> = allowed
        .iter()
        .filter(|r| r.ops.iter().any(|o| o == "network-outbound"))
        .collect();
    assert_eq!(outbound.len(), 1);
    let text = format!("{:?}", outbound[0].filters);
    assert!(text.contains("Atom(\"ip\")"), "{text}");
    let mut strings = Vec::new();
    for f in &outbound[0].filters {
        f.strings(&mut strings);
    }
    assert_eq!(
        strings,
        [b"*:*".to_vec(), b"/private/var/run/mDNSResponder".to_vec()]
    );
    assert!(
        !allowed
            .iter()
            .any(|r| r.ops.iter().any(|o| o == "network*"))
    );
}

#[test]
fn minimal_posture_reads_only_the_runtime_the_vetted_trees_and_the_roots() {
    let j = Judge::new(&mac_exec(
        Profile::DocumentParser,
        Posture::Minimal,
        &SeatbeltExtras::default(),
    ));
    for path in [
        "/System/Library/Frameworks/x",
        "/usr/lib/dyld",
        "/usr/bin/env",
        "/Users/u/proj/src/a.pdf",
        "/Users/u/.rustup/toolchains/x",
        STAGE,
    ] {
        assert!(j.allows("file-read-data", path), "{path}");
    }
    for path in [
        "/Users/u/Documents/x",
        "/Users/u/.cargo/credentials.toml",
        "/private/tmp/x",
        "/Applications/x",
    ] {
        assert!(!j.allows("file-read-data", path), "{path}");
    }
    assert!(j.allows_kind("file-read-metadata", "/Users/u", true));
    assert!(!j.allows_kind("file-read-metadata", "/Users/u/.ssh", true));
}

#[test]
fn refusals_name_the_value() {
    let host = mac_host();
    let mut plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, MAC_WORKSPACE);
    let argv = [OsString::from("true")];
    let extras = SeatbeltExtras::default();
    let req = |plan: &cordon_policy::Plan, tmpdir: &'static str, argv: &'static [OsString]| {
        build(&Request {
            plan,
            host: &host,
            tmpdir: Path::new(tmpdir),
            extras: &extras,
            stage: None,
            argv,
        })
    };
    let err = build(&Request {
        plan: &plan,
        host: &host,
        tmpdir: Path::new("relative"),
        extras: &extras,
        stage: None,
        argv: &argv,
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "temporary directory relative is not an absolute path"
    );
    assert_eq!(
        req(&plan, "/t", &[]).unwrap_err(),
        SeatbeltError::EmptyCommand
    );
    plan.writable
        .push(std::path::PathBuf::from(OsString::from_vec(
            b"/a\0b".to_vec(),
        )));
    let err = build(&Request {
        plan: &plan,
        host: &host,
        tmpdir: Path::new("/t"),
        extras: &extras,
        stage: None,
        argv: &argv,
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r"refused to pass writable root /a\x00b to sandbox-exec: it contains a NUL byte"
    );
    let bad = SeatbeltExtras {
        deny_read: vec![GlobRule::new(MAC_WORKSPACE, "{a,b}")],
        deny_write: Vec::new(),
        proxy_port: None,
    };
    let plan = plan_at(&policy(Profile::Shell, Posture::Host), &host, MAC_WORKSPACE);
    let err = build(&Request {
        plan: &plan,
        host: &host,
        tmpdir: Path::new("/t"),
        extras: &bad,
        stage: None,
        argv: &argv,
    })
    .unwrap_err();
    assert!(err.to_string().contains("alternation"), "{err}");
}

#[test]
fn a_stage_under_a_hidden_temporary_directory_is_readable_alone() {
    // cordon unpacked under /tmp: the profile lets the sandbox read (and so execute) that one
    // file, in both postures, and nothing else of its directory.
    let stage = "/private/tmp/unpacked/bin/cordon";
    let host = mac_host().dir("/private/tmp/unpacked/bin");
    for posture in [Posture::Host, Posture::Minimal] {
        let plan = plan_at(&policy(Profile::Shell, posture), &host, MAC_WORKSPACE);
        let exec = build_with(
            &plan,
            &host,
            MAC_TMPDIR,
            &SeatbeltExtras::default(),
            Some(stage),
        );
        let j = Judge::new(&exec);
        assert!(j.allows("file-read-data", stage), "{posture}");
        assert!(j.allows("process-exec", stage), "{posture}");
        assert!(j.allows("file-map-executable", stage), "{posture}");
        assert!(
            !j.allows("file-read-data", "/private/tmp/unpacked/bin/sibling"),
            "{posture}"
        );
        assert!(
            !j.allows("file-read-data", "/private/tmp/unpacked/bin/cordon-other"),
            "{posture}"
        );
        assert!(!j.allows("file-write-data", stage), "{posture}");
        assert!(!j.allows("file-write-unlink", stage), "{posture}");
    }
}
