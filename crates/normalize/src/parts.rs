//! [`Parts`]: the parts of a word, the single part of the common case stored inline.

use crate::ast::WordPart;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// The parts of a [`crate::ast::Word`] in order. Dereferences to `[WordPart]`. Most words are a
/// single part, which is kept inside the word instead of in an allocation of its own.
#[derive(Clone, Default)]
pub struct Parts(Repr);

#[derive(Clone, Default)]
enum Repr {
    #[default]
    Empty,
    One([WordPart; 1]),
    Many(Vec<WordPart>),
}

impl Parts {
    /// No parts.
    pub const fn new() -> Self {
        Self(Repr::Empty)
    }

    /// Append a part.
    pub fn push(&mut self, part: WordPart) {
        match &mut self.0 {
            Repr::Many(v) => v.push(part),
            Repr::Empty => self.0 = Repr::One([part]),
            Repr::One(_) => {
                if let Repr::One([first]) = std::mem::take(&mut self.0) {
                    let mut v = Vec::with_capacity(4);
                    v.push(first);
                    v.push(part);
                    self.0 = Repr::Many(v);
                }
            }
        }
    }

    /// The parts as a slice.
    pub fn as_slice(&self) -> &[WordPart] {
        match &self.0 {
            Repr::Empty => &[],
            Repr::One(one) => one,
            Repr::Many(v) => v,
        }
    }

    /// The parts as a mutable slice.
    pub fn as_mut_slice(&mut self) -> &mut [WordPart] {
        match &mut self.0 {
            Repr::Empty => &mut [],
            Repr::One(one) => one,
            Repr::Many(v) => v,
        }
    }
}

impl Deref for Parts {
    type Target = [WordPart];
    fn deref(&self) -> &[WordPart] {
        self.as_slice()
    }
}

impl DerefMut for Parts {
    fn deref_mut(&mut self) -> &mut [WordPart] {
        self.as_mut_slice()
    }
}

impl From<Vec<WordPart>> for Parts {
    fn from(v: Vec<WordPart>) -> Self {
        let mut parts = Self::new();
        for p in v {
            parts.push(p);
        }
        parts
    }
}

impl<'a> IntoIterator for &'a Parts {
    type Item = &'a WordPart;
    type IntoIter = std::slice::Iter<'a, WordPart>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'a> IntoIterator for &'a mut Parts {
    type Item = &'a mut WordPart;
    type IntoIter = std::slice::IterMut<'a, WordPart>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_mut_slice().iter_mut()
    }
}

impl PartialEq for Parts {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Parts {}

impl fmt::Debug for Parts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Parts;
    use crate::ast::{Span, WordPart};

    fn glob(at: usize) -> WordPart {
        WordPart::Glob {
            span: Span::new(at, at + 1),
        }
    }

    #[test]
    fn pushes_keep_order_across_the_inline_case() {
        let mut parts = Parts::new();
        assert!(parts.is_empty());
        for at in 0..5 {
            parts.push(glob(at));
            assert_eq!(parts.len(), at + 1);
        }
        let starts: Vec<usize> = parts.iter().map(|p| p.span().start).collect();
        assert_eq!(starts, [0, 1, 2, 3, 4]);
        assert_eq!(Parts::from(vec![glob(0)]), Parts::from(parts[..1].to_vec()));
    }
}
