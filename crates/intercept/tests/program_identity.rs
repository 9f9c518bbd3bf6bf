//! A program is what it runs, not what it is called: a link under another name to `rm` is `rm`
//! (through a path or through PATH), a link to a shell is a shell, and a multi-call binary runs
//! the program it is asked for (`busybox rm`), or the one it is invoked as.

mod common;

use std::path::Path;

use shellgate_intercept::{AskMode, Context, Decision, Policy, Security};
use shellgate_normalize::{Normalizer, StandardNormalizer};

fn decide(deny: &[&str], path: &str, cwd: &Path, command: &str) -> Decision {
    let mut b = Policy::builder()
        .security(Security::Full)
        .ask(AskMode::OnMiss)
        .search_path(path);
    for d in deny {
        b = b.deny(*d);
    }
    let ctx = Context {
        cwd: Some(cwd.to_path_buf()),
        ..Context::default()
    };
    b.build()
        .unwrap()
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

const RULES: &[&str] = &["rm -rf *", "git push *"];

#[test]
fn multi_call_binaries_run_the_program_named() {
    let here = Path::new(common::WORKSPACE);
    let path = "/usr/local/bin:/usr/bin:/bin";
    for c in [
        "busybox rm -rf d",
        "toybox rm -rf d",
        "busybox sh -c 'git push'",
        "/bin/busybox rm -fr d",
    ] {
        assert_eq!(decide(RULES, path, here, c), Decision::Deny, "{c}");
    }
    assert_eq!(decide(&[], path, here, "busybox rm -rf /"), Decision::Ask);
    assert_eq!(decide(RULES, path, here, "busybox ls -la"), Decision::Allow);
}

#[test]
fn links_are_followed_to_the_program_they_run() {
    let Some(rm) = ["/usr/bin/rm", "/bin/rm"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
    else {
        return common::skip("no rm at /usr/bin/rm or /bin/rm");
    };
    let Some(bash) = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
    else {
        return common::skip("no bash at /usr/bin/bash or /bin/bash");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("bin")).unwrap();
    std::os::unix::fs::symlink(rm, d.join("del")).unwrap();
    std::os::unix::fs::symlink("zap", d.join("bin/erase")).unwrap();
    std::os::unix::fs::symlink("../del", d.join("bin/zap")).unwrap();
    std::os::unix::fs::symlink(bash, d.join("sh2")).unwrap();
    std::fs::write(d.join("busybox"), "").unwrap();
    std::os::unix::fs::symlink(d.join("busybox"), d.join("bb")).unwrap();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", d.join("bin").display());
    for c in [
        "./del -rf x",
        "./del --recursive --force x",
        "zap -rf x",
        "erase -fr x",
        "./sh2 -c 'git push'",
        "command ./del -rf x",
    ] {
        assert_eq!(decide(RULES, &path, d, c), Decision::Deny, "{c}");
    }
    assert_eq!(decide(&[], &path, d, "./del -rf /"), Decision::Ask);
    assert_eq!(decide(&[], &path, d, "zap -rf ~"), Decision::Ask);
    // A link to a multi-call binary is the name it is invoked by.
    assert_eq!(decide(RULES, &path, d, "./bb -rf x"), Decision::Allow);
    assert_eq!(decide(RULES, &path, d, "./del x"), Decision::Allow);
    // A replaced link is followed again.
    std::fs::remove_file(d.join("del")).unwrap();
    std::os::unix::fs::symlink(d.join("busybox"), d.join("del")).unwrap();
    assert_eq!(decide(RULES, &path, d, "./del -rf x"), Decision::Allow);
}

#[test]
fn git_invoked_as_git_dash_subcommand_runs_that_subcommand() {
    let here = Path::new(common::WORKSPACE);
    let path = "/usr/local/bin:/usr/bin:/bin";
    for c in [
        "/usr/lib/git-core/git-push origin x",
        "/usr/libexec/git-core/git-push --force origin x",
        "git-push origin x",
        "env git-send-pack origin x",
    ] {
        assert_eq!(decide(RULES, path, here, c), Decision::Deny, "{c}");
    }
    // A link under a `git-…` name runs that subcommand too.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("git"), "").unwrap();
    std::os::unix::fs::symlink(d.join("git"), d.join("git-push")).unwrap();
    std::os::unix::fs::symlink(d.join("git-push"), d.join("p")).unwrap();
    assert_eq!(decide(RULES, path, d, "./git-push origin x"), Decision::Deny);
    for c in [
        "/usr/lib/git-core/git-status",
        "git-log -1",
        "/usr/lib/git-core/git-push",
    ] {
        let expected = if c.ends_with("git-push") {
            Decision::Deny
        } else {
            Decision::Allow
        };
        assert_eq!(decide(RULES, path, here, c), expected, "{c}");
    }
}
