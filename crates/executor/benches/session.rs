//! Warm session round trip for `true` against a raw `bash -c true` spawn loop, measured in the same run.
//! Compare `session/warm_true` with `raw/bash_c_true`; `session/warm_export` shows the cost of a state save.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use shellgate_executor::{CancellationToken, SessionKey, SessionManager, find_on_path, init_subreaper};
use shellgate_sink::Discard;

fn session_round_trip(c: &mut Criterion) {
    init_subreaper().expect("subreaper");
    let bash = find_on_path("bash").expect("bash on PATH");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sessions = runtime.block_on(async { SessionManager::default() });
    let key = SessionKey::new("bench").with_shell(&bash);
    let env = BTreeMap::new();
    let timeout = Duration::from_secs(30);
    let run = |command: &str| {
        let mut sink = Discard::default();
        runtime.block_on(sessions.run(
            &key,
            command,
            None,
            &env,
            timeout,
            &mut sink,
            CancellationToken::new(),
        ))
    };
    // Warm up: start the shell (and take the snapshot) outside the measurement.
    assert_eq!(run("true").exit_code, Some(0));

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
    group.bench_function("session/warm_true", |b| {
        b.iter(|| black_box(run("true")));
    });
    // For reference: a command that may change state, so the shell saves its state before replying.
    group.bench_function("session/warm_export", |b| {
        b.iter(|| black_box(run("export SG_BENCH=1")));
    });
    group.finish();
    sessions.shutdown();
}

criterion_group!(benches, session_round_trip);
criterion_main!(benches);
