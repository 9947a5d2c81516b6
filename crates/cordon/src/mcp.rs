//! `cordon mcp`: a Model Context Protocol server on stdio with one tool, `run`.
//!
//! An MCP client (an editor, a desktop agent, another harness) starts `cordon mcp --cwd DIR` and
//! calls the tool `run` with `{"argv": ["cargo", "test"], "timeout": 60}`. Every call runs in a
//! jail of its own for the workspace `DIR`, with the jail options given on the command line
//! (the same flags as `cordon run`, fixed for the session). The tool's result carries the object
//! `cordon run --json` prints as structured content (and, as the protocol asks of a tool with
//! structured output, the same JSON as text): exit code, output, violations, and whatever the
//! schema grows later.
//!
//! The session is `cordon serve`'s: the writable roots are walked once when the server starts,
//! and each call is handed to a jail built ahead of it when it fits (docs/cli.md). A call's
//! `timeout` may only shorten the session's (the operator who started the server sets the
//! bound; the model that calls the tool stays below it).
//!
//! Errors a caller can act on are tool errors (`isError: true`) with `{"error", "exit_code":
//! 125}` as structured content, as `serve` answers a bad line; a refusal (the floor, the policy,
//! no enforcing backend) is the refusal object with `isError: true`; a command that ran and
//! failed is an ordinary result whose `exit_code` says so. The protocol itself (the JSON-RPC
//! framing, the handshake, version negotiation) is the `rmcp` crate's.

use std::ffi::OsString;
use std::sync::Arc;

use cordon_launch::{Forward, Launcher, Preparation, RunRequest};
use cordon_policy::Plan;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;

use crate::cli::McpArgs;
use crate::error::CliError;
use crate::exit;

/// The tool's name.
pub const TOOL: &str = "run";

/// Calls that may run at once; more wait for a place (each holds a jail and a thread).
const CONCURRENT_CALLS: usize = 4;

/// Runs `cordon mcp` on this process's stdin and stdout until the client closes stdin; returns
/// the exit code.
pub fn run(args: &McpArgs) -> Result<u8, CliError> {
    // As `serve`: SIGTERM, SIGINT and SIGHUP end every jail of the session, set up before the
    // runtime below starts other threads.
    let Some(session) = crate::serve::Session::start(&args.jail)? else {
        return Ok(exit::REFUSED);
    };
    let shell = Arc::new(JailedShell {
        workspace: session.ctx.cwd.display().to_string(),
        launcher: session.launcher,
        session: session.preparation,
        plan: session.plan,
        host_env: cordon_env::host_snapshot(),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(CONCURRENT_CALLS + 1)
        .build()
        .map_err(CliError::Runtime)?;
    let outcome = runtime.block_on(async move {
        let server = Server {
            shell,
            places: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_CALLS)),
        };
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| CliError::Mcp(Box::new(e)))?;
        running
            .waiting()
            .await
            .map_err(|e| CliError::Mcp(Box::new(e)))?;
        Ok::<(), CliError>(())
    });
    // A read of stdin may still be pending in a blocking thread; nothing is left to wait for.
    runtime.shutdown_background();
    outcome.map(|()| 0)
}

/// What every call shares: the session's launcher, plan and walk.
struct JailedShell {
    workspace: String,
    launcher: Launcher,
    session: Preparation,
    plan: Plan,
    host_env: Vec<(OsString, OsString)>,
}

/// The arguments of the tool `run`.
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RunCall {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Wall-clock seconds, at most the session's timeout.
    #[serde(default)]
    pub timeout: Option<u64>,
}

impl RunCall {
    /// Reads and checks a call's arguments; the error says what is wrong in words a model can
    /// act on.
    pub fn parse(arguments: Option<JsonObject>) -> Result<RunCall, String> {
        let value = serde_json::Value::Object(arguments.unwrap_or_default());
        let call: RunCall = serde_json::from_value(value).map_err(|e| {
            format!(
                "the arguments of `{TOOL}` are {{\"argv\": [program, args...], \"timeout\": seconds (optional)}}: {e}"
            )
        })?;
        if call.argv.is_empty() {
            return Err("`argv` is empty: nothing to run".into());
        }
        if call.timeout == Some(0) {
            return Err("`timeout` is 0: give at least one second".into());
        }
        Ok(call)
    }
}

/// The timeout a call runs with: the session's, shortened by the call's own.
pub fn effective_timeout(session: Option<u64>, call: Option<u64>) -> Option<u64> {
    match (session, call) {
        (Some(s), Some(c)) => Some(s.min(c)),
        (None, c) => c,
        (s, None) => s,
    }
}

impl JailedShell {
    /// Runs one call to completion (blocking): the floor first, as `cordon run` does, then a
    /// jail of its own. Returns the structured result and whether it is a tool error.
    fn call(&self, call: RunCall) -> (serde_json::Value, bool) {
        let argv: Vec<OsString> = call.argv.into_iter().map(OsString::from).collect();
        if let Some(refusal) = crate::check::floor_refusal(&argv) {
            return (refusal, true);
        }
        let timeout = effective_timeout(self.plan.limits.timeout_secs, call.timeout);
        let shortened;
        let plan = if timeout == self.plan.limits.timeout_secs {
            &self.plan
        } else {
            // A plan of its own: it no longer fits the jail built ahead, which is discarded
            // and this call runs cold (session/warm.rs compares plans).
            let mut plan = self.plan.clone();
            plan.limits.timeout_secs = timeout;
            shortened = plan;
            &shortened
        };
        let request = RunRequest {
            plan,
            argv: &argv,
            host_env: &self.host_env,
            forward: Forward::No,
            inherit_stdin: false,
        };
        match self.launcher.run_prepared(&request, &self.session) {
            Ok(result) => {
                for w in &result.warnings {
                    eprintln!("cordon: WARNING: {w}");
                }
                let finished = matches!(result.status, cordon_launch::RunStatus::Exited);
                match serde_json::to_value(&result) {
                    Ok(value) => (value, !finished),
                    Err(e) => (
                        error_object(&format!("cannot encode the result: {e}")),
                        true,
                    ),
                }
            }
            Err(e) => (error_object(&e.to_string()), true),
        }
    }
}

/// The answer to a call that could not run: `serve`'s error object.
fn error_object(message: &str) -> serde_json::Value {
    serde_json::json!({ "error": message, "exit_code": exit::CANNOT_RUN })
}

/// The MCP side: the tool list and its calls, each handed to a blocking thread.
struct Server {
    shell: Arc<JailedShell>,
    places: Arc<tokio::sync::Semaphore>,
}

impl Server {
    fn tool(&self) -> Tool {
        let bound = match self.shell.plan.limits.timeout_secs {
            Some(secs) => format!("at most {secs}, the server's own timeout"),
            None => "none unless given".to_owned(),
        };
        let description = format!(
            "Run one command (no shell unless argv names one) in a kernel-enforced jail of its own \
             for the workspace {}: it can write the workspace and read the toolchains, not the \
             user's credentials; no network unless the server was started with one. The result \
             is cordon's run object: status, exit_code, stdout and stderr (text, truncated, bytes), \
             violations (what the jail refused), refusal.",
            self.shell.workspace
        );
        let input = object(serde_json::json!({
            "type": "object",
            "properties": {
                "argv": {
                    "type": "array", "items": {"type": "string"}, "minItems": 1,
                    "description": "The program and its arguments, e.g. [\"sh\", \"-c\", \"make test\"]"
                },
                "timeout": {
                    "type": "integer", "minimum": 1,
                    "description": format!("Wall-clock seconds before the whole command is killed ({bound})")
                }
            },
            "required": ["argv"],
            "additionalProperties": false
        }));
        Tool::new(TOOL, description, Arc::new(input))
            .with_raw_output_schema(Arc::new(output_schema()))
            .with_annotations(
                ToolAnnotations::with_title("Run a command in cordon's jail")
                    .read_only(false)
                    .destructive(true)
                    .idempotent(false)
                    .open_world(false),
            )
    }
}

/// The structured content's schema: the fields a client may rely on, every one optional so an
/// error object (`{"error", "exit_code"}`) and fields added later conform too.
fn output_schema() -> JsonObject {
    let stream = serde_json::json!({
        "type": "object",
        "properties": {
            "text": {"type": "string"}, "truncated": {"type": "boolean"}, "bytes": {"type": "integer"}
        }
    });
    object(serde_json::json!({
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["exited", "signaled", "timeout", "refused"]},
            "exit_code": {"type": "integer"},
            "stdout": stream,
            "stderr": stream,
            "violations": {"type": "array", "items": {"type": "object"}},
            "refusal": {"type": ["string", "null"]},
            "error": {"type": "string"}
        }
    }))
}

/// A JSON object literal as rmcp's map type (every literal above is an object).
fn object(value: serde_json::Value) -> JsonObject {
    match value {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("cordon", env!("CARGO_PKG_VERSION"))
                    .with_title("cordon: commands in a kernel-enforced jail"),
            )
            .with_instructions(format!(
                "The tool `{TOOL}` runs a command in a jail of its own for the workspace {}. \
                 Read `violations` and `refusal` in its result: they say what the jail refused.",
                self.shell.workspace
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool named {:?}: this server has one, `{TOOL}`",
                    request.name
                ),
                None,
            ));
        }
        let call = match RunCall::parse(request.arguments) {
            Ok(call) => call,
            Err(message) => {
                return Ok(CallToolResult::structured_error(error_object(&message)).into());
            }
        };
        let place =
            self.places.clone().acquire_owned().await.map_err(|e| {
                ErrorData::internal_error(format!("the server is closing: {e}"), None)
            })?;
        let shell = Arc::clone(&self.shell);
        let (value, is_error) = tokio::task::spawn_blocking(move || {
            let answer = shell.call(call);
            drop(place);
            answer
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the call did not finish: {e}"), None))?;
        let result = if is_error {
            CallToolResult::structured_error(value)
        } else {
            CallToolResult::structured(value)
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: serde_json::Value) -> Option<JsonObject> {
        Some(object(value))
    }

    #[test]
    fn a_call_names_argv_and_may_name_a_timeout() {
        let call =
            RunCall::parse(args(serde_json::json!({"argv": ["true"], "timeout": 3}))).unwrap();
        assert_eq!(
            call,
            RunCall {
                argv: vec!["true".into()],
                timeout: Some(3)
            }
        );
        let call = RunCall::parse(args(serde_json::json!({"argv": ["ls", "-l"]}))).unwrap();
        assert_eq!(call.timeout, None);
    }

    #[test]
    fn bad_calls_say_what_is_wrong() {
        for (value, expected) in [
            (serde_json::json!({}), "missing field `argv`"),
            (serde_json::json!({"argv": []}), "`argv` is empty"),
            (serde_json::json!({"argv": "ls"}), "invalid type"),
            (serde_json::json!({"argv": ["ls", 1]}), "invalid type"),
            (
                serde_json::json!({"argv": ["ls"], "timeout": 0}),
                "`timeout` is 0",
            ),
            (
                serde_json::json!({"argv": ["ls"], "timeout": -1}),
                "invalid value",
            ),
            (
                serde_json::json!({"argv": ["ls"], "cwd": "/"}),
                "unknown field `cwd`",
            ),
        ] {
            let err = RunCall::parse(args(value.clone())).unwrap_err();
            assert!(err.contains(expected), "{value}: {err}");
        }
        let err = RunCall::parse(None).unwrap_err();
        assert!(err.contains("missing field `argv`"), "{err}");
    }

    #[test]
    fn a_call_only_shortens_the_sessions_timeout() {
        assert_eq!(effective_timeout(Some(600), Some(5)), Some(5));
        assert_eq!(effective_timeout(Some(600), Some(6000)), Some(600));
        assert_eq!(effective_timeout(Some(600), None), Some(600));
        assert_eq!(effective_timeout(None, Some(7)), Some(7));
        assert_eq!(effective_timeout(None, None), None);
    }
}
