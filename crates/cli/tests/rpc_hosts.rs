//! Remote hosts through `shellgate rpc`, against the real sshd, Docker and Podman that `.ci/hosts.sh
//! up` starts: a named ssh host's persistent session, a timeout that leaves nothing behind there, and
//! one-off runs in containers. A missing host is a skip, and a failure under
//! `SHELLGATE_REQUIRE_ALL=1`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// The test hosts' variables, or `None` (a skip, said on stderr).
fn hosts() -> Option<(String, String, String, String)> {
    let get = |var: &str| std::env::var(var).ok().filter(|v| !v.is_empty());
    let all = (
        get("SHELLGATE_TEST_SSH_CONFIG"),
        get("SHELLGATE_TEST_SSH_DEST"),
        get("SHELLGATE_TEST_DOCKER"),
        get("SHELLGATE_TEST_PODMAN"),
    );
    if let (Some(config), Some(dest), Some(docker), Some(podman)) = all {
        return Some((config, dest, docker, podman));
    }
    assert!(
        std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
        "the test hosts are not up but SHELLGATE_REQUIRE_ALL=1 (run .ci/hosts.sh up and source its hosts.env)"
    );
    eprintln!("skipped: the test hosts are not up (.ci/hosts.sh up, then source target/ci-hosts/hosts.env)");
    None
}

struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Rpc {
    fn start(config: &std::path::Path) -> Self {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"))
            .arg("rpc")
            .arg("--config")
            .arg(config)
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    fn bash(&mut self, params: &Value) -> Value {
        self.call("bash", params)
    }

    fn call(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next;
        self.next += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin.as_mut().unwrap(), "{request}").unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "server closed");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return reply["result"].clone();
            }
        }
    }

    /// Close stdin and wait for the server to end (bounded).
    fn finish(mut self) {
        drop(self.stdin.take());
        for _ in 0..500 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("the server did not exit at EOF");
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sleepers_script(secs: u32) -> String {
    let text = secs.to_string();
    let (head, last) = text.split_at(text.len() - 1);
    format!(
        "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' 2>/dev/null < \"$f\"; echo; done | grep -c 'sleep {head}[{last}]' || true"
    )
}

#[test]
fn a_named_ssh_host_keeps_a_session_and_containers_run_commands() {
    let Some((ssh_config, dest, docker, podman)) = hosts() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("shellgate.toml");
    std::fs::write(
        &config,
        format!(
            "[ssh]\nconfig_file = \"{ssh_config}\"\n\n[hosts.build]\ntarget = \"ssh:{dest}\"\n\
             workspace = \"{}\"\nworkdir = \"/tmp\"\nenv = {{ FROM_CONFIG = \"yes\" }}\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let mut rpc = Rpc::start(&config);

    let r = rpc.bash(&json!({"command": "cd /tmp && export V='a b' && alias a1='echo al'", "host": "build"}));
    assert_eq!(r["exit_code"], 0, "{r}");
    // /tmp on the host is the workspace here.
    assert_eq!(r["cwd"], dir.path().display().to_string(), "{r}");
    let r =
        rpc.bash(&json!({"command": "pwd; echo \"$V\"; a1; echo \"$FROM_CONFIG\"; id -un", "host": "build"}));
    assert_eq!(r["output"], "/tmp\na b\nal\nyes\nsgtest\n", "{r}");

    let r = rpc.bash(&json!({"command": "sleep 391", "host": "build", "timeout": 1}));
    assert_eq!(r["status"], "timed_out", "{r}");
    let r = rpc.bash(&json!({"command": sleepers_script(391), "host": "build", "session": "none"}));
    assert_eq!(r["output"], "0\n", "a remote process survived its timeout: {r}");
    let r = rpc.bash(&json!({"command": "echo \"$V\"", "host": "build"}));
    assert_eq!(r["output"], "a b\n", "the session outlived the stop: {r}");

    // A terminal on the host.
    let r = rpc.bash(&json!({"command": "tty", "host": "build", "pty": true}));
    assert!(r["output"].as_str().unwrap_or("").starts_with("/dev/pts/"), "{r}");
    // A killed background job leaves nothing on the host.
    let r = rpc.bash(&json!({"command": "sleep 393", "host": "build", "background": true}));
    assert_eq!(r["status"], "running", "{r}");
    let job = r["job_id"].as_str().unwrap().to_owned();
    let r = rpc.call("process", &json!({"action": "kill", "job_id": job}));
    assert_ne!(r["status"], "running", "{r}");
    let r = rpc.bash(&json!({"command": sleepers_script(393), "host": "build", "session": "none"}));
    assert_eq!(r["output"], "0\n", "a killed job's remote process survived: {r}");

    // An unnamed host works too (no sandbox is configured).
    let r = rpc.bash(&json!({"command": "echo hi", "host": format!("ssh:{dest}"), "session": "none"}));
    assert_eq!(r["output"], "hi\n", "{r}");

    for container in [format!("docker:{docker}"), format!("podman:{podman}")] {
        let r = rpc.bash(&json!({"command": "pwd; echo \"$E\"; exit 5", "host": container, "cwd": "/work", "env": {"E": "x y"}}));
        assert_eq!(
            (r["output"].as_str(), r["exit_code"].as_i64()),
            (Some("/work\nx y\n"), Some(5)),
            "{r}"
        );
        let r = rpc.bash(&json!({"command": "echo hi", "host": format!("{container}-missing")}));
        assert_eq!(r["status"], "failed_to_start", "{r}");
    }
    rpc.finish();
}
