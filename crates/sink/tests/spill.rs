//! Artifact spill: byte identity for large outputs, failures that never disturb the window, quota,
//! and id uniqueness across concurrent store handles.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use proptest::prelude::*;
use shellgate_sink::{
    ArtifactSpill, ArtifactStore, LineRange, OutputWindow, Sink, StoreConfig, WindowConfig,
};

fn store_in(dir: &Path) -> Arc<ArtifactStore> {
    Arc::new(ArtifactStore::open(StoreConfig::new(dir.join("artifacts"))).expect("store"))
}

fn seq(n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 1..=n {
        writeln!(out, "{i}").unwrap();
    }
    out
}

fn run(window: &mut OutputWindow, bytes: &[u8], chunk: usize) {
    for c in bytes.chunks(chunk) {
        window.write(c);
    }
    window.finish();
}

/// Whether the test must not be skipped (CI sets SHELLGATE_REQUIRE_ALL=1).
fn required() -> bool {
    std::env::var("SHELLGATE_REQUIRE_ALL").is_ok_and(|v| v == "1")
}

#[test]
fn seq_300000_spills_byte_identical_and_shows_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let raw = seq(300_000);
    let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store.clone()));
    run(&mut window, &raw, 65_536);
    let s = window.summary();
    assert_eq!(s.total_lines, 300_000);
    assert_eq!(s.total_bytes, raw.len() as u64);
    assert!(s.text.starts_with("1\n2\n3\n"));
    assert!(s.text.ends_with("299999\n300000\n"));
    let artifact = s.artifact.clone().expect("spilled");
    let t = s.truncation.expect("truncated");
    assert_eq!(t.artifact.as_deref(), Some(artifact.as_str()));
    assert_eq!(t.direction, "both");
    assert_eq!(t.shown_ranges.last().unwrap().1, 300_000);
    assert_eq!(fs::read(store.resolve(&artifact).unwrap()).unwrap(), raw);
    // Reading a line range back gives exactly those lines.
    let mut out = Vec::new();
    store
        .copy_lines(
            &artifact,
            LineRange {
                first: Some(150_000),
                last: Some(150_002),
            },
            &mut out,
        )
        .unwrap();
    assert_eq!(out, b"150000\n150001\n150002\n");
    assert!(s.notices.is_empty(), "{:?}", s.notices);
}

#[test]
fn output_that_fits_is_not_spilled() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store.clone()));
    run(&mut window, &seq(1000), 100);
    let s = window.summary();
    assert!(s.artifact.is_none());
    assert!(s.truncation.is_none());
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn a_capped_line_spills_even_when_small() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let mut raw = vec![b'A'; 5000];
    raw.extend_from_slice(b"\nTAIL\n");
    let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store.clone()));
    run(&mut window, &raw, 1000);
    let s = window.summary();
    assert!(s.text.ends_with("\nTAIL\n"));
    let artifact = s.artifact.expect("spilled");
    assert_eq!(fs::read(store.resolve(&artifact).unwrap()).unwrap(), raw);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn artifact_is_byte_identical_for_any_bytes_and_chunking(
        seed in any::<u64>(),
        len in 100_000usize..400_000,
        chunk in 1usize..70_000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let mut state = seed | 1;
        let raw: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store.clone()));
        run(&mut window, &raw, chunk);
        let s = window.summary();
        let artifact = s.artifact.expect("spilled");
        prop_assert_eq!(fs::read(store.resolve(&artifact).unwrap()).unwrap(), raw);
        prop_assert!(s.text.len() < 100 * 1024);
    }
}

#[test]
fn enospc_from_dev_full_keeps_the_window_and_names_the_error() {
    let full = File::options()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let raw = seq(100_000);
    let mut window = OutputWindow::with_spill(
        WindowConfig::default(),
        ArtifactSpill::to_writer("artifact://full", full),
    );
    run(&mut window, &raw, 4096);
    let s = window.summary();
    assert_eq!(s.total_lines, 100_000);
    assert!(s.text.ends_with("99999\n100000\n"));
    assert!(s.artifact.is_none());
    assert!(s.truncation.as_ref().unwrap().artifact.is_none());
    assert!(
        s.notices.iter().any(|n| n.contains("No space left on device")),
        "{:?}",
        s.notices
    );
}

struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn enospc_on_a_full_tmpfs_removes_the_partial_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("tiny");
    fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=128k", "tmpfs"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(!required(), "mounting a tmpfs needs root (CAP_SYS_ADMIN)");
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    let _guard = Unmount(mnt.clone());
    let store = Arc::new(ArtifactStore::open(StoreConfig::new(&mnt)).unwrap());
    let raw = seq(200_000);
    let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store.clone()));
    run(&mut window, &raw, 65_536);
    let s = window.summary();
    assert_eq!(s.total_lines, 200_000);
    assert!(s.text.ends_with("200000\n"));
    assert!(s.artifact.is_none());
    assert!(
        s.notices.iter().any(|n| n.contains("No space left on device")),
        "{:?}",
        s.notices
    );
    assert!(store.list().unwrap().is_empty(), "partial artifact left behind");
}

#[test]
fn an_unusable_store_is_a_notice_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    // The directory disappears and a file takes its place: creating an artifact fails (ENOTDIR).
    fs::remove_dir(store.dir()).unwrap();
    fs::write(store.dir(), b"not a directory").unwrap();
    let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store));
    run(&mut window, &seq(100_000), 65_536);
    let s = window.summary();
    assert_eq!(s.total_lines, 100_000);
    assert!(s.artifact.is_none());
    assert!(
        s.notices
            .iter()
            .any(|n| n.starts_with("Full output was not saved")),
        "{:?}",
        s.notices
    );
}

#[test]
fn the_quota_limits_an_artifact_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = StoreConfig::new(dir.path().join("q"));
    config.quota_bytes = 200_000;
    let store = Arc::new(ArtifactStore::open(config).unwrap());
    let raw = seq(100_000);
    let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store.clone()));
    run(&mut window, &raw, 65_536);
    let s = window.summary();
    let artifact = s.artifact.expect("partial artifact kept");
    let saved = fs::read(store.resolve(&artifact).unwrap()).unwrap();
    assert_eq!(saved, &raw[..200_000]);
    assert!(
        s.notices.iter().any(|n| n.contains("holds only the first")),
        "{:?}",
        s.notices
    );
}

#[test]
fn concurrent_handles_never_share_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(dir.path().join("shared"));
    ArtifactStore::open(config.clone()).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let config = config.clone();
            std::thread::spawn(move || {
                // A separate handle per thread behaves like a separate process.
                let store = ArtifactStore::open(config).unwrap();
                (0..25).map(|_| store.create().unwrap().id.0).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before);
    assert_eq!(ids.len(), 100);
}

#[test]
fn concurrent_producers_together_stay_within_the_quota_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = StoreConfig::new(dir.path().join("q"));
    config.quota_bytes = 3 << 20;
    ArtifactStore::open(config.clone()).unwrap();
    // Three writers, each its own handle (like three engines), each producing 4 MiB at once.
    let producers: Vec<_> = (0..3)
        .map(|i| {
            let config = config.clone();
            std::thread::spawn(move || {
                let store = Arc::new(ArtifactStore::open(config).unwrap());
                let raw = vec![b'a' + i; 4 << 20];
                let mut window = OutputWindow::with_spill(WindowConfig::default(), ArtifactSpill::new(store));
                for chunk in raw.chunks(64 * 1024) {
                    window.write(chunk);
                    std::thread::yield_now();
                }
                window.finish();
                window.summary()
            })
        })
        .collect();
    let summaries: Vec<_> = producers.into_iter().map(|p| p.join().unwrap()).collect();
    let store = ArtifactStore::open(config.clone()).unwrap();
    let used: u64 = store.list().unwrap().iter().map(|a| a.bytes).sum();
    assert!(
        used <= config.quota_bytes,
        "{used} bytes in a store of {}",
        config.quota_bytes
    );
    for s in &summaries {
        // The window is never lost, whatever the artifact could keep.
        assert_eq!(s.total_bytes, 4 << 20);
        if s.artifact.is_some() {
            assert!(
                s.notices.iter().any(|n| n.contains("quota was reached")),
                "{:?}",
                s.notices
            );
        }
    }
    // Finished writers hold no room.
    let leases = std::fs::read_dir(&config.dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".lease")
        })
        .count();
    assert_eq!(leases, 0);
}

#[test]
fn each_project_has_a_store_of_its_own() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let (da, db) = (
        StoreConfig::project_dir(a.path()),
        StoreConfig::project_dir(b.path()),
    );
    if std::env::var_os("SHELLGATE_ARTIFACT_DIR").is_none() {
        assert_ne!(da, db);
    }
    assert_eq!(da, StoreConfig::project_dir(a.path()));
}
