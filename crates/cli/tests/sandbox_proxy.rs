//! `network = "proxy"` end to end with the real binary: through `shellgate rpc`, a session's calls,
//! a terminal run and a background job reach an allowed name through the engine's proxy and
//! nothing else; refusals come back as `sandbox_denied` entries with their reason, allowed
//! destinations as the `network` summary. A loopback server counts what reached it.

use std::io::{BufRead, BufReader, Read as _, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

mod common;

use common::{available, scratch};

fn usable() -> bool {
    let abi = shellgate_sandbox::landlock_abi();
    let curl = Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    available(
        abi >= 4,
        &format!("Landlock ABI 4 needed, the kernel offers {abi}"),
    ) && available(curl, "curl is not installed")
}

/// A loopback HTTP server answering every request with `hello`, counting them.
fn counting_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            counter.fetch_add(1, Ordering::SeqCst);
            let _ =
                stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n");
        }
    });
    (port, count)
}

/// A `shellgate rpc` server over a workspace, with `config` as its configuration.
struct Rpc {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    next_id: u64,
    root: PathBuf,
}

impl Rpc {
    fn start(config: &str) -> Self {
        let root = scratch();
        std::fs::write(root.join("shellgate.toml"), config).unwrap();
        Self::start_at(root)
    }

    /// A server over `root` (its workspace, home and configuration), again after another.
    fn start_at(root: PathBuf) -> Self {
        let _ = shellgate_sandbox::enable_kernel_audit();
        let (workspace, home) = (root.join("ws"), root.join("home"));
        for dir in [&workspace, &home] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_shellgate"))
            .current_dir(&workspace)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", root.join("xdg"))
            .env("XDG_RUNTIME_DIR", root.join("runtime"))
            .env_remove("SHELLGATE_APPROVALS_FILE")
            .env_remove("TMPDIR")
            .env("SHELLGATE_ARTIFACT_DIR", root.join("artifacts"))
            .arg("rpc")
            .arg("--config")
            .arg(root.join("shellgate.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
            next_id: 1,
            root,
        }
    }

    fn call(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        for line in self.lines.by_ref() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
        panic!("the server ended before answering {id}");
    }

    fn bash(&mut self, params: &Value) -> Value {
        self.call("bash", params)
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn output(v: &Value) -> &str {
    v["output"].as_str().unwrap_or_default()
}

fn config(allow_local: bool) -> String {
    format!(
        "[sandbox]\nmode = \"workspace-write\"\nnetwork = \"proxy\"\nallowed_domains = [\"pkg.test\", \"*.ok.test\"]\n\
         denied_domains = [\"bad.ok.test\"]\n[sandbox.proxy]\n\
         hosts = {{ \"pkg.test\" = \"127.0.0.1\", \"other.test\" = \"127.0.0.1\", \"bad.ok.test\" = \"127.0.0.1\" }}\n\
         allow_local_addresses = {allow_local}\n"
    )
}

#[test]
fn session_calls_reach_allowed_names_only_and_report_the_rest() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let mut rpc = Rpc::start(&config(true));
    let fetched = rpc.bash(&json!({"command": format!("curl -sS http://pkg.test:{port}/a; echo $$")}));
    assert!(output(&fetched).contains("hello"), "{fetched}");
    assert_eq!(fetched["sandbox_denied"], json!([]), "{fetched}");
    let traffic = &fetched["network"];
    assert_eq!(traffic[0]["host"], "pkg.test", "{fetched}");
    assert_eq!(traffic[0]["port"], port, "{fetched}");
    assert!(traffic[0]["bytes_in"].as_u64().unwrap() > 6, "{fetched}");
    assert!(traffic[0]["bytes_out"].as_u64().unwrap() > 0, "{fetched}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);

    let refused = rpc.bash(&json!({"command": format!(
        "curl -sS -o /dev/null -w '%{{http_code}}\\n' http://other.test:{port}/a; \
         curl -sS -o /dev/null -w '%{{http_code}}\\n' http://Bad.OK.test.:{port}/a; \
         curl -sS --noproxy '*' http://192.0.2.1/ 2>/dev/null || echo direct-refused; echo $$"
    )}));
    let text = output(&refused);
    assert_eq!(text.matches("403").count(), 2, "{refused}");
    assert!(text.contains("direct-refused"), "{refused}");
    let session_shell = |v: &Value| output(v).lines().last().map(str::to_owned);
    assert_eq!(
        session_shell(&fetched),
        session_shell(&refused),
        "not the same session"
    );
    assert_eq!(
        requests.load(Ordering::SeqCst),
        1,
        "a refused request reached the server"
    );
    let denied = refused["sandbox_denied"].as_array().cloned().unwrap_or_default();
    for (address, reason) in [
        (format!("other.test:{port}"), "domain not allowed"),
        (format!("bad.ok.test:{port}"), "denied domain"),
        ("192.0.2.1:80".to_owned(), "direct connection"),
    ] {
        let entry = json!({"kind": "network", "address": address, "reason": reason, "count": 1});
        assert!(denied.contains(&entry), "{entry} missing: {refused}");
    }
    assert!(refused.get("network").is_none(), "{refused}");

    // A terminal run and a background job get the proxy too.
    let pty = rpc.bash(&json!({"command": format!("curl -sS http://pkg.test:{port}/pty"), "pty": true}));
    assert!(output(&pty).contains("hello"), "{pty}");
    let job =
        rpc.bash(&json!({"command": format!("curl -sS http://pkg.test:{port}/job"), "background": true}));
    let id = job["job_id"].as_str().unwrap().to_owned();
    let ended = rpc.call(
        "process",
        &json!({"action": "poll", "job_id": id, "wait_ms": 10000}),
    );
    assert!(output(&ended).contains("hello"), "{ended}");
    assert_eq!(requests.load(Ordering::SeqCst), 3);
}

#[test]
fn a_name_leading_to_a_local_address_is_refused_by_default() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let mut rpc = Rpc::start(&config(false));
    let v = rpc.bash(
        &json!({"command": format!("curl -sS -o /dev/null -w '%{{http_code}}\\n' http://pkg.test:{port}/")}),
    );
    assert!(output(&v).contains("403"), "{v}");
    let entry = json!({"kind": "network", "address": format!("pkg.test:{port}"), "reason": "resolves to a local address", "count": 1});
    assert!(v["sandbox_denied"].as_array().unwrap().contains(&entry), "{v}");
    assert_eq!(requests.load(Ordering::SeqCst), 0);
}

#[test]
fn a_person_allows_a_refused_destination_always_and_the_next_runs_reach_it() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let config = format!(
        "[policy]\nsecurity = \"full\"\nask = \"on-miss\"\n{}",
        config(true)
    );
    let mut rpc = Rpc::start(&config);
    std::fs::create_dir_all(rpc.root.join("runtime")).unwrap();
    let fetch = |rpc: &mut Rpc, host: &str| {
        rpc.bash(&json!({"command": format!("curl -sS -o /dev/null -w '%{{http_code}}\\n' http://{host}:{port}/")}))
    };
    let first = fetch(&mut rpc, "other.test");
    assert!(output(&first).contains("403"), "{first}");
    let offered = &first["network_approvals"][0];
    assert_eq!(offered["address"], format!("other.test:{port}"), "{first}");
    let id = offered["short_id"].as_str().unwrap().to_owned();
    assert!(
        first["notices"]
            .to_string()
            .contains(&format!("approve {id} allow-always")),
        "{first}"
    );
    // A denied domain is never offered.
    let denied = fetch(&mut rpc, "bad.ok.test");
    assert!(denied.get("network_approvals").is_none(), "{denied}");

    let once = rpc.call("approve", &json!({"id": id, "decision": "allow-once"}));
    assert_eq!(once["status"], "blocked", "{once}");
    assert!(output(&once).contains("still pending"), "{once}");
    let always = rpc.call("approve", &json!({"id": id, "decision": "allow-always"}));
    assert_eq!(always["status"], "completed", "{always}");
    assert!(
        output(&always).contains(&format!("other.test:{port} is allowed always")),
        "{always}"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0, "approving ran nothing");
    let stored = std::fs::read_to_string(rpc.root.join("xdg/shellgate/approvals.toml")).unwrap();
    assert!(
        stored.contains(&format!("address = \"other.test:{port}\"")),
        "{stored}"
    );

    let again = fetch(&mut rpc, "other.test");
    assert!(output(&again).contains("200"), "{again}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);
    // Exactly that host and port: another port of it is still refused.
    let other_port =
        rpc.bash(&json!({"command": "curl -sS -o /dev/null -w '%{http_code}\\n' http://other.test:1/"}));
    assert!(output(&other_port).contains("403"), "{other_port}");

    // The next server reads it from the approvals file.
    let root = rpc.root.clone();
    drop(rpc);
    let mut next = Rpc::start_at(root);
    let later = fetch(&mut next, "other.test");
    assert!(output(&later).contains("200"), "{later}");
    assert_eq!(requests.load(Ordering::SeqCst), 2);
}

#[test]
fn a_call_narrows_the_allowed_domains_and_never_widens_them() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let mut rpc = Rpc::start(&config(true));
    let fetch = |rpc: &mut Rpc, host: &str, domains: Value| {
        rpc.bash(&json!({
            "command": format!("curl -sS -o /dev/null -w '%{{http_code}}\\n' http://{host}:{port}/"),
            "allowed_domains": domains,
        }))
    };
    let kept = fetch(&mut rpc, "pkg.test", json!(["pkg.test"]));
    assert!(output(&kept).contains("200"), "{kept}");
    let narrowed = fetch(&mut rpc, "pkg.test", json!(["*.ok.test"]));
    assert!(output(&narrowed).contains("403"), "{narrowed}");
    let widened = fetch(&mut rpc, "other.test", json!(["other.test"]));
    assert!(output(&widened).contains("403"), "not widened: {widened}");
    let entry = json!({"kind": "network", "address": format!("other.test:{port}"), "reason": "domain not allowed", "count": 1});
    assert!(
        widened["sandbox_denied"].as_array().unwrap().contains(&entry),
        "{widened}"
    );
    // The session's own calls keep the configured list.
    let plain = fetch(&mut rpc, "pkg.test", Value::Null);
    assert!(output(&plain).contains("200"), "{plain}");
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    let malformed = fetch(&mut rpc, "pkg.test", json!(["a..b"]));
    assert_eq!(malformed["status"], "failed_to_start", "{malformed}");

    // Unsandboxed, the network cannot be narrowed: the call does not run.
    let mut open = Rpc::start("");
    let refused = fetch(&mut open, "pkg.test", json!(["pkg.test"]));
    assert_eq!(refused["status"], "failed_to_start", "{refused}");
    assert_eq!(refused["error"]["kind"], "sandbox_unavailable", "{refused}");
    assert_eq!(requests.load(Ordering::SeqCst), 2);
}

/// Poll job `id` until it has ended: the last poll, with the output of every poll.
fn poll_to_end(rpc: &mut Rpc, id: &str) -> Value {
    let mut whole = String::new();
    for _ in 0..30 {
        let mut polled = rpc.call(
            "process",
            &json!({"action": "poll", "job_id": id, "wait_ms": 10000}),
        );
        whole.push_str(output(&polled));
        if polled["status"] != "running" {
            polled["output"] = Value::String(whole);
            return polled;
        }
    }
    panic!("job {id} did not end");
}

#[test]
fn a_jobs_end_carries_its_denials_traffic_and_approval_offers() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let config = format!(
        "[policy]\nsecurity = \"full\"\nask = \"on-miss\"\n{}",
        config(true)
    );
    let mut rpc = Rpc::start(&config);
    std::fs::create_dir_all(rpc.root.join("runtime")).unwrap();
    let fetches = format!(
        "curl -sS -o /dev/null -w '%{{http_code}}\\n' http://pkg.test:{port}/; \
         curl -sS -o /dev/null -w '%{{http_code}}\\n' http://other.test:{port}/"
    );
    // A background job, and a foreground call that outlives its yield: both are jobs at the end.
    for (how, extra) in [
        ("background", json!({"background": true})),
        ("yield", json!({"yield_ms": 100})),
    ] {
        let mut params = json!({"command": format!("sleep 0.5; {fetches}")});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let started = rpc.bash(&params);
        assert_eq!(started["status"], "running", "{how}: {started}");
        let id = started["job_id"].as_str().unwrap().to_owned();
        let ended = poll_to_end(&mut rpc, &id);
        assert!(
            output(&ended).contains("200") && output(&ended).contains("403"),
            "{how}: {ended}"
        );
        let entry = json!({"kind": "network", "address": format!("other.test:{port}"), "reason": "domain not allowed", "count": 1});
        assert_eq!(ended["sandbox_denied"], json!([entry]), "{how}: {ended}");
        assert_eq!(ended["network"][0]["host"], "pkg.test", "{how}: {ended}");
        assert_eq!(ended["network"][0]["port"], port, "{how}: {ended}");
        let offered = &ended["network_approvals"][0];
        assert_eq!(offered["address"], format!("other.test:{port}"), "{how}: {ended}");
        let short = offered["short_id"].as_str().unwrap();
        assert!(
            ended["notices"]
                .to_string()
                .contains(&format!("approve {short} allow-always")),
            "{how}: {ended}"
        );
    }
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    let first = rpc.bash(&json!({"command": format!("{fetches}; sleep 0.2"), "background": true}));
    let id = first["job_id"].as_str().unwrap().to_owned();
    let ended = poll_to_end(&mut rpc, &id);
    let short = ended["network_approvals"][0]["short_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let always = rpc.call("approve", &json!({"id": short, "decision": "allow-always"}));
    assert_eq!(always["status"], "completed", "{always}");
    let reached = rpc.bash(&json!({"command": fetches, "background": true}));
    let id = reached["job_id"].as_str().unwrap().to_owned();
    let ended = poll_to_end(&mut rpc, &id);
    assert!(!output(&ended).contains("403"), "{ended}");
    assert_eq!(ended["sandbox_denied"], json!([]), "{ended}");
    assert!(ended.get("network_approvals").is_none(), "{ended}");
    // pkg.test once in each of the first three runs, then both names.
    assert_eq!(requests.load(Ordering::SeqCst), 5);
}

#[test]
fn a_narrowed_call_in_a_session_says_it_ran_in_a_shell_of_its_own() {
    if !usable() {
        return;
    }
    let (port, _requests) = counting_server();
    let mut rpc = Rpc::start(&config(true));
    let set = rpc.bash(&json!({"command": "export MARK=session-value; echo $$"}));
    let narrowed = rpc.bash(&json!({
        "command": format!("curl -sS http://pkg.test:{port}/; echo \"mark=$MARK\"; echo $$"),
        "allowed_domains": ["pkg.test"],
    }));
    assert!(output(&narrowed).contains("hello"), "{narrowed}");
    assert!(
        output(&narrowed).contains("mark=\n"),
        "not the session's shell: {narrowed}"
    );
    let pid = |v: &Value| output(v).lines().last().map(str::to_owned);
    assert_ne!(pid(&set), pid(&narrowed), "{narrowed}");
    let notices = narrowed["notices"].to_string();
    assert!(
        notices.contains("shell of its own") && notices.contains("default@narrowed"),
        "{narrowed}"
    );
    // The session's own calls say nothing of the kind.
    let plain = rpc.bash(&json!({"command": "echo \"mark=$MARK\""}));
    assert!(output(&plain).contains("mark=session-value"), "{plain}");
    assert!(
        !plain["notices"].to_string().contains("shell of its own"),
        "{plain}"
    );
}
