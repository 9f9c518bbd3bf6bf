//! A hostile command against the sandbox's promises: each test attacks one guarantee the way an
//! agent could (root's powers, metadata, terminals, Unix sockets, inbound connections) and checks
//! that the attack fails, that the sandbox's ordinary work still runs, and that the refusal comes
//! back as data.

mod common;

use std::fs;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use common::{available, collector, landlock_available, run_sandboxed, scratch, workspace_policy};
use shellgate_sandbox::{DenialKind, SandboxMode, SandboxPolicy};

fn python() -> Option<String> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let path = output.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    available(path.is_some(), "python3 is not installed");
    path
}

fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

#[test]
fn a_root_command_has_no_capabilities_and_makes_no_device_nodes() {
    if !landlock_available() || !available(is_root(), "the tests do not run as root") {
        return;
    }
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let device = ws.join("disk");
    let script = format!(
        "grep CapEff /proc/self/status; \
         mknod {dev} b 8 0 2>/dev/null && echo MADE-BLOCK; \
         mknod {dev}c c 1 3 2>/dev/null && echo MADE-CHAR; \
         head -c1 /proc/1/environ >/dev/null 2>&1 && echo READ-INIT-ENV; \
         id -u",
        dev = device.display()
    );
    let run = run_sandboxed(
        &workspace_policy(&ws),
        &ws,
        &[],
        &["sh", "-c", &script],
        collector(),
    );
    let stdout = run.stdout();
    assert!(stdout.contains("CapEff:\t0000000000000000"), "{stdout}");
    assert!(
        !stdout.contains("MADE") && !stdout.contains("READ-INIT"),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with('0'), "still uid 0 inside: {stdout}");
    assert!(!device.exists());
}

#[test]
fn metadata_changes_only_land_beneath_writable_roots() {
    if !landlock_available() {
        return;
    }
    let base = scratch();
    let ws = base.path().join("ws");
    let outside = base.path().join("outside");
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(&outside).unwrap();
    for dir in [&ws, &outside] {
        fs::write(dir.join("f"), "x").unwrap();
        fs::set_permissions(dir.join("f"), fs::Permissions::from_mode(0o644)).unwrap();
    }
    let uid = nix::unistd::Uid::effective();
    let attempt = |target: &Path| {
        format!(
            "chmod 600 {f} 2>/dev/null && echo CHMOD; chown {uid} {f} 2>/dev/null && echo CHOWN; \
             touch -d 2001-01-01 {f} 2>/dev/null && echo UTIMES; \
             python3 -c 'import os; os.setxattr(\"{f}\", \"user.x\", b\"1\")' 2>/dev/null && echo XATTR; \
             echo end",
            f = target.join("f").display()
        )
    };
    let mtime = |p: &Path| fs::metadata(p).unwrap().modified().unwrap();
    let before = mtime(&outside.join("f"));

    let run = run_sandboxed(
        &workspace_policy(&ws),
        &ws,
        &[],
        &["sh", "-c", &attempt(&outside)],
        collector(),
    );
    assert_eq!(run.stdout().trim(), "end", "{} {}", run.stdout(), run.stderr());
    let meta = fs::metadata(outside.join("f")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o644);
    assert_eq!(mtime(&outside.join("f")), before);
    let report = run.report.expect("collector");
    let target = fs::canonicalize(outside.join("f")).unwrap().display().to_string();
    assert!(
        report
            .denials
            .iter()
            .any(|d| d.kind == DenialKind::Write && d.path.as_deref() == Some(&target) && d.count >= 3),
        "{report:?}"
    );

    // Inside the workspace the same changes work.
    let run = run_sandboxed(
        &workspace_policy(&ws),
        &ws,
        &[],
        &["sh", "-c", &attempt(&ws)],
        collector(),
    );
    for done in ["CHMOD", "CHOWN", "UTIMES"] {
        assert!(run.stdout().contains(done), "{done}: {}", run.stdout());
    }
    assert_eq!(
        fs::metadata(ws.join("f")).unwrap().permissions().mode() & 0o777,
        0o600
    );

    // Read-only mode: the workspace's own files keep their metadata too.
    fs::set_permissions(ws.join("f"), fs::Permissions::from_mode(0o644)).unwrap();
    let read_only = SandboxPolicy::new(SandboxMode::ReadOnly, &ws);
    let run = run_sandboxed(&read_only, &ws, &[], &["sh", "-c", &attempt(&ws)], collector());
    assert_eq!(run.stdout().trim(), "end", "{}", run.stdout());
    assert_eq!(
        fs::metadata(ws.join("f")).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

#[test]
fn other_terminals_are_invisible_and_input_cannot_be_injected() {
    if !landlock_available() {
        return;
    }
    let Some(python) = python() else { return };
    // A terminal of the machine's that the sandbox must not reach: a person's shell, say.
    let other = nix::pty::openpty(None, None).expect("openpty");
    let other_name = fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&other.slave)
    ))
    .unwrap();
    // The sandbox's own terminal, its stdin: pushing input into it is refused too.
    let own = nix::pty::openpty(None, None).expect("openpty");
    let own_name = fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&own.slave)
    ))
    .unwrap();
    let base = scratch();
    let probe = format!(
        "import fcntl, termios, os, sys\n\
         try:\n    fd = os.open('{other}', os.O_RDWR); os.write(fd, b'echo pwned\\n'); print('OPENED-OTHER')\n\
         except OSError as e:\n    print('other:', e.errno)\n\
         try:\n    fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('INJECTED')\n\
         except OSError as e:\n    print('tiocsti:', e.errno)\n\
         import pty\nm, s = pty.openpty(); os.write(m, b'ok\\n'); print('own-pty', os.read(s, 3))\n",
        other = other_name.display()
    );
    let policy = workspace_policy(base.path());
    let layer = shellgate_sandbox::SandboxLayer::new(common::HELPER, policy);
    let spec = layer.wrap(shellgate_executor::LaunchSpec::new(
        python.as_str(),
        ["-c", probe.as_str()],
        base.path(),
    ));
    let output = std::process::Command::new(&spec.program)
        .args(&spec.args)
        .current_dir(base.path())
        .stdin(fs::File::open(&own_name).unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("OPENED-OTHER"), "{stdout}");
    assert!(!stdout.contains("INJECTED"), "{stdout}");
    assert!(
        stdout.contains("tiocsti: 1"),
        "TIOCSTI must fail with EPERM: {stdout}"
    );
    assert!(
        stdout.contains("own-pty b'ok"),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Nothing arrived at either terminal's reader.
    for master in [&other.master, &own.master] {
        nix::fcntl::fcntl(
            master,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        let mut buf = [0u8; 64];
        let mut file = fs::File::from(master.try_clone().unwrap());
        let read = file.read(&mut buf);
        assert!(
            read.is_err() || read.as_ref().is_ok_and(|&n| n == 0),
            "the terminal received {:?}",
            &buf[..read.unwrap_or(0)]
        );
    }
}

/// A Unix socket server outside the sandbox that counts the connections it accepted.
struct Outside {
    listener: UnixListener,
}

impl Outside {
    fn bind(path: &Path) -> Self {
        let listener = UnixListener::bind(path).unwrap();
        listener.set_nonblocking(true).unwrap();
        Self { listener }
    }

    fn accepted(&self) -> usize {
        std::iter::from_fn(|| self.listener.accept().ok()).count()
    }
}

#[test]
fn unix_sockets_outside_the_sandbox_are_unreachable_and_its_own_work() {
    if !landlock_available() {
        return;
    }
    let Some(python) = python() else { return };
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir(&ws).unwrap();
    // One outside every writable root, one in /tmp (a writable root, where tmux, X11 and
    // ssh-agent keep theirs), one abstract, one the configuration lists.
    let beyond = Outside::bind(&base.path().join("daemon.sock"));
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let in_tmp = Outside::bind(&tmp.path().join("agent.sock"));
    let abstract_name = format!("shellgate-test-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt as _;
        let address = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let listener = UnixListener::bind_addr(&address).unwrap();
        listener.set_nonblocking(true).unwrap();
        Outside { listener }
    };
    let listed_path = base.path().join("listed.sock");
    let listed = Outside::bind(&listed_path);
    // A datagram socket like /dev/log: reached by `sendto` with no connect at all.
    let log_path = base.path().join("log.sock");
    let log = std::os::unix::net::UnixDatagram::bind(&log_path).unwrap();
    log.set_nonblocking(true).unwrap();

    let probe = format!(
        "import socket, os\n\
         def attempt(name, address):\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   try:\n        s.connect(address); print('REACHED', name)\n\
         \x20   except OSError as e:\n        print('refused', name, e.errno)\n\
         attempt('beyond', '{beyond}')\n\
         attempt('tmp', '{tmp}')\n\
         attempt('abstract', '\\0{abstract_name}')\n\
         try:\n    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.sendto(b'x', '{log}'); print('REACHED dgram')\n\
         except OSError as e:\n    print('refused dgram', e.errno)\n\
         try:\n    p, q = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); p.sendto(b'x', '{log}'); print('REACHED dgram-pair')\n\
         except OSError as e:\n    print('refused dgram-pair', e.errno)\n\
         s = socket.socket(socket.AF_UNIX); s.connect('{listed}'); print('listed-ok')\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind('own.sock'); srv.listen()\n\
         c = socket.socket(socket.AF_UNIX); c.connect('own.sock'); a, _ = srv.accept(); c.send(b'hi'); print('own', a.recv(2))\n\
         x, y = socket.socketpair(); x.send(b'p'); print('pair', y.recv(1))\n",
        beyond = base.path().join("daemon.sock").display(),
        tmp = tmp.path().join("agent.sock").display(),
        listed = listed_path.display(),
        log = log_path.display(),
    );
    let mut policy = workspace_policy(&ws);
    policy.unix_socket_paths = vec![listed_path.clone()];
    let run = run_sandboxed(&policy, &ws, &[], &[&python, "-c", &probe], collector());
    let stdout = run.stdout();
    assert!(!stdout.contains("REACHED"), "{stdout} {}", run.stderr());
    for name in ["beyond", "tmp", "abstract", "dgram", "dgram-pair"] {
        assert!(stdout.contains(&format!("refused {name}")), "{name}: {stdout}");
    }
    assert!(stdout.contains("listed-ok"), "{stdout} {}", run.stderr());
    assert!(
        stdout.contains("own b'hi'") && stdout.contains("pair b'p'"),
        "{stdout}"
    );
    assert_eq!(beyond.accepted(), 0);
    assert_eq!(in_tmp.accepted(), 0);
    assert_eq!(abstract_listener.accepted(), 0);
    assert_eq!(listed.accepted(), 1);
    assert!(log.recv(&mut [0; 8]).is_err(), "a datagram arrived");
    let report = run.report.expect("collector");
    let refused: Vec<&str> = report
        .denials
        .iter()
        .filter(|d| d.kind == DenialKind::Network)
        .filter_map(|d| d.address.as_deref())
        .collect();
    let shown = format!("unix:{}", base.path().join("daemon.sock").display());
    assert!(refused.contains(&shown.as_str()), "{report:?}");
}

#[test]
fn a_second_thread_cannot_swap_an_allowed_socket_path_for_another() {
    if !landlock_available() {
        return;
    }
    let Some(python) = python() else { return };
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let target = tempfile::tempdir_in("/tmp").unwrap();
    let target_path = target.path().join("t.sock");
    let outside = Outside::bind(&target_path);
    // The allowed path and the forbidden one, the same length, in one buffer that a second thread
    // flips while the first connects (ctypes releases the GIL around the call).
    let allowed = format!("{}/own.sock", ws.display());
    let forbidden = target_path.display().to_string();
    let width = allowed.len().max(forbidden.len());
    let pad = |s: &str| format!("{s}{}", "\\0".repeat(width - s.len()));
    let probe = format!(
        "import ctypes, socket, threading, struct\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind('{allowed}'); srv.listen(1000); srv.setblocking(False)\n\
         good = struct.pack('H', socket.AF_UNIX) + b'{good}\\0'\n\
         bad = struct.pack('H', socket.AF_UNIX) + b'{bad}\\0'\n\
         buf = ctypes.create_string_buffer(good, len(good))\n\
         stop = False\n\
         def flip():\n\
         \x20   while not stop:\n        ctypes.memmove(buf, bad, len(bad)); ctypes.memmove(buf, good, len(good))\n\
         t = threading.Thread(target=flip); t.start()\n\
         ok = 0\n\
         for i in range(300):\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   if libc.connect(s.fileno(), buf, len(good)) == 0: ok += 1\n\
         \x20   s.close()\n\
         \x20   try:\n        while True: srv.accept()[0].close()\n\
         \x20   except BlockingIOError: pass\n\
         stop = True; t.join(); print('connected', ok)\n",
        good = pad(&allowed),
        bad = pad(&forbidden),
    );
    let run = run_sandboxed(
        &workspace_policy(&ws),
        &ws,
        &[],
        &[&python, "-c", &probe],
        collector(),
    );
    assert!(
        run.stdout().contains("connected"),
        "{} {}",
        run.stdout(),
        run.stderr()
    );
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(outside.accepted(), 0, "a swapped path reached the outside socket");
}

#[test]
fn nothing_outside_can_connect_in() {
    if !landlock_available() {
        return;
    }
    let Some(python) = python() else { return };
    let base = scratch();
    let port_file = base.path().join("port");
    // The sandbox listens (bound explicitly and by `listen` alone, which picks a port itself) and
    // waits; the test then tries to connect from outside.
    let probe = format!(
        "import socket, time\n\
         a = socket.socket(); a.bind(('0.0.0.0', 0)); a.listen()\n\
         b = socket.socket(); b.listen()\n\
         open('{port}', 'w').write('%d %d' % (a.getsockname()[1], b.getsockname()[1]))\n\
         a.settimeout(3); b.settimeout(0.1)\n\
         try:\n    a.accept(); print('ACCEPTED')\n\
         except OSError:\n    print('nobody came')\n",
        port = port_file.display()
    );
    let ws = base.path().to_path_buf();
    let handle = std::thread::spawn(move || {
        run_sandboxed(&workspace_policy(&ws), &ws, &[], &[&python, "-c", &probe], None)
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let ports = loop {
        if let Ok(text) = fs::read_to_string(&port_file)
            && let Some((a, b)) = text.split_once(' ')
        {
            break [a.parse::<u16>().unwrap(), b.parse::<u16>().unwrap()];
        }
        assert!(std::time::Instant::now() < deadline, "the sandbox never listened");
        std::thread::sleep(Duration::from_millis(20));
    };
    for port in ports {
        let reached = std::net::TcpStream::connect_timeout(
            &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            Duration::from_millis(500),
        );
        assert!(
            reached.is_err(),
            "port {port} of the sandbox was reachable from outside"
        );
    }
    let run = handle.join().unwrap();
    assert!(
        run.stdout().contains("nobody came"),
        "{} {}",
        run.stdout(),
        run.stderr()
    );
}

#[test]
fn no_repository_can_be_planted_for_a_later_git() {
    if !landlock_available() {
        return;
    }
    let Some(python) = python() else { return };
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let secret = ws.join("secrets/key");
    // Every shape git takes commands from: a new `.git` directory (by mkdir, by rename, through
    // a symlink's target), a `.git` file pointing elsewhere, a `.git` symlink, a bare repository,
    // and a configured protected path that did not exist when the run began.
    let script = "git init -q sub 2>/dev/null && echo ESCAPED-init; \
         mkdir -p a/.git/hooks 2>/dev/null && echo ESCAPED-mkdir; \
         mkdir -p staged/hooks && mv staged b/.git 2>/dev/null; mkdir b && mv staged b/.git 2>/dev/null && echo ESCAPED-rename; \
         mkdir c && echo 'gitdir: /tmp/elsewhere' > c/.git 2>/dev/null && echo ESCAPED-file; \
         mkdir d && ln -s ../staged d/.git 2>/dev/null && echo ESCAPED-symlink; \
         mkdir e && ln -s .git e/link && echo x > e/link 2>/dev/null && echo ESCAPED-through-link; \
         mkdir bare && cd bare && echo 'ref: refs/heads/main' > HEAD && mkdir objects && mkdir refs 2>/dev/null && echo ESCAPED-bare; cd ..; \
         mkdir -p secrets && echo k > secrets/key 2>/dev/null && echo ESCAPED-protected; \
         echo done";
    let mut policy = workspace_policy(&ws);
    policy.protected_paths = vec![secret.clone()];
    let run = run_sandboxed(&policy, &ws, &[], &["sh", "-c", script], collector());
    let stdout = run.stdout();
    assert!(stdout.contains("done"), "{stdout} {}", run.stderr());
    assert!(!stdout.contains("ESCAPED"), "{stdout}");
    for planted in [
        "sub/.git",
        "a/.git",
        "b/.git",
        "c/.git",
        "d/.git",
        "e/.git",
        "bare/refs",
        "secrets/key",
    ] {
        assert!(
            fs::symlink_metadata(ws.join(planted)).is_err(),
            "{planted} was made"
        );
    }
    // The same as the supervisor saw it, reported.
    let report = run.report.expect("collector");
    let ws_real = fs::canonicalize(&ws).unwrap();
    let reported: Vec<&str> = report.denials.iter().filter_map(|d| d.path.as_deref()).collect();
    for planted in ["a/.git", "c/.git", "bare/refs", "secrets/key"] {
        let path = ws_real.join(planted).display().to_string();
        assert!(reported.contains(&path.as_str()), "{path} not in {reported:?}");
    }

    // A second thread flips a name between an allowed one and `.git` while the first makes it.
    let probe = "import ctypes, threading\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         good, bad = b'gxt\\0', b'.git\\0'\n\
         buf = ctypes.create_string_buffer(good, 4)\n\
         stop = False\n\
         def flip():\n\
         \x20   while not stop:\n        ctypes.memmove(buf, bad, 5); ctypes.memmove(buf, good, 4)\n\
         t = threading.Thread(target=flip); t.start()\n\
         made = 0\n\
         for i in range(400):\n\
         \x20   if libc.mkdir(buf, 0o755) == 0:\n        made += 1; libc.rmdir(b'gxt')\n\
         \x20   fd = libc.open(buf, 0o100 | 0o1, 0o644)\n\
         \x20   if fd >= 0:\n        libc.close(fd); libc.unlink(b'gxt')\n\
         stop = True; t.join(); print('made', made)\n";
    let race = ws.join("race");
    fs::create_dir(&race).unwrap();
    let run = run_sandboxed(
        &workspace_policy(&ws),
        &race,
        &[],
        &[&python, "-c", probe],
        collector(),
    );
    assert!(run.stdout().contains("made"), "{} {}", run.stdout(), run.stderr());
    assert!(
        fs::symlink_metadata(race.join(".git")).is_err(),
        "a swapped name made .git"
    );
}

#[test]
fn a_helper_swapped_on_disk_between_two_runs_still_confines_the_next() {
    if !landlock_available() {
        return;
    }
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir(&ws).unwrap();
    // The helper lies in a writable place, as a `cargo run` build in the workspace does.
    let on_disk = ws.join("shellgate-sandbox-exec");
    fs::copy(common::HELPER, &on_disk).unwrap();
    let image = shellgate_sandbox::HelperImage::sealed_copy(&on_disk).unwrap();
    let rewrite = fs::OpenOptions::new()
        .write(true)
        .open(image.path())
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"#!/bin/sh\n"));
    assert!(rewrite.is_err(), "the sealed copy was rewritten");
    let run = |marker: &str| {
        let layer = shellgate_sandbox::SandboxLayer::new(image.path(), workspace_policy(&ws));
        let spec = layer.wrap(shellgate_executor::LaunchSpec::new(
            "sh",
            [
                "-c",
                &format!("touch /etc/{marker} 2>/dev/null && echo ESCAPED; grep Seccomp: /proc/self/status"),
            ],
            ws.as_path(),
        ));
        let output = std::process::Command::new(&spec.program)
            .args(&spec.args)
            .current_dir(&ws)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let first = run("shellgate-swap-1");
    assert!(
        first.contains("Seccomp:\t2") && !first.contains("ESCAPED"),
        "{first}"
    );
    // Replaced by a script that runs its arguments unconfined, then rewritten in place.
    let evil = "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n";
    let replacement = ws.join("evil");
    fs::write(&replacement, evil).unwrap();
    fs::set_permissions(&replacement, fs::Permissions::from_mode(0o755)).unwrap();
    fs::rename(&replacement, &on_disk).unwrap();
    let second = run("shellgate-swap-2");
    fs::write(&on_disk, evil).unwrap();
    let third = run("shellgate-swap-3");
    for out in [&second, &third] {
        assert!(out.contains("Seccomp:\t2") && !out.contains("ESCAPED"), "{out}");
    }
}

#[test]
fn a_protected_link_cannot_be_pointed_elsewhere_nor_its_package_moved() {
    if !landlock_available() {
        return;
    }
    // How an npm install in the workspace looks: a launcher script in its package directory, and
    // the link in `node_modules/.bin` a client starts it by. A link pointed at another program
    // would run it outside any sandbox the next time the client starts the engine.
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir_all(ws.join("node_modules/.bin")).unwrap();
    fs::create_dir_all(ws.join("node_modules/tool/bin")).unwrap();
    let script = ws.join("node_modules/tool/bin/tool");
    fs::write(&script, "#!/bin/sh\necho real\n").unwrap();
    let link = ws.join("node_modules/.bin/tool");
    std::os::unix::fs::symlink("../tool/bin/tool", &link).unwrap();
    let mut policy = workspace_policy(&ws);
    policy.protected_paths = vec![link.clone(), ws.join("node_modules/tool")];
    let attack = "rm -f node_modules/.bin/tool; \
         ln -s /bin/true node_modules/.bin/tool 2>/dev/null && echo ESCAPED-relink; \
         echo '#!/bin/sh' > evil && mv evil node_modules/.bin/tool 2>/dev/null && echo ESCAPED-rename; \
         mv node_modules/tool node_modules/moved 2>/dev/null && echo ESCAPED-move; \
         echo done";
    let run = run_sandboxed(&policy, &ws, &[], &["sh", "-c", attack], collector());
    let stdout = run.stdout();
    assert!(stdout.contains("done"), "{stdout} {}", run.stderr());
    assert!(!stdout.contains("ESCAPED"), "{stdout}");
    assert_eq!(fs::read_to_string(&script).unwrap(), "#!/bin/sh\necho real\n");
    // The link may be gone (removing it only stops the next start), never leading elsewhere.
    if let Ok(target) = fs::read_link(&link) {
        assert_eq!(target, Path::new("../tool/bin/tool"));
    }
}
