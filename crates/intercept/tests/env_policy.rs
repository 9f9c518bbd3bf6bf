//! Environment policy: each refusal rule, inherited-secret removal and redaction.

use std::collections::BTreeMap;

use shellgate_intercept::{EnvConfig, EnvPolicy};

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn blocked_keys_and_prefixes_are_refused_by_name() {
    let p = EnvPolicy::default();
    for key in [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "BASH_ENV",
        "ENV",
        "BASH_FUNC_ls%%",
        "PROMPT_COMMAND",
        "IFS",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYOPT",
        "RUBYLIB",
        "GIT_SSH_COMMAND",
        "GIT_CONFIG_PARAMETERS",
        "GIT_EXTERNAL_DIFF",
        "JAVA_TOOL_OPTIONS",
    ] {
        let err = p.check_request(&env(&[(key, "x"), ("OK_VAR", "1")])).unwrap_err();
        let shown = key.trim();
        assert!(
            err.blocked.iter().any(|k| k == shown) || err.invalid.iter().any(|k| k == shown),
            "{key}: {err:?}"
        );
        assert!(err.to_string().contains(shown), "{key}: {err}");
    }
}

#[test]
fn path_overrides_are_refused() {
    let err = EnvPolicy::default()
        .check_request(&env(&[("PATH", "/tmp/evil:/usr/bin")]))
        .unwrap_err();
    assert_eq!(err.blocked, ["PATH"]);
    assert!(err.to_string().contains("PATH"));
    assert!(
        EnvPolicy::default()
            .check_request(&env(&[("path", "x")]))
            .is_err()
    );
}

#[test]
fn ordinary_variables_pass() {
    assert!(
        EnvPolicy::default()
            .check_request(&env(&[("RUST_LOG", "debug"), ("CI", "1"), ("LANG", "C.UTF-8")]))
            .is_ok()
    );
}

#[test]
fn several_refusals_are_all_named() {
    let err = EnvPolicy::default()
        .check_request(&env(&[("LD_PRELOAD", "x"), ("BASH_ENV", "y"), ("bad key", "z")]))
        .unwrap_err();
    assert_eq!(err.blocked, ["BASH_ENV", "LD_PRELOAD"]);
    assert_eq!(err.invalid, ["bad key"]);
    let text = err.to_string();
    assert!(
        text.contains("BASH_ENV") && text.contains("LD_PRELOAD") && text.contains("bad key"),
        "{text}"
    );
}

#[test]
fn inherited_secrets_are_removed_unless_allowlisted() {
    let p = EnvPolicy::new(&EnvConfig {
        allow_secrets: vec!["GITHUB_TOKEN".into()],
        redact: vec!["MY_SERVICE_KEY".into()],
        ..EnvConfig::default()
    });
    let inherited = env(&[
        ("ANTHROPIC_API_KEY", "a"),
        ("AWS_SECRET_ACCESS_KEY", "b"),
        ("NPM_TOKEN", "c"),
        ("DB_PASSWORD", "d"),
        ("GITHUB_TOKEN", "e"),
        ("MY_SERVICE_KEY", "f"),
        ("BASH_ENV", "g"),
        ("BASH_FUNC_ls%%", "() { rm -rf x; }"),
        ("LD_LIBRARY_PATH", "/opt/cuda/lib"),
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("LANG", "C"),
    ]);
    assert_eq!(
        p.inherited_removals(&inherited),
        [
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "BASH_ENV",
            "BASH_FUNC_ls%%",
            "DB_PASSWORD",
            "MY_SERVICE_KEY",
            "NPM_TOKEN"
        ]
    );
}

#[test]
fn configured_values_are_redacted() {
    let p = EnvPolicy::new(&EnvConfig {
        allow_secrets: Vec::new(),
        redact: vec!["MY_SERVICE_KEY".into(), "PIN".into()],
        ..EnvConfig::default()
    });
    let vars = env(&[
        ("MY_SERVICE_KEY", "s3cr3t-value"),
        ("PIN", "123"),
        ("OTHER", "s3cr3t-value"),
    ]);
    let r = p.redactions(&vars);
    assert_eq!(
        r,
        [("MY_SERVICE_KEY".to_owned(), "s3cr3t-value".to_owned())],
        "short values are not redacted"
    );
}

#[test]
fn code_loading_keys_and_code_values_are_refused_with_the_reason() {
    let p = EnvPolicy::default();
    for key in [
        "PYTHONUSERBASE",
        "RUSTC",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
        "OPENSSL_CONF",
        "OPENSSL_MODULES",
        "GIT_TRACE",
        "CURL_HOME",
        "WGETRC",
        "SSH_ASKPASS",
        "KRB5_CONFIG",
        "LOCPATH",
        "NLSPATH",
        "TERMINFO_DIRS",
        "XDG_CONFIG_DIRS",
        "BASH_XTRACEFD",
    ] {
        let err = p.check_request(&env(&[(key, "/tmp/x")])).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(key) && text.contains('('), "{key}: {text}");
    }
    let err = p
        .check_request(&env(&[("CI", "a[$(touch /tmp/p)]")]))
        .unwrap_err();
    assert_eq!(err.code_values, ["CI"]);
    assert!(
        p.check_request(&env(&[("CI", "1"), ("PYTHONUNBUFFERED", "1")]))
            .is_ok()
    );
}

#[test]
fn an_allowlist_takes_only_inert_keys_and_the_ones_the_user_allows() {
    let p = EnvPolicy::new(&EnvConfig {
        allow: vec!["MY_APP_MODE".into()],
        ..EnvConfig::default()
    });
    assert!(
        p.check_request_allowlisted(&env(&[("LANG", "C"), ("LC_ALL", "C"), ("MY_APP_MODE", "x")]))
            .is_ok()
    );
    let err = p
        .check_request_allowlisted(&env(&[("FOO", "1"), ("TZ", "UTC")]))
        .unwrap_err();
    assert_eq!(err.not_inert, ["FOO"]);
    assert!(err.to_string().contains("`FOO`"));
}

#[test]
fn request_values_that_join_into_code_in_arithmetic_are_refused() {
    // `echo $(($LANG$LC_ALL))` would run the substitution.
    let p = EnvPolicy::default();
    let err = p
        .check_request_allowlisted(&env(&[("LANG", "a["), ("LC_ALL", "$(touch /tmp/p)]")]))
        .unwrap_err();
    assert_eq!(err.code_values, ["LANG", "LC_ALL"]);
    let err = p
        .check_request(&env(&[("TZ", "a["), ("CI", "`touch /tmp/p`]")]))
        .unwrap_err();
    assert_eq!(err.code_values, ["CI", "TZ"]);
    assert!(p.check_request(&env(&[("BASH_COMPAT", "51")])).is_err());
    assert!(p.check_request(&env(&[("CI", "a[1]"), ("TZ", "UTC")])).is_ok());
    assert!(
        p.check_request(&env(&[("MY_VALUE", "a$b"), ("TZ", "UTC")]))
            .is_ok()
    );
}
