//! `rm -rf ~` never runs under the default configuration, on any path. This binary's only test
//! points the engine's `HOME` at a scratch directory first, so that were the command to run, only
//! a canary file would go.

use shellgate::{BashParams, BashTool, CancellationToken, ToolConfig, ToolStatus};

#[test]
fn rm_rf_home_awaits_approval_and_never_runs_on_any_path() {
    let home = std::env::temp_dir().join(format!("shellgate-policy-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let canary = home.join("canary");
    std::fs::write(&canary, "alive").unwrap();
    // SAFETY: this is the binary's only test and no other thread exists yet (the runtime is built
    // below), so nothing reads the environment while it changes.
    unsafe { std::env::set_var("HOME", &home) };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let tool = BashTool::new(ToolConfig {
            artifacts: None,
            ..ToolConfig::default()
        });
        for (session, background, pty, command) in [
            ("none", false, false, "rm -rf ~"),
            ("default", false, false, "rm -rf ~"),
            ("none", true, false, "rm -rf ~"),
            ("none", false, true, "rm -rf ~"),
            ("default", false, false, "rm -r -f $HOME"),
            ("none", false, false, "cd /tmp && sh -c 'rm -fr ~/'"),
        ] {
            let params = BashParams {
                session: Some(session.to_owned()),
                background,
                pty,
                ..BashParams::new(command)
            };
            let r = tool.call(params, CancellationToken::new()).await;
            let what = format!("{command} ({session}, background {background}, pty {pty})");
            assert_eq!(r.status, ToolStatus::ApprovalPending, "{what}: {r:?}");
            assert!(
                r.is_error && r.job_id.is_none() && r.exit_code.is_none(),
                "{what}: {r:?}"
            );
            let approval = r.approval.as_ref().expect("approval details");
            assert_eq!(approval.command, command);
            assert!(
                !approval.always_approvable,
                "a dangerous command is never approved always"
            );
            assert!(r.output.starts_with("Approval required (id "), "{}", r.output);
            assert_eq!(r.blocked.as_ref().unwrap().rule, approval.rule);
        }
        tool.sessions().shutdown();
    });
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "alive");
    let _ = std::fs::remove_dir_all(&home);
}
