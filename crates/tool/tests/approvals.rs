//! Approvals through the library: the security × ask matrix, decisions, the narrowness of
//! "allow always" rules, their persistence in the approvals file, expiry, many pending at once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use shellgate::approvals::{ApprovalsConfig, ApprovalsFile};
use shellgate::intercept::{AskMode, Policy, Security};
use shellgate::{
    ApprovalDecision, BashParams, BashTool, CancellationToken, ToolConfig, ToolResult, ToolStatus,
};

fn config(policy: Policy, file: &Path) -> ToolConfig {
    ToolConfig {
        artifacts: None,
        policy: Some(policy),
        default_session: "none".into(),
        approvals: ApprovalsConfig {
            file: Some(file.to_path_buf()),
            ..ApprovalsConfig::default()
        },
        ..ToolConfig::default()
    }
}

fn allowlist(rules: &[&str]) -> Policy {
    rules
        .iter()
        .fold(
            Policy::builder()
                .security(Security::Allowlist)
                .ask(AskMode::OnMiss),
            |b, r| b.allow(*r),
        )
        .build()
        .unwrap()
}

async fn call(tool: &BashTool, command: &str) -> ToolResult {
    tool.call(BashParams::new(command), CancellationToken::new())
        .await
}

async fn decide(tool: &BashTool, id: &str, decision: ApprovalDecision) -> ToolResult {
    tool.approve(id, decision, CancellationToken::new()).await
}

fn short(r: &ToolResult) -> String {
    assert_eq!(r.status, ToolStatus::ApprovalPending, "{r:#?}");
    r.approval.as_ref().unwrap().short_id.clone()
}

fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shellgate/approvals.toml");
    (dir, file)
}

#[tokio::test]
async fn the_security_by_ask_matrix() {
    use ToolStatus::{ApprovalPending as P, Blocked as B, Completed as R};
    let (_dir, file) = scratch();
    // (security, ask, [allowlisted, not allowlisted, dangerous])
    let matrix = [
        (Security::Deny, AskMode::Off, [B, B, B]),
        (Security::Deny, AskMode::OnMiss, [B, B, B]),
        (Security::Deny, AskMode::Always, [B, B, B]),
        (Security::Allowlist, AskMode::Off, [R, B, B]),
        (Security::Allowlist, AskMode::OnMiss, [R, P, P]),
        (Security::Allowlist, AskMode::Always, [P, P, P]),
        (Security::Full, AskMode::Off, [R, R, B]),
        (Security::Full, AskMode::OnMiss, [R, R, P]),
        (Security::Full, AskMode::Always, [P, P, P]),
    ];
    for (security, ask, expected) in matrix {
        let policy = Policy::builder()
            .security(security)
            .ask(ask)
            .allow("printf *")
            .build()
            .unwrap();
        let tool = BashTool::new(config(policy, &file));
        for (command, want) in ["printf ok", "date +%Y", "rm -rf /usr"].into_iter().zip(expected) {
            let r = call(&tool, command).await;
            assert_eq!(r.status, want, "{security:?} {ask:?} `{command}`: {r:#?}");
            if want == P {
                let a = r.approval.as_ref().unwrap();
                assert_eq!(a.short_id.len(), 8);
                assert!(a.id.starts_with(&a.short_id));
                assert_eq!(a.host, "local");
                assert!(
                    r.output
                        .contains(&format!("Approval required (id {})", a.short_id)),
                    "{}",
                    r.output
                );
                assert!(
                    r.output.contains(&format!(
                        "Reply with: approve {} allow-once|allow-always|deny",
                        a.short_id
                    )),
                    "{}",
                    r.output
                );
                assert!(
                    r.output.contains(command) && r.output.contains("Cwd: "),
                    "{}",
                    r.output
                );
                let miss = security == Security::Allowlist && command == "date +%Y";
                assert_eq!(a.always_approvable, miss, "{a:#?}");
                // The dangerous command is never approved here; the others are denied.
                let denied = decide(&tool, &a.id, ApprovalDecision::Deny).await;
                assert_eq!(denied.status, B);
            }
            if want == R {
                assert!(r.exit_code == Some(0), "{r:#?}");
            }
        }
    }
    assert!(!file.exists(), "nothing was allowed always");
}

#[tokio::test]
async fn allow_once_runs_exactly_the_request_and_deny_never_runs() {
    let (dir, file) = scratch();
    let tool = BashTool::new(config(allowlist(&[]), &file));
    let marker = dir.path().join("ran");
    let params = BashParams {
        cwd: Some(dir.path().display().to_string()),
        env: [("APPROVED_VALUE".to_owned(), "v42".to_owned())].into(),
        ..BashParams::new("touch ran; printf \"$APPROVED_VALUE $PWD\"")
    };
    let pending = tool.call(params.clone(), CancellationToken::new()).await;
    let id = short(&pending);
    assert!(!marker.exists(), "an approval_pending command does not run");
    let denied = decide(&tool, &id, ApprovalDecision::Deny).await;
    assert_eq!(denied.status, ToolStatus::Blocked);
    assert!(!marker.exists());
    assert_eq!(
        decide(&tool, &id, ApprovalDecision::AllowOnce)
            .await
            .blocked
            .unwrap()
            .rule,
        "approval-unknown"
    );

    let pending = tool.call(params, CancellationToken::new()).await;
    let id = pending.approval.unwrap().id;
    let ran = decide(&tool, &id, ApprovalDecision::AllowOnce).await;
    assert_eq!(ran.status, ToolStatus::Completed, "{ran:#?}");
    assert_eq!(
        ran.output,
        format!("v42 {}", dir.path().canonicalize().unwrap().display())
    );
    assert!(marker.exists());
    // Once: the same command asks again, and nothing was persisted.
    short(&call(&tool, &format!("cd {} && touch ran", dir.path().display())).await);
    assert!(!file.exists());
}

#[tokio::test]
async fn allow_always_is_narrow() {
    let (_dir, file) = scratch();
    let tool = BashTool::new(config(allowlist(&["printf *"]), &file));
    let id = short(&call(&tool, "printf a; ls -a").await);
    let ran = decide(&tool, &id, ApprovalDecision::AllowAlways).await;
    assert_eq!(ran.status, ToolStatus::Completed, "{ran:#?}");
    assert!(
        ran.notices.iter().any(|n| n.contains("Allowed always")),
        "{ran:#?}"
    );
    // Only the missing segment was stored.
    let rules = ApprovalsFile::new(&file).load().unwrap();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0].argv, ["ls", "-a"]);

    assert_eq!(call(&tool, "ls -a").await.status, ToolStatus::Completed);
    for wider in [
        "ls -a; rm -rf x",
        "ls -a $(touch y)",
        "ls -a > f",
        "ls -a -l",
        "ls",
        "ls -a /",
    ] {
        let r = call(&tool, wider).await;
        assert_eq!(
            r.status,
            ToolStatus::ApprovalPending,
            "`{wider}` must still ask: {r:#?}"
        );
    }
    // A new tool (a new server process) loads the rule.
    let again = BashTool::new(config(allowlist(&[]), &file));
    assert_eq!(call(&again, "ls -a").await.status, ToolStatus::Completed);
    assert_eq!(
        call(&again, "ls -a; rm -rf x").await.status,
        ToolStatus::ApprovalPending
    );
}

#[tokio::test]
async fn a_heredoc_body_is_part_of_the_rule() {
    let (_dir, file) = scratch();
    let tool = BashTool::new(config(allowlist(&[]), &file));
    let first = call(&tool, "cat <<'EOF'\nhello\nEOF").await;
    let id = short(&first);
    // The body is not in the argv, so no exact rule covers it: allow-always is refused, and the
    // approval stays pending for allow-once.
    let approved = decide(&tool, &id, ApprovalDecision::AllowAlways).await;
    assert_eq!(approved.status, ToolStatus::Blocked, "{approved:#?}");
    assert!(
        approved.output.contains("heredoc") && approved.output.contains("allow-once"),
        "{approved:#?}"
    );
    assert_eq!(
        decide(&tool, &id, ApprovalDecision::AllowOnce).await.output,
        "hello\n"
    );
    assert!(!file.exists());
    let other = call(&tool, "cat <<'EOF'\nrm -rf x\nEOF").await;
    assert_eq!(other.status, ToolStatus::ApprovalPending, "{other:#?}");
}

#[tokio::test]
async fn dangerous_commands_are_never_allowed_always() {
    let (_dir, file) = scratch();
    let tool = BashTool::new(config(allowlist(&[]), &file));
    let pending = call(&tool, "rm -rf /usr").await;
    let id = short(&pending);
    let refused = decide(&tool, &id, ApprovalDecision::AllowAlways).await;
    assert_eq!(refused.status, ToolStatus::Blocked);
    assert_eq!(refused.blocked.as_ref().unwrap().rule, "approval-not-always");
    assert!(refused.output.contains("allow-once"), "{}", refused.output);
    assert!(!file.exists());
    // Still pending after the refusal.
    assert_eq!(
        decide(&tool, &id, ApprovalDecision::Deny)
            .await
            .blocked
            .unwrap()
            .rule,
        "approval-denied"
    );
}

#[tokio::test]
async fn a_corrupt_file_is_reported_and_approves_nothing() {
    let (_dir, file) = scratch();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "version = 1\n[[rule]]\nargv = [\"ls\", \"-a\"]\n[[rule]]\nargv = \"date\n",
    )
    .unwrap();
    let tool = BashTool::new(config(allowlist(&[]), &file));
    let err = tool
        .approvals_file_error()
        .expect("the corrupt file is reported")
        .to_owned();
    assert!(
        err.contains(&file.display().to_string()) && err.contains("line 5"),
        "{err}"
    );
    let r = call(&tool, "ls -a").await;
    assert_eq!(
        r.status,
        ToolStatus::ApprovalPending,
        "nothing from a corrupt file applies"
    );
    assert!(r.notices.iter().any(|n| n.contains("line 5")), "{r:#?}");
}

#[tokio::test]
async fn pending_approvals_expire_to_deny() {
    let (dir, file) = scratch();
    let mut cfg = config(allowlist(&[]), &file);
    cfg.approvals.expiry = Duration::from_millis(200);
    let tool = BashTool::new(cfg);
    let marker = dir.path().join("ran");
    let id = short(&call(&tool, &format!("touch {}", marker.display())).await);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(tool.approvals().pending_count(), 0);
    let late = decide(&tool, &id, ApprovalDecision::AllowOnce).await;
    assert_eq!(late.status, ToolStatus::Blocked);
    assert_eq!(late.blocked.as_ref().unwrap().rule, "approval-expired");
    assert!(
        late.output.contains("expired") && late.output.contains("deny"),
        "{}",
        late.output
    );
    assert!(!marker.exists());
}

#[tokio::test]
async fn many_approvals_pending_at_once() {
    let (dir, file) = scratch();
    let tool = BashTool::new(config(allowlist(&[]), &file));
    let mut ids = Vec::new();
    for i in 0..40 {
        ids.push(short(
            &call(&tool, &format!("touch {}/f{i}", dir.path().display())).await,
        ));
    }
    assert_eq!(tool.approvals().pending_count(), 40);
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 40);
    // Decide them out of order, concurrently.
    let tasks: Vec<_> = ids
        .iter()
        .enumerate()
        .rev()
        .map(|(i, id)| {
            let tool = tool.clone();
            let id = id.clone();
            tokio::spawn(async move {
                let d = if i % 2 == 0 {
                    ApprovalDecision::AllowOnce
                } else {
                    ApprovalDecision::Deny
                };
                tool.approve(&id, d, CancellationToken::new()).await.status
            })
        })
        .collect();
    for (i, t) in tasks.into_iter().rev().enumerate() {
        let want = if i % 2 == 0 {
            ToolStatus::Completed
        } else {
            ToolStatus::Blocked
        };
        assert_eq!(t.await.unwrap(), want);
    }
    for i in 0..40 {
        assert_eq!(dir.path().join(format!("f{i}")).exists(), i % 2 == 0, "f{i}");
    }
}

fn elevated_policy(level: shellgate::intercept::Elevated) -> Policy {
    Policy::builder()
        .policy_config(shellgate::intercept::PolicyConfig {
            security: Security::Allowlist,
            ask: AskMode::OnMiss,
            allow: vec!["printf *".into()],
            deny: vec!["date *".into()],
            elevated: level,
            ..Default::default()
        })
        .build()
        .unwrap()
}

/// `config` with a workspace-write sandbox around the temporary directory.
fn sandboxed(mut config: ToolConfig) -> ToolConfig {
    config.sandbox.mode = Some(shellgate::sandbox::SandboxMode::WorkspaceWrite);
    config
}

fn elevated(command: &str) -> BashParams {
    BashParams {
        elevated: true,
        ..BashParams::new(command)
    }
}

#[tokio::test]
async fn elevated_runs_only_when_configured_and_say_so() {
    use shellgate::intercept::Elevated;
    let (dir, file) = scratch();
    let marker = dir.path().join("elevated");
    let touch = format!("touch {}", marker.display());

    let off = BashTool::new(config(elevated_policy(Elevated::Off), &file));
    let r = off.call(elevated("printf x"), CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::Completed);
    assert!(
        r.notices.iter().any(|n| n.contains("elevated was refused")),
        "{r:#?}"
    );
    let r = off.call(elevated(&touch), CancellationToken::new()).await;
    assert_eq!(
        r.status,
        ToolStatus::ApprovalPending,
        "refused elevation bypasses nothing"
    );

    // Without a sandbox there is nothing to leave.
    let unsandboxed = BashTool::new(config(elevated_policy(Elevated::On), &file));
    let r = unsandboxed
        .call(elevated("printf x"), CancellationToken::new())
        .await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:#?}");
    assert!(
        r.notices.iter().any(|n| n.contains("no sandbox is configured")),
        "{r:#?}"
    );

    // `on`: leaving the sandbox is a person's decision, even for an allowlisted command.
    let on = BashTool::new(sandboxed(config(elevated_policy(Elevated::On), &file)));
    let r = on.call(elevated("printf x"), CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::ApprovalPending, "{r:#?}");
    let approval = r.approval.as_ref().unwrap();
    assert_eq!(approval.rule, "elevated", "{r:#?}");
    assert!(!approval.always_approvable, "{r:#?}");
    assert!(r.output.contains("outside the sandbox"), "{r:#?}");
    let r = on.call(elevated(&touch), CancellationToken::new()).await;
    let id = short(&r);
    let ran = decide(&on, &id, ApprovalDecision::AllowOnce).await;
    assert_eq!(ran.status, ToolStatus::Completed);
    assert!(
        ran.notices.iter().any(|n| n.contains("outside the sandbox")),
        "{ran:#?}"
    );
    std::fs::remove_file(&marker).unwrap();

    let full = BashTool::new(sandboxed(config(elevated_policy(Elevated::Full), &file)));
    let r = full.call(elevated(&touch), CancellationToken::new()).await;
    assert_eq!(
        r.status,
        ToolStatus::Completed,
        "elevated = full needs no approval: {r:#?}"
    );
    assert!(marker.exists());
    assert!(r.notices.iter().any(|n| n.contains("without approval")), "{r:#?}");
    // Not asked for: judged as usual. Denied: blocked even elevated.
    assert_eq!(
        call(&full, "true; ls -a").await.status,
        ToolStatus::ApprovalPending
    );
    let r = full.call(elevated("date +%s"), CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::Blocked, "{r:#?}");
}

/// Set in a child copy of this test binary: the approvals file it writes rules to.
const WRITER_ENV: &str = "SHELLGATE_TEST_APPROVALS_WRITER";

#[test]
fn concurrent_writer_processes_lose_no_rule() {
    if let Some(path) = std::env::var_os(WRITER_ENV) {
        // A child: add 15 rules of its own, one at a time.
        let tag = std::process::id();
        let file = ApprovalsFile::new(PathBuf::from(path));
        for i in 0..15 {
            file.add(&[vec![format!("writer{tag}"), i.to_string()]], "x")
                .unwrap();
        }
        return;
    }
    let (_dir, file) = scratch();
    let children: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "concurrent_writer_processes_lose_no_rule",
                    "--test-threads=1",
                ])
                .env(WRITER_ENV, &file)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let rules = ApprovalsFile::new(&file).load().unwrap();
    assert_eq!(rules.len(), 60, "{rules:?}");
}

#[test]
fn the_approvals_section_configures_expiry_the_file_and_the_mcp_answers() {
    let file = shellgate::FileConfig::parse(
        "[approvals]\nexpiry_secs = 5\nfallback = \"deny\"\nfile = \"/tmp/a.toml\"\n",
        Path::new("c.toml"),
    )
    .unwrap();
    let mut config = ToolConfig {
        artifacts: None,
        ..ToolConfig::default()
    };
    file.apply(&mut config);
    assert_eq!(config.approvals.expiry, Duration::from_secs(5));
    assert_eq!(config.approvals.file_path(), Some(PathBuf::from("/tmp/a.toml")));
    // The model is not offered the MCP `approve` tool unless the file says so.
    assert!(!config.approvals.mcp_approve_tool);
    assert_eq!(config.approvals.elicitation_timeout, Duration::from_secs(300));
    let mcp = shellgate::FileConfig::parse(
        "[approvals]\nmcp_approve_tool = true\nelicitation_timeout_secs = 0.5\n",
        Path::new("c.toml"),
    )
    .unwrap();
    mcp.apply(&mut config);
    assert!(config.approvals.mcp_approve_tool);
    assert_eq!(config.approvals.elicitation_timeout, Duration::from_millis(500));
    let shown = shellgate::FileConfig::effective(&config).to_toml();
    assert!(shown.contains("mcp_approve_tool = true"), "{shown}");
    assert!(shown.contains("elicitation_timeout_secs = 0.5"), "{shown}");
    let err = shellgate::FileConfig::parse("[approvals]\nmcp_aprove_tool = true\n", Path::new("c.toml"))
        .unwrap_err();
    assert!(err.to_string().contains("approvals.mcp_aprove_tool"), "{err}");
    assert!(
        err.to_string().contains("did you mean `mcp_approve_tool`"),
        "{err}"
    );
    let err = shellgate::FileConfig::parse("[approvals]\nexpiry = 5\n", Path::new("c.toml")).unwrap_err();
    assert!(err.to_string().contains("approvals.expiry"), "{err}");
    let err =
        shellgate::FileConfig::parse("[approvals]\nfallback = \"allow\"\n", Path::new("c.toml")).unwrap_err();
    assert!(err.to_string().contains("allow"), "{err}");
}

#[tokio::test]
async fn the_oldest_pending_approval_is_dropped_beyond_the_bound() {
    let (_dir, file) = scratch();
    let mut cfg = config(allowlist(&[]), &file);
    cfg.approvals.max_pending = 3;
    let tool = BashTool::new(cfg);
    let mut ids = Vec::new();
    let mut last = None;
    for i in 0..5 {
        let r = call(&tool, &format!("ls /nonexistent-{i}")).await;
        ids.push(short(&r));
        last = Some(r);
    }
    assert_eq!(tool.approvals().pending_count(), 3);
    let last = last.unwrap();
    assert!(
        last.notices
            .iter()
            .any(|n| n.contains(&ids[1]) && n.contains("dropped")),
        "{last:#?}"
    );
    let dropped = decide(&tool, &ids[0], ApprovalDecision::Deny).await;
    assert_eq!(dropped.blocked.unwrap().rule, "approval-unknown");
    let kept = decide(&tool, &ids[4], ApprovalDecision::Deny).await;
    assert_eq!(kept.blocked.unwrap().rule, "approval-denied");
}
