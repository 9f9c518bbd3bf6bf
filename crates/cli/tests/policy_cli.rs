//! The command and environment policies through the binary: `shellgate run --json`, `shellgate rpc`,
//! `shellgate check` and `shellgate config`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use serde_json::{Value, json};

/// A private scratch directory with a fake home (removed when dropped).
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("shellgate-policy-cli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("home")).unwrap();
        Self(dir)
    }
    fn path(&self) -> &Path {
        &self.0
    }
    fn home(&self) -> PathBuf {
        self.0.join("home")
    }
    /// Write a configuration file and return its path.
    fn config(&self, text: &str) -> PathBuf {
        let path = self.0.join("shellgate.toml");
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The binary with `HOME` pointed at the scratch home (so `~` is never the real one), run in the
/// scratch directory, without any inherited secret of the test run's own.
fn shellgate(scratch: &Scratch) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"));
    cmd.env("HOME", scratch.home())
        .env("XDG_CONFIG_HOME", scratch.path().join("xdg"))
        .env("SHELLGATE_ARTIFACT_DIR", scratch.path().join("artifacts"))
        .current_dir(scratch.path());
    cmd
}

fn run_json(cmd: &mut Command, command: &str) -> Value {
    let out = cmd.args(["run", "--json", "--", command]).output().unwrap();
    assert!(
        out.status.success(),
        "engine failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

struct Rpc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Rpc {
    fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .arg("rpc")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
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

    /// The whole reply (`result` or `error`).
    fn reply(&mut self, params: &Value) -> Value {
        let id = self.next;
        self.next += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "bash", "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "server closed");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return reply;
            }
        }
    }

    fn bash(&mut self, params: &Value) -> Value {
        self.reply(params)["result"].clone()
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn rm_rf_home_never_runs_under_the_default_configuration() {
    let s = Scratch::new("rm");
    let canary = s.home().join("canary");
    std::fs::write(&canary, "alive").unwrap();
    let v = run_json(&mut shellgate(&s), "rm -rf ~");
    assert_eq!(v["status"], "approval_pending", "{v}");
    assert_eq!(v["approval"]["command"], "rm -rf ~", "{v}");
    assert_eq!(v["blocked"]["rule"], v["approval"]["rule"], "{v}");
    assert!(v["exit_code"].is_null());
    let out = shellgate(&s)
        .args(["run", "--", "rm -rf $HOME/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Approval required"));

    let mut rpc = Rpc::start(shellgate(&s));
    for params in [
        json!({"command": "rm -rf ~"}),
        json!({"command": "rm -fr ~/*", "session": "none"}),
        json!({"command": "rm -rf ~", "background": true}),
        json!({"command": "rm -rf ~", "yield_ms": 1000}),
    ] {
        let r = rpc.bash(&params);
        assert_eq!(r["status"], "approval_pending", "{params}: {r}");
        assert!(r["job_id"].is_null(), "{r}");
    }
    drop(rpc);
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "alive");
}

#[test]
fn loader_and_shell_injection_keys_in_the_request_never_reach_the_command() {
    let s = Scratch::new("inject");
    let marker = s.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let out = shellgate(&s)
        .args(["run", "--json", "--env", "LD_PRELOAD=/tmp/evil.so", "--", &touch])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "blocked", "{v}");
    assert_eq!(v["blocked"]["rule"], "env-policy");
    assert!(v["output"].as_str().unwrap().contains("`LD_PRELOAD`"), "{v}");
    let mut rpc = Rpc::start(shellgate(&s));
    for env in [
        json!({"BASH_ENV": "/tmp/evil"}),
        json!({"PATH": "/tmp"}),
        json!({"LD_LIBRARY_PATH": "/x"}),
    ] {
        for session in ["default", "none"] {
            let r = rpc.bash(&json!({"command": touch, "env": env, "session": session}));
            assert_eq!(r["status"], "blocked", "{env} {session}: {r}");
            let key = env.as_object().unwrap().keys().next().unwrap().clone();
            assert!(r["output"].as_str().unwrap().contains(&key), "{r}");
        }
    }
    drop(rpc);
    assert!(!marker.exists(), "a refused command ran");
}

fn names_in_env_output(v: &Value) -> Vec<String> {
    v["output"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
        .collect()
}

#[test]
fn inherited_secrets_are_removed_unless_allowlisted() {
    let s = Scratch::new("secrets");
    let with_secrets = |cmd: &mut Command| {
        cmd.env("FOO_API_KEY", "sk-inherited-1234")
            .env("DEPLOY_TOKEN", "tok-5678")
            .env("PLAIN_SETTING", "visible");
    };
    let mut cmd = shellgate(&s);
    with_secrets(&mut cmd);
    let names = names_in_env_output(&run_json(&mut cmd, "env"));
    assert!(names.contains(&"PLAIN_SETTING".to_owned()), "{names:?}");
    assert!(!names.contains(&"FOO_API_KEY".to_owned()), "{names:?}");
    assert!(!names.contains(&"DEPLOY_TOKEN".to_owned()), "{names:?}");

    let mut cmd = shellgate(&s);
    with_secrets(&mut cmd);
    let mut rpc = Rpc::start(cmd);
    for params in [
        json!({"command": "env"}),
        json!({"command": "env", "session": "none"}),
        json!({"command": "env", "yield_ms": 5000}),
        json!({"command": "env", "pty": true, "session": "none"}),
    ] {
        let r = rpc.bash(&params);
        let names = names_in_env_output(&r);
        assert!(names.contains(&"PLAIN_SETTING".to_owned()), "{params}: {r}");
        assert!(!names.contains(&"FOO_API_KEY".to_owned()), "{params}: {r}");
    }
    // A request may still pass a secret on purpose.
    let r = rpc.bash(&json!({"command": "echo $FOO_API_KEY", "env": {"FOO_API_KEY": "given"}}));
    assert_eq!(r["output"], "given\n", "{r}");
    drop(rpc);

    let config = s.config("[env]\nallow_secrets = [\"FOO_API_KEY\"]\n");
    let mut cmd = shellgate(&s);
    with_secrets(&mut cmd);
    cmd.arg("rpc").arg("--config").arg(&config);
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (id, session) in [(1, "default"), (2, "none")] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "bash",
            "params": {"command": "echo ${FOO_API_KEY:-unset} ${DEPLOY_TOKEN:-unset}", "session": session}});
        writeln!(stdin, "{request}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("id").is_some_and(|id| !id.is_null()))
        .collect();
    assert_eq!(replies.len(), 2, "{replies:?}");
    for reply in replies {
        assert_eq!(reply["result"]["output"], "sk-inherited-1234 unset\n", "{reply}");
    }
}

#[test]
fn configured_secret_values_are_redacted_from_the_output() {
    let s = Scratch::new("redact");
    let config = s.config("[env]\nredact = [\"MY_SERVICE_KEY\"]\nallow_secrets = [\"MY_SERVICE_KEY\"]\n");
    let mut cmd = shellgate(&s);
    cmd.env("MY_SERVICE_KEY", "hunter2-value-xyz");
    let out = cmd
        .args(["run", "--json", "--config"])
        .arg(&config)
        .args(["--", "echo \"key=$MY_SERVICE_KEY\"; echo done"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["output"], "key=[REDACTED:MY_SERVICE_KEY]\ndone\n", "{v}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("hunter2-value-xyz"));

    // Without the allowlist the child does not see it, and a value it prints anyway is redacted.
    let config = s.config("[env]\nredact = [\"MY_SERVICE_KEY\"]\n");
    let mut cmd = shellgate(&s);
    cmd.env("MY_SERVICE_KEY", "hunter2-value-xyz");
    let out = cmd
        .args(["run", "--json", "--config"])
        .arg(&config)
        .args([
            "--",
            "echo \"[${MY_SERVICE_KEY:-unset}]\"; printf 'hunter2-value-xyz\\n' >&2",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["output"], "[unset]\n[REDACTED:MY_SERVICE_KEY]\n", "{v}");
}

#[test]
fn requests_tighten_the_policy_and_looser_values_are_refused() {
    let s = Scratch::new("tighten");
    let mut rpc = Rpc::start(shellgate(&s));
    let r = rpc.bash(&json!({"command": "ls /", "security": "allowlist"}));
    assert_eq!(r["status"], "approval_pending", "{r}");
    let r = rpc.bash(&json!({"command": "true", "ask": "always"}));
    assert_eq!(r["status"], "approval_pending", "{r}");
    let r = rpc.bash(&json!({"command": "echo x", "security": "deny"}));
    assert_eq!(r["status"], "blocked", "{r}");
    let reply = rpc.reply(&json!({"command": "true", "security": "lax"}));
    assert!(
        reply["error"]["message"].as_str().unwrap().contains("lax"),
        "{reply}"
    );
    drop(rpc);

    let config = s.config("[policy]\nsecurity = \"allowlist\"\nallow = [\"@safe\"]\n");
    let target = s.path().join("made");
    let mut cmd = shellgate(&s);
    let mut child = cmd
        .arg("rpc")
        .arg("--config")
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "bash",
        "params": {"command": format!("touch {}", target.display()), "security": "full", "ask": "off"}});
    writeln!(stdin, "{request}").unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "bash", "params": {"command": "ls /"}});
    writeln!(stdin, "{request}").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let first = replies.iter().find(|r| r["id"] == 1).unwrap();
    assert_eq!(first["result"]["status"], "approval_pending", "{first}");
    let notices = first["result"]["notices"].as_array().unwrap();
    assert!(
        notices
            .iter()
            .any(|n| n.as_str().unwrap().contains("security = \"full\"")),
        "{first}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.as_str().unwrap().contains("ask = \"off\"")),
        "{first}"
    );
    let second = replies.iter().find(|r| r["id"] == 2).unwrap();
    assert_eq!(
        second["result"]["status"], "completed",
        "@safe allows ls: {second}"
    );
    assert!(!target.exists());
}

fn check(s: &Scratch, args: &[&str]) -> Output {
    shellgate(s).arg("check").args(args).output().unwrap()
}

#[test]
fn check_prints_the_verdict_and_exits_by_decision() {
    let s = Scratch::new("check");
    let out = check(&s, &["--json", "--", "ls -la | wc -l"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "allow");
    for key in ["rule", "reason", "segments"] {
        assert!(v.get(key).is_some(), "{key} missing: {v}");
    }
    let commands: Vec<&str> = v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|seg| seg["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["ls -la", "wc -l"]);

    let out = check(&s, &["--json", "--", "rm", "-rf", "~"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["segments"][0]["decision"], "ask");

    let out = check(&s, &["--", "sudo shellgate approve 1f2e allow-always"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("deny"), "{text}");
    assert!(text.contains("shellgate approve"), "{text}");

    let config = s.config("[policy]\nsecurity = \"allowlist\"\nask = \"off\"\nallow = [\"git status\"]\n");
    let config = config.to_str().unwrap();
    let out = check(&s, &["--config", config, "--", "git status"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = check(&s, &["--config", config, "--", "git status; git push"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("git push"), "{text}");
    // Nothing ran: no marker from a command that would create one.
    let marker = s.path().join("checked");
    let out = check(&s, &["--", &format!("touch {}", marker.display())]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!marker.exists());
}

#[test]
fn check_refuses_the_safe_profile_bypasses_an_earlier_version_allowed() {
    let s = Scratch::new("check-safe");
    let config = s.config("[policy]\nsecurity = \"allowlist\"\nask = \"off\"\nallow = [\"@safe\"]\n");
    let config = config.to_str().unwrap();
    // A bare repository in the workspace whose configuration runs a program on `log -p`.
    let bare = s.path().join("evil");
    for d in ["objects", "refs/heads"] {
        std::fs::create_dir_all(bare.join(d)).unwrap();
    }
    std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(bare.join("config"), "[diff \"x\"]\n\ttextconv = touch /tmp/p\n").unwrap();
    for command in [
        r#"awk 'BEGIN { x = 1. / 1; system("touch /tmp/p") }'"#,
        r"sed -e '#x\' -e 'e touch /tmp/p' f",
        "sed -n ':a e touch /tmp/p' f",
        "printf -v 'a[$(touch /tmp/p)]' x",
        "declare -i n; printf -v n %s 'a[$(touch /tmp/p)]'",
        "declare -i n; for n in 'a[$(touch /tmp/p)]'; do :; done",
        "x=$(cat f); echo $((x))",
        "git config core.fsmonitor 'touch /tmp/p' get",
        "git -C evil log -p",
        "timeout 3 head -n1 < /dev/tcp/127.0.0.1/8081",
        "GIT_TRACE=/tmp/any git status",
        "ptx -G in out",
        "hostname --file=F",
        "git branch --sort=x NAME",
        "doas bash -lc 'echo hi'",
        "sudo bash -lc 'echo hi'",
    ] {
        let out = check(&s, &["--config", config, "--", command]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{command}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let out = check(
        &s,
        &["--config", config, "--", "git status && grep -n x f | head"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn configuration_errors_name_the_key_its_line_and_a_suggestion() {
    let s = Scratch::new("config-errors");
    let config = s.config("timeout = 30\n[policy]\nsecuirty = \"allowlist\"\n");
    for sub in [
        &["config"][..],
        &["run", "--", "true"][..],
        &["check", "--", "true"][..],
    ] {
        let mut cmd = shellgate(&s);
        cmd.arg(sub[0]).arg("--config").arg(&config).args(&sub[1..]);
        let out = cmd.output().unwrap();
        assert!(!out.status.success(), "{sub:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let expected = format!(
            "unknown key `policy.secuirty` at line 3 of {}; did you mean `security`?",
            config.display()
        );
        assert!(err.contains(&expected), "{sub:?}: {err}");
    }
    let config = s.config("[[policy.rules]]\nallow = \"npm run *\"\nmatch = [\"npm test\"]\n");
    let out = shellgate(&s)
        .arg("config")
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`npm run *`") && err.contains("`npm test`"), "{err}");
    let config = s.config("[env]\nredact = \"ONE\"\n");
    let out = shellgate(&s)
        .arg("config")
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("line 2"), "{err}");
}

#[test]
fn config_sources_say_where_each_value_came_from() {
    let s = Scratch::new("sources");
    let config = s.config(
        "timeout = 30\n\n[policy]\nsecurity = \"allowlist\"\nallow = [\"@safe\", \"cargo test *\"]\n[env]\nredact = [\"MY_KEY\"]\n",
    );
    let out = shellgate(&s)
        .args(["config", "--sources", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("{key} missing:\n{text}"))
            .to_owned()
    };
    let file = config.display().to_string();
    assert!(line("timeout").ends_with(&format!("# {file}:1")), "{text}");
    assert!(line("policy.security").contains("\"allowlist\""), "{text}");
    assert!(
        line("policy.security").ends_with(&format!("# {file}:4")),
        "{text}"
    );
    assert!(line("policy.allow").contains("cargo test *"), "{text}");
    assert!(line("env.redact").ends_with(&format!("# {file}:7")), "{text}");
    assert!(
        line("policy.ask").contains("\"on-miss\"") && line("policy.ask").ends_with("# default"),
        "{text}"
    );
    assert!(line("max_timeout").ends_with("# default"), "{text}");
    assert!(line("intercept.preflight").ends_with("# default"), "{text}");

    // Without --sources: TOML that loads again.
    let out = shellgate(&s)
        .args(["config", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let toml_text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(toml_text.contains("[policy]"), "{toml_text}");
    let again = s.config(&toml_text);
    let out = shellgate(&s)
        .args(["check", "--config"])
        .arg(&again)
        .args(["--", "git log"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = shellgate(&s)
        .args(["check", "--config"])
        .arg(&again)
        .args(["--", "touch x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn redaction_reaches_the_artifact_and_job_output_too() {
    let s = Scratch::new("redact-stream");
    let config = s.config("[env]\nredact = [\"MY_SERVICE_KEY\"]\nallow_secrets = [\"MY_SERVICE_KEY\"]\n");
    // Large enough to spill: the artifact holds the whole stream, redacted.
    let mut cmd = shellgate(&s);
    cmd.env("MY_SERVICE_KEY", "hunter2-value-xyz");
    let out = cmd
        .args(["run", "--json", "--config"])
        .arg(&config)
        .args([
            "--",
            "seq 1 200000; printf 'x%.0s' $(seq 1 5); echo \"$MY_SERVICE_KEY\"; seq 1 3",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let artifact = v["artifact"].as_str().expect("spilled");
    let id = artifact.trim_start_matches("artifact://");
    let stored = std::fs::read_dir(s.path().join("artifacts"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().contains(id))
        .map(|e| std::fs::read(e.path()).unwrap())
        .expect("artifact file");
    let stored = String::from_utf8_lossy(&stored);
    assert!(
        stored.contains("xxxxx[REDACTED:MY_SERVICE_KEY]\n"),
        "the artifact is redacted"
    );
    assert!(!stored.contains("hunter2-value-xyz"));

    // A job's output, polled through the RPC server.
    let mut child = shellgate(&s)
        .env("MY_SERVICE_KEY", "hunter2-value-xyz")
        .args(["rpc", "--config"])
        .arg(&config)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"bash","params":{{"command":"sleep 0.3; echo \"$MY_SERVICE_KEY\"","background":true}}}}"#
    )
    .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let job = first["result"]["job_id"].as_str().unwrap().to_owned();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"process","params":{{"action":"poll","job_id":"{job}","wait_ms":5000}}}}"#
    )
    .unwrap();
    let polled = loop {
        let v: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    drop(stdin);
    let _ = child.wait();
    assert_eq!(
        polled["result"]["output"], "[REDACTED:MY_SERVICE_KEY]\n",
        "{polled}"
    );
}
