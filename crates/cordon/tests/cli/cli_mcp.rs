//! `cordon mcp` end to end on stdio, with the protocol's lines written by hand (the MCP Python
//! SDK drives it too, in `packages/python/tests/test_mcp.py`): the handshake, one tool, calls
//! that run in jails of their own, bad calls answered as tool errors, end of input ends it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One MCP session with a `cordon mcp` child.
struct Client {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: BufReader<std::process::ChildStdout>,
}

impl Client {
    fn send(&mut self, message: Value) {
        writeln!(self.to, "{message}").unwrap();
        self.to.flush().unwrap();
    }

    /// Sends a request and returns the response with its id (skipping notifications).
    fn ask(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.from.read_line(&mut line).unwrap() > 0,
                "cordon mcp closed stdout"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn call(&mut self, id: u64, arguments: Value) -> Value {
        let answer = self.ask(
            id,
            "tools/call",
            json!({"name": "run", "arguments": arguments}),
        );
        answer["result"].clone()
    }
}

#[test]
fn mcp_serves_a_run_tool_whose_calls_are_jailed() {
    common::require_bwrap();
    let home = common::visible_dir("cordon-test-mcp-");
    let work = home.path().join("proj");
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(home.path().join(".ssh/id_test"), "SENTINEL-PRIVATE-KEY").unwrap();

    let mut child = Command::new(common::cordon())
        .arg("mcp")
        .arg("--cwd")
        .arg(&work)
        .args(["--timeout", "20"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut client = Client {
        to: child.stdin.take().unwrap(),
        from: BufReader::new(child.stdout.take().unwrap()),
        child,
    };

    let init = client.ask(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "cli-test", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "cordon", "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let tools = client.ask(2, "tools/list", json!({}));
    let listed = tools["result"]["tools"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{tools}");
    assert_eq!(listed[0]["name"], "run");
    assert_eq!(listed[0]["inputSchema"]["required"], json!(["argv"]));

    let ran = client.call(
        3,
        json!({"argv": ["sh", "-c", "echo made > made.txt; cat ~/.ssh/id_test; echo x > ~/planted; echo x > /usr/cordon-test-planted"]}),
    );
    let run = &ran["structuredContent"];
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(run["status"], "exited", "{ran}");
    assert_eq!(run["sandboxed"], true, "{ran}");
    assert_ne!(run["exit_code"], 0, "{ran}");
    assert!(!ran.to_string().contains("SENTINEL-PRIVATE-KEY"), "{ran}");
    assert_eq!(
        std::fs::read_to_string(work.join("made.txt")).unwrap(),
        "made\n"
    );
    // A write to the home lands in the workspace's private home, never the real one.
    assert!(!home.path().join("planted").exists());
    assert!(!Path::new("/usr/cordon-test-planted").exists());
    // The text block is the same object, serialized, as the protocol asks.
    let text = ran["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), *run);

    let timed_out = client.call(4, json!({"argv": ["sleep", "30"], "timeout": 1}));
    assert_eq!(timed_out["isError"], true, "{timed_out}");
    assert_eq!(timed_out["structuredContent"]["exit_code"], 124);

    let floor = client.call(5, json!({"argv": ["rm", "-rf", "/"]}));
    assert_eq!(floor["isError"], true, "{floor}");
    assert_eq!(floor["structuredContent"]["rule"], "recursive-delete");

    for (id, bad) in [
        (6, json!({"argv": []})),
        (7, json!({"argv": "ls"})),
        (8, json!({"argv": ["ls"], "cwd": "/"})),
    ] {
        let answer = client.call(id, bad.clone());
        assert_eq!(answer["isError"], true, "{bad}: {answer}");
        assert_eq!(answer["structuredContent"]["exit_code"], 125, "{answer}");
    }
    let unknown = client.ask(9, "tools/call", json!({"name": "shell", "arguments": {}}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("one, `run`"),
        "{unknown}"
    );

    // End of input ends the session.
    let Client { mut child, to, .. } = client;
    drop(to);
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "cordon mcp did not end after its stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
