//! [`Policy`]: the command policy (SPEC I-1…I-6) as one interceptor.

mod explain;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use shellgate_normalize::Normalized;
use shellgate_normalize::shell_words::is_shell_word;

use crate::analyze::{self, Invocation, Segment, SegmentKind};
use crate::argv::{basename, render, static_prefix};
use crate::judgement::{Basis, Decision, Judgement, SegmentVerdict};
use crate::meaning::CommandView;
use crate::path_lookup::PathLookup;
use crate::pattern::Pattern;
use crate::redirect::{RedirectRules, default_rules};
use crate::{
    AskMode, Config, ConfigError, Context, EnvConfig, InterceptConfig, Interceptor, LooserRefused,
    PolicyConfig, RuleEntry, Security, Verdict, preflight, safe,
};

/// Programs that only print about the command named in their arguments (`man git push`).
const NOT_RUNNERS: &[&str] = &[
    "man", "info", "pinfo", "tldr", "whatis", "apropos", "whereis", "which",
];

/// The name of the built-in read-only profile in `allow`.
pub const SAFE_PROFILE: &str = "@safe";

#[derive(Debug)]
struct Rules {
    patterns: Vec<Pattern>,
    /// Indexes of patterns by literal command name.
    by_name: HashMap<String, Vec<usize>>,
    /// Patterns without literal names (globs, paths).
    generic: Vec<usize>,
}

impl Rules {
    fn new(patterns: Vec<Pattern>) -> Self {
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut generic = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            match p.literal_names() {
                Some(names) => {
                    for n in names {
                        by_name.entry(n.to_owned()).or_default().push(i);
                    }
                }
                None => generic.push(i),
            }
        }
        Self {
            patterns,
            by_name,
            generic,
        }
    }

    /// Whether a rule names the program word `w` by one of the names it runs as (`real`: the real
    /// file's; `git-push` is `git`).
    fn may_name(&self, w: &str, real: Option<&str>) -> bool {
        let base = basename(w);
        [Some(base), real, crate::meaning::dispatched(base).map(|d| d.0)]
            .into_iter()
            .flatten()
            .any(|n| self.by_name.contains_key(n))
    }

    /// The first pattern matching `argv`, arguments at `literal_only` matched only literally.
    fn find(
        &self,
        inv_argv: &[crate::argv::Arg],
        open_ended: bool,
        lookup: &PathLookup,
        cwd: Option<&Path>,
        literal_only: &[usize],
    ) -> Option<&Pattern> {
        let name = basename(inv_argv.first()?.get()?);
        let named = self.by_name.get(name).map(Vec::as_slice).unwrap_or_default();
        let mut candidates: Vec<usize> = named.iter().chain(&self.generic).copied().collect();
        candidates.sort_unstable();
        candidates
            .into_iter()
            .map(|i| &self.patterns[i])
            .find(|p| p.matches_covering(inv_argv, open_ended, lookup, cwd, literal_only))
    }
}

#[derive(Debug)]
struct Inner {
    allow: Rules,
    deny: Rules,
    safe: bool,
    lookup: PathLookup,
    /// What program words run as (links followed), cached.
    identity: crate::identity::Identity,
    redirect: RedirectRules,
    preflight: bool,
    tools: Vec<String>,
    /// `[env] allow`: keys a command prefix may set under an allowlist besides the inert ones.
    env_allow: Vec<String>,
    warnings: Vec<String>,
    /// The sections this policy was built from (what `shellgate config` prints).
    policy_config: PolicyConfig,
    intercept_config: InterceptConfig,
}

/// The command policy: security and ask modes, allow and deny rules, the `@safe` profile,
/// dangerous-command and control-command checks, script preflight and redirect-to-tool rules.
/// Cheap to clone (shared rules).
#[derive(Debug, Clone)]
pub struct Policy {
    inner: Arc<Inner>,
    security: Security,
    ask: AskMode,
}

/// Builds a [`Policy`].
#[derive(Debug, Clone)]
pub struct PolicyBuilder {
    policy: PolicyConfig,
    intercept: InterceptConfig,
    search_path: Option<OsString>,
    env_allow: Vec<String>,
}

impl Default for PolicyBuilder {
    fn default() -> Self {
        Self {
            policy: PolicyConfig::default(),
            intercept: InterceptConfig::default(),
            search_path: std::env::var_os("PATH"),
            env_allow: Vec::new(),
        }
    }
}

impl PolicyBuilder {
    /// The `security` mode.
    #[must_use]
    pub fn security(mut self, security: Security) -> Self {
        self.policy.security = security;
        self
    }

    /// The `ask` mode.
    #[must_use]
    pub fn ask(mut self, ask: AskMode) -> Self {
        self.policy.ask = ask;
        self
    }

    /// Add an allow rule (or `@safe`).
    #[must_use]
    pub fn allow(mut self, rule: impl Into<String>) -> Self {
        self.policy.allow.push(rule.into());
        self
    }

    /// Add a deny rule.
    #[must_use]
    pub fn deny(mut self, rule: impl Into<String>) -> Self {
        self.policy.deny.push(rule.into());
        self
    }

    /// Add a rule entry with examples.
    #[must_use]
    pub fn rule(mut self, entry: RuleEntry) -> Self {
        self.policy.rules.push(entry);
        self
    }

    /// Replace the whole `[policy]` section.
    #[must_use]
    pub fn policy_config(mut self, policy: PolicyConfig) -> Self {
        self.policy = policy;
        self
    }

    /// Replace the `[intercept]` section.
    #[must_use]
    pub fn intercept_config(mut self, intercept: InterceptConfig) -> Self {
        self.intercept = intercept;
        self
    }

    /// Turn the built-in redirect-to-tool rules on or off.
    #[must_use]
    pub fn default_redirect_rules(mut self, on: bool) -> Self {
        self.intercept.default_rules = on;
        self
    }

    /// Turn script preflight on or off.
    #[must_use]
    pub fn preflight(mut self, on: bool) -> Self {
        self.intercept.preflight = on;
        self
    }

    /// `[env] allow`: keys a command prefix may set under an allowlist besides the ones known to
    /// be inert.
    #[must_use]
    pub fn env_allow(mut self, keys: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.env_allow = keys.into_iter().map(Into::into).collect();
        self
    }

    /// The PATH bare rule names resolve against (default: the process's `PATH` when the builder
    /// was made).
    #[must_use]
    pub fn search_path(mut self, path: impl Into<OsString>) -> Self {
        self.search_path = Some(path.into());
        self
    }

    /// Parse the rules, check every rule entry's examples, compile the redirect rules.
    pub fn build(self) -> Result<Policy, ConfigError> {
        let mut safe = false;
        let mut allow = Vec::new();
        for rule in &self.policy.allow {
            if rule.trim() == SAFE_PROFILE {
                safe = true;
            } else if rule.trim().starts_with('@') {
                return Err(ConfigError::UnknownProfile(rule.trim().to_owned()));
            } else {
                allow.push(Pattern::parse(rule)?);
            }
        }
        let mut deny: Vec<Pattern> = self
            .policy
            .deny
            .iter()
            .map(|r| Pattern::parse(r))
            .collect::<Result<_, _>>()?;
        for (index, entry) in self.policy.rules.iter().enumerate() {
            match (&entry.allow, &entry.deny) {
                (Some(a), None) if a.trim() == SAFE_PROFILE => safe = true,
                (Some(a), None) => allow.push(Pattern::parse(a)?),
                (None, Some(d)) => deny.push(Pattern::parse(d)?),
                _ => return Err(ConfigError::RuleEntryShape { index }),
            }
        }
        let mut warnings = Vec::new();
        let mut redirect_rules = if self.intercept.default_rules {
            default_rules()
        } else {
            Vec::new()
        };
        redirect_rules.extend(self.intercept.redirect_rules.iter().cloned());
        let redirect = RedirectRules::new(&redirect_rules, &mut warnings);
        let policy = Policy {
            inner: Arc::new(Inner {
                allow: Rules::new(allow),
                deny: Rules::new(deny),
                safe,
                lookup: PathLookup::new(self.search_path.as_ref()),
                identity: crate::identity::Identity::default(),
                redirect,
                preflight: self.intercept.preflight,
                tools: self.intercept.available_tools.clone(),
                env_allow: self.env_allow.clone(),
                warnings,
                policy_config: self.policy.clone(),
                intercept_config: self.intercept.clone(),
            }),
            security: self.policy.security,
            ask: self.policy.ask,
        };
        for entry in &self.policy.rules {
            check_examples(entry, self.search_path.as_ref())?;
        }
        Ok(policy)
    }
}

/// Judge each example of `entry` under a policy holding that rule alone.
fn check_examples(entry: &RuleEntry, search_path: Option<&OsString>) -> Result<(), ConfigError> {
    let (rule, is_allow) = match (&entry.allow, &entry.deny) {
        (Some(a), None) => (a.clone(), true),
        (None, Some(d)) => (d.clone(), false),
        _ => return Ok(()),
    };
    let mut b = PolicyBuilder {
        search_path: search_path.cloned(),
        ..PolicyBuilder::default()
    }
    .security(Security::Allowlist)
    .ask(AskMode::OnMiss)
    .preflight(false);
    b = if is_allow {
        b.allow(rule.clone())
    } else {
        b.deny(rule.clone())
    };
    let alone = b.build()?;
    let hit = |example: &str| {
        let d = alone
            .judge(&Normalized::unchanged(example), &Context::default())
            .decision();
        if is_allow {
            d == Decision::Allow
        } else {
            d == Decision::Deny
        }
    };
    if let Some(example) = entry.matches.iter().find(|e| !hit(e)) {
        return Err(ConfigError::MatchExampleFailed {
            rule,
            example: example.clone(),
        });
    }
    if let Some(example) = entry.not_match.iter().find(|e| hit(e)) {
        return Err(ConfigError::NotMatchExampleFailed {
            rule,
            example: example.clone(),
        });
    }
    Ok(())
}

/// A program word, the directory it was resolved in, and the name it runs as.
type Resolved = (String, Option<std::path::PathBuf>, Option<String>);

/// The name a program word runs as in a directory, when it differs from its own.
type RealName<'a> = dyn Fn(&str, Option<&Path>) -> Option<String> + 'a;

/// What is not known about a command an unjudgeable segment may run.
enum Unknown {
    /// A word only known at run time.
    Word(String),
    /// Why the command line cannot be read (a wrapper's option the policy does not know).
    Reason(String),
}

/// Why one segment got its decision.
struct Finding {
    decision: Decision,
    basis: Basis,
    rule: Option<String>,
    reason: Option<String>,
    suggested_tool: Option<String>,
}

impl Policy {
    /// A builder with the defaults (`security = "full"`, `ask = "on-miss"`, preflight on).
    pub fn builder() -> PolicyBuilder {
        PolicyBuilder::default()
    }

    /// The policy of a file's `[policy]` and `[intercept]` sections, `None` when it has neither.
    pub fn from_sections(
        policy: Option<&PolicyConfig>,
        intercept: Option<&InterceptConfig>,
    ) -> Result<Option<Self>, ConfigError> {
        if policy.is_none() && intercept.is_none() {
            return Ok(None);
        }
        Self::from_config(&Config {
            policy: policy.cloned().unwrap_or_default(),
            intercept: intercept.cloned().unwrap_or_default(),
            env: EnvConfig::default(),
        })
        .map(Some)
    }

    /// The policy of a configuration file's `[policy]` and `[intercept]` sections.
    pub fn from_config(config: &Config) -> Result<Self, ConfigError> {
        Self::builder()
            .policy_config(config.policy.clone())
            .intercept_config(config.intercept.clone())
            .env_allow(config.env.allow.clone())
            .build()
    }

    /// Parse a TOML configuration and build its policy.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        Self::from_config(&Config::from_toml(text)?)
    }

    /// The security mode in force.
    pub fn security(&self) -> Security {
        self.security
    }

    /// The ask mode in force.
    pub fn ask(&self) -> AskMode {
        self.ask
    }

    /// Warnings from loading (skipped redirect rules).
    pub fn warnings(&self) -> &[String] {
        &self.inner.warnings
    }

    /// Whether requests may run elevated (`[policy] elevated`).
    pub fn elevated(&self) -> crate::Elevated {
        self.inner.policy_config.elevated
    }

    /// The `[policy]` section this policy was built from, with the modes in force.
    pub fn policy_config(&self) -> PolicyConfig {
        PolicyConfig {
            security: self.security,
            ask: self.ask,
            ..self.inner.policy_config.clone()
        }
    }

    /// The `[intercept]` section this policy was built from.
    pub fn intercept_config(&self) -> &InterceptConfig {
        &self.inner.intercept_config
    }

    /// This policy with a request's `security`/`ask` applied — only if each is at least as strict
    /// as the configured one (`deny` > `allowlist` > `full`; `always` > `on-miss` > `off`).
    pub fn tightened(&self, security: Option<Security>, ask: Option<AskMode>) -> Result<Self, LooserRefused> {
        let (p, refused) = self.tightened_or_configured(security, ask);
        match refused.into_iter().next() {
            Some(r) => Err(r),
            None => Ok(p),
        }
    }

    /// Like [`Policy::tightened`], but a looser value is ignored (the configured one applies) and
    /// reported, so the caller can show a notice and go on.
    pub fn tightened_or_configured(
        &self,
        security: Option<Security>,
        ask: Option<AskMode>,
    ) -> (Self, Vec<LooserRefused>) {
        let mut p = self.clone();
        let mut refused = Vec::new();
        if let Some(s) = security {
            if s.strictness() >= self.security.strictness() {
                p.security = s;
            } else {
                refused.push(LooserRefused {
                    setting: "security",
                    requested: s.as_str().into(),
                    configured: self.security.as_str().into(),
                });
            }
        }
        if let Some(a) = ask {
            if a.strictness() >= self.ask.strictness() {
                p.ask = a;
            } else {
                refused.push(LooserRefused {
                    setting: "ask",
                    requested: a.as_str().into(),
                    configured: self.ask.as_str().into(),
                });
            }
        }
        (p, refused)
    }

    /// Judge `cmd` in `ctx`, segment by segment.
    pub fn judge(&self, cmd: &Normalized, ctx: &Context) -> Judgement {
        if self.security == Security::Deny {
            let reason = "security = \"deny\": no command runs".to_owned();
            return Judgement {
                verdict: Verdict::deny("security-deny", reason.clone()),
                rule: Some("security-deny".into()),
                reason: Some(reason),
                segments: Vec::new(),
            };
        }
        let (verdicts, mut findings) = self.analyzed(cmd, ctx, |segments, cwd, real_name| {
            let mut verdicts = Vec::with_capacity(segments.len() + 1);
            let mut findings = Vec::with_capacity(segments.len() + 1);
            for seg in segments {
                let f = self.judge_segment(seg, cwd, real_name);
                verdicts.push(segment_verdict(seg, &f));
                findings.push(f);
            }
            (verdicts, findings)
        });
        if !self.inner.redirect.is_empty() {
            let available = |tool: &str| self.inner.tools.iter().chain(&ctx.tool_names).any(|t| t == tool);
            if let Some((tool, message)) = self.inner.redirect.check(cmd, &available) {
                findings.push(Finding {
                    decision: Decision::Deny,
                    basis: Basis::Redirect,
                    rule: Some(format!("redirect:{tool}")),
                    reason: Some(message),
                    suggested_tool: Some(tool),
                });
            }
        }
        self.combine(&findings, verdicts)
    }

    /// The segments of `cmd` in `ctx`, given to `then` with the directory the command starts in
    /// and the resolver of program words (each resolved once).
    fn analyzed<R>(
        &self,
        cmd: &Normalized,
        ctx: &Context,
        then: impl FnOnce(&[Segment], Option<&Path>, &RealName<'_>) -> R,
    ) -> R {
        // Repository verdicts kept from earlier judgements are checked against the files again.
        safe::new_judgement();
        let lifted = lifted_cwd(cmd, ctx);
        // Without a directory in the context the command runs in the engine's own.
        let process_cwd = ctx.cwd.is_none().then(|| std::env::current_dir().ok()).flatten();
        let cwd = lifted
            .as_deref()
            .or(ctx.cwd.as_deref())
            .or(process_cwd.as_deref());
        let is_command_name = |name: &str| {
            // A function must not shadow a builtin or keyword either.
            is_shell_word(name)
                || safe::knows(name)
                || self.inner.allow.by_name.contains_key(name)
                || self.inner.deny.by_name.contains_key(name)
                || self.inner.lookup.resolve(name).is_some()
        };
        // Each program word is resolved once per judgement.
        let resolved: std::cell::RefCell<Vec<Resolved>> = std::cell::RefCell::default();
        let real_name = |word: &str, dir: Option<&Path>| -> Option<String> {
            let dir = dir.or(cwd).filter(|_| word.contains('/'));
            if let Some((_, _, hit)) = resolved
                .borrow()
                .iter()
                .find(|(w, d, _)| w == word && d.as_deref() == dir)
            {
                return hit.clone();
            }
            let name = self.inner.identity.real_name(word, dir, &self.inner.lookup);
            resolved
                .borrow_mut()
                .push((word.to_owned(), dir.map(Path::to_path_buf), name.clone()));
            name
        };
        let opts = analyze::Options {
            cwd,
            is_command_name: &is_command_name,
            session: ctx.session.as_deref(),
            workspace: ctx.workspace.as_deref(),
            real_name: &real_name,
        };
        let segments = match &cmd.tree {
            Ok(script) => analyze::analyze(script, &cmd.script, &opts),
            Err(e) => vec![analyze::unjudgeable(
                &cmd.script,
                format!("the command does not parse: {e}"),
            )],
        };
        then(&segments, cwd, &real_name)
    }

    /// Ask, or deny when asking is off.
    fn ask_or_deny(&self) -> Decision {
        if self.ask == AskMode::Off {
            Decision::Deny
        } else {
            Decision::Ask
        }
    }

    fn judge_segment(&self, seg: &Segment, cwd: Option<&Path>, real_name: &RealName<'_>) -> Finding {
        let finding = |decision, basis, rule: &str, reason: Option<String>| Finding {
            decision,
            basis,
            rule: Some(rule.to_owned()),
            reason,
            suggested_tool: None,
        };
        if let Some(why) = &seg.control {
            return finding(
                Decision::Deny,
                Basis::Control,
                "control-command",
                Some(format!(
                    "{why}; the engine's administration is not reachable from a command"
                )),
            );
        }
        if let Some(f) = self.deny_finding(seg, cwd, real_name) {
            return f;
        }
        if let Some(why) = &seg.danger {
            return finding(
                self.ask_or_deny(),
                Basis::Dangerous,
                "dangerous",
                Some(why.clone()),
            );
        }
        if let SegmentKind::Run(inv) = &seg.kind
            && self.inner.preflight
            && let Some(why) = preflight::check(&inv.argv, cwd)
        {
            return finding(Decision::Deny, Basis::Preflight, "preflight", Some(why));
        }
        if self.security == Security::Full {
            return finding(Decision::Allow, Basis::Full, "security-full", None);
        }
        match &seg.kind {
            SegmentKind::Inert => finding(Decision::Allow, Basis::Inert, "inert", None),
            SegmentKind::Unjudgeable(why) => finding(
                self.ask_or_deny(),
                Basis::Unjudgeable,
                "unjudgeable",
                Some(why.clone()),
            ),
            SegmentKind::Run(inv) => self.judge_invocation(inv, cwd),
        }
    }

    /// A deny rule the segment meets, by spelling or by meaning; one it could meet once its run-time
    /// words are known asks.
    fn deny_finding(&self, seg: &Segment, cwd: Option<&Path>, real_name: &RealName<'_>) -> Option<Finding> {
        let lookup = &self.inner.lookup;
        let deny = &self.inner.deny;
        if deny.patterns.is_empty() {
            return None;
        }
        let (argv, dir, open_ended) = match &seg.kind {
            SegmentKind::Run(inv) => {
                let hit = deny
                    .find(&inv.argv, inv.open_ended, lookup, cwd, &[])
                    .or_else(|| deny.find(&inv.written, false, lookup, cwd, &[]));
                if let Some(p) = hit {
                    return Some(deny_rule_met(p, &inv.argv));
                }
                (&inv.argv, inv.dir.as_deref().or(cwd), inv.open_ended)
            }
            _ => return self.uncertain_finding(seg, cwd, real_name),
        };
        let config_env = match &seg.kind {
            SegmentKind::Run(inv) => inv.config_env.as_deref(),
            _ => None,
        };
        let word = argv.first().and_then(|a| a.get());
        let real = word.and_then(|w| real_name(w, dir));
        if let Some(w) = word
            && !crate::meaning::uncertain(&argv[0])
            && deny.generic.is_empty()
            && !deny.may_name(w, real.as_deref())
        {
            return self.command_in_arguments(argv, real.as_deref(), dir, cwd);
        }
        let view = CommandView::configured(argv, real.clone(), dir, config_env);
        let definite = deny
            .patterns
            .iter()
            .find(|p| (!open_ended || p.open_ended()) && p.matches_view(&view, lookup, cwd, false));
        if let Some(p) = definite {
            return Some(deny_rule_met(p, argv));
        }
        // A function body where the function is defined: its run-time words are judged where it is
        // called, with the call's arguments.
        if seg.in_definition {
            return None;
        }
        let Some((p, word)) = self.could_meet(&view, open_ended, cwd) else {
            return self.command_in_arguments(argv, real.as_deref(), dir, cwd);
        };
        let what = if word == crate::meaning::APPENDED {
            "the words appended at run time are".to_owned()
        } else {
            format!("`{word}` is")
        };
        Some(Finding {
            decision: self.ask_or_deny(),
            basis: Basis::DenyRule,
            rule: Some(p.source.clone()),
            reason: Some(format!(
                "{what} only known when it runs and could make `{}` match the deny rule `{}`",
                seg.text, p.source
            )),
            suggested_tool: None,
        })
    }

    /// A program the analysis does not know (no option table, not `@safe`, no wrapper it looks
    /// through) may run the words after it as a command (`ssh host git push`, `fakeroot rm -rf
    /// x`): a tail of its arguments that a deny rule could match asks.
    fn command_in_arguments(
        &self,
        argv: &[crate::argv::Arg],
        real: Option<&str>,
        dir: Option<&Path>,
        cwd: Option<&Path>,
    ) -> Option<Finding> {
        let deny = &self.inner.deny;
        let name = basename(argv.first()?.get()?);
        let known = |n: &str| {
            crate::meaning::program(n).is_some()
                || safe::knows(n)
                || is_shell_word(n)
                || analyze::looked_through(n)
                || crate::meaning::dispatched(n).is_some()
                || NOT_RUNNERS.contains(&n)
        };
        if known(name) || real.is_some_and(known) {
            return None;
        }
        let (k, p) = argv.iter().enumerate().take(32).skip(1).find_map(|(k, a)| {
            let w = a
                .get()
                .filter(|_| !a.option_like() && !crate::meaning::uncertain(a))?;
            if !deny.may_name(w, None) {
                return None;
            }
            let view = CommandView::new(&argv[k..], None, dir);
            let p = deny
                .patterns
                .iter()
                .find(|p| p.matches_view(&view, &self.inner.lookup, cwd, true))?;
            Some((k, p))
        })?;
        Some(Finding {
            decision: self.ask_or_deny(),
            basis: Basis::DenyRule,
            rule: Some(p.source.clone()),
            reason: Some(format!(
                "`{name}` may run the words after it as a command: `{}` could match the deny rule `{}`",
                render(&argv[k..]),
                p.source
            )),
            suggested_tool: None,
        })
    }

    /// A deny rule an unjudgeable segment could meet through one of the command lines it may run.
    fn uncertain_finding(
        &self,
        seg: &Segment,
        cwd: Option<&Path>,
        real_name: &RealName<'_>,
    ) -> Option<Finding> {
        if seg.in_definition {
            return None;
        }
        let (p, unknown) = self.could_run(seg, cwd, real_name)?;
        let what = match unknown {
            Unknown::Word(w) => format!("`{w}` is only known when it runs and"),
            Unknown::Reason(why) => format!("{why}, which"),
        };
        Some(Finding {
            decision: self.ask_or_deny(),
            basis: Basis::DenyRule,
            rule: Some(p.source.clone()),
            reason: Some(format!(
                "{what} could make `{}` match the deny rule `{}`",
                seg.text, p.source
            )),
            suggested_tool: None,
        })
    }

    /// The deny rule one of the command lines an unjudgeable segment may run could meet, with what
    /// is unknown about it.
    fn could_run(
        &self,
        seg: &Segment,
        cwd: Option<&Path>,
        real_name: &RealName<'_>,
    ) -> Option<(&Pattern, Unknown)> {
        let deny = &self.inner.deny;
        for argv in &seg.uncertain {
            let word = argv.first().and_then(|a| a.get());
            let real = word.and_then(|w| real_name(w, cwd));
            if let Some(w) = word
                && !crate::meaning::uncertain(&argv[0])
                && deny.generic.is_empty()
                && !deny.may_name(w, real.as_deref())
            {
                continue;
            }
            let view = CommandView::new(argv, real, cwd);
            let Some(p) = deny
                .patterns
                .iter()
                .find(|p| p.matches_view(&view, &self.inner.lookup, cwd, true))
            else {
                continue;
            };
            let unknown = match (view.uncertain_word(), &seg.kind) {
                (Some(w), _) => Unknown::Word(w.to_owned()),
                (None, SegmentKind::Unjudgeable(why)) => Unknown::Reason(why.clone()),
                (None, _) => Unknown::Reason("it cannot be judged".to_owned()),
            };
            return Some((p, unknown));
        }
        None
    }

    fn judge_invocation(&self, inv: &Invocation, cwd: Option<&Path>) -> Finding {
        let not_inert = || {
            inv.assigned
                .iter()
                .map(|(k, _)| k)
                .find(|k| !self.inner.env_allow.iter().any(|a| a.eq_ignore_ascii_case(k)) && !crate::env_classes::is_inert(&k.to_ascii_uppercase()))
                .map(|k| format!("`{k}=…` in front of the command is not a key known to be inert (add it to `[env] allow`)"))
        };
        let problem = inv
            .problem
            .clone()
            .or_else(|| (self.security == Security::Allowlist).then(not_inert).flatten());
        if let Some(problem) = problem {
            return Finding {
                decision: self.ask_or_deny(),
                basis: Basis::Unjudgeable,
                rule: Some("unjudgeable".into()),
                reason: Some(problem),
                suggested_tool: None,
            };
        }
        let lookup = &self.inner.lookup;
        // `sudo` is never transparent: a rule must name it.
        // A wildcard never covers an option through which the command escapes its rule.
        let matched = if inv.elevated {
            let offset = inv.written.len().saturating_sub(inv.argv.len());
            let escapes: Vec<usize> = safe::escapes(&inv.argv).into_iter().map(|i| i + offset).collect();
            self.inner.allow.find(&inv.written, false, lookup, cwd, &escapes)
        } else {
            self.inner
                .allow
                .find(&inv.argv, inv.open_ended, lookup, cwd, &safe::escapes(&inv.argv))
        };
        if let Some(p) = matched {
            return Finding {
                decision: Decision::Allow,
                basis: Basis::AllowRule,
                rule: Some(p.source.clone()),
                reason: None,
                suggested_tool: None,
            };
        }
        let safe_result = if self.inner.safe {
            Some(self.safe_check(inv, cwd))
        } else {
            None
        };
        match safe_result {
            Some(Ok(())) => Finding {
                decision: Decision::Allow,
                basis: Basis::SafeProfile,
                rule: Some(SAFE_PROFILE.into()),
                reason: None,
                suggested_tool: None,
            },
            other => {
                let mut reason = format!("no rule allows `{}`", render(&inv.argv));
                if inv.open_ended {
                    reason.push_str(" with arguments appended at run time");
                }
                if let Some(Err(why)) = other {
                    let _ = write!(reason, " ({why})");
                }
                Finding {
                    decision: self.ask_or_deny(),
                    basis: Basis::Miss,
                    rule: Some("allowlist-miss".into()),
                    reason: Some(reason),
                    suggested_tool: None,
                }
            }
        }
    }

    /// The `@safe` profile also requires the command to be the one PATH finds (not `./sed`).
    fn safe_check(&self, inv: &Invocation, cwd: Option<&Path>) -> Result<(), String> {
        let name = inv.argv[0].get().unwrap_or_default();
        if name.contains('/') {
            let base = basename(name);
            let same = match (
                self.inner.lookup.command_path(name, cwd),
                self.inner.lookup.resolve(base),
            ) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            };
            if !same {
                return Err(format!("`{name}` is not the `{base}` found through PATH"));
            }
        } else if !self.inner.lookup.bare_name_is_trusted(name) {
            return Err(format!("`{name}` would be found through a relative PATH entry"));
        }
        // `nohup` sends the output to `nohup.out` when it is a terminal (a PTY run).
        let wrappers = &inv.written[..inv.written.len().saturating_sub(inv.argv.len())];
        if wrappers.iter().any(|a| a.get().map(basename) == Some("nohup")) {
            return Err("`nohup` writes `nohup.out` when its output is a terminal".into());
        }
        let place = safe::Place {
            dir: inv.dir.as_deref(),
            workspace: cwd,
        };
        safe::check(&inv.argv, inv.open_ended, inv.elevated, place)
    }

    fn combine(&self, findings: &[Finding], segments: Vec<SegmentVerdict>) -> Judgement {
        // Strictest wins; among equals the first. Priority breaks ties within deny.
        let priority = |b: Basis| match b {
            Basis::Control => 0,
            Basis::SecurityDeny => 1,
            Basis::DenyRule => 2,
            Basis::Preflight => 3,
            Basis::Redirect => 4,
            Basis::Dangerous => 5,
            _ => 6,
        };
        let top = findings
            .iter()
            .enumerate()
            .max_by(|(ia, a), (ib, b)| {
                a.decision
                    .cmp(&b.decision)
                    .then(priority(b.basis).cmp(&priority(a.basis)))
                    .then(ib.cmp(ia))
            })
            .map(|(_, f)| f);
        let (verdict, rule, reason) = match top {
            None
            | Some(Finding {
                decision: Decision::Allow,
                ..
            }) => {
                if self.ask == AskMode::Always {
                    let reason = "ask = \"always\": every command needs approval".to_owned();
                    (
                        Verdict::ask("ask-always", reason.clone()),
                        Some("ask-always".to_owned()),
                        Some(reason),
                    )
                } else {
                    let rules: Vec<&str> = findings.iter().filter_map(|f| f.rule.as_deref()).collect();
                    let rule = match rules.split_first() {
                        Some((first, rest)) if rest.iter().all(|r| r == first) => Some((*first).to_owned()),
                        Some(_) => Some("allowed".to_owned()),
                        None => None,
                    };
                    (Verdict::Allow, rule, None)
                }
            }
            Some(f) => {
                let rule = f.rule.clone().unwrap_or_default();
                let reason = f.reason.clone().unwrap_or_default();
                let v = match f.decision {
                    Decision::Ask if self.ask == AskMode::Off => Verdict::deny(rule.clone(), reason.clone()),
                    Decision::Ask => Verdict::ask(rule.clone(), reason.clone()),
                    _ => Verdict::Deny {
                        rule: rule.clone(),
                        reason: reason.clone(),
                        suggested_tool: f.suggested_tool.clone(),
                    },
                };
                (v, Some(rule), Some(reason))
            }
        };
        Judgement {
            verdict,
            rule,
            reason,
            segments,
        }
    }
}

impl Policy {
    /// A deny rule the command `view` could meet once its run-time words are known (`open_ended`:
    /// words are appended when it runs), with the word that could make it.
    fn could_meet(
        &self,
        view: &CommandView,
        open_ended: bool,
        cwd: Option<&Path>,
    ) -> Option<(&Pattern, String)> {
        let appended;
        let possible = if open_ended {
            appended = view.with_appended();
            &appended
        } else {
            view
        };
        let word = possible.uncertain_word()?.to_owned();
        let p = self
            .inner
            .deny
            .patterns
            .iter()
            .find(|p| p.matches_view(possible, &self.inner.lookup, cwd, true))?;
        Some((p, word))
    }
}

/// The finding of a deny rule `p` that `argv` meets.
fn deny_rule_met(p: &Pattern, argv: &[crate::argv::Arg]) -> Finding {
    Finding {
        decision: Decision::Deny,
        basis: Basis::DenyRule,
        rule: Some(p.source.clone()),
        reason: Some(format!("`{}` matches the deny rule `{}`", render(argv), p.source)),
        suggested_tool: None,
    }
}

/// The directory a lifted leading `cd DIR &&` (SPEC N-4) names, when the caller's context does
/// not already end in it.
fn lifted_cwd(cmd: &Normalized, ctx: &Context) -> Option<std::path::PathBuf> {
    let dir = cmd.cwd.as_deref()?;
    let expanded = match dir.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", std::env::var("HOME").ok()?)
        }
        _ => dir.to_owned(),
    };
    let p = Path::new(&expanded);
    match ctx.cwd.as_deref() {
        Some(base) if base == p || (!p.is_absolute() && base.ends_with(p)) => None,
        Some(base) => Some(crate::path_lookup::lexical_normalize(&base.join(p))),
        None if p.is_absolute() => Some(p.to_path_buf()),
        None => None,
    }
}

fn segment_verdict(seg: &Segment, f: &Finding) -> SegmentVerdict {
    let (argv, complete) = match &seg.kind {
        SegmentKind::Run(inv) => {
            let argv = if inv.elevated { &inv.written } else { &inv.argv };
            let prefix = static_prefix(argv);
            let complete = prefix.len() == argv.len() && !inv.open_ended;
            (Some(prefix).filter(|p| !p.is_empty()), complete)
        }
        _ => (None, false),
    };
    SegmentVerdict {
        command: seg.text.clone(),
        decision: f.decision,
        rule: f.rule.clone(),
        reason: f.reason.clone(),
        missing: f.basis == Basis::Miss,
        basis: f.basis,
        argv,
        argv_complete: complete,
    }
}

impl Interceptor for Policy {
    fn inspect(&self, cmd: &Normalized, ctx: &Context) -> Verdict {
        self.judge(cmd, ctx).verdict
    }
}
