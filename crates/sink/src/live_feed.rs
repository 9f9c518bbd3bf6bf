//! Live output of a running call (SPEC S-7, T-8): clean text, whole lines, in bounded memory.
//!
//! A [`LiveFeed`] is shared between the run (which appends sanitized lines as they complete) and a
//! reader that takes what is pending whenever it likes — typically on a 50 ms timer, so chunks are
//! coalesced and a quiet stream still shows its last line promptly. When the reader falls behind, the
//! oldest pending text is dropped from the live view (never from the result) and counted.

use std::sync::{Arc, Mutex, PoisonError};

use crate::{Flow, Sanitizer, Sink};

/// Default bound on text held between two reads.
pub const DEFAULT_LIVE_CAPACITY: usize = 64 * 1024;

/// Text taken from a [`LiveFeed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveText {
    /// Clean text (whole lines, except at the very end of the stream).
    pub text: String,
    /// Bytes of clean text dropped from the live view before `text` because the reader lagged.
    pub skipped: u64,
}

#[derive(Debug, Default)]
struct FeedState {
    text: String,
    skipped: u64,
}

/// A bounded queue of clean output text, shared by a run and its reader. Cheap to clone.
#[derive(Debug, Clone)]
pub struct LiveFeed {
    state: Arc<Mutex<FeedState>>,
    capacity: usize,
}

impl Default for LiveFeed {
    fn default() -> Self {
        Self::new(DEFAULT_LIVE_CAPACITY)
    }
}

impl LiveFeed {
    /// A feed holding at most `capacity` bytes between reads.
    pub fn new(capacity: usize) -> Self {
        Self {
            state: Arc::default(),
            capacity: capacity.max(1),
        }
    }

    /// Whether nothing is pending since the last take.
    pub fn is_empty(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.text.is_empty() && state.skipped == 0
    }

    /// Everything pending since the last take, or `None` when there is nothing new.
    pub fn take(&self) -> Option<LiveText> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.text.is_empty() && state.skipped == 0 {
            return None;
        }
        Some(LiveText {
            text: std::mem::take(&mut state.text),
            skipped: std::mem::take(&mut state.skipped),
        })
    }

    fn push(&self, clean: &str) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.text.push_str(clean);
        let excess = state.text.len().saturating_sub(self.capacity);
        if excess > 0 {
            let mut cut = excess;
            while !state.text.is_char_boundary(cut) {
                cut += 1;
            }
            state.text.drain(..cut);
            state.skipped += cut as u64;
        }
    }

    /// A sink that sanitizes raw output into this feed.
    pub fn sink(&self, max_column: usize) -> LiveSink {
        self.sink_redacting(max_column, Arc::default())
    }

    /// A sink that sanitizes raw output into this feed, with each `(name, value)` of `secrets`
    /// replaced by `[REDACTED:name]` in the clean text — also a value that escape sequences split
    /// in the raw stream, which the sanitizer joins again.
    pub fn sink_redacting(&self, max_column: usize, secrets: Arc<Vec<(String, String)>>) -> LiveSink {
        LiveSink {
            feed: self.clone(),
            sanitizer: Sanitizer::new(max_column),
            clean: Vec::new(),
            secrets,
        }
    }
}

/// Sanitizes raw output and appends the clean lines to a [`LiveFeed`].
#[derive(Debug)]
pub struct LiveSink {
    feed: LiveFeed,
    sanitizer: Sanitizer,
    clean: Vec<u8>,
    secrets: Arc<Vec<(String, String)>>,
}

impl LiveSink {
    fn deliver(&mut self) {
        if !self.clean.is_empty() {
            // The sanitizer hands out whole lines, so a value is never cut between two deliveries.
            let text = String::from_utf8_lossy(&self.clean);
            if self.secrets.is_empty() {
                self.feed.push(&text);
            } else {
                self.feed.push(&crate::redact_text(&text, &self.secrets));
            }
            self.clean.clear();
        }
    }
}

impl Sink for LiveSink {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.sanitizer.push(chunk, &mut self.clean);
        self.deliver();
        Flow::Continue
    }

    fn finish(&mut self) {
        self.sanitizer.finish(&mut self.clean);
        self.deliver();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_lines_arrive_and_are_taken_once() {
        let feed = LiveFeed::default();
        let mut sink = feed.sink(4000);
        sink.write(b"\x1b[31mred\x1b[0m\nhalf");
        assert_eq!(feed.take().unwrap().text, "red\n");
        assert_eq!(feed.take(), None);
        sink.write(b" line\n10%\r100%\n");
        sink.finish();
        assert_eq!(feed.take().unwrap().text, "half line\n100%\n");
    }

    #[test]
    fn a_secret_split_by_escape_sequences_is_redacted_in_the_clean_text() {
        let feed = LiveFeed::default();
        let secrets = Arc::new(vec![("KEY".to_owned(), "redactme-4567".to_owned())]);
        let mut sink = feed.sink_redacting(4000, secrets);
        sink.write(b"r\x1b[0medactme-4567\n");
        sink.finish();
        assert_eq!(feed.take().unwrap().text, "[REDACTED:KEY]\n");
    }

    #[test]
    fn a_lagging_reader_loses_only_the_oldest_text_and_learns_how_much() {
        let feed = LiveFeed::new(10);
        let mut sink = feed.sink(4000);
        sink.write("aaaa\nbbbb\nééé\n".as_bytes());
        let taken = feed.take().unwrap();
        assert!(
            taken.text.len() <= 10 && taken.text.ends_with("ééé\n"),
            "{taken:?}"
        );
        assert_eq!(
            taken.skipped as usize + taken.text.len(),
            "aaaa\nbbbb\nééé\n".len()
        );
    }
}
