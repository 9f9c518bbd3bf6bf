//! Kitty keyboard-protocol normalization and the output mode scanner on arbitrary bytes: no panics,
//! and splitting the output anywhere finds the same queries and modes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shellgate_pty::KeyModes;
use shellgate_pty::keys::normalize_kitty;
use shellgate_pty::modes::ModeTracker;

fuzz_target!(|data: &[u8]| {
    let _ = normalize_kitty(data, KeyModes::default());
    let mut whole = ModeTracker::new();
    let mut whole_queries = Vec::new();
    whole.scan(data, |_, q| whole_queries.push(q));
    let split = data.len() / 2;
    let mut parts = ModeTracker::new();
    let mut part_queries = Vec::new();
    parts.scan(&data[..split], |_, q| part_queries.push(q));
    parts.scan(&data[split..], |_, q| part_queries.push(q));
    assert_eq!(whole_queries, part_queries);
    assert_eq!(whole.modes(), parts.modes());
});
