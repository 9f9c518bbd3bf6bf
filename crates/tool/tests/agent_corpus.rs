//! Real agent commands against plain bash: the `self_contained` commands of the agent corpus
//! (`shared/corpus/agent_commands.jsonl` beside the checkout) run once under bash and once through
//! the tool, each in the same fresh scratch directory, and must end the same way: exit status,
//! output (unless the command's output depends on the machine or the clock) and the files left.

#[path = "jobs_common.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use shellgate::{BashParams, CancellationToken};

fn corpus() -> Option<PathBuf> {
    let path = std::env::var_os("SHELLGATE_SHARED_CORPUS")
        .map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
            PathBuf::from,
        )
        .join("agent_commands.jsonl");
    common::available_or_skip(path.is_file(), &format!("{} is missing", path.display())).then_some(path)
}

struct Ending {
    exit: Option<i32>,
    output: String,
    files: BTreeMap<String, u64>,
}

fn files(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            let meta = e.metadata().unwrap();
            if meta.is_dir() && !meta.is_symlink() && !name.starts_with(".git") {
                stack.push(path);
            }
            out.insert(name, if meta.is_file() { meta.len() } else { 0 });
        }
    }
    out
}

fn fresh(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
}

fn under_bash(dir: &Path, command: &str) -> Ending {
    fresh(dir);
    let log = dir.with_extension("log");
    let out = std::fs::File::create(&log).unwrap();
    let mut cmd = Command::new("timeout");
    // The same shell the engine starts (`$SHELL` or `bash` on `PATH`): bash names itself by the path
    // it was started as in its messages (`/bin/bash: line 3: warning: …`).
    let shell = shellgate_executor::ShellConfig::default().resolve_shell();
    cmd.arg("20")
        .arg(&shell)
        .args(["-c", command])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .env("TERM", shellgate_executor::PIPE_TERM)
        .env("LC_ALL", shellgate_executor::UTF8_LOCALE)
        .env("LANG", shellgate_executor::UTF8_LOCALE);
    for (k, v) in shellgate_executor::NON_INTERACTIVE_ENV {
        cmd.env(k, v);
    }
    let status = cmd.status().unwrap();
    Ending {
        exit: status.code(),
        output: String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned(),
        files: files(dir),
    }
}

async fn through_the_tool(bash: &shellgate::BashTool, dir: &Path, command: &str) -> Ending {
    fresh(dir);
    let mut params = BashParams::new(command);
    params.session = Some("none".into());
    params.cwd = Some(dir.display().to_string());
    params.timeout = Some(20.0);
    let r = bash.call(params, CancellationToken::new()).await;
    Ending {
        exit: r.exit_code,
        output: r.output,
        files: files(dir),
    }
}

/// Output as a model reads it: no carriage-return overdraw, no trailing blanks.
fn plain(text: &str) -> String {
    text.lines()
        .map(|l| l.rsplit('\r').next().unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn self_contained_agent_commands_end_as_under_bash() {
    let Some(path) = corpus() else { return };
    let (bash, _) = common::tools();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("ws");
    let (mut same, mut differ) = (0, Vec::new());
    for line in std::fs::read_to_string(&path).unwrap().lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        if case["self_contained"] != true {
            continue;
        }
        let command = case["command"].as_str().unwrap();
        let clock = case["features"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "env_dependent"));
        let a = under_bash(&dir, command);
        let b = through_the_tool(&bash, &dir, command).await;
        let agree = a.exit == b.exit && a.files == b.files && (clock || plain(&a.output) == plain(&b.output));
        if agree {
            same += 1;
        } else {
            differ.push(format!(
                "{command:?}\n  bash: exit {:?} files {:?}\n  {:?}\n  tool: exit {:?} files {:?}\n  {:?}",
                a.exit,
                a.files.keys().collect::<Vec<_>>(),
                plain(&a.output).chars().take(300).collect::<String>(),
                b.exit,
                b.files.keys().collect::<Vec<_>>(),
                plain(&b.output).chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(same >= 200, "only {same} commands agreed");
    assert!(
        differ.is_empty(),
        "{same} agree, {} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}
