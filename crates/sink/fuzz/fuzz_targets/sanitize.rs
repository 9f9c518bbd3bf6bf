//! The sanitizer never panics, always emits valid UTF-8 without control characters, keeps lines
//! aligned with the input, and gives the same output however the input is chunked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shellgate_sink::Sanitizer;

fn run(chunks: &[&[u8]], cap: usize) -> Vec<u8> {
    let mut sanitizer = Sanitizer::new(cap);
    let mut out = Vec::new();
    for chunk in chunks {
        sanitizer.push(chunk, &mut out);
    }
    sanitizer.finish(&mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let cap = usize::from(control % 64) + 1;
    let whole = run(&[input], cap);
    let step = usize::from(control / 64) + 1;
    let pieces: Vec<&[u8]> = input.chunks(step).collect();
    assert_eq!(whole, run(&pieces, cap), "chunking changed the output");
    let text = std::str::from_utf8(&whole).expect("valid UTF-8");
    assert!(!text.bytes().any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f));
    let newlines = |b: &[u8]| b.iter().filter(|&&x| x == b'\n').count();
    assert_eq!(newlines(&whole), newlines(input));
});
