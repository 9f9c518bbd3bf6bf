//! Approvals through `shellgate rpc`: a call needing approval answers at once; `approve` runs it or
//! not; an `allow-always` written by one server process is honoured, narrowly, by the next; a
//! person decides through the running server's control socket with `shellgate approve`; the
//! persisted rules are listed and revoked with `shellgate approvals`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("runtime")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "[policy]\nsecurity = \"allowlist\"\nask = \"on-miss\"\nallow = [\"printf *\"]\n",
        )
        .unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"));
        cmd.env("XDG_CONFIG_HOME", self.path().join("xdg"))
            .env("XDG_RUNTIME_DIR", self.path().join("runtime"))
            .env_remove("SHELLGATE_APPROVALS_FILE")
            .env("SHELLGATE_ARTIFACT_DIR", self.path().join("artifacts"))
            .current_dir(self.path().join("work"));
        cmd
    }

    fn approvals_file(&self) -> std::path::PathBuf {
        self.path().join("xdg/shellgate/approvals.toml")
    }
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn start(env: &Env) -> Self {
        let mut child = env
            .command()
            .arg("rpc")
            .arg("--config")
            .arg(env.path().join("config.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    fn bash(&mut self, command: &str) -> Value {
        self.request("bash", &json!({"command": command}))["result"].take()
    }

    fn approve(&mut self, id: &str, decision: &str) -> Value {
        self.request("approve", &json!({"id": id, "decision": decision}))["result"].take()
    }

    fn stop(mut self) {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn short_id(result: &Value) -> String {
    assert_eq!(result["status"], "approval_pending", "{result:#}");
    result["approval"]["short_id"].as_str().unwrap().to_owned()
}

#[test]
fn approve_allow_once_deny_and_allow_always_across_server_restarts() {
    let env = Env::new();
    let mut server = Server::start(&env);
    let pending = server.bash("touch denied");
    let id = short_id(&pending);
    assert!(
        pending["text"]
            .as_str()
            .unwrap()
            .contains(&format!("Reply with: approve {id}"))
    );
    let denied = server.approve(&id, "deny");
    assert_eq!(denied["status"], "blocked", "{denied:#}");
    assert!(!env.path().join("work/denied").exists());

    let full = server.bash("touch once")["approval"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ran = server.approve(&full, "allow-once");
    assert_eq!(ran["status"], "completed", "{ran:#}");
    assert!(env.path().join("work/once").exists());
    let unknown = server.approve(&full, "allow-once");
    assert_eq!(unknown["blocked"]["rule"], "approval-unknown", "{unknown:#}");
    let bad = server.request("approve", &json!({"id": "x", "decision": "maybe"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad:#}");

    let id = short_id(&server.bash("printf a; ls -a"));
    let always = server.approve(&id, "allow-always");
    assert_eq!(always["status"], "completed", "{always:#}");
    server.stop();

    let text = std::fs::read_to_string(env.approvals_file()).unwrap();
    assert!(
        text.contains("version = 1") && text.contains(r#"argv = ["ls", "-a"]"#),
        "{text}"
    );
    assert_eq!(
        text.matches("argv = ").count(),
        1,
        "only the missing segment is stored: {text}"
    );

    let mut next = Server::start(&env);
    assert_eq!(next.bash("ls -a")["status"], "completed");
    for wider in ["ls -a; rm -rf x", "ls -a $(touch y)", "ls -a > f"] {
        short_id(&next.bash(wider));
    }
    next.stop();

    let list = env.command().args(["approvals", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success() && listed.contains("  1  ls -a"), "{listed}");
    let revoke = env
        .command()
        .args(["approvals", "revoke", "ls -a"])
        .output()
        .unwrap();
    assert!(
        revoke.status.success(),
        "{}",
        String::from_utf8_lossy(&revoke.stderr)
    );
    let mut third = Server::start(&env);
    short_id(&third.bash("ls -a"));
    third.stop();
}

#[test]
fn shellgate_approve_reaches_the_running_server() {
    let env = Env::new();
    let mut server = Server::start(&env);
    let id = short_id(&server.bash("touch by-person"));
    let socket = env
        .path()
        .join(format!("runtime/shellgate/{}.sock", server.child.id()));
    let deadline = Instant::now() + Duration::from_secs(15);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "no control socket");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = server.child.id().to_string();
    let out = env
        .command()
        .args(["approve", &id, "allow-once", "--server", &pid])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env.path().join("work/by-person").exists());
    let again = env
        .command()
        .args(["approve", &id, "deny", "--server", &pid])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("No approval"),
        "{again:?}"
    );
    server.stop();
}

#[test]
fn a_corrupt_approvals_file_is_reported_at_start_and_allows_nothing() {
    let env = Env::new();
    std::fs::create_dir_all(env.approvals_file().parent().unwrap()).unwrap();
    std::fs::write(
        env.approvals_file(),
        "version = 1\n[[rule]]\nargv = [\"ls\", \"-a\"\n",
    )
    .unwrap();
    let mut child = env
        .command()
        .arg("rpc")
        .arg("--config")
        .arg(env.path().join("config.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "bash", "params": {"command": "ls -a"}});
    writeln!(child.stdin.as_mut().unwrap(), "{request}").unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&env.approvals_file().display().to_string()) && stderr.contains("line "),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"approval_pending\""), "{stdout}");
    let list = env.command().args(["approvals", "list"]).output().unwrap();
    assert_eq!(list.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&list.stderr).contains("line "),
        "{list:?}"
    );
}

#[test]
fn a_command_cannot_approve_its_own_request() {
    let env = Env::new();
    // Ordinary commands run without asking; deleting outside the workspace asks a person.
    std::fs::write(env.path().join("config.toml"), "[policy]\nsecurity = \"full\"\n").unwrap();
    let victim = env.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep"), "x").unwrap();
    let mut server = Server::start(&env);
    let pending = server.bash(&format!("find {} -delete", victim.display()));
    let id = short_id(&pending);
    let pid = server.child.id();
    let socket = env.path().join(format!("runtime/shellgate/{pid}.sock"));
    let deadline = Instant::now() + Duration::from_secs(15);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "no control socket");
        std::thread::sleep(Duration::from_millis(20));
    }
    let binary = assert_cmd::cargo::cargo_bin!("shellgate");
    // A copy under another name, a raw socket client, and both from inside the sandbox.
    let copied = format!(
        "cp {} ./helper && ./helper approve {id} allow-once --server {pid}; echo copied-exit=$?",
        binary.display()
    );
    let raw = format!(
        "python3 -c 'import socket,json; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); \
         s.sendall((json.dumps({{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"approve\",\"params\":{{\"id\":\"{id}\",\"decision\":\"allow-once\"}}}})+\"\\n\").encode()); \
         print(\"answer:\", s.makefile().readline())'",
        socket.display()
    );
    for attempt in [&copied, &raw] {
        for sandbox in [None, Some("workspace-write")] {
            let mut params = json!({"command": attempt});
            if let Some(mode) = sandbox {
                params["sandbox"] = json!(mode);
            }
            let result = server.request("bash", &params)["result"].take();
            let text = result["output"].as_str().unwrap_or_default().to_owned();
            assert!(!text.contains("Approved"), "{sandbox:?} {attempt}: {text}");
            assert!(
                victim.join("keep").exists(),
                "{sandbox:?} {attempt} approved the delete: {text}"
            );
            // Unsandboxed, the socket answers with its refusal; sandboxed, the socket is out of reach.
            if sandbox.is_none() {
                assert!(
                    text.contains("refused a process the engine started"),
                    "{attempt}: {text}"
                );
            } else {
                assert!(
                    !text.contains("answer:") || text.contains("refused"),
                    "{attempt}: {text}"
                );
            }
        }
    }
    // The request is still pending, and a person outside the engine decides it.
    let out = env
        .command()
        .args(["approve", &id, "deny", "--server", &pid.to_string()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("a person denied"),
        "{out:?}"
    );
    assert!(victim.join("keep").exists());
    server.stop();
}

#[test]
fn approving_through_the_socket_can_be_switched_off() {
    let env = Env::new();
    std::fs::write(
        env.path().join("config.toml"),
        "[policy]\nsecurity = \"allowlist\"\nallow = [\"printf *\"]\n[approvals]\nsocket_approve = false\n",
    )
    .unwrap();
    let mut server = Server::start(&env);
    let id = short_id(&server.bash("touch nope"));
    let pid = server.child.id().to_string();
    let socket = env.path().join(format!("runtime/shellgate/{pid}.sock"));
    let deadline = Instant::now() + Duration::from_secs(15);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "no control socket");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = env
        .command()
        .args(["approve", &id, "allow-once", "--server", &pid])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("socket_approve"),
        "{out:?}"
    );
    assert!(!env.path().join("work/nope").exists());
    server.stop();
}
