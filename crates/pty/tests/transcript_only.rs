//! Transcript-only terminals (no screen emulation) run without output post-processing: the program
//! still has a terminal, and the transcript is byte for byte what the same command gives through
//! pipes.

mod common;

use std::time::Duration;

use common::spec;
use shellgate_executor::{CancellationToken, Executor, LaunchSpec, PipeExecutor, RunStatus};
use shellgate_pty::{PtyExecutor, PtyOptions, PtyProcess};
use shellgate_sink::Collect;

fn sh(script: &str) -> LaunchSpec {
    spec("sh", &["-c", script]).with_timeout(Duration::from_secs(30))
}

fn transcript_only() -> PtyOptions {
    PtyOptions {
        emulate_screen: false,
        ..PtyOptions::default()
    }
}

async fn run(exec: &impl Executor, script: &str) -> Vec<u8> {
    let mut out = Collect::default();
    let outcome = exec.run(sh(script), &mut out, CancellationToken::new()).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{script}: {outcome:?}");
    assert_eq!(outcome.exit_code, Some(0), "{script}: {outcome:?}");
    out.bytes
}

#[tokio::test]
async fn transcript_equals_the_pipe_run() {
    let pty = PtyExecutor::with_options(transcript_only());
    let pipes = PipeExecutor::default();
    for script in [
        r"printf 'a\nb\r\nc\n'",
        r"printf 'one\n\ntwo\r\r\nthree'",
        r"printf '10%%\r50%%\r100%%\n\r\n\rtail\r'",
        r"printf 'tab\there\n\033[1mbold\033[0m\n'",
        "seq 1 1000",
        "seq 1 50000 | tr '\\n' '\\r'",
    ] {
        let through_pty = run(&pty, script).await;
        let through_pipes = run(&pipes, script).await;
        assert!(!through_pipes.is_empty(), "{script}");
        assert!(
            through_pty == through_pipes,
            "{script}:\n pty   {:?}\n pipes {:?}",
            String::from_utf8_lossy(&through_pty),
            String::from_utf8_lossy(&through_pipes)
        );
    }
}

#[tokio::test]
async fn program_sees_a_terminal_with_opost_off() {
    let pty = PtyExecutor::with_options(transcript_only());
    let text = run(
        &pty,
        "test -t 0 && test -t 1 && test -t 2 && echo all-terminals; stty -a",
    )
    .await;
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains("all-terminals"), "{text}");
    let words: Vec<&str> = text.split_whitespace().collect();
    assert!(words.contains(&"-opost"), "{text}");
    // Only post-processing is off: the newline mapping stays configured, input is still cooked.
    assert!(words.contains(&"onlcr"), "{text}");
    assert!(words.contains(&"icanon") && words.contains(&"echo"), "{text}");
    assert!(words.contains(&"columns") && words.contains(&"120;"), "{text}");
}

#[tokio::test]
async fn screen_emulation_keeps_a_cooked_terminal() {
    let text = run(&PtyExecutor::default(), r"stty -a; printf 'a\nb\r\nc\n'").await;
    let text = String::from_utf8_lossy(&text);
    let words: Vec<&str> = text.split_whitespace().collect();
    assert!(words.contains(&"opost") && words.contains(&"onlcr"), "{text}");
    // The terminal's `\r\n` is undone; the program's own `\r\n` came out as `\r\r\n` and keeps its `\r`.
    assert!(text.ends_with("a\nb\r\nc\n"), "{text:?}");
}

#[tokio::test]
async fn newlines_stay_plain_when_the_program_turns_processing_back_on() {
    let pty = PtyExecutor::with_options(transcript_only());
    let text = run(&pty, r"printf 'before\n'; stty opost; printf 'after\nlines\n'").await;
    assert_eq!(String::from_utf8_lossy(&text), "before\nafter\nlines\n");
}

#[test]
fn process_stream_carries_the_programs_bytes_unchanged() {
    let spec = spec("sh", &["-c", r"printf 'x\ny\r\nz\n'"]);
    let mut process = PtyProcess::spawn(&spec, &transcript_only()).expect("spawn");
    let mut output = process.take_output().expect("output");
    let mut bytes = Vec::new();
    while let Some(chunk) = output.blocking_recv() {
        bytes.extend(chunk);
    }
    assert_eq!(bytes, b"x\ny\r\nz\n");
    // With screen emulation the same program's stream has the terminal's `\r\n`.
    let mut process = PtyProcess::spawn(&spec, &PtyOptions::default()).expect("spawn");
    let mut output = process.take_output().expect("output");
    let mut bytes = Vec::new();
    while let Some(chunk) = output.blocking_recv() {
        bytes.extend(chunk);
    }
    assert_eq!(bytes, b"x\r\ny\r\r\nz\r\n");
}

#[test]
fn input_is_still_cooked_and_echoed() {
    let spec = spec("sh", &["-c", r#"read line; printf 'got %s\n' "$line""#]);
    let mut process = PtyProcess::spawn(&spec, &transcript_only()).expect("spawn");
    let mut output = process.take_output().expect("output");
    let deadline = std::time::Instant::now() + common::PATIENCE;
    while process.waiting_for_input() != Some(true) {
        assert!(std::time::Instant::now() < deadline, "sh never read its input");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Erase-character handling shows the line discipline still edits the line.
    process.write(b"hix\x7fi\r").expect("type");
    let mut bytes = Vec::new();
    while let Some(chunk) = output.blocking_recv() {
        bytes.extend(chunk);
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("hix"), "echoed: {text:?}");
    assert!(text.ends_with("\ngot hii\n"), "{text:?}");
}

#[tokio::test]
async fn cursor_queries_are_answered_from_the_recent_output() {
    let pty = PtyExecutor::with_options(transcript_only());
    // `-opost`: the terminal gets exactly these bytes, so after `one\ntwo` the cursor is on row 2,
    // column 7 (a line feed without a carriage return keeps the column).
    let script =
        r"stty -echo; printf 'one\ntwo'; printf '\033[6n'; IFS= read -r -d R pos; printf '\n%s\n' ${pos#*[}";
    let mut out = Collect::default();
    let spec = spec("bash", &["-c", script]).with_timeout(Duration::from_secs(30));
    let outcome = pty.run(spec, &mut out, CancellationToken::new()).await;
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    let text = String::from_utf8_lossy(&out.bytes);
    assert!(text.ends_with("\n2;7\n"), "{text:?}");
}
