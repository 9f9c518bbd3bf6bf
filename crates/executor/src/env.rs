//! The non-interactive environment (SPEC E-3): no pagers, no editors, no prompts, no colour.
//!
//! Applied as a launch wrapper ([`non_interactive`]). The values go into [`LaunchSpec::env`], which
//! overrides what the engine inherited; variables the caller already put in the spec are kept (an
//! explicit request wins), and an inline `VAR=x cmd` in the command wins over both, as in any shell.

use crate::LaunchSpec;

/// Variables that keep tools from waiting for a person, whatever the engine inherited.
pub const NON_INTERACTIVE_ENV: &[(&str, &str)] = &[
    // Pagers: print instead of paging.
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", "cat"),
    ("BAT_PAGER", "cat"),
    ("DELTA_PAGER", "cat"),
    ("GH_PAGER", "cat"),
    ("GLAB_PAGER", "cat"),
    ("PSQL_PAGER", "cat"),
    ("MYSQL_PAGER", "cat"),
    ("HOMEBREW_PAGER", "cat"),
    ("AWS_PAGER", ""),
    ("LESS", "FRX"),
    // Editors: accept the text as it is (git then aborts an empty commit message at once).
    ("GIT_EDITOR", "true"),
    ("GIT_SEQUENCE_EDITOR", "true"),
    ("VISUAL", "true"),
    ("EDITOR", "true"),
    // Prompts and interactive credential helpers.
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_ASKPASS", "/usr/bin/false"),
    ("SSH_ASKPASS", "/usr/bin/false"),
    ("GCM_INTERACTIVE", "Never"),
    ("GPG_TTY", "not a tty"),
    ("CI", "1"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ("npm_config_yes", "true"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_audit", "false"),
    ("npm_config_progress", "false"),
    ("PNPM_DISABLE_SELF_UPDATE_CHECK", "true"),
    ("YARN_ENABLE_TELEMETRY", "0"),
    ("YARN_ENABLE_PROGRESS_BARS", "0"),
    ("CARGO_TERM_PROGRESS_WHEN", "never"),
    ("TF_INPUT", "0"),
    ("TF_IN_AUTOMATION", "1"),
    ("GH_PROMPT_DISABLED", "1"),
    ("COMPOSER_NO_INTERACTION", "1"),
    ("CLOUDSDK_CORE_DISABLE_PROMPTS", "1"),
    ("HOMEBREW_NO_AUTO_UPDATE", "1"),
    // Output meant for a reader that is not a terminal.
    ("NO_COLOR", "1"),
    ("COLORTERM", ""),
    ("PYTHONUNBUFFERED", "1"),
];

/// Terminal type for runs without a terminal.
pub const PIPE_TERM: &str = "dumb";

/// The UTF-8 locale used when the inherited one is not UTF-8.
pub const UTF8_LOCALE: &str = "C.UTF-8";

/// Launch wrapper: add the non-interactive environment to `spec` (see the module docs).
///
/// `TERM=dumb` is set for pipe runs only (a PTY executor sets its own `TERM`). The locale is forced to
/// `C.UTF-8` only when the effective inherited one is not UTF-8, so a user's `en_US.UTF-8` is kept.
#[must_use]
pub fn non_interactive(mut spec: LaunchSpec) -> LaunchSpec {
    let inherited = |key: &str| {
        if spec.env_clear {
            None
        } else {
            std::env::var(key).ok()
        }
    };
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"].iter().find_map(|k| {
        spec.env
            .get(*k)
            .cloned()
            .or_else(|| inherited(k))
            .filter(|v| !v.is_empty())
    });
    let term = (!spec.pty).then_some(("TERM", PIPE_TERM));
    let set_utf8_locale = !locale.as_deref().is_some_and(is_utf8_locale);
    let locale_vars = [("LC_ALL", UTF8_LOCALE), ("LANG", UTF8_LOCALE)];
    let extra = NON_INTERACTIVE_ENV
        .iter()
        .copied()
        .chain(term)
        .chain(locale_vars.into_iter().filter(|_| set_utf8_locale));
    // Values the spec already has win; only missing keys are allocated.
    for (key, value) in extra {
        if !spec.env.contains_key(key) {
            spec.env.insert(key.to_owned(), value.to_owned());
        }
    }
    spec
}

/// Whether a locale name selects UTF-8 (`en_US.UTF-8`, `C.utf8`).
pub fn is_utf8_locale(name: &str) -> bool {
    // `lang_territory.codeset@modifier`: compare the codeset only.
    let without_modifier = name.split('@').next().unwrap_or("");
    without_modifier.rsplit_once('.').is_some_and(|(_, codeset)| {
        codeset.eq_ignore_ascii_case("utf-8") || codeset.eq_ignore_ascii_case("utf8")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_missing_keys_and_keeps_explicit_ones() {
        let spec = non_interactive(LaunchSpec::new("x", ["y"], "/").with_env("PAGER", "less"));
        assert_eq!(spec.env["PAGER"], "less");
        assert_eq!(spec.env["GIT_PAGER"], "cat");
        assert_eq!(spec.env["EDITOR"], "true");
        assert_eq!(spec.env["TERM"], "dumb");
    }

    #[test]
    fn pty_runs_keep_their_term_and_locales_are_judged() {
        let mut spec = LaunchSpec::new("x", ["y"], "/").with_env("LANG", "en_US.UTF-8");
        spec.pty = true;
        spec.env_clear = true;
        let spec = non_interactive(spec);
        assert!(!spec.env.contains_key("TERM"));
        assert!(!spec.env.contains_key("LC_ALL"));
        let spec = non_interactive(LaunchSpec::new("x", ["y"], "/").with_env("LC_ALL", "POSIX"));
        assert_eq!(spec.env["LC_ALL"], "POSIX");
        assert_eq!(spec.env["LANG"], UTF8_LOCALE);
        assert!(is_utf8_locale("C.utf8") && is_utf8_locale("de_DE.UTF-8@euro") && !is_utf8_locale("C"));
    }
}
