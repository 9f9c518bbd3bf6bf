//! `shellgate mcp` spoken to as raw lines in both protocol eras: the era is fixed by a connection's
//! first message; 2026-07-28 results carry `resultType` and cache hints and an unknown resource is
//! `-32602`; and an approval asked in an `input_required` result cannot be resumed by a replayed,
//! altered or moved request state.

mod mcp_lines;

use serde_json::{Value, json};

use mcp_lines::Server;

#[test]
fn a_connection_without_a_handshake_stays_on_2026_07_28() {
    let mut server = Server::start();
    let tools = server.modern("tools/list", &json!({}), &json!({}));
    assert_eq!(tools["result"]["resultType"], "complete", "{tools}");
    assert_eq!(tools["result"]["ttlMs"], 3_600_000, "{tools}");
    assert_eq!(tools["result"]["cacheScope"], "private", "{tools}");

    let late = server.initialize();
    assert!(
        late["error"].is_object(),
        "a late initialize was accepted: {late}"
    );
    // Still the same era: a request without `_meta` is refused.
    let bare = server.request("tools/list", &json!({}));
    assert_eq!(bare["error"]["code"], -32602, "{bare}");
}

#[test]
fn server_discover_names_both_eras_the_tasks_extension_and_the_server() {
    let mut server = Server::start();
    let found = server.modern("server/discover", &json!({}), &json!({}));
    let result = &found["result"];
    assert_eq!(result["resultType"], "complete", "{found}");
    let versions: Vec<&str> = result["supportedVersions"]
        .as_array()
        .expect("supportedVersions")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for era in ["2026-07-28", "2025-11-25", "2025-06-18"] {
        assert!(versions.contains(&era), "{era} missing: {found}");
    }
    let capabilities = &result["capabilities"];
    assert!(capabilities["tools"].is_object(), "{found}");
    assert_eq!(capabilities["resources"]["subscribe"], true, "{found}");
    assert!(
        capabilities["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{found}"
    );
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "shellgate", "{found}");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"), "{found}");
    assert!(
        result["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("bash")),
        "{found}"
    );
    // Discovery is no handshake: the next request still needs its own `_meta`, and gets its tools.
    let tools = server.modern("tools/list", &json!({}), &json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"bash") && names.contains(&"process"), "{tools}");
}

/// The cache hints of a 2026-07-28 result: `(ttlMs, cacheScope)`.
fn hints(answer: &Value) -> (Value, Value) {
    (
        answer["result"]["ttlMs"].clone(),
        answer["result"]["cacheScope"].clone(),
    )
}

#[test]
fn results_are_shaped_for_the_era_of_the_connection() {
    let mut modern = Server::start();
    let none = json!({});
    let big = json!({"name": "bash", "arguments": {"command": "seq 1 100000"}});
    let spilled = modern.modern("tools/call", &big, &none);
    let uri = spilled["result"]["structuredContent"]["artifact"]
        .as_str()
        .expect("an artifact")
        .to_owned();
    let job = json!({"name": "bash", "arguments": {"command": "echo bg", "background": true}});
    let started = modern.modern("tools/call", &job, &none);
    let job_uri = format!(
        "job://{}",
        started["result"]["structuredContent"]["job_id"]
            .as_str()
            .expect("a job id")
    );
    // A list that grows with every spilled output, and contents that change while a job runs, are
    // not to be kept; the templates are fixed for the life of the server. All of it is one
    // person's output: private.
    let private = json!("private");
    let listed = modern.modern("resources/list", &none, &none);
    assert_eq!(hints(&listed), (json!(0), private.clone()), "{listed}");
    let templates = modern.modern("resources/templates/list", &none, &none);
    assert_eq!(
        hints(&templates),
        (json!(3_600_000), private.clone()),
        "{templates}"
    );
    for read in [&uri, &job_uri] {
        let answer = modern.modern("resources/read", &json!({"uri": read}), &none);
        assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
        assert_eq!(hints(&answer), (json!(0), private.clone()), "{answer}");
    }

    let unknown = json!({"uri": "artifact://987654321"});
    let unknown_job = json!({"uri": "job://no-such-job"});
    for missing in [&unknown, &unknown_job] {
        let answer = modern.modern("resources/read", missing, &none);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
    let call = json!({"name": "bash", "arguments": {"command": "exit 3"}});
    let failed = modern.modern("tools/call", &call, &none);
    assert_eq!(failed["result"]["resultType"], "complete", "{failed}");
    assert_eq!(failed["result"]["isError"], true, "{failed}");

    let mut legacy = Server::start();
    let init = legacy.initialize();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    for missing in [&unknown, &unknown_job] {
        let answer = legacy.request("resources/read", missing);
        assert_eq!(answer["error"]["code"], -32002, "{answer}");
    }
    let failed = legacy.request("tools/call", &call);
    assert!(failed["result"].get("resultType").is_none(), "{failed}");
    assert_eq!(failed["result"]["isError"], true, "{failed}");
}

/// How many times the marker command of the approval tests ran.
fn runs(server: &Server) -> usize {
    server.lines_of("runs")
}

#[test]
fn an_approval_state_resumes_once_and_only_for_its_own_arguments() {
    let mut server = Server::start();
    let asks = json!({"elicitation": {}});
    let call = json!({"name": "bash", "arguments": {"command": "echo run >> runs", "ask": "always"}});
    let first = server.modern("tools/call", &call, &asks);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let question = &first["result"]["inputRequests"]["approval"];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a state")
        .to_owned();
    let allow = json!({"approval": {"action": "accept", "content": {"decision": "allow-once"}}});
    let retry = |call: &Value, state: &str| {
        let mut retry = call.clone();
        retry["inputResponses"] = allow.clone();
        retry["requestState"] = json!(state);
        retry
    };

    // Moved to other arguments: refused, nothing runs, and the state is not spent.
    let other = json!({"name": "bash", "arguments": {"command": "echo other >> runs", "ask": "always"}});
    let moved = server.modern("tools/call", &retry(&other, &state), &asks);
    assert_eq!(
        moved["result"]["structuredContent"]["status"], "refused",
        "{moved}"
    );
    assert_eq!(runs(&server), 0);

    // Altered: refused.
    let mut altered = state.clone().into_bytes();
    let at = altered.len() / 2;
    altered[at] = if altered[at] == b'x' { b'y' } else { b'x' };
    let altered = String::from_utf8(altered).unwrap();
    let forged = server.modern("tools/call", &retry(&call, &altered), &asks);
    assert_eq!(
        forged["result"]["structuredContent"]["status"], "refused",
        "{forged}"
    );
    assert_eq!(runs(&server), 0);

    // The genuine retry runs the command once; its replay runs nothing.
    let done = server.modern("tools/call", &retry(&call, &state), &asks);
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(runs(&server), 1);
    let replay = server.modern("tools/call", &retry(&call, &state), &asks);
    assert_eq!(replay["result"]["isError"], true, "{replay}");
    assert_eq!(
        replay["result"]["structuredContent"]["status"], "refused",
        "{replay}"
    );
    assert_eq!(runs(&server), 1);
}

/// `call` retried with `answers` and `state`.
fn retry(call: &Value, answers: Option<&Value>, state: &str) -> Value {
    let mut retry = call.clone();
    if let Some(answers) = answers {
        retry["inputResponses"] = answers.clone();
    }
    retry["requestState"] = json!(state);
    retry
}

fn allow_once() -> Value {
    json!({"approval": {"action": "accept", "content": {"decision": "allow-once"}}})
}

#[test]
fn a_retry_without_an_answer_is_asked_again_and_keeps_its_state() {
    let mut server = Server::start();
    let asks = json!({"elicitation": {}});
    let call = json!({"name": "bash", "arguments": {"command": "echo run >> runs", "ask": "always"}});
    let first = server.modern("tools/call", &call, &asks);
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a state")
        .to_owned();

    // The client lost the person's answer, or the person has not given one yet: the question comes
    // back with the same state, and nothing runs.
    let unanswered = json!({"approval": {"action": "accept", "content": {}}});
    for answers in [None, Some(&unanswered)] {
        let again = server.modern("tools/call", &retry(&call, answers, &state), &asks);
        assert_eq!(again["result"]["resultType"], "input_required", "{again}");
        assert_eq!(again["result"]["requestState"], state.as_str(), "{again}");
        assert_eq!(
            again["result"]["inputRequests"]["approval"]["method"], "elicitation/create",
            "{again}"
        );
        assert_eq!(runs(&server), 0);
    }

    // The state still resumes the approval once.
    let done = server.modern("tools/call", &retry(&call, Some(&allow_once()), &state), &asks);
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(runs(&server), 1);
    let replay = server.modern("tools/call", &retry(&call, None, &state), &asks);
    assert_eq!(
        replay["result"]["structuredContent"]["status"], "refused",
        "{replay}"
    );
    assert_eq!(runs(&server), 1);
}

#[test]
fn an_approval_state_expires_with_the_elicitation_timeout() {
    let mut server = Server::with_config("[approvals]\nelicitation_timeout_secs = 0.5\n");
    let asks = json!({"elicitation": {}});
    let call = json!({"name": "bash", "arguments": {"command": "echo run >> runs", "ask": "always"}});
    let first = server.modern("tools/call", &call, &asks);
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a state")
        .to_owned();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let late = server.modern("tools/call", &retry(&call, Some(&allow_once()), &state), &asks);
    assert_eq!(late["result"]["isError"], true, "{late}");
    assert_eq!(late["result"]["structuredContent"]["status"], "refused", "{late}");
    assert_eq!(runs(&server), 0);
}

#[test]
fn lines_that_are_no_message_are_skipped_or_refused_and_the_connection_goes_on() {
    let mut server = Server::start();
    server.send_raw("not json at all");
    server.send_raw(r#"{"jsonrpc":"1.0","method":"notifications/whatever"}"#);
    server.send_raw(r#"{"jsonrpc":"2.0","id":99,"nothing":true}"#);
    // A tools/call with its keys in another order and a byte-order mark still runs.
    let meta = mcp_lines::modern_meta(&json!({}));
    let call = json!({"params": {"arguments": {"command": "echo fine"}, "name": "bash", "_meta": meta}, "id": 7, "method": "tools/call", "jsonrpc": "2.0"});
    server.send_raw(&format!("\u{feff}{call}\r"));
    let answer = server.answer(7);
    assert_eq!(answer["result"]["content"][0]["text"], "fine", "{answer}");
    let refused: Vec<&Value> = server.seen.iter().filter(|m| m.get("error").is_some()).collect();
    assert_eq!(refused.len(), 1, "{:?}", server.seen);
    assert_eq!(refused[0]["error"]["code"], -32600, "{refused:?}");
}
