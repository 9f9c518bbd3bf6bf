use std::path::Path;

use shellgate_sink::WindowConfig;

use super::*;

fn small(dir: Option<&Path>) -> JobOutput {
    JobOutput::new(
        "t",
        1024,
        WindowConfig {
            head_bytes: 64,
            tail_bytes: 64,
            ..WindowConfig::default()
        },
        dir.map(|d| SpillTarget::Dir(d.to_path_buf())),
        u64::MAX,
    )
}

#[test]
fn reads_since_a_cursor_without_duplicates() {
    let mut out = small(None);
    out.push(b"one\ntw");
    let first = out.read_since(0, 1 << 20, false);
    assert_eq!(first.text, "one\ntw");
    out.push(b"o\n");
    let second = out.read_since(first.end, 1 << 20, false);
    assert_eq!(second.text, "o\n");
    assert_eq!(second.end, 8);
    assert!(second.skipped.is_none());
}

#[test]
fn holds_back_a_split_character_while_running() {
    let mut out = small(None);
    out.push(&"é".as_bytes()[..1]);
    let read = out.read_since(0, 1 << 20, false);
    assert_eq!((read.text.as_str(), read.end), ("", 0));
    out.push(&"é".as_bytes()[1..]);
    assert_eq!(out.read_since(0, 1 << 20, false).text, "é");
}

#[test]
fn too_much_pending_output_is_skipped_exactly() {
    let mut out = small(None);
    for i in 0..100 {
        out.push(format!("line {i:03}\n").as_bytes());
    }
    let read = out.read_since(0, 100, true);
    let (from, to) = read.skipped.unwrap();
    assert_eq!(from, 0);
    assert_eq!(to + read.text.len() as u64, out.total_bytes());
    assert!(read.text.starts_with("line") && read.text.ends_with("line 099\n"));
}

#[test]
fn spill_keeps_every_line_for_log() {
    let dir = std::env::temp_dir().join(format!("sg-jobs-out-{}", std::process::id()));
    let mut out = small(Some(&dir));
    for i in 0..1000 {
        out.push(format!("{i}\n").as_bytes());
    }
    assert!(out.spill_path().is_some());
    assert_eq!(out.total_lines(), 1000);
    let read = out.lines(0, 3);
    assert_eq!(read.text, "0\n1\n2\n");
    let read = out.lines(998, 5000);
    assert_eq!((read.text.as_str(), read.count), ("998\n999\n", 2));
    let path = out.spill_path().unwrap().to_path_buf();
    drop(out);
    assert!(!path.exists());
}

#[test]
fn without_spill_dropped_lines_are_disclosed() {
    let mut out = small(None);
    for i in 0..1000 {
        out.push(format!("{i}\n").as_bytes());
    }
    let read = out.lines(0, 1000);
    assert!(
        read.notices[0].contains("no longer retained"),
        "{:?}",
        read.notices
    );
    assert!(read.text.ends_with("999\n"));
    assert!(read.first > 0);
    assert_eq!(read.first + read.count, 1000);
}

#[test]
fn spill_stops_at_its_limit_and_says_so() {
    let dir = std::env::temp_dir().join(format!("sg-jobs-limit-{}", std::process::id()));
    let mut out = JobOutput::new(
        "limited",
        1024,
        WindowConfig::default(),
        Some(SpillTarget::Dir(dir.clone())),
        4096,
    );
    for i in 0..2000 {
        out.push(format!("{i}\n").as_bytes());
    }
    let error = out.spill_error().expect("limit reached");
    assert!(error.contains("4096"), "{error}");
    assert!(out.artifact().is_none());
    // The newest lines are still in memory.
    assert_eq!(out.lines(1999, 2000).text, "1999\n");
    drop(out);
    assert!(!dir.join("limited.log").exists());
    let _ = std::fs::remove_dir(&dir);
}
