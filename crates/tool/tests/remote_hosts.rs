//! Calls on remote hosts through the tool: the persistent session there, one-off runs, jobs, named
//! hosts with their directory mapping, and the refusals. The host is a stand-in container engine that
//! runs on this machine (the real sshd, Docker and Podman are exercised by `shellgate-hosts`' tests
//! and the CLI's).

use std::path::Path;

use shellgate::{
    BashParams, BashTool, HostsConfig, NamedHost, ProcessAction, ProcessParams, ProcessTool, ToolConfig,
    ToolStatus,
};
use shellgate_hosts::{ClientSettings, HostTarget};
use tokio_util::sync::CancellationToken;

/// The hosts crate's container engine stand-in: runs the script on this machine; `missing` does not
/// exist.
const STAND_IN_ENGINE: &str = include_str!("../../hosts/tests/support/stand_in_engine.sh");

fn tool(dir: &Path, named: Vec<(&str, NamedHost)>) -> BashTool {
    let engine = dir.join("engine");
    std::fs::write(&engine, STAND_IN_ENGINE).unwrap();
    std::fs::set_permissions(&engine, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hosts = HostsConfig {
        clients: ClientSettings {
            docker: vec![engine.display().to_string()],
            ..ClientSettings::default()
        },
        named: named.into_iter().map(|(n, h)| (n.to_owned(), h)).collect(),
        allow_unnamed: None,
    };
    BashTool::new(ToolConfig {
        cwd: dir.to_path_buf(),
        hosts,
        ..ToolConfig::default()
    })
}

fn on(host: &str, command: &str) -> BashParams {
    BashParams {
        host: Some(host.to_owned()),
        ..BashParams::new(command)
    }
}

#[tokio::test]
async fn a_session_on_a_host_keeps_its_directory_and_variables() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), Vec::new());
    let r = tool
        .call(
            on("docker:here", "cd /tmp && export X='a b'"),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    assert_eq!(r.cwd, "/tmp");
    assert!(
        r.notices.iter().any(|n| n.contains("host docker:here")),
        "{:?}",
        r.notices
    );
    let r = tool
        .call(
            on("docker:here", "pwd; echo \"$X\"; exit 3"),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(r.output, "/tmp\na b\n");
    assert_eq!(r.exit_code, Some(3));
    // The local default session is another shell.
    let r = tool
        .call(BashParams::new("echo \"${X-unset}\""), CancellationToken::new())
        .await;
    assert_eq!(r.output, "unset\n");
    tool.shutdown_hosts().await;
}

#[tokio::test]
async fn sessions_on_hosts_are_listed_and_closed_by_the_process_tool() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), Vec::new());
    let process = ProcessTool::for_bash(&tool);
    let r = tool
        .call(
            on("docker:here", "cd /tmp && export KEPT=1"),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    let listed = process
        .call(ProcessParams {
            action: ProcessAction::Sessions,
            ..ProcessParams::default()
        })
        .await;
    let remote: Vec<_> = listed
        .sessions
        .iter()
        .flatten()
        .filter(|s| s.host.as_deref() == Some("docker:here"))
        .collect();
    assert_eq!(remote.len(), 1, "{listed:?}");
    assert_eq!(
        (remote[0].name.as_str(), remote[0].cwd.as_str()),
        ("default", "/tmp")
    );
    assert_eq!(remote[0].commands, 1);
    assert!(
        listed
            .model_text()
            .contains("default on docker:here idle 1 commands, cwd /tmp"),
        "{}",
        listed.model_text()
    );

    let close = |host: Option<&str>| ProcessParams {
        action: ProcessAction::CloseSession,
        session: Some("default".into()),
        host: host.map(str::to_owned),
        ..ProcessParams::default()
    };
    let closed = process.call(close(Some("docker:here"))).await;
    assert!(!closed.is_error, "{closed:?}");
    assert!(closed.message.contains("on docker:here closed"), "{closed:?}");
    let again = process.call(close(Some("docker:here"))).await;
    assert!(again.is_error, "{again:?}");
    assert!(
        process
            .call(close(Some("ssh:-bad")))
            .await
            .message
            .contains("Unknown host")
    );
    // The closed session's state is gone: the next command there starts afresh.
    let r = tool
        .call(
            on("docker:here", "echo \"${KEPT-unset}\""),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(r.output, "unset\n", "{r:?}");
    tool.shutdown_hosts().await;
}

#[tokio::test]
async fn one_off_runs_and_jobs_run_on_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), Vec::new());
    let mut params = on("docker:here", "echo \"$GREETING\"; pwd");
    params.session = Some("none".into());
    params.cwd = Some("/".into());
    params.env.insert("GREETING".into(), "it's here".into());
    let r = tool.call(params, CancellationToken::new()).await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (ToolStatus::Completed, "it's here\n/\n"),
        "{r:?}"
    );

    let mut params = on("docker:here", "sleep 0.2; echo done");
    params.yield_ms = Some(5000);
    let r = tool.call(params, CancellationToken::new()).await;
    assert_eq!(r.output, "done\n", "{r:?}");
    tool.shutdown_hosts().await;
}

#[tokio::test]
async fn a_named_host_maps_the_workspace_to_its_workdir_and_back() {
    let local = tempfile::tempdir().unwrap();
    let remote = tempfile::tempdir().unwrap();
    std::fs::create_dir(local.path().join("src")).unwrap();
    std::fs::create_dir(remote.path().join("src")).unwrap();
    let remote_dir = remote.path().canonicalize().unwrap();
    let named = NamedHost {
        target: HostTarget::parse("docker:here").unwrap(),
        workspace: Some(local.path().to_path_buf()),
        workdir: Some(remote_dir.display().to_string()),
        env: [("FROM_HOST".to_owned(), "yes".to_owned())].into(),
    };
    let tool = tool(local.path(), vec![("web", named)]);
    let mut params = on("web", "pwd; echo \"$FROM_HOST\"");
    params.cwd = Some(local.path().join("src").display().to_string());
    let r = tool.call(params, CancellationToken::new()).await;
    assert_eq!(r.output, format!("{}/src\nyes\n", remote_dir.display()), "{r:?}");
    assert_eq!(r.cwd, local.path().join("src").display().to_string());
    // Without a cwd: the tool's directory, mapped.
    let r = tool
        .call(on("web", "cd .. && pwd"), CancellationToken::new())
        .await;
    assert_eq!(r.output, format!("{}\n", remote_dir.display()), "{r:?}");
    assert_eq!(r.cwd, local.path().display().to_string());
    tool.shutdown_hosts().await;
}

#[tokio::test]
async fn hosts_that_cannot_be_used_fail_to_start_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), Vec::new());
    let r = tool.call(on("ftp:x", "echo hi"), CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::FailedToStart);
    assert!(r.output.contains("unknown host 'ftp:x'"), "{}", r.output);

    let r = tool
        .call(on("docker:missing", "echo hi"), CancellationToken::new())
        .await;
    assert_eq!(r.status, ToolStatus::FailedToStart, "{r:?}");
    assert!(
        r.output.contains("not reachable") && r.output.contains("No such container"),
        "{}",
        r.output
    );

    let mut params = on("docker:here", "echo hi");
    params.cwd = Some("/no/such/dir".into());
    let r = tool.call(params, CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::FailedToStart, "{r:?}");
    assert!(
        r.output
            .contains("no such directory on host docker:here: /no/such/dir"),
        "{}",
        r.output
    );

    // A sandboxed configuration runs only locally or on the hosts it names.
    let sandboxed = BashTool::new(ToolConfig {
        cwd: dir.path().to_path_buf(),
        sandbox: shellgate::SandboxConfig {
            mode: Some(shellgate::sandbox::SandboxMode::WorkspaceWrite),
            ..shellgate::SandboxConfig::default()
        },
        ..ToolConfig::default()
    });
    let r = sandboxed
        .call(on("ssh:box", "echo hi"), CancellationToken::new())
        .await;
    assert_eq!(r.status, ToolStatus::FailedToStart);
    assert!(
        r.output.contains("not named in the configuration"),
        "{}",
        r.output
    );
    tool.shutdown_hosts().await;
}

#[tokio::test]
async fn a_dangerous_command_is_judged_before_it_reaches_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let engine_tool = tool(dir.path(), Vec::new());
    let config = ToolConfig {
        policy: Some(shellgate::default_policy()),
        ..engine_tool.config().clone()
    };
    let tool = BashTool::new(config);
    let r = tool
        .call(on("docker:here", "rm -rf ~"), CancellationToken::new())
        .await;
    assert_ne!(r.status, ToolStatus::Completed, "{r:?}");
    assert!(r.exit_code.is_none(), "it ran: {r:?}");
}

#[test]
fn host_sections_of_a_configuration_file() {
    let text = r#"
[ssh]
config_file = "/etc/sg/ssh_config"
options = ["Port=2222"]
multiplex = false
[podman]
command = ["podman", "--runtime", "runc"]
[hosts]
allow_unnamed = false
[hosts.web]
target = "docker:web"
workspace = "/home/me/proj"
workdir = "/work"
env = { A = "1" }
"#;
    let file = shellgate::FileConfig::parse(text, Path::new("t.toml")).unwrap();
    let mut config = ToolConfig::default();
    file.apply(&mut config);
    let hosts = &config.hosts;
    assert_eq!(
        hosts.clients.ssh.config_file.as_deref(),
        Some(Path::new("/etc/sg/ssh_config"))
    );
    assert_eq!(hosts.clients.ssh.options, ["Port=2222"]);
    assert!(!hosts.clients.ssh.multiplex);
    assert_eq!(hosts.clients.podman, ["podman", "--runtime", "runc"]);
    assert_eq!(hosts.allow_unnamed, Some(false));
    let web = &hosts.named["web"];
    assert_eq!(web.target, HostTarget::parse("docker:web").unwrap());
    assert_eq!(web.workdir.as_deref(), Some("/work"));
    assert_eq!(web.env["A"], "1");
    // What `shellgate config` prints reads back the same.
    let effective = shellgate::FileConfig::effective(&config).to_toml();
    let again = shellgate::FileConfig::parse(&effective, Path::new("e.toml")).unwrap();
    let mut round = ToolConfig::default();
    again.apply(&mut round);
    assert_eq!(round.hosts, config.hosts);

    let err = shellgate::FileConfig::parse("[hosts.web]\ntagret = \"docker:web\"\n", Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("hosts.web.tagret") && err.contains("line 2") && err.contains("`target`"),
        "{err}"
    );
    let err = shellgate::FileConfig::parse("[hosts]\nallow_unamed = true\n", Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("hosts.allow_unamed") && err.contains("`allow_unnamed`"),
        "{err}"
    );
    let err = shellgate::FileConfig::parse("[hosts.web]\ntarget = \"ftp:web\"\n", Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("hosts.web.target") && err.contains("ftp:web"),
        "{err}"
    );
    let err = shellgate::FileConfig::parse("[ssh]\nconfig = \"x\"\n", Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("ssh.config"), "{err}");
}
