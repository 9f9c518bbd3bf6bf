//! Run one shell command through the pipe executor and print its output and outcome.
//!
//! ```text
//! cargo run -p shellgate-executor --example run_command -- 'echo out; echo err >&2; false | true'
//! ```

use std::time::Duration;

use shellgate_executor::{Executor, PipeExecutor, ShellConfig, init_subreaper, non_interactive, shell_spec};
use shellgate_sink::Collect;
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() {
    // Once, at startup: escaped descendants are re-parented to us, so they can be found and killed.
    init_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let command = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "echo hello; sleep 30 & echo bye".into());
    let cwd = std::env::current_dir().expect("current directory");
    let spec = non_interactive(shell_spec(&ShellConfig::default(), &command, cwd))
        .with_timeout(Duration::from_secs(10));
    let mut output = Collect::default();
    let outcome = PipeExecutor::default()
        .run(spec, &mut output, CancellationToken::new())
        .await;
    print!("{}", String::from_utf8_lossy(&output.bytes));
    println!("---\n{outcome:#?}");
}
