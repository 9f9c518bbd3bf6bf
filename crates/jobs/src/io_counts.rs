//! What a job's processes have read and written, from `/proc/<pid>/io` (`rchar`, `wchar`): a read
//! count that moved shows a program took its input, and the bytes it wrote since tell how much of
//! its answer is still to arrive.

use std::collections::BTreeMap;

/// Bytes one process has read and written, over all its descriptors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    read: u64,
    written: u64,
}

/// The counts of a set of processes at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeIo(BTreeMap<u32, Counts>);

impl TreeIo {
    /// The counts of `pids` now; `None` when not one of them could be read (no permission, gone).
    pub fn of(pids: impl IntoIterator<Item = u32>) -> Option<Self> {
        let counts: BTreeMap<u32, Counts> = pids
            .into_iter()
            .filter_map(|pid| Some((pid, counts(pid)?)))
            .collect();
        (!counts.is_empty()).then_some(Self(counts))
    }

    /// Whether any process read something since `base` (a process `base` did not know counts
    /// when it read anything at all).
    pub fn read_since(&self, base: &Self) -> bool {
        self.0
            .iter()
            .any(|(pid, now)| now.read > base.0.get(pid).map_or(0, |b| b.read))
    }

    /// Bytes written since `base`, summed over the processes (all of a new process's writes).
    pub fn written_since(&self, base: &Self) -> u64 {
        self.0
            .iter()
            .map(|(pid, now)| {
                now.written
                    .saturating_sub(base.0.get(pid).map_or(0, |b| b.written))
            })
            .sum()
    }
}

fn counts(pid: u32) -> Option<Counts> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    parse(&text)
}

fn parse(text: &str) -> Option<Counts> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.trim().parse::<u64>().ok())
    };
    Some(Counts {
        read: field("rchar:")?,
        written: field("wchar:")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_and_compare() {
        let text = "rchar: 120\nwchar: 7\nsyscr: 3\nsyscw: 1\n";
        assert_eq!(
            parse(text),
            Some(Counts {
                read: 120,
                written: 7
            })
        );
        assert_eq!(parse("syscr: 3\n"), None);
        let base = TreeIo(BTreeMap::from([(10, Counts { read: 5, written: 5 })]));
        let same = base.clone();
        assert!(!same.read_since(&base));
        let later = TreeIo(BTreeMap::from([
            (10, Counts { read: 5, written: 9 }),
            (11, Counts { read: 0, written: 3 }),
        ]));
        assert!(!later.read_since(&base));
        assert_eq!(later.written_since(&base), 7);
        let read = TreeIo(BTreeMap::from([(10, Counts { read: 6, written: 5 })]));
        assert!(read.read_since(&base));
    }

    #[test]
    fn own_counts_move_with_a_read() {
        let me = std::process::id();
        let before = TreeIo::of([me]).expect("own /proc/self/io");
        let _ = std::fs::read("/proc/self/stat").unwrap();
        let after = TreeIo::of([me]).unwrap();
        assert!(after.read_since(&before));
    }
}
