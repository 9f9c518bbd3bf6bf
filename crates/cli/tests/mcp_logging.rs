//! Who hears a background job's exit as a log notification (`notifications/message`): on the
//! handshake era, the connection whose `logging/setLevel` lets `notice` through, when it happens; on
//! 2026-07-28, only a request whose `_meta` asks for log messages at `notice` or below, with that
//! request. Every client reads the exit in its next result either way.

mod mcp_lines;

use serde_json::{Value, json};

use mcp_lines::{Server, eventually};

/// Start `echo <word>` as a background job; its id and the notices of the call's result.
fn start_job(server: &mut Server, word: &str, modern: bool) -> (String, String) {
    let call = json!({"name": "bash", "arguments": {"command": format!("echo {word}"), "background": true}});
    let answer = if modern {
        server.modern("tools/call", &call, &json!({}))
    } else {
        server.request("tools/call", &call)
    };
    let fields = &answer["result"]["structuredContent"];
    let id = fields["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job id: {answer}"))
        .to_owned();
    (id, fields["notices"].to_string())
}

/// Wait until job `id` has ended (reading its resource moves no cursor and takes no note).
fn wait_for_end(server: &mut Server, id: &str) {
    let read = json!({"uri": format!("job://{id}")});
    let ended = eventually(|| {
        let answer = server.modern("resources/read", &read, &json!({}));
        answer["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|text| !text.starts_with("status: running"))
    });
    assert!(ended, "job {id} did not end");
}

/// The job ids of the `job_exited` log notifications seen so far.
fn exits_logged(server: &mut Server) -> Vec<String> {
    server
        .take_notifications("notifications/message")
        .iter()
        .filter(|m| m["params"]["logger"] == "shellgate" && m["params"]["data"]["event"] == "job_exited")
        .filter_map(|m| m["params"]["data"]["job_id"].as_str().map(str::to_owned))
        .collect()
}

/// A `true` call on 2026-07-28 with `extra` in its `_meta`; its result's notices.
fn call_with_meta(server: &mut Server, extra: &Value) -> String {
    let call = json!({"name": "bash", "arguments": {"command": "true"}});
    let params = Server::modern_params(&call, &json!({}), extra);
    let answer = server.request("tools/call", &params);
    answer["result"]["structuredContent"]["notices"].to_string()
}

#[test]
fn on_2026_07_28_only_a_request_that_asks_hears_job_exits_as_log_messages() {
    let mut server = Server::start();
    let level = |level: &str| json!({"io.modelcontextprotocol/logLevel": level});
    for (word, extra, heard) in [
        ("unasked", json!({}), false),
        ("too-quiet", level("warning"), false),
        ("asked", level("info"), true),
    ] {
        let (job, _) = start_job(&mut server, word, true);
        wait_for_end(&mut server, &job);
        // The exit is noted a moment after the job ends: call until a result lists it.
        let listed = eventually(|| call_with_meta(&mut server, &extra).contains(&job));
        assert!(listed, "{word}: the exit is in no result");
        let logged = exits_logged(&mut server);
        let expected = if heard { vec![job] } else { Vec::new() };
        assert_eq!(logged, expected, "{word}");
    }
    // Nothing arrives later either: the connection has no level of its own on this era.
    server.read_for(std::time::Duration::from_millis(300));
    assert!(exits_logged(&mut server).is_empty());

    let set = Server::modern_params(&json!({"level": "debug"}), &json!({}), &json!({}));
    let refused = server.request("logging/setLevel", &set);
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

#[test]
fn on_the_handshake_era_the_connection_level_decides() {
    let mut server = Server::start();
    server.initialize();
    let quiet = server.request("logging/setLevel", &json!({"level": "warning"}));
    assert!(quiet["result"].is_object(), "{quiet}");
    let (unheard, _) = start_job(&mut server, "unheard", false);
    // Once a result lists the exit, the connection's level was applied to it.
    let list = json!({"name": "process", "arguments": {"action": "list"}});
    let listed = eventually(|| {
        let answer = server.request("tools/call", &list);
        answer["result"]["structuredContent"]["notices"]
            .to_string()
            .contains(&unheard)
    });
    assert!(listed, "the exit of {unheard} is in no result");

    let loud = server.request("logging/setLevel", &json!({"level": "info"}));
    assert!(loud["result"].is_object(), "{loud}");
    let (heard, _) = start_job(&mut server, "heard", false);
    // The first exit was judged at `warning` (a result listed it before the level changed).
    let mut logged = Vec::new();
    let arrived = eventually(|| {
        server.read_for(std::time::Duration::from_millis(50));
        logged.extend(exits_logged(&mut server));
        logged.contains(&heard)
    });
    assert!(arrived, "no log notification for {heard}");
    assert_eq!(logged, std::slice::from_ref(&heard));

    // The heard one is in the next result all the same.
    let answer = server.request("tools/call", &list);
    let notices = answer["result"]["structuredContent"]["notices"].to_string();
    assert!(notices.contains(&heard), "{answer}");
}
