//! Property tests: results never depend on how the stream is chunked, the window equals the head and
//! tail of the whole (sanitized) stream, and every count is exact.

use proptest::prelude::*;
use shellgate_sink::{OutputWindow, Sanitizer, Sink, WindowConfig, elision_marker};

/// Pieces of realistic and hostile output.
fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z0-9 ]{0,12}".prop_map(String::into_bytes),
        3 => Just(b"\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\x08".to_vec()),
        1 => Just(b"\t".to_vec()),
        1 => Just(b"\x1b[31m".to_vec()),
        1 => Just(b"\x1b[0m".to_vec()),
        1 => Just(b"\x1b[2K".to_vec()),
        1 => Just(b"\x1b]0;title\x07".to_vec()),
        1 => Just(b"\x1b]8;;http://x\x1b\\".to_vec()),
        1 => Just(b"\x1bP1$r\x1b\\".to_vec()),
        1 => Just(b"\x1bOP".to_vec()),
        1 => Just("é€😀日本".as_bytes().to_vec()),
        1 => Just(vec![0xff]),
        1 => Just(vec![0xe2, 0x82]),
        1 => Just(vec![0x00, 0x07, 0x7f]),
        1 => Just("\u{85}".as_bytes().to_vec()),
        1 => Just(vec![b'x'; 40]),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(token(), 0..300).prop_map(|t| t.concat())
}

/// Split `bytes` at the given (sorted, deduplicated) cut points.
fn chunks<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut out = Vec::new();
    let mut start = 0;
    for p in points {
        out.push(&bytes[start..p]);
        start = p;
    }
    out.push(&bytes[start..]);
    out
}

fn sanitize_in(chunks: &[&[u8]], cap: usize) -> Vec<u8> {
    let mut s = Sanitizer::new(cap);
    let mut out = Vec::new();
    for c in chunks {
        s.push(c, &mut out);
    }
    s.finish(&mut out);
    out
}

fn count(bytes: &[u8], b: u8) -> u64 {
    memchr::memchr_iter(b, bytes).count() as u64
}

/// Expected shown ranges, elided lines and elided bytes (`None`: not truncated).
type Expected = Option<(Vec<(u64, u64)>, u64, u64)>;

/// The expected summary, computed on the whole materialised stream.
fn reference(raw: &[u8], head: usize, tail: usize, cap: usize) -> (String, Expected) {
    let clean = sanitize_in(&[raw], cap);
    let total_lines = count(raw, b'\n') + u64::from(raw.last().is_some_and(|&b| b != b'\n'));
    if clean.len() <= head + tail + 1 {
        return (String::from_utf8(clean).unwrap(), None);
    }
    let head_end = clean[..head]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |k| k + 1);
    let head_part = &clean[..head_end];
    let region = clean.len() - tail;
    let tail_start = if clean[region - 1] == b'\n' {
        region
    } else {
        region
            + clean[region..]
                .iter()
                .position(|&b| b == b'\n')
                .expect("a newline in the tail")
            + 1
    };
    let tail_part = &clean[tail_start..];
    let head_lines = count(head_part, b'\n');
    let tail_lines = if tail_part.is_empty() {
        0
    } else {
        total_lines - count(&clean[..tail_start], b'\n')
    };
    let raw_lines: Vec<&[u8]> = raw.split_inclusive(|&b| b == b'\n').collect();
    let shown_raw: usize = raw_lines[..head_lines as usize]
        .iter()
        .chain(&raw_lines[(total_lines - tail_lines) as usize..])
        .map(|l| l.len())
        .sum();
    let elided_lines = total_lines - head_lines - tail_lines;
    let elided_bytes = (raw.len() - shown_raw) as u64;
    let mut text = head_part.to_vec();
    text.extend_from_slice(elision_marker(elided_lines, elided_bytes).as_bytes());
    text.push(b'\n');
    text.extend_from_slice(tail_part);
    let mut ranges = Vec::new();
    if head_lines > 0 {
        ranges.push((1, head_lines));
    }
    if tail_lines > 0 {
        ranges.push((total_lines - tail_lines + 1, total_lines));
    }
    (
        String::from_utf8(text).unwrap(),
        Some((ranges, elided_lines, elided_bytes)),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn sanitizing_does_not_depend_on_chunking(raw in stream(), cuts in prop::collection::vec(any::<usize>(), 0..40)) {
        let whole = sanitize_in(&[&raw], 64);
        let split = sanitize_in(&chunks(&raw, &cuts), 64);
        prop_assert_eq!(&whole, &split);
        let text = String::from_utf8(whole).expect("valid UTF-8");
        prop_assert_eq!(count(text.as_bytes(), b'\n'), count(&raw, b'\n'), "lines stay aligned");
        prop_assert!(!text.bytes().any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f), "{:?}", text);
        let has_c1 = text.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c));
        prop_assert!(!has_c1, "C1 control left in {:?}", text);
    }

    #[test]
    fn window_is_head_and_tail_of_the_whole_stream(
        raw in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
        head in 64usize..400,
        tail in 64usize..400,
    ) {
        let cap = 16;
        let mut window = OutputWindow::new(WindowConfig { head_bytes: head, tail_bytes: tail, max_column: cap });
        for c in chunks(&raw, &cuts) {
            window.write(c);
        }
        window.finish();
        let summary = window.summary();
        let (text, trunc) = reference(&raw, head, tail, cap);
        prop_assert_eq!(summary.total_bytes, raw.len() as u64);
        prop_assert_eq!(summary.total_lines, count(&raw, b'\n') + u64::from(raw.last().is_some_and(|&b| b != b'\n')));
        prop_assert_eq!(&summary.text, &text);
        match (trunc, summary.truncation) {
            (Some((ranges, lines, bytes)), Some(t)) => {
                prop_assert_eq!(t.shown_ranges, ranges);
                prop_assert_eq!(t.elided_lines, lines);
                prop_assert_eq!(t.elided_bytes, bytes);
                prop_assert_eq!(t.total_lines, summary.total_lines);
            }
            (None, None) => {}
            (None, Some(t)) => prop_assert_eq!(t.direction, "none"),
            (Some(_), None) => prop_assert!(false, "truncation missing"),
        }
    }

    #[test]
    fn plain_text_window_is_exact(
        lines in prop::collection::vec("[ -~]{0,30}", 0..400),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
        trailing_newline in any::<bool>(),
    ) {
        let mut raw = lines.join("\n").into_bytes();
        if trailing_newline && !raw.is_empty() {
            raw.push(b'\n');
        }
        let mut window = OutputWindow::new(WindowConfig { head_bytes: 100, tail_bytes: 200, ..WindowConfig::default() });
        for c in chunks(&raw, &cuts) {
            window.write(c);
        }
        window.finish();
        let s = window.summary();
        if raw.len() <= 301 {
            prop_assert_eq!(s.text.as_bytes(), &raw[..]);
            prop_assert!(s.truncation.is_none());
        } else {
            let t = s.truncation.expect("truncated");
            // Shown text is a prefix and a suffix of the stream, cut at line boundaries.
            let marker = s.text.find("[… ").expect("marker");
            let head = &s.text.as_bytes()[..marker];
            let tail = &s.text.as_bytes()[s.text[marker..].find('\n').unwrap() + marker + 1..];
            prop_assert!(raw.starts_with(head));
            prop_assert!(raw.ends_with(tail));
            prop_assert!(head.len() <= 100 && tail.len() <= 200);
            let shown: u64 = t.shown_ranges.iter().map(|(a, b)| b - a + 1).sum();
            prop_assert_eq!(shown + t.elided_lines, t.total_lines);
            prop_assert_eq!((head.len() + tail.len()) as u64 + t.elided_bytes, raw.len() as u64);
        }
    }
}

#[test]
fn utf8_split_at_every_offset_decodes_correctly() {
    let text = "aé€😀日本語\n\u{1F600}x\u{10FFFF}y";
    let bytes = text.as_bytes();
    for i in 0..=bytes.len() {
        for j in i..=bytes.len() {
            let out = sanitize_in(&[&bytes[..i], &bytes[i..j], &bytes[j..]], 4000);
            assert_eq!(String::from_utf8(out).unwrap(), text, "split at {i} and {j}");
        }
    }
}

#[test]
fn escape_split_at_every_offset_is_removed() {
    let raw = b"a\x1b[38;5;196mb\x1b]8;;http://x/y\x1b\\c\x1bPq#0\x1b\\d\x1b]0;t\x07e";
    for i in 0..=raw.len() {
        let out = sanitize_in(&[&raw[..i], &raw[i..]], 4000);
        assert_eq!(out, b"abcde", "split at {i}");
    }
}
