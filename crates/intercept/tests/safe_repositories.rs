//! A git read under `@safe` runs nothing the repository it reads can set up: its configuration is
//! read as git reads it, the hooks git runs for reads count, and the repository is the one the
//! command really runs in. Each case was allowed by an earlier version and ran a program.

mod common;

use std::path::Path;

use common::safe_policy;
use shellgate_intercept::{Context, Decision};
use shellgate_normalize::{Normalizer, StandardNormalizer};

/// Judge `command` as run in `dir`.
fn judge_in(dir: &Path, command: &str) -> Decision {
    let ctx = Context {
        cwd: Some(dir.to_path_buf()),
        ..Default::default()
    };
    safe_policy(&[])
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

/// A workspace holding a repository (`.git` with `config`).
fn repository(config: &[u8]) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let git = ws.path().join(".git");
    std::fs::create_dir_all(git.join("hooks")).unwrap();
    std::fs::write(git.join("config"), config).unwrap();
    ws
}

#[test]
fn repository_configuration_is_read_as_git_reads_it() {
    for config in [
        &b"\xef\xbb\xbf[core]\n\tfsmonitor = touch /tmp/p\n"[..],
        b"[diff \"a]b\"] command = touch /tmp/p\n",
        b"[diff \"a\\\"b\"]\n\tcommand = touch /tmp/p\n",
        b"[core]\r\n\tfsmonitor = touch /tmp/p\r\n",
        b"[core]\n\tbare = false ; \\\n\tfsmonitor = x\n[core]fsmonitor=\"touch \\\n/tmp/p\"\n",
        b"[core] bare = false\n[CORE]\n\tFSMonitor = touch /tmp/p\n",
        b"[core.x]\n[core]\n\tfsmonitor = \"touch /tmp/p\" # c\n",
        // Text git stops at is not known to set nothing.
        b"[core\n\tfsmonitor = touch /tmp/p\n",
        b"[core]\n\tfsmonitor = \"touch /tmp/p\n",
        b"\xef\xbb[core]\n",
    ] {
        let ws = repository(config);
        for command in ["git status", "git diff", "git log -p"] {
            assert_ne!(
                judge_in(ws.path(), command),
                Decision::Allow,
                "{command} with {:?}",
                String::from_utf8_lossy(config)
            );
        }
    }
    let ws = repository(b"\xef\xbb\xbf[core]\n\tbare = false\n[remote \"o\"]\n\turl = x\n");
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
}

#[test]
fn hooks_git_runs_for_reads_make_them_unsafe() {
    let ws = repository(b"[core]\n\tbare = false\n");
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
    for hook in ["post-index-change", "reference-transaction"] {
        let path = ws.path().join(".git/hooks").join(hook);
        std::fs::write(&path, "#!/bin/sh\ntouch /tmp/p\n").unwrap();
        for command in ["git status", "git diff", "git describe --dirty", "git log"] {
            assert_ne!(judge_in(ws.path(), command), Decision::Allow, "{hook}: {command}");
        }
        std::fs::remove_file(&path).unwrap();
    }
    // Hooks git does not run for reads are no concern (husky's, say).
    std::fs::write(ws.path().join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    std::fs::write(ws.path().join(".git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
    // `core.hooksPath` elsewhere: relative to the working tree, absolute, in a submodule.
    std::fs::create_dir_all(ws.path().join("tools/hooks")).unwrap();
    std::fs::write(
        ws.path().join(".git/config"),
        "[core]\n\thooksPath = tools/hooks\n",
    )
    .unwrap();
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
    std::fs::write(ws.path().join("tools/hooks/post-index-change"), "#!/bin/sh\n").unwrap();
    assert_ne!(judge_in(ws.path(), "git status"), Decision::Allow);
    assert_ne!(judge_in(&ws.path().join("tools"), "git diff"), Decision::Allow);
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("post-index-change"), "#!/bin/sh\n").unwrap();
    std::fs::write(
        ws.path().join(".git/config"),
        format!("[core]\n\thooksPath = {}\n", elsewhere.path().display()),
    )
    .unwrap();
    assert_ne!(judge_in(ws.path(), "git status"), Decision::Allow);
    std::fs::write(ws.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    let sub = ws.path().join(".git/modules/s");
    std::fs::create_dir_all(sub.join("objects")).unwrap();
    std::fs::create_dir_all(sub.join("hooks")).unwrap();
    std::fs::write(sub.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(sub.join("config"), "[core]\n\tbare = false\n").unwrap();
    assert_eq!(judge_in(ws.path(), "git status"), Decision::Allow);
    std::fs::write(sub.join("hooks/post-index-change"), "#!/bin/sh\n").unwrap();
    assert_ne!(judge_in(ws.path(), "git status"), Decision::Allow);
}

#[test]
fn a_partial_clone_fetching_for_a_read_is_not_safe() {
    let ws = repository(b"[remote \"origin\"]\n\turl = ext::sh -c touch% /tmp/p\n\tpromisor = true\n[extensions]\n\tpartialClone = origin\n");
    assert_ne!(judge_in(ws.path(), "git show HEAD"), Decision::Allow);
}

/// A workspace that is a repository whose configuration runs a program, a directory that is no
/// repository, and a nested repository like the first under the second.
struct Places {
    evil: tempfile::TempDir,
    clean: tempfile::TempDir,
}

fn places() -> Places {
    let evil = repository(b"[core]\n\tfsmonitor = touch /tmp/p\n");
    let clean = tempfile::tempdir().unwrap();
    let nested = clean.path().join("vendor/.git");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("config"), "[core]\n\tfsmonitor = touch /tmp/p\n").unwrap();
    std::fs::create_dir_all(clean.path().join("src")).unwrap();
    Places { evil, clean }
}

#[test]
fn git_reads_are_judged_in_the_directory_they_really_run_in() {
    let p = places();
    let (evil, clean) = (p.evil.path().display(), p.clean.path().display());
    assert_ne!(judge_in(p.evil.path(), "git status"), Decision::Allow);
    assert_eq!(judge_in(p.clean.path(), "git status"), Decision::Allow);
    let mut wrong = Vec::new();
    // Run from the clean directory, each reaches the repository that runs a program.
    for command in [
        format!("cd {evil}; pushd /tmp; popd; git status"),
        format!("pushd {evil}; pushd /tmp; popd; git status"),
        format!("cd {evil}; cd /tmp; cd -; git status"),
        format!("HOME={evil}; cd; git status"),
        format!("HOME={evil}; cd ~; git status"),
        format!("env -C {evil} git status"),
        format!("env --chdir={evil} git status"),
        format!("env --chdir {evil} git log"),
        format!("env -C{evil} git status"),
        format!("env -iC {evil} git status"),
        format!(
            "CDPATH={}; cd {}; git status",
            p.evil.path().parent().unwrap().display(),
            p.evil.path().file_name().unwrap().to_string_lossy()
        ),
        format!(
            "CDPATH={} cd {} && git status",
            p.evil.path().parent().unwrap().display(),
            p.evil.path().file_name().unwrap().to_string_lossy()
        ),
        "for i in 1 2; do git status; cd vendor; done".to_owned(),
        "while true; do git status; cd vendor; done".to_owned(),
    ] {
        if judge_in(p.clean.path(), &command) == Decision::Allow {
            wrong.push(format!("allowed from the clean directory: {command}"));
        }
    }
    // Run from the repository, each stays there though a `cd` was seen.
    for command in [
        format!("(cd {clean}); git status"),
        format!("cd {clean} | cat; git status"),
        format!("cd {clean} & git status"),
        format!("echo $(cd {clean}); git status"),
        format!("cat <(cd {clean}); git status"),
        format!("f() {{ cd {clean}; }}; git status"),
        format!("if false; then cd {clean}; fi; git status"),
        format!("cd {clean} || git status"),
        format!("false && cd {clean}; git status"),
        format!("cd {clean}/missing; git status"),
        format!("env cd {clean}; git status"),
        format!("nice cd {clean}; git status"),
        format!("cd {clean} /x; git status"),
    ] {
        if judge_in(p.evil.path(), &command) == Decision::Allow {
            wrong.push(format!("allowed from the repository: {command}"));
        }
    }
    for command in [
        format!("cd {clean} && git status"),
        format!("cd {clean}; git status"),
        format!("cd {clean}/src && git log"),
        format!("env -C {clean} git status"),
        format!("{{ cd {clean}; }}; git status"),
        format!("f() {{ cd {clean}; }}; f; git status"),
        format!("builtin cd {clean}; git status"),
        format!("command cd {clean} && git status"),
        format!("pushd {clean} && git status"),
    ] {
        if judge_in(p.evil.path(), &command) != Decision::Allow {
            wrong.push(format!("refused: {command}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
