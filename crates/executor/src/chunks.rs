//! 64 KiB heap blocks reused from run to run: a run's output read buffer and the stacks that the
//! processes starting a command run on between `clone` and `exec`.
//!
//! A fresh zeroed block of this size costs every run a 64 KiB `memset` (the C library's heap hands
//! back used memory, so `calloc` clears it) and pushes the allocator into consolidating its free
//! lists. None of these users needs zeroed memory: a read buffer is written before it is read and a
//! stack before it is used. So a few blocks are kept for the next run.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

/// Size of every block.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Blocks kept for reuse (a guarded run holds three at once, an unguarded one two; blocks given
/// back beyond this are freed).
const KEEP: usize = 8;

/// Where given-back blocks wait for the next taker.
pub(crate) struct Pool(Mutex<Vec<Box<[u8]>>>);

/// The pool every run takes from.
static SPARE: Pool = Pool::new();

impl Pool {
    const fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }

    fn take(&'static self) -> Chunk {
        let kept = self.0.lock().ok().and_then(|mut spare| spare.pop());
        Chunk {
            block: kept.unwrap_or_else(|| vec![0; CHUNK].into_boxed_slice()),
            pool: self,
        }
    }

    fn give(&self, block: Box<[u8]>) {
        if let Ok(mut spare) = self.0.lock()
            && spare.len() < KEEP
        {
            spare.push(block);
        }
    }
}

/// A block of [`CHUNK`] bytes, of unspecified content, given back for reuse when dropped. Its
/// address is stable (a heap block), so a child process may run on it while it lives: its owner
/// keeps it until every process using it has exec'd or been reaped, since a dropped block goes
/// straight to the next run.
pub(crate) struct Chunk {
    block: Box<[u8]>,
    pool: &'static Pool,
}

impl Chunk {
    /// A kept block, or a new one.
    pub(crate) fn take() -> Self {
        SPARE.take()
    }
}

impl Deref for Chunk {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.block
    }
}

impl DerefMut for Chunk {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.block
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        self.pool.give(std::mem::take(&mut self.block));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_block_is_handed_out_again_and_the_spares_stay_few() {
        static POOL: Pool = Pool::new();
        let first = POOL.take();
        assert_eq!(first.len(), CHUNK);
        let address = first.as_ptr();
        drop(first);
        let again = POOL.take();
        assert_eq!(again.as_ptr(), address, "a given-back block is reused");
        let many: Vec<Chunk> = (0..3 * KEEP).map(|_| POOL.take()).collect();
        assert!(many.iter().all(|c| c.len() == CHUNK));
        drop(many);
        drop(again);
        assert_eq!(
            POOL.0.lock().unwrap().len(),
            KEEP,
            "at most {KEEP} blocks are kept"
        );
    }
}
