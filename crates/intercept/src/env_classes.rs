//! Environment keys by what they do to a program: the ones that make it load or run code (refused
//! in a request's `env` and in front of a command, in every mode) and the ones known to be inert
//! (the only ones an allowlist accepts unless the user adds more). Keys are compared upper-case.

/// Python keys that only change buffering, encodings or bytecode files.
const INERT_PYTHON: &[&str] = &[
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "PYTHONHASHSEED",
    "PYTHONUTF8",
    "PYTHONFAULTHANDLER",
    "PYTHONNOUSERSITE",
    "PYTHONSAFEPATH",
];

/// Why setting `k` makes a program load or run code, when it does.
pub(crate) fn loads_code(k: &str) -> Option<&'static str> {
    let any = |list: &[&str]| list.contains(&k);
    let starts = |list: &[&str]| list.iter().any(|p| k.starts_with(p));
    Some(if k.starts_with("PYTHON") && !INERT_PYTHON.contains(&k) {
        "Python loads startup code, modules, plugins or warning filters through it"
    } else if starts(&[
        "PERL5",
        "PERLLIB",
        "PERL_",
        "RUBY",
        "NODE_OPTIONS",
        "NODE_PATH",
        "NODE_REPL_",
    ]) {
        "the language runtime loads modules or options through it"
    } else if starts(&["RUSTC", "RUSTDOC", "RUSTFLAGS"])
        || (k.starts_with("CARGO_")
            && ([
                "RUNNER",
                "WRAPPER",
                "LINKER",
                "RUSTC",
                "RUSTDOC",
                "FLAGS",
                "ALIAS_",
                "CREDENTIAL",
                "REGISTR",
                "HOME",
                "UNSTABLE",
            ]
            .iter()
            .any(|p| k.contains(p))))
    {
        "cargo runs the compiler, wrapper, runner or linker it names"
    } else if any(&[
        "CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "F77", "NM", "RANLIB", "STRIP", "OBJCOPY",
    ]) || any(&[
        "CFLAGS",
        "CXXFLAGS",
        "CPPFLAGS",
        "LDFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "GNUMAKEFLAGS",
        "MAKEFILES",
        "MAKE",
        "MAKESHELL",
    ]) {
        "a build runs the compiler or options it names"
    } else if starts(&[
        "OPENSSL_",
        "KRB5",
        "TERMINFO",
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "XDG_CONFIG_DIRS",
        "SSH_ASKPASS",
        "SSLKEYLOGFILE",
    ]) {
        "a library loads modules or configuration, or writes, through it"
    } else if starts(&["LESSOPEN", "LESSCLOSE", "LESSKEY"]) {
        "`less` runs the preprocessor it names"
    } else if starts(&[
        "GIT_TRACE",
        "GIT_SSH",
        "GIT_CONFIG",
        "GIT_EXEC_PATH",
        "GIT_TEMPLATE_DIR",
    ]) || any(&[
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
    ]) {
        "git runs, reads or writes what it names"
    } else if any(&[
        "BASH_ENV",
        "ENV",
        "BASH_XTRACEFD",
        "PROMPT_COMMAND",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "BASH_LOADABLES_PATH",
        "INPUTRC",
    ]) {
        "the shell runs, reads or writes what it names"
    } else if starts(&[
        "NPM_CONFIG_",
        "PIP_",
        "UV_",
        "PYTEST_",
        "GOFLAGS",
        "GOTOOLCHAIN",
        "GOPROXY",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "MAVEN_OPTS",
        "GRADLE_OPTS",
        "DOCKER_HOST",
        "DOCKER_CONFIG",
        "DOCKER_CONTEXT",
        "KUBECONFIG",
        "CURL_HOME",
        "WGETRC",
        "TAR_OPTIONS",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "BROWSER",
    ]) {
        "the tool runs, loads or fetches what it names"
    } else {
        return None;
    })
}

/// Keys known to change nothing but output, locale, time zone, logging or a build's mode.
const INERT: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "TERM",
    "CI",
    "DEBUG",
    "VERBOSE",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "RUST_TEST_THREADS",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_INCREMENTAL",
    "NODE_ENV",
    "NODE_NO_WARNINGS",
    "GIT_TERMINAL_PROMPT",
    "DEBIAN_FRONTEND",
    "GOOS",
    "GOARCH",
    "CGO_ENABLED",
    "GOMAXPROCS",
];

/// Whether `k` is known to be inert.
pub(crate) fn is_inert(k: &str) -> bool {
    INERT.contains(&k) || k.starts_with("LC_") || INERT_PYTHON.contains(&k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        for k in [
            "PYTHONUSERBASE",
            "PYTHONWARNINGS",
            "RUSTC",
            "RUSTC_WORKSPACE_WRAPPER",
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
            "CARGO_BUILD_RUSTC_WRAPPER",
            "OPENSSL_CONF",
            "OPENSSL_MODULES",
            "GIT_TRACE",
            "GIT_TRACE2_EVENT",
            "CURL_HOME",
            "WGETRC",
            "SSH_ASKPASS",
            "KRB5_CONFIG",
            "LOCPATH",
            "NLSPATH",
            "TERMINFO_DIRS",
            "XDG_CONFIG_DIRS",
            "BASH_XTRACEFD",
            "CC",
            "MAKEFLAGS",
            "LESSOPEN",
            "NPM_CONFIG_SCRIPT_SHELL",
            "PIP_INDEX_URL",
            "DOCKER_HOST",
            "KUBECONFIG",
            "PYTEST_ADDOPTS",
        ] {
            assert!(loads_code(k).is_some(), "{k}");
            assert!(!is_inert(k), "{k}");
        }
        for k in [
            "LANG",
            "LC_ALL",
            "TZ",
            "RUST_LOG",
            "PYTHONUNBUFFERED",
            "CARGO_TERM_COLOR",
            "NODE_ENV",
        ] {
            assert!(loads_code(k).is_none(), "{k}");
            assert!(is_inert(k), "{k}");
        }
    }
}
