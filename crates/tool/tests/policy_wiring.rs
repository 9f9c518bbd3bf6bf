//! The command and environment policies on the tool's paths: nothing judged ask or deny runs, a
//! request's environment cannot inject code, a request may only tighten the policy, and an
//! interactive program cannot be started as a job under an allowlist.

use std::path::{Path, PathBuf};

use shellgate::intercept::{AskMode, Context, Interceptor, Normalized, Policy, Security, Verdict, from_fn};
use shellgate::{
    BashParams, BashTool, CancellationToken, ENV_RULE, INTERACTIVE_RULE, ToolConfig, ToolResult, ToolStatus,
};

fn config() -> ToolConfig {
    ToolConfig {
        artifacts: None,
        ..ToolConfig::default()
    }
}

fn with_policy(policy: Policy) -> ToolConfig {
    ToolConfig {
        policy: Some(policy),
        ..config()
    }
}

/// A private scratch directory (removed when dropped).
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("shellgate-policy-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn call(tool: &BashTool, params: BashParams) -> ToolResult {
    tool.call(params, CancellationToken::new()).await
}

fn in_session(command: &str, session: &str) -> BashParams {
    BashParams {
        session: Some(session.to_owned()),
        ..BashParams::new(command)
    }
}

#[tokio::test]
async fn control_commands_are_blocked_and_ordinary_ones_run() {
    let tool = BashTool::new(config());
    let r = call(&tool, BashParams::new("env shellgate approve 1f2e allow-always")).await;
    assert_eq!(r.status, ToolStatus::Blocked, "{r:?}");
    assert!(
        r.blocked.as_ref().unwrap().message.starts_with("Blocked:"),
        "{r:?}"
    );
    assert!(r.approval.is_none());
    let r = call(&tool, BashParams::new("echo ok | tr a-z A-Z")).await;
    assert_eq!((r.status, r.output.as_str()), (ToolStatus::Completed, "OK\n"));
}

#[tokio::test]
async fn allowlist_misses_list_the_missing_segments() {
    let policy = Policy::builder()
        .security(Security::Allowlist)
        .allow("echo *")
        .build()
        .unwrap();
    let tool = BashTool::new(with_policy(policy));
    let r = call(&tool, BashParams::new("echo a && touch /nonexistent-dir/x")).await;
    assert_eq!(r.status, ToolStatus::ApprovalPending, "{r:?}");
    let approval = r.approval.unwrap();
    let missing: Vec<&str> = approval
        .segments_missing
        .iter()
        .map(|s| s.command.as_str())
        .collect();
    assert_eq!(missing, ["touch /nonexistent-dir/x"]);
    assert!(approval.always_approvable);
    let r = call(&tool, BashParams::new("echo allowed")).await;
    assert_eq!(r.output, "allowed\n");
}

#[tokio::test]
async fn request_env_that_injects_code_is_refused_before_anything_runs() {
    let dir = Scratch::new("env");
    let marker = dir.path().join("ran");
    let tool = BashTool::new(config());
    for (key, session) in [
        ("LD_PRELOAD", "none"),
        ("BASH_ENV", "default"),
        ("PATH", "none"),
        ("BASH_FUNC_echo%%", "default"),
    ] {
        let mut params = in_session(&format!("touch {}", marker.display()), session);
        params.env.insert(key.into(), "/tmp/evil".into());
        let r = call(&tool, params).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{key}: {r:?}");
        let blocked = r.blocked.as_ref().unwrap();
        assert_eq!(blocked.rule, ENV_RULE);
        assert!(r.output.contains(key), "{key}: {}", r.output);
        assert!(!marker.exists(), "{key}: the command ran");
    }
    // An ordinary variable still reaches the command.
    let mut params = BashParams::new("echo $GREETING");
    params.env.insert("GREETING".into(), "hi".into());
    assert_eq!(call(&tool, params).await.output, "hi\n");
}

#[tokio::test]
async fn requests_may_tighten_but_never_loosen() {
    let tool = BashTool::new(config());
    let mut params = BashParams::new("ls /");
    params.security = Some(Security::Allowlist);
    let r = call(&tool, params).await;
    assert_eq!(r.status, ToolStatus::ApprovalPending, "{r:?}");
    let mut params = BashParams::new("echo x");
    params.ask = Some(AskMode::Always);
    assert_eq!(call(&tool, params).await.status, ToolStatus::ApprovalPending);

    let strict = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::OnMiss)
        .allow("@safe")
        .build()
        .unwrap();
    let tool = BashTool::new(with_policy(strict));
    let dir = Scratch::new("tighten");
    let target = dir.path().join("made");
    let mut params = BashParams::new(format!("touch {}", target.display()));
    params.security = Some(Security::Full);
    params.ask = Some(AskMode::Off);
    let r = call(&tool, params).await;
    // The configured allowlist with `ask = "on-miss"` applies: the miss awaits approval.
    assert_eq!(r.status, ToolStatus::ApprovalPending, "{r:?}");
    assert!(!target.exists());
    let looser: Vec<&String> = r.notices.iter().filter(|n| n.contains("looser")).collect();
    assert_eq!(looser.len(), 2, "{:?}", r.notices);
    assert!(looser[0].contains("security = \"full\""), "{looser:?}");
    assert!(looser[1].contains("ask = \"off\""), "{looser:?}");
    // A stricter request on an allowed command keeps running it, without a notice.
    let mut params = BashParams::new("echo fine");
    params.security = Some(Security::Allowlist);
    let r = call(&tool, params).await;
    assert_eq!((r.output.as_str(), r.notices.len()), ("fine\n", 0), "{r:?}");
}

#[tokio::test]
async fn interactive_programs_cannot_start_as_jobs_under_an_allowlist() {
    let policy = Policy::builder()
        .security(Security::Allowlist)
        .allow("bash *")
        .allow("python3 *")
        .allow("echo *")
        .build()
        .unwrap();
    let tool = BashTool::new(with_policy(policy));
    for command in ["bash", "python3", "bash -i", "exec python3 -q"] {
        let mut params = BashParams::new(command);
        params.background = true;
        let r = call(&tool, params).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command}: {r:?}");
        assert_eq!(r.blocked.as_ref().unwrap().rule, INTERACTIVE_RULE, "{command}");
        assert!(r.output.contains("cannot be judged"), "{}", r.output);
        assert!(r.job_id.is_none());
    }
    let mut params = BashParams::new("echo typed | python3 -c 'print(1)'");
    params.yield_ms = Some(5_000);
    let r = call(&tool, params).await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    assert_eq!(r.output, "1\n");
    // In the foreground nothing is typed into it later: the allowlist alone decides.
    let r = call(&tool, BashParams::new("bash -c 'echo inline'")).await;
    assert_eq!(r.output, "inline\n");
}

#[tokio::test]
async fn a_custom_interceptor_is_chained_with_the_policy() {
    let deny_echo = from_fn(|cmd: &Normalized, _: &Context| {
        if cmd.original.starts_with("echo") {
            Verdict::deny("no-echo", "echo is not allowed here")
        } else {
            Verdict::Allow
        }
    });
    let tool = BashTool::new(config()).with_interceptor(deny_echo);
    let r = call(&tool, BashParams::new("echo hi")).await;
    assert_eq!(
        r.blocked.as_ref().map(|b| b.rule.as_str()),
        Some("no-echo"),
        "{r:?}"
    );
    // The custom interceptor allows it; the policy still asks (`kill 0` would stop the engine's
    // own process group).
    let r = call(&tool, BashParams::new("kill 0")).await;
    assert_eq!(r.status, ToolStatus::ApprovalPending, "{r:?}");

    // A policy deny wins over a custom ask.
    let ask_all = from_fn(|_: &Normalized, _: &Context| Verdict::ask("custom-ask", "always ask"));
    let tool = BashTool::new(config()).with_interceptor(ask_all);
    let r = call(&tool, BashParams::new("shellgate approvals")).await;
    assert_eq!(r.status, ToolStatus::Blocked, "{r:?}");
    let r = call(&tool, BashParams::new("true")).await;
    assert_eq!(r.status, ToolStatus::ApprovalPending);
    assert_eq!(r.approval.unwrap().rule, "custom-ask");
}

#[tokio::test]
async fn without_a_policy_every_command_the_interceptor_allows_runs() {
    let tool = BashTool::new(ToolConfig {
        policy: None,
        ..config()
    });
    // A control command is no longer refused (here run through a function standing in for the
    // engine; the policy, which judges a function where it is called, refuses the bare command).
    let command = "shellgate() { echo stand-in \"$@\"; }; shellgate approve 1";
    let bare = Normalized::unchanged("shellgate approve 1");
    let v = shellgate::default_policy().inspect(&bare, &Context::default());
    assert!(v.is_deny(), "the default policy refuses it: {v:?}");
    let r = call(&tool, BashParams::new(command)).await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (ToolStatus::Completed, "stand-in approve 1\n"),
        "{r:?}"
    );
    // A request may still tighten an engine without a policy.
    let mut params = BashParams::new("echo x");
    params.security = Some(Security::Deny);
    assert_eq!(call(&tool, params).await.status, ToolStatus::Blocked);
}
