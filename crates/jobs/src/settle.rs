//! When a poll's wait ends (the settle rule), and what ended it ([`Settled`]).
//!
//! Without unanswered input, a wait ends on news: once new output ends a line, or no byte came for
//! `poll_settle` (one `print` can arrive as several writes).
//!
//! After input, the first output is often only its echo (a line editor echoes as it reads; a
//! terminal in canonical mode echoes by itself), and the program can still look blocked in the
//! read it was in before the write, because written bytes reach a terminal's line discipline
//! through a kernel work queue. So the wait ends on the program's answer instead:
//!
//! 1. progress: the program took the input — a read count in `/proc/<pid>/io` of its process tree
//!    moved since the write, and no written byte is left unread (the terminal's input queue, or the
//!    stdin pipe, is empty);
//! 2. then it is blocked reading its input again (a read, poll/select of the terminal or the pipe,
//!    or an `epoll` wait that watches the terminal), and the output it wrote since the write has
//!    arrived (bytes received ≥ bytes it wrote plus the terminal's echo; failing that — its counts
//!    also hold writes to files — once [`QUIET_FACTOR`] × `poll_settle` passed without a byte after
//!    it was seen waiting) → `waiting_for_input`;
//! 3. where the kernel cannot tell whether it waits (or its counts are hidden), after progress and
//!    [`QUIET_FACTOR`] × `poll_settle` without a new byte → `quiet`;
//! 4. or it exited → `exited`; or `wait_ms` passed → `timeout` (the input stays unanswered, and the
//!    next poll waits for the rest).
//!
//! A program busy with anything else than reading its input (computing, sleeping between prints)
//! never ends the wait early.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::{Job, JobIo, JobStatus, PendingInput, TreeIo};

/// What ended a poll's wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Settled {
    /// The program answered and is blocked reading its input again: answer it.
    WaitingForInput,
    /// The job ended.
    Exited,
    /// The output went quiet while the program is not known to wait for input: read on, or poll
    /// again.
    Quiet,
    /// `wait_ms` passed first: the program is still working; poll again.
    Timeout,
}

impl Settled {
    /// `waiting_for_input`, `exited`, `quiet` or `timeout`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WaitingForInput => "waiting_for_input",
            Self::Exited => "exited",
            Self::Quiet => "quiet",
            Self::Timeout => "timeout",
        }
    }
}

/// Where the kernel cannot tell whether the program waits for input, how many `poll_settle`
/// periods without output end the wait after the program took its input.
pub const QUIET_FACTOR: u32 = 10;

/// Note input about to be written to `job` (call before the write): the next poll waits for the
/// program's answer to it. Input that gives the program nothing to read (a partial line in canonical
/// mode, a signal character) is not noted: its answer is the echo, which the plain rule returns.
pub fn note_input(job: &Job, bytes: &[u8]) {
    let Some(io) = job.io() else { return };
    let Some(forecast) = io.forecast_input(bytes) else {
        return;
    };
    if !forecast.reaches_program {
        return;
    }
    let counts = TreeIo::of(io.tree_pids());
    let mut st = job.state();
    let output_from = st.output.total_bytes();
    let echoed = forecast.echoed as u64;
    match &mut st.pending_input {
        Some(pending) => {
            pending.latest = counts;
            pending.echoed += echoed;
            pending.writes += 1;
        }
        None => {
            st.pending_input = Some(PendingInput {
                first: counts.clone(),
                latest: counts,
                output_from,
                echoed,
                writes: 1,
            });
        }
    }
}

/// Wait until `job` has news after stream position `from` by the settle rule, or `deadline`
/// passed. The caller skips this without a wait: the timer would round an immediate answer up.
pub async fn wait(
    job: &Job,
    changes: watch::Receiver<u64>,
    from: u64,
    deadline: Instant,
    settle: Duration,
) -> Settled {
    let pending = job.state().pending_input.clone();
    let Some(pending) = pending else {
        return wait_for_news(job, changes, from, deadline, settle).await;
    };
    let settled = wait_for_answer(job, changes, deadline, settle, &pending).await;
    if settled != Settled::Timeout {
        let mut st = job.state();
        if st
            .pending_input
            .as_ref()
            .is_some_and(|p| p.writes == pending.writes)
        {
            st.pending_input = None;
        }
    }
    settled
}

/// The plain rule: news that ended a line or paused for `settle` (within a bound of ten periods).
async fn wait_for_news(
    job: &Job,
    mut changes: watch::Receiver<u64>,
    from: u64,
    deadline: Instant,
    settle: Duration,
) -> Settled {
    let mut settle_end: Option<Instant> = None;
    let mut quiet_end: Option<Instant> = None;
    loop {
        {
            let st = job.state();
            if st.status != JobStatus::Running {
                return Settled::Exited;
            }
            if st.output.read_since(from, 1, false).end > from {
                let now = Instant::now();
                if settle.is_zero() || st.output.ends_line() {
                    break;
                }
                let bound = *settle_end.get_or_insert(now + settle * 10);
                if now >= bound {
                    break;
                }
                quiet_end = Some((now + settle).min(bound));
            }
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { break },
            () = tokio::time::sleep_until(deadline) => return Settled::Timeout,
            () = crate::sleep_until_opt(quiet_end), if quiet_end.is_some() => break,
        }
    }
    if job.io().and_then(JobIo::waiting_for_input) == Some(true) {
        Settled::WaitingForInput
    } else {
        Settled::Quiet
    }
}

/// What one wait for an answer has seen so far.
struct Watch<'a> {
    pending: &'a PendingInput,
    settle: Duration,
    /// When the program was first seen to have taken the input.
    progressed_at: Option<Instant>,
    /// When it was first seen waiting again after that.
    waiting_since: Option<Instant>,
    /// Output position and when it last moved.
    last_total: u64,
    last_change: Instant,
}

/// The rule after input: sample the kernel's view of the program until it answered.
async fn wait_for_answer(
    job: &Job,
    mut changes: watch::Receiver<u64>,
    deadline: Instant,
    settle: Duration,
    pending: &PendingInput,
) -> Settled {
    let started = Instant::now();
    let mut watch = Watch {
        pending,
        settle,
        progressed_at: None,
        waiting_since: None,
        last_total: pending.output_from,
        last_change: started,
    };
    loop {
        let (done, total) = {
            let st = job.state();
            (st.status != JobStatus::Running, st.output.total_bytes())
        };
        if done {
            return Settled::Exited;
        }
        let now = Instant::now();
        if total != watch.last_total {
            watch.last_total = total;
            watch.last_change = now;
        }
        if let Some(settled) = job.io().and_then(|io| watch.check(io, now)) {
            return settled;
        }
        let next = now + sample_interval(now - started);
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return Settled::Timeout },
            () = tokio::time::sleep_until(deadline) => return Settled::Timeout,
            () = tokio::time::sleep_until(next) => {}
        }
    }
}

/// How often the kernel is asked while waiting: often at first (most answers come within
/// milliseconds), less after a while.
fn sample_interval(waited: Duration) -> Duration {
    match waited.as_millis() {
        0..100 => Duration::from_millis(1),
        100..1000 => Duration::from_millis(5),
        _ => Duration::from_millis(20),
    }
}

impl Watch<'_> {
    fn check(&mut self, io: &JobIo, now: Instant) -> Option<Settled> {
        let pids = io.tree_pids();
        if self.progressed_at.is_none() {
            if !self.progressed(io, &pids) {
                return None;
            }
            self.progressed_at = Some(now);
        }
        let quiet_since = self.last_change.max(self.progressed_at.unwrap_or(now));
        let quiet = now.saturating_duration_since(quiet_since) >= self.settle * QUIET_FACTOR;
        let waiting = io.waiting_for_input();
        let Some(first) = self.pending.first.as_ref() else {
            // Without counts, progress was judged from output, which may be the echo: only a
            // longer quiet ends the wait.
            return quiet.then_some(if waiting == Some(true) {
                Settled::WaitingForInput
            } else {
                Settled::Quiet
            });
        };
        match waiting {
            Some(true) => {
                let since = *self.waiting_since.get_or_insert(now);
                // Counted after the waiting check, so it holds everything written before that read.
                let written = TreeIo::of(pids.iter().copied()).map(|counts| counts.written_since(first));
                let received = self.last_total.saturating_sub(self.pending.output_from);
                let arrived = written.is_some_and(|w| received >= w + self.pending.echoed);
                // The counts also hold writes elsewhere than the output (files, event
                // descriptors): then a quiet period after it was seen waiting ends the wait.
                let still =
                    now.saturating_duration_since(self.last_change.max(since)) >= self.settle * QUIET_FACTOR;
                if arrived || still {
                    tracing::debug!(
                        arrived,
                        written,
                        received,
                        echoed = self.pending.echoed,
                        "input answered"
                    );
                }
                (arrived || still).then_some(Settled::WaitingForInput)
            }
            Some(false) => {
                self.waiting_since = None;
                None
            }
            None => quiet.then_some(Settled::Quiet),
        }
    }

    /// Whether the program has taken the input: its reads moved and nothing is left unread.
    fn progressed(&self, io: &JobIo, pids: &[u32]) -> bool {
        let drained = io.unread_input().map(|n| n == 0);
        if drained == Some(false) {
            return false;
        }
        match (&self.pending.latest, TreeIo::of(pids.iter().copied())) {
            (Some(base), Some(now)) => now.read_since(base),
            // Counts hidden: output since the write stands in for the read.
            _ => self.last_total > self.pending.output_from,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sampling() {
        assert_eq!(Settled::WaitingForInput.as_str(), "waiting_for_input");
        assert_eq!(
            serde_json::to_value(Settled::Timeout).unwrap(),
            serde_json::json!("timeout")
        );
        assert!(sample_interval(Duration::from_millis(10)) < sample_interval(Duration::from_secs(2)));
    }
}
