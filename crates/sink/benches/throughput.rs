//! Throughput of the output window and sanitizer, with and without artifact spill, against baselines
//! measured in the same run over the same bytes: a plain memchr line count, `write` to /dev/null and
//! `write` to a file on the same disk as the artifact store.
//!
//! The input is `SINK_BENCH_MIB` MiB (default 256) of mixed text — plain log lines, coloured lines,
//! UTF-8 text, `\r` progress bars and some long lines — fed in 64 KiB chunks like a pipe delivers.
//!
//! `cargo bench -p shellgate-sink --bench throughput -- --warm-up-time 1 --measurement-time 3`

use std::fs::File;
use std::hint::black_box;
use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shellgate_sink::{ArtifactSpill, ArtifactStore, OutputWindow, Sink, StoreConfig, WindowConfig};

const CHUNK: usize = 64 * 1024;

/// `SINK_BENCH_PLAIN=1`: plain log lines only (no escapes, no UTF-8, no `\r`).
fn plain_only() -> bool {
    std::env::var("SINK_BENCH_PLAIN").is_ok_and(|v| v == "1")
}

/// A deterministic mix of the output shapes commands produce.
fn mixed_text(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 1024);
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let words = [
        "compiling",
        "request",
        "GET",
        "/api/v1/items",
        "200",
        "ok",
        "warning:",
        "unused",
        "variable",
        "in",
        "module",
        "src/main.rs:42:7",
        "test",
        "passed",
        "0.003s",
        "INFO",
        "worker",
        "started",
    ];
    let mut n = 0u64;
    while out.len() < bytes {
        n += 1;
        let kind = if plain_only() { 0 } else { next() % 100 };
        match kind {
            0..=69 => {
                out.extend_from_slice(format!("{n:>8} ").as_bytes());
                for _ in 0..(3 + next() % 12) {
                    out.extend_from_slice(words[(next() % words.len() as u64) as usize].as_bytes());
                    out.push(b' ');
                }
            }
            70..=79 => out.extend_from_slice(
                format!(
                    "\x1b[1m\x1b[32m   Compiling\x1b[0m crate-{n} v0.1.{} (/src/crate-{n})",
                    next() % 9
                )
                .as_bytes(),
            ),
            80..=89 => out.extend_from_slice(format!("{n}: café — naïve 日本語テキスト ✓ {n}").as_bytes()),
            90..=94 => {
                for pct in (0..=100).step_by(20) {
                    out.extend_from_slice(format!("\r{pct:>3}%|{:<10}|", "#".repeat(pct / 10)).as_bytes());
                }
            }
            _ => out.extend(std::iter::repeat_n(b'x', 400 + (next() % 200) as usize)),
        }
        out.push(b'\n');
    }
    out
}

fn bench(c: &mut Criterion) {
    let mib: usize = std::env::var("SINK_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let data = mixed_text(mib << 20);
    let tmp = tempfile::Builder::new()
        .prefix("sink-bench")
        .tempdir_in(std::env::temp_dir())
        .expect("temp dir");
    let mut config = StoreConfig::new(tmp.path().join("artifacts"));
    config.quota_bytes = u64::MAX;
    config.max_artifact_bytes = u64::MAX;
    let store = Arc::new(ArtifactStore::open(config).expect("store"));

    let mut group = c.benchmark_group(format!("sink_{mib}MiB"));
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));

    group.bench_function("memchr_line_count", |b| {
        b.iter(|| {
            let lines: usize = data
                .chunks(CHUNK)
                .map(|c| memchr::memchr_iter(b'\n', c).count())
                .sum();
            black_box(lines)
        });
    });

    group.bench_function("write_dev_null", |b| {
        let mut null = File::options().write(true).open("/dev/null").expect("/dev/null");
        b.iter(|| {
            for chunk in data.chunks(CHUNK) {
                null.write_all(chunk).expect("write");
            }
        });
    });

    group.bench_function("write_file_same_disk", |b| {
        let path = tmp.path().join("plain-write.log");
        let mut file = File::create(&path).expect("file");
        b.iter(|| {
            file.set_len(0).expect("truncate");
            file.seek(SeekFrom::Start(0)).expect("seek");
            for chunk in data.chunks(CHUNK) {
                file.write_all(chunk).expect("write");
            }
        });
    });

    group.bench_function("window_sanitize", |b| {
        b.iter(|| {
            let mut window = OutputWindow::new(WindowConfig::default());
            for chunk in data.chunks(CHUNK) {
                window.write(chunk);
            }
            window.finish();
            black_box(window.summary().total_lines)
        });
    });

    group.bench_function("window_sanitize_spill", |b| {
        b.iter(|| {
            let spill = ArtifactSpill::new(store.clone());
            let mut window = OutputWindow::with_spill(WindowConfig::default(), spill);
            for chunk in data.chunks(CHUNK) {
                window.write(chunk);
            }
            window.finish();
            let summary = window.summary();
            if let Some(id) = &summary.artifact {
                store.remove(id).expect("remove artifact");
            }
            black_box(summary.total_lines)
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
