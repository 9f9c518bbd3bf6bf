//! Per-command overhead of the pipe executor for `true`, against a raw
//! `std::process::Command::new("bash").arg("-c").arg("true").status()` loop in the same run.
//!
//! The machine may be shared, and load shifts over seconds; so every iteration runs all five
//! variants back to back (interleaved), and each benchmark reports only its own variant's time.
//! Before the criterion groups, a paired summary prints per-variant medians of interleaved rounds
//! from the same time window, with ratios to the raw baseline.
//! Compare `executor/shell_spec` with `raw/bash_c_true`, and `executor/non_interactive` with
//! `raw/bash_c_true_same_env` (bash started with the same non-interactive environment);
//! `executor/shell_spec_unguarded` runs without the guard process ([`PipeExecutor::guard`]).

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use shellgate_executor::{
    Executor, LaunchSpec, PipeExecutor, ShellConfig, init_subreaper, non_interactive, shell_spec,
};
use shellgate_sink::Discard;
use tokio_util::sync::CancellationToken;

struct Variants {
    bash: std::path::PathBuf,
    config: ShellConfig,
    cwd: std::path::PathBuf,
    runtime: tokio::runtime::Runtime,
    exec: PipeExecutor,
    unguarded: PipeExecutor,
}

impl Variants {
    fn raw(&self, env: Option<&LaunchSpec>) -> Duration {
        let start = Instant::now();
        let mut cmd = std::process::Command::new(&self.bash);
        cmd.arg("-c").arg("true");
        if let Some(spec) = env {
            cmd.envs(&spec.env);
        }
        let status = cmd.status().expect("spawn");
        assert!(status.success());
        start.elapsed()
    }

    fn executor(&self, exec: &PipeExecutor, spec: LaunchSpec) -> Duration {
        let start = Instant::now();
        let mut sink = Discard::default();
        let outcome = self
            .runtime
            .block_on(exec.run(spec, &mut sink, CancellationToken::new()));
        assert_eq!(outcome.exit_code, Some(0));
        start.elapsed()
    }

    /// Run all five variants once; return their times in the order of [`NAMES`].
    fn round(&self) -> [Duration; 5] {
        let plain = shell_spec(&self.config, "true", &self.cwd);
        let with_env = non_interactive(plain.clone());
        [
            self.raw(None),
            self.executor(&self.exec, plain.clone()),
            self.executor(&self.unguarded, plain),
            self.raw(Some(&with_env)),
            self.executor(&self.exec, with_env.clone()),
        ]
    }
}

const NAMES: [&str; 5] = [
    "raw/bash_c_true",
    "executor/shell_spec",
    "executor/shell_spec_unguarded",
    "raw/bash_c_true_same_env",
    "executor/non_interactive",
];

fn overhead(c: &mut Criterion) {
    init_subreaper().expect("subreaper");
    let bash = shellgate_executor::find_on_path("bash").expect("bash on PATH");
    let variants = Variants {
        config: ShellConfig {
            shell: Some(bash.clone()),
            ..ShellConfig::default()
        },
        bash,
        cwd: std::env::temp_dir(),
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime"),
        exec: PipeExecutor::default(),
        unguarded: PipeExecutor {
            guard: false,
            ..PipeExecutor::default()
        },
    };
    paired_summary(&variants);
    let mut group = c.benchmark_group("true");
    for (index, name) in NAMES.iter().enumerate() {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| variants.round()[index]).sum());
        });
    }
    group.finish();
}

/// Rounds for the paired summary.
const PAIRED_ROUNDS: usize = 300;

/// Criterion measures each benchmark in its own time window; on a shared machine the load differs
/// between windows. So first run [`PAIRED_ROUNDS`] interleaved rounds and print each variant's median
/// from the same window, with its ratio to its raw baseline.
fn paired_summary(variants: &Variants) {
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); NAMES.len()];
    for _ in 0..PAIRED_ROUNDS {
        for (slot, time) in times.iter_mut().zip(variants.round()) {
            slot.push(time);
        }
    }
    let medians: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort_unstable();
            t[t.len() / 2]
        })
        .collect();
    let baseline = |index: usize| if index < 3 { medians[0] } else { medians[3] };
    eprintln!("paired medians over {PAIRED_ROUNDS} interleaved rounds:");
    for (index, name) in NAMES.iter().enumerate() {
        eprintln!(
            "  {name:32} {:>8.3} ms  ratio {:.2}",
            medians[index].as_secs_f64() * 1e3,
            medians[index].as_secs_f64() / baseline(index).as_secs_f64()
        );
    }
}

criterion_group!(benches, overhead);
criterion_main!(benches);
