//! git aliases meet deny rules as what they expand to: from `-c alias.NAME=…`, from the
//! repository's configuration, from the user's (and files it includes). An alias that runs a
//! shell command, or one that cannot be read, asks. `git send-pack` and `git http-push` push.
//! One test: it points `HOME` at a scratch directory for the whole binary.

use std::path::Path;

use shellgate_intercept::{AskMode, Context, Decision, Policy, Security};
use shellgate_normalize::{Normalizer, StandardNormalizer};

fn decide(rule: &str, cwd: &Path, command: &str) -> Decision {
    let policy = Policy::builder()
        .security(Security::Full)
        .ask(AskMode::OnMiss)
        .search_path("/usr/local/bin:/usr/bin:/bin")
        .deny(rule)
        .build()
        .unwrap();
    let ctx = Context {
        cwd: Some(cwd.to_path_buf()),
        ..Context::default()
    };
    policy
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

#[test]
fn aliases_in_reach_are_expanded() {
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("home");
    let repo = scratch.path().join("repo");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[alias]\n\tgp = push\n\tsh = !sh -c 'git push'\n[include]\n\tpath = more.gitconfig\n",
    )
    .unwrap();
    std::fs::write(home.join("more.gitconfig"), "[alias]\n\tinc = push\n").unwrap();
    std::fs::write(
        repo.join(".git/config"),
        "[core]\n\tbare = false\n[alias]\n\tp = push\n\tpf = push --force\n\tl = log --oneline\n",
    )
    .unwrap();
    // SAFETY: the only test of this binary; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("HOME", &home) };
    unsafe { std::env::remove_var("XDG_CONFIG_HOME") };

    let push = "git push *";
    for c in [
        "git -c alias.p=push p origin x",
        "git -c alias.x=p -c alias.p=push x origin",
        "git -c alias.P=push p",
        "git p origin x",
        "git -C sub p origin x",
        "cd sub && git p",
        "git gp",
        "git inc",
        "git send-pack origin x",
        "git http-push https://x.example/r.git main",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Deny, "{c}");
    }
    assert_eq!(decide(push, scratch.path(), "git -C repo p"), Decision::Deny);
    assert_eq!(
        decide("git push --force *", &repo, "git pf origin x"),
        Decision::Deny
    );
    for c in [
        "git sh",
        "git -c alias.q='!git push' q",
        "git --config-env=alias.p=VAR p",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Ask, "{c}");
    }
    for c in [
        "git status",
        "git l",
        "git st",
        "git -c alias.status=push status",
        "git -c alias.p=push log",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Allow, "{c}");
    }
    // Configuration from the environment may define any alias: a name that is not git's own asks.
    for c in [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git zz origin x",
        "GIT_CONFIG_PARAMETERS=\"'alias.zz=push'\" git zz",
        "env GIT_CONFIG_GLOBAL=/tmp/x git zz",
        "HOME=/tmp/elsewhere git zz",
        "export GIT_CONFIG_PARAMETERS=\"'alias.zz=push'\"; git zz origin x",
        "git --config-env=alias.zz=VAR zz",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Ask, "{c}");
    }
    for c in [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git status",
        "GIT_PAGER=cat git log",
        "git zz",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Allow, "{c}");
    }
    // `-c include.path=FILE` reads FILE's aliases.
    let included = scratch.path().join("inc.cfg");
    std::fs::write(&included, "[alias]\n\tzz = push\n\tst2 = status --short\n").unwrap();
    let inc = included.display();
    assert_eq!(
        decide(push, &repo, &format!("git -c include.path={inc} zz origin x")),
        Decision::Deny
    );
    assert_eq!(
        decide(push, &repo, &format!("git -c include.path={inc} st2")),
        Decision::Allow
    );
    for c in [
        "git -c include.path=relative.cfg zz",
        "git -c includeIf.onbranch:main.path=/tmp/x zz",
        "git -c include.path=$F zz",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Ask, "{c}");
    }
    // git's own command runners: what they run is judged.
    for c in [
        "git rebase -x 'git push origin HEAD:x' HEAD~1",
        "git rebase --exec='git push' main",
        "git rebase -ix 'git push' main",
        "git rebase --ex 'git push' main",
        "git submodule foreach 'git push'",
        "git submodule foreach --recursive git push",
        "git submodule --quiet foreach 'git push'",
        "git bisect run git push",
        "git -c core.pager='git push origin x' log",
        "git -c pager.log='git push' log",
        "git -c core.editor='git push' commit",
        "git -c core.sshCommand='git push' fetch",
        "git -c credential.helper='!git push' fetch",
        "git -c diff.external='git push' diff",
        "git difftool -x 'git push' HEAD",
        "git filter-branch --tree-filter 'git push' HEAD",
        "GIT_PAGER='git push' git log",
        "GIT_EDITOR='git push' git commit",
        "GIT_SSH_COMMAND='git push' git fetch",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Deny, "{c}");
    }
    for c in ["git rebase -x \"$CMD\" main", "git -c core.pager=\"$P\" log"] {
        assert_eq!(decide(push, &repo, c), Decision::Ask, "{c}");
    }
    for c in [
        "git rebase -x 'cargo test' main",
        "git submodule foreach 'git status'",
        "git -c core.pager=cat log",
        "git -c credential.helper=store fetch",
        "git -c color.ui=never log",
        "git -c \"user.name=$n\" commit -m x",
        "git -c user.email=\"$e\" commit -m x",
    ] {
        assert_eq!(decide(push, &repo, c), Decision::Allow, "{c}");
    }
    // A configuration too large to read asks for a name that is not git's own.
    let big = scratch.path().join("big");
    std::fs::create_dir_all(big.join(".git")).unwrap();
    std::fs::write(
        big.join(".git/config"),
        format!("[alias]\n\tzz = push\n#{}\n", "x".repeat(300_000)),
    )
    .unwrap();
    assert_eq!(decide(push, &big, "git zz"), Decision::Ask);
    assert_eq!(decide(push, &big, "git status"), Decision::Allow);
}
