//! What a person sees at the end of `shellgate run` on a terminal: the collapsed preview of the output
//! (its last lines, each capped), the trailer of the model text, and the `Wall | Timeout | Artifact |
//! Exit` footer. Pure functions of the result, so they are snapshot-tested.

use std::ffi::OsStr;
use std::fmt::Write as _;

use shellgate::{ToolResult, ToolStatus};

/// Lines of output the collapsed preview keeps.
pub const PREVIEW_LINES: usize = 20;
/// Characters of one line the collapsed preview keeps.
pub const PREVIEW_COLUMNS: usize = 4000;

/// Whether a stream gets colours: only a terminal, never with a non-empty `NO_COLOR` (no-color.org) or
/// on a `dumb` terminal.
pub fn colors_wanted(is_terminal: bool) -> bool {
    color_decision(
        is_terminal,
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("TERM").as_deref(),
    )
}

fn color_decision(is_terminal: bool, no_color: Option<&OsStr>, term: Option<&OsStr>) -> bool {
    is_terminal && no_color.is_none_or(OsStr::is_empty) && term.is_none_or(|t| t != "dumb")
}

/// SGR colours, or nothing at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colours when `color` is true, plain text otherwise.
    pub const fn new(color: bool) -> Self {
        Self { color }
    }

    fn paint(self, sgr: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{sgr}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Faint text (labels, hints).
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Success.
    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Failure.
    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Ended by its limits rather than by itself (timeout, cancel, block).
    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Activity (the spinner).
    pub fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }
}

/// `line` cut to `max` characters, with an ellipsis when something was cut.
pub fn cap_line(line: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]).into(),
        None => line.into(),
    }
}

/// The last `lines` lines of `output`, each capped at `columns` characters, after a note of how many
/// lines were left out (`full` keeps every line). Ends with a newline; `(no output)` when empty.
pub fn preview(output: &str, lines: usize, columns: usize, full: bool, style: Style) -> String {
    if output.is_empty() {
        return "(no output)\n".to_owned();
    }
    let all: Vec<&str> = output.lines().collect();
    let keep = if full { all.len() } else { lines.min(all.len()) };
    let hidden = all.len() - keep;
    let mut text = String::new();
    if hidden > 0 {
        let plural = if hidden == 1 { "" } else { "s" };
        let _ = writeln!(
            text,
            "{}",
            style.dim(&format!(
                "… {hidden} earlier line{plural} not shown (--full shows every line)"
            ))
        );
    }
    for line in &all[hidden..] {
        let _ = writeln!(text, "{}", cap_line(line, columns));
    }
    text
}

/// The end of a terminal run on stdout: the collapsed preview, then the model text's trailer (notices,
/// truncation with the artifact, exit status, guidance). A background job's full model text instead.
pub fn final_text(result: &ToolResult, full: bool, style: Style) -> String {
    if result.job_id.is_some() {
        let mut text = result.model_text();
        text.push('\n');
        return text;
    }
    let mut text = preview(&result.output, PREVIEW_LINES, PREVIEW_COLUMNS, full, style);
    text.push_str(&result.trailer_text());
    text
}

/// How the footer names the end of a run: the exit code, the signal, or the status.
fn exit_label(result: &ToolResult) -> String {
    match (result.status, result.exit_code, &result.signal) {
        (ToolStatus::Completed, Some(code), _) => code.to_string(),
        (ToolStatus::Completed, None, Some(sig)) => sig.clone(),
        (status, _, _) => serde_json::to_value(status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    }
}

/// The human footer: `Wall | Timeout | Artifact | Exit`.
pub fn footer(result: &ToolResult, style: Style) -> String {
    let exit = exit_label(result);
    let exit = match (result.status, result.exit_code) {
        (ToolStatus::Completed, Some(0)) | (ToolStatus::Running, _) => style.green(&exit),
        (ToolStatus::Completed | ToolStatus::FailedToStart, _) => style.red(&exit),
        _ => style.yellow(&exit),
    };
    let bar = style.dim(" | ");
    format!(
        "{}{:.1}s{bar}{}{}s{bar}{}{}{bar}{}{exit}",
        style.dim("Wall "),
        result.duration_ms as f64 / 1000.0,
        style.dim("Timeout "),
        result.timeout_secs,
        style.dim("Artifact "),
        result.artifact.as_deref().unwrap_or("-"),
        style.dim("Exit "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Style = Style::new(false);

    fn completed(output: &str, code: i32) -> ToolResult {
        let mut r = ToolResult::not_run(ToolStatus::Completed, output, "/work");
        r.exit_code = Some(code);
        r.is_error = code != 0;
        r.duration_ms = 1234;
        r.timeout_secs = 300;
        r
    }

    #[test]
    fn footer_names_wall_timeout_artifact_and_exit() {
        let mut r = completed("", 2);
        r.duration_ms = 1500;
        r.artifact = Some("artifact://4".into());
        assert_eq!(
            footer(&r, PLAIN),
            "Wall 1.5s | Timeout 300s | Artifact artifact://4 | Exit 2"
        );
        r.status = ToolStatus::TimedOut;
        assert!(footer(&r, PLAIN).ends_with("Exit timed_out"));
    }

    #[test]
    fn footers_of_representative_results() {
        let ok = completed("hi\n", 0);
        let failed = completed("boom\n", 3);
        let mut timed_out = completed("partial\n", 0);
        timed_out.status = ToolStatus::TimedOut;
        timed_out.exit_code = None;
        timed_out.timeout_secs = 5;
        timed_out.duration_ms = 5012;
        let mut killed = completed("", 0);
        killed.exit_code = None;
        killed.signal = Some("SIGKILL".into());
        let mut spilled = completed("…\n", 0);
        spilled.artifact = Some("artifact://17".into());
        spilled.duration_ms = 61_250;
        let mut background = completed("", 0);
        background.status = ToolStatus::Running;
        background.exit_code = None;
        background.job_id = Some("job-1".into());
        let text: Vec<String> = [ok, failed, timed_out, killed, spilled, background]
            .iter()
            .map(|r| footer(r, PLAIN))
            .collect();
        insta::assert_snapshot!("footers_plain", text.join("\n"));
    }

    #[test]
    fn coloured_footer_marks_the_exit_and_plain_has_no_escapes() {
        let failed = completed("", 1);
        let coloured = footer(&failed, Style::new(true));
        insta::assert_snapshot!("footer_coloured_failure", coloured.escape_debug().to_string());
        assert!(!footer(&failed, PLAIN).contains('\x1b'));
    }

    #[test]
    fn preview_keeps_the_last_lines_and_caps_columns() {
        let output = (1..=45).fold(String::new(), |mut acc, i| {
            let _ = writeln!(acc, "line {i}");
            acc
        });
        insta::assert_snapshot!(
            "preview_last_20_of_45",
            preview(&output, PREVIEW_LINES, PREVIEW_COLUMNS, false, PLAIN)
        );
        let full = preview(&output, PREVIEW_LINES, PREVIEW_COLUMNS, true, PLAIN);
        assert_eq!(full, output);
        let wide = format!("{}\n", "é".repeat(5000));
        let capped = preview(&wide, PREVIEW_LINES, PREVIEW_COLUMNS, false, PLAIN);
        assert_eq!(
            capped.chars().count(),
            PREVIEW_COLUMNS + 2,
            "4000 chars, …, newline"
        );
        assert_eq!(preview("", 20, 4000, false, PLAIN), "(no output)\n");
        assert_eq!(
            preview("a\nb", 1, 4000, false, PLAIN),
            "… 1 earlier line not shown (--full shows every line)\nb\n"
        );
    }

    #[test]
    fn final_text_puts_the_trailer_after_the_preview() {
        let mut r = completed("one\ntwo\n", 3);
        r.notices.push("Rewrote `grep` as `rg`".into());
        insta::assert_snapshot!("final_text_failure", final_text(&r, false, PLAIN));
    }

    #[test]
    fn no_color_and_dumb_terminals_get_no_colours() {
        let os = |s: &'static str| Some(OsStr::new(s));
        assert!(color_decision(true, None, os("xterm-256color")));
        assert!(
            color_decision(true, os(""), None),
            "an empty NO_COLOR does not count"
        );
        assert!(!color_decision(true, os("1"), os("xterm")));
        assert!(!color_decision(true, None, os("dumb")));
        assert!(!color_decision(false, None, os("xterm")));
    }
}
