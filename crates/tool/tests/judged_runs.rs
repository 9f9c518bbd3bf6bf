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

/// Whether `git` runs; when not, print why the test is skipped, or fail under
/// SHELLGATE_REQUIRE_ALL=1 (CI).
fn git_or_skip() -> bool {
    let ok = std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
            "SHELLGATE_REQUIRE_ALL=1 but git does not run"
        );
        eprintln!("skipped: git does not run");
    }
    ok
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository `w` with one commit, a subdirectory and a bare remote `origin`.
fn repository(dir: &Path) -> PathBuf {
    let w = dir.join("w");
    std::fs::create_dir_all(w.join("sub")).unwrap();
    git(dir, &["init", "-q", "--bare", "remote.git"]);
    git(&w, &["init", "-q"]);
    git(&w, &["config", "user.email", "t@example.invalid"]);
    git(&w, &["config", "user.name", "t"]);
    std::fs::write(w.join("sub/a.py"), "print('ok')\n").unwrap();
    git(&w, &["add", "."]);
    git(&w, &["commit", "-qm", "one"]);
    let remote = dir.join("remote.git").display().to_string();
    git(&w, &["remote", "add", "origin", &remote]);
    w
}

/// The refs the bare remote holds.
fn remote_refs(dir: &Path) -> String {
    let out = std::process::Command::new("git")
        .args(["--git-dir", "remote.git", "for-each-ref"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn run_in(tool: &BashTool, session: &str, command: &str) -> ToolStatus {
    let params = BashParams {
        session: Some(session.into()),
        ..BashParams::new(command)
    };
    tool.call(params, CancellationToken::new()).await.status
}

#[tokio::test]
async fn respelled_pushes_are_refused_and_the_remote_is_unchanged() {
    if !git_or_skip() {
        return;
    }
    let dir = scratch("push");
    let w = repository(&dir);
    // The spellings push when nothing refuses them.
    let open = tool(&w, Policy::builder().security(Security::Full).build().unwrap());
    assert_eq!(
        run(&open, "git {push,origin} HEAD:refs/heads/sanity").await,
        ToolStatus::Completed
    );
    assert!(
        remote_refs(&dir).contains("refs/heads/sanity"),
        "the check push did not land"
    );
    git(
        &dir,
        &["--git-dir", "remote.git", "update-ref", "-d", "refs/heads/sanity"],
    );
    let before = remote_refs(&dir);

    let policy = Policy::builder()
        .security(Security::Full)
        .ask(AskMode::Off)
        .deny("git push *")
        .build()
        .unwrap();
    let tool = tool(&w, policy);
    std::fs::write(w.join("push"), "").unwrap();
    git(&w, &["config", "alias.pp", "push"]);
    let to = "origin HEAD:refs/heads/x";
    let remote = dir.join("remote.git").display().to_string();
    let attacks = [
        format!("git -C . push {to}"),
        format!("git --git-dir=.git push {to}"),
        format!("git -c k.v=1 push {to}"),
        format!("git --no-pager push {to}"),
        format!("git -P push {to}"),
        format!("git --work-tree=. push {to}"),
        "git {push,origin} HEAD:refs/heads/x".to_owned(),
        format!("x=push; git $x {to}"),
        format!("git $(echo push) {to}"),
        format!("git pus[h] {to}"),
        format!("git -c alias.p=push p {to}"),
        format!("git pp {to}"),
        format!("git push -f {to}"),
        format!("watch -n 60 git push {to}"),
        format!("script -qc 'git push {to}' /dev/null"),
        format!("git send-pack {remote} HEAD:refs/heads/x"),
        format!("echo push | xargs -I{{}} git {{}} {to}"),
        "parallel git ::: push".to_owned(),
    ];
    for attack in &attacks {
        assert_eq!(run(&tool, attack).await, ToolStatus::Blocked, "{attack}");
        assert_eq!(remote_refs(&dir), before, "{attack} pushed");
    }
    // A session alias defined in one call and used in the next.
    assert_eq!(
        run_in(&tool, "s", "alias p='git push'").await,
        ToolStatus::Completed
    );
    assert_eq!(run_in(&tool, "s", &format!("p {to}")).await, ToolStatus::Blocked);
    assert_eq!(remote_refs(&dir), before, "the session alias pushed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn ordinary_work_under_a_push_rule_runs_without_a_prompt() {
    if !git_or_skip() {
        return;
    }
    let dir = scratch("ordinary");
    let w = repository(&dir);
    let policy = Policy::builder()
        .security(Security::Full)
        .ask(AskMode::OnMiss)
        .deny("git push *")
        .build()
        .unwrap();
    let tool = tool(&w, policy);
    // A session function wrapping git, as people define them.
    assert_eq!(
        run_in(&tool, "s", "git() { command git \"$@\"; }").await,
        ToolStatus::Completed
    );
    for command in [
        "git status",
        "git -C sub log",
        "git commit -q --allow-empty -m x",
        "git commit -m y --allow-empty",
        "cd sub && for f in *.py; do python3 \"$f\"; done",
    ] {
        assert_eq!(
            run_in(&tool, "s", command).await,
            ToolStatus::Completed,
            "{command}"
        );
        assert_eq!(
            run(&tool, command).await,
            ToolStatus::Completed,
            "{command} outside the session"
        );
    }
    assert_eq!(
        run_in(&tool, "s", "git push origin HEAD:refs/heads/x").await,
        ToolStatus::Blocked
    );
    assert_eq!(
        run_in(&tool, "s", "git $(echo push) origin").await,
        ToolStatus::ApprovalPending
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn find_delete_outside_the_workspace_is_refused_wherever_it_starts() {
    let dir = scratch("find");
    let ws = dir.join("ws");
    let outside = dir.join("outside");
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.o"), "").unwrap();
    std::fs::write(ws.join("build/x.o"), "").unwrap();
    let policy = Policy::builder()
        .security(Security::Full)
        .ask(AskMode::Off)
        .build()
        .unwrap();
    let tool = tool(&ws, policy);
    let from = |cwd: &Path, command: &str| BashParams {
        session: Some("none".into()),
        cwd: Some(cwd.display().to_string()),
        ..BashParams::new(command)
    };
    for (cwd, command) in [
        (&outside, "find . -name '*.o' -delete"),
        (&outside, "find -delete"),
        (&ws, "find ../outside -delete"),
        (&ws, "cd ../outside && find . -delete"),
    ] {
        let r = tool.call(from(cwd, command), CancellationToken::new()).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command} from {}", cwd.display());
        assert!(
            outside.join("keep.o").exists(),
            "{command} deleted outside the workspace"
        );
    }
    let r = tool
        .call(
            from(&ws.join("build"), "find . -name '*.o' -delete"),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(r.status, ToolStatus::Completed);
    assert!(!ws.join("build/x.o").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
