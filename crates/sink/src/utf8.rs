//! Incremental UTF-8 helpers: a carry for a character split across chunks, and safe cut points.

/// The length of the character a lead byte announces (1 for ASCII and for bytes that cannot lead).
pub(crate) fn char_len(lead: u8) -> usize {
    match lead {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xff => 4,
        _ => 1,
    }
}

/// The largest `n' <= n` such that `text[..n']` ends on a character boundary (`text` is valid UTF-8).
pub(crate) fn floor_char_boundary(text: &[u8], n: usize) -> usize {
    if n >= text.len() {
        return text.len();
    }
    let mut i = n;
    while i > 0 && is_continuation(text[i]) {
        i -= 1;
    }
    i
}

/// The smallest `n' >= n` such that `text[n'..]` starts on a character boundary.
pub(crate) fn ceil_char_boundary(text: &[u8], n: usize) -> usize {
    let mut i = n;
    while i < text.len() && is_continuation(text[i]) {
        i += 1;
    }
    i
}

/// Whether `b` is a UTF-8 continuation byte.
pub(crate) fn is_continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

/// The start of a character left incomplete at the end of a chunk (at most 3 bytes, always a valid
/// prefix of some character).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Utf8Carry {
    bytes: [u8; 4],
    len: usize,
}

/// What resuming a carried character produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resumed {
    /// The character is complete: its bytes, and how many input bytes were used.
    Char([u8; 4], usize, usize),
    /// The carried bytes are invalid: `invalid` bytes (some of them possibly from the input) become
    /// U+FFFD; `used` input bytes were consumed.
    Invalid { invalid: usize, used: usize },
    /// Still incomplete; all of the (short) input was taken into the carry.
    Pending,
}

impl Utf8Carry {
    /// Whether nothing is carried.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many bytes are carried.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Remember the incomplete tail of a chunk (a valid prefix of one character, 1..=3 bytes).
    pub(crate) fn set(&mut self, tail: &[u8]) {
        debug_assert!((1..=3).contains(&tail.len()));
        self.bytes[..tail.len()].copy_from_slice(tail);
        self.len = tail.len();
    }

    /// Drop what is carried (the caller replaces it with U+FFFD).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Continue the carried character with the start of the next chunk.
    pub(crate) fn resume(&mut self, input: &[u8]) -> Resumed {
        let need = char_len(self.bytes[0]) - self.len;
        let take = need.min(input.len());
        let mut tmp = [0u8; 4];
        tmp[..self.len].copy_from_slice(&self.bytes[..self.len]);
        tmp[self.len..self.len + take].copy_from_slice(&input[..take]);
        let total = self.len + take;
        match std::str::from_utf8(&tmp[..total]) {
            Ok(_) => {
                self.len = 0;
                Resumed::Char(tmp, total, take)
            }
            Err(e) => match e.error_len() {
                None => {
                    self.bytes = tmp;
                    self.len = total;
                    Resumed::Pending
                }
                Some(invalid) => {
                    let used = invalid.saturating_sub(self.len);
                    self.len = 0;
                    Resumed::Invalid { invalid, used }
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_never_split_a_character() {
        let text = "a😀b".as_bytes();
        assert_eq!(floor_char_boundary(text, 3), 1);
        assert_eq!(floor_char_boundary(text, 5), 5);
        assert_eq!(ceil_char_boundary(text, 2), 5);
        assert_eq!(floor_char_boundary(text, 99), text.len());
    }

    #[test]
    fn a_split_character_resumes() {
        let euro = "€".as_bytes();
        let mut carry = Utf8Carry::default();
        carry.set(&euro[..1]);
        assert_eq!(carry.resume(&euro[1..2]), Resumed::Pending);
        assert_eq!(carry.len(), 2);
        match carry.resume(&euro[2..]) {
            Resumed::Char(bytes, len, used) => {
                assert_eq!(&bytes[..len], euro);
                assert_eq!(used, 1);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(carry.is_empty());
    }

    #[test]
    fn a_broken_character_is_invalid_and_the_breaker_is_not_consumed() {
        let mut carry = Utf8Carry::default();
        carry.set(&[0xe2, 0x82]);
        assert_eq!(carry.resume(b"\nx"), Resumed::Invalid { invalid: 2, used: 0 });
        carry.set(&[0xf0]);
        assert_eq!(
            carry.resume(&[0x90, 0x41]),
            Resumed::Invalid { invalid: 2, used: 1 }
        );
    }
}
