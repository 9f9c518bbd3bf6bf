//! Where a job's output goes once its ring overflows: a private file or an artifact, up to a limit.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shellgate_sink::ArtifactStore;

use super::JobOutput;

/// Where a job's whole output is kept once its ring overflows.
#[derive(Debug, Clone)]
pub enum SpillTarget {
    /// A private file in this directory, removed when the job is forgotten.
    Dir(PathBuf),
    /// A new artifact of this store (`artifact://<n>`), kept under the store's quota and expiry.
    Store(Arc<ArtifactStore>),
}

/// Where older output goes once the ring is full.
#[derive(Debug)]
pub enum Spill {
    /// Spilling is disabled.
    Off,
    /// Not needed yet.
    Ready(SpillTarget),
    /// Every byte of the stream so far is in the file.
    Active {
        path: PathBuf,
        writer: BufWriter<File>,
        artifact: Option<String>,
        written: u64,
        limit: u64,
    },
    /// Writing failed (or the quota was reached); bytes that left the ring are gone.
    Failed(String),
}

impl JobOutput {
    /// Where the whole output is, once spilled: `artifact://<n>`, or the spill file's path.
    pub fn artifact(&self) -> Option<String> {
        match &self.spill {
            Spill::Active { path, artifact, .. } => {
                Some(artifact.clone().unwrap_or_else(|| path.display().to_string()))
            }
            _ => None,
        }
    }

    /// Path of the spill file, once it exists.
    pub fn spill_path(&self) -> Option<&Path> {
        match &self.spill {
            Spill::Active { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The error that stopped spilling, if any.
    pub fn spill_error(&self) -> Option<&str> {
        match &self.spill {
            Spill::Failed(e) => Some(e),
            _ => None,
        }
    }

    pub fn start_spill(&mut self) {
        let Spill::Ready(target) = &self.spill else {
            return;
        };
        let created = match target {
            SpillTarget::Dir(dir) => {
                let path = dir.join(&self.file_name);
                match std::fs::create_dir_all(dir).and_then(|()| File::create(&path)) {
                    Ok(file) => {
                        self.owned_file = Some(path.clone());
                        Ok((path, file, None, self.spill_limit))
                    }
                    Err(e) => Err(format!("cannot create {}: {e}", path.display())),
                }
            }
            SpillTarget::Store(store) => store
                .create()
                .map(|a| (a.path, a.file, Some(a.id.uri()), a.limit.min(self.spill_limit)))
                .map_err(|e| format!("cannot create an artifact: {e}")),
        };
        self.spill = match created {
            Ok((path, file, artifact, limit)) => {
                let mut writer = BufWriter::with_capacity(64 * 1024, file);
                // Nothing has left the ring yet, so it holds the whole stream so far.
                let (a, b) = self.ring.as_slices();
                let written = (a.len() + b.len()) as u64;
                if written > limit {
                    Spill::Failed(format!("the output limit ({limit} bytes) is used up"))
                } else {
                    match writer.write_all(a).and_then(|()| writer.write_all(b)) {
                        Ok(()) => Spill::Active {
                            path,
                            writer,
                            artifact,
                            written,
                            limit,
                        },
                        Err(e) => Spill::Failed(format!("cannot write {}: {e}", path.display())),
                    }
                }
            }
            Err(e) => Spill::Failed(e),
        };
    }

    pub fn spill_write(&mut self, chunk: &[u8]) {
        if let Spill::Active {
            path,
            writer,
            written,
            limit,
            ..
        } = &mut self.spill
        {
            *written += chunk.len() as u64;
            if *written > *limit {
                let _ = writer.flush();
                self.spill = Spill::Failed(format!(
                    "the output limit ({limit} bytes) was reached; later output is kept only in memory"
                ));
            } else if let Err(e) = writer.write_all(chunk) {
                self.spill = Spill::Failed(format!("cannot write {}: {e}", path.display()));
            }
        }
    }

    /// Write buffered spill data to the file.
    pub fn flush(&mut self) {
        if let Spill::Active { path, writer, .. } = &mut self.spill
            && let Err(e) = writer.flush()
        {
            self.spill = Spill::Failed(format!("cannot write {}: {e}", path.display()));
        }
    }
}
