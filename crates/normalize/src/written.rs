//! The pipeline as the user wrote it, against the one that ran once trailing `| head`/`| tail`
//! stages were lifted out ([`Written`]): which stages there were, how to give the lifted ones
//! their status back, which upstream failure to name, and the exact counts of a limit.

use crate::ast::{Pipeline, Word};
use crate::{Limits, Normalized};

/// The exit status of a stage a closed pipe stopped (128 + SIGPIPE).
const SIGPIPE_STATUS: i32 = 141;

/// What the user wrote of a script's last pipeline, beside what ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Trailing `| head`/`| tail` stages the normalizer lifted out of the script.
    pub lifted_stages: usize,
    /// The notice of that lift, which gets the counts appended.
    pub lifted_notice: Option<String>,
    /// The first word of each stage as written (lifted stages included; `…` where not static).
    pub stage_names: Vec<String>,
}

impl Written {
    /// What `normalized` lifted out of the last pipeline of its script.
    pub fn of(normalized: &Normalized) -> Self {
        let lifted = &normalized.limits;
        let mut stage_names: Vec<String> = last_pipeline(normalized)
            .map(|(pipeline, _)| {
                pipeline
                    .commands
                    .iter()
                    .map(|c| {
                        c.as_simple()
                            .and_then(|s| s.words.first())
                            .and_then(Word::static_value)
                            .unwrap_or_else(|| "…".to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default();
        if lifted.head.is_some() {
            stage_names.push("head".to_owned());
        }
        if lifted.tail.is_some() {
            stage_names.push("tail".to_owned());
        }
        Self {
            lifted_stages: usize::from(lifted.head.is_some()) + usize::from(lifted.tail.is_some()),
            lifted_notice: normalized
                .rewrites
                .iter()
                .find(|r| r.rule == "trailing_limiter")
                .map(|r| r.message.clone()),
            stage_names,
        }
    }

    /// Put the lifted stages back into the statuses of a completed run: each would have exited 0,
    /// so the pipeline's status is 0 — or, under `pipefail`, that of the last stage that failed —
    /// and every stage the user wrote is listed (`[141, 0]` for a producer the closed pipe
    /// stopped). `own` is the status of a script that ran as a single command (no stages).
    /// Returns the exit code and the stages; `None` when there is nothing to restore.
    pub fn restore_statuses(
        &self,
        stages: &[i32],
        own: Option<i32>,
        pipefail: bool,
    ) -> Option<(i32, Vec<i32>)> {
        if self.lifted_stages == 0 {
            return None;
        }
        let mut stages = stages.to_vec();
        if stages.is_empty() {
            stages.push(own?);
        }
        stages.extend(std::iter::repeat_n(0, self.lifted_stages));
        let exit = if pipefail {
            stages.iter().rev().copied().find(|&s| s != 0).unwrap_or(0)
        } else {
            0
        };
        Some((exit, stages))
    }

    /// One line naming the first upstream stage that failed (other than by SIGPIPE, which only means
    /// a later stage stopped reading), so `make 2>&1 | tail -20` failing is never hidden by `tail`'s 0.
    pub fn upstream_failure(&self, stages: &[i32], exit: Option<i32>) -> Option<String> {
        let last = stages.len().checked_sub(1)?;
        let (index, code) = stages[..last]
            .iter()
            .copied()
            .enumerate()
            .find(|&(_, code)| code != 0 && code != SIGPIPE_STATUS)?;
        let names = &self.stage_names;
        let name = names
            .get(index)
            .filter(|_| names.len() == stages.len())
            .map_or_else(String::new, |n| format!(" (`{n}`)"));
        let exit = exit.map_or_else(String::new, |e| format!("; the pipeline's exit code is {e}"));
        Some(format!(
            "Pipeline stage {} of {}{name} exited with code {code}{exit}",
            index + 1,
            stages.len(),
        ))
    }

    /// Add the exact counts to the limit notice: `N of M lines shown`, or `N of at least M` when the
    /// output was closed early, as a real `head` closes its pipe.
    pub fn count_notices(&self, notices: &mut Vec<String>, limits: Limits, stream_lines: u64, stopped: bool) {
        let after_head = limits.head.map_or(stream_lines, |h| h.min(stream_lines));
        let kept = limits.tail.map_or(after_head, |t| t.min(after_head));
        let counts = if stopped {
            format!(
                "{kept} of at least {stream_lines} lines shown (the command's output was closed once the first {} lines were in, as `head` would)",
                limits.head.unwrap_or(kept)
            )
        } else {
            format!("{kept} of {stream_lines} lines shown")
        };
        match self
            .lifted_notice
            .as_ref()
            .and_then(|message| notices.iter_mut().find(|n| *n == message))
        {
            Some(notice) => *notice = format!("{notice}: {counts}"),
            None if kept < stream_lines || stopped => notices.push(format!(
                "Output limited by the tool (head={}, tail={}): {counts}",
                limits.head.map_or("-".to_owned(), |h| h.to_string()),
                limits.tail.map_or("-".to_owned(), |t| t.to_string()),
            )),
            None => {}
        }
    }
}

/// The script's last top-level pipeline, and whether it is the whole script.
pub fn last_pipeline(normalized: &Normalized) -> Option<(&Pipeline, bool)> {
    let tree = normalized.tree.as_ref().ok()?;
    let item = tree.list.items.last()?;
    let pipeline = item.and_or.pipelines().last()?;
    Some((
        pipeline,
        tree.list.items.len() == 1 && item.and_or.rest.is_empty(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(n: usize) -> Written {
        Written {
            lifted_stages: n,
            ..Written::default()
        }
    }

    #[test]
    fn lifted_stages_get_their_status_back() {
        assert_eq!(
            lifted(1).restore_statuses(&[], Some(3), false),
            Some((0, vec![3, 0]))
        );
        assert_eq!(
            lifted(1).restore_statuses(&[141, 141], Some(141), false),
            Some((0, vec![141, 141, 0]))
        );
        assert_eq!(
            lifted(2).restore_statuses(&[], Some(3), true),
            Some((3, vec![3, 0, 0]))
        );
        // A script killed by SIGPIPE (141) as a single command.
        assert_eq!(
            lifted(1).restore_statuses(&[], Some(141), false),
            Some((0, vec![141, 0]))
        );
        assert_eq!(lifted(1).restore_statuses(&[], None, false), None);
        assert_eq!(lifted(0).restore_statuses(&[1], Some(1), false), None);
    }

    #[test]
    fn a_failing_upstream_stage_is_named_unless_it_was_sigpipe() {
        let written = Written {
            stage_names: vec!["make".to_owned(), "tail".to_owned()],
            ..Written::default()
        };
        assert_eq!(
            written.upstream_failure(&[2, 0], Some(0)).unwrap(),
            "Pipeline stage 1 of 2 (`make`) exited with code 2; the pipeline's exit code is 0"
        );
        assert_eq!(written.upstream_failure(&[141, 0], Some(0)), None);
        assert_eq!(written.upstream_failure(&[0, 1], Some(1)), None);
        assert_eq!(written.upstream_failure(&[], None), None);
    }
}
