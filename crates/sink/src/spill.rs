//! [`ArtifactSpill`]: writes the full raw stream to an artifact once it no longer fits the window.
//!
//! Until the decision is made, the raw bytes are held (at most the window size), so the artifact
//! starts at byte 0. A failing write (ENOSPC, EACCES, quota) never disturbs the window or the command:
//! the spill stops, removes its partial file, and reports a notice naming the error.

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use crate::background_writer::BackgroundWriter;
use crate::store::{ArtifactId, ArtifactStore};
use crate::summary::format_bytes;

enum Target {
    Store(Arc<ArtifactStore>),
    Writer(String, Option<Box<dyn Write + Send>>),
}

enum State {
    /// Not spilling yet: the raw stream so far.
    Pending(Vec<u8>),
    /// Writing.
    Open {
        id: String,
        out: BackgroundWriter,
        path: Option<PathBuf>,
        /// The store's id of the artifact, which grants it room as it grows.
        leased: Option<ArtifactId>,
    },
    /// Finished, or stopped at the limit: the artifact exists.
    Closed { id: String },
    /// Nothing was spilled (the output fit) or spilling failed.
    Nothing,
}

/// Spills a raw stream to an artifact; attach it with [`crate::OutputWindow::with_spill`].
pub struct ArtifactSpill {
    target: Target,
    state: State,
    limit: u64,
    /// The room the store granted so far (see [`ArtifactStore::extend`]).
    lease: u64,
    written: u64,
    seen: u64,
    limit_hit: bool,
    /// Whether the store's quota (rather than the artifact's own limit) stopped the artifact.
    quota_hit: bool,
    notices: Vec<String>,
}

impl fmt::Debug for ArtifactSpill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArtifactSpill")
            .field("artifact", &self.artifact())
            .field("written", &self.written)
            .field("seen", &self.seen)
            .field("notices", &self.notices)
            .finish_non_exhaustive()
    }
}

impl ArtifactSpill {
    /// Spill into a new artifact of `store` (allocated only if spilling happens).
    pub fn new(store: Arc<ArtifactStore>) -> Self {
        Self::with_target(Target::Store(store))
    }

    /// Spill into any writer, reporting it as `id` (for tests and embedders with their own storage).
    pub fn to_writer(id: impl Into<String>, writer: impl Write + Send + 'static) -> Self {
        Self::with_target(Target::Writer(id.into(), Some(Box::new(writer))))
    }

    fn with_target(target: Target) -> Self {
        Self {
            target,
            state: State::Pending(Vec::new()),
            limit: u64::MAX,
            lease: u64::MAX,
            written: 0,
            seen: 0,
            limit_hit: false,
            quota_hit: false,
            notices: Vec::new(),
        }
    }

    /// Write at most `limit` bytes (the store's quota applies as well).
    #[must_use]
    pub fn with_limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    /// `artifact://<id>` when an artifact holds (the start of) the stream.
    pub fn artifact(&self) -> Option<&str> {
        match &self.state {
            State::Open { id, .. } | State::Closed { id } => Some(id),
            State::Pending(_) | State::Nothing => None,
        }
    }

    /// Bytes written to the artifact so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Spill failures and incomplete artifacts, one sentence each.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The next raw chunk; `overflowed` says whether the stream no longer fits the window.
    pub fn push(&mut self, chunk: &[u8], overflowed: bool) {
        self.seen += chunk.len() as u64;
        match &mut self.state {
            State::Pending(held) if !overflowed => held.extend_from_slice(chunk),
            State::Pending(_) => {
                let State::Pending(held) = std::mem::replace(&mut self.state, State::Nothing) else {
                    unreachable!("matched Pending above")
                };
                self.open();
                self.write_out(&held);
                self.write_out(chunk);
            }
            State::Open { .. } => self.write_out(chunk),
            State::Closed { .. } | State::Nothing => {}
        }
    }

    /// The stream ended: spill what is held if `overflowed`, flush and close.
    pub fn finish(&mut self, overflowed: bool) {
        if matches!(self.state, State::Pending(_))
            && let State::Pending(held) = std::mem::replace(&mut self.state, State::Nothing)
            && overflowed
        {
            self.open();
            self.write_out(&held);
        }
        if let State::Open {
            id,
            out,
            path,
            leased,
        } = std::mem::replace(&mut self.state, State::Nothing)
        {
            self.release(leased);
            match out.finish() {
                Ok(()) => {
                    if self.limit_hit {
                        let why = if self.quota_hit {
                            "the artifact store's quota was reached"
                        } else {
                            "the artifact limit was reached"
                        };
                        self.notices.push(format!(
                            "{id} holds only the first {} of {} of output: {why}",
                            format_bytes(self.written),
                            format_bytes(self.seen)
                        ));
                    }
                    self.state = State::Closed { id };
                }
                Err(e) => self.fail(&id, path, &e),
            }
        }
    }

    fn open(&mut self) {
        let mut leased = None;
        let (id, writer, path): (String, Box<dyn Write + Send>, Option<PathBuf>) = match &mut self.target {
            Target::Store(store) => match store.create() {
                Ok(new) => {
                    self.lease = new.limit;
                    leased = Some(new.id);
                    (new.id.uri(), Box::new(new.file), Some(new.path))
                }
                Err(e) => {
                    self.notices.push(format!(
                        "Full output was not saved: cannot create an artifact: {e}"
                    ));
                    return;
                }
            },
            Target::Writer(id, writer) => match writer.take() {
                Some(writer) => (id.clone(), writer, None),
                None => return,
            },
        };
        match BackgroundWriter::spawn(writer) {
            Ok(out) => {
                self.state = State::Open {
                    id,
                    out,
                    path,
                    leased,
                }
            }
            Err(e) => {
                self.release(leased);
                self.fail(&id, path, &e);
            }
        }
    }

    /// The store's room for this artifact, asked again when it runs out; `quota_hit` when the
    /// store has none left below the artifact's own limit.
    fn room(&mut self, wanted: u64) -> u64 {
        let mut room = self.limit.min(self.lease).saturating_sub(self.written);
        if room < wanted
            && self.lease < self.limit
            && let (Target::Store(store), State::Open { leased: Some(id), .. }) = (&self.target, &self.state)
        {
            let before = self.lease;
            self.lease = store.extend(*id, self.written).unwrap_or(before).max(before);
            room = self.limit.min(self.lease).saturating_sub(self.written);
            if room < wanted && self.lease < store.config().max_artifact_bytes.min(self.limit) {
                self.quota_hit = true;
            }
        }
        room
    }

    fn release(&self, leased: Option<ArtifactId>) {
        if let (Target::Store(store), Some(id)) = (&self.target, leased) {
            store.release(id);
        }
    }

    fn write_out(&mut self, bytes: &[u8]) {
        if !matches!(self.state, State::Open { .. }) {
            return;
        }
        let room = self.room(bytes.len() as u64);
        let take = (bytes.len() as u64).min(room) as usize;
        let State::Open { out, .. } = &mut self.state else {
            return;
        };
        if let Err(stopped) = out.write_all(&bytes[..take]) {
            if let State::Open {
                id,
                out,
                path,
                leased,
            } = std::mem::replace(&mut self.state, State::Nothing)
            {
                self.release(leased);
                // The writer thread has the real error (ENOSPC, EIO, ...).
                let error = out.finish().err().unwrap_or(stopped);
                self.fail(&id, path, &error);
            }
            return;
        }
        self.written += take as u64;
        if take < bytes.len() && !self.limit_hit {
            self.limit_hit = true;
        }
    }

    fn fail(&mut self, id: &str, path: Option<PathBuf>, error: &std::io::Error) {
        if let Some(path) = path {
            // A partial artifact would pass for the full output; remove it (and free the space).
            let _ = std::fs::remove_file(path);
        }
        self.notices
            .push(format!("Full output was not saved ({id} discarded): {error}"));
        self.state = State::Nothing;
    }
}
