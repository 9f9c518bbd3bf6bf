//! The network by name through the tool: `curl` in a sandbox whose only way out is the engine's
//! proxy (`network = "proxy"`) against the same `curl` run directly, unsandboxed, both through
//! `shellgate rpc` against one loopback server, taking turns. The sandbox's fixed cost (a `true`
//! call of each server, measured in the same run) is also subtracted, so the net ratios show the
//! proxy itself. Then the engine's resident memory while 100 proxied connections are open.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::procs;
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;

const BIG_RUNS: usize = 10;
const SMALL_RUNS: usize = 10;
const TRUE_RUNS: usize = 30;
const SMALL_REQUESTS: usize = 200;
const HELD_CONNECTIONS: usize = 100;
const TIMEOUT: Duration = Duration::from_secs(120);

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let mut section = Section::new(
        "sandbox-proxy",
        "The network by name: the engine's proxy against a direct connection",
        format!(
            "`curl` of a 64 MiB body ({BIG_RUNS} times) and of {SMALL_REQUESTS} small bodies in one \
             `curl` ({SMALL_RUNS} times) from a loopback server, through `shellgate rpc`: sandboxed with \
             `network = \"proxy\"` (the name mapped to 127.0.0.1 in `[sandbox.proxy] hosts`) against \
             unsandboxed and direct, alternating. Net = minus each server's median `true` call. Memory: \
             the engine's VmRSS idle and at its peak while a sandboxed script holds {HELD_CONNECTIONS} \
             `CONNECT` tunnels open."
        ),
    );
    let Some(binary) = need_shellgate(ctx, &mut section) else {
        return section;
    };
    let port = serve_loopback();
    let work = ctx.work.join("proxy-bench");
    let _ = std::fs::create_dir_all(&work);
    let config = work.join("proxy.toml");
    let text = "[sandbox]\nmode = \"workspace-write\"\nnetwork = \"proxy\"\nallowed_domains = [\"bench.test\"]\n\
                [sandbox.proxy]\nhosts = { \"bench.test\" = \"127.0.0.1\" }\nallow_local_addresses = true\n";
    if let Err(e) = std::fs::write(&config, text) {
        section.note(format!("cannot write the configuration: {e}"));
        return section;
    }
    let (mut direct, mut proxied) = match (
        client(&binary, &work, None),
        client(&binary, &work, Some(&config)),
    ) {
        (Ok(d), Ok(p)) => (d, p),
        (Err(e), _) | (_, Err(e)) => {
            section.note(format!("shellgate failed to start: {e:#}"));
            return section;
        }
    };
    let probe = format!("curl -sS http://bench.test:{port}/small");
    match output_of(&mut proxied, &probe) {
        Some(text) if text.contains("ok") => {}
        other => {
            section.note(format!("skipped: a proxied fetch did not work here ({other:?})"));
            return section;
        }
    }
    let mut table =
        Table::with_columns(&["subject", "direct p50", "proxied p50", "÷ direct", "net ÷ direct"]);
    let (direct_true, proxied_true) = alternate(&mut direct, &mut proxied, "true", "true", TRUE_RUNS);
    let fixed = |d: &Summary, p: &Summary| (d.median, p.median);
    let Some((base_d, base_p)) = direct_true
        .as_ref()
        .zip(proxied_true.as_ref())
        .map(|(d, p)| fixed(d, p))
    else {
        section.note("a `true` call failed");
        return section;
    };
    table.push(vec![
        "true (fixed cost)".into(),
        micros(base_d),
        micros(base_p),
        String::new(),
        String::new(),
    ]);
    let small_urls = format!("http://127.0.0.1:{port}/small[1-{SMALL_REQUESTS}]");
    let small_named = format!("http://bench.test:{port}/small[1-{SMALL_REQUESTS}]");
    let workloads = [
        (
            "64 MiB fetched",
            format!("curl -sS -o /dev/null http://127.0.0.1:{port}/big"),
            format!("curl -sS -o /dev/null http://bench.test:{port}/big"),
            BIG_RUNS,
        ),
        (
            "200 small requests",
            // A new connection per request both ways (the proxy forwards one request per
            // connection), so the comparison is of connection setup.
            format!("curl -sS -H 'Connection: close' '{small_urls}' >/dev/null"),
            format!("curl -sS -H 'Connection: close' '{small_named}' >/dev/null"),
            SMALL_RUNS,
        ),
    ];
    let mut data = Vec::new();
    for (label, plain, named, runs) in workloads {
        let (Some(d), Some(p)) = alternate(&mut direct, &mut proxied, &plain, &named, runs) else {
            section.note(format!("{label}: a call failed"));
            continue;
        };
        let raw = ctx.ratio(
            "sandbox-proxy",
            &format!("{label}, proxied vs direct (median)"),
            ("proxied", p.median),
            ("direct", d.median),
        );
        let net = ctx.ratio(
            "sandbox-proxy",
            &format!("{label}, proxied vs direct, fixed cost subtracted (median)"),
            ("proxied", p.median - base_p),
            ("direct", d.median - base_d),
        );
        table.push(vec![
            label.into(),
            micros(d.median),
            micros(p.median),
            ratio_cell(raw),
            ratio_cell(net),
        ]);
        data.push(json!({"workload": label, "direct_us": d, "proxied_us": p}));
    }
    let memory = held_connections(&mut proxied, port);
    match &memory {
        Some((idle, peak)) => {
            let ratio = ctx.ratio(
                "sandbox-proxy",
                &format!("engine VmRSS with {HELD_CONNECTIONS} proxied connections vs idle"),
                ("held", *peak as f64),
                ("idle", *idle as f64),
            );
            section.note(format!(
                "engine VmRSS: {idle} KiB idle, {peak} KiB at most with {HELD_CONNECTIONS} tunnels open ({}, \
                 {:.1} KiB per connection)",
                ratio_cell(ratio),
                (*peak as f64 - *idle as f64) / HELD_CONNECTIONS as f64
            ));
        }
        None => section.note("the held-connections run failed"),
    }
    section.table = table;
    section.data = json!({"true_us": {"direct": direct_true, "proxied": proxied_true}, "workloads": data,
        "rss_kib": memory.map(|(idle, peak)| json!({"idle": idle, "peak": peak}))});
    section
}

fn client(binary: &Path, work: &Path, config: Option<&Path>) -> anyhow::Result<RpcClient> {
    RpcClient::spawn(binary, |c| {
        c.current_dir(work);
        if let Some(config) = config {
            c.arg("--config").arg(config);
        }
    })
}

fn output_of(client: &mut RpcClient, command: &str) -> Option<String> {
    let answer = client
        .call("bash", &json!({"command": command, "session": "none"}), TIMEOUT)
        .ok()?;
    let result = rpc::result(&answer).ok()?;
    result["output"].as_str().map(str::to_owned)
}

/// `runs` calls of each, taking turns; the medians' summaries (`None` when a call failed).
fn alternate(
    direct: &mut RpcClient,
    proxied: &mut RpcClient,
    plain: &str,
    named: &str,
    runs: usize,
) -> (Option<Summary>, Option<Summary>) {
    let (mut d, mut p) = (Vec::new(), Vec::new());
    for i in 0..=runs {
        for (client, command, samples) in [(&mut *direct, plain, &mut d), (&mut *proxied, named, &mut p)] {
            let params = json!({"command": command, "session": "none"});
            match client.call_timed("bash", &params, TIMEOUT) {
                Ok((answer, took)) if completed(&answer) => {
                    // The first round warms both up.
                    if i > 0 {
                        samples.push(took.as_secs_f64() * 1e6);
                    }
                }
                _ => return (None, None),
            }
        }
    }
    (Summary::of(&d), Summary::of(&p))
}

fn completed(answer: &Value) -> bool {
    rpc::result(answer).is_ok_and(|r| r["status"] == "completed" && r["exit_code"] == 0)
}

/// The engine's VmRSS before, and its highest while a sandboxed script holds the tunnels open.
fn held_connections(proxied: &mut RpcClient, port: u16) -> Option<(u64, u64)> {
    let pid = proxied.pid();
    let idle = procs::rss_kib(pid)?;
    let script = format!(
        "import socket, time\n\
         held = []\n\
         for _ in range({HELD_CONNECTIONS}):\n\
         \x20   s = socket.create_connection(('127.0.0.1', 3128))\n\
         \x20   s.sendall(b'CONNECT bench.test:{port} HTTP/1.1\\r\\n\\r\\n')\n\
         \x20   assert s.recv(100).startswith(b'HTTP/1.1 200')\n\
         \x20   held.append(s)\n\
         time.sleep(2)\n\
         print('held', len(held))\n"
    );
    let params = json!({"command": format!("python3 -c \"{script}\""), "session": "none"});
    let id = proxied.send("bash", &params).ok()?;
    let started = Instant::now();
    let mut peak = idle;
    let answer = loop {
        if let Some(rss) = procs::rss_kib(pid) {
            peak = peak.max(rss);
        }
        match proxied.wait(id, Duration::from_millis(50)) {
            Ok(answer) => break answer,
            Err(_) if started.elapsed() < TIMEOUT => {}
            Err(_) => return None,
        }
    };
    let held = rpc::result(&answer).ok()?["output"]
        .as_str()?
        .contains(&format!("held {HELD_CONNECTIONS}"));
    held.then_some((idle, peak))
}

/// A loopback server: `/big` is 64 MiB of zeros, `/small…` two bytes, `/hold` (and a tunnel's
/// silence) keeps the connection open until the client closes it.
fn serve_loopback() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the bench server");
    let port = listener.local_addr().expect("local address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    port
}

fn answer(mut stream: TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&head);
    let path = text.split(' ').nth(1).unwrap_or("/");
    if path.starts_with("/big") {
        let chunk = vec![0u8; 1 << 20];
        let _ = stream.write_all(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                64 << 20
            )
            .as_bytes(),
        );
        for _ in 0..64 {
            if stream.write_all(&chunk).is_err() {
                return;
            }
        }
    } else if path.starts_with("/small") {
        let closing = text.to_ascii_lowercase().contains("connection: close");
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n");
        if !closing {
            answer(stream);
        }
    } else {
        let _ = std::io::copy(&mut stream, &mut std::io::sink());
    }
}
