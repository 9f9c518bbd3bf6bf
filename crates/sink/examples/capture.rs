//! Capture any command's output the way shellgate does: pipe it in, get the model text, the exact
//! totals and, with `--spill DIR`, the full raw stream as an artifact.
//!
//! ```text
//! seq 1 300000 | cargo run -p shellgate-sink --example capture -- --spill /tmp/artifacts
//! ```

use std::io::Read;
use std::sync::Arc;

use shellgate_sink::{ArtifactSpill, ArtifactStore, OutputWindow, Sink, StoreConfig, WindowConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quiet = args.iter().any(|a| a == "--quiet");
    let spill_dir = args
        .iter()
        .position(|a| a == "--spill")
        .and_then(|i| args.get(i + 1));
    let mut window = match spill_dir {
        Some(dir) => {
            let store = Arc::new(ArtifactStore::open(StoreConfig::new(dir))?);
            OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store))
        }
        None => OutputWindow::new(WindowConfig::default()),
    };
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = stdin.read(&mut buf)?;
        if n == 0 {
            break;
        }
        window.write(&buf[..n]);
    }
    window.finish();
    let summary = window.summary();
    if !quiet {
        println!("{}", summary.text);
    }
    println!(
        "-- {} bytes, {} lines; artifact: {}",
        summary.total_bytes,
        summary.total_lines,
        summary.artifact.as_deref().unwrap_or("none")
    );
    if let Some(t) = &summary.truncation {
        println!("-- truncation: {}", serde_json_like(t));
    }
    for notice in &summary.notices {
        println!("-- notice: {notice}");
    }
    Ok(())
}

fn serde_json_like(t: &shellgate_sink::Truncation) -> String {
    format!(
        "direction={} shown={:?} elided_lines={} elided_bytes={}",
        t.direction, t.shown_ranges, t.elided_lines, t.elided_bytes
    )
}
