//! The MCP tool list: names, descriptions that state the engine's limits exactly (taken from the
//! configuration in force, so they never drift from what a call does), and portable input schemas.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;
use shellgate::{BashParams, ProcessParams, ToolConfig};

use super::artifacts::{self, ArtifactParams};
use super::schema::input_schema;

/// Name of the tool that runs commands.
pub const BASH: &str = "bash";
/// Name of the tool that controls background jobs.
pub const PROCESS: &str = "process";
/// Name of the tool that reads artifacts.
pub const ARTIFACT: &str = "artifact";
/// Name of the tool that answers pending approvals.
pub const APPROVE: &str = "approve";

/// Arguments of the `approve` tool.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveToolParams {
    /// The approval id (full or short) from an `approval_pending` result.
    pub id: String,
    /// `allow-once`, `allow-always` or `deny`.
    pub decision: String,
}

const APPROVE_DESCRIPTION: &str = "Answer a pending approval with a person's decision: `allow-once` runs exactly \
that request, `allow-always` also allows the same exact commands from now on, `deny` does not run it. \
Call it only with the decision the person gave; never decide on your own.";

/// Seconds of a duration as a short number (`300`, `0.5`).
fn secs(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s}")
    }
}

/// Bytes as KiB when they divide evenly (the window sizes are).
fn size(bytes: usize) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// What the description says about the command policy in force.
fn policy_sentence(config: &ToolConfig) -> String {
    let Some(policy) = &config.policy else {
        return "Commands are not judged by a policy.".to_owned();
    };
    format!(
        "Commands are judged before they run (security = \"{}\", ask = \"{}\"): a refused one returns \
         status \"blocked\" with the rule and reason, one that needs a person's approval returns \
         \"approval_pending\" (where the client can ask the person itself, the person is asked — \
         while the call waits, or in a question the client answers by repeating the call — and the \
         result is the run's or \"blocked\"); an unapproved command never runs. `security`/`ask` may make one call stricter, never looser. \
         Variables such as PATH, LD_* or BASH_ENV in `env` are refused.",
        policy.security().as_str(),
        policy.ask().as_str()
    )
}

/// The `bash` tool's description for `config`.
pub fn bash_description(config: &ToolConfig) -> String {
    let session = if config.default_session == shellgate::NO_SESSION {
        "Each command runs in a fresh shell unless `session` names a persistent one.".to_owned()
    } else {
        format!(
            "Commands run in the persistent shell session `{}` unless `session` names another \
             (`\"none\"`: a fresh shell): variables, functions, aliases and the working directory \
             carry over between calls.",
            config.default_session
        )
    };
    format!(
        "Run a shell command with bash and return its output (stdout and stderr combined, cleaned of \
         terminal escapes and progress-bar overwrites). {session}\n\
         Timeout: `timeout` seconds, default {default}, clamped to {min}..{max}; on timeout the \
         command's whole process tree is stopped and the output so far is returned.\n\
         Output: when it exceeds the window, the first {head} and the last {tail} are shown (whole \
         lines) with a notice `[Showing lines A-B and C-D of N. Full output: artifact://<id>]`; the \
         full output is kept as that artifact, readable with the `{artifact}` tool or as a resource. \
         `head`/`tail` show only the first/last N lines.\n\
         Long-running work: `background: true` starts the command as a background job and returns at \
         once with its job id; `yield_ms: N` runs it in the foreground and, if it is still running \
         after N ms ({min_yield}..{max_yield} ms), leaves it running as a background job and returns \
         what it printed so far. Jobs keep the timeout. Follow up with the `{process}` tool (poll, \
         log, write, kill); a job's exit is noted in the next result.\n\
         The result is an error (isError) for a non-zero exit code, a timeout, a cancellation, a \
         blocked command or a failure to start; structuredContent carries status, exit_code, output, \
         truncation, artifact, cwd, duration_ms, notices and job_id. While a command runs, its output \
         is sent as progress notifications when the request has a progress token.\n\
         {policy}",
        policy = policy_sentence(config),
        default = secs(config.default_timeout),
        min = secs(config.min_timeout),
        max = secs(config.max_timeout),
        head = size(config.window.head_bytes),
        tail = size(config.window.tail_bytes),
        min_yield = config.jobs.min_yield.as_millis(),
        max_yield = config.jobs.max_yield.as_millis(),
        artifact = ARTIFACT,
        process = PROCESS,
    )
}

/// The `process` tool's description for `config`.
pub fn process_description(config: &ToolConfig) -> String {
    format!(
        "Inspect and control the background jobs that `{BASH}` started (`background` or `yield_ms`) \
         and the persistent shell sessions. Actions: `list`; `poll` (output since the last poll, \
         waiting up to `wait_ms` ≤ {max_wait} ms for new output or the exit; after input, for the \
         program's answer: `settled` is `waiting_for_input`, `exited`, `quiet` or `timeout`); `log` (lines by \
         `offset`/`limit`, default the last {log_lines}); `write` (`data` to stdin, `eof` closes it); \
         `send_keys`, `submit`, `paste` (terminals); `kill` (SIGINT, then SIGTERM, then SIGKILL to \
         the whole process tree, or the given `signal`); `remove`; `clear`; `screen` and `resize` \
         (PTY jobs); `sessions`; `close_session`. Failures (unknown job, closed stdin) are error \
         results. Job exits that were not reported yet are noted at the end of the result.",
        max_wait = config.jobs.max_poll_wait.as_millis(),
        log_lines = config.jobs.log_default_lines,
    )
}

/// `bash` may do anything a shell can: write, delete, reach the network; running it twice is two
/// runs. A client that prompts on destructive tools prompts here; the policy and approvals still
/// judge every command, whatever the client does with the hint.
fn bash_annotations() -> ToolAnnotations {
    ToolAnnotations::with_title("Run a shell command")
        .read_only(false)
        .destructive(true)
        .idempotent(false)
        .open_world(true)
}

/// `process` reads jobs' output but also writes to their stdin and kills them: not read-only, and
/// a kill is destructive. It touches only jobs this server started (a closed world).
fn process_annotations() -> ToolAnnotations {
    ToolAnnotations::with_title("Background jobs")
        .read_only(false)
        .destructive(true)
        .idempotent(false)
        .open_world(false)
}

/// `approve` changes what may run (and `allow-always` persists a rule); it is the kind of call a
/// client should never auto-approve.
fn approve_annotations() -> ToolAnnotations {
    ToolAnnotations::with_title("Answer an approval")
        .read_only(false)
        .destructive(true)
        .idempotent(false)
        .open_world(false)
}

/// The tools for `config`: `bash`, `process`, `artifact`, and `approve` only when
/// `[approvals] mcp_approve_tool` offers it (the model would otherwise answer its own approvals).
///
/// No tool declares an `outputSchema` (the protocol makes it optional). A client that sees one
/// checks every successful result's `structuredContent` against it: the Python SDK runs jsonschema
/// on each call, about 80 µs for a flat schema of the eight core `bash` fields and still 13 µs for
/// `status` alone, more than its whole parse of a `true` result (about 45 µs) and a fifth of the
/// server's own round trip. The field list is in the `bash` description instead, which is what a
/// model reads.
pub fn list(config: &ToolConfig) -> Vec<Tool> {
    let timeout = config.default_timeout;
    let timeout_default = if timeout.subsec_nanos() == 0 {
        Value::from(timeout.as_secs())
    } else {
        Value::from(timeout.as_secs_f64())
    };
    let bash_defaults = [
        ("timeout", timeout_default),
        ("session", Value::from(config.default_session.clone())),
        ("pty", Value::from(false)),
        ("background", Value::from(false)),
    ];
    let process_defaults = [("eof", Value::from(false))];
    let mut tools = vec![
        Tool::new(
            BASH,
            bash_description(config),
            Arc::new(input_schema::<BashParams>(&bash_defaults)),
        )
        .with_title("Run a shell command")
        .with_annotations(bash_annotations()),
        Tool::new(
            PROCESS,
            process_description(config),
            Arc::new(input_schema::<ProcessParams>(&process_defaults)),
        )
        .with_title("Background jobs")
        .with_annotations(process_annotations()),
        Tool::new(
            ARTIFACT,
            artifacts::description(),
            Arc::new(input_schema::<ArtifactParams>(&artifacts::schema_defaults())),
        )
        .with_title("Read command output")
        .with_annotations(
            // Reads what this server stored, the same answer every time.
            ToolAnnotations::with_title("Read command output")
                .read_only(true)
                .idempotent(true)
                .open_world(false),
        ),
    ];
    if config.approvals.mcp_approve_tool {
        tools.push(
            Tool::new(
                APPROVE,
                APPROVE_DESCRIPTION,
                Arc::new(input_schema::<ApproveToolParams>(&[])),
            )
            .with_title("Answer an approval")
            .with_annotations(approve_annotations()),
        );
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_state_the_configured_limits() {
        let config = ToolConfig::default();
        let text = bash_description(&config);
        for needle in [
            "default 300, clamped to 1..3600",
            "first 20 KiB and the last 50 KiB",
            "artifact://<id>",
            "`background: true`",
            "`yield_ms: N`",
            "isError",
            "security = \"full\", ask = \"on-miss\"",
            "approval_pending",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in {text}");
        }
        let short = ToolConfig {
            default_timeout: std::time::Duration::from_secs(30),
            ..ToolConfig::default()
        };
        assert!(bash_description(&short).contains("default 30,"));
    }

    #[test]
    fn every_tool_has_an_object_schema_with_defaults() {
        let tools = list(&ToolConfig::default());
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, [BASH, PROCESS, ARTIFACT]);
        for tool in &tools {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        }
        assert_eq!(tools[0].input_schema["properties"]["timeout"]["default"], 300);
        assert_eq!(tools[2].input_schema["properties"]["limit"]["default"], 2000);
    }

    #[test]
    fn no_tool_makes_clients_validate_its_results() {
        let mut config = ToolConfig::default();
        config.approvals.mcp_approve_tool = true;
        for tool in list(&config) {
            assert!(
                tool.output_schema.is_none(),
                "{} declares an outputSchema",
                tool.name
            );
            let listed = serde_json::to_value(&tool).expect("a tool serializes");
            assert!(listed.get("outputSchema").is_none(), "{listed:#}");
        }
    }

    #[test]
    fn every_tool_states_its_hints() {
        let mut config = ToolConfig::default();
        config.approvals.mcp_approve_tool = true;
        let hints: Vec<(String, Value)> = list(&config)
            .iter()
            .map(|t| {
                let listed = serde_json::to_value(t).unwrap();
                let a = &listed["annotations"];
                let four = serde_json::json!([
                    a["readOnlyHint"],
                    a["destructiveHint"],
                    a["idempotentHint"],
                    a["openWorldHint"]
                ]);
                (t.name.to_string(), four)
            })
            .collect();
        let expected = [
            (BASH, serde_json::json!([false, true, false, true])),
            (PROCESS, serde_json::json!([false, true, false, false])),
            (ARTIFACT, serde_json::json!([true, null, true, false])),
            (APPROVE, serde_json::json!([false, true, false, false])),
        ];
        for ((name, got), (want_name, want)) in hints.iter().zip(expected) {
            assert_eq!((name.as_str(), got), (want_name, &want));
        }
    }

    #[test]
    fn the_approve_tool_is_offered_only_when_configured() {
        let mut config = ToolConfig::default();
        config.approvals.mcp_approve_tool = true;
        let tools = list(&config);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, [BASH, PROCESS, ARTIFACT, APPROVE]);
        assert_eq!(
            tools[3].input_schema["required"],
            serde_json::json!(["id", "decision"])
        );
    }
}
