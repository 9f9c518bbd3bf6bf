//! The result's text for the model and its JSON form: empty and failed runs, a timeout's
//! guidance, the truncation notice, snake-case statuses.

use shellgate::sink::Truncation;
use shellgate::{ToolResult, ToolStatus, truncation_notice};

fn completed(output: &str, code: i32) -> ToolResult {
    let mut r = ToolResult::not_run(ToolStatus::Completed, output, "/");
    r.exit_code = Some(code);
    r.is_error = code != 0;
    r
}

#[test]
fn model_text_for_empty_and_failed_runs() {
    assert_eq!(completed("", 0).model_text(), "(no output)");
    assert_eq!(
        completed("boom\n", 2).model_text(),
        "boom\nCommand exited with code 2"
    );
}

#[test]
fn model_text_for_timeout_has_guidance() {
    let mut r = completed("partial\n", 0);
    r.status = ToolStatus::TimedOut;
    r.exit_code = None;
    r.timeout_secs = 5;
    let text = r.model_text();
    assert!(text.contains("[Command timed out after 5 seconds]"), "{text}");
    assert!(text.contains("background"), "{text}");
}

#[test]
fn truncation_notice_names_the_artifact() {
    let t = Truncation {
        direction: "both".into(),
        total_lines: 10000,
        total_bytes: 1,
        shown_ranges: vec![(1, 120), (9881, 10000)],
        elided_lines: 9760,
        elided_bytes: 1,
        artifact: Some("artifact://7".into()),
    };
    assert_eq!(
        truncation_notice(&t),
        "[Showing lines 1-120 and 9881-10000 of 10000. Full output: artifact://7]"
    );
}

#[test]
fn serializes_snake_case() {
    let json = serde_json::to_value(ToolResult::not_run(ToolStatus::FailedToStart, "x", "/")).unwrap();
    assert_eq!(json["status"], "failed_to_start");
    assert_eq!(json["is_error"], true);
    assert!(json.get("duration_ms").is_some());
}
