//! Parser unit tests: the shape of the tree, spans, redirects, here-documents, compound commands,
//! expansions, opaque nodes and errors with positions.

use shellgate_normalize::ast::{
    AndOrOp, Command, CompoundKind, RedirectFd, RedirectOp, Script, SimpleCommand, Terminator, WordPart,
};
use shellgate_normalize::{ParseErrorKind, parse, print};

fn tree(src: &str) -> Script {
    parse(src).unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

fn first_simple(script: &Script) -> &SimpleCommand {
    script.list.items[0].and_or.first.commands[0]
        .as_simple()
        .expect("a simple command")
}

#[test]
fn lists_and_pipelines() {
    let t = tree("a; b & c && d || e | f |& g\nh");
    let terms: Vec<_> = t.list.items.iter().map(|i| i.terminator).collect();
    assert_eq!(
        terms,
        [
            Some(Terminator::Semicolon),
            Some(Terminator::Background),
            Some(Terminator::Newline),
            None
        ]
    );
    let and_or = &t.list.items[2].and_or;
    assert_eq!(
        and_or.rest.iter().map(|(op, _)| *op).collect::<Vec<_>>(),
        [AndOrOp::And, AndOrOp::Or]
    );
    let p = &and_or.rest[1].1;
    assert_eq!(p.commands.len(), 3);
    assert_eq!(
        p.pipes.iter().map(|x| x.with_stderr).collect::<Vec<_>>(),
        [false, true]
    );
    assert!(tree("! a | b").list.items[0].and_or.first.negated);
}

#[test]
fn spans_are_byte_offsets_even_after_non_ascii_text() {
    let src = "echo ✓ × | grep -E \"a|✓\"";
    let t = tree(src);
    let p = &t.list.items[0].and_or.first;
    assert_eq!(p.commands[0].span().slice(src), "echo ✓ ×");
    assert_eq!(p.commands[1].span().slice(src), "grep -E \"a|✓\"");
    assert_eq!(p.pipes[0].span.slice(src), "|");
}

#[test]
fn redirect_forms() {
    let src = "cmd <in >out 2>>err 2>&1 &>all &>>app >|clob <>rw 3<&0 4>&- <<<here {fd}>x";
    let t = tree(src);
    let c = first_simple(&t);
    let ops: Vec<_> = c.redirects.iter().map(|r| r.op).collect();
    assert_eq!(
        ops,
        [
            RedirectOp::Input,
            RedirectOp::Output,
            RedirectOp::Append,
            RedirectOp::DupOutput,
            RedirectOp::OutputAll,
            RedirectOp::AppendAll,
            RedirectOp::Clobber,
            RedirectOp::ReadWrite,
            RedirectOp::DupInput,
            RedirectOp::DupOutput,
            RedirectOp::HereString,
            RedirectOp::Output,
        ]
    );
    assert_eq!(c.redirects[2].fd, Some(RedirectFd::Number(2)));
    assert_eq!(c.redirects[3].target.static_value().as_deref(), Some("1"));
    assert_eq!(c.redirects[11].fd, Some(RedirectFd::Variable("fd".into())));
    assert_eq!(c.words.len(), 1);
    // `a2>x` is the word `a2` then `>x`; `<(…)` is a word, not a redirect.
    let t = tree("echo a2>x");
    assert_eq!(first_simple(&t).words[1].static_value().as_deref(), Some("a2"));
    assert_eq!(first_simple(&t).redirects[0].fd, None);
    let t = tree("diff <(ls) >(cat)");
    assert!(first_simple(&t).redirects.is_empty());
    assert!(matches!(
        first_simple(&t).words[1].parts[0],
        WordPart::ProcessSubstitution { input: true, .. }
    ));
}

#[test]
fn heredocs_several_on_one_line_quoted_and_stripped() {
    let src = "cat <<A <<-'B' | wc -l; echo after\nline $x\nA\n\t\tb | head -n 3\n\tB\necho last";
    let t = tree(src);
    let c = t.list.items[0].and_or.first.commands[0].as_simple().unwrap();
    let a = c.redirects[0].heredoc.as_ref().unwrap();
    let b = c.redirects[1].heredoc.as_ref().unwrap();
    assert_eq!(
        (a.delimiter.as_str(), a.quoted, a.strip_tabs),
        ("A", false, false)
    );
    assert_eq!(a.body, "line $x\n");
    assert_eq!((b.delimiter.as_str(), b.quoted, b.strip_tabs), ("B", true, true));
    assert_eq!(b.body, "b | head -n 3\n");
    assert_eq!(b.body_span.slice(src), "\t\tb | head -n 3\n");
    assert!(a.terminated && b.terminated);
    assert_eq!(t.list.items.len(), 3);
    assert_eq!(t.list.items[2].and_or.span.slice(src), "echo last");
    // Unterminated at end of input: accepted, as bash does.
    let t = tree("cat <<EOF\nno end");
    let doc = first_simple(&t).redirects[0].heredoc.clone().unwrap();
    assert!(!doc.terminated);
    assert_eq!(doc.body, "no end");
}

#[test]
fn heredoc_inside_command_substitution() {
    let src = "echo $(cat <<EOF\ninner\nEOF\n) done";
    let t = tree(src);
    let c = first_simple(&t);
    let WordPart::CommandSubstitution {
        script: Some(inner), ..
    } = &c.words[1].parts[0]
    else {
        panic!("{:?}", c.words[1]);
    };
    let doc = first_simple(inner).redirects[0].heredoc.as_ref().unwrap();
    assert_eq!(doc.body, "inner\n");
    assert_eq!(c.words[2].static_value().as_deref(), Some("done"));
}

#[test]
fn compound_commands() {
    let t = tree("if a; then b; elif c; then d; else e; fi > log");
    let Command::Compound(cc) = &t.list.items[0].and_or.first.commands[0] else {
        panic!()
    };
    let CompoundKind::If { branches, else_body } = &cc.kind else {
        panic!()
    };
    assert_eq!(branches.len(), 2);
    assert!(else_body.is_some());
    assert_eq!(cc.redirects.len(), 1);

    let t = tree("for x in a 'b c'; do echo $x; done");
    let Command::Compound(cc) = &t.list.items[0].and_or.first.commands[0] else {
        panic!()
    };
    let CompoundKind::For {
        variable,
        words: Some(words),
        ..
    } = &cc.kind
    else {
        panic!()
    };
    assert_eq!(variable, "x");
    assert_eq!(words[1].static_value().as_deref(), Some("b c"));

    let t = tree("case $1 in a|b) x;; *) y;& esac");
    let Command::Compound(cc) = &t.list.items[0].and_or.first.commands[0] else {
        panic!()
    };
    let CompoundKind::Case { arms, .. } = &cc.kind else {
        panic!()
    };
    assert_eq!(arms[0].patterns.len(), 2);

    let t = tree("f() { echo; }; function g { :; }");
    assert!(matches!(&t.list.items[0].and_or.first.commands[0], Command::Function(f) if f.name == "f"));
    assert!(matches!(&t.list.items[1].and_or.first.commands[0], Command::Function(f) if f.name == "g"));

    for src in [
        "( a; b )",
        "{ a; }",
        "while a; do b; done",
        "until a; do b; done",
        "(( i++ ))",
        "[[ -n $x ]]",
        "select s in a; do :; done",
        "for ((;;)); do :; done",
    ] {
        assert!(
            matches!(
                tree(src).list.items[0].and_or.first.commands[0],
                Command::Compound(_)
            ),
            "{src}"
        );
    }
}

#[test]
fn expansions_inside_words() {
    let t = tree(r#"echo $A ${B:-x} "$(ls)" `pwd` $((1+2)) ~/x *.rs {a,b} $'\n'"#);
    let c = first_simple(&t);
    let kinds: Vec<&WordPart> = c.words[1..].iter().map(|w| &w.parts[0]).collect();
    assert!(matches!(kinds[0], WordPart::Parameter { name, braced: false, .. } if name == "A"));
    assert!(matches!(kinds[1], WordPart::Parameter { braced: true, .. }));
    assert!(
        matches!(kinds[2], WordPart::DoubleQuoted { parts, .. } if matches!(parts[0], WordPart::CommandSubstitution { backtick: false, .. }))
    );
    assert!(matches!(
        kinds[3],
        WordPart::CommandSubstitution {
            backtick: true,
            script: Some(_),
            ..
        }
    ));
    assert!(matches!(kinds[4], WordPart::Arithmetic { .. }));
    assert!(matches!(kinds[5], WordPart::Tilde { .. }));
    assert!(matches!(kinds[6], WordPart::Glob { .. }));
    assert!(c.words[8].brace_expansion);
    assert_eq!(c.words[9].static_value().as_deref(), Some("\n"));
}

#[test]
fn comments_are_recognized_only_at_word_start() {
    let src = "echo a#b # note\necho c";
    let t = tree(src);
    assert_eq!(t.comments.len(), 1);
    assert_eq!(t.comments[0].slice(src), "# note");
    assert_eq!(first_simple(&t).words[1].static_value().as_deref(), Some("a#b"));
    assert_eq!(t.list.items.len(), 2);
}

#[test]
fn backslash_newline_joins_lines() {
    let t = tree("ec\\\nho a\\\nb \\\n c");
    let argv = first_simple(&t).static_argv().unwrap();
    assert_eq!(argv, ["echo", "ab", "c"]);
}

#[test]
fn assignments_and_arrays() {
    let t = tree("A=1 B+=2 C[3]=x D=(1 2) cmd E=5");
    let c = first_simple(&t);
    let names: Vec<_> = c
        .assignments
        .iter()
        .map(|a| (a.name.as_str(), a.append))
        .collect();
    assert_eq!(names, [("A", false), ("B", true), ("C", false), ("D", false)]);
    assert_eq!(c.static_argv().unwrap(), ["cmd", "E=5"]);
}

#[test]
fn errors_are_values_with_positions() {
    for (src, offset) in [
        ("echo 'abc", 5),
        ("fi", 0),
        ("echo )", 5),
        ("a &&", 4),
        ("echo >", 6),
        ("if a; then b", 12),
    ] {
        let e = parse(src).expect_err(src);
        assert_eq!(e.offset, offset, "{src:?}: {e}");
    }
    assert!(matches!(
        parse("echo $(").unwrap_err().kind,
        ParseErrorKind::UnexpectedEnd(_)
    ));
    assert!(matches!(
        parse("cat >").unwrap_err().kind,
        ParseErrorKind::MissingRedirectTarget(">")
    ));
}

#[test]
fn hostile_nesting_is_an_error_not_a_stack_overflow() {
    let deep = "( ".repeat(100_000);
    assert!(matches!(
        parse(&deep).unwrap_err().kind,
        ParseErrorKind::TooDeep(_)
    ));
    let deep = "$(".repeat(100_000);
    assert!(parse(&deep).is_err());
    let deep = "$((".repeat(50_000);
    assert!(parse(&deep).is_err());
    let big = "a".repeat(shellgate_normalize::MAX_INPUT + 1);
    assert!(matches!(
        parse(&big).unwrap_err().kind,
        ParseErrorKind::TooLong(_)
    ));
}

#[test]
fn large_inputs_parse_in_linear_time() {
    // Each of these was quadratic once (a rescan per `[`, a comment search per substitution);
    // at this size a quadratic parse would take minutes.
    let brackets = format!("echo {}", "[".repeat(400_000));
    assert!(parse(&brackets).is_ok());
    let substitutions = "echo $(#c\n)".repeat(60_000);
    let t = parse(&substitutions).expect("parses");
    assert_eq!(t.comments.len(), 60_000);
    let words = "a ".repeat(400_000);
    assert_eq!(first_simple(&tree(&words)).words.len(), 400_000);
    let heredocs = "cat <<E\nx\nE\n".repeat(50_000);
    assert_eq!(tree(&heredocs).list.items.len(), 50_000);
}

#[test]
fn backticks_with_escapes_are_opaque() {
    let t = tree(r"echo `echo \`x\``");
    assert!(matches!(
        first_simple(&t).words[1].parts[0],
        WordPart::CommandSubstitution { script: None, .. }
    ));
}

#[test]
fn regression_lone_trailing_backslash_reprints_stably() {
    // Found by fuzzing: a heredoc delimiter `\` at end of input gained a newline when printed and
    // became a line continuation; a delimiter holding a newline (it can never match) got a
    // delimiter line that the next parse read as body; a `{` after a leading redirect was printed
    // first and became a reserved word; `<< -x` printed as `<<-x` and `< <(ls)` as `<<(ls)`.
    for src in [
        "x <<\\",
        "echo a\\",
        "<x { y",
        "cat << -x\nb\n-x",
        "cat < <(ls) > >(wc)",
        "function a=b { :; }",
        "<<$\u{8}+`\n`\n\u{b}\0",
    ] {
        let t = tree(src);
        let printed = print(&t, src);
        let again = tree(&printed);
        assert_eq!(print(&again, &printed), printed, "{src:?}");
    }
}
