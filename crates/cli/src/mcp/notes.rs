//! Events a client may not see as notifications — a background job's exit, the partial output of a
//! cancelled call — kept until the next tool result, which lists them among its notices.

use std::sync::Mutex;

use serde_json::Value;

/// One event waiting for the next result.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// The job it is about, if any (a result that itself reports that job's end skips it).
    job_id: Option<String>,
    /// The line for the result's notices.
    pub text: String,
    /// The event as a log notification carries it.
    pub data: Value,
}

impl Note {
    /// An event about `job_id` (if any).
    pub fn new(job_id: Option<&str>, text: String, data: Value) -> Self {
        Self {
            job_id: job_id.map(str::to_owned),
            text,
            data,
        }
    }
}

/// Most events kept; older ones are dropped (a client that never calls a tool again loses nothing
/// it could have read).
const MAX_NOTES: usize = 64;

/// Events not yet shown in a result.
#[derive(Debug, Default)]
pub struct PendingNotes {
    notes: Mutex<Vec<Note>>,
}

impl PendingNotes {
    /// Keep `note` for the next result.
    pub fn push(&self, note: Note) {
        let mut notes = self.lock();
        if notes.len() == MAX_NOTES {
            notes.remove(0);
        }
        notes.push(note);
    }

    /// Take every pending event, except those about `reported_job`, a job whose end the result
    /// reports itself (they are dropped: the result says it).
    pub fn take(&self, reported_job: Option<&str>) -> Vec<Note> {
        let mut notes = self.lock();
        if notes.is_empty() {
            return Vec::new();
        }
        let notes = std::mem::take(&mut *notes);
        notes
            .into_iter()
            .filter(|n| reported_job.is_none() || n.job_id.as_deref() != reported_job)
            .collect()
    }

    /// Drop the events about `job_id` only.
    pub fn forget(&self, job_id: &str) {
        self.lock().retain(|n| n.job_id.as_deref() != Some(job_id));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Note>> {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The last `max` characters of `text` on one line (newlines and runs of blanks become one space).
pub fn collapsed_tail(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = flat.chars().count();
    if count <= max {
        return flat;
    }
    let tail: String = flat.chars().skip(count - max).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(job: &str, text: &str) -> Note {
        Note::new(Some(job), text.to_owned(), Value::Null)
    }

    fn texts(notes: Vec<Note>) -> Vec<String> {
        notes.into_iter().map(|n| n.text).collect()
    }

    #[test]
    fn notes_are_taken_once_and_skip_the_reported_job() {
        let notes = PendingNotes::default();
        notes.push(note("calm-reef", "Job calm-reef completed"));
        notes.push(note("old-pine", "Job old-pine failed"));
        assert_eq!(texts(notes.take(Some("calm-reef"))), ["Job old-pine failed"]);
        assert!(notes.take(None).is_empty());
    }

    #[test]
    fn forgetting_a_job_keeps_the_other_notes() {
        let notes = PendingNotes::default();
        notes.push(note("calm-reef", "Job calm-reef completed"));
        notes.push(note("old-pine", "Job old-pine failed"));
        notes.forget("calm-reef");
        assert_eq!(texts(notes.take(None)), ["Job old-pine failed"]);
    }

    #[test]
    fn tails_are_flat_and_bounded() {
        assert_eq!(collapsed_tail("a\n  b\n", 10), "a b");
        assert_eq!(collapsed_tail("0123456789", 4), "…6789");
    }
}
