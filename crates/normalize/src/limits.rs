//! Output limits (`head`/`tail` line counts) and applying them to a complete line stream.

/// Line limits for the output shown to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Keep only the first N lines.
    pub head: Option<u64>,
    /// Then keep only the last N lines.
    pub tail: Option<u64>,
}

impl Limits {
    /// Explicit values win; `fallback` fills what is unset (SPEC N-5).
    #[must_use]
    pub fn or(self, fallback: Limits) -> Limits {
        Limits {
            head: self.head.or(fallback.head),
            tail: self.tail.or(fallback.tail),
        }
    }

    /// Whether any limit is set.
    pub fn is_empty(&self) -> bool {
        self.head.is_none() && self.tail.is_none()
    }
}

/// Text after [`apply_limits`], with exact counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// The kept lines.
    pub text: String,
    /// Lines before limiting.
    pub total_lines: u64,
    /// Lines kept.
    pub kept_lines: u64,
}

/// Apply `head` first, then `tail`, to the complete line stream of `text` (SPEC N-6).
pub fn apply_limits(text: &str, limits: Limits) -> Limited {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len() as u64;
    let mut kept: &[&str] = &lines;
    if let Some(h) = limits.head {
        kept = &kept[..kept.len().min(h as usize)];
    }
    if let Some(t) = limits.tail {
        kept = &kept[kept.len().saturating_sub(t as usize)..];
    }
    Limited {
        text: kept.concat(),
        total_lines: total,
        kept_lines: kept.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_then_tail_on_full_stream() {
        let text: String = (1..=10).map(|i| i.to_string() + "\n").collect();
        let r = apply_limits(
            &text,
            Limits {
                head: Some(5),
                tail: Some(2),
            },
        );
        assert_eq!(r.text, "4\n5\n");
        assert_eq!(r.total_lines, 10);
        assert_eq!(r.kept_lines, 2);
    }

    fn lim(head: Option<u64>, tail: Option<u64>) -> Limits {
        Limits { head, tail }
    }

    #[test]
    fn head_only_tail_only_and_no_limit() {
        let text = "a\nb\nc\n";
        assert_eq!(apply_limits(text, lim(Some(2), None)).text, "a\nb\n");
        assert_eq!(apply_limits(text, lim(None, Some(1))).text, "c\n");
        let all = apply_limits(text, Limits::default());
        assert_eq!((all.text.as_str(), all.total_lines, all.kept_lines), (text, 3, 3));
    }

    #[test]
    fn limits_larger_than_the_output_keep_everything() {
        let r = apply_limits("a\nb", lim(Some(10), Some(10)));
        assert_eq!((r.text.as_str(), r.total_lines, r.kept_lines), ("a\nb", 2, 2));
    }

    #[test]
    fn a_last_line_without_newline_counts_and_empty_text_has_no_lines() {
        let r = apply_limits("a\nb\nc", lim(None, Some(1)));
        assert_eq!((r.text.as_str(), r.total_lines), ("c", 3));
        let r = apply_limits("", lim(Some(1), None));
        assert_eq!((r.text.as_str(), r.total_lines, r.kept_lines), ("", 0, 0));
        let r = apply_limits("\n\n", lim(Some(1), None));
        assert_eq!((r.text.as_str(), r.total_lines, r.kept_lines), ("\n", 2, 1));
    }

    #[test]
    fn head_zero_keeps_nothing() {
        let r = apply_limits("a\nb\n", lim(Some(0), None));
        assert_eq!((r.text.as_str(), r.kept_lines, r.total_lines), ("", 0, 2));
    }

    #[test]
    fn explicit_limits_win() {
        let explicit = Limits {
            head: Some(1),
            tail: None,
        };
        let extracted = Limits {
            head: Some(9),
            tail: Some(3),
        };
        assert_eq!(
            explicit.or(extracted),
            Limits {
                head: Some(1),
                tail: Some(3)
            }
        );
    }
}
