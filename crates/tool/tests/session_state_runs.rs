//! Jobs (`background`, `yield_ms`) and terminal runs (`pty`) in a session start from the session's state
//! — variables, functions, aliases, options — without changing the session, and leave no state file.

#[path = "jobs_common.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use shellgate::executor::ShellConfig;
use shellgate::{BashParams, BashTool, CancellationToken, ProcessTool, ToolConfig, ToolResult};

/// A private runtime directory for the sessions, so leftover state files can be seen.
struct RuntimeDir(PathBuf);

impl RuntimeDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("sg-state-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Files whose name starts with `state-` anywhere below the directory.
    fn state_files(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if entry.file_name().to_string_lossy().starts_with("state-") {
                    out.push(path);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.0, &mut out);
        out
    }

    /// Wait (bounded) until no state file is left.
    async fn no_state_files(&self) -> Vec<PathBuf> {
        for _ in 0..100 {
            if self.state_files().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.state_files()
    }
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tools_in(dir: &RuntimeDir, shell: Option<&Path>) -> (BashTool, ProcessTool) {
    let mut config: ToolConfig = test_config();
    config.sessions.runtime_dir = Some(dir.0.clone());
    if let Some(shell) = shell {
        config.shell = ShellConfig {
            shell: Some(shell.to_path_buf()),
            ..ShellConfig::default()
        };
    }
    tools_with(config)
}

async fn run(bash: &BashTool, command: &str) -> ToolResult {
    bash.call(BashParams::new(command), CancellationToken::new())
        .await
}

/// Set up state in the default session.
async fn prepare(bash: &BashTool) {
    let r = run(
        bash,
        "export Z=5; f(){ echo fn-ok; }; alias greet='echo alias-ok'; set -o pipefail -o nounset",
    )
    .await;
    assert!(!r.is_error, "{r:?}");
}

/// What the command under test prints: the variable, the function, the alias, an option.
const PROBE: &str = "echo Z=$Z\nf\ngreet\nfalse | true; echo pipefail=$?\necho flags=$-";

fn assert_restored(output: &str) {
    assert!(output.contains("Z=5"), "{output:?}");
    assert!(output.contains("fn-ok"), "{output:?}");
    assert!(output.contains("alias-ok"), "{output:?}");
    assert!(output.contains("pipefail=1"), "{output:?}");
    let flags = output.lines().find_map(|l| l.strip_prefix("flags="));
    assert!(flags.is_some_and(|f| f.contains('u')), "{output:?}");
}

#[tokio::test]
async fn a_background_job_starts_from_the_session_state_and_leaves_the_session_alone() {
    let dir = RuntimeDir::new("bg");
    let (bash, process) = tools_in(&dir, None);
    prepare(&bash).await;

    let started = background(&bash, &format!("{PROBE}\nexport LEAK=1; g(){{ :; }}")).await;
    assert!(started.notices.is_empty(), "{:?}", started.notices);
    let id = started.job_id.expect("a job id");
    let (_, output) = poll_to_end(&process, &id).await;
    assert_restored(&output);

    // The job's own changes stay in the job.
    let r = run(
        &bash,
        "echo LEAK=${LEAK-}; type g >/dev/null 2>&1 || echo no-g; echo Z=$Z",
    )
    .await;
    assert!(r.output.contains("LEAK=\n"), "{r:?}");
    assert!(r.output.contains("no-g"), "{r:?}");
    assert!(r.output.contains("Z=5"), "{r:?}");
    assert_eq!(dir.no_state_files().await, Vec::<PathBuf>::new());
    bash.sessions().shutdown();
}

#[tokio::test]
async fn a_yielding_run_starts_from_the_session_state() {
    let dir = RuntimeDir::new("yield");
    let (bash, _process) = tools_in(&dir, None);
    prepare(&bash).await;
    let mut params = BashParams::new(PROBE);
    params.yield_ms = Some(10_000);
    let r = bash.call(params, CancellationToken::new()).await;
    assert!(
        r.job_id.is_none() || r.status != shellgate::ToolStatus::Running,
        "{r:?}"
    );
    assert_restored(&r.output);
    assert_eq!(dir.no_state_files().await, Vec::<PathBuf>::new());
    bash.sessions().shutdown();
}

#[tokio::test]
async fn a_terminal_run_starts_from_the_session_state() {
    if !available_or_skip(
        shellgate_pty::pty_selected(true),
        "no pseudo-terminal is available (or SHELLGATE_NO_PTY=1)",
    ) {
        return;
    }
    let dir = RuntimeDir::new("pty");
    let (bash, process) = tools_in(&dir, None);
    prepare(&bash).await;
    let mut params = BashParams::new(format!("{PROBE}\necho term=$TERM"));
    params.pty = true;
    let r = bash.call(params, CancellationToken::new()).await;
    assert_restored(&r.output);
    // The terminal's TERM wins over the session's pipe setting.
    assert!(!r.output.contains("term=dumb"), "{r:?}");

    // A terminal job too.
    let mut params = BashParams::new(PROBE);
    params.pty = true;
    params.background = true;
    let started = bash.call(params, CancellationToken::new()).await;
    let (_, output) = poll_to_end(&process, &started.job_id.expect("a job id")).await;
    assert_restored(&output);
    assert_eq!(dir.no_state_files().await, Vec::<PathBuf>::new());
    bash.sessions().shutdown();
}

#[tokio::test]
async fn the_calls_own_variables_win_over_the_session_state() {
    let dir = RuntimeDir::new("env");
    let (bash, process) = tools_in(&dir, None);
    prepare(&bash).await;
    let mut params = BashParams::new("echo Z=$Z");
    params.background = true;
    params.env.insert("Z".into(), "it's 7".into());
    let started = bash.call(params, CancellationToken::new()).await;
    let (_, output) = poll_to_end(&process, &started.job_id.unwrap()).await;
    assert!(output.contains("Z=it's 7"), "{output:?}");
    bash.sessions().shutdown();
}

#[tokio::test]
async fn the_state_file_is_gone_while_a_long_job_runs_and_the_job_can_be_killed() {
    let dir = RuntimeDir::new("long");
    let (bash, process) = tools_in(&dir, None);
    prepare(&bash).await;
    let started = background(&bash, "echo Z=$Z; sleep 987.701").await;
    let id = started.job_id.unwrap();
    let mut seen = String::new();
    for _ in 0..50 {
        seen.push_str(poll(&process, &id, 200).await.output.as_deref().unwrap_or(""));
        if seen.contains("Z=5") {
            break;
        }
    }
    assert!(seen.contains("Z=5"), "{seen:?}");
    // The shell removed the file after reading it, long before the job ends.
    assert_eq!(dir.no_state_files().await, Vec::<PathBuf>::new());
    let r = act(&process, shellgate::ProcessAction::Kill, &id).await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        gone("sleep 987.701").await,
        "{:?}",
        processes_with("sleep 987.701")
    );
    bash.sessions().shutdown();
}

#[tokio::test]
async fn a_job_in_a_session_that_never_ran_starts_plain() {
    let dir = RuntimeDir::new("fresh");
    let (bash, process) = tools_in(&dir, None);
    let started = background(&bash, "echo Z=${Z-unset}").await;
    assert!(started.notices.is_empty(), "{:?}", started.notices);
    let (_, output) = poll_to_end(&process, &started.job_id.unwrap()).await;
    assert!(output.contains("Z=unset"), "{output:?}");
    assert!(bash.sessions().list().is_empty(), "{:?}", bash.sessions().list());
    assert_eq!(dir.state_files(), Vec::<PathBuf>::new());
}

/// zsh, or `None` (with a printed reason) where it is missing and not required.
fn zsh() -> Option<PathBuf> {
    let found = shellgate::executor::find_on_path("zsh");
    available_or_skip(found.is_some(), "zsh is not installed");
    found
}

#[tokio::test]
async fn a_zsh_session_state_reaches_its_jobs() {
    let Some(zsh) = zsh() else { return };
    let dir = RuntimeDir::new("zsh");
    let (bash, process) = tools_in(&dir, Some(&zsh));
    let r = run(
        &bash,
        "export Z=5; f(){ echo fn-ok; }; alias greet='echo alias-ok'; setopt pipefail nounset",
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    let started = background(&bash, PROBE).await;
    let (_, output) = poll_to_end(&process, &started.job_id.unwrap()).await;
    assert_restored(&output);
    assert_eq!(dir.no_state_files().await, Vec::<PathBuf>::new());
    bash.sessions().shutdown();
}

#[tokio::test]
async fn a_traced_session_traces_only_the_jobs_own_commands() {
    let dir = RuntimeDir::new("xtrace");
    let (bash, process) = tools_in(&dir, None);
    let r = run(&bash, "set -x").await;
    assert!(!r.is_error, "{r:?}");
    let started = background(&bash, "echo traced-731").await;
    let (_, output) = poll_to_end(&process, &started.job_id.unwrap()).await;
    assert_eq!(output, "+ echo traced-731\ntraced-731\n");
    bash.sessions().shutdown();
}

#[tokio::test]
async fn a_traced_zsh_session_traces_only_the_jobs_own_commands() {
    let Some(zsh) = zsh() else { return };
    let dir = RuntimeDir::new("zsh-xtrace");
    let (bash, process) = tools_in(&dir, Some(&zsh));
    let r = run(&bash, "setopt xtrace").await;
    assert!(!r.is_error, "{r:?}");
    let started = background(&bash, "echo traced-732").await;
    let (_, output) = poll_to_end(&process, &started.job_id.unwrap()).await;
    assert_eq!(output, "+(eval):1> echo traced-732\ntraced-732\n");
    bash.sessions().shutdown();
}

#[tokio::test]
async fn a_job_after_the_sessions_shell_ended_starts_from_its_last_saved_state() {
    let dir = RuntimeDir::new("ended");
    let (bash, process) = tools_in(&dir, None);
    prepare(&bash).await;
    let r = run(&bash, "exit 3").await;
    assert_eq!(r.exit_code, Some(3), "{r:?}");
    let started = background(&bash, PROBE).await;
    let (_, output) = poll_to_end(&process, &started.job_id.unwrap()).await;
    assert_restored(&output);
    assert_eq!(dir.no_state_files().await, Vec::<PathBuf>::new());
    bash.sessions().shutdown();
}
