//! Property tests: the parser never panics, spans are valid UTF-8 boundaries inside the source,
//! re-printing the tree round-trips, and the normalizer keeps its promises on any input.

use proptest::prelude::*;
use shellgate_normalize::ast::{Command, Pipeline, Redirect, Script, Span, Word, WordPart};
use shellgate_normalize::visit::{self, Visitor};
use shellgate_normalize::{Normalizer, StandardNormalizer, parse, print};

mod common;
use common::Gen;

/// Every span in the tree, and the static values of all words in order.
#[derive(Default)]
struct Collect {
    spans: Vec<Span>,
    words: Vec<Option<String>>,
}

impl Visitor<'_> for Collect {
    fn script(&mut self, s: &Script, _nested: bool) {
        self.spans.push(s.span);
        self.spans.extend(&s.comments);
    }
    fn pipeline(&mut self, p: &Pipeline) {
        self.spans.push(p.span);
        self.spans.extend(p.pipes.iter().map(|x| x.span));
    }
    fn command(&mut self, c: &Command) {
        self.spans.push(c.span());
    }
    fn redirect(&mut self, r: &Redirect) {
        self.spans.push(r.span);
        if let Some(doc) = &r.heredoc {
            self.spans.push(doc.body_span);
        }
    }
    fn word(&mut self, w: &Word) {
        self.spans.push(w.span);
        self.words.push(w.static_value());
    }
    fn word_part(&mut self, p: &WordPart) {
        self.spans.push(p.span());
    }
}

fn collect(script: &Script) -> Collect {
    let mut c = Collect::default();
    visit::walk_script(&mut c, script);
    c
}

fn check_spans(src: &str, script: &Script) -> Result<(), TestCaseError> {
    for span in collect(script).spans {
        prop_assert!(
            span.start <= span.end && span.end <= src.len(),
            "{span:?} in {src:?}"
        );
        prop_assert!(
            src.is_char_boundary(span.start) && src.is_char_boundary(span.end),
            "{span:?} in {src:?}"
        );
    }
    Ok(())
}

fn check_round_trip(src: &str, script: &Script) -> Result<(), TestCaseError> {
    let printed = print(script, src);
    let reparsed = parse(&printed);
    prop_assert!(
        reparsed.is_ok(),
        "{src:?} printed as {printed:?} does not parse: {:?}",
        reparsed.err()
    );
    let reparsed = reparsed.unwrap();
    let again = print(&reparsed, &printed);
    prop_assert_eq!(&again, &printed, "printing is not stable for {:?}", src);
    prop_assert_eq!(
        collect(&reparsed).words,
        collect(script).words,
        "words changed for {:?}",
        src
    );
    Ok(())
}

/// Shell-flavoured fragments, so random strings often parse (and often do not).
fn shellish() -> impl Strategy<Value = String> {
    const FRAGMENTS: &[&str] = &[
        "echo", " ", " ", "a", "é", "日", "|", "||", "&&", ";", "&", "\n", "(", ")", "{ ", " }", "'", "\"",
        "\\", "$", "$(", "${", "`", "#", "<", ">", "2>&1", "<<", "EOF", "<<-", "-", "=", "*", "~", "if ",
        "then ", "fi", "do ", "done", "for ", "in ", "case ", "esac", ")", ";;", "$((", "))", "[[ ", " ]]",
        "\t", "x=1 ", "f()", "<(", "$'", "\\n",
    ];
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40).prop_map(|v| v.concat())
}

/// Commands that the rules rewrite, with heredocs, comments and substitutions around them.
fn rewritable() -> impl Strategy<Value = String> {
    let cd = prop::sample::select(vec!["", "cd /tmp && ", "cd 'a b' &&\n ", "cd é && "]);
    let body = prop::sample::select(vec![
        "ls",
        "cat <<EOF\nx | head -1\nEOF\n",
        "echo \"$(ls | head -1)\" `pwd`",
        "f() { :; }; f",
        "for i in 1 2; do echo $i; done",
        "make 2>&1",
        "echo ✓ ×",
    ]);
    let tail = prop::sample::select(vec![
        "",
        " | head -n 5",
        " |& tail -3",
        " | head -20 | tail -n 2",
        " 2>&1 | tail -1",
        " | head -5 # note",
        " 2>&1",
        " | head -2;",
        "\n",
    ]);
    (cd, body, tail).prop_map(|(a, b, c)| format!("{a}{b}{c}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parse_never_panics_and_spans_are_valid(src in any::<String>()) {
        if let Ok(script) = parse(&src) {
            check_spans(&src, &script)?;
        }
    }

    #[test]
    fn shellish_input_spans_and_round_trip(src in shellish()) {
        match parse(&src) {
            Ok(script) => {
                check_spans(&src, &script)?;
                check_round_trip(&src, &script)?;
            }
            Err(e) => prop_assert!(e.offset <= src.len()),
        }
    }

    #[test]
    fn generated_commands_round_trip(seed in 1u64..) {
        let mut g = Gen(seed);
        let src = g.list(0);
        let src = g.maybe_break(src);
        if let Ok(script) = parse(&src) {
            check_spans(&src, &script)?;
            check_round_trip(&src, &script)?;
        }
    }

    #[test]
    fn normalizer_is_total_and_reports_every_rewrite(src in prop_oneof![shellish(), any::<String>(), rewritable()]) {
        let n = StandardNormalizer::default().normalize(&src);
        prop_assert_eq!(&n.original, &src);
        // Without a rewrite, the script is the input trimmed and nothing was lifted.
        if n.rewrites.is_empty() {
            prop_assert!(src.contains(n.script.as_str()));
            prop_assert!(n.limits.is_empty() && n.cwd.is_none());
        } else {
            prop_assert!(n.tree.is_ok(), "a rewritten script parses");
        }
        if let Ok(tree) = &n.tree {
            check_spans(&n.script, tree)?;
        }
        // The tree of a rewritten script (moved, not re-parsed) is exactly its parse.
        prop_assert_eq!(&n.tree, &parse(&n.script), "tree of {:?}", n.script);
        // Normalizing again changes nothing that was already lifted the first time.
        let again = StandardNormalizer::default().normalize(&n.script);
        prop_assert_eq!(again.script.len() <= n.script.len(), true);
    }
}
