//! With the engine as a child subreaper, processes a terminal session leaves behind are adopted by
//! the engine; runs must stop and reap them (its own binary: the subreaper setting is process-wide).

use std::time::{Duration, Instant};

use shellgate_executor::{CancellationToken, Executor, LaunchSpec, RunStatus, tree};
use shellgate_pty::{PtyExecutor, PtyOptions, PtyProcess};
use shellgate_sink::Collect;

/// Children of this process, with their state letters.
fn own_children() -> Vec<(u32, char)> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let rest = &stat[stat.rfind(')')? + 2..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?.chars().next()?;
            let ppid: u32 = fields.next()?.parse().ok()?;
            (ppid == me).then_some((pid, state))
        })
        .collect()
}

fn settle(what: &str) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let children = own_children();
        if children.is_empty() {
            return;
        }
        assert!(Instant::now() < end, "{what}: children left behind: {children:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn leftovers_are_killed_and_reaped_under_a_subreaper() {
    tree::init_subreaper().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // A leftover that ignores the hangup and would run for long: killed and reaped.
    let spec = LaunchSpec::new(
        "sh",
        [
            "-c",
            "trap '' HUP; sleep 981.1234 > /dev/null 2>&1 & echo started",
        ],
        "/",
    );
    let mut out = Collect::default();
    let outcome = rt.block_on(PtyExecutor::default().run(spec, &mut out, CancellationToken::new()));
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.notices.len(), 1, "{:?}", outcome.notices);
    settle("after a leftover was stopped");

    // A short-lived leftover that ends by itself after the program: reaped when the handle goes.
    let spec = LaunchSpec::new(
        "sh",
        ["-c", "(sleep 0.2; true) > /dev/null 2>&1 & echo started"],
        "/",
    );
    let mut process = PtyProcess::spawn(&spec, &PtyOptions::default()).unwrap();
    let mut output = process.take_output().unwrap();
    while output.blocking_recv().is_some() {}
    std::thread::sleep(Duration::from_millis(600));
    drop(process);
    settle("after a leftover ended on its own");
}
