//! The window's totals are exact and its text bounded, for any input and chunking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shellgate_sink::{OutputWindow, Sink, WindowConfig};

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let config = WindowConfig {
        head_bytes: usize::from(control & 0x0f) * 16,
        tail_bytes: usize::from(control >> 4) * 16,
        max_column: 32,
    };
    let mut window = OutputWindow::new(config.clone());
    for chunk in input.chunks(usize::from(control % 7) + 1) {
        window.write(chunk);
    }
    window.finish();
    let summary = window.summary();
    assert_eq!(summary.total_bytes, input.len() as u64);
    let newlines = input.iter().filter(|&&b| b == b'\n').count() as u64;
    let partial = u64::from(input.last().is_some_and(|&b| b != b'\n'));
    assert_eq!(summary.total_lines, newlines + partial);
    if let Some(t) = summary.truncation {
        let shown: u64 = t.shown_ranges.iter().map(|(a, b)| b - a + 1).sum();
        assert!(shown + t.elided_lines <= t.total_lines + 1);
        assert!(t.elided_bytes <= t.total_bytes);
    }
    // Head + tail + a marker line (and a cap marker per shown line at most).
    let bound = config.head_bytes + config.tail_bytes + 64 + 64 * (summary.text.lines().count() + 1);
    assert!(summary.text.len() <= bound, "{} > {bound}", summary.text.len());
});
