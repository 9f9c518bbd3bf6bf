//! The command line through the real binary: unknown options are errors that run nothing, `--` ends
//! the options, every subcommand's help has examples, completion scripts generate.

use std::process::Command;

fn shellgate() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"));
    cmd.env(
        "SHELLGATE_ARTIFACT_DIR",
        std::env::temp_dir().join("shellgate-cli-test-artifacts"),
    );
    cmd
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("shellgate-parse-{name}-"))
        .tempdir()
        .unwrap()
}

#[test]
fn an_unknown_option_is_an_error_naming_it_and_nothing_runs() {
    let dir = scratch("unknown");
    let marker = dir.path().join("marker");
    let marker = marker.to_str().unwrap();
    for (flag, args) in [
        ("--no-such-flag", vec!["--no-such-flag", "--", "touch", marker]),
        (
            "--no-sandbox",
            vec!["--no-sandbox", "workspace-write", "--", "touch", marker],
        ),
    ] {
        let out = shellgate().arg("run").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("'{flag}'")),
            "must name {flag}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(!std::path::Path::new(marker).exists(), "{args:?} ran the command");
    }
}

#[test]
fn the_command_may_be_one_string_or_several_words() {
    for args in [&["echo hi"][..], &["echo", "hi"], &["--", "echo", "hi"]] {
        let out = shellgate().arg("run").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n", "{args:?}");
    }
    // After the first command word, options belong to the command.
    let out = shellgate()
        .args(["run", "echo", "--json", "-n"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "--json -n\n");
}

#[test]
fn a_dash_first_word_without_double_dash_is_refused() {
    let out = shellgate().args(["run", "-la"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'-l'"));
}

#[test]
fn every_subcommand_help_shows_examples() {
    for sub in [
        &["run"][..],
        &["rpc"],
        &["mcp"],
        &["artifact"],
        &["artifact", "read"],
        &["artifact", "list"],
        &["config"],
        &["completions"],
        &["jobs"],
        &["jobs", "list"],
        &["jobs", "log"],
        &["jobs", "poll"],
        &["jobs", "kill"],
        &["approve"],
        &["approvals"],
        &["approvals", "list"],
        &["approvals", "revoke"],
    ] {
        let out = shellgate().args(sub).arg("--help").output().unwrap();
        assert!(out.status.success(), "{sub:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        let examples = help.split_once("Examples:\n").map(|(_, e)| e);
        let invocation = format!("shellgate {}", sub.join(" "));
        assert!(
            examples.is_some_and(|e| e.contains(&invocation)),
            "{sub:?} has no examples of `{invocation}`: {help}"
        );
    }
}

#[test]
fn completion_scripts_generate_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let out = shellgate().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.len() > 200, "{shell}: {script}");
        assert!(script.contains("run"), "{shell} completes `run`: {script}");
        assert!(script.contains("timeout"), "{shell} completes options: {script}");
    }
    let out = shellgate().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
}

#[test]
fn the_bash_completion_script_loads_and_completes_subcommands() {
    let out = shellgate().args(["completions", "bash"]).output().unwrap();
    let dir = scratch("bash");
    let script = dir.path().join("shellgate.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    // Source it and ask for the completions of `shellgate r`.
    let probe = format!(
        "source {}; COMP_WORDS=(shellgate r); COMP_CWORD=1; COMP_LINE='shellgate r'; COMP_POINT=11; \
         _shellgate shellgate r shellgate; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    let replies = String::from_utf8_lossy(&out.stdout);
    assert!(
        replies.lines().any(|l| l == "run") && replies.lines().any(|l| l == "rpc"),
        "stdout {replies:?} stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
