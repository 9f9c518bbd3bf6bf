//! Sandboxed runs end to end: `shellgate run --sandbox …` and `shellgate rpc` with the real binary
//! as the sandbox helper. Each test skips (with its reason) where Landlock or the kernel's audit
//! records are missing, and fails instead under `SHELLGATE_REQUIRE_ALL=1`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

use common::{available, scratch};

/// Landlock with TCP rules (ABI 4) is needed by every test here.
fn landlock() -> bool {
    let abi = shellgate_sandbox::landlock_abi();
    available(
        abi >= 4,
        &format!("Landlock ABI 4 needed, the kernel offers {abi}"),
    )
}

/// Whether denials can be read from the kernel (auditing is turned on first: the tests run as root).
/// A workspace (with a `.git` directory), a home outside it, and an empty configuration file.
struct Setup {
    workspace: PathBuf,
    home: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

impl Setup {
    fn new(config: &str) -> Self {
        // Before any run: a run started while kernel auditing is off reports no denials, even if a
        // later check finds it on (a fresh machine has it off until the first test turns it on).
        let _ = shellgate_sandbox::enable_kernel_audit();
        let root = scratch();
        let (workspace, home, outside) = (root.join("ws"), root.join("home"), root.join("outside"));
        for dir in [&workspace, &home, &outside, &workspace.join(".git/hooks")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let config_path = root.join("shellgate.toml");
        std::fs::write(&config_path, config).unwrap();
        Self {
            workspace,
            home,
            outside,
            config: config_path,
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_shellgate"));
        cmd.current_dir(&self.workspace)
            .env("HOME", &self.home)
            .env_remove("TMPDIR")
            .env(
                "SHELLGATE_ARTIFACT_DIR",
                std::env::temp_dir().join("shellgate-cli-test-artifacts"),
            );
        cmd
    }

    /// `shellgate run --json --config … ARGS`.
    fn run(&self, args: &[&str]) -> Value {
        let out = self
            .command()
            .args(["run", "--json", "--config"])
            .arg(&self.config)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "engine failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn output(v: &Value) -> &str {
    v["output"].as_str().unwrap_or_default()
}

fn denied(v: &Value) -> Vec<(String, String)> {
    v["sandbox_denied"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|d| {
                    let object = d.get("path").or_else(|| d.get("address")).and_then(Value::as_str);
                    (
                        d["kind"].as_str().unwrap().to_owned(),
                        object.unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn workspace_write_confines_writes_and_reports_the_denials() {
    if !landlock() {
        return;
    }
    let setup = Setup::new("");
    std::os::unix::fs::symlink(&setup.outside, setup.workspace.join("link")).unwrap();
    let probe = format!("/etc/shellgate-sandbox-probe-{}", std::process::id());
    let script = format!(
        "touch ./ok && echo made-ok; touch {probe} || echo refused-etc; touch ~/x || echo refused-home; \
         echo > .git/hooks/x || echo refused-git; echo > link/x || echo refused-link"
    );
    let v = setup.run(&["--sandbox", "workspace-write", &script]);
    let text = output(&v);
    assert_eq!(v["status"], "completed", "{v}");
    for marker in [
        "made-ok",
        "refused-etc",
        "refused-home",
        "refused-git",
        "refused-link",
    ] {
        assert!(text.contains(marker), "{marker} missing: {text}");
    }
    assert!(setup.workspace.join("ok").exists());
    assert!(!Path::new(&probe).exists());
    assert!(!setup.home.join("x").exists());
    assert!(!setup.workspace.join(".git/hooks/x").exists());
    assert!(!setup.outside.join("x").exists());
    let denied = denied(&v);
    let write = |path: &Path| ("write".to_owned(), path.display().to_string());
    assert!(denied.contains(&write(Path::new(&probe))), "{denied:?}");
    assert!(denied.contains(&write(&setup.home.join("x"))), "{denied:?}");
    assert!(
        denied.contains(&write(&setup.outside.join("x"))),
        "a write through the symlink: {denied:?}"
    );
    // `.git/hooks` is a read-only mount; the denial supervisor reports the refused write with its file.
    assert!(
        denied.contains(&write(&setup.workspace.join(".git/hooks/x"))),
        "{denied:?}"
    );
    let notices = v["notices"].to_string();
    assert!(notices.contains("The sandbox denied"), "{notices}");
}

#[test]
fn the_network_is_off_in_the_sandbox_and_on_outside_it() {
    if !landlock() {
        return;
    }
    let setup = Setup::new("");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // The machine's loopback is not the sandbox's; TEST-NET-1 is outside.
    let script = format!(
        "echo ran; if exec 3<>/dev/tcp/127.0.0.1/{port}; then echo connected; else echo refused; fi; \
         if exec 4<>/dev/tcp/192.0.2.1/80; then echo connected-out; else echo refused-out; fi"
    );
    let sandboxed = setup.run(&["--sandbox", "workspace-write", &script]);
    assert!(output(&sandboxed).contains("ran"), "{sandboxed}");
    assert!(output(&sandboxed).contains("refused"), "{sandboxed}");
    assert!(output(&sandboxed).contains("refused-out"), "{sandboxed}");
    assert!(!output(&sandboxed).contains("connected"), "{sandboxed}");
    assert!(listener.accept().is_err(), "the machine's loopback was reached");
    assert!(
        denied(&sandboxed).contains(&("network".to_owned(), "192.0.2.1:80".to_owned())),
        "{sandboxed}"
    );
    let plain = setup.run(&[&format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")]);
    assert!(output(&plain).contains("connected"), "{plain}");
    assert!(plain.get("sandbox_denied").is_none(), "{plain}");
}

#[test]
fn terminal_runs_are_confined() {
    if !landlock() {
        return;
    }
    let setup = Setup::new("");
    let probe = format!("/etc/shellgate-pty-probe-{}", std::process::id());
    let v = setup.run(&[
        "--sandbox",
        "workspace-write",
        "--pty",
        &format!(
            "touch {probe} || echo refused; touch ./fine && echo made; [ -t 0 ] && [ -t 1 ] && echo on-a-terminal; \
             stty size; ls /dev/pts"
        ),
    ]);
    let text = output(&v);
    assert!(text.contains("refused") && text.contains("made"), "{v}");
    assert!(text.contains("on-a-terminal"), "not a terminal run: {v}");
    // The terminal's size comes through; the machine's other terminals are not there at all.
    assert!(text.contains("40 120"), "{v}");
    assert!(text.lines().any(|l| l.trim() == "ptmx"), "{v}");
    assert!(!Path::new(&probe).exists());
    assert!(denied(&v).contains(&("write".to_owned(), probe.clone())), "{v}");
}

/// A `shellgate rpc` server; `call` sends one request and waits for its response.
struct Rpc {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    next_id: u64,
}

impl Rpc {
    fn start(setup: &Setup) -> Self {
        let mut child = setup
            .command()
            .arg("rpc")
            .arg("--config")
            .arg(&setup.config)
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
        }
    }

    fn call(&mut self, params: &Value) -> Value {
        let id = self.send(params);
        self.wait(id)
    }

    /// A `process` request and its answer.
    fn process(&mut self, params: &Value) -> Value {
        let id = self.send_method("process", params);
        self.wait(id)
    }

    /// Send a `bash` request without waiting for its answer.
    fn send(&mut self, params: &Value) -> u64 {
        self.send_method("bash", params)
    }

    fn send_method(&mut self, method: &str, params: &Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        id
    }

    /// The answer to request `id` (answers to others are dropped).
    fn wait(&mut self, id: u64) -> Value {
        for line in self.lines.by_ref() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
        panic!("the server ended before answering {id}");
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_default_session_and_background_jobs_are_confined() {
    if !landlock() {
        return;
    }
    let setup = Setup::new("[sandbox]\nmode = \"workspace-write\"\n");
    let mut rpc = Rpc::start(&setup);
    let probe = format!("/etc/shellgate-session-probe-{}", std::process::id());
    let first = rpc.call(&json!({"command": format!("KEPT=yes; touch {probe} || echo refused; echo $$")}));
    assert!(output(&first).contains("refused"), "{first}");
    let second =
        rpc.call(&json!({"command": "echo \"kept=$KEPT\"; echo $$; touch ./from-session && echo made"}));
    assert!(
        output(&second).contains("kept=yes"),
        "not the same session: {second}"
    );
    assert!(output(&second).contains("made"), "{second}");
    let shell = |v: &Value| {
        output(v)
            .lines()
            .find(|l| l.parse::<u32>().is_ok())
            .map(str::to_owned)
    };
    assert_eq!(shell(&first), shell(&second), "{first} {second}");
    assert!(!Path::new(&probe).exists());
    assert!(
        denied(&first).contains(&("write".to_owned(), probe.clone())),
        "{first}"
    );
    assert_eq!(second["sandbox_denied"], json!([]), "{second}");
    // While the session is busy, a command runs in a fresh shell: still confined, its denials found.
    let slow = rpc.send(&json!({"command": "sleep 5.321"}));
    common::wait_for_argument("5.321");
    let busy = rpc.call(&json!({"command": format!("touch {probe} || echo refused-busy")}));
    assert!(output(&busy).contains("refused-busy"), "{busy}");
    assert!(busy["notices"].to_string().contains("was busy"), "{busy}");
    assert!(
        denied(&busy).contains(&("write".to_owned(), probe.clone())),
        "{busy}"
    );
    assert_eq!(rpc.wait(slow)["status"], "completed");
    // The session shell's writes into `.git` are refused and reported by the supervisor.
    let git = rpc.call(&json!({"command": "echo > .git/hooks/from-session || echo refused-git; mkdir .git/modules || echo refused-mkdir"}));
    assert!(
        output(&git).contains("refused-git") && output(&git).contains("refused-mkdir"),
        "{git}"
    );
    assert!(!setup.workspace.join(".git/hooks/from-session").exists());
    let refused = denied(&git);
    for name in ["hooks/from-session", "modules"] {
        let path = setup.workspace.join(".git").join(name).display().to_string();
        assert!(refused.contains(&("write".to_owned(), path)), "{git}");
    }
    // A stricter request gets a session of its own, read-only.
    let strict = rpc.call(&json!({"command": "touch ./strict || echo refused-ro", "sandbox": "read-only"}));
    assert!(output(&strict).contains("refused-ro"), "{strict}");
    assert!(!setup.workspace.join("strict").exists());
    // A looser one is refused with a notice.
    let loose =
        rpc.call(&json!({"command": format!("touch {probe} || echo still-refused"), "sandbox": "full"}));
    assert!(output(&loose).contains("still-refused"), "{loose}");
    assert!(loose["notices"].to_string().contains("looser"), "{loose}");
    // A job that ends within its yield time: confined, and its denials are found by its pid.
    let yielded = rpc.call(&json!({
        "command": format!("touch {probe} || echo refused-yield"),
        "yield_ms": 5000,
    }));
    assert_eq!(yielded["status"], "completed", "{yielded}");
    assert!(output(&yielded).contains("refused-yield"), "{yielded}");
    assert!(
        denied(&yielded).contains(&("write".to_owned(), probe.clone())),
        "{yielded}"
    );
    // A background job.
    let job = rpc.call(&json!({
        "command": format!("touch {probe} 2>/dev/null || echo refused-job > job.txt"),
        "background": true,
    }));
    assert_eq!(job["status"], "running", "{job}");
    let report = setup.workspace.join("job.txt");
    let written = || std::fs::read_to_string(&report).unwrap_or_default();
    // The redirection creates the file before `echo` writes to it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !written().ends_with('\n') && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(written().trim(), "refused-job");
    assert!(!Path::new(&probe).exists());
    // The job's denials are read when it ends and listed in its final poll.
    let id = job["job_id"].as_str().unwrap().to_owned();
    let ended = rpc.process(&json!({"action": "poll", "job_id": id, "wait_ms": 10000}));
    assert_eq!(ended["status"], "completed", "{ended}");
    let notices = ended["notices"].to_string();
    assert!(
        notices.contains(&format!("The sandbox denied: write {probe}")),
        "{ended}"
    );
    let host = rpc.call(&json!({"command": "true", "host": "docker:web"}));
    assert_eq!(host["status"], "failed_to_start", "{host}");
    // A sandboxed configuration runs commands here, in its sandbox, or on the hosts it names.
    assert!(
        output(&host).contains("host docker:web is not named in the configuration"),
        "{host}"
    );
}

#[test]
fn an_unenforceable_sandbox_fails_to_start_unless_degrading_is_allowed() {
    if !landlock() {
        return;
    }
    let setup = Setup::new("[sandbox]\nmode = \"workspace-write\"\nmin_landlock_abi = 200\n");
    let v = setup.run(&["touch ./never"]);
    assert_eq!(v["status"], "failed_to_start", "{v}");
    assert_eq!(v["error"]["kind"], "sandbox_unavailable", "{v}");
    assert!(v["error"]["reason"].as_str().unwrap().contains("ABI 200"), "{v}");
    assert!(!setup.workspace.join("never").exists());
    let degraded =
        Setup::new("[sandbox]\nmode = \"workspace-write\"\nmin_landlock_abi = 200\nallow_degraded = true\n");
    let v = degraded.run(&["touch ./ran && echo ran"]);
    assert_eq!(v["status"], "completed", "{v}");
    assert!(v["notices"].to_string().contains("allow_degraded"), "{v}");
    assert!(degraded.workspace.join("ran").exists());
}

#[test]
fn an_address_space_limit_stops_a_memory_hog() {
    if !landlock() {
        return;
    }
    let hog = "perl -e '$x = \"a\" x 400_000_000; print length($x), \"\\n\"'";
    let setup = Setup::new("[sandbox]\nmode = \"workspace-write\"\naddress_space_bytes = 268435456\n");
    let limited = setup.run(&[hog]);
    assert_ne!(limited["exit_code"], 0, "{limited}");
    assert!(!output(&limited).contains("400000000"), "{limited}");
    let free = Setup::new("").run(&[hog]);
    assert!(output(&free).contains("400000000"), "{free}");
}

#[test]
fn an_ordinary_permission_error_outside_the_sandbox_is_not_a_denial() {
    let setup = Setup::new("");
    std::fs::write(setup.workspace.join("noexec"), "#!/bin/sh\necho never\n").unwrap();
    let v = setup.run(&["./noexec"]);
    assert!(output(&v).contains("Permission denied"), "{v}");
    assert_eq!(v["exit_code"], 126, "{v}");
    assert!(v.get("sandbox_denied").is_none(), "{v}");
    assert!(!v["notices"].to_string().contains("sandbox"), "{v}");
}

#[test]
fn bad_sandbox_settings_are_named() {
    let setup = Setup::new("[sandbox]\nnetwrok = true\n");
    let out = setup
        .command()
        .args(["run", "--json", "--config"])
        .arg(&setup.config)
        .arg("true")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("sandbox.netwrok") && err.contains("network"),
        "{err}"
    );
    let out = setup
        .command()
        .args(["run", "--sandbox", "write-all", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("write-all") && err.contains("workspace-write"),
        "{err}"
    );
    let bad_mode = Setup::new("[sandbox]\nmode = \"sometimes\"\n");
    let out = bad_mode
        .command()
        .args(["run", "--config"])
        .arg(&bad_mode.config)
        .arg("true")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sometimes"), "{err}");
}
