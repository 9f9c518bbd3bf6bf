//! Opening and closing many terminals leaks no file descriptors (its own binary: the count of
//! `/proc/self/fd` must not be disturbed by other tests).

use std::time::{Duration, Instant};

use shellgate_executor::{CancellationToken, Executor, LaunchSpec, RunStatus};
use shellgate_pty::{PtyExecutor, PtyOptions, PtyProcess};
use shellgate_sink::Collect;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn a_thousand_open_close_cycles_leak_nothing() {
    let spec = LaunchSpec::new("true", Vec::<String>::new(), "/");
    let options = PtyOptions {
        emulate_screen: false,
        ..PtyOptions::default()
    };
    // Warm up lazily created descriptors (runtime, /proc handles) before counting.
    drop(PtyProcess::spawn(&spec, &options).unwrap());
    let before = open_fds();
    for i in 0..1000 {
        let mut process = PtyProcess::spawn(&spec, &options).unwrap();
        let mut output = process.take_output().unwrap();
        if i % 2 == 0 {
            // Half of them run to the end and are resized after exit.
            while output.blocking_recv().is_some() {}
            let end = Instant::now() + Duration::from_secs(20);
            while process.try_wait().is_none() {
                assert!(Instant::now() < end, "process never exited");
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = process.resize(80, 24);
        }
        // The other half are dropped while possibly still running.
        drop(output);
        drop(process);
    }
    let after = open_fds();
    assert_eq!(before, after, "file descriptors leaked by the interactive handle");

    // The executor path reads the terminal on its own task; it must not leak either.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let exec = PtyExecutor::default();
    let before = open_fds();
    rt.block_on(async {
        for _ in 0..100 {
            let mut sink = Collect::default();
            let spec = LaunchSpec::new("sh", ["-c", "echo hi"], "/");
            let outcome = exec.run(spec, &mut sink, CancellationToken::new()).await;
            assert_eq!(outcome.status, RunStatus::Completed);
            assert_eq!(sink.bytes, b"hi\n");
        }
    });
    assert_eq!(before, open_fds(), "file descriptors leaked by the executor");
}
