//! The server's stdin and stdout, read and written through the reactor when they are pipes.
//!
//! tokio's `stdin()` and `stdout()` do every read and write on its blocking thread pool, which costs
//! thread hops per request and per response. When they are pipes (as under an agent), each is reopened
//! through `/proc/self/fd/N`: that gives a new open file description, so making it non-blocking leaves
//! alone the descriptor that other processes — or our own stderr, when it is the same pipe — hold.
//! Anything else (a terminal, a file, a socket, no `/proc`) keeps tokio's blocking-pool handles.

use std::fs::OpenOptions;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// Requests, one JSON object per line.
pub(crate) fn input() -> Box<dyn AsyncRead + Unpin + Send> {
    match OpenOptions::new()
        .read(true)
        .open("/proc/self/fd/0")
        .and_then(pipe::Receiver::from_file)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    }
}

/// Responses and notifications.
pub(crate) fn output() -> Box<dyn AsyncWrite + Unpin + Send> {
    match OpenOptions::new()
        .write(true)
        .open("/proc/self/fd/1")
        .and_then(pipe::Sender::from_file)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    }
}
