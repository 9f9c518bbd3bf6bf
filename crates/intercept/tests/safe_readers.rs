//! `@safe`'s readers of other programs' languages and options (awk programs, sed scripts, git's
//! option tables) agree with the programs: each case below was allowed by an earlier version,
//! and the program ran a command, wrote a file or opened a connection. Each stands for a class.

mod common;

use common::{judge, safe_policy};
use shellgate_intercept::Decision;

fn refused(command: &str) {
    let j = judge(&safe_policy(&[]), command);
    assert_ne!(
        j.decision(),
        Decision::Allow,
        "{command:?} was allowed: {:?}",
        j.segments
    );
}

fn allowed(command: &str) {
    let j = judge(&safe_policy(&[]), command);
    assert_eq!(
        j.decision(),
        Decision::Allow,
        "{command:?} was refused: {:?}",
        j.reason
    );
}

#[test]
fn every_awk_program_source_is_judged_as_gawk_joins_them() {
    refused(r#"awk -e 'BEGIN{system("touch /tmp/x")}' -e '{print}' f"#);
    refused(r#"gawk --source='BEGIN{system("touch /tmp/x")}' --source='{print}' f"#);
    refused(r#"gawk --source 'BEGIN{system("touch /tmp/x")}' -e '{print}' f"#);
    refused("gawk -e '{print}' -f prog.awk f");
    refused("gawk -f prog.awk -e '{print}' f");
    // A source split across arguments is one program: the pipe is in the second.
    refused(r#"gawk -e 'BEGIN { print "x"' -e '| "sh" }'"#);
    // A source only known when the command runs.
    refused(r#"awk -e "$p" f"#);
    refused(r#"gawk --source "$p" f"#);
    refused(r#"sed -e "$p" f"#);
    refused(r#"sed --expression "$p" f"#);
    allowed("gawk -e '{print $1}' -e 'END { print NR }' f");
    allowed("sed -e 's/a/b/' -e 'p' f");
}

#[test]
fn a_backslash_newline_in_awk_continues_the_line() {
    refused("mawk 'BEGIN { x = 1 \\\n/ 2; print \"touch /tmp/x\" | \"sh\"; y = 1 / 1 }'");
    refused("awk 'BEGIN { print 1 \\\n> \"out\" }'");
    refused("awk 'BEGIN { print 1 \\\r\n> \"out\" }'");
    refused("awk 'BEGIN { printf \"%s\", 1 \\\n \\\n >> \"out\" }'");
    allowed("awk 'BEGIN { x = 1 \\\n+ 2; print x }'");
    allowed("awk '{ print $1, \\\n$2 }' f");
}

#[test]
fn a_newline_after_a_comma_or_a_logical_operator_continues_the_statement() {
    refused("awk 'BEGIN { print 1,\n2 > \"out\" }'");
    refused("awk 'BEGIN { print 1 &&\n2 > \"out\" }'");
    refused("awk 'BEGIN { print 1 ||\n2 > \"out\" }'");
    refused("awk 'BEGIN { print 1 ?\n2 :\n3 > \"out\" }'");
    refused("awk 'BEGIN { printf \"%s %s\",\n  1,\n  2 | \"sh\" }'");
    allowed("awk '{ print $1,\n$2 }\nEND { x = (NR > 1) }' f");
    allowed("awk 'NR > 1 &&\nNR < 5' f");
}

#[test]
fn a_slash_after_a_condition_may_start_a_regular_expression() {
    refused(r#"awk 'BEGIN { if (1) /"/; print "touch /tmp/x" | "sh" }'"#);
    refused(r#"awk 'BEGIN { while (0) /"/; print "touch /tmp/x" | "sh" }'"#);
    refused(r#"awk 'BEGIN { for (;0;) /"/; print "touch /tmp/x" | "sh" }'"#);
    refused("awk 'BEGIN { if (1)\n/\"/; print \"touch /tmp/x\" | \"sh\" }'");
    refused(r#"awk 'BEGIN { if ((1)) /"/; print "touch /tmp/x" | "sh" }'"#);
    refused(r#"awk 'BEGIN { if (1) x = 1; else /"/; print "touch /tmp/x" | "sh" }'"#);
    // The bracket expressions of a regular expression hold `/` and `"`, as both awks read them.
    refused(r#"awk 'BEGIN { x = /[]/"]/; print "x" | "sh" }'"#);
    refused(r#"awk 'BEGIN { x = /[[:alpha:]/"]/; print "x" | "sh" }'"#);
    refused(r#"awk 'BEGIN { x = /[^]/"]/; print "x" | "sh" }'"#);
    allowed("awk '{ if ($1 > 2) print ($1 + $2) / 2 }' f");
    allowed("awk '{ x = ($1) / 2; print x }' f");
    allowed("awk '{ if (/a\\/b/) print }' f");
    allowed(r#"awk '/[]/"]/ { print "q" }' f"#);
}

#[test]
fn gawk_network_files_are_never_read() {
    refused("awk '{print}' /inet/tcp/0/127.0.0.1/18081");
    refused("gawk '{print}' /inet4/tcp/0/127.0.0.1/18081");
    refused("awk '{print}' f /inet6/udp/0/::1/53");
    refused("awk -- '{print}' /inet/tcp/0/127.0.0.1/18081");
    refused("awk '{print}' \"$f\"");
    refused("awk '{print}' $dir/f");
    refused("awk 'BEGIN { ARGV[1] = \"/inet/tcp/0/127.0.0.1/18081\"; ARGC = 2 } { print }'");
    refused("awk 'BEGIN { split(\"/inet/tcp/0/127.0.0.1/18081\", ARGV, \" \") } { print }' x");
    refused("gawk 'BEGIN { SYMTAB[\"ARGV\"][1] = \"/inet/tcp/0/h/1\" } { print }' x");
    allowed("awk '{print}' f ./inet/tcp/x");
    allowed("awk '{print}' src/*.txt");
    allowed("awk -F: '{print $1}' /etc/passwd");
}

#[test]
fn git_long_options_are_read_with_gits_abbreviations() {
    // git's option parser takes any unique prefix of a long option.
    for command in [
        "git branch --set-upstream-t=other",
        "git branch --set-u other",
        "git branch --unset-u",
        "git branch --edit-d",
        "git branch --del x",
        "git branch --mov x y",
        "git branch --cop x y",
        "git branch --tr x",
        "git branch --no-t x",
        "git branch --create-r x",
        "git branch --forc x",
        "git grep --op y",
        "git grep --open-files y",
        "git cat-file --fi HEAD:f",
        "git cat-file --te HEAD:f",
        "git cat-file --text HEAD:f",
        "git grep --textc y",
        "git diff --ou=f",
        "git diff --ext",
        "git log --pagin",
    ] {
        refused(command);
    }
    for command in [
        "git branch --contains HEAD",
        "git branch --cont HEAD",
        "git branch --col",
        "git branch --no-col",
        "git branch --sort=-committerdate",
        "git diff --text",
        "git log --no-ext-diff -p",
        "git grep --exclude-standard x",
        "git log --output-indicator-new=+ -p",
    ] {
        allowed(command);
    }
}

#[test]
fn diff_listing_through_pr_and_nohup_writing_its_log_are_not_read_only() {
    refused("diff -l a b");
    refused("diff --paginate a b");
    refused("diff --pag a b");
    refused("diff -ql a b");
    refused("nohup ls");
    refused("nohup git status");
    allowed("diff -u a b");
    allowed("diff -q a b");
}
