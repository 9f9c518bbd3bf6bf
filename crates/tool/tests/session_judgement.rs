//! Judging a session call against what earlier calls left in the session: a function or alias that
//! shadows a read-only command is judged by its body where it is used, and a variable whose value
//! runs code as arithmetic stays code in a later call. Each case first plants the state through a
//! call a rule allows (`source ./defs.sh`), then tries to make a read-only command run it.

use std::path::PathBuf;

use shellgate::intercept::{AskMode, Policy, Security};
use shellgate::{BashParams, BashTool, CancellationToken, ToolConfig, ToolResult, ToolStatus};

fn tool(dir: &std::path::Path) -> BashTool {
    let policy = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::Off)
        .allow("@safe")
        .allow("source ./defs.sh")
        .build()
        .unwrap();
    BashTool::new(ToolConfig {
        artifacts: None,
        policy: Some(policy),
        cwd: dir.to_path_buf(),
        ..ToolConfig::default()
    })
}

async fn call(tool: &BashTool, command: &str) -> ToolResult {
    let params = BashParams {
        session: Some("planted".into()),
        ..BashParams::new(command)
    };
    tool.call(params, CancellationToken::new()).await
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shellgate-session-judge-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn state_left_by_an_earlier_call_is_judged_where_it_is_used() {
    let dir = scratch("plant");
    std::fs::write(
        dir.join("defs.sh"),
        "ls() { touch \"$PWD/function-ran\"; }\n\
         alias cat='touch \"$PWD/alias-ran\" #'\n\
         alias ll='ls -la'\n\
         x='a[$(touch \"$PWD/arithmetic-ran\")]'\n\
         declare -i n\n",
    )
    .unwrap();
    let tool = tool(&dir);
    let planted = call(&tool, "source ./defs.sh").await;
    assert_eq!(planted.status, ToolStatus::Completed, "{planted:?}");

    for command in [
        "ls",
        "cat README",
        "echo $((x + 1))",
        "[[ x -eq 0 ]]",
        "n=$(echo 1)",
    ] {
        let r = call(&tool, command).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{command}: {r:?}");
    }
    for ran in ["function-ran", "alias-ran", "arithmetic-ran"] {
        assert!(
            !dir.join(ran).exists(),
            "{ran}: a read-only command ran planted code"
        );
    }
    // What bypasses the planted names still runs: `command`, a quoted name, a plain echo.
    for command in ["command ls", "\\cat defs.sh", "echo fine", "pwd"] {
        let r = call(&tool, command).await;
        assert_eq!(r.status, ToolStatus::Completed, "{command}: {r:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Plant `defs` in a session of its own through the allowed `source`, then run `command` there.
/// Returns the result and how often the planted code ran during that call: a planted `DEBUG` or
/// `RETURN` trap also runs for the session's own lines that end the planting call, after that
/// call has answered, so its runs are counted once they have settled.
async fn planted_then(tag: &str, defs: &str, command: &str) -> (ToolResult, usize, PathBuf) {
    let dir = scratch(tag);
    std::fs::write(dir.join("defs.sh"), defs).unwrap();
    let tool = tool(&dir);
    let params = |c: &str| BashParams {
        session: Some(tag.into()),
        ..BashParams::new(c)
    };
    let planted = tool
        .call(params("source ./defs.sh"), CancellationToken::new())
        .await;
    assert_eq!(planted.status, ToolStatus::Completed, "{planted:?}");
    let before = settled_runs(&dir.join("ran")).await;
    let r = tool.call(params(command), CancellationToken::new()).await;
    let after = settled_runs(&dir.join("ran")).await;
    tool.sessions().shutdown();
    (r, after - before, dir)
}

/// Lines in `ran` once no new one came for 300 ms (the planted code appends one per run).
async fn settled_runs(ran: &std::path::Path) -> usize {
    let count = || std::fs::read_to_string(ran).map_or(0, |s| s.lines().count());
    let (mut last, mut stable) = (count(), 0);
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let now = count();
        if now == last {
            stable += 1;
            if stable == 6 {
                break;
            }
        } else {
            (last, stable) = (now, 0);
        }
    }
    last
}

#[tokio::test]
async fn traps_hashed_paths_and_options_left_in_a_session_stop_its_judgement() {
    let touch = "\"$(command -v touch)\"";
    let append = "echo run >>\"$PWD/ran\"";
    for (tag, defs, command) in [
        ("debug", format!("trap '{append}' DEBUG\n"), "pwd"),
        ("return", format!("trap '{append}' RETURN\nf() {{ :; }}\n"), "pwd"),
        ("hash", format!("hash -p {touch} ls\n"), "ls ran"),
        ("extdebug", "shopt -s extdebug\n".to_owned(), "pwd"),
        ("keyword", "set -k\n".to_owned(), "pwd"),
    ] {
        let (r, runs, dir) = planted_then(tag, &defs, command).await;
        assert_eq!(r.status, ToolStatus::Blocked, "{tag}: {r:?}");
        assert_eq!(runs, 0, "{tag}: the planted state ran");
        // The hashed `touch` would make an empty `ran`.
        assert!(
            tag != "hash" || !dir.join("ran").exists(),
            "hash: the hashed path ran"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    // An ordinary session stays judged: the same calls run.
    let (r, _, dir) = planted_then("plain", "x=1\nalias ll='ls -l'\n", "pwd").await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
