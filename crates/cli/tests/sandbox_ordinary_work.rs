//! Ordinary development work runs unchanged in the `workspace-write` sandbox: a threaded program
//! creating files, `cargo test`, a virtual environment with a package installed from an index
//! served inside the same command, `unittest` with a socket pair, a `multiprocessing` pool and a
//! local Unix-socket server. Skips where Landlock is missing (a failure under
//! `SHELLGATE_REQUIRE_ALL=1`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

use common::{available, scratch};

/// A workspace with a `.git` directory, outside `/tmp` (writable in every sandbox).
fn workspace() -> PathBuf {
    let root = scratch();
    std::fs::create_dir_all(root.join("ws/.git")).unwrap();
    root.join("ws")
}

fn run_sandboxed(workspace: &Path, script: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_shellgate"))
        .current_dir(workspace)
        .env_remove("TMPDIR")
        .args([
            "run",
            "--json",
            "--timeout",
            "240",
            "--sandbox",
            "workspace-write",
            script,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "engine failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .args(["-c", "import venv, ensurepip"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// A one-module wheel, `tinypkg 1.0`, in `index/simple/tinypkg/` (served as a simple index).
fn write_wheel(workspace: &Path, python: &str) {
    let dir = workspace.join("index/simple/tinypkg");
    std::fs::create_dir_all(&dir).unwrap();
    let script = r#"
import sys, zipfile
files = {
    "tinypkg/__init__.py": "ANSWER = 42\n",
    "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = "".join(f"{name},,\n" for name in files) + "tinypkg-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
    wheel.writestr("tinypkg-1.0.dist-info/RECORD", record)
"#;
    let status = Command::new(python)
        .args(["-c", script])
        .arg(dir.join("tinypkg-1.0-py3-none-any.whl"))
        .status()
        .unwrap();
    assert!(status.success());
}

const PYTHON_CHECKS: &str = r#"
import multiprocessing, os, socket, threading, unittest

def create(i):
    with open(f"made-by-thread-{i}", "w") as f:
        f.write("x")

threads = [threading.Thread(target=create, args=(i,)) for i in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print("threads", sorted(n for n in os.listdir(".") if n.startswith("made-by-thread")) == [f"made-by-thread-{i}" for i in range(4)])

# A second thread gets no way around the protected names: a new repository stays uncreatable.
refused = []
def plant():
    try:
        os.makedirs("newrepo/.git/hooks")
    except OSError:
        refused.append(True)
planter = threading.Thread(target=plant)
planter.start()
planter.join()
print("thread-git-refused", bool(refused) and not os.path.exists("newrepo/.git"))

class Pair(unittest.TestCase):
    def test_socketpair(self):
        a, b = socket.socketpair()
        a.sendall(b"ping")
        self.assertEqual(b.recv(4), b"ping")

result = unittest.TextTestRunner(verbosity=0).run(unittest.defaultTestLoader.loadTestsFromTestCase(Pair))
print("unittest", result.wasSuccessful())

def square(x):
    return x * x

if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        print("pool", pool.map(square, range(5)) == [0, 1, 4, 9, 16])
    server = socket.socket(socket.AF_UNIX)
    server.bind("local.sock")
    server.listen(1)
    client = socket.socket(socket.AF_UNIX)
    client.connect("local.sock")
    peer, _ = server.accept()
    client.sendall(b"unix")
    print("unix-server", peer.recv(4) == b"unix")
"#;

#[test]
fn ordinary_development_work_runs_in_the_workspace_write_sandbox() {
    if !available(shellgate_sandbox::landlock_abi() >= 4, "Landlock ABI 4 needed") {
        return;
    }
    let Some(python) = python() else {
        assert!(available(false, "a system python3 with venv is needed"));
        return;
    };
    let ws = workspace();
    write_wheel(&ws, python);
    std::fs::File::create(ws.join("checks.py"))
        .unwrap()
        .write_all(PYTHON_CHECKS.as_bytes())
        .unwrap();
    let crate_dir = ws.join("tiny");
    std::fs::create_dir_all(crate_dir.join("src")).unwrap();
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        crate_dir.join("src/lib.rs"),
        "#[test]\nfn adds() { assert_eq!(1 + 1, 2); }\n",
    )
    .unwrap();

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = format!(
        "{python} checks.py; \
         (cd tiny && cargo test --offline --lib 2>&1 | tail -3); \
         {python} -m venv .venv && echo venv-made; \
         {python} -m http.server --bind 127.0.0.1 {port} -d index >/dev/null 2>&1 & server=$!; sleep 1; \
         .venv/bin/pip install -q --disable-pip-version-check --no-cache-dir \
           --index-url http://127.0.0.1:{port}/simple tinypkg && \
         .venv/bin/python -c 'import tinypkg; print(\"installed\", tinypkg.ANSWER)'; kill $server"
    );
    let v = run_sandboxed(&ws, &script);
    let text = v["output"].as_str().unwrap_or_default();
    for marker in [
        "threads True",
        "thread-git-refused True",
        "unittest True",
        "pool True",
        "unix-server True",
        "test result: ok. 1 passed",
        "venv-made",
        "installed 42",
    ] {
        assert!(text.contains(marker), "{marker} missing: {v}");
    }
}
