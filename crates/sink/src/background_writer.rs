//! [`BackgroundWriter`]: hands spill writes to a thread so that writing the artifact overlaps with
//! sanitizing the next chunks instead of adding to them.
//!
//! Bytes are batched (256 KiB) and passed through a bounded channel (4 batches), so memory stays
//! bounded and a slow disk slows the producer rather than growing a queue. Batches are recycled.

use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

const BATCH: usize = 256 * 1024;
const DEPTH: usize = 4;

/// A `Write` target running on its own thread; errors surface from [`BackgroundWriter::finish`].
pub(crate) struct BackgroundWriter {
    tx: Option<SyncSender<Vec<u8>>>,
    pool: Receiver<Vec<u8>>,
    current: Vec<u8>,
    handle: Option<JoinHandle<io::Result<()>>>,
}

impl BackgroundWriter {
    /// Start the writer thread for `out`.
    pub(crate) fn spawn(mut out: Box<dyn Write + Send>) -> io::Result<Self> {
        let (tx, rx) = sync_channel::<Vec<u8>>(DEPTH);
        let (pool_tx, pool_rx) = sync_channel::<Vec<u8>>(DEPTH + 2);
        let handle = std::thread::Builder::new()
            .name("shellgate-spill".to_owned())
            .spawn(move || {
                for mut batch in rx {
                    out.write_all(&batch)?;
                    batch.clear();
                    let _ = pool_tx.try_send(batch);
                }
                out.flush()
            })?;
        Ok(Self {
            tx: Some(tx),
            pool: pool_rx,
            current: Vec::with_capacity(BATCH),
            handle: Some(handle),
        })
    }

    /// Queue bytes. An error means the thread has stopped; [`BackgroundWriter::finish`] tells why.
    pub(crate) fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let take = (BATCH - self.current.len()).min(bytes.len());
            self.current.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.current.len() >= BATCH {
                self.send()?;
            }
        }
        Ok(())
    }

    fn send(&mut self) -> io::Result<()> {
        let next = self.pool.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let batch = std::mem::replace(&mut self.current, next);
        match &self.tx {
            Some(tx) => tx
                .send(batch)
                .map_err(|_| io::Error::other("the artifact writer stopped")),
            None => Err(io::Error::other("the artifact writer is closed")),
        }
    }

    /// Write what is queued, flush, and stop the thread; the first error wins.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        let sent = if self.current.is_empty() {
            Ok(())
        } else {
            self.send()
        };
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
