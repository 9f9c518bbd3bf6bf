//! Table tests for every normalizer rule (SPEC N-2…N-8) and every "must not strip" case.

use shellgate_normalize::{Limits, NormalizeContext, Normalized, Normalizer, StandardNormalizer};

fn norm(cmd: &str) -> Normalized {
    StandardNormalizer::default().normalize(cmd)
}

fn limits(head: Option<u64>, tail: Option<u64>) -> Limits {
    Limits { head, tail }
}

/// (command, expected script, expected limits)
const STRIPPED: &[(&str, &str, Option<u64>, Option<u64>)] = &[
    ("seq 1 100 | head -n 5", "seq 1 100", Some(5), None),
    ("ls | head", "ls", Some(10), None),
    ("ls|head", "ls", Some(10), None),
    ("ls | head -n5", "ls", Some(5), None),
    ("ls | head -n=5", "ls", Some(5), None),
    ("ls | head -5", "ls", Some(5), None),
    ("ls | head --lines=7", "ls", Some(7), None),
    ("ls | head --lines 7", "ls", Some(7), None),
    ("ls | head 3", "ls", Some(3), None),
    ("ls | head --quiet -5", "ls", Some(5), None),
    ("ls |  tail   -20  ", "ls", None, Some(20)),
    ("dmesg | tail -n 100", "dmesg", None, Some(100)),
    ("git log   |   head -n 10", "git log", Some(10), None),
    ("just build |& head -5", "just build", Some(5), None),
    ("ls -la | head -n 50", "ls -la", Some(50), None),
    ("seq 100 | head -n 20 | tail -n 5", "seq 100", Some(20), Some(5)),
    (
        "grep -E \"a|✓|×\" f | tail -80",
        "grep -E \"a|✓|×\" f",
        None,
        Some(80),
    ),
    ("echo ✓ × | head -n 1", "echo ✓ ×", Some(1), None),
    ("ls | head -n 0", "ls", Some(0), None),
    ("sort f | uniq -c | head -n 3", "sort f | uniq -c", Some(3), None),
    (
        "for f in *; do\n  echo \"$f\"\ndone | head -5",
        "for f in *; do\n  echo \"$f\"\ndone",
        Some(5),
        None,
    ),
    (
        "cat <<EOF | head -n 3\nbody\nEOF",
        "cat <<EOF\nbody\nEOF",
        Some(3),
        None,
    ),
    ("ls | head -n 5 # first five", "ls # first five", Some(5), None),
    // Only the last stage is lifted when the pair is not "head, then tail": still exact.
    ("{ ls; } | head -5 | head -3", "{ ls; } | head -5", Some(3), None),
    ("ls | tail -5 | head -2", "ls | tail -5", Some(2), None),
];

#[test]
fn trailing_limiters_are_lifted() {
    for &(cmd, script, head, tail) in STRIPPED {
        let n = norm(cmd);
        assert_eq!(n.script, script, "script of {cmd:?}");
        assert_eq!(n.limits, limits(head, tail), "limits of {cmd:?}");
        let notices = n.rewrites.iter().filter(|r| r.rule == "trailing_limiter").count();
        assert_eq!(
            notices,
            usize::from(head.is_some()) + usize::from(tail.is_some()),
            "{cmd:?}"
        );
        assert!(n.tree.is_ok(), "the rewritten script parses: {cmd:?}");
    }
}

#[test]
fn limiter_notice_names_the_fragment_and_the_limit() {
    let n = norm("seq 1 100 | head -n 5");
    assert_eq!(
        n.rewrites[0].message,
        "Trailing `| head -n 5` was applied by the tool (output limited to the first 5 lines)"
    );
    let n = norm("seq 1 100 | tail -1");
    assert_eq!(
        n.rewrites[0].message,
        "Trailing `| tail -1` was applied by the tool (output limited to the last 1 line)"
    );
    let n = norm("seq 100 | head -n 20 | tail -n 5");
    assert!(n.rewrites[0].message.contains("head -n 20"), "{:?}", n.rewrites);
    assert!(n.rewrites[1].message.contains("tail -n 5"), "{:?}", n.rewrites);
}

/// Commands the normalizer must leave exactly as they are (after trimming).
const UNTOUCHED: &[&str] = &[
    "tail -f log",
    "ls | tail -f -",
    "ls | tail -F",
    "journalctl | tail --follow",
    "cat file | tail -n +2",
    "cat file | tail +5",
    "ls | head -c 10",
    "ls | head --bytes=10",
    "ls | head -5 | sort",
    "ls | head -5 > /tmp/out.txt",
    "ls | head > f",
    "ls | head -5 2>/dev/null",
    "ls | head -n -5",
    "ls | head -n 5k",
    "ls | head file.txt",
    "ls | head -v -5",
    "ls | X=1 head -5",
    "ls | \"head\" -5",
    "ls | head -n $N",
    "echo \"x | head -1\"",
    "echo 'ls | head -5'",
    "echo ls \\| head -5",
    "echo $(ls | head -1)",
    "echo `ls | head -1`",
    "x=$(ls | head -1)",
    "head -5 file.txt",
    "head -5",
    "| head -5",
    "ls | head -5 &",
    "! ls | head -5",
    "time ls | head -5",
    "echo start; ls | head -5",
    "make && ls | head -5",
    "ls | head -5 && echo done",
    "ls\nls | head -5",
    "echo a\necho b | tail -1",
    "cat <<EOF\nfoo | head -n 3\nEOF",
    "cat <<'EOF'\nls\nx | head -n 3\nEOF",
    "é日本 | sort",
    "echo \"✓ × | head -1\"",
    "printf '日本\\n' | head -n 1 | wc -l",
    "cat <<-EOF\n\tx | head -n 3\n\tEOF",
    "echo \"unterminated | head -5",
    "cmd 2>&1 | grep err",
    "cmd > file 2>&1",
    "cmd 2>&1 > file",
    "cmd >& file",
    "cmd 2>&1 &",
    "cmd 2> &1",
    "cmd 2>&1 >/dev/null",
    "cmd1 2>&1; cmd2",
    "echo 2>&1x",
    "cd $HOME && ls",
    "cd `pwd` && ls",
    "cd $(pwd) && ls",
    "cd ~ && ls",
    "cd - && ls",
    "cd && ls",
    "cd /tmp || ls",
    "cd /tmp; ls",
    "cd /tmp && ls &",
    "cd a b && ls",
    "cd /tmp > f && ls",
    "echo cd /tmp && ls",
    "ls && cd /tmp && ls",
];

#[test]
fn must_not_strip() {
    for cmd in UNTOUCHED {
        let n = norm(cmd);
        assert_eq!(n.script, cmd.trim(), "script of {cmd:?}");
        assert!(n.limits.is_empty(), "limits of {cmd:?}: {:?}", n.limits);
        assert_eq!(n.cwd, None, "cwd of {cmd:?}");
        assert!(n.rewrites.is_empty(), "rewrites of {cmd:?}: {:?}", n.rewrites);
    }
}

#[test]
fn trailing_stderr_merge_is_dropped_on_a_single_simple_command() {
    for (cmd, script) in [
        ("cmd 2>&1", "cmd"),
        ("make -j4 all 2>&1", "make -j4 all"),
        ("echo ✓ × 2>&1", "echo ✓ ×"),
        ("just build 2>&1 | tail -3", "just build"),
        ("X=1 cmd 2>&1", "X=1 cmd"),
    ] {
        let n = norm(cmd);
        assert_eq!(n.script, script, "{cmd:?}");
        assert!(
            n.rewrites.iter().any(|r| r.rule == "trailing_stderr_merge"),
            "{cmd:?}"
        );
    }
    let n = norm("just build 2>&1 | tail -3");
    let rules: Vec<_> = n.rewrites.iter().map(|r| r.rule).collect();
    assert_eq!(rules, ["trailing_limiter", "trailing_stderr_merge"]);
    assert_eq!(n.limits, limits(None, Some(3)));
}

#[test]
fn leading_cd_is_lifted_into_the_working_directory() {
    for (cmd, dir, script) in [
        ("cd /tmp && ls", "/tmp", "ls"),
        ("cd  '/my dir'  &&  ls -la", "/my dir", "ls -la"),
        ("cd \"src/x\" && cargo test", "src/x", "cargo test"),
        ("cd sub\\ dir && make", "sub dir", "make"),
        ("cd /tmp &&\n ls", "/tmp", "ls"),
        ("cd é && ls", "é", "ls"),
        ("cd /w && make || echo failed", "/w", "make || echo failed"),
        ("cd /w && a; b", "/w", "a; b"),
        ("cd /w && ls | head -n 3", "/w", "ls"),
    ] {
        let n = norm(cmd);
        assert_eq!(n.cwd.as_deref(), Some(dir), "{cmd:?}");
        assert_eq!(n.script, script, "{cmd:?}");
        assert!(n.rewrites.iter().any(|r| r.rule == "leading_cd"), "{cmd:?}");
    }
    let n = norm("cd /tmp && ls");
    assert_eq!(
        n.rewrites[0].message,
        "Leading `cd /tmp &&` was lifted into the working directory (/tmp) by the tool"
    );
}

#[test]
fn a_leading_cd_stays_when_the_request_names_a_cwd() {
    let ctx = NormalizeContext::default().with_explicit_cwd(true);
    let n = StandardNormalizer::default().normalize_with("cd /tmp && ls | head -n 2", &ctx);
    assert_eq!(n.cwd, None);
    assert_eq!(n.script, "cd /tmp && ls | head -n 2");
    assert!(n.rewrites.iter().all(|r| r.rule != "leading_cd"));
    let off = StandardNormalizer::default()
        .lift_cd(false)
        .normalize("cd /tmp && ls");
    assert_eq!(off.script, "cd /tmp && ls");
}

#[test]
fn endless_producers_are_lifted_too_since_the_output_is_closed_as_head_would() {
    for (cmd, script) in [
        ("yes | head -n 5", "yes"),
        ("cat /dev/urandom | od | head -n 2", "cat /dev/urandom | od"),
    ] {
        let n = norm(cmd);
        assert_eq!(n.script, script, "{cmd}");
        assert!(n.limits.head.is_some(), "{cmd}");
    }
}

#[test]
fn limiters_stay_when_the_caller_cannot_close_the_output() {
    let ctx = NormalizeContext::default().with_keep_limiters(true);
    let n = StandardNormalizer::default().normalize_with("seq 1 9 | head -n 2 2>&1", &ctx);
    assert_eq!(n.script, "seq 1 9 | head -n 2 2>&1");
    assert_eq!(n.limits, Limits::default());
    let n = StandardNormalizer::default().normalize_with("cd /tmp && seq 1 9 | tail -1", &ctx);
    assert_eq!(
        (n.script.as_str(), n.cwd.as_deref()),
        ("seq 1 9 | tail -1", Some("/tmp"))
    );
}

#[test]
fn rules_can_be_switched_off() {
    let n = StandardNormalizer::default()
        .strip_limiters(false)
        .normalize("ls | head -3");
    assert_eq!(n.script, "ls | head -3");
    let n = StandardNormalizer::default()
        .drop_stderr_merge(false)
        .normalize("ls 2>&1");
    assert_eq!(n.script, "ls 2>&1");
}

#[test]
fn explicit_limits_win_over_extracted_ones() {
    let n = norm("seq 100 | head -n 5 | tail -n 2");
    let explicit = limits(Some(50), None);
    assert_eq!(explicit.or(n.limits), limits(Some(50), Some(2)));
    assert_eq!(Limits::default().or(n.limits), n.limits);
}

#[test]
fn whitespace_is_trimmed_outside_and_preserved_inside() {
    let n = norm("  \n\techo  a\t b \n  ");
    assert_eq!(n.script, "echo  a\t b");
    assert!(n.rewrites.is_empty());
    let heredoc = "cat <<-EOF\n\t  keep   this\n\tEOF";
    assert_eq!(norm(heredoc).script, heredoc);
    // A blank escaped by a trailing backslash is part of the last word.
    assert_eq!(norm("echo a\\  ").script, "echo a\\ ");
    // Non-ASCII whitespace is command text.
    assert_eq!(norm("echo a\u{a0}").script, "echo a\u{a0}");
}

#[test]
fn unparseable_commands_are_kept_with_the_error() {
    let n = norm("echo 'unterminated | head -5");
    assert_eq!(n.script, "echo 'unterminated | head -5");
    assert!(n.tree.is_err());
    assert!(n.rewrites.is_empty());
}

#[test]
fn the_tree_matches_the_script() {
    let n = norm("cd /w && printf '%s\\n' a b | head -n 1");
    let tree = n.tree.as_ref().expect("parses");
    let cmd = tree.list.items[0].and_or.first.commands[0]
        .as_simple()
        .expect("simple");
    assert_eq!(cmd.span.slice(&n.script), "printf '%s\\n' a b");
    assert_eq!(cmd.static_argv().expect("static"), ["printf", "%s\\n", "a", "b"]);
}

#[test]
fn unchanged_parses_as_is() {
    let n = Normalized::unchanged("ls | head -1");
    assert_eq!(n.script, "ls | head -1");
    assert!(n.tree.is_ok());
    assert!(n.limits.is_empty() && n.rewrites.is_empty());
}
