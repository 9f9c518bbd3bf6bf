//! Helpers around model text of job output: where a running stream can be cut safely, and the
//! one-line collapse used in exit notices. (Cleaning itself is the sink crate's sanitizer.)

/// How many trailing bytes of `bytes` must wait for more input before they can be cleaned: an incomplete
/// UTF-8 character or an unterminated escape sequence at the very end.
pub fn incomplete_suffix(bytes: &[u8]) -> usize {
    const LOOKBACK: usize = 256;
    let window_start = bytes.len().saturating_sub(LOOKBACK);
    if let Some(esc) = memchr_last(0x1b, &bytes[window_start..]).map(|i| window_start + i)
        && !escape_is_complete(&bytes[esc..])
    {
        return bytes.len() - esc;
    }
    let tail_start = bytes.len().saturating_sub(3);
    for i in (tail_start..bytes.len()).rev() {
        let b = bytes[i];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if bytes.len() - i < need {
            bytes.len() - i
        } else {
            0
        };
    }
    0
}

fn memchr_last(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().rposition(|&b| b == needle)
}

fn escape_is_complete(seq: &[u8]) -> bool {
    match seq.get(1) {
        None => false,
        Some(b'[') => seq[2..].iter().any(|b| (0x40..=0x7e).contains(b)),
        Some(b']' | b'P' | b'X' | b'^' | b'_') => {
            seq[2..].contains(&0x07) || seq[2..].windows(2).any(|w| w == b"\x1b\\")
        }
        Some(b'(' | b')' | b'*' | b'+') => seq.len() >= 3,
        Some(_) => true,
    }
}

/// The last `max_chars` characters of `text` with every run of whitespace collapsed to one space;
/// a cut is marked with a leading `…`.
pub fn collapse_tail(text: &str, max_chars: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = collapsed.chars().count();
    if count <= max_chars {
        return collapsed;
    }
    let keep = max_chars.saturating_sub(1);
    let mut out = String::from("…");
    out.extend(collapsed.chars().skip(count - keep));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_back_partial_characters_and_sequences() {
        assert_eq!(incomplete_suffix(b"ab"), 0);
        assert_eq!(incomplete_suffix("é".as_bytes()), 0);
        assert_eq!(incomplete_suffix(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_suffix(&"€".as_bytes()[..2]), 2);
        assert_eq!(incomplete_suffix(b"x\x1b[3"), 3);
        assert_eq!(incomplete_suffix(b"x\x1b[31m"), 0);
        assert_eq!(incomplete_suffix(b"x\x1b]0;t"), 5);
    }

    #[test]
    fn collapses_and_keeps_the_end() {
        assert_eq!(collapse_tail("a \n\n b\t c\n", 200), "a b c");
        let long = "x".repeat(300) + " end";
        let cut = collapse_tail(&long, 200);
        assert_eq!(cut.chars().count(), 200);
        assert!(cut.starts_with('…') && cut.ends_with(" end"));
    }
}
