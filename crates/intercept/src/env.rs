//! Environment policy (SPEC I-7): which variables a request may set, which inherited ones a
//! child must not see, and which values are redacted from output.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::EnvConfig;

/// Keys that inject code or redirect what runs, in any environment (compared upper-case).
const BLOCKED_EVERYWHERE: &[&str] = &[
    // runtimes
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONHOME",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONBREAKPOINT",
    "PYTHONINSPECT",
    "PERL5LIB",
    "PERL5OPT",
    "PERLLIB",
    "RUBYLIB",
    "RUBYOPT",
    "RUBYSHELL",
    // shell
    "BASH_ENV",
    "ENV",
    "SHELL",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_COMPAT",
    "PS4",
    "IFS",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "BROWSER",
    // git
    "GIT_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_EXEC_PATH",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_SEQUENCE_EDITOR",
    "GIT_TEMPLATE_DIR",
    "GIT_SSL_NO_VERIFY",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "GIT_HOOK_PATH",
    // compilers and build
    "CC",
    "CXX",
    "CARGO_BUILD_RUSTC",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "RUSTC_WRAPPER",
    "CMAKE_C_COMPILER",
    "CMAKE_CXX_COMPILER",
    "CMAKE_TOOLCHAIN_FILE",
    "CONFIG_SITE",
    "CONFIG_SHELL",
    "MAKEFLAGS",
    "MFLAGS",
    // libc and TLS
    "GCONV_PATH",
    "SSLKEYLOGFILE",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    // JVM and .NET
    "JAVA_OPTS",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "DOTNET_STARTUP_HOOKS",
    "DOTNET_ADDITIONAL_DEPS",
    "CORECLR_PROFILER",
    "CATALINA_OPTS",
    "MAVEN_OPTS",
    "SBT_OPTS",
    "GRADLE_OPTS",
    "ANT_OPTS",
    // editors
    "EXINIT",
    "VIMINIT",
    "MYVIMRC",
    "GVIMINIT",
    "EMACSLOADPATH",
    "JULIA_EDITOR",
    "SVN_EDITOR",
    "BZR_EDITOR",
    // Lua
    "LUA_INIT",
    "LUA_INIT_5_1",
    "LUA_INIT_5_2",
    "LUA_INIT_5_3",
    "LUA_INIT_5_4",
    // VCS helpers and others
    "HGRCPATH",
    "SVN_SSH",
    "BZR_SSH",
    "BZR_PLUGIN_PATH",
    "SUDO_ASKPASS",
    "HELM_PLUGINS",
    "PACKER_PLUGIN_PATH",
    "VAGRANT_VAGRANTFILE",
    "ERL_AFLAGS",
    "ERL_FLAGS",
    "ERL_ZFLAGS",
    "ELIXIR_ERL_OPTIONS",
    "R_ENVIRON",
    "R_PROFILE",
    "R_ENVIRON_USER",
    "R_PROFILE_USER",
    "RIPGREP_CONFIG_PATH",
    "LESSOPEN",
    "LESSCLOSE",
];

/// Prefixes blocked everywhere.
const BLOCKED_PREFIXES: &[&str] = &["LD_", "DYLD_", "BASH_FUNC_"];

/// Keys a request may not set, though a child may inherit them: home and config redirectors,
/// pagers and editors, proxies and TLS, package indexes, credentials.
const OVERRIDE_ONLY: &[&str] = &[
    "HOME",
    "ZDOTDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "KUBECONFIG",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "DOCKER_CONFIG",
    "NPM_CONFIG_USERCONFIG",
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "HISTFILE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "NODE_TLS_REJECT_UNAUTHORIZED",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_TLS_VERIFY",
    "DOCKER_CERT_PATH",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "GOPROXY",
    "GOPRIVATE",
    "GONOSUMDB",
    "GOFLAGS",
    "CARGO_HOME",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "GEM_HOME",
    "GEM_PATH",
    "BUNDLE_GEMFILE",
    "COMPOSER_HOME",
    "TF_CLI_CONFIG_FILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    "NPM_TOKEN",
    "NODE_AUTH_TOKEN",
    "DATABASE_URL",
    "REDIS_URL",
    "MONGODB_URI",
    "AMQP_URL",
    "SSH_AUTH_SOCK",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "CPATH",
    "LIBRARY_PATH",
    "CLASSPATH",
];

/// Prefixes a request may not set.
const OVERRIDE_PREFIXES: &[&str] = &[
    "GIT_CONFIG",
    "NPM_CONFIG_",
    "CARGO_REGISTRIES_",
    "TF_VAR_",
    "ANSIBLE_",
    "PIP_",
    "UV_",
];

/// Keys that, set on one command (`KEY=v cmd`), change which program runs or what it runs.
const COMMAND_PREFIX_EXTRA: &[&str] = &[
    "PATH",
    "HOME",
    "ZDOTDIR",
    "XDG_CONFIG_HOME",
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "RUSTFLAGS",
    "CARGO_HOME",
    "GOFLAGS",
    "TAR_OPTIONS",
    "GREP_OPTIONS",
    "LESS",
    "MORE",
    "PYTHONWARNINGS",
    "DOCKER_HOST",
    "KUBECONFIG",
    "TERMINFO",
];

fn upper(key: &str) -> String {
    key.to_ascii_uppercase()
}

fn blocked_everywhere(k: &str) -> bool {
    BLOCKED_EVERYWHERE.contains(&k)
        || BLOCKED_PREFIXES.iter().any(|p| k.starts_with(p))
        || crate::env_classes::loads_code(k).is_some()
}

/// Whether assigning `name` in front of a command (or in the script) changes what runs.
pub(crate) fn is_injection_key(name: &str) -> bool {
    let k = upper(name);
    blocked_everywhere(&k) || COMMAND_PREFIX_EXTRA.contains(&k.as_str()) || k.starts_with("GIT_CONFIG")
}

/// Whether a value holds a backquote or a `$` expansion (`$(`, `${`, `$NAME`).
fn holds_expansion(v: &str) -> bool {
    let b = v.as_bytes();
    v.contains('`')
        || b.iter().enumerate().any(|(i, &c)| {
            c == b'$'
                && b.get(i + 1)
                    .is_some_and(|n| matches!(n, b'(' | b'{' | b'[' | b'_') || n.is_ascii_alphabetic())
        })
}

fn is_portable_key(k: &str) -> bool {
    let mut b = k.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A request's `env` was refused; nothing runs with it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.message())]
pub struct EnvRefusal {
    /// Keys that may not be set (sorted, unique; `PATH` included when it was given).
    pub blocked: Vec<String>,
    /// Keys that are not portable variable names.
    pub invalid: Vec<String>,
    /// Keys refused under an allowlist because they are not known to be inert.
    pub not_inert: Vec<String>,
    /// Keys whose value holds an expansion in a subscript (`a[$(id)]`): a shell evaluating the
    /// variable as arithmetic (`$((KEY))`) runs it.
    pub code_values: Vec<String>,
}

impl EnvRefusal {
    fn message(&self) -> String {
        let mut parts = Vec::new();
        if self.blocked.iter().any(|k| k.eq_ignore_ascii_case("PATH")) {
            parts.push("a custom `PATH` is refused: commands are found through the engine's PATH".to_owned());
        }
        let others: Vec<&String> = self
            .blocked
            .iter()
            .filter(|k| !k.eq_ignore_ascii_case("PATH"))
            .collect();
        let named = |k: &&String| match crate::env_classes::loads_code(&upper(k)) {
            Some(why) => format!("`{k}` ({why})"),
            None => format!("`{k}`"),
        };
        match others.as_slice() {
            [] => {}
            [one] => parts.push(format!(
                "the environment variable {} is refused: it changes what the command runs",
                named(one)
            )),
            many => parts.push(format!(
                "the environment variables {} are refused: they change what the command runs",
                many.iter().map(named).collect::<Vec<_>>().join(", ")
            )),
        }
        if !self.code_values.is_empty() {
            parts.push(format!(
                "values that run a command when a shell evaluates them as arithmetic: {}",
                self.code_values
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.not_inert.is_empty() {
            parts.push(format!(
                "under an allowlist only keys known to be inert may be set (add others to `[env] allow`): {}",
                self.not_inert
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.invalid.is_empty() {
            parts.push(format!(
                "not portable variable names: {}",
                self.invalid
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        parts.join("; ")
    }
}

/// The environment policy.
#[derive(Debug, Clone, Default)]
pub struct EnvPolicy {
    allow_secrets: Vec<String>,
    redact: Vec<String>,
    allow: Vec<String>,
}

impl EnvPolicy {
    /// The policy of an `[env]` section.
    pub fn new(config: &EnvConfig) -> Self {
        Self {
            allow_secrets: config.allow_secrets.iter().map(|k| upper(k)).collect(),
            redact: config.redact.clone(),
            allow: config.allow.iter().map(|k| upper(k)).collect(),
        }
    }

    /// Refuse a request's `env` when it sets a blocked key, a blocked prefix, `PATH`, or a key that
    /// is not a portable name. The refusal names every offending key.
    pub fn check_request(&self, env: &BTreeMap<String, String>) -> Result<(), EnvRefusal> {
        let mut blocked = Vec::new();
        let mut invalid = Vec::new();
        // Values a shell may join into arithmetic (`$(($A$B))`): one opening a subscript and one
        // holding an expansion run it together.
        let joined = env.values().any(|v| v.contains('[')) && env.values().any(|v| holds_expansion(v));
        let code_values: Vec<String> = env
            .iter()
            .filter(|(_, v)| {
                crate::argv::code_in_subscript(v) || (joined && (v.contains('[') || holds_expansion(v)))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in env.keys() {
            let trimmed = key.trim();
            if !is_portable_key(trimmed) {
                invalid.push(key.clone());
                continue;
            }
            let k = upper(trimmed);
            if k == "PATH"
                || blocked_everywhere(&k)
                || OVERRIDE_ONLY.iter().any(|o| o.eq_ignore_ascii_case(&k))
                || OVERRIDE_PREFIXES.iter().any(|p| k.starts_with(p))
            {
                blocked.push(trimmed.to_owned());
            }
        }
        blocked.sort();
        blocked.dedup();
        invalid.sort();
        if blocked.is_empty() && invalid.is_empty() && code_values.is_empty() {
            Ok(())
        } else {
            Err(EnvRefusal {
                blocked,
                invalid,
                not_inert: Vec::new(),
                code_values,
            })
        }
    }

    /// [`EnvPolicy::check_request`], and under an allowlist: every key known to be inert
    /// (`LANG`, `LC_*`, `TZ`, `RUST_LOG`, …) or listed in `[env] allow`.
    pub fn check_request_allowlisted(&self, env: &BTreeMap<String, String>) -> Result<(), EnvRefusal> {
        let mut refusal = match self.check_request(env) {
            Ok(()) => EnvRefusal {
                blocked: Vec::new(),
                invalid: Vec::new(),
                not_inert: Vec::new(),
                code_values: Vec::new(),
            },
            Err(r) => r,
        };
        for key in env.keys() {
            let k = key.trim();
            if !refusal.blocked.iter().any(|b| b == k) && !refusal.invalid.contains(key) && !self.may_set(k) {
                refusal.not_inert.push(k.to_owned());
            }
        }
        if refusal.blocked.is_empty()
            && refusal.invalid.is_empty()
            && refusal.not_inert.is_empty()
            && refusal.code_values.is_empty()
        {
            Ok(())
        } else {
            Err(refusal)
        }
    }

    /// Whether an allowlist lets a request or a command prefix set `key`.
    pub fn may_set(&self, key: &str) -> bool {
        let k = upper(key);
        crate::env_classes::is_inert(&k) || self.allow.contains(&k)
    }

    /// Whether an inherited variable named `key` is a secret children must not see.
    pub fn is_secret(&self, key: &str) -> bool {
        let k = upper(key);
        if self.allow_secrets.contains(&k) {
            return false;
        }
        k.ends_with("_API_KEY")
            || k.ends_with("_APIKEY")
            || k.ends_with("_PRIVATE_KEY")
            || k.ends_with("_ACCESS_KEY_ID")
            || k.contains("SECRET")
            || k.contains("TOKEN")
            || k.contains("PASSWORD")
            || k.contains("PASSWD")
            || k.contains("CREDENTIAL")
            || matches!(
                k.as_str(),
                "DATABASE_URL" | "REDIS_URL" | "MONGODB_URI" | "AMQP_URL"
            )
            || self.redact.iter().any(|r| r.eq_ignore_ascii_case(&k))
    }

    /// The inherited variables to remove from a child's environment: secrets (unless
    /// allowlisted) and keys that inject code into every shell or program (`LD_PRELOAD`,
    /// `BASH_ENV`, `BASH_FUNC_*`, …). `PATH` is always kept.
    pub fn inherited_removals<'v, I>(&self, vars: I) -> Vec<String>
    where
        I: IntoIterator<Item = (&'v String, &'v String)>,
    {
        let mut out: Vec<String> = vars
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| {
                let u = upper(k);
                u != "PATH"
                    && (self.is_secret(k)
                        // Inherited exported functions change what a name runs; an inherited
                        // `LD_LIBRARY_PATH` is the user's own set-up (conda, CUDA) and stays.
                        || u.starts_with("BASH_FUNC_")
                        || matches!(
                            u.as_str(),
                            "BASH_ENV"
                                | "ENV"
                                | "PROMPT_COMMAND"
                                | "PS4"
                                | "SHELLOPTS"
                                | "BASHOPTS"
                                | "IFS"
                                | "CDPATH"
                                | "GLOBIGNORE"
                        ))
            })
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The configured secret names that are set, with their values (values shorter than 4
    /// characters are left out: redacting them would garble ordinary output).
    pub fn redactions<'v, I>(&self, vars: I) -> Vec<(String, String)>
    where
        I: IntoIterator<Item = (&'v String, &'v String)>,
    {
        let mut out: Vec<(String, String)> = vars
            .into_iter()
            .filter(|(k, v)| v.chars().count() >= 4 && self.redact.iter().any(|r| r == *k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn injection_keys_name_what_is_refused() {
        let p = EnvPolicy::default();
        let err = p
            .check_request(&map(&[("LD_PRELOAD", "/x.so"), ("FOO", "1")]))
            .unwrap_err();
        assert_eq!(err.blocked, ["LD_PRELOAD"]);
        assert!(err.to_string().contains("`LD_PRELOAD`"), "{err}");
        let err = p.check_request(&map(&[("PATH", "/tmp")])).unwrap_err();
        assert!(err.to_string().contains("PATH"), "{err}");
        let err = p.check_request(&map(&[("bad-key", "1")])).unwrap_err();
        assert_eq!(err.invalid, ["bad-key"]);
        assert!(
            p.check_request(&map(&[("RUST_LOG", "debug"), ("CI", "1")]))
                .is_ok()
        );
    }

    #[test]
    fn secrets_are_removed_unless_allowed() {
        let p = EnvPolicy::new(&EnvConfig {
            allow_secrets: vec!["GITHUB_TOKEN".into()],
            redact: vec!["MY_SERVICE".into()],
            ..EnvConfig::default()
        });
        let vars = map(&[
            ("OPENAI_API_KEY", "sk"),
            ("GITHUB_TOKEN", "gh"),
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("MY_SERVICE", "v"),
            ("LD_PRELOAD", "x"),
        ]);
        assert_eq!(
            p.inherited_removals(&vars),
            ["MY_SERVICE", "OPENAI_API_KEY"],
            "an inherited LD_* is the user's own set-up; only a request may not set it"
        );
    }

    #[test]
    fn redaction() {
        let p = EnvPolicy::new(&EnvConfig {
            allow_secrets: vec![],
            redact: vec!["KEY".into(), "SHORT".into()],
            ..EnvConfig::default()
        });
        let vars = map(&[("KEY", "hunter22"), ("SHORT", "abc"), ("OTHER", "zzzz")]);
        let r = p.redactions(&vars);
        assert_eq!(r, [("KEY".to_owned(), "hunter22".to_owned())]);
    }
}
