//! Retention limits (SPEC J-7): finished jobs expire and are capped by count and bytes; running jobs are
//! capped by count, the least recently used one stopped to make room.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::JobRegistry;
use crate::job::{Job, JobStatus};

impl JobRegistry {
    /// Expire finished jobs even when nobody calls: a task that lives as long as the registry.
    pub fn start_sweeper(&self) {
        if self
            .inner
            .sweeper
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let period = (self.inner.config.finished_ttl / 6).max(Duration::from_secs(30));
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(inner) = weak.upgrade() else { break };
                JobRegistry { inner }.prune();
            }
        });
    }

    /// Drop expired finished jobs, then the oldest finished ones beyond the count and byte caps.
    pub fn prune(&self) {
        let config = &self.inner.config;
        let now = Instant::now();
        let mut jobs = self.jobs();
        let mut finished: Vec<(Instant, String, usize)> = jobs
            .values()
            .filter_map(|j| {
                let st = j.state();
                st.ended
                    .map(|ended| (ended, j.id.clone(), st.output.retained_bytes()))
            })
            .collect();
        finished.sort();
        let mut bytes: usize = finished.iter().map(|f| f.2).sum();
        let mut count = finished.len();
        for (ended, id, size) in finished {
            // The newest finished job is always kept, whatever its size.
            let expired = now.duration_since(ended) > config.finished_ttl;
            let over = count > config.max_finished || bytes > config.max_retained_bytes;
            if (expired || over) && count > usize::from(!expired) {
                jobs.remove(&id);
                count -= 1;
                bytes -= size;
            }
        }
    }

    /// Keep running jobs under `max_running`: stop the least recently used one that is not among the
    /// `protected_recent` most recently used.
    pub fn make_room(&self) -> Result<(), String> {
        let config = &self.inner.config;
        let victim = {
            let jobs = self.jobs();
            let mut running: Vec<(Instant, Arc<Job>)> = jobs
                .values()
                .filter_map(|j| {
                    let st = j.state();
                    (st.status == JobStatus::Running && !st.kill_requested)
                        .then(|| (st.last_used, Arc::clone(j)))
                })
                .collect();
            if running.len() < config.max_running {
                return Ok(());
            }
            if running.len() <= config.protected_recent {
                return Err(format!(
                    "Too many running jobs (limit {}); kill or remove one first.",
                    config.max_running
                ));
            }
            // Most recently used first; the last one is the least recently used and not protected.
            running.sort_by_key(|r| std::cmp::Reverse(r.0));
            running.pop().map(|(_, j)| j)
        };
        let Some(victim) = victim else {
            return Ok(());
        };
        {
            let mut st = victim.state();
            st.kill_requested = true;
            st.notices.push(format!(
                "Stopped to make room: at most {} jobs run at once.",
                config.max_running
            ));
        }
        std::thread::spawn(move || {
            if let Some(io) = victim.io() {
                io.kill_now();
            }
        });
        Ok(())
    }
}
