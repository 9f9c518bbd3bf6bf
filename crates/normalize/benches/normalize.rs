//! Parse + normalize on short, typical and long commands, with `shlex::split` of the typical
//! command as the baseline measured in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use shellgate_normalize::{Normalizer, StandardNormalizer, parse};
use std::fmt::Write as _;
use std::hint::black_box;

const SHORT: &str = "ls -la";
/// 120 bytes: quotes, a substitution, a pipeline and a trailing limiter.
const TYPICAL: &str = r#"grep -rn "fn main" --include='*.rs' crates/ | sed -e 's/:.*//' | sort | uniq -c | sort -rn "$(pwd)/out.txt" | head -n 20"#;

fn long_script() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 5 * 1024 {
        write!(
            s,
            "for f in src/*.rs; do\n  if grep -q \"todo {i}\" \"$f\"; then echo \"$f: ${{f%.rs}}\" >> /tmp/out.{i}; fi\ndone\ncat <<'EOF' | wc -l\nline {i} | head -n 3\nEOF\n"
        )
        .expect("writing to a String cannot fail");
        i += 1;
    }
    s.push_str("ls -la | head -n 5\n");
    s
}

fn benches(c: &mut Criterion) {
    assert_eq!(TYPICAL.len(), 120);
    let long = long_script();
    let normalizer = StandardNormalizer::default();
    let mut g = c.benchmark_group("normalize");
    g.bench_function("shlex_split_typical_baseline", |b| {
        b.iter(|| shlex::split(black_box(TYPICAL)));
    });
    g.bench_function("parse_typical", |b| b.iter(|| parse(black_box(TYPICAL))));
    g.bench_function("normalize_short", |b| {
        b.iter(|| normalizer.normalize(black_box(SHORT)));
    });
    g.bench_function("normalize_typical", |b| {
        b.iter(|| normalizer.normalize(black_box(TYPICAL)));
    });
    g.bench_function("normalize_long_5k", |b| {
        b.iter(|| normalizer.normalize(black_box(&long)));
    });
    g.finish();
}

criterion_group!(normalize, benches);
criterion_main!(normalize);
