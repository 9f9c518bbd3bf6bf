//! Normalize the typical benchmark command many times: a fixed workload for instruction-count
//! profilers (`valgrind --tool=callgrind`), whose counts do not depend on machine load.
//!
//! `cargo run --release -p shellgate-normalize --example normalize_loop -- 1000 ['COMMAND']`

use shellgate_normalize::{Normalizer, StandardNormalizer};
use std::hint::black_box;

/// The "typical" command of `benches/normalize.rs` (120 bytes).
const TYPICAL: &str = r#"grep -rn "fn main" --include='*.rs' crates/ | sed -e 's/:.*//' | sort | uniq -c | sort -rn "$(pwd)/out.txt" | head -n 20"#;

fn main() {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let command = std::env::args().nth(2).unwrap_or_else(|| TYPICAL.to_owned());
    let normalizer = StandardNormalizer::default();
    let mut stripped = 0;
    for _ in 0..iterations {
        let n = normalizer.normalize(black_box(&command));
        stripped += usize::from(n.limits.head.is_some());
    }
    println!("{iterations} iterations, {stripped} with a lifted limit");
}
