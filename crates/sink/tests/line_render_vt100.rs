//! The model text of a line with carriage returns, backspaces, cursor moves along the line and erases
//! is the row a terminal shows (trailing blanks aside), checked against the `vt100` emulator.

use proptest::prelude::*;
use shellgate_sink::sanitize;

/// One piece of a line: text, or a control that edits the line.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{1,12}",
        1 => Just("\r".to_owned()),
        1 => Just("\x08".to_owned()),
        1 => (1u16..60).prop_map(|n| format!("\x1b[{n}G")),
        1 => Just("\x1b[G".to_owned()),
        1 => (1u16..20).prop_map(|n| format!("\x1b[{n}C")),
        1 => (1u16..20).prop_map(|n| format!("\x1b[{n}D")),
        1 => (0u16..3).prop_map(|n| format!("\x1b[{n}K")),
        1 => Just("\x1b[K".to_owned()),
        1 => Just("\x1b[31m".to_owned()),
    ]
}

fn terminal_row(line: &str) -> String {
    let size = |n| std::num::NonZero::new(n).expect("non-zero");
    let mut parser = vt100::Parser::new(size(2), size(300), 0);
    parser.process(line.as_bytes());
    let row = parser.screen().rows(0, 300).next().unwrap_or_default();
    row.trim_end().to_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn a_line_renders_as_the_terminal_row(pieces in prop::collection::vec(piece(), 0..25)) {
        let line: String = pieces.concat();
        // Keep the cursor inside the terminal's width (no wrapping).
        prop_assume!(line.len() < 250);
        let ours = sanitize(line.as_bytes());
        prop_assert_eq!(ours.trim_end(), terminal_row(&line), "line {:?}", line);
    }
}

#[test]
fn erase_then_move_to_column_one_redraws() {
    let line = "\x1b[31mred\x1b[0m plain \x1b[2K\x1b[1Gdone\n";
    assert_eq!(sanitize(line.as_bytes()), "done\n");
    assert_eq!(sanitize(b"50%\x1b[2K\rdone\n"), "done\n");
    assert_eq!(sanitize(b"abc\x1b[5Cx\n"), "abc     x\n");
    assert_eq!(sanitize(b"abcdef\x1b[3Dx\n"), "abcxef\n");
}
