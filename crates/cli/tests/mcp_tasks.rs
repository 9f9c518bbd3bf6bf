//! Long runs on protocol 2026-07-28, spoken to as raw lines: a foreground call that outlives
//! `auto_yield_ms` becomes a task for a client with the tasks extension (also when it is the approved
//! retry of an `input_required` result); `tasks/get` reports the job's new output; `tasks/*` without
//! the extension is `-32021`; `tasks/update` never reaches the job; and a cancelled foreground call
//! stops its whole process tree.

mod common;
mod mcp_lines;

use serde_json::{Value, json};

use mcp_lines::{Server, eventually, tasks_capability};

/// A server whose foreground calls become jobs after 300 ms.
fn yielding_server() -> Server {
    Server::with_config("auto_yield_ms = 300\n")
}

/// A command that prints `one`, then `two` once the file `go` exists, then `three` once `go2` does.
const STAGED: &str = "echo one; until [ -e go ]; do sleep 0.02; done; echo two; \
                      until [ -e go2 ]; do sleep 0.02; done; echo three";

fn task_get(server: &mut Server, task_id: &str, capabilities: &Value) -> Value {
    server.modern("tasks/get", &json!({"taskId": task_id}), capabilities)
}

/// `tasks/get` until the task's state satisfies `done`; that state.
fn task_until(server: &mut Server, task_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    let reached = eventually(|| {
        last = task_get(server, task_id, &tasks_capability());
        done(&last)
    });
    assert!(reached, "the task never got there: {last}");
    last
}

fn touch(server: &Server, name: &str) {
    std::fs::write(server.path().join(name), "").unwrap();
}

/// The id of the task a call answered.
fn task_of(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    assert_eq!(answer["result"]["status"], "working", "{answer}");
    answer["result"]["taskId"].as_str().expect("a task id").to_owned()
}

#[test]
fn tasks_get_reports_the_output_printed_since_the_last_get() {
    let mut server = yielding_server();
    let call = json!({"name": "bash", "arguments": {"command": STAGED}});
    let created = server.modern("tools/call", &call, &tasks_capability());
    let task = task_of(&created);
    // What the command printed by then is in the task's first message, or the next one's.
    let mut shown = created["result"]["statusMessage"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let first = eventually(|| {
        let state = task_get(&mut server, &task, &tasks_capability());
        shown += state["result"]["statusMessage"].as_str().unwrap_or("");
        !shown.is_empty()
    });
    assert!(first && shown == "one\n", "{shown:?}");

    touch(&server, "go");
    let second = task_until(&mut server, &task, |s| s["result"]["statusMessage"].is_string());
    assert_eq!(second["result"]["status"], "working", "{second}");
    assert_eq!(second["result"]["statusMessage"], "two\n", "{second}");
    // Nothing new since: no message, and `two` is not repeated.
    let quiet = task_get(&mut server, &task, &tasks_capability());
    assert_eq!(quiet["result"]["status"], "working", "{quiet}");
    assert!(quiet["result"].get("statusMessage").is_none(), "{quiet}");

    touch(&server, "go2");
    let done = task_until(&mut server, &task, |s| s["result"]["status"] != "working");
    let done = &done["result"];
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.starts_with("one\ntwo\nthree\n"), "{done}");
}

#[test]
fn tasks_methods_need_the_extension_in_either_era() {
    let mut modern = yielding_server();
    let call = json!({"name": "bash", "arguments": {"command": STAGED}});
    let task = task_of(&modern.modern("tools/call", &call, &tasks_capability()));
    let none = json!({});
    for (method, params) in [
        ("tasks/get", json!({"taskId": task})),
        ("tasks/cancel", json!({"taskId": task})),
        ("tasks/update", json!({"taskId": task, "inputResponses": {}})),
    ] {
        let refused = modern.modern(method, &params, &none);
        assert_eq!(refused["error"]["code"], -32021, "{method}: {refused}");
    }
    // The refused cancel did not cancel.
    let state = task_get(&mut modern, &task, &tasks_capability());
    assert_eq!(state["result"]["status"], "working", "{state}");

    let mut legacy = yielding_server();
    legacy.initialize();
    let refused = legacy.request("tasks/get", &json!({"taskId": "any"}));
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}

#[test]
fn tasks_update_never_writes_to_the_job() {
    let mut server = yielding_server();
    // Whatever reaches its stdin is echoed once `go` exists.
    let command = "until [ -e go ]; do sleep 0.02; done; cat; echo end";
    let call = json!({"name": "bash", "arguments": {"command": command}});
    let task = task_of(&server.modern("tools/call", &call, &tasks_capability()));
    let update = json!({"taskId": task, "inputResponses": {"stdin": "sneaked in\n"}});
    let refused = server.modern("tasks/update", &update, &tasks_capability());
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("process")),
        "{refused}"
    );
    let state = task_get(&mut server, &task, &tasks_capability());
    assert_eq!(state["result"]["status"], "working", "{state}");

    touch(&server, "go");
    let done = task_until(&mut server, &task, |s| s["result"]["status"] != "working");
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let text = done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.starts_with("end"), "{done}");
    assert!(!done.to_string().contains("sneaked"), "{done}");
}

#[test]
fn an_approved_retry_that_outlives_auto_yield_becomes_a_task() {
    let mut server = yielding_server();
    let mut capabilities = tasks_capability();
    capabilities["elicitation"] = json!({});
    let call = json!({"name": "bash", "arguments": {"command": STAGED, "ask": "always"}});
    let asked = server.modern("tools/call", &call, &capabilities);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let mut retry = call.clone();
    retry["requestState"] = asked["result"]["requestState"].clone();
    retry["inputResponses"] =
        json!({"approval": {"action": "accept", "content": {"decision": "allow-once"}}});
    let task = task_of(&server.modern("tools/call", &retry, &capabilities));

    touch(&server, "go");
    touch(&server, "go2");
    let done = task_until(&mut server, &task, |s| s["result"]["status"] != "working");
    let done = &done["result"];
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("one\ntwo\nthree\n"), "{done}");
}

#[test]
fn a_cancelled_foreground_call_on_2026_07_28_stops_its_process_tree() {
    let mut server = Server::start();
    let command = "echo begun; sleep 30.81 & sleep 30.82; wait";
    let call = json!({"name": "bash", "arguments": {"command": command}});
    let params = Server::modern_params(&call, &json!({}), &json!({}));
    let id = server.start_request("tools/call", &params);
    common::wait_for_argument("30.81");
    common::wait_for_argument("30.82");
    server.send(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the person stopped it"},
    }));
    let stopped =
        eventually(|| !common::a_process_has_argument("30.81") && !common::a_process_has_argument("30.82"));
    assert!(stopped, "the cancelled call's processes still run");

    // What it printed is in the next result (noted once the call has wound up).
    let list = json!({"name": "process", "arguments": {"action": "list"}});
    let noted = eventually(|| {
        let next = server.modern("tools/call", &list, &json!({}));
        next.to_string().contains("output so far: begun")
    });
    assert!(noted, "no result tells what the cancelled call printed");
}

#[test]
fn tasks_cancel_stops_the_whole_tree_of_the_task() {
    let mut server = yielding_server();
    // A background child, a grandchild in a session of its own, and the foreground sleep.
    let command = "sleep 30.71 & setsid sleep 30.72 & sleep 30.73; echo never";
    let call = json!({"name": "bash", "arguments": {"command": command}});
    let task = task_of(&server.modern("tools/call", &call, &tasks_capability()));
    for word in ["30.71", "30.72", "30.73"] {
        common::wait_for_argument(word);
    }
    let cancelled = server.modern("tasks/cancel", &json!({"taskId": task}), &tasks_capability());
    assert!(cancelled["error"].is_null(), "{cancelled}");
    let stopped = eventually(|| {
        ["30.71", "30.72", "30.73"]
            .iter()
            .all(|word| !common::a_process_has_argument(word))
    });
    assert!(stopped, "a process of the cancelled task still runs");
    let done = task_until(&mut server, &task, |s| s["result"]["status"] != "working");
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
    assert!(!done.to_string().contains("never"), "{done}");
}
