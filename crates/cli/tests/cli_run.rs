//! End-to-end tests of `shellgate run` and `shellgate rpc` through the real binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;

fn shellgate() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"));
    // Keep the tests' spilled outputs out of the user's own artifact store.
    cmd.env(
        "SHELLGATE_ARTIFACT_DIR",
        std::env::temp_dir().join("shellgate-cli-test-artifacts"),
    );
    cmd
}

/// A `shellgate rpc` server with piped stdin (returned) and stdout (left in the child).
fn rpc_server() -> (std::process::Child, std::process::ChildStdin) {
    let mut child = shellgate()
        .arg("rpc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

fn run_json(args: &[&str]) -> Value {
    let out = shellgate().arg("run").arg("--json").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "engine failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().count(),
        1,
        "exactly one JSON object expected: {text}"
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn json_result_has_the_contract_fields() {
    let v = run_json(&["echo hello; echo oops >&2; exit 3"]);
    assert_eq!(v["status"], "completed");
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["is_error"], true);
    let output = v["output"].as_str().unwrap();
    let (hello, oops) = (output.find("hello").unwrap(), output.find("oops").unwrap());
    assert!(hello < oops, "{output}");
    assert!(v["duration_ms"].is_u64());
    assert_eq!(v["cwd"], std::env::current_dir().unwrap().display().to_string());
    for field in [
        "signal",
        "truncation",
        "artifact",
        "notices",
        "job_id",
        "pipeline_status",
        "blocked",
    ] {
        assert!(v.get(field).is_some(), "missing {field}");
    }
}

#[test]
fn human_mode_prints_output_and_mirrors_exit_code() {
    let out = shellgate().args(["run", "seq 1 5"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n2\n3\n4\n5\n");
    let out = shellgate().args(["run", "exit 4"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn words_after_double_dash_are_joined() {
    let v = run_json(&["--", "echo", "a", "-n", "b"]);
    assert_eq!(v["output"], "a -n b\n");
}

#[test]
fn options_cwd_env_and_limits_apply() {
    let dir = std::env::temp_dir();
    let v = run_json(&[
        "--cwd",
        dir.to_str().unwrap(),
        "--env",
        "SG_TEST_V=42",
        "--head",
        "2",
        "pwd; echo $SG_TEST_V; echo 3",
    ]);
    let expected = format!("{}\n42\n", std::fs::canonicalize(&dir).unwrap().display());
    assert_eq!(v["output"], expected.as_str());
    let v = run_json(&["--cwd", "/definitely/not/here", "true"]);
    assert_eq!(v["status"], "failed_to_start");
    assert!(
        v["output"]
            .as_str()
            .unwrap()
            .contains("Working directory does not exist")
    );
}

#[test]
fn bad_arguments_are_clear_errors() {
    let out = shellgate()
        .args(["run", "--env", "NOEQ", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("K=V"));
    let out = shellgate().args(["run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn timeout_returns_promptly_and_leaves_nothing_behind() {
    let start = Instant::now();
    let v = run_json(&["--timeout", "1", "sleep 981.731"]);
    // Far below the sleep's 981 s, with room for a loaded machine.
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(v["status"], "timed_out");
    assert_eq!(v["is_error"], true);
    let survivors = Command::new("pgrep")
        .args(["-f", "sleep 981.731"])
        .output()
        .unwrap();
    assert!(
        survivors.stdout.is_empty(),
        "survivor: {}",
        String::from_utf8_lossy(&survivors.stdout)
    );
    let human = shellgate()
        .args(["run", "--timeout", "1", "sleep 981.732"])
        .output()
        .unwrap();
    assert_eq!(human.status.code(), Some(124));
    assert!(String::from_utf8_lossy(&human.stdout).contains("[Command timed out after 1 seconds]"));
}

#[test]
fn rpc_serves_requests_concurrently_and_survives_garbage() {
    let (mut child, mut stdin) = rpc_server();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"bash","params":{{"command":"sleep 1.5; echo slow"}}}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"bash","params":{{"command":"echo fast; exit 3"}}}}"#
    )
    .unwrap();
    writeln!(stdin, "this is not json").unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":3,"method":"nope"}}"#).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":4,"method":"bash","params":{{"cmd":"x"}}}}"#
    )
    .unwrap();
    drop(stdin);
    let replies: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.wait().unwrap().success());
    let order: Vec<Value> = replies.iter().map(|r| r["id"].clone()).collect();
    let pos = |id: i64| order.iter().position(|v| v.as_i64() == Some(id)).unwrap();
    assert!(pos(2) < pos(1), "fast request must be answered first: {order:?}");
    assert_eq!(replies[pos(1)]["result"]["output"], "slow\n");
    // Next to the fields, the text a model should see.
    let text = replies[pos(2)]["result"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("fast\n") && text.contains("exited with code 3"),
        "{text:?}"
    );
    assert!(
        replies
            .iter()
            .any(|r| r["id"].is_null() && r["error"]["code"] == -32700)
    );
    assert_eq!(replies[pos(3)]["error"]["code"], -32601);
    assert_eq!(replies[pos(4)]["error"]["code"], -32602);
}

#[test]
fn rpc_abort_cancels_a_running_request() {
    let (mut child, mut stdin) = rpc_server();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Warm the default session first, so the long command is surely running when the abort arrives.
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"bash","params":{{"command":"true"}}}}"#
    )
    .unwrap();
    let mut warm = String::new();
    stdout.read_line(&mut warm).unwrap();
    assert!(warm.contains(r#""id":0"#), "{warm}");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":"long","method":"bash","params":{{"command":"echo started; sleep 982.113"}}}}"#)
        .unwrap();
    common::wait_for_argument("982.113");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":9,"method":"abort","params":{{"id":"long"}}}}"#
    )
    .unwrap();
    drop(stdin);
    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    child.wait().unwrap();
    let long = replies.iter().find(|r| r["id"] == "long").unwrap();
    assert_eq!(long["result"]["status"], "cancelled");
    assert_eq!(long["result"]["output"], "started\n");
    let abort = replies.iter().find(|r| r["id"] == 9).unwrap();
    assert_eq!(abort["result"]["aborted"], true);
    let survivors = Command::new("pgrep")
        .args(["-f", "sleep 982.113"])
        .output()
        .unwrap();
    assert!(survivors.stdout.is_empty());
}

#[test]
fn config_prints_the_effective_configuration_and_rejects_bad_files() {
    let dir = tempfile_dir();
    let file = dir.join("c.toml");
    std::fs::write(&file, "timeout = 42\nsession = 'work'\n").unwrap();
    let out = shellgate()
        .args(["config", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("timeout = 42.0"), "{text}");
    assert!(text.contains("session = \"work\""), "{text}");
    std::fs::write(&file, "timeout = 'soon'\n").unwrap();
    let out = shellgate()
        .args(["run", "--config"])
        .arg(&file)
        .arg("true")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("c.toml"));
    let _ = std::fs::remove_dir_all(dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("shellgate-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn leading_cd_is_lifted_or_kept_when_a_cwd_is_given() {
    let v = run_json(&["cd /usr && pwd"]);
    assert_eq!(v["output"], "/usr\n");
    assert_eq!(v["cwd"], "/usr");
    let v = run_json(&["--cwd", "/", "cd usr && pwd"]);
    assert_eq!(v["output"], "/usr\n", "the script's own cd still runs: {v}");
}

#[test]
fn trailing_limiter_is_applied_by_the_tool_and_quoted_text_is_untouched() {
    let v = run_json(&["seq 1 100 | head -n 5"]);
    assert_eq!(v["output"], "1\n2\n3\n4\n5\n");
    let notices = v["notices"].to_string();
    assert!(notices.contains("applied by the tool"), "{notices}");
    let v = run_json(&["echo \"a | head -n 1\""]);
    assert_eq!(v["output"], "a | head -n 1\n");
}

#[test]
fn large_output_spills_to_an_artifact_readable_from_another_process() {
    let v = run_json(&["seq 1 300000"]);
    let t = &v["truncation"];
    assert_eq!(t["total_lines"], 300_000);
    let output = v["output"].as_str().unwrap();
    assert!(output.starts_with("1\n2\n") && output.ends_with("299999\n300000\n"));
    let id = v["artifact"].as_str().expect("an artifact").to_owned();
    assert!(id.starts_with("artifact://"));
    let out = shellgate().args(["artifact", "read", &id]).output().unwrap();
    assert!(out.status.success());
    let expected = (1..=300_000).fold(String::new(), |mut acc, i| {
        use std::fmt::Write as _;
        let _ = writeln!(acc, "{i}");
        acc
    });
    assert!(
        out.stdout == expected.as_bytes(),
        "artifact bytes differ from seq output"
    );
    let long = run_json(&["python3 -c \"print('A'*300000); print('TAIL')\""]);
    let text = long["output"].as_str().unwrap();
    assert!(
        text.contains("TAIL") && text.len() < 100_000,
        "{} bytes",
        text.len()
    );
}

#[test]
fn head_then_tail_apply_to_the_whole_stream() {
    // The window keeps only both ends of 300 000 lines; the limits must still see every line.
    let v = run_json(&["--head", "100000", "--tail", "3", "seq 1 300000"]);
    assert_eq!(v["output"], "99998\n99999\n100000\n", "{}", v["notices"]);
    let notices = v["notices"].to_string();
    assert!(notices.contains("3 of 300000 lines shown"), "{notices}");
    let v = run_json(&["seq 1 300000 | tail -n 2"]);
    assert_eq!(v["output"], "299999\n300000\n");
}

#[test]
fn rpc_streams_live_output_before_the_result() {
    let (mut child, mut stdin) = rpc_server();
    let request = r#"{"jsonrpc":"2.0","id":7,"method":"bash","params":{"session":"none","command":"echo one; sleep 0.4; printf '\\033[1mtwo\\033[0m\\n'; sleep 0.4"}}"#;
    writeln!(stdin, "{request}").unwrap();
    drop(stdin);
    let messages: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    child.wait().unwrap();
    let live: String = messages
        .iter()
        .filter(|m| m["method"] == "output")
        .inspect(|m| assert_eq!(m["params"]["id"], 7))
        .map(|m| m["params"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        live, "one\ntwo\n",
        "live text is clean and complete: {messages:?}"
    );
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 7, "the result comes after every notification");
    assert_eq!(last["result"]["output"], "one\ntwo\n");
}

#[test]
fn endless_producers_under_a_lifted_head_end_at_once_with_bash_statuses() {
    for (command, output, stages) in [
        ("yes | cat | head -n 3", "y\ny\ny\n", vec![141, 141, 0]),
        (
            "python3 -c 'while True: print(1)' | head -n 2",
            "1\n1\n",
            vec![1, 0],
        ),
        ("cat /dev/zero | od -v | head -n 2", "", vec![141, 141, 0]),
    ] {
        let started = Instant::now();
        let v = run_json(&["--timeout", "60", command]);
        assert!(started.elapsed() < Duration::from_secs(10), "{command}");
        assert_eq!(v["status"], "completed", "{command}: {v}");
        assert_eq!(v["exit_code"], 0, "{command}: {v}");
        assert_eq!(v["pipeline_status"], serde_json::json!(stages), "{command}");
        if !output.is_empty() {
            assert_eq!(v["output"], output, "{command}");
        }
    }
}

#[test]
fn a_lifted_tail_reports_the_status_bash_would() {
    let v = run_json(&["sh -c 'echo out; exit 3' | tail -1"]);
    assert_eq!(
        (v["exit_code"].clone(), v["output"].clone()),
        (serde_json::json!(0), serde_json::json!("out\n"))
    );
    assert_eq!(v["pipeline_status"], serde_json::json!([3, 0]));
    let notices = v["notices"].to_string();
    assert!(notices.contains("exited with code 3"), "{notices}");
}

#[test]
fn terminal_redraws_and_long_lines_reach_the_model_whole() {
    let v = run_json(&[r"printf '\033[31mred\033[0m plain \033[2K\033[1Gdone\n'"]);
    assert_eq!(v["output"], "done\n");
    let v = run_json(&[r#"python3 -c "import sys; sys.stderr.write('x'*3000000); print('OUT')""#]);
    let output = v["output"].as_str().unwrap();
    assert!(
        output.trim_end().ends_with("OUT"),
        "{}",
        &output[output.len().saturating_sub(100)..]
    );
}
