//! `shellgate mcp` driven by MCP clients written elsewhere: the Python `mcp` SDK client and the MCP
//! Inspector CLI. Each is looked up from an environment variable or its default install location
//! under `target/` (where `.ci/run` installs them); when absent the test says so and skips, and with
//! `SHELLGATE_REQUIRE_ALL=1` a missing client is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The workspace's `target/` directory (the clients' default install location).
fn default_target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// Return `Some(path)` when the client is usable, else skip (or fail under SHELLGATE_REQUIRE_ALL=1).
fn client_or_skip(what: &str, found: Result<PathBuf, String>) -> Option<PathBuf> {
    match found {
        Ok(path) => Some(path),
        Err(why) => {
            assert!(
                std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
                "{what} is required (SHELLGATE_REQUIRE_ALL=1) but unusable: {why}"
            );
            eprintln!("skipping: {what} is not available: {why}");
            None
        }
    }
}

/// The Python interpreter of a venv with the `mcp` package: `$SHELLGATE_MCP_PYTHON`, else
/// `target/mcp-venv/bin/python`.
fn python() -> Result<PathBuf, String> {
    let python = std::env::var_os("SHELLGATE_MCP_PYTHON")
        .map_or_else(|| default_target_dir().join("mcp-venv/bin/python"), PathBuf::from);
    let probe = Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if !probe.status.success() {
        return Err(format!(
            "{} cannot import mcp: {}",
            python.display(),
            String::from_utf8_lossy(&probe.stderr).trim()
        ));
    }
    Ok(python)
}

/// The Inspector's launcher: `$SHELLGATE_MCP_INSPECTOR`, else
/// `target/mcp-inspector/node_modules/.bin/mcp-inspector` (run by `node` from PATH).
fn inspector() -> Result<PathBuf, String> {
    let path = std::env::var_os("SHELLGATE_MCP_INSPECTOR").map_or_else(
        || default_target_dir().join("mcp-inspector/node_modules/.bin/mcp-inspector"),
        PathBuf::from,
    );
    if !path.exists() {
        return Err(format!("{} does not exist", path.display()));
    }
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err("`node` is not on PATH".to_owned());
    }
    Ok(path)
}

/// Run the Python client script `name` (under `tests/mcp/`) against `shellgate mcp`; the number
/// of its checks, all of which passed.
fn run_python_checks(python: &Path, name: &str) -> u32 {
    let work = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp").join(name);
    let out = Command::new(python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_shellgate"))
        .arg(work.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{name} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // Every check ran and passed (the script's own summary line: `N passed, 0 failed`).
    let summary = stdout.lines().last().unwrap_or_default();
    summary
        .strip_suffix(" passed, 0 failed")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("bad summary {summary:?}:\n{stdout}\n{stderr}"))
}

/// The handshake era: the SDK's `ClientSession` after `initialize`, then its `Client(mode="legacy")`
/// through the same features `modern_client.py` drives on 2026-07-28 (`sdk_features.py`).
#[test]
fn python_sdk_client_drives_every_feature() {
    let Some(python) = client_or_skip("the Python mcp SDK client", python()) else {
        return;
    };
    let passed = run_python_checks(&python, "python_client.py");
    assert!(passed >= 53, "only {passed} checks ran");
}

#[test]
fn python_sdk_client_answers_approvals_through_elicitation() {
    let Some(python) = client_or_skip("the Python mcp SDK client", python()) else {
        return;
    };
    let passed = run_python_checks(&python, "elicitation_client.py");
    assert!(passed >= 18, "only {passed} checks ran");
}

/// Run the Inspector CLI against `shellgate mcp` with `args` after `--`.
fn inspect(inspector: &Path, work: &Path, args: &[&str]) -> Output {
    let artifacts = format!("SHELLGATE_ARTIFACT_DIR={}", work.join("artifacts").display());
    Command::new(inspector)
        .args(["--cli", env!("CARGO_BIN_EXE_shellgate"), "mcp", "--"])
        .args(["-e", &artifacts, "--cwd"])
        .arg(work)
        .args(args)
        .args(["--format", "json"])
        .env_remove("MCP_CATALOG_PATH")
        .current_dir(work)
        .output()
        .unwrap()
}

/// The JSON object the Inspector printed on stdout, and its exit code.
fn answer(out: &Output) -> (Value, Option<i32>) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "inspector printed no JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (value, out.status.code())
}

#[test]
fn inspector_cli_lists_calls_and_reads_resources() {
    let Some(inspector) = client_or_skip("the MCP Inspector CLI", inspector()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();

    let (init, code) = answer(&inspect(&inspector, dir, &["--method", "initialize"]));
    assert_eq!(code, Some(0), "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "shellgate", "{init}");
    assert_eq!(init["result"]["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));

    // `--strict` exits 6 on an error-severity portability problem in a tool schema.
    let (tools, code) = answer(&inspect(&inspector, dir, &["--method", "tools/list", "--strict"]));
    assert_eq!(code, Some(0), "{tools}");
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["bash", "process", "artifact"]);

    let call = |args: &[&str]| {
        let mut all = vec!["--method", "tools/call", "--tool-name", "bash"];
        all.extend_from_slice(args);
        answer(&inspect(&inspector, dir, &all))
    };
    let (ok, code) = call(&["--tool-arg", "command=echo hi from inspector"]);
    assert_eq!(code, Some(0), "{ok}");
    assert_eq!(ok["result"]["isError"], false);
    assert_eq!(ok["result"]["content"][0]["text"], "hi from inspector");
    assert_eq!(ok["result"]["structuredContent"]["exit_code"], 0);

    // A tool error is exit 5 with the result still on stdout.
    let (failed, code) = call(&["--tool-args-json", r#"{"command": "echo no; exit 3"}"#]);
    assert_eq!(code, Some(5), "{failed}");
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(failed["result"]["structuredContent"]["exit_code"], 3);

    let (big, code) = call(&["--tool-args-json", r#"{"command": "seq 1 300000"}"#]);
    assert_eq!(code, Some(0), "{big}");
    let uri = big["result"]["structuredContent"]["artifact"]
        .as_str()
        .expect("artifact")
        .to_owned();
    let (listed, code) = answer(&inspect(&inspector, dir, &["--method", "resources/list"]));
    assert_eq!(code, Some(0), "{listed}");
    let resources = listed["result"]["resources"].as_array().expect("resources");
    assert!(resources.iter().any(|r| r["uri"] == uri.as_str()), "{listed}");
    let (read, code) = answer(&inspect(
        &inspector,
        dir,
        &["--method", "resources/read", "--uri", &uri],
    ));
    assert_eq!(code, Some(0));
    let text = read["result"]["contents"][0]["text"].as_str().expect("text");
    assert!(
        text.starts_with("1\n2\n") && text.ends_with("\n300000\n"),
        "{} chars",
        text.len()
    );
}

/// Protocol 2026-07-28: the SDK's `Client(mode="2026-07-28")` through `sdk_features.py`, and what
/// only that era has.
#[test]
fn python_sdk_client_on_protocol_2026_07_28() {
    let Some(python) = client_or_skip("the Python mcp SDK client", python()) else {
        return;
    };
    let passed = run_python_checks(&python, "modern_client.py");
    assert!(passed >= 49, "only {passed} checks ran");
}

#[test]
fn python_sdk_client_follows_long_runs_as_tasks() {
    let Some(python) = client_or_skip("the Python mcp SDK client", python()) else {
        return;
    };
    let passed = run_python_checks(&python, "tasks_client.py");
    assert!(passed >= 13, "only {passed} checks ran");
}
