//! Start a background job, feed its stdin, watch its output, then stop its whole tree.
//!
//! ```text
//! cargo run -p shellgate-executor --example background_job
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use shellgate_executor::{
    Flow, PipeExecutor, ShellConfig, Sink, StdinMode, init_subreaper, non_interactive, shell_spec,
};
use tokio::io::AsyncWriteExt;

/// Output shared between the job's task and us.
#[derive(Clone, Default)]
struct SharedOutput(Arc<Mutex<Vec<u8>>>);

impl Sink for SharedOutput {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.0.lock().expect("output lock").extend_from_slice(chunk);
        Flow::Continue
    }
}

#[tokio::main]
async fn main() {
    init_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let command = "while read -r line; do echo \"got: $line\"; done; echo eof; sleep 600 & sleep 600";
    let mut spec = non_interactive(shell_spec(&ShellConfig::default(), command, "/"));
    spec.stdin = StdinMode::Piped;
    spec.timeout = Some(Duration::from_secs(60)); // the job's own limit, independent of ours
    let output = SharedOutput::default();
    let mut job = PipeExecutor::default()
        .spawn(spec, output.clone())
        .expect("spawn");
    println!("job started, pid {}", job.pid());

    let mut stdin = job.take_stdin().expect("piped stdin");
    stdin.write_all(b"one\ntwo\n").await.expect("write");
    drop(stdin); // EOF

    let handle = job.handle(); // cloneable; a registry would keep this
    while !String::from_utf8_lossy(&output.0.lock().expect("lock")).contains("eof") {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!(
        "members now: {:?}",
        handle
            .tree()
            .members()
            .iter()
            .map(|p| &p.comm)
            .collect::<Vec<_>>()
    );
    handle.cancel(); // SIGTERM to the whole tree, SIGKILL after the grace
    let outcome = handle.wait().await;
    print!("{}", String::from_utf8_lossy(&output.0.lock().expect("lock")));
    println!("---\n{outcome:#?}");
}
