//! Bounded output capture for shellgate.
//!
//! A [`Sink`] receives the bytes a command prints, chunk by chunk. [`OutputWindow`] keeps the head and
//! tail of any stream in fixed memory with exact totals, and renders clean model text.
//!
//! ```
//! use shellgate_sink::{OutputWindow, Sink, WindowConfig};
//!
//! let mut window = OutputWindow::new(WindowConfig { head_bytes: 32, tail_bytes: 32 });
//! for i in 0..1000 {
//!     window.write(format!("line {i}\n").as_bytes());
//! }
//! let summary = window.summary();
//! assert_eq!(summary.total_lines, 1000);
//! assert!(summary.text.ends_with("line 999\n"));
//! assert!(summary.truncation.is_some());
//! ```
#![forbid(unsafe_code)]

mod adapters;
mod window;

pub use adapters::{Collect, Discard, FnSink, Tee};
pub use window::{CaptureSummary, OutputWindow, Truncation, WindowConfig};

/// A consumer of a command's output stream (push model).
///
/// The executor calls [`Sink::write`] for each chunk in arrival order and [`Sink::finish`] once when the
/// stream has ended. Chunks may split lines, UTF-8 characters and escape sequences anywhere.
pub trait Sink {
    /// Accept the next chunk of output.
    fn write(&mut self, chunk: &[u8]);

    /// The stream has ended; flush anything pending. Called at most once.
    fn finish(&mut self) {}
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn write(&mut self, chunk: &[u8]) {
        (**self).write(chunk);
    }
    fn finish(&mut self) {
        (**self).finish();
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn write(&mut self, chunk: &[u8]) {
        (**self).write(chunk);
    }
    fn finish(&mut self) {
        (**self).finish();
    }
}
