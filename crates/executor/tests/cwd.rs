//! Working directories: clear errors, and the deleted-directory fallback.

mod common;

use std::path::Path;

use common::{bash, run_spec};
use shellgate_executor::{RunStatus, fallback_cwd};

#[tokio::test]
async fn missing_and_non_directory_cwds_fail_to_start_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone");
    let mut spec = bash("echo hi");
    spec.cwd.clone_from(&missing);
    let (outcome, out) = run_spec(spec).await;
    assert_eq!(outcome.status, RunStatus::FailedToStart);
    assert_eq!(
        outcome.error.as_deref(),
        Some(format!("Working directory does not exist: {}", missing.display()).as_str())
    );
    assert_eq!(out, "");

    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let mut spec = bash("echo hi");
    spec.cwd.clone_from(&file);
    let (outcome, _) = run_spec(spec).await;
    assert_eq!(
        outcome.error.as_deref(),
        Some(format!("Working directory is not a directory: {}", file.display()).as_str())
    );
}

#[tokio::test]
async fn deleted_cwd_falls_back_to_nearest_existing_ancestor() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::remove_dir_all(dir.path().join("a/b")).unwrap();

    let (cwd, notice) = fallback_cwd(&deep);
    assert_eq!(cwd, dir.path().join("a"));
    let notice = notice.unwrap();
    assert!(notice.contains(&deep.display().to_string()), "{notice}");
    assert!(notice.contains(&cwd.display().to_string()), "{notice}");

    let mut spec = bash("pwd");
    spec.cwd.clone_from(&cwd);
    let (outcome, out) = run_spec(spec).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(Path::new(out.trim_end()), cwd.as_path());

    let (same, none) = fallback_cwd(dir.path());
    assert_eq!((same.as_path(), none), (dir.path(), None));
}

#[tokio::test]
async fn unknown_programs_fail_to_start() {
    let mut spec = bash("");
    spec.program = "no-such-program-4711".into();
    let (outcome, _) = run_spec(spec).await;
    assert_eq!(outcome.status, RunStatus::FailedToStart);
    assert!(outcome.error.unwrap().contains("no-such-program-4711"));

    let mut spec = bash("");
    spec.program = "/nonexistent/bin/x".into();
    let (outcome, _) = run_spec(spec).await;
    assert_eq!(outcome.status, RunStatus::FailedToStart);
    assert!(outcome.error.unwrap().contains("not an executable file"));
}

#[tokio::test]
async fn exec_failures_after_the_check_are_exit_126_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("bogus");
    std::fs::write(&bogus, [0x7f, b'E', b'L', b'F', 0, 0, 0, 0]).unwrap();
    std::fs::set_permissions(&bogus, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut spec = bash("");
    spec.program = bogus.display().to_string();
    spec.args.clear();
    let (outcome, out) = run_spec(spec).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(126));
    assert_eq!(
        out,
        format!("{}: cannot execute (errno {})\n", bogus.display(), libc_enoexec())
    );
}

/// ENOEXEC on Linux.
fn libc_enoexec() -> i32 {
    8
}
