//! Differential test against real bash: for a corpus of hand-picked hard cases plus generated
//! commands, (1) "is this a syntax error" must agree with `bash -n`, and (2) for static simple
//! commands, the words the parser yields must equal what bash passes to `printf "%s\0"`.
//!
//! Needs `bash` on PATH: skipped with a message when absent, a failure when
//! `SHELLGATE_REQUIRE_ALL=1`.

use shellgate_normalize::ast::Command;
use shellgate_normalize::parse;
use std::process::{Command as Process, Stdio};

mod common;
use common::Gen;

fn bash_available() -> bool {
    let ok = Process::new("bash")
        .arg("-c")
        .arg("exit 0")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
            "bash is required (SHELLGATE_REQUIRE_ALL=1) but was not found"
        );
        eprintln!("skipping differential test: bash not found on PATH");
    }
    ok
}

/// `bash -n -c CMD` succeeds (syntax accepted).
fn bash_syntax_ok(cmd: &str) -> bool {
    Process::new("bash")
        .args(["--norc", "--noprofile", "-n", "-c", cmd])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run bash")
        .success()
}

/// The arguments bash passes for `WORDS` (the raw text of a simple command's words).
fn bash_words(words_src: &str) -> Vec<Vec<u8>> {
    let dir = std::env::temp_dir().join("shellgate-normalize-differential-empty");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = Process::new("bash")
        .args([
            "--norc",
            "--noprofile",
            "-c",
            &format!("printf '%s\\0' {words_src}"),
        ])
        .current_dir(&dir)
        .env("HOME", "/nonexistent-home")
        .stdin(Stdio::null())
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "bash failed on {words_src:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Vec<Vec<u8>> = out.stdout.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    v.pop(); // after the last NUL
    v
}

/// Hand-picked hard cases: quoting, escapes, heredocs, compound commands, errors.
const HARD: &[&str] = &[
    "ls -la",
    "echo 'a b' \"c d\" e\\ f",
    r#"echo "a\"b" 'c\d' "e\\f" "g\$h" "i\`j" "k\l""#,
    r"echo $'a\tb' $'\x41\101\u00e9' $'\'' $'a\0b' $'\cA' $'\e[0m' $'\q'",
    "echo a\\\nb",
    "echo \"a\\\nb\"",
    "echo 'a\\\nb'",
    "echo x#y #comment",
    "echo \\#x",
    "echo a;#c",
    "echo '#'",
    "echo é ü 日本 ✓ ×",
    r#"grep -E "a|✓|×" f"#,
    "echo \"\" '' x\"\"y",
    "echo {} x{a} [ a] ]",
    "echo a=b --x=~ x:~",
    "echo $",
    "echo a$ \"b$\" $/",
    "echo \\$HOME '$HOME'",
    "echo -n -e -- --",
    "printf '%s\\n' a",
    "echo \"$'x'\"",
    "echo $\"locale\"",
    "echo \"a'b\" 'a\"b'",
    "echo a\\'b a\\\"b",
    "echo \\\\ \\\\\\\\",
    "echo ab\\",
    "echo =",
    "echo a==b",
    "echo %s %% @ ^ + - : .",
    "echo !x a!b !",
    "echo a,b x,{",
    "echo }{",
    "echo '}' \"{a,b}\"",
    "ls | head -n 5",
    "ls|head",
    "cmd 2>&1 | grep x",
    "cmd > f 2>&1",
    "cmd >& f",
    "cmd &> f; cmd &>> g",
    "cmd >| f",
    "cmd <> f",
    "cmd 3<&0 4>&- 5<&-",
    "cat <<< \"here string\"",
    "cat <<EOF\nhello $USER\nEOF",
    "cat <<'EOF'\n$not expanded\nEOF",
    "cat <<-EOF\n\tindented\n\tEOF",
    "cat <<A <<B\na\nA\nb\nB",
    "cat <<EOF | head -n 3\nx | head -n 3\nEOF",
    "cat <<EOF\nunterminated",
    "cat <<\"E O F\"\nx\nE O F",
    "cat <<EOF; echo after\nbody\nEOF",
    "if true; then echo y; elif false; then echo n; else echo z; fi",
    "if true\nthen\n  echo y\nfi",
    "while read l; do echo \"$l\"; done < f",
    "until false; do break; done",
    "for x in a b c; do echo $x; done",
    "for x; do :; done",
    "for x do :; done",
    "for ((i=0; i<3; i++)); do echo $i; done",
    "select x in a b; do break; done",
    "case $x in a|b) echo ab;; c) echo c;& *) echo d;;& esac",
    "case x in (x) echo;; esac",
    "case x in\n  x)\n    echo\n    ;;\nesac",
    "case x in x) ;; esac",
    "case x in esac",
    "f() { echo hi; }",
    "function g { echo hi; }",
    "function h() ( echo sub )",
    "{ echo a; echo b; } > out",
    "( cd /tmp && ls ) | wc -l",
    "(( x = 1 + 2 ))",
    "[[ -f x && $y == *.rs ]]",
    "[[ $x =~ ^a(b|c)$ ]]",
    "echo $(ls | head -1)",
    "echo $(case x in x) echo y;; esac)",
    "echo $( (echo sub) )",
    "echo $((1 + (2 * 3)))",
    "echo `ls`",
    "echo `echo \\`x\\``",
    "diff <(ls a) >(cat)",
    "x=1 y=2 env",
    "a=(1 2 3)",
    "declare -a arr=(x y)",
    "a+=x b[1]=y",
    "! true",
    "!",
    "time -p sleep 0",
    "true && false || echo x",
    "a &\nb",
    "a & b & wait",
    "echo a |& cat",
    "a |\n b",
    "a &&\n\n b",
    "echo ${x:-default} ${#x} ${x//a/b} \"${x}\"",
    "echo ${x:-$(echo \"}\")}",
    "echo ~ ~/x ~root",
    "echo *.rs ?x [ab]",
    "echo {a,b}c {1..3}",
    "echo \"unterminated",
    "echo 'unterminated",
    "echo $(",
    "echo ${x",
    "echo `x",
    "if true; then",
    "fi",
    "done",
    "then echo",
    ";",
    "; echo",
    "echo a;;",
    "echo )",
    "echo (",
    "( )",
    "{ }",
    "{ echo }",
    "echo |",
    "| echo",
    "echo &&",
    "&& echo",
    "echo >",
    "echo 2>",
    "cat <<",
    "echo @(a)",
    "]]",
    "case x in",
    "for x in a b",
    "while true",
    "f() echo",
    "echo a\"b\"'c'$'d'e",
    "echo \"$(echo \"nested \\\"q\\\"\")\"",
    "echo $((",
    "a=b",
    "a= b",
    "=a",
    "echo x > /dev/null; echo y",
    "echo \"multi\nline\"",
    "echo 'multi\nline'",
    "echo a\tb\t\tc",
    "echo \"tab\there\"",
    "echo -- -n",
    "echo \"\\\\\"",
    "echo '\\'",
    "echo \"a\\\"",
    "echo $'\\u263a' $'\\U0001F600'",
    "echo $'\\xff'",
    "echo 2>&1",
    "echo 10>x",
    "echo a2>x",
    "echo {fd}>x",
    "echo a>b<c",
    "echo 'a'\\''b'",
    "<x { y",
    "<x if",
    ">/dev/null echo fi",
    "x=1 if",
    "x=1 { y; }",
    "echo ${x:-{a}b} ${a {x} b; }",
    "echo $((echo a) ; echo b )",
    "echo $((echo a) ; fi )",
    "echo $((( 1 )) && echo `ls` # c; ls )",
    "echo $( echo x #c )",
    "for v{ in a; do :; done",
    "echo $(cat <<EOF)",
    "f() ( :; ) > /dev/null",
    "coproc cat",
    "echo x; }",
    "case x in a) echo;; b) echo;; esac; echo ${#}",
    "echo $(( 1 + $(echo 2) ))",
    "cat <<EOF\n$(echo hi)\nEOF",
    "a=$(cat <<'X'\nbody )\nX\n)",
    "echo \"$(echo \")\")\"",
    "echo ${x#*\\}}",
    "{ echo; } 2>&1 | head",
    "if [ -f x ]; then :; fi",
    "echo a\\|b \\$(ls) x=a\\ b",
    "echo $((x[1]+1)) ${arr[@]:1:2}",
    "trap 'echo hi' EXIT",
    "echo 'it'\"'\"'s'",
    "while IFS= read -r line; do :; done < <(ls)",
    "echo {a..z} {a..c..2} {1..}",
    "[ \"$a\" \\< \"$b\" ]",
    "echo ;;",
    "case a in a) echo ;; esac)",
    "echo $(echo ')')",
    "echo \"$(case a in a) echo;; esac)\"",
    "echo <(",
    "echo $(echo \\))",
    "function f() { :; }",
    "f() if true; then :; fi",
    "echo ~+ ~- ~+/x",
    "a[0]=1 a[1]=2 cmd",
    "declare -A m=([k]=v [j]=w)",
    "(( ))",
    "for ((;;)) { :; }",
    "echo $ { }",
    "{ :;}",
    "{:;}",
    "time ! true",
    "echo 1>&2 2>&-",
    "exec {fd}<>file",
    "cat <<<$'a\\nb'",
    "echo x\\\n",
    "echo a\\\n\\\nb",
    "echo \"a\\\n b\"",
    "echo $'\\c?' $'\\cz' $'\\101\\1011'",
    "echo \"\\a\\b\\$\\`\\\"\\\\\"",
    "echo 'a' b'c'd \"e\"f'g'",
    "echo a=b=c x==",
    "echo =~ '=~'",
    "echo @ '@' \\@ \"@\"",
    "echo -e '\\t'",
    "printf %s\\\\n x",
    "echo \"${x:-a b}\" \"${#}\" \"$#\"",
    "echo ${x:-'}'}",
    "echo \"${x:-\"}\"}\"",
    "echo $(echo $(echo $(echo deep)))",
    "echo `echo a` `echo b`c",
    "echo a`echo b`c",
    "if true; then :; fi; if",
    "while :; do :; done &",
    "until :; do :; done; done",
    "case x in *) ;; esac esac",
    "echo } ; echo {",
    "echo ( a )",
    "echo a(b)",
    "echo a)b",
    "echo a|b|c",
    "echo a&&b||c",
    "echo a;b;c",
    "echo 'a;b' \"c&d\" e\\|f",
];

fn corpus() -> Vec<String> {
    let mut out: Vec<String> = HARD.iter().map(|s| (*s).to_owned()).collect();
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    for i in 0..400 {
        let c = if i % 3 == 0 { g.simple() } else { g.list(0) };
        out.push(g.maybe_break(c));
    }
    // Word-heavy commands without redirects, so most are compared word for word.
    for _ in 0..200 {
        let mut c = "echo".to_owned();
        for _ in 0..=g.below(6) {
            c.push(' ');
            c.push_str(&g.word());
        }
        out.push(c);
    }
    out
}

/// For a script that is one static simple command without assignments or redirects: the raw text
/// of its words and their static values.
fn static_simple(cmd: &str) -> Option<(String, Vec<String>)> {
    let script = parse(cmd).ok()?;
    let [item] = script.list.items.as_slice() else {
        return None;
    };
    if !item.and_or.rest.is_empty() || item.terminator.is_some() {
        return None;
    }
    let p = &item.and_or.first;
    if p.negated || p.timed {
        return None;
    }
    let [Command::Simple(s)] = p.commands.as_slice() else {
        return None;
    };
    if !s.assignments.is_empty() || !s.redirects.is_empty() || s.words.is_empty() {
        return None;
    }
    let values = s.static_argv()?;
    let raw = cmd[s.words[0].span.start..s.words.last()?.span.end].to_owned();
    Some((raw, values))
}

#[test]
fn parser_agrees_with_bash() {
    if !bash_available() {
        return;
    }
    let corpus = corpus();
    assert!(corpus.len() >= 300);
    let mut syntax_mismatch = Vec::new();
    let mut word_mismatch = Vec::new();
    let mut compared_words = 0;
    for cmd in &corpus {
        let ours = parse(cmd);
        let theirs = bash_syntax_ok(cmd);
        if ours.is_ok() != theirs {
            syntax_mismatch.push(format!("{cmd:?}: ours={:?} bash_ok={theirs}", ours.err()));
            continue;
        }
        if let Some((raw, values)) = static_simple(cmd) {
            compared_words += 1;
            let bash = bash_words(&raw);
            let ours: Vec<Vec<u8>> = values.into_iter().map(String::into_bytes).collect();
            if ours != bash {
                let show = |v: &[Vec<u8>]| {
                    v.iter()
                        .map(|w| String::from_utf8_lossy(w).into_owned())
                        .collect::<Vec<_>>()
                };
                word_mismatch.push(format!("{cmd:?}: ours={:?} bash={:?}", show(&ours), show(&bash)));
            }
        }
    }
    eprintln!(
        "{} commands, {compared_words} static word lists compared",
        corpus.len()
    );
    assert!(
        compared_words >= 100,
        "only {compared_words} static commands compared"
    );
    assert!(
        syntax_mismatch.is_empty() && word_mismatch.is_empty(),
        "syntax mismatches ({}):\n{}\nword mismatches ({}):\n{}",
        syntax_mismatch.len(),
        syntax_mismatch.join("\n"),
        word_mismatch.len(),
        word_mismatch.join("\n")
    );
}

/// The builtin and reserved-word tables are exactly what bash itself lists.
#[test]
fn shell_words_are_exactly_bashs_builtins_and_keywords() {
    use shellgate_normalize::shell_words::{BASH_BUILTINS, BASH_RESERVED_WORDS};
    use std::collections::BTreeSet;
    if !bash_available() {
        return;
    }
    let listed = |flag: &str| -> BTreeSet<String> {
        let out = Process::new("bash")
            .args(["--norc", "--noprofile", "-c", &format!("compgen {flag}")])
            .output()
            .expect("run bash");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    let ours = |words: &[&str]| -> BTreeSet<String> { words.iter().map(|w| (*w).to_owned()).collect() };
    assert_eq!(listed("-b"), ours(BASH_BUILTINS), "builtins");
    assert_eq!(listed("-k"), ours(BASH_RESERVED_WORDS), "reserved words");
}
