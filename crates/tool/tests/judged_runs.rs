//! Commands an earlier version allowed run through the tool and do nothing: under `@safe` with
//! asking off they are blocked and leave no marker; under `security = "full"` with deny rules,
//! respellings of a denied command are blocked and the directory stays.

use std::path::{Path, PathBuf};

use shellgate::intercept::{AskMode, Policy, Security};
use shellgate::{BashParams, BashTool, CancellationToken, ToolConfig, ToolStatus};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shellgate-judged-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tool(dir: &Path, policy: Policy) -> BashTool {
    BashTool::new(ToolConfig {
        artifacts: None,
        policy: Some(policy),
        cwd: dir.to_path_buf(),
        ..ToolConfig::default()
    })
}

async fn run(tool: &BashTool, command: &str) -> ToolStatus {
    let params = BashParams {
        session: Some("none".into()),
        ..BashParams::new(command)
    };
    tool.call(params, CancellationToken::new()).await.status
}

#[tokio::test]
async fn safe_profile_attacks_are_blocked_and_do_nothing() {
    let dir = scratch("safe");
    std::fs::write(dir.join("f"), "a\n").unwrap();
    let policy = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::Off)
        .allow("@safe")
        .build()
        .unwrap();
    let tool = tool(&dir, policy);
    let m = |n: &str| dir.join(n).display().to_string();
    let attacks = [
        format!(r#"awk 'BEGIN {{ x = 1. / 1; system("touch {}") }}'"#, m("awk")),
        format!(r"sed -e '#x\' -e 'e touch {}' f", m("sed")),
        format!("sed -n ':a e touch {}' f", m("label")),
        format!("printf -v 'a[$(touch {})]' x", m("printf")),
        format!("declare -i x='a[$(touch {})]'", m("declare")),
        format!("git config --file {} k.v VAL get", m("gitconfig")),
        format!("GIT_TRACE={} git status", m("trace")),
        format!("sudo bash -lc 'touch {}'", m("sudo")),
    ];
    for attack in &attacks {
        assert_eq!(run(&tool, attack).await, ToolStatus::Blocked, "{attack}");
    }
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("f")], "an attack left a file");
    // A repository whose own configuration runs a program on `git status`.
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status();
    if init.is_ok_and(|s| s.success()) {
        let hook = format!("touch {}", m("fsmonitor"));
        std::process::Command::new("git")
            .args(["config", "core.fsmonitor", &hook])
            .current_dir(&repo)
            .status()
            .unwrap();
        assert_eq!(run(&tool, "git -C repo status").await, ToolStatus::Blocked);
        assert_eq!(run(&tool, "cd repo && git status").await, ToolStatus::Blocked);
        assert!(!dir.join("fsmonitor").exists());
    }
    assert_eq!(run(&tool, "cat f && git --version").await, ToolStatus::Completed);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn respelled_denied_commands_are_blocked_and_do_nothing() {
    let dir = scratch("deny");
    let policy = Policy::builder()
        .security(Security::Full)
        .ask(AskMode::Off)
        .deny("rm -rf *")
        .build()
        .unwrap();
    let tool = tool(&dir, policy);
    std::fs::create_dir_all(dir.join("keep/sub")).unwrap();
    for command in [
        "rm -fr keep",
        "rm -r -f keep",
        "rm -Rf keep",
        "rm --recursive --force keep",
        "/bin/rm -rf keep",
        "\\rm -rf keep",
        "o=-rf; rm $o keep",
        "setsid rm -rf keep",
        "watch -n 1 rm -rf keep",
    ] {
        assert_eq!(run(&tool, command).await, ToolStatus::Blocked, "{command}");
        assert!(dir.join("keep/sub").is_dir(), "{command} deleted it");
    }
    assert_eq!(run(&tool, "rm -r keep/sub && ls").await, ToolStatus::Completed);
    assert!(!dir.join("keep/sub").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
