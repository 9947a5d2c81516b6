//! `cordon run`'s denials end to end: each names the path or the operation and the rule it met,
//! and a `proxy` network reaches only its listed destinations and says so.

use std::path::Path;

use crate::cli_run::{Jail, text};

/// The violations of `sh -c SCRIPT` run with `options` (`--backend bwrap --live`, say).
fn violations(j: &Jail, options: &str, script: &str) -> Vec<serde_json::Value> {
    let mut args = vec!["run", "--json"];
    args.extend(options.split_whitespace());
    args.extend(["--", "sh", "-c", script]);
    let out = j.run(&args);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["violations"].as_array().cloned().unwrap_or_default()
}

#[test]
fn denials_name_the_path_and_the_rule_they_met() {
    let j = Jail::new();
    let work = std::fs::canonicalize(&j.work).unwrap();
    let violations = |options: &str, script: &str| violations(&j, options, script);
    let find = |vs: &[serde_json::Value], path: &std::path::Path| -> String {
        let shown = path.display().to_string();
        vs.iter()
            .find(|v| v["path"] == shown.as_str())
            .and_then(|v| v["rule"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no violation names {shown}: {vs:?}"))
    };
    let script = "echo x >> .git/config; echo x > /usr/cordon-test-planted; cat ~/.ssh/id_test";
    // Live, the write to git's configuration meets the read-only protected path.
    let live = violations("--backend bwrap --live", script);
    assert!(
        find(&live, &work.join(".git/config")).starts_with("protected path"),
        "{live:?}"
    );
    // Under the default copy-on-write layer the commit judges it: the key is dropped, named.
    let vs = violations("--backend bwrap", script);
    let rule = find(&vs, &work.join(".git/config"));
    assert!(
        rule.starts_with("rule git-config-key") && rule.contains("core.x"),
        "{vs:?}"
    );
    assert!(
        find(&vs, Path::new("/usr/cordon-test-planted")).starts_with("outside the writable set"),
        "{vs:?}"
    );
    assert!(!Path::new("/usr/cordon-test-planted").exists());
    // Under the Landlock backend the supervisor makes entries at a workspace's top, and names
    // the rule of a hook it refused.
    let vs = violations(
        "--backend landlock",
        "touch made-at-the-top; echo x > .git/hooks/pre-commit",
    );
    assert!(work.join("made-at-the-top").exists(), "{vs:?}");
    assert!(!work.join(".git/hooks/pre-commit").exists());
    let rule = find(&vs, &work.join(".git/hooks/pre-commit"));
    assert!(rule.contains("hooks"), "{rule}");
}

#[test]
fn proxy_destinations_that_break_a_rule_exit_125_naming_the_key_and_the_rule() {
    let j = Jail::new();
    let marker = j.work.join("ran");
    let script = format!("touch {}", marker.display());
    let run = |extra: &[&str]| {
        let mut args = vec!["run"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "/bin/sh", "-c", &script]);
        j.run(&args)
    };
    for (extra, named, rule) in [
        (
            &["--network", "proxy"][..],
            "network.allow",
            "empty network.allow",
        ),
        (
            &["--network", "proxy", "--allow-host", "*"],
            "--allow-host",
            "allows every destination",
        ),
        (
            &["--network", "proxy", "--allow-host", "https://a.test"],
            "--allow-host",
            "has a scheme",
        ),
        (
            &["--network", "proxy", "--allow-host", "a.test/x"],
            "--allow-host",
            "has a path",
        ),
        (
            &["--network", "proxy", "--allow-host", "10.0.0.1"],
            "--allow-host",
            "without a port",
        ),
        (
            &["--allow-host", "a.test"],
            "--allow-host",
            "--network proxy",
        ),
    ] {
        let out = run(extra);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{extra:?}: {err}");
        assert!(
            err.contains(named) && err.contains(rule),
            "{extra:?}: {err}"
        );
    }
    // The same rules in the files: the global file's key and file are named; a project file
    // that adds a destination loosens the policy.
    let global = j.home.path().join(".config/cordon/config.toml");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(
        &global,
        "[network]\nmode = \"proxy\"\nallow = [\"a.test:*\"]\n",
    )
    .unwrap();
    let err = text(&run(&[]).stderr);
    assert!(
        err.contains("network.allow") && err.contains("config.toml"),
        "{err}"
    );
    std::fs::write(
        &global,
        "[network]\nmode = \"proxy\"\nallow = [\"a.test\"]\n",
    )
    .unwrap();
    std::fs::write(
        j.work.join(".cordon.toml"),
        "[network]\nallow = [\"b.test\"]\n",
    )
    .unwrap();
    let out = run(&[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        err.contains("network.allow") && err.contains("b.test"),
        "{err}"
    );
    assert!(!marker.exists(), "bad input ran the command");
}

#[test]
fn a_proxied_run_reaches_the_listed_destination_only_and_says_so() {
    use std::io::{Read, Write};
    let j = Jail::new();
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in server.incoming().flatten() {
            let mut conn = conn;
            let mut buf = [0u8; 2048];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\nConnection: close\r\n\r\nlocal sentinel",
            );
        }
    });
    let allowed = format!("http://127.0.0.1:{port}/");
    let by_name = format!("http://localhost:{port}/");
    let out = j.run(&[
        "run",
        "--json",
        "--network",
        "proxy",
        "--allow-host",
        &format!("127.0.0.1:{port}"),
        "--",
        "/bin/sh",
        "-c",
        &format!(
            "curl -sS {allowed}; echo; curl -sS {by_name}; echo; curl -sS --noproxy '*' --max-time 3 {allowed} || echo direct-failed; env | grep -i _proxy= | sort"
        ),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stdout = v["stdout"]["text"].as_str().unwrap();
    assert!(stdout.starts_with("local sentinel\n"), "{v}");
    // By name: on no list, and refused naming cordon, the destination and the rule.
    assert!(
        stdout.contains(&format!(
            "cordon refused this request: localhost:{port} is not in network.allow"
        )),
        "{stdout}"
    );
    // Straight to the address, past the proxy: there is no route.
    assert!(stdout.contains("direct-failed"), "{stdout}");
    assert!(
        stdout.contains("HTTPS_PROXY=http://127.0.0.1:3128"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ALL_PROXY=socks5h://127.0.0.1:3128"),
        "{stdout}"
    );
    let denied: Vec<&serde_json::Value> = v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "network-denied" && x["host"] == "localhost")
        .collect();
    assert_eq!(denied.len(), 1, "{v}");
    assert_eq!(denied[0]["port"], u64::from(port));
    let dest = &v["network"]["destinations"];
    assert_eq!(dest.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(dest[0]["host"], "127.0.0.1");
    assert!(dest[0]["bytes_in"].as_u64().unwrap() > 14, "{v}");
    assert_eq!(v["network"]["refused"], 1);
}

#[test]
fn refusals_a_program_reports_generically_name_the_operation_and_the_rule() {
    let j = Jail::new();
    let work = std::fs::canonicalize(&j.work).unwrap();
    let violations = |options: &str, script: &str| violations(&j, options, script);
    let by_operation = |vs: &[serde_json::Value], op: &str| -> serde_json::Value {
        vs.iter()
            .find(|v| v["operation"] == op)
            .cloned()
            .unwrap_or_else(|| panic!("no violation names the operation {op}: {vs:?}"))
    };
    // A refused socket (seccomp), as Python reports it: a traceback ending in EPERM.
    let py_socket = "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'";
    // A refused system call, as a program prints it.
    let vs = violations("--backend bwrap", &format!("{py_socket}; unshare -U true"));
    let socket = by_operation(&vs, "socket");
    assert_eq!(socket["kind"], "operation-denied", "{socket}");
    assert!(
        socket["rule"]
            .as_str()
            .unwrap()
            .starts_with("refused socket"),
        "{socket}"
    );
    let unshare = by_operation(&vs, "unshare");
    assert!(
        unshare["rule"].as_str().unwrap().contains("namespaces"),
        "{unshare}"
    );
    // The network beyond the jail's own loopback: the rule says which network the jail has.
    let vs = violations(
        "--backend bwrap",
        "python3 -c 'import urllib.request as u; u.urlopen(\"http://cordon-test.invalid/\", timeout=5)' 2>&1 | tail -1 >&2",
    );
    let net = vs
        .iter()
        .find(|v| v["kind"] == "network-denied")
        .unwrap_or_else(|| panic!("no network-denied violation: {vs:?}"));
    assert!(
        net["rule"].as_str().unwrap().contains("only loopback"),
        "{net}"
    );
    // Under the Landlock backend the refused inet socket names the backend's rule.
    let vs = violations("--backend landlock", py_socket);
    assert!(
        by_operation(&vs, "socket")["rule"]
            .as_str()
            .unwrap()
            .starts_with("refused socket")
    );
    // EROFS and EBUSY on a protected path (live mode's read-only binds): the path and the rule.
    let vs = violations(
        "--backend bwrap --live",
        "mv .git/config .git/moved; echo x > .git/hooks/new",
    );
    for path in [work.join(".git/config"), work.join(".git/hooks/new")] {
        let shown = path.display().to_string();
        let v = vs
            .iter()
            .find(|v| v["path"] == shown.as_str())
            .unwrap_or_else(|| panic!("no violation names {shown}: {vs:?}"));
        assert_eq!(v["kind"], "write-denied");
        assert!(
            v["rule"].as_str().unwrap().starts_with("protected path"),
            "{v}"
        );
    }
}
