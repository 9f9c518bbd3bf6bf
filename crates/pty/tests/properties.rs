//! Properties of the pure parts: chunk boundaries never change results, odd bytes never panic.

use proptest::prelude::*;
use shellgate_pty::keys::{Key, KeyModes, normalize_kitty, parse_hex};
use shellgate_pty::modes::ModeTracker;
use shellgate_pty::{CrlfToLf, Screen, TermSize};

/// Bytes rich in the characters that matter here.
fn terminal_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            Just(0x1bu8),
            Just(b'['),
            Just(b'?'),
            Just(b'\r'),
            Just(b'\n'),
            Just(b'6'),
            Just(b'n'),
            Just(b'h'),
            Just(b'l'),
            Just(b'1'),
            Just(b';'),
            Just(b'u'),
            any::<u8>()
        ],
        0..200,
    )
}

fn scan(chunks: &[&[u8]]) -> (KeyModes, usize) {
    let mut tracker = ModeTracker::new();
    let mut queries = 0;
    for chunk in chunks {
        tracker.scan(chunk, |_, _| queries += 1);
    }
    (tracker.modes(), queries)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mode_tracking_ignores_chunk_boundaries(bytes in terminal_bytes(), cut in 0usize..200, cut2 in 0usize..200) {
        let a = cut.min(bytes.len());
        let b = cut2.min(bytes.len()).max(a);
        prop_assert_eq!(scan(&[&bytes]), scan(&[&bytes[..a], &bytes[a..b], &bytes[b..]]));
    }

    #[test]
    fn crlf_conversion_ignores_chunk_boundaries(bytes in terminal_bytes(), cut in 0usize..200) {
        let cut = cut.min(bytes.len());
        let convert = |chunks: &[&[u8]]| {
            let mut c = CrlfToLf::new();
            let mut out = Vec::new();
            for chunk in chunks {
                c.push(chunk, &mut out);
            }
            c.finish(&mut out);
            out
        };
        let whole = convert(&[&bytes]);
        prop_assert_eq!(&whole, &convert(&[&bytes[..cut], &bytes[cut..]]));
        // Reference: every CR LF pair becomes LF, scanning left to right; nothing else changes.
        let mut expected = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                i += 1;
            } else {
                expected.push(bytes[i]);
                i += 1;
            }
        }
        prop_assert_eq!(whole, expected);
    }

    #[test]
    fn kitty_normalization_and_key_parsing_never_panic(bytes in terminal_bytes(), text in ".{0,12}") {
        let _ = normalize_kitty(&bytes, KeyModes::default());
        let _ = Key::parse(&text).map(|k| k.encode(KeyModes::default()));
        let _ = parse_hex(&text);
    }

    #[test]
    fn the_screen_survives_any_output(bytes in terminal_bytes(), cols in 0u16..130, rows in 0u16..60) {
        let mut screen = Screen::new(TermSize { cols, rows }, 10);
        screen.process(&bytes);
        screen.resize(TermSize { cols: rows, rows: cols });
        screen.process(&bytes);
        let snap = screen.snapshot();
        prop_assert!(snap.cursor_row < snap.rows && snap.cursor_col <= snap.cols);
    }
}
