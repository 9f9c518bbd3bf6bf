//! The terminal actions of a PTY job: `screen` and `resize`.

use super::{ProcessAction, ProcessResult, ProcessTool};
use crate::jobs::{Job, JobIo};

impl ProcessTool {
    pub(super) fn screen(job: &Job) -> ProcessResult {
        let action = ProcessAction::Screen;
        if !job.pty {
            return ProcessResult::error(action, Some(&job.id), no_terminal(&job.id));
        }
        match job.io().and_then(JobIo::screen) {
            Some(snap) => {
                let mut result = Self::status_result(job, action);
                result.message = format!(
                    "Screen {}x{}, cursor at row {}, column {}{}.",
                    snap.cols,
                    snap.rows,
                    snap.cursor_row + 1,
                    snap.cursor_col + 1,
                    if snap.alternate_screen {
                        " (alternate screen)"
                    } else {
                        ""
                    }
                );
                result.output = Some(snap.text);
                result.waiting_for_input = job.io().and_then(JobIo::waiting_for_input);
                result
            }
            None => ProcessResult::error(action, Some(&job.id), format!("Job {} keeps no screen.", job.id)),
        }
    }

    pub(super) fn resize(job: &Job, cols: Option<u16>, rows: Option<u16>) -> ProcessResult {
        let action = ProcessAction::Resize;
        let (Some(cols), Some(rows)) = (cols, rows) else {
            return ProcessResult::error(action, Some(&job.id), "resize needs cols and rows.");
        };
        match job.io().and_then(|io| io.resize(cols, rows)) {
            Some(Ok(size)) => {
                let mut result = Self::status_result(job, action);
                result.message = format!("Resized job {} to {}x{}.", job.id, size.cols, size.rows);
                result
            }
            Some(Err(e)) => ProcessResult::error(action, Some(&job.id), format!("Job {}: {e}.", job.id)),
            None => ProcessResult::error(action, Some(&job.id), no_terminal(&job.id)),
        }
    }
}

fn no_terminal(id: &str) -> String {
    format!("Job {id} has no terminal; screen and resize need a PTY job (`pty: true`).")
}
