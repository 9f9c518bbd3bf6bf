//! Every path starts from a launch spec that goes through the configured layers: one-shot, session
//! start and respawn, terminal, yield and background runs.

#[path = "jobs_common.rs"]
mod common;

use std::sync::{Arc, Mutex};

use common::*;
use shellgate::executor::LaunchSpec;
use shellgate::{BashParams, CancellationToken, ToolStatus};

#[tokio::test]
async fn a_recording_layer_sees_every_path() {
    let seen: Arc<Mutex<Vec<LaunchSpec>>> = Arc::default();
    let record = Arc::clone(&seen);
    let mut config = test_config();
    config.layers.push(move |spec: LaunchSpec| {
        record.lock().unwrap().push(spec.clone());
        spec
    });
    let (bash, process) = tools_with(config);
    let call = |command: &str, edit: &dyn Fn(&mut BashParams)| {
        let mut params = BashParams::new(command);
        edit(&mut params);
        bash.call(params, CancellationToken::new())
    };
    let runs = |needle: &str| {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|s| s.args.iter().any(|a| a.contains(needle)))
            .count()
    };
    let shells = || {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|s| s.args.last().is_some_and(|a| a.ends_with("/script")))
            .count()
    };

    let r = call("echo one-shot", &|p| p.session = Some("none".into())).await;
    assert_eq!(r.output, "one-shot\n");
    assert_eq!(runs("echo one-shot"), 1, "one-shot run");

    let r = call("echo in-session", &|p| p.session = Some("layered".into())).await;
    assert_eq!(r.output, "in-session\n");
    assert_eq!(shells(), 1, "the session's shell started through the layers");
    assert_eq!(
        runs("echo in-session"),
        0,
        "a session command is text for the shell, not a launch"
    );
    let r = call("exit 4", &|p| p.session = Some("layered".into())).await;
    assert_eq!(r.exit_code, Some(4));
    let r = call("echo again", &|p| p.session = Some("layered".into())).await;
    assert_eq!(r.output, "again\n");
    assert_eq!(shells(), 2, "the respawned shell too");

    let r = call("echo on-a-terminal", &|p| {
        p.session = Some("none".into());
        p.pty = true;
    })
    .await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    assert_eq!(runs("echo on-a-terminal"), 1, "terminal run");
    assert!(
        seen.lock().unwrap().iter().any(|s| s.pty),
        "the terminal spec says so"
    );

    let r = call("echo yielded", &|p| p.yield_ms = Some(5000)).await;
    assert_eq!(r.output, "yielded\n");
    assert_eq!(runs("echo yielded"), 1, "yield run");

    let r = call("echo backgrounded", &|p| p.background = true).await;
    let id = r.job_id.expect("job");
    let (_, out) = poll_to_end(&process, &id).await;
    assert!(out.contains("backgrounded"), "{out}");
    assert_eq!(runs("echo backgrounded"), 1, "background run");
}

#[tokio::test]
async fn the_mock_executor_takes_every_one_shot_run() {
    let mock = shellgate::executor::MockExecutor::new()
        .with_output("scripted\n")
        .with_exit_code(2);
    let bash = shellgate::BashTool::new(test_config()).with_executor(mock.clone());
    let mut params = BashParams::new("make nothing-runs");
    params.session = Some("none".into());
    let r = bash.call(params, CancellationToken::new()).await;
    assert_eq!((r.exit_code, r.output.as_str()), (Some(2), "scripted\n"));
    assert!(
        mock.specs()[0]
            .args
            .iter()
            .any(|a| a.contains("make nothing-runs"))
    );
}

#[tokio::test]
async fn the_terminal_executor_takes_every_foreground_terminal_run() {
    let pipes = shellgate::executor::MockExecutor::new().with_output("piped\n");
    let terminal = shellgate::executor::MockExecutor::new().with_output("on a terminal\n");
    let bash = shellgate::BashTool::new(test_config())
        .with_executor(pipes.clone())
        .with_terminal_executor(terminal.clone());
    if !shellgate_pty::pty_selected(true) {
        assert!(
            std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
            "no pseudo-terminal here but SHELLGATE_REQUIRE_ALL=1"
        );
        eprintln!("skipped: no pseudo-terminal here");
        return;
    }
    let mut params = BashParams::new("tty");
    params.pty = true;
    let r = bash.call(params, CancellationToken::new()).await;
    assert_eq!(r.output, "on a terminal\n");
    assert_eq!(terminal.specs().len(), 1);
    assert!(terminal.specs()[0].pty);
    assert!(
        pipes.specs().is_empty(),
        "a terminal run went through the pipe executor"
    );
}
