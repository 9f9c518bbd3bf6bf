//! [`BackgroundWriter`]: hands spill writes to a thread so that writing the artifact overlaps with
//! sanitizing the next chunks instead of adding to them.
//!
//! Bytes are batched (256 KiB) and passed through a bounded channel (4 batches), so memory stays
//! bounded and a slow disk slows the producer rather than growing a queue. Batches are recycled. A batch
//! that is still filling is written anyway once the writer has been idle for 50 ms, so the artifact on
//! disk trails the stream by at most that long: if the engine is killed, the artifact holds everything up
//! to shortly before the crash.

use std::io::{self, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

const BATCH: usize = 256 * 1024;
const DEPTH: usize = 4;
/// How long the writer waits for a full batch before writing the one still filling.
const IDLE_FLUSH: Duration = Duration::from_millis(50);

/// A `Write` target running on its own thread; errors surface from [`BackgroundWriter::finish`].
pub(crate) struct BackgroundWriter {
    tx: Option<SyncSender<Vec<u8>>>,
    pool: Receiver<Vec<u8>>,
    /// The batch being filled; the thread takes it when idle. Bytes are only appended after every
    /// earlier batch was sent, and the thread only takes it once the channel is empty, so order holds.
    current: Arc<Mutex<Vec<u8>>>,
    handle: Option<JoinHandle<io::Result<()>>>,
}

fn lock(current: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    current.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BackgroundWriter {
    /// Start the writer thread for `out`.
    pub(crate) fn spawn(mut out: Box<dyn Write + Send>) -> io::Result<Self> {
        let (tx, rx) = sync_channel::<Vec<u8>>(DEPTH);
        let (pool_tx, pool_rx) = sync_channel::<Vec<u8>>(DEPTH + 2);
        let current = Arc::new(Mutex::new(Vec::with_capacity(BATCH)));
        let filling = Arc::clone(&current);
        let handle = std::thread::Builder::new()
            .name("shellgate-spill".to_owned())
            .spawn(move || {
                loop {
                    match rx.recv_timeout(IDLE_FLUSH) {
                        Ok(mut batch) => {
                            out.write_all(&batch)?;
                            batch.clear();
                            let _ = pool_tx.try_send(batch);
                        }
                        Err(RecvTimeoutError::Timeout) => {
                            let pending = std::mem::take(&mut *lock(&filling));
                            if !pending.is_empty() {
                                out.write_all(&pending)?;
                            }
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                out.flush()
            })?;
        Ok(Self {
            tx: Some(tx),
            pool: pool_rx,
            current,
            handle: Some(handle),
        })
    }

    /// Queue bytes. An error means the thread has stopped; [`BackgroundWriter::finish`] tells why.
    pub(crate) fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let full = {
                let mut current = lock(&self.current);
                let take = BATCH.saturating_sub(current.len()).clamp(1, bytes.len());
                current.extend_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                (current.len() >= BATCH).then(|| {
                    let next = self.pool.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    std::mem::replace(&mut *current, next)
                })
            };
            if let Some(batch) = full {
                self.send(batch)?;
            }
        }
        Ok(())
    }

    fn send(&mut self, batch: Vec<u8>) -> io::Result<()> {
        match &self.tx {
            Some(tx) => tx
                .send(batch)
                .map_err(|_| io::Error::other("the artifact writer stopped")),
            None => Err(io::Error::other("the artifact writer is closed")),
        }
    }

    /// Write what is queued, flush, and stop the thread; the first error wins.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut *lock(&self.current));
        let sent = if rest.is_empty() { Ok(()) } else { self.send(rest) };
        self.join().and(sent)
    }

    fn join(&mut self) -> io::Result<()> {
        self.tx = None;
        match self.handle.take() {
            Some(handle) => handle
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the artifact writer panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn writes_everything_in_order() {
        let shared = Shared::default();
        let mut writer = BackgroundWriter::spawn(Box::new(shared.clone())).unwrap();
        let mut expect = Vec::new();
        for i in 0..5000u32 {
            let piece = format!("{i}:{}\n", "x".repeat((i % 300) as usize));
            writer.write_all(piece.as_bytes()).unwrap();
            expect.extend_from_slice(piece.as_bytes());
        }
        writer.finish().unwrap();
        assert_eq!(*shared.0.lock().unwrap(), expect);
    }

    #[test]
    fn a_partial_batch_reaches_the_target_while_the_stream_is_idle() {
        let shared = Shared::default();
        let mut writer = BackgroundWriter::spawn(Box::new(shared.clone())).unwrap();
        writer.write_all(b"first line\n").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while shared.0.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            *shared.0.lock().unwrap(),
            b"first line\n",
            "written before finish"
        );
        writer.write_all(b"second\n").unwrap();
        writer.finish().unwrap();
        assert_eq!(*shared.0.lock().unwrap(), b"first line\nsecond\n");
    }

    #[test]
    fn the_thread_error_is_reported() {
        let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
        let mut writer = BackgroundWriter::spawn(Box::new(full)).unwrap();
        let chunk = vec![b'x'; 100_000];
        let mut stopped = false;
        for _ in 0..100 {
            if writer.write_all(&chunk).is_err() {
                stopped = true;
                break;
            }
        }
        assert!(stopped, "a failed writer stops accepting bytes");
        let err = writer.finish().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
    }
}
