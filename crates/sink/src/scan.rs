//! Fast scanning of plain text: the hot path of the sanitizer.
//!
//! Most output is printable text with newlines. These scans work on blocks with branch-free
//! reductions that the compiler turns into SIMD compares, so plain text costs no per-byte branching.

const BLOCK: usize = 64;

/// Whether a byte needs the sanitizer's attention: a C0 control other than `\t` and `\n`, or DEL.
#[inline]
fn is_special(b: u8) -> bool {
    (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f
}

/// The length of the longest prefix of `bytes` with no special byte, and whether that prefix contains
/// any non-ASCII byte (and so needs UTF-8 validation).
pub(crate) fn text_run(bytes: &[u8]) -> (usize, bool) {
    let mut high = false;
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut offset = 0;
    for block in &mut blocks {
        let mut special = false;
        let mut block_high = false;
        for &b in block {
            special |= is_special(b);
            block_high |= b >= 0x80;
        }
        if special {
            let k = block.iter().position(|&b| is_special(b)).unwrap_or(BLOCK);
            high |= block[..k].iter().any(|&b| b >= 0x80);
            return (offset + k, high);
        }
        high |= block_high;
        offset += BLOCK;
    }
    let rest = blocks.remainder();
    let k = rest.iter().position(|&b| is_special(b)).unwrap_or(rest.len());
    high |= rest[..k].iter().any(|&b| b >= 0x80);
    (offset + k, high)
}

/// The start of the first line in `body` (which ends with `\n`) longer than `max` bytes, if any.
///
/// Jumps from line start to the last newline within `max + 1` bytes, so short lines cost one
/// short backward scan per `max` bytes rather than one call per line.
pub(crate) fn first_long_line(body: &[u8], max: usize) -> Option<usize> {
    let mut start = 0;
    while start < body.len() {
        let end = start.saturating_add(max).saturating_add(1).min(body.len());
        match memchr::memrchr(b'\n', &body[start..end]) {
            Some(k) => start += k + 1,
            None => return Some(start),
        }
    }
    None
}

/// Number of `\n` in `bytes` (a plain reduction, vectorised by the compiler).
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    let mut total = 0u64;
    for block in bytes.chunks(4096) {
        // u32 accumulators per block keep the inner loop narrow enough to vectorise well.
        let n: u32 = block.iter().map(|&b| u32::from(b == b'\n')).sum();
        total += u64::from(n);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_run_stops_at_the_first_control() {
        let mut data = vec![b'a'; 200];
        data[130] = 0x1b;
        assert_eq!(text_run(&data), (130, false));
        data[10] = 0xc3;
        assert_eq!(text_run(&data), (130, true));
        assert_eq!(text_run(b"ab\n\tc"), (5, false));
        assert_eq!(text_run(b"\r"), (0, false));
        assert_eq!(text_run(&[b'x', 0x7f]), (1, false));
        data[10] = b'a';
        data[140] = 0xc3;
        assert_eq!(
            text_run(&data),
            (130, false),
            "high bytes after the stop do not count"
        );
    }

    #[test]
    fn long_lines_are_found() {
        assert_eq!(first_long_line(b"ab\ncd\n", 2), None);
        assert_eq!(first_long_line(b"ab\ncde\nf\n", 2), Some(3));
        assert_eq!(first_long_line(b"abc\n", 2), Some(0));
        let mut many = b"x\n".repeat(1000);
        many.extend_from_slice(b"0123456789\n");
        assert_eq!(first_long_line(&many, 9), Some(2000));
        assert_eq!(first_long_line(&many, 10), None);
    }

    #[test]
    fn counts_newlines() {
        assert_eq!(count_newlines(&b"a\n".repeat(5000)), 5000);
        assert_eq!(count_newlines(b""), 0);
    }
}
