//! Signalling everything a terminal session started, through the executor's process trees.
//!
//! The program is a session leader (its pid is its session id and process group id), so the tree
//! holds its session, including jobs an interactive shell moved into their own process groups, and
//! — when the engine is a child subreaper — processes that left the session but carry the run marker.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use shellgate_executor::tree::ProcessTree;

/// Send `signal` to the tree. Returns whether anything received it.
pub(crate) fn signal_tree(tree: &ProcessTree, signal: Signal) -> bool {
    // The tree lists its members after signalling the group, when a SIGKILL may already have
    // emptied it; the group delivery itself says the signal arrived.
    let group = killpg(Pid::from_raw(tree.leader() as i32), signal).is_ok();
    let members = tree.signal(signal);
    group || !members.is_empty()
}

/// Whether any live (non-zombie) process of the tree remains.
pub(crate) fn tree_alive(tree: &ProcessTree) -> bool {
    tree.members().iter().any(|p| !p.is_zombie())
}
