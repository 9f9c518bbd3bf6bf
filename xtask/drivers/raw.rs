//! Raw Rust baselines, compiled with `rustc -O` at bench time so they run optimized whatever profile
//! built the harness.
//!
//! `raw latency RUNS WARMUP CMD…`: time `bash -c CMD` (output captured) RUNS times; prints
//! `{"CMD": [microseconds, …], …}`.
//! `raw read SCRIPT`: read `bash -c SCRIPT`'s output through a pipe, counting bytes and lines; prints
//! `{"bytes": B, "lines": L}`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Instant;

fn once(cmd: &str) -> f64 {
    let start = Instant::now();
    let out = Command::new("bash").arg("-c").arg(cmd).stdin(Stdio::null()).output().expect("spawn bash");
    let micros = start.elapsed().as_secs_f64() * 1e6;
    assert!(out.status.success(), "bash -c {cmd:?} failed: {}", out.status);
    micros
}

fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if (c as u32) < 0x20 => q.push_str(&format!("\\u{:04x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("latency") => {
            let runs: usize = args[1].parse().expect("RUNS");
            let warmup: usize = args[2].parse().expect("WARMUP");
            let mut fields = Vec::new();
            for cmd in &args[3..] {
                for _ in 0..warmup {
                    once(cmd);
                }
                let samples: Vec<String> = (0..runs).map(|_| format!("{:.3}", once(cmd))).collect();
                fields.push(format!("{}: [{}]", quote(cmd), samples.join(",")));
            }
            println!("{{{}}}", fields.join(", "));
        }
        Some("read") => {
            let mut child = Command::new("bash")
                .arg("-c")
                .arg(&args[1])
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn bash");
            let mut pipe = child.stdout.take().expect("piped");
            let mut buf = vec![0u8; 64 * 1024];
            let (mut bytes, mut lines) = (0u64, 0u64);
            loop {
                let n = pipe.read(&mut buf).expect("read");
                if n == 0 {
                    break;
                }
                bytes += n as u64;
                lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
            }
            let status = child.wait().expect("wait");
            println!("{{\"bytes\": {bytes}, \"lines\": {lines}, \"code\": {}}}", status.code().unwrap_or(-1));
        }
        _ => {
            eprintln!("usage: raw latency RUNS WARMUP CMD… | raw read SCRIPT");
            std::process::exit(2);
        }
    }
}
