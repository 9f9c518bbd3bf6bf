//! Commands that would wait for a person return at once: stdin is /dev/null and there is no terminal.

mod common;

use common::{require, run};
use shellgate_executor::RunStatus;

#[tokio::test]
async fn cat_sees_eof_at_once() {
    let (outcome, out) = run("cat; echo rc=$?").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out, "rc=0\n");
}

#[tokio::test]
async fn read_sees_eof_at_once() {
    let (outcome, out) = run("read x; echo rc=$? x=[$x]").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out, "rc=1 x=[]\n");
}

#[tokio::test]
async fn python_input_raises_eof_error() {
    if !require("python3") {
        return;
    }
    let (outcome, out) = run("python3 -c 'input()'").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(1));
    assert!(out.contains("EOFError"), "{out}");
}

#[tokio::test]
async fn dev_tty_cannot_be_opened() {
    let (outcome, out) = run("exec 3</dev/tty; echo rc=$?").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(out.contains("/dev/tty"), "{out}");
    assert!(!out.contains("rc=0"), "{out}");
}

#[tokio::test]
async fn the_command_has_its_own_group_and_no_terminal() {
    // Fields after `(comm)`: state ppid pgrp session tty_nr.
    let (outcome, out) =
        run("read -r stat < /proc/$$/stat; set -- ${stat##*) }; echo ppid=$2 pgid=$3 tty=$5").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let leader = outcome.pid.unwrap();
    // The shell's parent is the guard (the leader), not the engine.
    assert_eq!(out, format!("ppid={leader} pgid={leader} tty=0\n"));
}
