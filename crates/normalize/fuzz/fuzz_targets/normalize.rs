//! Fuzz the normalizer and limit application: never panic, rewrites always reported.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shellgate_normalize::{Limits, Normalizer, StandardNormalizer, apply_limits};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let n = StandardNormalizer::default().normalize(src);
    if n.rewrites.is_empty() {
        assert!(n.limits.is_empty() && n.cwd.is_none());
        assert!(src.contains(n.script.as_str()));
    } else {
        assert!(n.tree.is_ok());
    }
    // The tree of a rewritten script is moved, not re-parsed: it must equal a fresh parse.
    assert_eq!(n.tree, shellgate_normalize::parse(&n.script));
    let limits = Limits { head: Some(data.len() as u64 % 7), tail: Some(data.len() as u64 % 5) };
    let limited = apply_limits(src, limits);
    assert!(limited.kept_lines <= limited.total_lines);
    assert!(src.contains(limited.text.as_str()));
});
