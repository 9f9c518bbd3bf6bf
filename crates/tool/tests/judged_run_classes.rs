//! More commands and requests an earlier version allowed under `@safe` (asking off), run through
//! the tool: each is blocked and does nothing — no file appears, no connection is made.

#[path = "jobs_common.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use shellgate::intercept::{AskMode, Policy, Security};
use shellgate::{BashParams, BashTool, CancellationToken, ToolConfig, ToolResult, ToolStatus};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shellgate-judged-classes-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tool(dir: &Path, extra: &[&str]) -> BashTool {
    let mut policy = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::Off)
        .allow("@safe");
    for rule in extra {
        policy = policy.allow(*rule);
    }
    BashTool::new(ToolConfig {
        artifacts: None,
        policy: Some(policy.build().unwrap()),
        cwd: dir.to_path_buf(),
        ..ToolConfig::default()
    })
}

async fn run_in(tool: &BashTool, session: &str, command: &str, env: &[(&str, &str)]) -> ToolResult {
    let params = BashParams {
        session: Some(session.into()),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
        ..BashParams::new(command)
    };
    tool.call(params, CancellationToken::new()).await
}

fn program_runs(program: &str, args: &[&str]) -> bool {
    std::process::Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test]
async fn a_request_env_key_not_known_to_be_inert_is_refused_by_name() {
    let dir = scratch("env");
    let tool = tool(&dir, &["python3 -c pass"]);
    // A user base whose `.pth` file runs code when python starts.
    let version = std::process::Command::new("python3")
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if let Some(version) = &version {
        let site = dir.join(format!("base/lib/python{version}/site-packages"));
        std::fs::create_dir_all(&site).unwrap();
        let marker = dir.join("pth-ran");
        std::fs::write(
            site.join("x.pth"),
            format!(
                "import os; open({:?}, 'w').close()\n",
                marker.display().to_string()
            ),
        )
        .unwrap();
    }
    let base = dir.join("base").display().to_string();
    let r = run_in(&tool, "none", "python3 -c pass", &[("PYTHONUSERBASE", &base)]).await;
    assert_ne!(r.status, ToolStatus::Completed, "{r:?}");
    assert!(
        r.output.contains("PYTHONUSERBASE"),
        "the refusal names the key: {}",
        r.output
    );
    assert!(!dir.join("pth-ran").exists(), "the planted .pth ran");
    // An inert key is accepted.
    let r = run_in(&tool, "none", "printenv LANG", &[("LANG", "C.UTF-8")]).await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    if common::available_or_skip(version.is_some(), "python3 is not installed") {
        let r = run_in(&tool, "none", "python3 -c pass", &[]).await;
        assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
        assert!(!dir.join("pth-ran").exists(), "the .pth ran without the key");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn dev_tcp_to_a_local_listener_is_refused_and_nothing_connects() {
    let dir = scratch("tcp");
    let tool = tool(&dir, &[]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for command in [
        format!("timeout 3 head -n1 < /dev/tcp/127.0.0.1/{port}"),
        format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port}"),
        format!("p={port}; cat < /dev/tcp/127.0.0.1/$p"),
    ] {
        let r = run_in(&tool, "none", &command, &[]).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command}: {r:?}");
    }
    let accepted = listener.accept();
    assert!(
        accepted
            .as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "something connected: {accepted:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn git_config_written_in_one_call_is_not_run_by_the_next() {
    if !common::available_or_skip(program_runs("git", &["--version"]), "git is not installed") {
        return;
    }
    let dir = scratch("gitcfg");
    assert!(
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&dir)
            .status()
            .unwrap()
            .success()
    );
    let tool = tool(&dir, &[]);
    let marker = dir.join("fsmonitor-ran");
    let set = format!("git config core.fsmonitor 'touch {}' get", marker.display());
    let r = run_in(&tool, "s", &set, &[]).await;
    assert_eq!(r.status, ToolStatus::Blocked, "{r:?}");
    let r = run_in(&tool, "s", "git status", &[]).await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    assert!(!marker.exists(), "git status ran the planted fsmonitor");
    let config = std::fs::read_to_string(dir.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    tool.sessions().shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn privilege_wrappers_and_sed_file_names_are_blocked_and_do_nothing() {
    let dir = scratch("misc");
    std::fs::write(dir.join("f"), "a\n").unwrap();
    let tool = tool(&dir, &[]);
    let m = |n: &str| dir.join(n).display().to_string();
    for command in [
        format!("doas bash -lc 'touch {}'", m("doas")),
        format!("doas touch {}", m("doas2")),
        format!(r"sed -e 'r {}\' -e 'e touch {}' f", m("f"), m("sed-r")),
        format!(r"sed -e 'w {}\' f", m("sed-w")),
    ] {
        let r = run_in(&tool, "none", &command, &[]).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command}: {r:?}");
    }
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("f")], "an attack left a file");
    let _ = std::fs::remove_dir_all(&dir);
}
