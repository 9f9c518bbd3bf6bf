//! [`JobRegistry`]: every job of one engine, with retention limits and exit events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use shellgate_executor::{LaunchSpec, PipeExecutor};
use shellgate_pty::TermSize;
use tokio::sync::broadcast;

use super::JobConfig;
use super::JobIo;
use super::backend::{self, Drain, OutputPlan};
use super::job::{Job, JobExit, JobInfo, JobStatus};
use super::output::{JobOutput, SpillTarget};
use super::slug::new_job_id;

mod retention;

/// The jobs of one engine. Cheap to clone; clones share the jobs.
///
/// Dropping the last clone kills every job tree still running (SIGKILL), so a server that ends without
/// calling [`JobRegistry::shutdown`] leaves nothing behind either.
#[derive(Debug, Clone)]
pub struct JobRegistry {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: JobConfig,
    /// This registry's own directory under `config.spill_dir` (ids are unique per registry only).
    spill_dir: Option<std::path::PathBuf>,
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    exits: broadcast::Sender<JobExit>,
    executor: PipeExecutor,
    sweeper: std::sync::atomic::AtomicBool,
}

impl Default for JobRegistry {
    fn default() -> Self {
        Self::new(JobConfig::default())
    }
}

impl JobRegistry {
    /// An empty registry with `config`'s limits.
    pub fn new(config: JobConfig) -> Self {
        static REGISTRIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = REGISTRIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self {
            inner: Arc::new(Inner {
                spill_dir: config.spill_dir.as_ref().map(|d| d.join(format!("r{n}"))),
                config,
                jobs: Mutex::new(HashMap::new()),
                exits: broadcast::channel(1024).0,
                executor: PipeExecutor::default(),
                sweeper: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// The limits in force.
    pub fn config(&self) -> &JobConfig {
        &self.inner.config
    }

    /// Exit events of backgrounded jobs (SPEC J-6), each sent once unless a caller waiting on the job
    /// received the exit in its response. Subscribe before starting jobs to see all of them.
    pub fn subscribe(&self) -> broadcast::Receiver<JobExit> {
        self.inner.exits.subscribe()
    }

    fn jobs(&self) -> MutexGuard<'_, HashMap<String, Arc<Job>>> {
        self.inner.jobs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Start `spec` as a job. `backgrounded` is false for a `yield_ms` run that is still foreground;
    /// `pty` asks for a terminal (pipes are used, with a notice, when none can be had).
    pub fn start(
        &self,
        spec: &LaunchSpec,
        command: &str,
        backgrounded: bool,
        pty: bool,
        head: &OutputPlan,
        notices: &mut Vec<String>,
    ) -> Result<Arc<Job>, String> {
        self.prune();
        self.make_room()?;
        self.start_sweeper();
        let config = &self.inner.config;
        let mut use_pty = pty && shellgate_pty::pty_selected(true);
        if pty && !use_pty {
            notices.push(
                "No terminal is available here; running with pipes (stdin stays open for `write`)."
                    .to_owned(),
            );
        }
        loop {
            let job = {
                let mut jobs = self.jobs();
                let id = new_job_id(|candidate| jobs.contains_key(candidate));
                let output = JobOutput::new(
                    &id,
                    config.ring_bytes,
                    config.window.clone(),
                    self.spill_target(),
                    config.max_spill_bytes,
                );
                let job = Job::new(
                    id.clone(),
                    command.to_owned(),
                    spec.cwd.display().to_string(),
                    use_pty,
                    output,
                    backgrounded,
                    spec.timeout,
                );
                jobs.insert(id, Arc::clone(&job));
                job
            };
            let started = if use_pty {
                backend::start_pty(
                    &job,
                    spec,
                    TermSize::default(),
                    spec.kill_grace,
                    Drain {
                        idle: config.drain_idle,
                        max: config.drain_max,
                    },
                    Arc::clone(&head.redactions),
                    self.inner.exits.clone(),
                )
            } else {
                backend::start_pipe(
                    &job,
                    spec.clone(),
                    &self.inner.executor,
                    head,
                    self.inner.exits.clone(),
                )
            };
            match started {
                Ok(()) => return Ok(job),
                Err(e) => {
                    self.forget(&job.id);
                    if use_pty {
                        // SPEC P-2: fall back to pipes, with a warning.
                        notices.push(format!(
                            "Could not start a terminal ({e}); running with pipes instead."
                        ));
                        use_pty = false;
                        continue;
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Take over a foreground run that outlived its auto-yield (SPEC J-1): a backgrounded job whose
    /// process the run's task owns; `cancel` stops it. The task feeds its output and records its end
    /// ([`Job::push_output`], [`JobRegistry::finish_detached`]).
    pub fn adopt(
        &self,
        command: &str,
        cwd: &std::path::Path,
        timeout: Option<Duration>,
        cancel: tokio_util::sync::CancellationToken,
        pid: Option<u32>,
    ) -> Result<Arc<Job>, String> {
        self.prune();
        self.make_room()?;
        self.start_sweeper();
        let config = &self.inner.config;
        let mut jobs = self.jobs();
        let id = new_job_id(|candidate| jobs.contains_key(candidate));
        let output = JobOutput::new(
            &id,
            config.ring_bytes,
            config.window.clone(),
            self.spill_target(),
            config.max_spill_bytes,
        );
        let job = Job::new(
            id.clone(),
            command.to_owned(),
            cwd.display().to_string(),
            false,
            output,
            true,
            timeout,
        );
        job.attach(JobIo::Detached { cancel, pid });
        jobs.insert(id, Arc::clone(&job));
        Ok(job)
    }

    /// Record the end of an adopted run and announce it (once, see [`Job::finish`]).
    pub fn finish_detached(
        &self,
        job: &Job,
        exit_code: Option<i32>,
        signal: Option<String>,
        notices: Vec<String>,
    ) {
        if let Some(event) = job.finish(exit_code, signal, notices) {
            let _ = self.inner.exits.send(event);
        }
    }

    fn spill_target(&self) -> Option<SpillTarget> {
        match (&self.inner.config.artifacts, &self.inner.spill_dir) {
            (Some(store), _) => Some(SpillTarget::Store(Arc::clone(store))),
            (None, Some(dir)) => Some(SpillTarget::Dir(dir.clone())),
            (None, None) => None,
        }
    }

    /// A job by id, visible to `process` (backgrounded), marked as just used.
    pub fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.prune();
        let job = self.jobs().get(id).cloned()?;
        let mut st = job.state();
        if !st.backgrounded {
            return None;
        }
        st.last_used = Instant::now();
        drop(st);
        Some(job)
    }

    /// Forget a job (its output and spill file go with it once nobody holds it).
    pub fn forget(&self, id: &str) -> Option<Arc<Job>> {
        self.jobs().remove(id)
    }

    /// Backgrounded jobs, newest first.
    pub fn list(&self) -> Vec<JobInfo> {
        self.prune();
        let mut jobs: Vec<Arc<Job>> = self
            .jobs()
            .values()
            .filter(|j| j.state().backgrounded)
            .cloned()
            .collect();
        jobs.sort_by(|a, b| b.started.cmp(&a.started).then_with(|| b.id.cmp(&a.id)));
        jobs.iter().map(|j| j.info()).collect()
    }

    /// Number of jobs still running (foreground `yield_ms` runs included).
    pub fn running_count(&self) -> usize {
        self.jobs().values().filter(|j| j.is_running()).count()
    }

    /// Forget finished, backgrounded jobs; returns their ids.
    pub fn clear_finished(&self) -> Vec<String> {
        let mut jobs = self.jobs();
        let ids: Vec<String> = jobs
            .values()
            .filter(|j| {
                let st = j.state();
                st.backgrounded && st.status != JobStatus::Running
            })
            .map(|j| j.id.clone())
            .collect();
        for id in &ids {
            jobs.remove(id);
        }
        ids
    }

    /// Kill every job tree (SIGTERM, then SIGKILL after the grace) and wait until they have ended.
    pub async fn shutdown(&self) {
        let running: Vec<Arc<Job>> = self.jobs().values().filter(|j| j.is_running()).cloned().collect();
        for job in &running {
            job.state().kill_requested = true;
            if let Some(io) = job.io() {
                io.terminate();
            }
        }
        let grace = self.inner.config.shutdown_grace;
        for job in &running {
            wait_until_ended(job, grace).await;
        }
        let stubborn: Vec<Arc<Job>> = running.iter().filter(|j| j.is_running()).cloned().collect();
        let _ = tokio::task::spawn_blocking(move || {
            for job in &stubborn {
                if let Some(io) = job.io() {
                    io.kill_now();
                }
            }
        })
        .await;
        for job in &running {
            wait_until_ended(job, Duration::from_secs(3)).await;
        }
    }
}

/// Wait until `job` has ended, at most `limit`; returns whether it ended.
pub async fn wait_until_ended(job: &Job, limit: Duration) -> bool {
    let mut changes = job.subscribe();
    let _ = tokio::time::timeout(limit, async {
        while job.is_running() {
            if changes.changed().await.is_err() {
                break;
            }
        }
    })
    .await;
    !job.is_running()
}

impl Drop for Inner {
    fn drop(&mut self) {
        let jobs = self.jobs.get_mut().unwrap_or_else(PoisonError::into_inner);
        for job in jobs.values() {
            if job.is_running()
                && let Some(io) = job.io()
            {
                io.kill_now();
            }
        }
        // Forgetting the jobs removes their spill files; then the directory, if nothing else is in it.
        jobs.clear();
        if let Some(dir) = &self.spill_dir {
            let _ = std::fs::remove_dir(dir);
            if let Some(parent) = dir.parent() {
                let _ = std::fs::remove_dir(parent);
            }
        }
    }
}
