//! Sandbox overhead: `true` and an I/O-heavy command, spawned directly and through the helper
//! (workspace-write, network off), with and without a denial collector around the run, and with the
//! denial supervisor watching a workspace that has a `.git` (every write call is then handed to it).
//! Prints the median ratio sandboxed/unsandboxed for each command at the end.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use shellgate_sandbox::{DenialCollector, SandboxLayer, SandboxMode, SandboxPolicy};

const HELPER: &str = env!("CARGO_BIN_EXE_shellgate-sandbox-exec");
/// Writes and reads back 2000 small files in the workspace.
const IO_HEAVY: &str = "for i in $(seq 2000); do echo $i > f$i; done; cat f* > /dev/null; rm f*";

fn command(layer: Option<&SandboxLayer>, argv: &[&str], cwd: &Path) -> Command {
    let spec = shellgate_executor::LaunchSpec::new(argv[0], argv[1..].iter().copied(), cwd);
    let spec = match layer {
        Some(layer) => layer.wrap(spec),
        None => spec,
    };
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn run_once(layer: Option<&SandboxLayer>, argv: &[&str], cwd: &Path, collect: bool) {
    let collector = if collect {
        DenialCollector::start().ok()
    } else {
        None
    };
    let mut child = command(layer, argv, cwd).spawn().expect("spawn");
    let pid = child.id();
    let status = child.wait().expect("wait");
    assert!(status.success(), "{argv:?} failed under {layer:?}");
    if let Some(collector) = collector {
        let _ = collector.finish(&[pid]);
    }
}

fn median(layer: Option<&SandboxLayer>, argv: &[&str], cwd: &Path, runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            run_once(layer, argv, cwd, false);
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("workspace");
    let cwd = dir.path();
    let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, cwd);
    policy.writable_roots = vec!["/tmp".into()];
    let layer = SandboxLayer::new(HELPER, policy.clone());
    let _ = shellgate_sandbox::enable_kernel_audit();
    let collecting = DenialCollector::start().is_ok();
    let supervised = shellgate_sandbox::denial_supervisor().ok().map(|address| {
        std::fs::create_dir_all(cwd.join(".git")).expect(".git");
        let mut policy = policy;
        policy.denial_supervisor = Some(address);
        SandboxLayer::new(HELPER, policy)
    });

    let commands: [(&str, Vec<&str>); 2] = [("true", vec!["true"]), ("io", vec!["sh", "-c", IO_HEAVY])];
    for (name, argv) in &commands {
        let mut group = c.benchmark_group(*name);
        group.sample_size(if *name == "true" { 100 } else { 20 });
        group.bench_function("unsandboxed", |b| {
            b.iter(|| run_once(None, argv, cwd, false));
        });
        group.bench_function("sandboxed", |b| {
            b.iter(|| run_once(Some(&layer), argv, cwd, false));
        });
        if collecting {
            group.bench_function("sandboxed+collector", |b| {
                b.iter(|| run_once(Some(&layer), argv, cwd, true));
            });
        }
        if let Some(supervised) = &supervised {
            group.bench_function("sandboxed+supervisor", |b| {
                b.iter(|| run_once(Some(supervised), argv, cwd, true));
            });
        }
        group.finish();
    }

    for (name, argv) in &commands {
        let runs = if *name == "true" { 201 } else { 21 };
        let plain = median(None, argv, cwd, runs);
        let sandboxed = median(Some(&layer), argv, cwd, runs);
        println!(
            "{name}: unsandboxed {plain:?}, sandboxed {sandboxed:?}, ratio {:.2}, overhead {:?}",
            sandboxed.as_secs_f64() / plain.as_secs_f64(),
            sandboxed.saturating_sub(plain)
        );
        if let Some(supervised) = &supervised {
            let with_supervisor = median(Some(supervised), argv, cwd, runs);
            println!(
                "{name}: supervised {with_supervisor:?}, ratio to unsandboxed {:.2}, to sandboxed {:.2}",
                with_supervisor.as_secs_f64() / plain.as_secs_f64(),
                with_supervisor.as_secs_f64() / sandboxed.as_secs_f64(),
            );
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
