//! Configuration files: values over defaults, the effective configuration round trip, the
//! policy and sandbox sections, and clear errors for unknown keys and malformed values.

use std::path::{Path, PathBuf};
use std::time::Duration;

use shellgate::intercept::{EnvConfig, InterceptConfig, Policy, Security};

use shellgate::{FileConfig, ToolConfig, load_tool_config};

#[test]
fn values_override_defaults() {
    let file = FileConfig::parse("timeout = 5\nhead_bytes = 10\nprefix = 'nice'", Path::new("x")).unwrap();
    let mut config = ToolConfig::default();
    file.apply(&mut config);
    assert_eq!(config.default_timeout, Duration::from_secs(5));
    assert_eq!(config.window.head_bytes, 10);
    assert_eq!(config.shell.prefix.as_deref(), Some("nice"));
}

#[test]
fn effective_configuration_round_trips() {
    let mut config = ToolConfig {
        default_session: "work".into(),
        ..ToolConfig::default()
    };
    config.jobs.max_running = 7;
    let text = FileConfig::effective(&config).to_toml();
    let parsed = FileConfig::parse(&text, Path::new("effective")).unwrap();
    let mut again = ToolConfig::default();
    parsed.apply(&mut again);
    assert_eq!(again.default_session, "work");
    assert_eq!(again.jobs.max_running, 7);
    assert_eq!(again.default_timeout, config.default_timeout);
}

#[test]
fn every_key_the_effective_configuration_writes_loads_again() {
    use shellgate_intercept::{RedirectRuleConfig, RuleEntry};
    let policy = Policy::builder()
        .security(Security::Allowlist)
        .allow("@safe")
        .deny("git push *")
        .rule(RuleEntry {
            allow: Some("npm run *".into()),
            matches: vec!["npm run build".into()],
            not_match: vec!["npm run build; rm -rf x".into()],
            ..RuleEntry::default()
        })
        .intercept_config(InterceptConfig {
            redirect_rules: vec![RedirectRuleConfig {
                pattern: "^make\\b".into(),
                flags: "i".into(),
                tool: "build".into(),
                message: "use the build tool".into(),
                quote_aware: true,
            }],
            available_tools: vec!["build".into()],
            ..InterceptConfig::default()
        })
        .build()
        .unwrap();
    let config = ToolConfig {
        policy: Some(policy),
        env: EnvConfig {
            allow_secrets: vec!["GITHUB_TOKEN".into()],
            redact: vec!["MY_KEY".into()],
            ..EnvConfig::default()
        },
        ..ToolConfig::default()
    };
    let text = FileConfig::effective(&config).to_toml();
    // Parsing checks every key against the schema: a field the schema lacks fails here.
    let parsed = FileConfig::parse(&text, Path::new("effective")).unwrap();
    let mut again = ToolConfig::default();
    parsed.apply(&mut again);
    let policy = again.policy.unwrap();
    assert_eq!(policy.security(), Security::Allowlist);
    assert_eq!(policy.policy_config().rules[0].matches, ["npm run build"]);
    assert_eq!(policy.intercept_config().redirect_rules[0].tool, "build");
    assert_eq!(again.env.redact, ["MY_KEY"]);
}

#[test]
fn policy_sections_build_the_policy_and_bad_rules_name_the_rule() {
    let file = FileConfig::parse("[policy]\nask = \"off\"\n", Path::new("p.toml")).unwrap();
    let mut config = ToolConfig::default();
    file.apply(&mut config);
    assert_eq!(
        config.policy.as_ref().unwrap().ask(),
        shellgate_intercept::AskMode::Off
    );
    let err = FileConfig::parse(
        "[[policy.rules]]\nallow = \"npm run *\"\nnot_match = [\"npm run x\"]\n",
        Path::new("p.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("p.toml") && err.contains("`npm run *`") && err.contains("npm run x"),
        "{err}"
    );
    let err = FileConfig::parse("[env]\nredact = 3\n", Path::new("p.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("p.toml") && err.contains("line 2"), "{err}");
}

#[test]
fn unknown_keys_and_bad_files_are_clear_errors() {
    let err = FileConfig::parse("timout = 5", Path::new("c.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("c.toml") && err.contains("timout"), "{err}");
    assert!(
        err.contains("line 1") && err.contains("did you mean `timeout`?"),
        "{err}"
    );
    let err = load_tool_config(Some(Path::new("/nonexistent/shellgate.toml")))
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot read"), "{err}");
}

#[test]
fn a_malformed_domain_pattern_is_refused_when_the_file_is_read() {
    for (list, text) in [
        ("allowed_domains", "foo*bar"),
        ("allowed_domains", "pypi.org:99999"),
        ("denied_domains", "*.1.2.3.4"),
        ("denied_domains", ""),
    ] {
        let file = format!("[sandbox]\nnetwork = \"proxy\"\n{list} = [\"pypi.org\", {text:?}]\n");
        let error = FileConfig::parse(&file, Path::new("x")).unwrap_err().to_string();
        assert!(
            error.contains(&format!("sandbox.{list}[1]")) && error.contains("malformed domain pattern"),
            "{file}: {error}"
        );
    }
    let good = "[sandbox]\nallowed_domains = [\"pypi.org\", \"*.crates.io\", \"github.com:443\"]\n";
    FileConfig::parse(good, Path::new("x")).unwrap();
}

#[test]
fn the_sandbox_section_loads_and_round_trips() {
    let text = "[sandbox]\nmode = \"read-only\"\nwritable_roots = [\"/c\"]\nnetwork = true\n\
                unix_sockets = false\ncpu_seconds = 5\naddress_space_bytes = 1024\nfile_size_bytes = 7\n\
                open_files = 64\nprocesses = 9\nallow_degraded = true\nmin_landlock_abi = 5\n";
    let file = FileConfig::parse(text, Path::new("s.toml")).unwrap();
    let mut config = ToolConfig::default();
    file.apply(&mut config);
    let sandbox = &config.sandbox;
    assert_eq!(sandbox.mode, Some(shellgate_sandbox::SandboxMode::ReadOnly));
    assert_eq!(sandbox.writable_roots, [PathBuf::from("/c")]);
    assert_eq!(
        (sandbox.network, sandbox.unix_sockets),
        (Some(shellgate_sandbox::NetworkSetting::On), false)
    );
    assert_eq!(sandbox.limits.cpu_seconds, Some(5));
    assert_eq!(sandbox.limits.address_space_bytes, Some(1024));
    assert_eq!(sandbox.limits.file_size_bytes, Some(7));
    assert_eq!(sandbox.limits.open_files, Some(64));
    assert_eq!(sandbox.limits.processes, Some(9));
    assert!(sandbox.allow_degraded);
    assert_eq!(sandbox.min_landlock_abi, Some(5));
    let again = FileConfig::effective(&config).to_toml();
    let reparsed = FileConfig::parse(&again, Path::new("e.toml")).unwrap();
    let mut back = ToolConfig::default();
    reparsed.apply(&mut back);
    assert_eq!(back.sandbox, config.sandbox);
    let proxied = "[sandbox]\nmode = \"workspace-write\"\nnetwork = \"proxy\"\n\
                   allowed_domains = [\"pypi.org\", \"*.crates.io\", \"github.com:443\"]\n\
                   denied_domains = [\"uploads.github.com\"]\n[sandbox.proxy]\n\
                   hosts = { \"registry.internal\" = \"10.1.2.3\" }\nallow_local_addresses = true\n";
    let file = FileConfig::parse(proxied, Path::new("p.toml")).unwrap();
    let mut config = ToolConfig::default();
    file.apply(&mut config);
    let sandbox = &config.sandbox;
    assert_eq!(sandbox.network, Some(shellgate_sandbox::NetworkSetting::Proxy));
    assert_eq!(
        sandbox.allowed_domains,
        ["pypi.org", "*.crates.io", "github.com:443"]
    );
    assert_eq!(sandbox.denied_domains, ["uploads.github.com"]);
    assert_eq!(sandbox.proxy_hosts["registry.internal"].to_string(), "10.1.2.3");
    assert!(sandbox.allow_local_addresses);
    let again = FileConfig::effective(&config).to_toml();
    let mut back = ToolConfig::default();
    FileConfig::parse(&again, Path::new("e.toml"))
        .unwrap()
        .apply(&mut back);
    assert_eq!(back.sandbox, config.sandbox);
    let err = FileConfig::parse("[sandbox]\nnetwork = \"some\"\n", Path::new("s.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("some") && err.contains("proxy"), "{err}");
    let err = FileConfig::parse("[sandbox]\nmode = \"on\"\n", Path::new("s.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("on") && err.contains("workspace-write"), "{err}");
}
