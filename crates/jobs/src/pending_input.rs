//! Input a job was sent and has not answered yet: the baseline from which a poll judges whether the
//! program has taken the input and finished answering it.

use super::io_counts::TreeIo;

/// Unanswered input of one job (one or more writes since the last settled answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingInput {
    /// Counts before the first unanswered write: what the program wrote since is its answer.
    /// `None` when `/proc/<pid>/io` cannot be read.
    pub first: Option<TreeIo>,
    /// Counts before the latest write: a read since shows the program took it.
    pub latest: Option<TreeIo>,
    /// Output stream position at the first unanswered write.
    pub output_from: u64,
    /// Bytes the terminal itself echoes of the unanswered input (a lower bound).
    pub echoed: u64,
    /// Writes noted so far, so a wait clears only the input it saw answered.
    pub writes: u64,
}
