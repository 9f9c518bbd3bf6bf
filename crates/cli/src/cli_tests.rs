//! Parsing of the command line: strict options, `--` before a command that starts with `-`, examples
//! on every subcommand.

use clap::{CommandFactory as _, Parser as _};

use crate::{Cli, Command};

fn run_words(args: &[&str]) -> Vec<String> {
    let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let Command::Run(run) = cli.command else {
        panic!("not a run: {args:?}");
    };
    run.command_words().to_vec()
}

#[test]
fn an_unknown_option_before_the_command_is_an_error_naming_it() {
    for args in [
        &["shellgate", "run", "--no-sandbox", "--", "touch", "x"][..],
        &["shellgate", "run", "--no-such-flag", "--", "echo", "x"],
        &["shellgate", "run", "-q", "echo x"],
    ] {
        let err = Cli::try_parse_from(args).expect_err("must not parse");
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument, "{args:?}");
        let message = err.to_string();
        assert!(
            message.contains(args[2]),
            "{args:?} must name {}: {message}",
            args[2]
        );
    }
}

#[test]
fn a_command_starting_with_a_dash_needs_a_double_dash() {
    assert!(Cli::try_parse_from(["shellgate", "run", "-la"]).is_err());
    assert_eq!(run_words(&["shellgate", "run", "--", "-la"]), ["-la"]);
    assert_eq!(
        run_words(&["shellgate", "run", "--timeout", "5", "--", "--weird", "x"]),
        ["--weird", "x"]
    );
}

#[test]
fn words_from_the_first_command_word_on_belong_to_the_command() {
    assert_eq!(run_words(&["shellgate", "run", "echo hi"]), ["echo hi"]);
    assert_eq!(run_words(&["shellgate", "run", "echo", "hi"]), ["echo", "hi"]);
    // After the first word, options are the command's own.
    assert_eq!(
        run_words(&["shellgate", "run", "--json", "ls", "-la", "--json"]),
        ["ls", "-la", "--json"]
    );
}

#[test]
fn every_subcommand_has_examples() {
    fn check(cmd: &clap::Command, path: &str) {
        let path = format!("{path} {}", cmd.get_name());
        let after = cmd.get_after_help().map(ToString::to_string).unwrap_or_default();
        assert!(after.contains("Examples:"), "`{path} --help` has no examples");
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            check(sub, &path);
        }
    }
    let cli = Cli::command();
    cli.clone().debug_assert();
    check(&cli, "");
}

#[test]
fn sandbox_and_host_are_options_before_the_command() {
    assert_eq!(
        run_words(&[
            "shellgate",
            "run",
            "--sandbox",
            "workspace-write",
            "--host",
            "auto",
            "--",
            "touch",
            "x"
        ]),
        ["touch", "x"]
    );
    let err = Cli::try_parse_from(["shellgate", "run", "--sandbox", "everything", "true"]).unwrap_err();
    assert!(err.to_string().contains("everything"), "{err}");
}
