//! The non-interactive environment overrides what the engine inherited: git opens no editor and no
//! pager even when `EDITOR=vim`, `GIT_PAGER=less` and `core.pager=less` are inherited.
//!
//! One test in this binary, because it changes the process environment before any thread starts.

mod common;

use common::{require, run};
use shellgate_executor::RunStatus;

#[tokio::test]
async fn git_opens_no_editor_or_pager_despite_inherited_settings() {
    if !require("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake-tool");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho ran >> {}/fake-ran\nsleep 987.501\n",
            dir.path().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // SAFETY: set before the runtime or any other thread of this test binary touches the environment.
    unsafe {
        std::env::set_var("EDITOR", &fake);
        std::env::set_var("VISUAL", &fake);
        std::env::set_var("GIT_EDITOR", &fake);
        std::env::set_var("GIT_PAGER", &fake);
        std::env::set_var("PAGER", &fake);
    }
    let repo = dir.path().join("repo");
    let d = repo.display();
    let f = fake.display();
    let setup = format!(
        "git init -q {d} && cd {d} && git config user.name t && git config user.email t@example.invalid \
         && git config core.pager {f} && git config core.editor {f} \
         && for i in $(seq 60); do git commit -q --allow-empty -m c$i; done && echo file > f && git add f \
         && echo ready"
    );
    let (outcome, out) = run(&setup).await;
    assert_eq!(out, "ready\n", "{outcome:?}");

    let (outcome, out) = run(&format!("cd {d} && git var GIT_EDITOR && git var GIT_PAGER")).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(out, "true\ncat\n");

    let (outcome, out) = run(&format!("cd {d} && git commit; echo rc=$?")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(
        out.contains("Aborting commit due to empty commit message"),
        "{out}"
    );
    assert!(out.ends_with("rc=1\n"), "{out}");

    let (outcome, out) = run(&format!(
        "cd {d} && git log --oneline && git -p log -1 --format=%s"
    ))
    .await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(out.lines().count(), 61, "{out}");
    assert!(out.ends_with("c60\n"), "{out}");

    // An inline assignment in the command still wins.
    let (_, out) =
        run("EDITOR=nano sh -c 'echo $EDITOR'; echo $PAGER $TERM $NO_COLOR $GIT_TERMINAL_PROMPT").await;
    assert_eq!(out, "nano\ncat dumb 1 0\n");

    assert!(
        !dir.path().join("fake-ran").exists(),
        "an inherited editor or pager ran"
    );
    common::assert_no_survivors("987.501");
}
