//! Job ids: short, readable `adjective-noun` slugs that never collide with a live id.

use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};

const ADJECTIVES: &[&str] = &[
    "amber", "azure", "bold", "brave", "brisk", "calm", "clever", "crisp", "dawn", "deft", "eager", "fair",
    "fancy", "fast", "fresh", "gentle", "glad", "golden", "grand", "green", "happy", "keen", "kind",
    "lively", "lucky", "mellow", "mild", "neat", "nimble", "noble", "proud", "quick", "quiet", "rapid",
    "sharp", "shy", "silver", "steady", "swift", "tidy", "warm", "young",
];

const NOUNS: &[&str] = &[
    "atlas", "badger", "basil", "beacon", "birch", "breeze", "brook", "canyon", "cedar", "cloud", "comet",
    "coral", "cove", "delta", "dune", "ember", "falcon", "fern", "fjord", "forest", "gulf", "harbor",
    "heron", "island", "lagoon", "lake", "lark", "maple", "meadow", "mesa", "nebula", "oak", "orbit",
    "otter", "pine", "prairie", "quartz", "raven", "reef", "ridge", "river", "sage", "shore", "sparrow",
    "spruce", "summit", "tide", "trail", "valley", "willow", "wren", "zephyr",
];

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh pseudo-random number; seeded from the OS through `RandomState`, so ids differ between runs.
fn random() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

fn pick<'a>(words: &[&'a str]) -> &'a str {
    words[(random() % words.len() as u64) as usize]
}

/// A new id for which `taken` is false.
///
/// Tries plain `adjective-noun` slugs, then numbered ones (`-2` … `-12`), then three-word slugs, then a
/// three-word slug with a random suffix; the last step loops until it finds a free id, so it never fails.
pub fn new_job_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..12 {
        let base = format!("{}-{}", pick(ADJECTIVES), pick(NOUNS));
        if !taken(&base) {
            return base;
        }
        for n in 2..=12 {
            let candidate = format!("{base}-{n}");
            if !taken(&candidate) {
                return candidate;
            }
        }
    }
    for _ in 0..12 {
        let candidate = format!("{}-{}-{}", pick(ADJECTIVES), pick(NOUNS), pick(NOUNS));
        if !taken(&candidate) {
            return candidate;
        }
    }
    loop {
        let candidate = format!(
            "{}-{}-{}-{:04x}",
            pick(ADJECTIVES),
            pick(NOUNS),
            pick(NOUNS),
            random() & 0xffff
        );
        if !taken(&candidate) {
            return candidate;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_adjective_noun_slugs() {
        let id = new_job_id(|_| false);
        let (adj, noun) = id.split_once('-').unwrap();
        assert!(ADJECTIVES.contains(&adj), "{id}");
        assert!(NOUNS.contains(&noun), "{id}");
    }

    #[test]
    fn ids_stay_unique_past_the_plain_slug_space() {
        let capacity = ADJECTIVES.len() * NOUNS.len();
        let mut seen = HashSet::new();
        for _ in 0..capacity + 500 {
            let id = new_job_id(|c| seen.contains(c));
            assert!(seen.insert(id));
        }
    }

    #[test]
    fn falls_back_when_every_short_slug_is_taken() {
        let id = new_job_id(|c| c.split('-').count() < 3);
        assert!(id.split('-').count() >= 3, "{id}");
    }
}
