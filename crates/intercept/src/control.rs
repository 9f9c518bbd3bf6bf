//! The control-command guard (SPEC I-5): commands that would drive the engine's own approval
//! and administration interface are refused, whatever wrapper they hide behind.

use crate::argv::{Arg, basename};

/// Subcommands of the `shellgate` binary that administer the engine.
const CONTROL_SUBCOMMANDS: &[&str] = &["approve", "approvals", "jobs", "config", "trust"];

/// Why `argv` drives the engine's administration, if it does.
pub(crate) fn check(argv: &[Arg], open_ended: bool) -> Option<String> {
    let name = basename(argv.first()?.get()?);
    if is_engine_binary(name) {
        return subcommand(&argv[1..], open_ended)
            .map(|sub| format!("`shellgate {sub}` administers the engine"));
    }
    // Through a package runner or a build of the engine itself.
    let runner_tail = match name {
        "npx" | "bunx" | "pnpx" => Some(1),
        "cargo" if argv.get(1).is_some_and(|a| a.is("run")) => {
            let dashdash = argv.iter().position(|a| a.is("--"))?;
            let names_engine = argv[2..dashdash].iter().any(|a| a.raw.contains("shellgate"));
            let sub = argv.get(dashdash + 1).and_then(Arg::get)?;
            if names_engine && CONTROL_SUBCOMMANDS.contains(&sub)
                || matches!(sub, "approve" | "approvals" | "trust")
            {
                return Some(format!("`cargo run -- {sub}` administers the engine"));
            }
            None
        }
        _ => None,
    }?;
    let rest = &argv[runner_tail..];
    let pos = rest
        .iter()
        .position(|a| a.get().is_some_and(|v| is_engine_binary(basename(v))))?;
    subcommand(&rest[pos + 1..], open_ended).map(|sub| format!("`shellgate {sub}` administers the engine"))
}

fn is_engine_binary(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "shellgate" || name == "shellgate-cli" || name.starts_with("shellgate@")
}

/// The control subcommand among `args`: the first word that is not an option. Dynamic words or
/// appended arguments could be one, so they count.
fn subcommand(args: &[Arg], open_ended: bool) -> Option<String> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.get() {
            None => return Some(a.raw.clone()),
            Some("--config" | "-c") => i += 2,
            Some(v) if v.starts_with('-') => i += 1,
            Some(v) => {
                return CONTROL_SUBCOMMANDS
                    .iter()
                    .find(|s| s.eq_ignore_ascii_case(v))
                    .map(|s| (*s).to_owned());
            }
        }
    }
    open_ended.then(|| "…".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn engine_administration_is_recognised() {
        for c in [
            "shellgate approve abc allow-always",
            "/usr/local/bin/shellgate approvals list",
            "./target/debug/shellgate --config x jobs kill 1",
            "shellgate config",
            "npx shellgate approve 1 deny",
            "cargo run -p shellgate-cli -- jobs",
            "cargo run -- approve x allow-once",
        ] {
            assert!(check(&argv(c), false).is_some(), "{c}");
        }
        for c in [
            "shellgate run ls",
            "shellgate check -- ls",
            "cargo run -- jobs",
            "echo shellgate approve",
        ] {
            assert!(check(&argv(c), false).is_none(), "{c}");
        }
        assert!(
            check(&argv("shellgate"), true).is_some(),
            "xargs may append `approve`"
        );
    }
}
