//! Bounded output capture for shellgate: any amount of command output in fixed memory, never lost.
//! An [`OutputWindow`] keeps clean head and tail text with exact totals and spills the raw stream to an
//! [`ArtifactStore`] once it no longer fits.
//!
//! ```
//! use shellgate_sink::{OutputWindow, Sink, WindowConfig};
//!
//! let mut window = OutputWindow::new(WindowConfig { head_bytes: 32, tail_bytes: 32, ..Default::default() });
//! for i in 0..1000 {
//!     window.write(format!("\x1b[32mline {i}\x1b[0m\n").as_bytes());
//! }
//! window.finish();
//! let summary = window.summary();
//! assert_eq!(summary.total_lines, 1000);
//! assert!(summary.text.ends_with("line 999\n"));
//! assert!(!summary.text.contains('\x1b'));
//! assert!(summary.truncation.is_some());
//! ```
//!
//! The pieces: [`Sink`] (the push trait) and its adapters ([`Tee`], [`Collect`], [`Discard`],
//! [`FnSink`], [`SanitizeSink`], [`LiveTail`]); [`Sanitizer`] (escape sequences, `\r`, backspace,
//! controls, UTF-8, column cap); [`OutputWindow`] (head/tail window, accounting, [`Truncation`]);
//! [`ArtifactSpill`] and [`ArtifactStore`] (artifacts, ids, quota, expiry, reading).
#![forbid(unsafe_code)]

mod adapters;
mod background_writer;
mod escape;
mod line;
mod line_limit;
mod live_feed;
mod live_tail;
mod redact;
mod ring;
mod sanitize;
mod scan;
mod spill;
mod store;
mod summary;
mod utf8;
mod window;

pub use adapters::{Collect, Discard, FnSink, Tee};
pub use line::cap_marker;
pub use line_limit::LineLimit;
pub use live_feed::{DEFAULT_LIVE_CAPACITY, LiveFeed, LiveSink, LiveText};
pub use live_tail::{DEFAULT_INTERVAL, DEFAULT_MAX_PENDING, LiveChunk, LiveTail};
pub use redact::{Redact, redact_text};
pub use sanitize::{
    CleanOutput, DEFAULT_MAX_COLUMN, MAX_COLUMN_LIMIT, SanitizeSink, SanitizeStats, Sanitizer, sanitize,
};
pub use spill::ArtifactSpill;
pub use store::{
    ArtifactId, ArtifactInfo, ArtifactStore, ByteRange, DEFAULT_MAX_AGE, DEFAULT_MAX_ARTIFACT_BYTES,
    DEFAULT_QUOTA_BYTES, LineRange, MAX_LINE_PREFIX, NewArtifact, StoreConfig, StoreError, parse_range,
};
pub use summary::{CaptureSummary, Truncation, elision_marker, format_bytes};
pub use window::{DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES, OutputWindow, WindowConfig};

/// What a sink answers to a chunk: keep the output coming, or it has seen all it needs.
///
/// [`Flow::Stop`] is how a satisfied limit ends a run the way a closed pipe would: the executor takes
/// what is already buffered (without waiting), then closes its end of the output, so the producer meets
/// `EPIPE`/`SIGPIPE` on its next write — exactly what a real `| head -n N` does to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flow {
    /// Keep writing.
    #[default]
    Continue,
    /// No more output is needed.
    Stop,
}

impl Flow {
    /// Whether this is [`Flow::Stop`].
    pub fn is_stop(self) -> bool {
        self == Flow::Stop
    }

    /// Stop only when both stop (two consumers of one stream: it must go on while either wants it).
    #[must_use]
    pub fn both(self, other: Flow) -> Flow {
        if self.is_stop() && other.is_stop() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

/// A consumer of a command's output stream (push model).
///
/// The executor calls [`Sink::write`] for each chunk in arrival order and [`Sink::finish`] once when the
/// stream has ended. Chunks may split lines, UTF-8 characters and escape sequences anywhere. A write
/// that answers [`Flow::Stop`] ends the stream early (see [`Flow`]); `finish` is still called.
pub trait Sink {
    /// Accept the next chunk of output; answer whether more is wanted.
    fn write(&mut self, chunk: &[u8]) -> Flow;

    /// The stream has ended; flush anything pending. Called exactly once, by the sink's owner, after the
    /// last write: whoever created the sink (or was given it by value). Code handed a `&mut` sink, such
    /// as an executor, writes to it but does not finish it.
    fn finish(&mut self) {}
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        (**self).write(chunk)
    }
    fn finish(&mut self) {
        (**self).finish();
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        (**self).write(chunk)
    }
    fn finish(&mut self) {
        (**self).finish();
    }
}
