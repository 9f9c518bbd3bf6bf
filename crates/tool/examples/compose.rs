//! Compose the stage crates by hand: normalize, intercept, execute into a bounded window.

use shellgate::executor::{Executor, PipeExecutor, ShellConfig, shell_spec};
use shellgate::intercept::{Chain, Context, Interceptor, Verdict, from_fn};
use shellgate::normalize::{Normalizer, StandardNormalizer};
use shellgate::sink::{OutputWindow, Sink, WindowConfig};
use shellgate::{BashParams, BashTool, CancellationToken};

#[tokio::main]
async fn main() {
    // 1. Understand the command once.
    let cmd = StandardNormalizer::default().normalize("  seq 1 100000  ");

    // 2. Judge it: a chain of interceptors, strictest verdict wins.
    let policy = Chain::new().with(from_fn(|c, _| {
        if c.script.contains("rm -rf /") {
            Verdict::deny("root-wipe", "refusing to wipe /")
        } else {
            Verdict::Allow
        }
    }));
    assert_eq!(policy.inspect(&cmd, &Context::default()), Verdict::Allow);

    // 3. Run it into a bounded window: memory stays O(window) whatever the output size.
    let spec = shell_spec(&ShellConfig::default(), &cmd.script, std::env::temp_dir());
    let mut window = OutputWindow::new(WindowConfig::default());
    let outcome = PipeExecutor::default()
        .run(spec, &mut window, CancellationToken::new())
        .await;
    window.finish();
    let summary = window.summary();
    println!(
        "exit {:?}, {} lines, {} bytes, truncated: {}",
        outcome.exit_code,
        summary.total_lines,
        summary.total_bytes,
        summary.truncation.is_some()
    );

    // Or let the tool do all of it.
    let result = BashTool::default()
        .call(
            BashParams::new("echo hello from shellgate"),
            CancellationToken::new(),
        )
        .await;
    println!("{}", result.model_text());
}
