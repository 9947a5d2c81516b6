//! One request line of `cordon serve`, parsed: a command to run (with the session's workspace
//! mode or one of its own), or a question about the changes the workspace's runs keep, the
//! same as `cordon changes`, `diff`, `apply` and `drop` answer with `--json`.
//!
//! - `["git", "status"]`: run it in the session's mode;
//! - `{"run": ["git", "status"], "workspace": "review"}`: run it layered (`layer`), judged and
//!   kept without applying (`review`), or live (`live`); `workspace` may be left out;
//! - `{"changes": true}`: the runs that keep changes;
//! - `{"diff": "RUN"}`: what run `RUN` keeps, each entry with its finding;
//! - `{"apply": "RUN", "paths": ["a", "b"]}`: apply what `RUN` keeps (`paths` left out: all of
//!   it), judged again for conflicts with the host;
//! - `{"drop": "RUN"}`: discard it.
//!
//! Anything else is refused, naming the value and the rule.

use std::ffi::OsString;
use std::path::PathBuf;

use cordon_policy::WorkspaceMode;
use serde::Deserialize;

/// One parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Run a command; `workspace` overrides the session's mode.
    Run {
        argv: Vec<OsString>,
        workspace: Option<WorkspaceMode>,
    },
    /// A question about the changes the workspace's runs keep.
    Ask(Question),
}

/// A question of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// The workspace's runs that keep changes.
    Changes,
    /// One run's manifest.
    Diff(String),
    /// Apply what a run keeps (all of it when `paths` is empty).
    Apply { run: String, paths: Vec<PathBuf> },
    /// Discard a run.
    Drop(String),
}

/// The object form of a request: exactly one of its fields but `workspace` and `paths`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Object {
    run: Option<Vec<String>>,
    workspace: Option<String>,
    changes: Option<bool>,
    diff: Option<String>,
    apply: Option<String>,
    paths: Option<Vec<PathBuf>>,
    drop: Option<String>,
}

const FORMS: &str = "a request is a JSON array of strings (program, arguments) or an object with one of \"run\", \"changes\", \"diff\", \"apply\", \"drop\"";

/// Parses one request line (without its newline).
pub fn parse(text: &[u8]) -> Result<Request, String> {
    if text.first() == Some(&b'[') {
        let argv: Vec<String> =
            serde_json::from_slice(text).map_err(|e| format!("{FORMS}: {e}"))?;
        return run(argv, None);
    }
    let o: Object = serde_json::from_slice(text).map_err(|e| format!("{FORMS}: {e}"))?;
    let asked = [
        o.run.is_some(),
        o.changes.is_some(),
        o.diff.is_some(),
        o.apply.is_some(),
        o.drop.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if asked != 1 {
        return Err(format!("{FORMS}: this one has {asked}"));
    }
    if o.workspace.is_some() && o.run.is_none() {
        return Err("\"workspace\" belongs to a \"run\" request".to_owned());
    }
    if o.paths.is_some() && o.apply.is_none() {
        return Err("\"paths\" belongs to an \"apply\" request".to_owned());
    }
    if let Some(argv) = o.run {
        let mode = o.workspace.as_deref().map(mode).transpose()?;
        return run(argv, mode);
    }
    if let Some(asked) = o.changes {
        return if asked {
            Ok(Request::Ask(Question::Changes))
        } else {
            Err("\"changes\" is `true` or left out".to_owned())
        };
    }
    if let Some(id) = o.diff {
        return run_id(id).map(|id| Request::Ask(Question::Diff(id)));
    }
    if let Some(id) = o.drop {
        return run_id(id).map(|id| Request::Ask(Question::Drop(id)));
    }
    let id = run_id(o.apply.unwrap_or_default())?;
    let paths = o.paths.unwrap_or_default();
    if let Some(p) = paths
        .iter()
        .find(|p| p.is_absolute() || p.as_os_str().is_empty())
    {
        return Err(format!(
            "the path {:?} of an \"apply\" request is not a path relative to the workspace",
            p.display().to_string()
        ));
    }
    Ok(Request::Ask(Question::Apply { run: id, paths }))
}

fn run(argv: Vec<String>, workspace: Option<WorkspaceMode>) -> Result<Request, String> {
    if argv.is_empty() {
        return Err("the request's command is an empty array: nothing to run".to_owned());
    }
    Ok(Request::Run {
        argv: argv.into_iter().map(OsString::from).collect(),
        workspace,
    })
}

fn mode(name: &str) -> Result<WorkspaceMode, String> {
    match name {
        "layer" => Ok(WorkspaceMode::Layer),
        "review" => Ok(WorkspaceMode::Review),
        "live" => Ok(WorkspaceMode::Live),
        other => Err(format!(
            "the workspace mode {other:?} is not one of \"layer\", \"review\", \"live\""
        )),
    }
}

/// A run's name as `cordon changes` lists it: letters, digits, `-` and `_`, never a path.
fn run_id(id: String) -> Result<String, String> {
    let plain = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        Ok(id)
    } else {
        Err(format!(
            "the run {id:?} is not a run's name (letters, digits, `-` and `_`, as `changes` lists it)"
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn each_form_parses_and_a_bad_one_names_the_value_and_the_rule() {
        assert_eq!(
            parse(br#"["git","status"]"#).unwrap(),
            Request::Run {
                argv: vec!["git".into(), "status".into()],
                workspace: None
            }
        );
        assert_eq!(
            parse(br#"{"run":["true"],"workspace":"review"}"#).unwrap(),
            Request::Run {
                argv: vec!["true".into()],
                workspace: Some(WorkspaceMode::Review)
            }
        );
        assert_eq!(
            parse(br#"{"changes":true}"#).unwrap(),
            Request::Ask(Question::Changes)
        );
        assert_eq!(
            parse(br#"{"diff":"123-4-0"}"#).unwrap(),
            Request::Ask(Question::Diff("123-4-0".into()))
        );
        assert_eq!(
            parse(br#"{"apply":"r1","paths":["a/b"]}"#).unwrap(),
            Request::Ask(Question::Apply {
                run: "r1".into(),
                paths: vec!["a/b".into()]
            })
        );
        assert_eq!(
            parse(br#"{"drop":"r1"}"#).unwrap(),
            Request::Ask(Question::Drop("r1".into()))
        );
        for (line, says) in [
            (&br#"[]"#[..], "empty array"),
            (
                br#"{"run":["x"],"workspace":"auto"}"#,
                "\"auto\" is not one of",
            ),
            (
                br#"{"diff":"../../etc"}"#,
                "\"../../etc\" is not a run's name",
            ),
            (
                br#"{"apply":"r","paths":["/etc/passwd"]}"#,
                "\"/etc/passwd\"",
            ),
            (br#"{"drop":"r","apply":"r"}"#, "this one has 2"),
            (
                br#"{"changes":true,"workspace":"live"}"#,
                "belongs to a \"run\"",
            ),
            (br#"{"drop":"r","paths":["a"]}"#, "belongs to an \"apply\""),
            (br#"{"rm":"r"}"#, "unknown field"),
            (br#""x""#, "a request is"),
        ] {
            let e = parse(line).unwrap_err();
            assert!(e.contains(says), "{}: {e}", String::from_utf8_lossy(line));
        }
    }
}
