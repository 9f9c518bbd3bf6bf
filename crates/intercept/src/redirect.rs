//! Redirect-to-tool rules (SPEC I-1): a command that another tool of the agent does better
//! (reading, searching, finding, editing, writing files) is blocked with a pointer to that tool
//! — only when that tool is available.
//!
//! All rules run in one [`RegexSet`] pass per text form. The built-in rules are quote-aware:
//! they match a copy of the command in which quoted text, here-document bodies and redirects
//! that write no file (`>&2`, `2>&1`, `> /dev/null`) are blanked out, so `echo "a -> b"` is not
//! a write.

use regex::{RegexSet, RegexSetBuilder};
use shellgate_normalize::Normalized;
use shellgate_normalize::ast::{Redirect, RedirectOp, Script, WordPart};
use shellgate_normalize::visit::{self, Visitor};

use crate::RedirectRuleConfig;

/// Command starts: the beginning, or after `;`, newline, `(`, `&&`, `||` (not after a pipe:
/// `ls | head` reads no file).
const START: &str = r"(?:^|[;\n(]|&&|\|\|)\s*";

/// The built-in rule set.
pub(crate) fn default_rules() -> Vec<RedirectRuleConfig> {
    let rule = |pattern: String, tool: &str, message: &str| RedirectRuleConfig {
        pattern,
        flags: String::new(),
        tool: tool.to_owned(),
        message: message.to_owned(),
        quote_aware: true,
    };
    vec![
        rule(
            format!(r"{START}(?:cat|head|tail|less|more)(?:\s+-\S+)*\s+[^\s<>|;&-]"),
            "read",
            "use the read tool to read files instead of cat/head/tail/less/more",
        ),
        rule(
            format!(r"{START}(?:grep|rg|ag|ack)\s"),
            "search",
            "use the search tool instead of grep/rg/ag/ack",
        ),
        rule(
            format!(
                r"{START}(?:(?:find|fd)\s[^;&|\n]*\s(?:-i?name|-i?path|-type|--type|-t|--extension|-e|--glob|-g)(?:\s|=)|locate\s)"
            ),
            "find",
            "use the find tool to look for files by name or type instead of find/fd/locate",
        ),
        rule(
            format!(
                r"{START}(?:sed\s+(?:[^;&|\n]*\s)?(?:-[a-zA-Z]*i|--in-place)|perl\s+(?:[^;&|\n]*\s)?-[a-zA-Z]*i|g?awk\s+(?:[^;&|\n]*\s)?-i\s*inplace)"
            ),
            "edit",
            "use the edit tool to change files instead of sed -i/perl -i/awk -i inplace",
        ),
        rule(
            format!(r"{START}(?:echo|printf|cat\s*<<-?\s*\S+)[^;&|\n]*(?:>>?|>\|)\s*\S"),
            "write",
            "use the write tool to create or overwrite files instead of shell redirection",
        ),
    ]
}

#[derive(Debug, Clone)]
struct Rule {
    tool: String,
    message: String,
}

/// Compiled rules.
#[derive(Debug, Clone, Default)]
pub(crate) struct RedirectRules {
    plain: Option<(RegexSet, Vec<Rule>)>,
    masked: Option<(RegexSet, Vec<Rule>)>,
}

impl RedirectRules {
    /// Compile `rules`; an invalid pattern is skipped with a warning.
    pub fn new(rules: &[RedirectRuleConfig], warnings: &mut Vec<String>) -> Self {
        let mut plain = (Vec::new(), Vec::new());
        let mut masked = (Vec::new(), Vec::new());
        for r in rules {
            let pattern = match inline_flags(&r.flags) {
                Ok(f) => format!("{f}{}", r.pattern),
                Err(bad) => {
                    warnings.push(format!(
                        "redirect rule `{}` skipped: unknown flag `{bad}`",
                        r.pattern
                    ));
                    continue;
                }
            };
            if let Err(e) = regex::Regex::new(&pattern) {
                warnings.push(format!("redirect rule `{}` skipped: {e}", r.pattern));
                continue;
            }
            let target = if r.quote_aware { &mut masked } else { &mut plain };
            target.0.push(pattern);
            target.1.push(Rule {
                tool: r.tool.clone(),
                message: r.message.clone(),
            });
        }
        let build = |(patterns, rules): (Vec<String>, Vec<Rule>)| {
            if patterns.is_empty() {
                return None;
            }
            RegexSetBuilder::new(&patterns)
                .build()
                .ok()
                .map(|set| (set, rules))
        };
        Self {
            plain: build(plain),
            masked: build(masked),
        }
    }

    /// Whether any rule is configured.
    pub fn is_empty(&self) -> bool {
        self.plain.is_none() && self.masked.is_none()
    }

    /// The first rule (in configuration order) whose tool is available and that matches the raw
    /// or the normalized command: `(tool, message)`.
    pub fn check(&self, cmd: &Normalized, available: &dyn Fn(&str) -> bool) -> Option<(String, String)> {
        let mut found: Option<(usize, Rule)> = None;
        let mut look = |set: &RegexSet, rules: &[Rule], text: &str, offset: usize| {
            for i in &set.matches(text) {
                if available(&rules[i].tool) && found.as_ref().is_none_or(|(b, _)| offset + i < *b) {
                    found = Some((offset + i, rules[i].clone()));
                }
            }
        };
        if let Some((set, rules)) = &self.plain {
            look(set, rules, &cmd.original, 0);
            look(set, rules, &cmd.script, 0);
        }
        if let Some((set, rules)) = &self.masked {
            let offset = self.plain.as_ref().map_or(0, |(_, r)| r.len());
            let script_mask = mask(&cmd.script, cmd.tree.as_ref().ok());
            look(set, rules, &script_mask, offset);
            if cmd.original.trim() != cmd.script {
                // The raw command is masked textually: parsing it again would double the cost.
                look(set, rules, &mask(&cmd.original, None), offset);
            }
        }
        found.map(|(_, r)| (r.tool, r.message))
    }
}

fn inline_flags(flags: &str) -> Result<String, char> {
    if flags.is_empty() {
        return Ok(String::new());
    }
    for c in flags.chars() {
        if !matches!(c, 'i' | 'm' | 's' | 'x' | 'U') {
            return Err(c);
        }
    }
    Ok(format!("(?{flags})"))
}

/// `src` with quoted text, here-document bodies and non-writing redirects replaced by `_`.
pub(crate) fn mask(src: &str, tree: Option<&Script>) -> String {
    let mut bytes = src.as_bytes().to_vec();
    let mut blank = |start: usize, end: usize| {
        for b in &mut bytes[start.min(src.len())..end.min(src.len())] {
            if *b != b'\n' {
                *b = b'_';
            }
        }
    };
    if let Some(t) = tree {
        struct Spans(Vec<(usize, usize)>);
        impl Visitor<'_> for Spans {
            fn word_part(&mut self, p: &WordPart) {
                if let WordPart::SingleQuoted { span, .. }
                | WordPart::DoubleQuoted { span, .. }
                | WordPart::AnsiC { span, .. } = p
                {
                    self.0
                        .push((span.start + 1, span.end.saturating_sub(1).max(span.start + 1)));
                }
            }
            fn redirect(&mut self, r: &Redirect) {
                if let Some(h) = &r.heredoc {
                    self.0.push((h.body_span.start, h.body_span.end));
                }
                let harmless = r.op.may_write()
                    && match (r.op, r.target.static_value()) {
                        (RedirectOp::DupOutput, Some(t)) => t == "-" || t.bytes().all(|b| b.is_ascii_digit()),
                        (_, Some(t)) => t.starts_with("/dev/"),
                        _ => false,
                    };
                if harmless {
                    self.0.push((r.span.start, r.span.end));
                }
            }
        }
        let mut s = Spans(Vec::new());
        visit::walk_script(&mut s, t);
        for (a, b) in s.0 {
            blank(a, b);
        }
    } else {
        let b = src.as_bytes();
        let mut i = 0;
        let mut spans = Vec::new();
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                q @ (b'\'' | b'"') => {
                    let start = i + 1;
                    i += 1;
                    while i < b.len() && b[i] != q {
                        i += if q == b'"' && b[i] == b'\\' { 2 } else { 1 };
                    }
                    spans.push((start, i));
                    i += 1;
                }
                b'>' => {
                    // `>&2`, `2>&1`, `>&-`, `> /dev/null`: no file is written.
                    let mut j = i + 1;
                    if b.get(j) == Some(&b'&') {
                        j += 1;
                        let k = j;
                        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'-') {
                            j += 1;
                        }
                        if j > k {
                            spans.push((i, j));
                        }
                    } else {
                        while j < b.len() && b[j] == b' ' {
                            j += 1;
                        }
                        if src[j..].starts_with("/dev/") {
                            let end = src[j..]
                                .find([' ', ';', '&', '|', '\n'])
                                .map_or(src.len(), |e| j + e);
                            spans.push((i, end));
                            j = end;
                        }
                    }
                    i = j.max(i + 1);
                }
                _ => i += 1,
            }
        }
        for (a, z) in spans {
            blank(a, z);
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shellgate_normalize::{Normalizer, StandardNormalizer};

    fn hit(cmd: &str) -> Option<String> {
        let mut w = Vec::new();
        let rules = RedirectRules::new(&default_rules(), &mut w);
        assert!(w.is_empty(), "{w:?}");
        rules
            .check(&StandardNormalizer::default().normalize(cmd), &|_| true)
            .map(|(t, _)| t)
    }

    #[test]
    fn default_rules_are_quote_aware() {
        assert_eq!(hit("cat src/main.rs").as_deref(), Some("read"));
        assert_eq!(hit("cd x && head -n 5 a.txt").as_deref(), Some("read"));
        assert_eq!(hit("grep -rn foo .").as_deref(), Some("search"));
        assert_eq!(hit("find . -name '*.rs'").as_deref(), Some("find"));
        assert_eq!(hit("sed -i 's/a/b/' f").as_deref(), Some("edit"));
        assert_eq!(hit("echo hi > out.txt").as_deref(), Some("write"));
        assert_eq!(hit("cat <<'EOF' > f\nx > y\nEOF").as_deref(), Some("write"));
        assert_eq!(hit("echo \"a -> b\""), None);
        assert_eq!(hit("echo oops >&2"), None);
        assert_eq!(hit("echo x 2>/dev/null"), None);
        assert_eq!(hit("ls | grep x"), None);
        assert_eq!(hit("cargo test"), None);
        assert_eq!(hit("sed 's/-i/x/' f"), None);
    }

    #[test]
    fn textual_masking_without_a_tree() {
        let m = mask("echo \"a > b\" >&2 2>/dev/null > out", None);
        assert!(
            !m.contains("a > b") && !m.contains(">&2") && !m.contains("/dev/null"),
            "{m}"
        );
        assert!(m.ends_with("> out"), "{m}");
    }

    #[test]
    fn invalid_rules_warn_and_tools_gate() {
        let mut w = Vec::new();
        let rules = RedirectRules::new(
            &[
                RedirectRuleConfig {
                    pattern: "(".into(),
                    tool: "x".into(),
                    message: "m".into(),
                    ..Default::default()
                },
                RedirectRuleConfig {
                    pattern: "^make".into(),
                    flags: "i".into(),
                    tool: "build".into(),
                    message: "use build".into(),
                    quote_aware: false,
                },
            ],
            &mut w,
        );
        assert_eq!(w.len(), 1, "{w:?}");
        let cmd = StandardNormalizer::default().normalize("MAKE all");
        assert_eq!(
            rules.check(&cmd, &|t| t == "build"),
            Some(("build".into(), "use build".into()))
        );
        assert_eq!(rules.check(&cmd, &|_| false), None);
    }
}
