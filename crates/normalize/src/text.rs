//! [`Text`]: the decoded text of a word part, stored inline when short.
//!
//! Nearly every literal, quoted string and parameter name of a command line is a few bytes long;
//! keeping them inside the tree node saves an allocation and a free per word part, which was most
//! of the cost of a parse.

use std::fmt;
use std::ops::Deref;

/// Longest text kept inline (the node then stays three machine words wide).
const INLINE: usize = 22;

/// An immutable string, inline up to 22 bytes and on the heap beyond. Dereferences to `str`.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Only ever filled from a whole `&str`, so it is valid UTF-8 and the fallback is
            // unreachable; ASCII validation of a few bytes is cheaper than the allocation saved.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Heap(s) => s,
        }
    }
}

impl Text {
    /// The text's bytes (no UTF-8 check: the cheapest comparison against a literal).
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Heap(s) => s.as_bytes(),
        }
    }
}

impl Default for Text {
    fn default() -> Self {
        Self(Repr::Inline {
            len: 0,
            bytes: [0; INLINE],
        })
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        match u8::try_from(s.len()) {
            Ok(len) if s.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                Self(Repr::Inline { len, bytes })
            }
            _ => Self(Repr::Heap(s.into())),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        if s.len() <= INLINE {
            Self::from(s.as_str())
        } else {
            Self(Repr::Heap(s.into_boxed_str()))
        }
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Text {}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Text;

    #[test]
    fn short_and_long_texts_read_back() {
        for s in [
            "",
            "a",
            "grep",
            "ü✓ multi-byte",
            &"x".repeat(22),
            &"y".repeat(23),
            &"z".repeat(300),
        ] {
            assert_eq!(Text::from(s).as_str(), s);
            assert_eq!(Text::from(s.to_owned()), *s);
        }
        assert_eq!(format!("{:?}", Text::from("a\"b")), r#""a\"b""#);
        assert_ne!(Text::from("a"), Text::from("b"));
    }
}
