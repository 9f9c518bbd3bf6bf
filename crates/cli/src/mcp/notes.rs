//! Events a client may not see as notifications — a background job's exit, the partial output of a
//! cancelled call — kept until the next tool result, which lists them among its notices.

use std::sync::Mutex;

/// One event waiting for the next result.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Note {
    /// The job it is about, if any (a result that itself reports that job's end skips it).
    job_id: Option<String>,
    text: String,
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
    /// Keep `text` for the next result.
    pub fn push(&self, job_id: Option<&str>, text: impl Into<String>) {
        let mut notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if notes.len() == MAX_NOTES {
            notes.remove(0);
        }
        notes.push(Note {
            job_id: job_id.map(str::to_owned),
            text: text.into(),
        });
    }

    /// Take every pending event, except those about `reported_job`, a job whose end the result
    /// reports itself (they are dropped: the result says it).
    pub fn take(&self, reported_job: Option<&str>) -> Vec<String> {
        let notes = std::mem::take(
            &mut *self
                .notes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        notes
            .into_iter()
            .filter(|n| reported_job.is_none() || n.job_id.as_deref() != reported_job)
            .map(|n| n.text)
            .collect()
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

    #[test]
    fn notes_are_taken_once_and_skip_the_reported_job() {
        let notes = PendingNotes::default();
        notes.push(Some("calm-reef"), "Job calm-reef completed");
        notes.push(Some("old-pine"), "Job old-pine failed");
        assert_eq!(notes.take(Some("calm-reef")), ["Job old-pine failed"]);
        assert!(notes.take(None).is_empty());
    }

    #[test]
    fn tails_are_flat_and_bounded() {
        assert_eq!(collapsed_tail("a\n  b\n", 10), "a b");
        assert_eq!(collapsed_tail("0123456789", 4), "…6789");
    }
}
