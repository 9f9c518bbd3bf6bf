//! `shellgate jobs` against running servers through their private control sockets: list, log, poll
//! and kill a real background job; choose among several servers; refuse other methods and
//! directories that are not private; clean up the socket at exit.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn shellgate(runtime_dir: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"));
    cmd.env("XDG_RUNTIME_DIR", runtime_dir).env(
        "SHELLGATE_ARTIFACT_DIR",
        std::env::temp_dir().join("shellgate-cli-test-artifacts"),
    );
    cmd
}

fn runtime_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("shellgate-runtime-")
        .tempdir()
        .unwrap()
}

/// A server (`rpc` or `mcp`) with piped stdio; its stdin is returned to be closed when done.
fn server(runtime: &Path, kind: &str) -> (Child, ChildStdin) {
    let mut child = shellgate(runtime)
        .arg(kind)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

fn socket_of(runtime: &Path, child: &Child) -> PathBuf {
    runtime.join("shellgate").join(format!("{}.sock", child.id()))
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn jobs(runtime: &Path, args: &[&str]) -> Output {
    shellgate(runtime).arg("jobs").args(args).output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Start a background job through the rpc server; returns its id.
fn start_background_job(child: &mut Child, stdin: &mut ChildStdin, command: &str) -> String {
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "bash",
        "params": {"command": command, "background": true}});
    writeln!(stdin, "{request}").unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "server closed stdout");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 1 {
            // Keep reading notifications in the background so the server never blocks on stdout.
            std::thread::spawn(move || for _ in stdout.lines() {});
            return message["result"]["job_id"].as_str().expect("a job id").to_owned();
        }
    }
}

#[test]
fn a_servers_jobs_are_listed_read_polled_and_killed() {
    let runtime = runtime_dir();
    let (mut child, mut stdin) = server(runtime.path(), "rpc");
    let id = start_background_job(&mut child, &mut stdin, "echo started; sleep 983.214");
    let socket = socket_of(runtime.path(), &child);
    assert!(socket.exists(), "{}", socket.display());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600, "socket mode");
    assert_eq!(mode(socket.parent().unwrap()), 0o700, "directory mode");

    let list = jobs(runtime.path(), &["list"]);
    let (stdout, stderr) = text(&list);
    assert!(list.status.success(), "{stderr}");
    assert!(
        stdout.contains(&id) && stdout.contains("running") && stdout.contains("sleep 983.214"),
        "{stdout}"
    );

    wait_for("the job's first line", || {
        text(&jobs(runtime.path(), &["log", &id])).0.contains("started")
    });
    let poll = jobs(runtime.path(), &["poll", &id, "--wait-ms", "200"]);
    let (stdout, _) = text(&poll);
    assert!(poll.status.success());
    assert!(
        stdout.contains("started") && stdout.contains("still running"),
        "{stdout}"
    );

    let kill = jobs(runtime.path(), &["kill", &id]);
    let (stdout, stderr) = text(&kill);
    assert!(kill.status.success(), "{stderr}");
    assert!(stdout.contains(&format!("Killed job {id}")), "{stdout}");
    let listed: Value = serde_json::from_slice(&jobs(runtime.path(), &["list", "--json"]).stdout).unwrap();
    assert_eq!(listed["jobs"][0]["job_id"], id.as_str());
    assert_eq!(listed["jobs"][0]["status"], "killed", "{listed}");
    let survivors = Command::new("pgrep")
        .args(["-f", "sleep 983.214"])
        .output()
        .unwrap();
    assert!(survivors.stdout.is_empty(), "the job's tree is gone");

    let unknown = jobs(runtime.path(), &["poll", "no-such-job"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(text(&unknown).0.contains("no-such-job"), "{:?}", text(&unknown));

    // At EOF the server exits and takes its socket with it.
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert!(!socket.exists(), "socket left behind");
    let gone = jobs(runtime.path(), &["list"]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        text(&gone).1.contains("no running shellgate"),
        "{:?}",
        text(&gone)
    );
}

#[test]
fn several_servers_need_a_choice_and_stale_sockets_are_cleaned() {
    let runtime = runtime_dir();
    let (mut rpc, rpc_stdin) = server(runtime.path(), "rpc");
    let (mut mcp, mcp_stdin) = server(runtime.path(), "mcp");
    let (rpc_socket, mcp_socket) = (socket_of(runtime.path(), &rpc), socket_of(runtime.path(), &mcp));
    wait_for("both sockets", || rpc_socket.exists() && mcp_socket.exists());
    // A socket file of a server killed before it could clean up (no process has this pid).
    let stale = runtime.path().join("shellgate").join("4194399.sock");
    std::fs::write(&stale, "").unwrap();

    let ambiguous = jobs(runtime.path(), &["list"]);
    let (_, stderr) = text(&ambiguous);
    assert_eq!(ambiguous.status.code(), Some(1));
    for pid in [rpc.id(), mcp.id()] {
        assert!(stderr.contains(&pid.to_string()), "names pid {pid}: {stderr}");
    }
    assert!(stderr.contains("--server PID"), "{stderr}");
    assert!(!stale.exists(), "the stale socket is removed");

    for pid in [rpc.id(), mcp.id()] {
        let chosen = jobs(runtime.path(), &["--server", &pid.to_string(), "list", "--json"]);
        let (stdout, stderr) = text(&chosen);
        assert!(chosen.status.success(), "{stderr}");
        let listed: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(listed["jobs"], serde_json::json!([]), "{stdout}");
    }
    let missing = jobs(runtime.path(), &["--server", "4194398", "list"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing).1.contains("4194398"));

    drop((rpc_stdin, mcp_stdin));
    rpc.wait().unwrap();
    mcp.wait().unwrap();
    assert!(!rpc_socket.exists() && !mcp_socket.exists());
}

#[test]
fn the_socket_serves_process_only() {
    let runtime = runtime_dir();
    let (mut child, stdin) = server(runtime.path(), "rpc");
    let socket = socket_of(runtime.path(), &child);
    wait_for("the socket", || socket.exists());
    let marker = runtime.path().join("marker");
    let mut stream = UnixStream::connect(&socket).unwrap();
    let bash = serde_json::json!({"jsonrpc": "2.0", "id": 5, "method": "bash",
        "params": {"command": format!("touch {}", marker.display())}});
    writeln!(stream, "{bash}").unwrap();
    writeln!(stream, "not json").unwrap();
    writeln!(
        stream,
        r#"{{"jsonrpc":"2.0","id":6,"method":"process","params":{{"action":"sessions"}}}}"#
    )
    .unwrap();
    let mut lines = BufReader::new(&stream).lines();
    let mut answer = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let refused = answer();
    assert_eq!(refused["id"], 5);
    assert_eq!(refused["error"]["code"], -32601);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only `process`"),
        "{refused}"
    );
    assert_eq!(answer()["error"]["code"], -32700);
    let sessions = answer();
    assert_eq!(sessions["id"], 6);
    assert_eq!(sessions["result"]["is_error"], false, "{sessions}");
    assert!(!marker.exists(), "a bash request through the socket ran");
    drop(stdin);
    child.wait().unwrap();
}

#[test]
fn a_directory_open_to_others_is_refused() {
    let runtime = runtime_dir();
    let dir = runtime.path().join("shellgate");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (child, stdin) = server(runtime.path(), "rpc");
    let out = jobs(runtime.path(), &["list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("not private"), "{:?}", text(&out));
    drop(stdin);
    let server_out = child.wait_with_output().unwrap();
    assert!(server_out.status.success(), "the server runs on without a socket");
    let stderr = String::from_utf8_lossy(&server_out.stderr);
    assert!(
        stderr.contains("no control socket") && stderr.contains("mode 755"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing listens there"
    );
}
