//! A static file server on all of this machine's addresses that counts the requests it answers:
//! the proof that nothing but what a test allowed reached it.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running server; it stops with the test process.
pub struct StaticServer {
    pub port: u16,
    requests: Arc<AtomicUsize>,
}

impl StaticServer {
    /// Serve the files below `root` (`GET /a/b` answers `root/a/b`; a directory answers its
    /// `index.html`; the query is ignored).
    pub fn start(root: &Path) -> Self {
        let listener = TcpListener::bind("0.0.0.0:0").expect("bind the static server");
        let port = listener.local_addr().expect("local address").port();
        let requests = Arc::new(AtomicUsize::new(0));
        let (counter, root) = (Arc::clone(&requests), root.to_path_buf());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (counter, root) = (Arc::clone(&counter), root.clone());
                std::thread::spawn(move || answer(stream, &root, &counter));
            }
        });
        Self { port, requests }
    }

    /// Requests answered so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn answer(mut stream: TcpStream, root: &Path, counter: &AtomicUsize) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    counter.fetch_add(1, Ordering::SeqCst);
    let text = String::from_utf8_lossy(&head);
    let target = text.split(' ').nth(1).unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let mut file: PathBuf = root.join(path.trim_start_matches('/'));
    if file.is_dir() {
        file = file.join("index.html");
    }
    let safe = !path.split('/').any(|part| part == "..");
    let (status, body) = match std::fs::read(&file) {
        Ok(body) if safe => ("200 OK", body),
        _ => ("404 Not Found", b"not found\n".to_vec()),
    };
    let kind = if file.extension().is_some_and(|e| e == "html") {
        "text/html"
    } else {
        "application/octet-stream"
    };
    // No `Connection: close`: what a client is told about reusing its proxy connection comes from
    // the proxy. (The connection is closed after one answer all the same.)
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nKeep-Alive: timeout=5\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
    let _ = stream.write_all(&body);
}
