//! Fast scanning of plain text: the hot path of the sanitizer.
//!
//! Most output is printable text with newlines. These scans work on blocks with branch-free
//! reductions that the compiler turns into SIMD compares, so plain text costs no per-byte branching.

const BLOCK: usize = 64;

/// Whether a byte needs the sanitizer's attention (a C0 control other than `\t` and `\n`, or DEL)
/// as 0 or 1, computed without branches so block loops vectorise.
#[inline]
fn special_bit(b: u8) -> u8 {
    (u8::from(b < 0x20) & u8::from(b != b'\n') & u8::from(b != b'\t')) | u8::from(b == 0x7f)
}

/// A stretch of text without special bytes, found by [`text_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// Length of the stretch.
    pub(crate) len: usize,
    /// Offset of its first non-ASCII byte (`len` if it is all ASCII).
    pub(crate) first_high: usize,
}

/// What a whole chunk contains, found with three long vectorised passes so that the many short runs
/// inside it can skip the checks that cannot succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkHints {
    /// Some byte is a special other than ESC, `\r` and backspace (rare: other C0 controls, DEL).
    pub(crate) rare: bool,
    /// Some byte is non-ASCII.
    pub(crate) high: bool,
}

impl ChunkHints {
    /// Hints for `chunk`.
    pub(crate) fn of(chunk: &[u8]) -> Self {
        let mut rare = 0u8;
        let mut high = 0u8;
        for block in chunk.chunks(4096) {
            rare |= block.iter().fold(0u8, |acc, &b| acc | rare_bit(b));
            high |= block.iter().fold(0u8, |acc, &b| acc | b) & 0x80;
        }
        Self {
            rare: rare != 0,
            high: high != 0,
        }
    }

    /// Hints that promise nothing (every check runs).
    #[cfg(test)]
    pub(crate) const ALL: Self = Self {
        rare: true,
        high: true,
    };
}

/// Bytes classified one at a time before switching to SIMD scans: runs between escape sequences
/// and `\r` frames are usually this short, and one table look-up per byte beats the set-up cost of
/// `memchr3` and three vector reductions.
const SCALAR_PREFIX: usize = 24;

const SPECIAL: u8 = 1;
const HIGH: u8 = 2;
const NEWLINE: u8 = 4;

/// Per-byte classes for the scalar prefix.
static CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = if byte == b'\n' {
            NEWLINE
        } else if (byte < 0x20 && byte != b'\t') || byte == 0x7f {
            SPECIAL
        } else if byte >= 0x80 {
            HIGH
        } else {
            0
        };
        b += 1;
    }
    table
};

/// [`special_bit`] without the specials `memchr3` finds (ESC, `\r`, backspace).
#[inline]
fn rare_bit(b: u8) -> u8 {
    special_bit(b) & u8::from(b != 0x1b) & u8::from(b != b'\r') & u8::from(b != 0x08)
}

/// The longest prefix of `bytes` (a suffix of a chunk with `hints`) with no special byte.
pub(crate) fn text_run(bytes: &[u8], hints: ChunkHints) -> Run {
    let prefix = bytes.len().min(SCALAR_PREFIX);
    let mut first_high = usize::MAX;
    for (i, &b) in bytes[..prefix].iter().enumerate() {
        let class = CLASS[b as usize];
        if class & SPECIAL != 0 {
            return finish(i, first_high);
        }
        if class & HIGH != 0 && first_high == usize::MAX {
            first_high = i;
        }
    }
    if prefix == bytes.len() {
        return finish(prefix, first_high);
    }
    let rest = long_run(&bytes[prefix..], hints);
    let first_high = if first_high == usize::MAX {
        prefix + rest.first_high
    } else {
        first_high
    };
    finish(prefix + rest.len, first_high)
}

/// [`text_run`] for long runs: the common stops (ESC, `\r`, backspace) are found with SIMD
/// `memchr3`; the span before the stop is checked for rare specials and non-ASCII bytes only when the
/// chunk has any.
fn long_run(bytes: &[u8], hints: ChunkHints) -> Run {
    let stop = memchr::memchr3(0x1b, b'\r', 0x08, bytes).unwrap_or(bytes.len());
    let span = &bytes[..stop];
    let len = if hints.rare {
        first_where(span, special_bit).unwrap_or(stop)
    } else {
        stop
    };
    let first_high = if hints.high {
        first_where(&span[..len], |b| b & 0x80).unwrap_or(len)
    } else {
        len
    };
    finish(len, first_high)
}

fn finish(len: usize, first_high: usize) -> Run {
    Run {
        len,
        first_high: first_high.min(len),
    }
}

/// Index of the first byte with a non-zero `flag`: whole blocks are tested with a vectorised
/// reduction, and only the block that has one is searched byte by byte.
fn first_where(bytes: &[u8], flag: impl Fn(u8) -> u8 + Copy) -> Option<usize> {
    let mut offset = 0;
    for block in bytes.chunks(BLOCK) {
        if block.iter().fold(0u8, |acc, &b| acc | flag(b)) != 0 {
            return block.iter().position(|&b| flag(b) != 0).map(|k| offset + k);
        }
        offset += block.len();
    }
    None
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

/// Whether `bytes` is valid UTF-8, like `std::str::from_utf8(bytes).is_ok()` but faster on text
/// that is mostly ASCII: all-ASCII blocks are skipped with a vectorised test, and each run of blocks
/// with non-ASCII bytes is validated on its own. That is exact: a character crossing into an ASCII
/// block is incomplete there (so the run fails, as the whole would), and a run starting with a
/// continuation byte after an ASCII block is invalid in both.
pub(crate) fn is_utf8(bytes: &[u8]) -> bool {
    let mut run_start = None;
    let blocks = bytes.chunks_exact(BLOCK);
    let tail = blocks.remainder();
    for (n, block) in blocks.enumerate() {
        let ascii = block.iter().fold(0u8, |acc, &b| acc | b) & 0x80 == 0;
        match (ascii, run_start) {
            (false, None) => run_start = Some(n * BLOCK),
            (true, Some(start)) => {
                if std::str::from_utf8(&bytes[start..n * BLOCK]).is_err() {
                    return false;
                }
                run_start = None;
            }
            _ => {}
        }
    }
    let rest = run_start.unwrap_or(bytes.len() - tail.len());
    std::str::from_utf8(&bytes[rest..]).is_ok()
}

/// Number of `\n` in `bytes` (a plain reduction, vectorised by the compiler).
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    let mut total = 0u64;
    // u8 lanes cannot overflow within 255 bytes and give 16-32 compares per instruction.
    for block in bytes.chunks(255) {
        let n = block
            .iter()
            .fold(0u8, |acc, &b| acc.wrapping_add(u8::from(b == b'\n')));
        total += u64::from(n);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(len: usize, first_high: usize) -> Run {
        Run { len, first_high }
    }

    #[test]
    fn is_utf8_agrees_with_std() {
        let cases: [&[u8]; 9] = [
            b"",
            b"plain ascii\n",
            "caf\u{e9} \u{2014} \u{65e5}\u{672c} \u{1f600}".as_bytes(),
            &[b'a', 0xc3],
            &[0xc3, b'a'],
            &[0xe6, 0x97, b'x'],
            &[0xed, 0xa0, 0x80],
            &[0xf4, 0x90, 0x80, 0x80],
            &[b'x', 0x80, b'y'],
        ];
        for case in cases {
            let mut long = vec![b'q'; 150];
            long.extend_from_slice(case);
            long.extend(std::iter::repeat_n(b'z', 70));
            for bytes in [case, &long[..]] {
                assert_eq!(is_utf8(bytes), std::str::from_utf8(bytes).is_ok(), "{bytes:?}");
            }
        }
    }

    #[test]
    fn text_run_stops_at_the_first_control() {
        let all = ChunkHints::ALL;
        let mut data = vec![b'a'; 200];
        data[130] = 0x1b;
        data[3] = b'\n';
        data[100] = b'\n';
        data[150] = b'\n';
        assert_eq!(text_run(&data, all), run(130, 130));
        data[70] = 0xc3;
        data[10] = 0xc3;
        assert_eq!(text_run(&data, all), run(130, 10));
        data[10] = b'a';
        assert_eq!(text_run(&data, all), run(130, 70));
        assert_eq!(text_run(b"ab\n\tc", all), run(5, 5));
        assert_eq!(text_run(b"\r", all), run(0, 0));
        assert_eq!(text_run(&[b'x', 0x7f], all), run(1, 1));
        data[70] = b'a';
        data[140] = 0xc3;
        assert_eq!(
            text_run(&data, all),
            run(130, 130),
            "high bytes after the stop do not count"
        );
        assert_eq!(text_run(&data[120..], all), run(10, 10));
        assert_eq!(text_run(&data[131..], all), run(69, 9));
        data[90] = 0x01;
        assert_eq!(
            text_run(&data, all),
            run(90, 90),
            "a rare control far into a long run"
        );
        assert_eq!(ChunkHints::of(&data), all);
        assert_eq!(
            ChunkHints::of(b"plain\ntext\x1b[m\r"),
            ChunkHints {
                rare: false,
                high: false
            }
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
