//! Commands an earlier version allowed under `@safe` (asking off) because it read an awk
//! program, a git option, a repository's configuration, a directory change or a shell word
//! otherwise than the real programs do, run through the tool: each is blocked and does nothing —
//! no file appears, no hook runs, no connection is made.

#[path = "jobs_common.rs"]
mod common;

use std::path::{Path, PathBuf};

use shellgate::intercept::{AskMode, Policy, Security};
use shellgate::{BashParams, BashTool, CancellationToken, ToolConfig, ToolResult, ToolStatus};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shellgate-judged-readers-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tool(dir: &Path) -> BashTool {
    let policy = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::Off)
        .allow("@safe")
        .build()
        .unwrap();
    BashTool::new(ToolConfig {
        artifacts: None,
        policy: Some(policy),
        cwd: dir.to_path_buf(),
        ..ToolConfig::default()
    })
}

async fn run_in(tool: &BashTool, session: &str, command: &str) -> ToolResult {
    let params = BashParams {
        session: Some(session.into()),
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

fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "git {args:?} in {}", dir.display());
}

/// The files in `dir` besides those named.
fn left_over(dir: &Path, expected: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !expected.contains(&n.as_str()))
        .collect()
}

#[tokio::test]
async fn awk_programs_read_as_the_awks_read_them_are_blocked_and_do_nothing() {
    let dir = scratch("awk");
    std::fs::write(dir.join("f"), "a\n").unwrap();
    let tool = tool(&dir);
    let mut commands = vec![
        "awk -e 'BEGIN{system(\"touch b1\")}' -e '{print}' f".to_owned(),
        "awk 'BEGIN { x = 1 \\\n/ 2; print \"touch b2\" | \"sh\"; y = 1 / 1 }'".to_owned(),
        "awk 'BEGIN { print 1 \\\n> \"b2w\" }'".to_owned(),
        "awk 'BEGIN { print 1,\n2 > \"b3\" }'".to_owned(),
        "awk 'BEGIN { if (1) /\"/; print \"touch b4\" | \"sh\" }'".to_owned(),
        "diff -l f f".to_owned(),
    ];
    if program_runs("gawk", &["--version"]) {
        commands.push("gawk --source='BEGIN{system(\"touch b1g\")}' --source='{print}' f".to_owned());
    }
    for command in &commands {
        let r = run_in(&tool, "none", command).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command}: {r:?}");
    }
    assert_eq!(
        left_over(&dir, &["f"]),
        Vec::<String>::new(),
        "an attack left a file"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn network_operands_and_tilde_redirections_are_blocked_and_nothing_connects() {
    let dir = scratch("net");
    let tool = tool(&dir);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for command in [
        format!("timeout 3 awk '{{print}}' /inet/tcp/0/127.0.0.1/{port}"),
        format!("OLDPWD=/dev/tcp/127.0.0.1; timeout 3 head -n1 < ~-/{port}"),
        format!("PWD=/dev/tcp/127.0.0.1; timeout 3 head -n1 < ~+/{port}"),
        format!("cd /dev; timeout 3 head -n1 < ~+/tcp/127.0.0.1/{port}"),
    ] {
        let r = run_in(&tool, "none", &command).await;
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
async fn shell_words_that_become_code_are_blocked_and_do_nothing() {
    let dir = scratch("words");
    let tool = tool(&dir);
    let m = |n: &str| dir.join(n).display().to_string();
    for command in [
        format!("x='a['; y='$(touch {})]'; echo $(($x$y))", m("b8")),
        format!("x='a['; y='$(touch {})]'; [[ $x$y -eq 0 ]]", m("b8t")),
        format!("BASH_COMPAT=51; i='$(touch {})'; [[ -v a[$i] ]]", m("b9")),
    ] {
        let r = run_in(&tool, "none", &command).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command}: {r:?}");
    }
    // Values set in one call of a session, joined in the next.
    let r = run_in(&tool, "s", &format!("x='a['; y='$(touch {})]'", m("b8s"))).await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    let r = run_in(&tool, "s", "echo $(($x$y))").await;
    assert_eq!(r.status, ToolStatus::Blocked, "{r:?}");
    tool.sessions().shutdown();
    assert_eq!(
        left_over(&dir, &[]),
        Vec::<String>::new(),
        "an attack left a file"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn git_reads_that_would_run_a_program_are_blocked_and_run_nothing() {
    if !common::available_or_skip(program_runs("git", &["--version"]), "git is not installed") {
        return;
    }
    let dir = scratch("git");
    let marker = |n: &str| dir.join(format!("ran-{n}"));
    // A repository with a hook git runs when `git status` refreshes the index.
    let hooked = dir.join("hooked");
    std::fs::create_dir_all(&hooked).unwrap();
    git(&hooked, &["init", "-q"]);
    std::fs::write(hooked.join("f"), "a\n").unwrap();
    git(&hooked, &["add", "f"]);
    // Rewritten later than it was added: `git status` and `git diff` refresh the index.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(hooked.join("f"), "a\n").unwrap();
    let hook = hooked.join(".git/hooks/post-index-change");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker("hook").display())).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&hook)
        .status()
        .unwrap();
    // A repository whose configuration starts with a byte order mark.
    let bom = dir.join("bom");
    std::fs::create_dir_all(&bom).unwrap();
    git(&bom, &["init", "-q"]);
    let config = std::fs::read_to_string(bom.join(".git/config")).unwrap();
    std::fs::write(
        bom.join(".git/config"),
        format!(
            "\u{feff}[core]\n\tfsmonitor = touch {}\n{config}",
            marker("bom").display()
        ),
    )
    .unwrap();
    // A clean repository, where `git branch` abbreviations would change the branches.
    let clean = dir.join("clean");
    std::fs::create_dir_all(&clean).unwrap();
    git(&clean, &["init", "-q"]);
    git(
        &clean,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "a",
        ],
    );
    git(&clean, &["branch", "other"]);
    let tool = tool(&dir);
    for command in [
        "cd hooked && git status".to_owned(),
        "cd hooked; git diff".to_owned(),
        "git -C bom status".to_owned(),
        "cd bom && git status".to_owned(),
        "env -C bom git status".to_owned(),
        "cd bom; pushd /tmp; popd; git status".to_owned(),
        "set -k; cd clean && git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch ../ran-setk'".to_owned(),
        "cd clean && git branch --set-upstream-t=other".to_owned(),
        "cd clean && git branch --edit-d".to_owned(),
    ] {
        let r = run_in(&tool, "none", &command).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command}: {r:?}");
    }
    for n in ["hook", "bom", "setk"] {
        assert!(!marker(n).exists(), "the {n} program ran");
    }
    let tracking = std::process::Command::new("git")
        .args(["config", "--get-regexp", "^branch\\."])
        .current_dir(&clean)
        .output()
        .unwrap();
    assert!(tracking.stdout.is_empty(), "the branch was set to track another");
    // Reads of the clean repository still run.
    let r = run_in(
        &tool,
        "none",
        "cd clean && git status --short && git branch --cont HEAD",
    )
    .await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
