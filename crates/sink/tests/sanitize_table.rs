//! Escape-sequence, carriage-return, backspace and control-character tables for the sanitizer.

use shellgate_sink::{Sanitizer, cap_marker, sanitize};

fn clean_with(bytes: &[u8], cap: usize) -> (String, shellgate_sink::SanitizeStats) {
    let mut s = Sanitizer::new(cap);
    let mut out = Vec::new();
    s.push(bytes, &mut out);
    s.finish(&mut out);
    (
        String::from_utf8(out).expect("sanitizer output is UTF-8"),
        s.stats(),
    )
}

/// Every case, also fed one byte at a time so each sequence is split at every possible point.
fn check(table: &[(&[u8], &str)]) {
    for (input, want) in table {
        assert_eq!(
            sanitize(input),
            *want,
            "whole: {:?}",
            String::from_utf8_lossy(input)
        );
        let mut s = Sanitizer::default();
        let mut out = Vec::new();
        for b in *input {
            s.push(std::slice::from_ref(b), &mut out);
        }
        s.finish(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            *want,
            "bytewise: {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn escape_sequences_are_removed_completely() {
    check(&[
        (b"\x1b[31mred\x1b[0m\n", "red\n"),
        (b"\x1b[1;38;2;255;0;0mrgb\x1b[m", "rgb"),
        (b"a\x1b[?25lb\x1b[?25h", "ab"),
        (b"\x1b[2J\x1b[Hscreen", "screen"),
        (b"\x1b[>4;2m\x1b[<u\x1b[ qx", "x"),
        (b"\x1b]0;window title\x07after", "after"),
        (b"\x1b]2;title\x1b\\after", "after"),
        (b"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"),
        (b"\x1b]133;A\x07$ \x1b]133;B\x07", "$ "),
        (b"\x1bPq#0;2;0;0;0#0~~@@\x1b\\x", "x"),
        (b"\x1bP1$r0m\x1b\\x", "x"),
        (b"\x1b_Gf=100;AAAA\x1b\\x", "x"),
        (b"\x1b^privacy\x1b\\x\x1bXsos\x1b\\y", "xy"),
        (b"\x1bOPx\x1bNay", "xy"),
        (b"\x1b(Bx\x1b)0y", "xy"),
        (b"\x1b7x\x1b8\x1b=\x1b>\x1bMy\x1bc", "xy"),
        (b"\x1b\x1b[31mx", "x"),
        (b"x\x1b[31", "x"),
        (b"\x1b[31\x18x", "x"),
        (b"\x1b]0;unterminated title\nnext", "\nnext"),
        (b"\x1b[\nx", "\nx"),
    ]);
}

#[test]
fn carriage_returns_collapse_to_the_final_frame() {
    check(&[
        (b"10%\r20%\r100%\n", "100%\n"),
        (b"abc\r\n", "abc\n"),
        (b"line\r\n\r\nnext\r\n", "line\n\nnext\n"),
        (b"Downloading 100%\rDone\n", "Doneloading 100%\n"),
        (b"Downloading 100%\r\x1b[KDone\n", "Done\n"),
        (b"Downloading 100%\r\x1b[2KDone\n", "Done\n"),
        (b"  0%|     |\r 50%|##   |\r100%|#####|\n", "100%|#####|\n"),
        (b"\r\rx\r", "x"),
        (b"a\rb\rc", "c"),
    ]);
}

#[test]
fn backspace_is_applied() {
    check(&[
        (b"ab\x08c", "ac"),
        (b"\x08\x08x", "x"),
        ("é\x08e".as_bytes(), "e"),
        (b"abc\x08\x08\x1b[K!", "a!"),
        (b"x\x08\x08\x08", "x"),
    ]);
}

#[test]
fn other_controls_are_dropped_and_nul_is_not_a_terminator() {
    check(&[
        (b"a\x00b\x07c\x7fd", "abcd"),
        (b"tab\there\n", "tab\there\n"),
        (b"form\x0cfeed\x0bvt", "formfeedvt"),
        ("x\u{85}y\u{9b}z".as_bytes(), "xyz"),
        (b"\x00\x00\x00", ""),
    ]);
}

#[test]
fn invalid_utf8_becomes_replacement_characters_and_is_counted() {
    let (text, stats) = clean_with(&[0xff, b'a', 0xc3, b'\n', 0xe2, 0x82], 100);
    assert_eq!(text, "\u{FFFD}a\u{FFFD}\n\u{FFFD}");
    assert_eq!(stats.replaced_bytes, 4);
    // Raw 8-bit C1 bytes are invalid UTF-8, not controls.
    let (text, stats) = clean_with(&[0x9b, b'3', b'1', b'm'], 100);
    assert_eq!(text, "\u{FFFD}31m");
    assert_eq!(stats.replaced_bytes, 1);
}

#[test]
fn long_lines_are_capped_with_a_marker() {
    let mut input = vec![b'A'; 10_000];
    input.extend_from_slice(b"\nshort\n");
    let (text, stats) = clean_with(&input, 4000);
    assert_eq!(
        text,
        format!(
            "{}{}{}\nshort\n",
            "A".repeat(2000),
            cap_marker(6000),
            "A".repeat(2000)
        )
    );
    assert_eq!((stats.capped_lines, stats.capped_bytes), (1, 6000));
    // The cap never splits a character.
    let (text, _) = clean_with("€€€€€".as_bytes(), 8);
    assert_eq!(text, format!("€{}€", cap_marker(9)));
    // A progress bar redrawn many times on one line is not "long".
    let bar: Vec<u8> = (0..5000).flat_map(|i| format!("\r{i:>5}").into_bytes()).collect();
    let (text, stats) = clean_with(&bar, 4000);
    assert_eq!(text, " 4999");
    assert_eq!(stats.capped_lines, 0);
}
