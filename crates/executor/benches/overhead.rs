//! Per-command overhead of the pipe executor for `true`, against a raw `bash -c true` spawn loop
//! measured in the same run. Compare the `executor/*` figures with `raw/bash_c_true`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use shellgate_executor::{Executor, PipeExecutor, ShellConfig, init_subreaper, non_interactive, shell_spec};
use shellgate_sink::Discard;
use tokio_util::sync::CancellationToken;

fn overhead(c: &mut Criterion) {
    init_subreaper().expect("subreaper");
    let bash = shellgate_executor::find_on_path("bash").expect("bash on PATH");
    let config = ShellConfig {
        shell: Some(bash.clone()),
        ..ShellConfig::default()
    };
    let cwd = std::env::temp_dir();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let exec = PipeExecutor::default();

    let mut group = c.benchmark_group("true");
    group.bench_function("raw/bash_c_true", |b| {
        b.iter(|| {
            let status = std::process::Command::new(&bash)
                .arg("-c")
                .arg("true")
                .status()
                .expect("spawn");
            black_box(status);
        });
    });
    group.bench_function("executor/shell_spec", |b| {
        b.iter(|| {
            let spec = shell_spec(&config, "true", &cwd);
            let mut sink = Discard::default();
            let outcome = runtime.block_on(exec.run(spec, &mut sink, CancellationToken::new()));
            assert_eq!(outcome.exit_code, Some(0));
        });
    });
    group.bench_function("executor/non_interactive", |b| {
        b.iter(|| {
            let spec = non_interactive(shell_spec(&config, "true", &cwd));
            let mut sink = Discard::default();
            let outcome = runtime.block_on(exec.run(spec, &mut sink, CancellationToken::new()));
            assert_eq!(outcome.exit_code, Some(0));
        });
    });
    group.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
