//! Measures PTY output throughput (with and without screen emulation) against pipes in the same
//! run, and the keystroke round trip through `cat`. Prints one JSON object.
//!
//! `cargo run --release -p shellgate-pty --example pty_bench -- [--mb N] [--runs N] [--keys N]`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::termios::{OutputFlags, SetArg, tcgetattr, tcsetattr};
use shellgate_executor::{CancellationToken, Executor, LaunchSpec, PipeExecutor, RunStatus};
use shellgate_pty::{PtyExecutor, PtyOptions, PtyProcess};
use shellgate_sink::FnSink;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Throughput in MB/s of one run of the generator through `exec`.
async fn throughput(exec: &impl Executor, mb: u64) -> f64 {
    let script = format!("head -c {mb}M /dev/zero | tr '\\0' a");
    let spec = LaunchSpec::new("sh", ["-c", script.as_str()], "/").with_timeout(Duration::from_secs(600));
    let total = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&total);
    let mut sink = FnSink(move |chunk: &[u8]| {
        counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    });
    let start = Instant::now();
    let outcome = exec.run(spec, &mut sink, CancellationToken::new()).await;
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(total.load(Ordering::Relaxed), mb << 20, "every byte arrives");
    mb as f64 / secs
}

/// Throughput in MB/s of the bare terminal: the generator under portable-pty, read by a blocking loop
/// that does nothing else; the kernel's ceiling for the PTY path on this machine, with the
/// terminal's output processing (`opost`) on or off.
fn bare_terminal(mb: u64, output_processing: bool) -> f64 {
    use std::io::Read;
    let pair = portable_pty::native_pty_system()
        .openpty(portable_pty::PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    if !output_processing {
        use std::os::unix::fs::OpenOptionsExt;
        let tty = pair.master.tty_name().expect("terminal name");
        let terminal = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(tty)
            .expect("open the terminal");
        let mut attrs = tcgetattr(&terminal).expect("tcgetattr");
        attrs.output_flags.remove(OutputFlags::OPOST);
        tcsetattr(&terminal, SetArg::TCSANOW, &attrs).expect("tcsetattr");
    }
    let mut cmd = portable_pty::CommandBuilder::new("sh");
    cmd.args(["-c", &format!("head -c {mb}M /dev/zero | tr '\\0' a")]);
    let start = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    let _ = child.wait();
    assert_eq!(total, mb << 20, "every byte arrives");
    mb as f64 / start.elapsed().as_secs_f64()
}

/// Throughput in MB/s of the interactive handle's output stream (reader thread and channel), as
/// background jobs use it.
fn process_stream(mb: u64) -> f64 {
    let script = format!("head -c {mb}M /dev/zero | tr '\\0' a");
    let spec = LaunchSpec::new("sh", ["-c", script.as_str()], "/");
    let options = PtyOptions {
        emulate_screen: false,
        ..PtyOptions::default()
    };
    let start = Instant::now();
    let mut process = PtyProcess::spawn(&spec, &options).expect("spawn");
    let mut output = process.take_output().expect("output");
    let mut total = 0u64;
    while let Some(chunk) = output.blocking_recv() {
        total += chunk.len() as u64;
    }
    assert_eq!(total, mb << 20, "every byte arrives");
    mb as f64 / start.elapsed().as_secs_f64()
}

/// Keystroke round trips through `cat` in raw mode, in microseconds, sorted.
fn round_trips(count: u64) -> Vec<f64> {
    let spec = LaunchSpec::new("sh", ["-c", "stty raw -echo; echo ready; exec cat"], "/");
    let mut process = PtyProcess::spawn(&spec, &PtyOptions::default()).expect("spawn cat");
    let mut output = process.take_output().expect("output");
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("ready") {
        seen.extend(output.blocking_recv().expect("cat starts"));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while process.waiting_for_input() != Some(true) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut samples = Vec::new();
    for i in 0..count {
        let byte = b'a' + (i % 26) as u8;
        let start = Instant::now();
        process.write(&[byte]).expect("write");
        loop {
            let chunk = output.blocking_recv().expect("echo");
            if chunk.contains(&byte) {
                break;
            }
        }
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    samples
}

/// Throughput samples of one kind, in MB/s, in run order.
#[derive(Default)]
struct Samples(Vec<f64>);

impl Samples {
    fn best(&self) -> f64 {
        self.0.iter().copied().fold(0.0, f64::max)
    }

    fn median(&self) -> f64 {
        median(self.0.clone())
    }

    /// Median of the per-run ratios against `base` (each run against the pipe run next to it).
    fn paired_ratio(&self, base: &Samples) -> f64 {
        median(self.0.iter().zip(&base.0).map(|(a, b)| a / b).collect())
    }

    fn json(&self, base: &Samples) -> serde_json::Value {
        serde_json::json!({
            "best_mb_s": self.best(),
            "median_mb_s": self.median(),
            "ratio_best": self.best() / base.best(),
            "ratio_median": self.median() / base.median(),
            "ratio_paired_median": self.paired_ratio(base),
            "samples_mb_s": self.0.iter().map(|v| v.round()).collect::<Vec<_>>(),
        })
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let mb = arg("--mb", 50);
    let runs = arg("--runs", 5).max(1);
    let keys = arg("--keys", 200).max(1);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    // Runs are interleaved (pipes measured before and after the others in each round), so load from
    // other processes on the machine affects every kind alike; best, median and the median of the
    // per-round ratios are reported.
    let mut pipes = Samples::default();
    let mut pty_raw = Samples::default();
    let mut pty_screen = Samples::default();
    let mut bare_raw = Samples::default();
    let mut bare_cooked = Samples::default();
    let mut stream = Samples::default();
    rt.block_on(async {
        let raw = PtyExecutor::with_options(PtyOptions {
            emulate_screen: false,
            ..PtyOptions::default()
        });
        let screen = PtyExecutor::default();
        for _ in 0..runs {
            let before = throughput(&PipeExecutor::default(), mb).await;
            pty_raw.0.push(throughput(&raw, mb).await);
            stream.0.push(tokio::task::block_in_place(|| process_stream(mb)));
            bare_raw
                .0
                .push(tokio::task::block_in_place(|| bare_terminal(mb, false)));
            bare_cooked
                .0
                .push(tokio::task::block_in_place(|| bare_terminal(mb, true)));
            pty_screen.0.push(throughput(&screen, mb).await);
            let after = throughput(&PipeExecutor::default(), mb).await;
            pipes.0.push(before.max(after));
        }
    });
    let rtt = round_trips(keys);
    let pick = |q: f64| rtt[((rtt.len() - 1) as f64 * q).round() as usize];
    let report = serde_json::json!({
        "command": format!("head -c {mb}M /dev/zero | tr '\\0' a"),
        "runs": runs,
        "pipes": {
            "best_mb_s": pipes.best(),
            "median_mb_s": pipes.median(),
            "samples_mb_s": pipes.0.iter().map(|v| v.round()).collect::<Vec<_>>(),
        },
        "vs_pipes": {
            "pty_without_screen": pty_raw.json(&pipes),
            "pty_process_stream": stream.json(&pipes),
            "bare_terminal_without_opost": bare_raw.json(&pipes),
            "bare_terminal_cooked": bare_cooked.json(&pipes),
            "pty_with_screen": pty_screen.json(&pipes),
        },
        "keystroke_round_trip_us": {
            "samples": rtt.len(),
            "median": pick(0.5),
            "p90": pick(0.9),
            "max": pick(1.0),
        },
    });
    println!("{report:#}");
}
