//! Driving interactive programs: a poll after input returns the program's answer, not the echo of
//! the input, and says what ended its wait (`settled`). Every scenario runs with both cores busy
//! (`stress-ng`, or busy loops where it is missing), where the echo and the answer are furthest
//! apart.

#[path = "jobs_common.rs"]
mod common;

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};

use common::*;
use shellgate::{BashParams, CancellationToken, ProcessAction, ProcessParams, ProcessResult, Settled};

/// The scenarios take turns: each one gets the whole machine, loaded on purpose.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A poll waits at most this long: far longer than any answer takes, so a timeout is a failure.
const WAIT_MS: u64 = 20_000;
/// The wait of the sequence a new user tries (`process poll` with `wait_ms: 3000`).
const USER_WAIT_MS: u64 = 3_000;

/// CPU load on every core while it lives: `stress-ng --cpu N`, or `sh` busy loops without it. Each
/// runs in a process group of its own, killed as a whole on drop.
struct Load(Vec<Child>);

impl Load {
    fn start() -> Self {
        let cores = std::thread::available_parallelism()
            .map_or(2, usize::from)
            .to_string();
        let stress = Command::new("stress-ng")
            .args(["--cpu", &cores, "--timeout", "600s", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match stress {
            Ok(child) => return Self(vec![child]),
            Err(_) => {
                available_or_skip(
                    false,
                    "stress-ng is not installed: busy loops load the cores instead",
                );
            }
        }
        let loops = (0..cores.parse::<usize>().unwrap_or(2))
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .process_group(0)
                    .spawn()
                    .expect("a busy loop")
            })
            .collect();
        Self(loops)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
        }
    }
}

fn have(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    available_or_skip(found, &format!("{program} is not installed"))
}

fn pty_usable() -> bool {
    available_or_skip(
        shellgate_pty::pty_selected(true),
        "no pseudo-terminal is available (or SHELLGATE_NO_PTY=1)",
    )
}

/// Start `command` as a background job (under a terminal when `pty`) and wait for its first prompt
/// `prompt`, returning the job id.
async fn start_at_prompt(
    bash: &shellgate::BashTool,
    process: &shellgate::ProcessTool,
    command: &str,
    pty: bool,
    prompt: &str,
) -> String {
    let mut params = BashParams::new(command);
    params.background = true;
    params.pty = pty;
    let started = bash.call(params, CancellationToken::new()).await;
    let id = started.job_id.clone().unwrap_or_else(|| panic!("{started:?}"));
    let mut seen = String::new();
    for _ in 0..200 {
        let r = poll(process, &id, 500).await;
        seen.push_str(r.output.as_deref().unwrap_or(""));
        if seen.ends_with(prompt) && r.waiting_for_input == Some(true) {
            return id;
        }
        assert_eq!(r.status, Some(shellgate::JobStatus::Running), "{seen:?} {r:?}");
    }
    panic!("no prompt {prompt:?} from {command:?}: {seen:?}");
}

/// Write `data` to job `id`, then poll once.
async fn write_then_poll(process: &shellgate::ProcessTool, id: &str, data: &str) -> ProcessResult {
    write_then_poll_waiting(process, id, data, WAIT_MS).await
}

/// Write `data` to job `id`, then poll once, waiting up to `wait_ms`.
async fn write_then_poll_waiting(
    process: &shellgate::ProcessTool,
    id: &str,
    data: &str,
    wait_ms: u64,
) -> ProcessResult {
    let mut write = ProcessParams::new(ProcessAction::Write, id);
    write.data = Some(data.to_owned());
    let wrote = process.call(write).await;
    assert!(!wrote.is_error, "{wrote:?}");
    poll(process, id, wait_ms).await
}

/// The output's lines without carriage returns and with leading `prompts` removed.
fn lines(result: &ProcessResult, prompts: &[&str]) -> Vec<String> {
    result
        .output
        .as_deref()
        .unwrap_or("")
        .split('\n')
        .map(|line| {
            let mut line = line.trim_end_matches('\r');
            while let Some(rest) = prompts.iter().find_map(|p| line.strip_prefix(p)) {
                line = rest;
            }
            line.to_owned()
        })
        .collect()
}

/// The result answered `expected` (each a whole line, in order) and the program waits again.
fn assert_answered(result: &ProcessResult, expected: &[String], prompts: &[&str], round: usize) {
    let got = lines(result, prompts);
    let mut at = 0;
    for want in expected {
        match got[at..].iter().position(|l| l == want) {
            Some(i) => at += i + 1,
            None => panic!(
                "round {round}: no line {want:?} in {:?} ({result:?})",
                result.output
            ),
        }
    }
    assert_eq!(
        result.settled,
        Some(Settled::WaitingForInput),
        "round {round}: {result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_repl_answers_in_the_same_poll_200_times_under_load() {
    if !(pty_usable() && have("python3")) {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    let id = start_at_prompt(&bash, &process, "python3 -q -i", true, ">>> ").await;
    // The sequence as a new user tries it: `6*7`, then a poll of 3 s.
    let first = write_then_poll_waiting(&process, &id, "6*7\n", USER_WAIT_MS).await;
    assert_answered(&first, &["42".to_owned()], &[">>> "], 0);
    assert!(first.output.as_deref().unwrap().ends_with(">>> "), "{first:?}");
    for round in 1..200 {
        let r = write_then_poll_waiting(&process, &id, &format!("{round}+6*7\n"), USER_WAIT_MS).await;
        assert_answered(&r, &[(round + 42).to_string()], &[">>> "], round);
    }
    // The answer also comes with the input itself (`wait_ms` on `submit`).
    let mut submit = ProcessParams::new(ProcessAction::Submit, &id);
    submit.data = Some("print('a'); print('b')".into());
    submit.wait_ms = Some(WAIT_MS);
    let r = process.call(submit).await;
    assert_answered(&r, &["a".to_owned(), "b".to_owned()], &[">>> "], 200);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["settled"], "waiting_for_input", "{json}");
    let r = write_then_poll(&process, &id, "exit()\n").await;
    assert_eq!(r.settled, Some(Settled::Exited), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_and_paste_with_wait_ms_answer_in_their_own_result_under_load() {
    if !(pty_usable() && have("python3")) {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    let id = start_at_prompt(&bash, &process, "python3 -q -i", true, ">>> ").await;
    for round in 0..30 {
        let mut write = ProcessParams::new(ProcessAction::Write, &id);
        write.data = Some(format!("{round}+6*7\n"));
        write.wait_ms = Some(WAIT_MS);
        let r = process.call(write).await;
        assert!(!r.is_error, "{r:?}");
        assert_answered(&r, &[(round + 42).to_string()], &[">>> "], round);
    }
    for round in 0..10 {
        let mut paste = ProcessParams::new(ProcessAction::Paste, &id);
        paste.text = Some(format!("v = {round}\nprint('pasted', v + 42)\n"));
        paste.wait_ms = Some(WAIT_MS);
        let r = process.call(paste).await;
        assert!(!r.is_error, "{r:?}");
        assert_answered(&r, &[format!("pasted {}", round + 42)], &[">>> ", "... "], round);
        assert!(
            r.output.as_deref().unwrap().ends_with(">>> "),
            "round {round}: {r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_of_a_program_that_does_not_read_its_terminal_settles_quiet() {
    if !pty_usable() {
        return;
    }
    let (bash, process) = tools();
    // It prints, then sleeps: it is not reading the terminal, so it is not waiting for input. (It
    // prints once the background start has answered, so the poll is what reads it.)
    let mut params = BashParams::new("sleep 0.5; echo started; exec sleep 30.9");
    params.background = true;
    params.pty = true;
    let id = bash.call(params, CancellationToken::new()).await.job_id.unwrap();
    let first = poll(&process, &id, WAIT_MS).await;
    assert!(
        first.output.as_deref().is_some_and(|o| o.contains("started")),
        "{first:?}"
    );
    assert_eq!(first.settled, Some(Settled::Quiet), "{first:?}");
    assert_eq!(first.waiting_for_input, Some(false), "{first:?}");
    // Keys typed without Enter give it nothing to read: the terminal echoes them, then all is
    // quiet — and the program still does not read.
    let mut keys = ProcessParams::new(ProcessAction::SendKeys, &id);
    keys.literal = Some("typed".into());
    keys.wait_ms = Some(WAIT_MS);
    let r = process.call(keys).await;
    assert!(r.output.as_deref().is_some_and(|o| o.contains("typed")), "{r:?}");
    assert_eq!(r.settled, Some(Settled::Quiet), "{r:?}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["settled"], "quiet", "{json}");
    let _ = act(&process, ProcessAction::Kill, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_answers_in_the_same_poll_under_load() {
    if !(pty_usable() && have("bc")) {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    let mut params = BashParams::new("bc -q");
    params.background = true;
    params.pty = true;
    let id = bash.call(params, CancellationToken::new()).await.job_id.unwrap();
    // bc shows no prompt: its first read is the sign it is ready.
    for _ in 0..200 {
        if poll(&process, &id, 200).await.waiting_for_input == Some(true) {
            break;
        }
    }
    for round in 0..30 {
        let r = write_then_poll(&process, &id, &format!("{round}+6*7\n")).await;
        assert_answered(&r, &[(round + 42).to_string()], &[], round);
    }
    let r = write_then_poll(&process, &id, "scale=3; 1/3\n").await;
    assert_answered(&r, &[".333".to_owned()], &[], 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite3_answers_every_row_in_the_same_poll_under_load() {
    if !(pty_usable() && have("sqlite3")) {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    let id = start_at_prompt(&bash, &process, "sqlite3 :memory:", true, "sqlite> ").await;
    for round in 0..30 {
        let query = format!(
            "with recursive c(x) as (select {round} union all select x+1 from c where x<{round}+4) select x*10 from c;\n"
        );
        let r = write_then_poll(&process, &id, &query).await;
        let rows: Vec<String> = (round..round + 5).map(|x| (x * 10).to_string()).collect();
        assert_answered(&r, &rows, &["sqlite> "], round);
    }
    // A statement over two lines: the first line only gets the continuation prompt.
    let r = write_then_poll(&process, &id, "select 'two',\n'lines';\n").await;
    assert_answered(&r, &["two|lines".to_owned()], &["sqlite> ", "   ...> "], 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_read_prompt_answers_under_load() {
    if !pty_usable() {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    let script = "while read -r -p 'name? ' n; do echo \"hello $n\"; done";
    let id = start_at_prompt(&bash, &process, script, true, "name? ").await;
    for round in 0..50 {
        let r = write_then_poll(&process, &id, &format!("bob{round}\n")).await;
        assert_answered(&r, &[format!("hello bob{round}")], &["name? "], round);
    }
    // Typing without Enter gives the program nothing to read: the echo is the answer.
    let mut keys = ProcessParams::new(ProcessAction::SendKeys, &id);
    keys.literal = Some("partial".into());
    keys.wait_ms = Some(WAIT_MS);
    let r = process.call(keys).await;
    assert!(
        r.output.as_deref().is_some_and(|o| o.contains("partial")),
        "{r:?}"
    );
    assert_eq!(r.settled, Some(Settled::WaitingForInput), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_repl_answers_in_the_same_poll_under_load() {
    if !(pty_usable() && have("node")) {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    // Node waits in epoll, not in a read of the terminal.
    let id = start_at_prompt(&bash, &process, "NODE_DISABLE_COLORS=1 node", true, ">").await;
    for round in 0..30 {
        // A side effect, so the REPL's preview does not show the value while it is typed.
        let r = write_then_poll(&process, &id, &format!("console.log('v' + ({round}+6*7))\n")).await;
        assert_answered(
            &r,
            &[format!("v{}", round + 42), "undefined".to_owned()],
            &["> "],
            round,
        );
        assert!(
            r.output.as_deref().unwrap().ends_with('>'),
            "round {round}: {r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_pauses_while_it_answers_is_waited_for() {
    if !(pty_usable() && have("python3")) {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    // Pauses longer than the quiet period, before its first line and between lines.
    let program = "import time\nwhile True:\n    s = input('? ')\n    for i in range(3):\n        time.sleep(0.4)\n        print(s, i, flush=True)\n";
    let id = start_at_prompt(&bash, &process, &format!("python3 -c \"{program}\""), true, "? ").await;
    for round in 0..3 {
        let r = write_then_poll(&process, &id, &format!("go{round}\n")).await;
        let expected: Vec<String> = (0..3).map(|i| format!("go{round} {i}")).collect();
        assert_answered(&r, &expected, &["? "], round);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_a_busy_program_does_not_read_ends_at_wait_ms() {
    if !pty_usable() {
        return;
    }
    let (bash, process) = tools();
    let mut params = BashParams::new("echo busy; sleep 30.7");
    params.background = true;
    params.pty = true;
    let id = bash.call(params, CancellationToken::new()).await.job_id.unwrap();
    let mut write = ProcessParams::new(ProcessAction::Write, &id);
    write.data = Some("ignored\n".into());
    assert!(!process.call(write).await.is_error);
    let r = poll(&process, &id, 600).await;
    assert_eq!(r.settled, Some(Settled::Timeout), "{r:?}");
    assert!(r.notices.iter().any(|n| n.contains("poll again")), "{r:?}");
    // The input is still unanswered: the next poll goes on waiting for it.
    let again = poll(&process, &id, 300).await;
    assert_eq!(again.settled, Some(Settled::Timeout), "{again:?}");
    let _ = act(&process, ProcessAction::Kill, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_through_pipes_answers_in_the_same_poll_under_load() {
    if !have("python3") {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    let id = start_at_prompt(&bash, &process, "python3 -q -i", false, ">>> ").await;
    for round in 0..50 {
        let r = write_then_poll(&process, &id, &format!("{round}+6*7\n")).await;
        assert_answered(&r, &[(round + 42).to_string()], &[">>> "], round);
    }
    let r = write_then_poll(&process, &id, "import time; time.sleep(0.4); print('slept')\n").await;
    assert_answered(&r, &["slept".to_owned()], &[">>> "], 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_pauses_in_poll_or_select_while_it_answers_is_waited_for() {
    if !(pty_usable() && have("python3")) {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    // Sleeps that are poll and select calls watching nothing: they are not reads of the terminal,
    // though the program's standard input is the terminal.
    let program = "import select\nwhile True:\n    s = input('? ')\n    select.select([], [], [], 0.4)\n    print(s, 'a', flush=True)\n    select.poll().poll(400)\n    print(s, 'b', flush=True)\n";
    let id = start_at_prompt(&bash, &process, &format!("python3 -c \"{program}\""), true, "? ").await;
    for round in 0..3 {
        let r = write_then_poll(&process, &id, &format!("go{round}\n")).await;
        let expected = vec![format!("go{round} a"), format!("go{round} b")];
        assert_answered(&r, &expected, &["? "], round);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_through_pipes_answers_in_the_same_poll_under_load() {
    if !have("node") {
        return;
    }
    let _turn = TURN.lock().await;
    let _load = Load::start();
    let (bash, process) = tools();
    // Without a terminal, Node's REPL waits for its stdin pipe in epoll.
    let id = start_at_prompt(&bash, &process, "NODE_DISABLE_COLORS=1 node -i", false, "> ").await;
    for round in 0..20 {
        let r = write_then_poll(&process, &id, &format!("console.log('v' + ({round}+6*7))\n")).await;
        assert_answered(
            &r,
            &[format!("v{}", round + 42), "undefined".to_owned()],
            &["> "],
            round,
        );
    }
}
