//! `shellgate check`: the verdict of the configured policy for a command, without running it.

use std::fmt::Write as _;

use anyhow::Context as _;
use shellgate::intercept::{Context, Decision, Judgement};
use shellgate::normalize::{Normalizer, StandardNormalizer};

/// Arguments of `shellgate check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Configuration file (TOML); default: `.shellgate.toml`, then the user's config file.
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Print the judgement as one JSON object: `{"decision", "rule", "reason", "segments"}`.
    #[arg(long)]
    json: bool,
    /// Also print, per command, the canonical form deny rules are matched against, and for a word
    /// only known at run time, the deny rule it could make match.
    #[arg(long)]
    explain: bool,
    /// The command, usually one quoted argument (`-- 'ls | wc -l'`); several words are joined
    /// with spaces, so shell quoting inside them is lost.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<String>,
}

/// Judge the command; the exit status is 0 for allow, 1 for ask, 2 for deny.
pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    let config = crate::rpc::load_config(args.config.as_deref()).context("loading configuration")?;
    let command = args.command.join(" ");
    let Some(policy) = config.policy.as_ref() else {
        // The loaded configuration always has a policy; an embedder's may not.
        anyhow::bail!("no command policy is configured");
    };
    let normalized = StandardNormalizer::default().normalize(&command);
    let ctx = Context {
        tool_names: config.tool_names.clone(),
        cwd: Some(config.cwd.clone()),
        session: None,
        workspace: Some(config.cwd.clone()),
    };
    let judgement = policy.judge(&normalized, &ctx);
    if args.json {
        println!("{}", serde_json::to_string(&judgement)?);
    } else {
        print!("{}", human(&judgement));
    }
    if args.explain && !args.json {
        for line in policy.explain(&normalized, &ctx) {
            println!("  {line}");
        }
    }
    Ok(judgement.decision().exit_code())
}

fn decision_word(d: Decision) -> &'static str {
    match d {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    }
}

/// `ask (dangerous): rm -rf of the home directory` and one indented line per segment.
fn human(j: &Judgement) -> String {
    let mut out = String::from(decision_word(j.decision()));
    if let Some(rule) = &j.rule {
        let _ = write!(out, " ({rule})");
    }
    if let Some(reason) = &j.reason {
        let _ = write!(out, ": {reason}");
    }
    out.push('\n');
    for s in &j.segments {
        let _ = write!(out, "  {:<5} {}", decision_word(s.decision), s.command);
        if let Some(rule) = &s.rule {
            let _ = write!(out, "  [{rule}]");
        }
        if let Some(reason) = s.reason.as_ref().filter(|_| s.decision != Decision::Allow) {
            let _ = write!(out, " — {reason}");
        }
        out.push('\n');
    }
    out
}
