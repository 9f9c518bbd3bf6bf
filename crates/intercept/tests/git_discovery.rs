//! A `git` read is only `@safe` when no configuration git reads for it sets a key that runs a
//! program — wherever git finds that configuration: a bare repository, a `.git` file pointing
//! elsewhere, a linked worktree's common directory, a submodule's directory under
//! `.git/modules`. Each layout below made a plain `git` read run `touch` when judged by path
//! `.git` alone.

mod common;

use std::path::Path;

use common::safe_policy;
use shellgate_intercept::{Context, Decision};
use shellgate_normalize::{Normalizer, StandardNormalizer};

const RUNS: &str = "[core]\n\tfsmonitor = touch /tmp/p\n[diff \"x\"]\n\ttextconv = touch /tmp/p\n";

fn judge_in(dir: &Path, command: &str) -> Decision {
    let ctx = Context {
        cwd: Some(dir.to_path_buf()),
        ..Default::default()
    };
    safe_policy(&[])
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

/// A repository directory as git lays it out (`HEAD`, `objects/`, `refs/`, `config`).
fn git_dir(path: &Path, config: &str) {
    std::fs::create_dir_all(path.join("objects")).unwrap();
    std::fs::create_dir_all(path.join("refs/heads")).unwrap();
    std::fs::write(path.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(path.join("config"), config).unwrap();
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    git_dir(&ws.path().join(".git"), "[core]\n\tbare = false\n");
    ws
}

#[test]
fn a_bare_repository_is_found_where_git_finds_it() {
    let ws = workspace();
    git_dir(&ws.path().join("evil"), &format!("[core]\n\tbare = true\n{RUNS}"));
    assert_eq!(judge_in(ws.path(), "git log -p"), Decision::Allow);
    assert_ne!(judge_in(ws.path(), "git -C evil log -p"), Decision::Allow);
    assert_ne!(judge_in(ws.path(), "cd evil && git log -p"), Decision::Allow);
    assert_ne!(judge_in(&ws.path().join("evil"), "git status"), Decision::Allow);
    std::fs::create_dir_all(ws.path().join("evil/refs/x")).unwrap();
    assert_ne!(
        judge_in(&ws.path().join("evil/refs/x"), "git status"),
        Decision::Allow
    );
}

#[test]
fn a_git_file_and_a_linked_worktree_lead_to_their_configuration() {
    let ws = workspace();
    // `gitdir:` relative to the directory holding the `.git` file.
    git_dir(&ws.path().join("store/repo"), RUNS);
    std::fs::create_dir_all(ws.path().join("a")).unwrap();
    std::fs::write(ws.path().join("a/.git"), "gitdir: ../store/repo\n").unwrap();
    assert_ne!(judge_in(&ws.path().join("a"), "git status"), Decision::Allow);
    // A linked worktree: its own directory has no configuration, its common directory does.
    let common = ws.path().join("main.git");
    git_dir(&common, RUNS);
    let own = common.join("worktrees/w");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join("HEAD"), "ref: refs/heads/w\n").unwrap();
    std::fs::write(own.join("commondir"), "../..\n").unwrap();
    std::fs::create_dir_all(ws.path().join("w")).unwrap();
    std::fs::write(ws.path().join("w/.git"), format!("gitdir: {}\n", own.display())).unwrap();
    assert_ne!(judge_in(&ws.path().join("w"), "git status"), Decision::Allow);
}

#[test]
fn a_submodule_configuration_counts_for_the_top_level_read() {
    let ws = workspace();
    git_dir(&ws.path().join(".git/modules/sub"), RUNS);
    assert_ne!(judge_in(ws.path(), "git status"), Decision::Allow);
    std::fs::remove_dir_all(ws.path().join(".git/modules")).unwrap();
    git_dir(&ws.path().join(".git/modules/a/modules/b"), RUNS);
    assert_ne!(judge_in(ws.path(), "git status"), Decision::Allow);
    std::fs::remove_dir_all(ws.path().join(".git/modules")).unwrap();
    git_dir(&ws.path().join(".git/modules/sub"), "[core]\n\tbare = false\n");
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
}

#[test]
fn aliases_includes_and_unreadable_text_in_a_repository_configuration() {
    let ws = workspace();
    let config = ws.path().join(".git/config");
    for text in [
        "[alias]\n\tst = !touch /tmp/p\n".as_bytes(),
        b"[includeIf \"gitdir:/\"]\n\tpath = /tmp/x\n",
        b"[include]\n\tpath = x\n",
        b"# \xff\xfe\n[core]\n\tfsmonitor = touch /tmp/p\n",
        b"[core]\n\tFsMonitor = \"touch /tmp/p\"\n",
        b"[core] fsmonitor = touch /tmp/p\n",
        b"[gpg \"ssh\"]\n\tprogram = /tmp/x\n",
    ] {
        std::fs::write(&config, text).unwrap();
        assert_ne!(
            judge_in(ws.path(), "git status"),
            Decision::Allow,
            "{}",
            String::from_utf8_lossy(text)
        );
    }
    std::fs::write(&config, "[alias]\n\tst = status\n").unwrap();
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
}
