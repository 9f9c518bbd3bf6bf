//! The line renderer against the `vte` state machine (alacritty's parser): both over the same mixed
//! terminal output, every byte examined. `vte` alone only parses (its `Perform` here just counts what
//! it is handed); the sanitizer parses *and* renders the lines, so it must not be slower to be kept.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shellgate_sink::Sanitizer;

const CHUNK: usize = 64 * 1024;

/// Lines of text with colours, cursor moves, erases, carriage-return progress bars and UTF-8.
fn mixed(bytes: usize) -> Vec<u8> {
    let samples: [&[u8]; 6] = [
        b"plain log line with some words in it 0123456789\n",
        b"\x1b[32mok\x1b[0m test::module::name ... \x1b[1mpassed\x1b[0m\n",
        b"progress 10%\rprogress 50%\rprogress 100%\n",
        b"\x1b[2K\x1b[1Gredrawn status line\n",
        "unicode: ✓ naïve café 日本語 — done\n".as_bytes(),
        b"col\x1b[20Gmoved\x1b[5Dback\x1b[K\n",
    ];
    let mut out = Vec::with_capacity(bytes + 128);
    let mut i = 0;
    while out.len() < bytes {
        out.extend_from_slice(samples[i % samples.len()]);
        i += 1;
    }
    out
}

#[derive(Default)]
struct Count {
    chars: u64,
    controls: u64,
    sequences: u64,
}

impl vte::Perform for Count {
    fn print(&mut self, _c: char) {
        self.chars += 1;
    }
    fn execute(&mut self, _byte: u8) {
        self.controls += 1;
    }
    fn csi_dispatch(&mut self, _params: &vte::Params, _i: &[u8], _ignore: bool, _action: char) {
        self.sequences += 1;
    }
}

fn bench(c: &mut Criterion) {
    let data = mixed(64 << 20);
    let mut group = c.benchmark_group("renderer_64MiB");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("sanitizer_render_all", |b| {
        b.iter(|| {
            let mut sanitizer = Sanitizer::default();
            let mut out = Vec::with_capacity(CHUNK * 2);
            let mut lines = 0u64;
            for chunk in data.chunks(CHUNK) {
                sanitizer.push(chunk, &mut out);
                lines += memchr::memchr_iter(b'\n', &out).count() as u64;
                out.clear();
            }
            sanitizer.finish(&mut out);
            black_box(lines)
        });
    });
    group.bench_function("vte_parse_only", |b| {
        b.iter(|| {
            let mut parser = vte::Parser::new();
            let mut count = Count::default();
            for chunk in data.chunks(CHUNK) {
                parser.advance(&mut count, chunk);
            }
            black_box((count.chars, count.controls, count.sequences))
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
