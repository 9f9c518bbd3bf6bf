//! Peers (`--peers` only, not part of CI): the oh-my-pi coding agent's RPC mode and Codex's shell-tool
//! MCP server, installed from npm into `target/peers/`, driven the way an agent drives them — one
//! long-lived server, one request per command — next to `shellgate rpc` in the same run.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, kib, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;

/// The seed system: oh-my-pi's coding agent, which runs on bun.
const OMP_PACKAGE: &str = "@oh-my-pi/pi-coding-agent@18.2.3";
const BUN_PACKAGE: &str = "bun@1.4.5";
const CODEX_PACKAGE: &str = "@openai/codex-shell-tool-mcp@0.97.0";

const CALLS: usize = 200;
const ROUNDS: usize = 10;
const WARMUP: usize = 20;
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
const START_TIMEOUT: Duration = Duration::from_secs(120);
const FLOOD_TIMEOUT: Duration = Duration::from_secs(600);
/// 200 MB of output (`y` lines), for the memory high-water mark.
const FLOOD: &str = "yes | head -c 200000000";
const FLOOD_BYTES: u64 = 200_000_000;

const SESSION: &str = "shellgate rpc (session)";
const ONE_SHOT: &str = "shellgate rpc (session: none)";
const OMP: &str = "oh-my-pi 18.2.3 --mode rpc";
const CODEX: &str = "Codex shell-tool-mcp 0.97.0";

/// One way of running a command through a long-lived server.
enum Subject {
    Shellgate {
        client: RpcClient,
        session: &'static str,
    },
    Omp(LineServer),
    Codex {
        server: LineServer,
        workdir: String,
    },
}

/// What a subject measured.
struct Measured {
    name: &'static str,
    samples: Vec<f64>,
    flood: Option<Flood>,
    error: Option<String>,
}

/// Run the section.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let mut section = Section::new(
        "peers",
        "Peers: the seed system and Codex",
        format!(
            "Each subject is one long-lived server; `true` is sent {CALLS} times (after {WARMUP} warm-up calls), \
             one request at a time, the subjects taking turns in {ROUNDS} rounds; time = request line written → \
             response line read. Then `{FLOOD}` (200 MB) is run once through each and the server's peak RSS \
             (`VmHWM`) read afterwards. oh-my-pi runs `bun.exe dist/cli.js --mode rpc` and gets \
             `{{\"id\",\"type\":\"bash\",\"command\"}}`; Codex's MCP server gets `initialize`, \
             `codex/sandbox-state/update` (danger-full-access), then `tools/call shell {{command, workdir, \
             login: false}}`. Ratios are shellgate ÷ peer."
        ),
    );
    let peers_dir = ctx.meta.target_directory.join("peers");
    let installed = match install(&peers_dir) {
        Ok(i) => Some(i),
        Err(e) => {
            section.note(format!(
                "npm install into {} failed, peers skipped: {e:#}",
                peers_dir.display()
            ));
            None
        }
    };
    let work = ctx.work.clone();
    let mut subjects: Vec<(&'static str, Subject)> = Vec::new();
    if let Some(binary) = need_shellgate(ctx, &mut section) {
        for (name, session) in [(SESSION, "xtask-peers"), (ONE_SHOT, "none")] {
            match RpcClient::spawn(&binary, |c| {
                c.current_dir(&work);
            }) {
                Ok(client) => subjects.push((name, Subject::Shellgate { client, session })),
                Err(e) => section.note(format!("{name} failed to start: {e:#}")),
            }
        }
    }
    if let Some(installed) = &installed {
        match start_omp(installed, &peers_dir, &work) {
            Ok(server) => subjects.push((OMP, Subject::Omp(server))),
            Err(e) => section.note(format!("{OMP} failed to start, skipped: {e:#}")),
        }
        match start_codex(installed, &work) {
            Ok(server) => subjects.push((
                CODEX,
                Subject::Codex {
                    server,
                    workdir: work.display().to_string(),
                },
            )),
            Err(e) => section.note(format!("{CODEX} failed to start, skipped: {e:#}")),
        }
    }

    let mut measured: Vec<Measured> = subjects
        .iter()
        .map(|(name, _)| Measured {
            name,
            samples: Vec::new(),
            flood: None,
            error: None,
        })
        .collect();
    for round in 0..ROUNDS {
        eprintln!("xtask: peers round {}/{ROUNDS}", round + 1);
        for ((_, subject), m) in subjects.iter_mut().zip(&mut measured) {
            if m.error.is_some() {
                continue;
            }
            let warmup = if round == 0 { WARMUP } else { 2 };
            if let Err(e) = time_true(subject, warmup, CALLS / ROUNDS, &mut m.samples) {
                m.error = Some(format!("{e:#}"));
            }
        }
    }
    for ((_, subject), m) in subjects.iter_mut().zip(&mut measured) {
        if m.error.is_some() {
            continue;
        }
        eprintln!("xtask: peers: 200 MB through {}", m.name);
        match flood(subject) {
            Ok(f) => m.flood = Some(f),
            Err(e) => section.note(format!("{}: the 200 MB flood failed: {e:#}", m.name)),
        }
    }
    for (_, subject) in subjects {
        subject.close();
    }
    table(ctx, &mut section, &measured);
    section
}

fn table(ctx: &mut Ctx<'_>, section: &mut Section, measured: &[Measured]) {
    for m in measured {
        if let Some(e) = &m.error {
            section.note(format!("{} failed: {e}", m.name));
        }
    }
    let ok: Vec<(&Measured, Summary)> = measured
        .iter()
        .filter(|m| m.error.is_none())
        .filter_map(|m| Some((m, Summary::of(&m.samples)?)))
        .collect();
    let find = |name: &str| ok.iter().find(|(m, _)| m.name == name);
    let mut table = Table::with_columns(&[
        "subject",
        "n",
        "`true` median",
        "`true` p99",
        "200 MB wall",
        "peak RSS after 200 MB",
        "session median ÷ this",
        "session p99 ÷ this",
        "one-shot median ÷ this",
        "session RSS ÷ this",
        "200 MB output check",
    ]);
    let mut data = Vec::new();
    for (m, s) in &ok {
        let is_peer = !m.name.starts_with("shellgate");
        let mut ratio = |label: &str, subject: Option<(&str, f64)>, base: f64| -> String {
            let r = subject.and_then(|sub| {
                if is_peer {
                    ctx.ratio("peers", label, sub, (m.name, base))
                } else {
                    Some(sub.1 / base)
                }
            });
            ratio_cell(r)
        };
        let session = find(SESSION);
        let one_shot = find(ONE_SHOT);
        let rss = |x: &Measured| x.flood.as_ref().and_then(|f| f.peak_rss_kib).map(|k| k as f64);
        let cells = vec![
            m.name.to_owned(),
            s.n.to_string(),
            micros(s.median),
            micros(s.p99),
            m.flood
                .as_ref()
                .map_or_else(|| "–".to_owned(), |f| format!("{:.2} s", f.wall_s)),
            kib(m.flood.as_ref().and_then(|f| f.peak_rss_kib)),
            ratio("true median", session.map(|(_, x)| (SESSION, x.median)), s.median),
            ratio("true p99", session.map(|(_, x)| (SESSION, x.p99)), s.p99),
            ratio(
                "true median",
                one_shot.map(|(_, x)| (ONE_SHOT, x.median)),
                s.median,
            ),
            match (session.and_then(|(x, _)| rss(x)), rss(m)) {
                (Some(a), Some(b)) => ratio("peak RSS after 200 MB", Some((SESSION, a)), b),
                _ => ratio_cell(None),
            },
            m.flood
                .as_ref()
                .map_or_else(|| "–".to_owned(), |f| f.check.clone()),
        ];
        table.push(cells);
        data.push(json!({
            "subject": m.name,
            "true_us": s,
            "flood_wall_s": m.flood.as_ref().map(|f| f.wall_s),
            "flood_peak_rss_kib": m.flood.as_ref().and_then(|f| f.peak_rss_kib),
            "flood_check": m.flood.as_ref().map(|f| f.check.clone()),
        }));
    }
    section.table = table;
    section.data = json!({"calls": CALLS, "warmup": WARMUP, "flood": FLOOD, "subjects": data});
}

impl Subject {
    /// Run `command`; returns the time from request to response, the exit code and what the subject
    /// said about the output's size.
    fn call(&mut self, command: &str, timeout: Duration) -> anyhow::Result<(Duration, i64, OutputSize)> {
        match self {
            Self::Shellgate { client, session } => {
                let params = json!({"command": command, "session": *session});
                let (response, elapsed) = client.call_timed("bash", &params, timeout)?;
                let result = rpc::result(&response)?;
                let size = OutputSize {
                    counted: ["total_bytes", "bytes", "total"]
                        .iter()
                        .find_map(|k| result.get("truncation")?.get(*k)?.as_u64()),
                    shown: output_len(result.get("output")),
                };
                Ok((elapsed, exit_code(result.get("exit_code"))?, size))
            }
            Self::Omp(server) => {
                let id = server.next_id().to_string();
                let request = json!({"id": id, "type": "bash", "command": command});
                let (response, elapsed) = server.request(&request, timeout, |v| {
                    v.get("type").and_then(Value::as_str) == Some("response")
                        && v.get("id").and_then(Value::as_str) == Some(id.as_str())
                })?;
                if response.get("success").and_then(Value::as_bool) != Some(true) {
                    bail!("oh-my-pi answered without success: {response}");
                }
                let size = OutputSize {
                    counted: response.pointer("/data/totalBytes").and_then(Value::as_u64),
                    shown: output_len(response.pointer("/data/output")),
                };
                Ok((elapsed, exit_code(response.pointer("/data/exitCode"))?, size))
            }
            Self::Codex { server, workdir } => {
                let id = server.next_id();
                let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": "shell",
                    "arguments": {"command": command, "workdir": workdir, "login": false,
                                  "timeout_ms": timeout.as_millis()},
                }});
                let (response, elapsed) = server.request(&request, timeout, |v| {
                    v.get("id").and_then(Value::as_u64) == Some(id)
                })?;
                let text = response
                    .pointer("/result/content/0/text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| anyhow!("Codex answered without text content: {response}"))?;
                let inner: Value = serde_json::from_str(text)
                    .with_context(|| format!("Codex's shell result is not JSON: {text}"))?;
                let size = OutputSize {
                    counted: None,
                    shown: output_len(inner.get("output")),
                };
                Ok((elapsed, exit_code(inner.get("exit_code"))?, size))
            }
        }
    }

    /// The process whose memory is the subject's (for Codex, the Rust server behind the Node launcher).
    fn memory_pid(&self) -> u32 {
        match self {
            Self::Shellgate { client, .. } => client.pid(),
            Self::Omp(server) => server.child.id(),
            Self::Codex { server, .. } => crate::procs::children(server.child.id())
                .into_iter()
                .next()
                .unwrap_or_else(|| server.child.id()),
        }
    }

    fn close(self) {
        match self {
            Self::Shellgate { client, .. } => {
                let _ = client.close(Duration::from_secs(10));
            }
            Self::Omp(server) | Self::Codex { server, .. } => server.close(),
        }
    }
}

/// Output sizes a subject reports: the bytes it counted (when it says) and the bytes it returned.
#[derive(Debug, Clone, Copy)]
struct OutputSize {
    counted: Option<u64>,
    shown: usize,
}

impl OutputSize {
    /// A table cell: whether every byte of the flood was accounted for.
    fn check(self, expected: u64) -> String {
        match self.counted {
            Some(n) if n == expected => format!("all {n} B counted, {} B shown", self.shown),
            Some(n) => format!("COUNTED {n} of {expected} B, {} B shown", self.shown),
            None => format!("no total reported, {} B shown", self.shown),
        }
    }
}

fn output_len(value: Option<&Value>) -> usize {
    value.and_then(Value::as_str).map_or(0, str::len)
}

fn exit_code(value: Option<&Value>) -> anyhow::Result<i64> {
    value
        .and_then(Value::as_i64)
        .ok_or_else(|| anyhow!("no exit code in the answer"))
}

fn time_true(
    subject: &mut Subject,
    warmup: usize,
    calls: usize,
    samples: &mut Vec<f64>,
) -> anyhow::Result<()> {
    for i in 0..warmup + calls {
        let (elapsed, code, _) = subject.call("true", CALL_TIMEOUT)?;
        if code != 0 {
            bail!("`true` exited {code}");
        }
        if i >= warmup {
            samples.push(elapsed.as_secs_f64() * 1e6);
        }
    }
    Ok(())
}

/// Run the 200 MB flood; returns its wall time, the server's peak RSS afterwards and the output check.
fn flood(subject: &mut Subject) -> anyhow::Result<Flood> {
    let (elapsed, code, size) = subject.call(FLOOD, FLOOD_TIMEOUT)?;
    if code != 0 {
        bail!("the flood exited {code}");
    }
    Ok(Flood {
        wall_s: elapsed.as_secs_f64(),
        peak_rss_kib: crate::procs::peak_rss_kib(subject.memory_pid()),
        check: size.check(FLOOD_BYTES),
    })
}

/// What the 200 MB flood measured.
struct Flood {
    wall_s: f64,
    peak_rss_kib: Option<u64>,
    check: String,
}

/// Paths of the installed peers.
struct Installed {
    bun: PathBuf,
    omp_cli: PathBuf,
    codex_launcher: PathBuf,
}

/// `npm install --ignore-scripts` the peers into `dir` (once), and put the real bun binary where the
/// `bun` package's skipped postinstall would have.
fn install(dir: &Path) -> anyhow::Result<Installed> {
    std::fs::create_dir_all(dir)?;
    let modules = dir.join("node_modules");
    let installed = Installed {
        bun: modules.join("bun/bin/bun.exe"),
        omp_cli: modules.join("@oh-my-pi/pi-coding-agent/dist/cli.js"),
        codex_launcher: modules.join("@openai/codex-shell-tool-mcp/bin/mcp-server.js"),
    };
    let versions_match = [
        ("@oh-my-pi/pi-coding-agent", OMP_PACKAGE),
        ("bun", BUN_PACKAGE),
        ("@openai/codex-shell-tool-mcp", CODEX_PACKAGE),
    ]
    .iter()
    .all(|(name, spec)| installed_version(&modules, name).is_some_and(|v| spec.ends_with(&format!("@{v}"))));
    if !versions_match {
        eprintln!(
            "xtask: npm install {OMP_PACKAGE} {BUN_PACKAGE} {CODEX_PACKAGE} into {}",
            dir.display()
        );
        let out = Command::new("npm")
            .current_dir(dir)
            .args([
                "install",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--prefix",
            ])
            .arg(dir)
            .args([OMP_PACKAGE, BUN_PACKAGE, CODEX_PACKAGE])
            .stdin(Stdio::null())
            .output()
            .context("running npm (is it installed?)")?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            bail!(
                "npm install exited {}: {}",
                out.status,
                stderr.trim().lines().last().unwrap_or("")
            );
        }
    }
    let native = modules.join("@oven/bun-linux-x64/bin/bun");
    std::fs::copy(&native, &installed.bun)
        .with_context(|| format!("copying {} over the bun stub", native.display()))?;
    let version = Command::new(&installed.bun)
        .arg("--version")
        .output()
        .context("running bun --version")?;
    if !version.status.success() {
        bail!("{} --version exited {}", installed.bun.display(), version.status);
    }
    for path in [&installed.omp_cli, &installed.codex_launcher] {
        if !path.is_file() {
            bail!("{} missing after npm install", path.display());
        }
    }
    Ok(installed)
}

fn installed_version(modules: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(modules.join(name).join("package.json")).ok()?;
    let manifest: Value = serde_json::from_str(&text).ok()?;
    manifest.get("version")?.as_str().map(str::to_owned)
}

fn start_omp(installed: &Installed, peers_dir: &Path, work: &Path) -> anyhow::Result<LineServer> {
    let home = peers_dir.join("home");
    std::fs::create_dir_all(&home)?;
    let mut command = Command::new(&installed.bun);
    command
        .arg(&installed.omp_cli)
        .args(["--mode", "rpc"])
        .current_dir(work)
        // Its configuration and session files go to a scratch home, and no model is ever called.
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("ANTHROPIC_API_KEY", "sk-ant-xtask-peers-dummy");
    let mut server = LineServer::spawn(command)?;
    server.wait_for(START_TIMEOUT, |v| {
        v.get("type").and_then(Value::as_str) == Some("ready")
    })?;
    Ok(server)
}

fn start_codex(installed: &Installed, work: &Path) -> anyhow::Result<LineServer> {
    let mut command = Command::new("node");
    command.arg(&installed.codex_launcher).current_dir(work);
    let mut server = LineServer::spawn(command)?;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "xtask", "version": env!("CARGO_PKG_VERSION")},
    }});
    server.request(&init, START_TIMEOUT, |v| {
        v.get("id").and_then(Value::as_u64) == Some(0)
    })?;
    server.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    let id = server.next_id();
    let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
    let (tools, _) = server.request(&list, START_TIMEOUT, |v| {
        v.get("id").and_then(Value::as_u64) == Some(id)
    })?;
    let has_shell = tools
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .is_some_and(|t| {
            t.iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some("shell"))
        });
    if !has_shell {
        bail!("tools/list has no `shell` tool: {tools}");
    }
    let id = server.next_id();
    let update = json!({"jsonrpc": "2.0", "id": id, "method": "codex/sandbox-state/update", "params": {
        "sandboxPolicy": {"type": "danger-full-access"}, "sandboxCwd": work,
    }});
    let (answer, _) = server.request(&update, START_TIMEOUT, |v| {
        v.get("id").and_then(Value::as_u64) == Some(id)
    })?;
    if answer.get("error").is_some() {
        bail!("codex/sandbox-state/update refused: {answer}");
    }
    Ok(server)
}

/// A child speaking one JSON object per line on stdio, read by a thread so every wait has a deadline.
struct LineServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, Value)>,
    next_id: u64,
}

impl LineServer {
    fn spawn(mut command: Command) -> anyhow::Result<Self> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().with_context(|| format!("starting {command:?}"))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Stamped before parsing, so the times exclude this harness's JSON work.
                let arrived = Instant::now();
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if tx.send((arrived, value)).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Ok(Self {
            child,
            stdin,
            lines,
            next_id: 1,
        })
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn write(&mut self, message: &Value) -> anyhow::Result<Instant> {
        let mut line = message.to_string();
        line.push('\n');
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("input already closed"))?;
        let sent = Instant::now();
        stdin
            .write_all(line.as_bytes())
            .context("writing to the server")?;
        stdin.flush().context("writing to the server")?;
        Ok(sent)
    }

    /// Write `message` and wait for the first line that `is_answer`; other lines (events) are dropped.
    fn request(
        &mut self,
        message: &Value,
        timeout: Duration,
        is_answer: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<(Value, Duration)> {
        let sent = self.write(message)?;
        let (arrived, value) = self.wait_for(timeout, is_answer)?;
        Ok((value, arrived.saturating_duration_since(sent)))
    }

    fn wait_for(
        &mut self,
        timeout: Duration,
        is_answer: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<(Instant, Value)> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((arrived, value)) if is_answer(&value) => return Ok((arrived, value)),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => bail!("no answer within {timeout:?}"),
                Err(RecvTimeoutError::Disconnected) => bail!("the server closed its output"),
            }
        }
    }

    /// Close the input (both peers exit at end of input) and kill the server if it lingers.
    fn close(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_checks_say_whether_every_byte_was_counted() {
        let all = OutputSize {
            counted: Some(10),
            shown: 4,
        };
        assert_eq!(all.check(10), "all 10 B counted, 4 B shown");
        let short = OutputSize {
            counted: Some(7),
            shown: 4,
        };
        assert!(short.check(10).starts_with("COUNTED 7 of 10"));
        let silent = OutputSize {
            counted: None,
            shown: 0,
        };
        assert!(silent.check(10).starts_with("no total reported"));
        assert_eq!(output_len(Some(&json!("héllo"))), 6);
        assert_eq!(output_len(None), 0);
    }

    #[test]
    fn exit_codes_must_be_present() {
        assert_eq!(exit_code(Some(&json!(3))).unwrap(), 3);
        assert!(exit_code(Some(&json!("0"))).is_err());
        assert!(exit_code(None).is_err());
    }
}
