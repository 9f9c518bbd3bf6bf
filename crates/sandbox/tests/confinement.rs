//! Real sandboxed runs: writes, network, fail-closed enforcement, limits, denial attribution.

mod common;

use std::ffi::OsStr;
use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::symlink;
use std::process::Command;

use common::{available, collector, landlock_available, run, run_sandboxed, scratch, workspace_policy};
use shellgate_sandbox::{
    DenialKind, HelperFailure, ResourceLimits, SandboxMode, SandboxPolicy, helper::EXIT_NOT_FOUND,
    helper::EXIT_SANDBOX_FAILED,
};

#[test]
fn workspace_write_allows_the_workspace_and_denies_everything_else() {
    if !landlock_available() {
        return;
    }
    let base = scratch();
    let ws = base.path().join("ws");
    let home = base.path().join("home");
    let outside = base.path().join("outside");
    for dir in [&ws, &home, &outside, &ws.join(".git/hooks")] {
        fs::create_dir_all(dir).unwrap();
    }
    fs::write(outside.join("target"), "original").unwrap();
    symlink(outside.join("target"), ws.join("link")).unwrap();
    let etc_probe = format!("/etc/shellgate-sandbox-probe-{}", std::process::id());

    let script = format!(
        "touch ./ok && echo made-ok; \
         touch {etc_probe} 2>/dev/null && echo ESCAPED-etc; \
         touch \"$HOME/x\" 2>/dev/null && echo ESCAPED-home; \
         echo x 2>/dev/null > .git/hooks/x && echo ESCAPED-git; \
         echo x 2>/dev/null > link && echo ESCAPED-link; \
         echo done"
    );
    let collector = collector();
    let run = run_sandboxed(
        &workspace_policy(&ws),
        &ws,
        &[("HOME", home.as_os_str())],
        &["sh", "-c", &script],
        collector,
    );
    let stdout = run.stdout();
    assert!(run.output.status.success(), "{stdout} {}", run.stderr());
    assert!(stdout.contains("made-ok") && stdout.contains("done"), "{stdout}");
    assert!(!stdout.contains("ESCAPED"), "{stdout}");
    assert!(ws.join("ok").exists());
    assert!(!std::path::Path::new(&etc_probe).exists());
    assert!(!home.join("x").exists());
    assert!(!ws.join(".git/hooks/x").exists());
    assert_eq!(fs::read_to_string(outside.join("target")).unwrap(), "original");

    let Some(report) = run.report else { return };
    assert!(report.complete, "{report:?}");
    let writes: Vec<&str> = report
        .denials
        .iter()
        .filter(|d| d.kind == DenialKind::Write)
        .filter_map(|d| d.path.as_deref())
        .collect();
    let canonical = |p: &std::path::Path| fs::canonicalize(p).unwrap().display().to_string();
    // Each denial names the file the call would have created or changed: a write through the
    // symlink names its target.
    for expected in [
        etc_probe.clone(),
        format!("{}/x", canonical(&home)),
        canonical(&outside.join("target")),
        format!("{}/x", canonical(&ws.join(".git/hooks"))),
    ] {
        assert!(
            writes.contains(&expected.as_str()),
            "{expected} not in {writes:?}"
        );
    }
    assert!(
        report
            .denials
            .iter()
            .all(|d| d.path.as_deref() != Some(&canonical(&ws))),
        "the workspace itself was reported: {report:?}"
    );
}

#[test]
fn read_only_mode_denies_the_workspace_too() {
    if !landlock_available() {
        return;
    }
    let base = scratch();
    let collector = collector();
    let policy = SandboxPolicy::new(SandboxMode::ReadOnly, base.path());
    let run = run_sandboxed(
        &policy,
        base.path(),
        &[],
        &[
            "sh",
            "-c",
            "echo hidden > /dev/null && echo devnull-ok; touch ./x",
        ],
        collector,
    );
    assert!(!run.output.status.success());
    assert!(run.stdout().contains("devnull-ok"), "{}", run.stdout());
    assert!(!base.path().join("x").exists());
    if let Some(report) = run.report {
        let file = format!("{}/x", fs::canonicalize(base.path()).unwrap().display());
        assert!(
            report
                .denials
                .iter()
                .any(|d| d.kind == DenialKind::Write && d.path.as_deref() == Some(&file)),
            "{report:?}"
        );
    }
}

#[test]
fn tcp_connects_reach_only_the_sandboxs_own_loopback() {
    if !landlock_available() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // TEST-NET-1 (RFC 5737): never routed, but an unsandboxed connect would try it.
    let script = format!(
        "echo started; (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached-host; \
         (exec 3<>/dev/tcp/192.0.2.1/80) 2>/dev/null && echo reached-outside; \
         python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); \
         c=socket.create_connection(s.getsockname()); print(\"own-loopback\")'"
    );
    let base = scratch();

    let mut plain = Command::new("bash");
    plain.args(["-c", &script]);
    let unsandboxed = run(plain, &[], None);
    assert!(
        unsandboxed.stdout().contains("reached-host"),
        "{}",
        unsandboxed.stderr()
    );
    while listener.accept().is_ok() {}

    let collector = collector();
    let sandboxed = run_sandboxed(
        &workspace_policy(base.path()),
        base.path(),
        &[],
        &["bash", "-c", &script],
        collector,
    );
    let stdout = sandboxed.stdout();
    assert!(stdout.contains("started"), "{}", sandboxed.stderr());
    assert!(!stdout.contains("reached"), "{stdout}");
    assert!(stdout.contains("own-loopback"), "{stdout} {}", sandboxed.stderr());
    assert!(listener.accept().is_err(), "the host's listener was reached");
    let report = sandboxed.report.expect("collector");
    assert!(
        report
            .denials
            .iter()
            .any(|d| d.kind == DenialKind::Network && d.address.as_deref() == Some("192.0.2.1:80")),
        "{report:?}"
    );
}

#[test]
fn every_way_into_gits_commands_is_refused_and_reported() {
    if !landlock_available() {
        return;
    }
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir_all(ws.join(".git/objects")).unwrap();
    fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    fs::write(ws.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    fs::write(ws.join("file"), "x").unwrap();
    symlink(ws.join(".git"), ws.join("git-link")).unwrap();
    // Each line tries one way in; each must fail.
    let attempts = [
        "echo '[core] fsmonitor = touch /tmp/p' >> .git/config",
        "mv .git/config .git/config.old",
        "rm .git/hooks/pre-commit.sample",
        "cp file .git/hooks/post-checkout",
        "mv file .git/hooks/post-checkout",
        "ln -s /tmp/evil .git/hooks/pre-push",
        "chmod 700 .git/hooks/pre-commit.sample",
        "truncate -s 0 .git/config",
        "echo x >> git-link/config",
        "echo /tmp/other/.git > .git/commondir",
        "mkdir -p .git/modules/m/hooks",
        "echo '[core] pager = x' > .git/config.worktree",
        "rmdir .git/hooks",
    ];
    let script: String = attempts
        .iter()
        .map(|a| format!("{a} 2>/dev/null && echo 'ESCAPED: {a}'; "))
        .chain(std::iter::once(
            "echo x > .git/objects/new && echo objects-ok; echo done".to_owned(),
        ))
        .collect();
    let run = run_sandboxed(
        &workspace_policy(&ws),
        &ws,
        &[],
        &["sh", "-c", &script],
        collector(),
    );
    let stdout = run.stdout();
    assert!(stdout.contains("done"), "{stdout} {}", run.stderr());
    assert!(!stdout.contains("ESCAPED"), "{stdout}");
    // The rest of the repository is the workspace's: a commit writes objects, refs and the index.
    assert!(stdout.contains("objects-ok"), "{stdout}");
    assert_eq!(fs::read_to_string(ws.join(".git/config")).unwrap(), "[core]\n");
    assert!(ws.join(".git/hooks/pre-commit.sample").exists());
    assert!(!ws.join(".git/hooks/post-checkout").exists() && ws.join("file").exists());
    for missing in ["commondir", "modules", "config.worktree"] {
        assert!(!ws.join(".git").join(missing).exists(), "{missing}");
    }

    let report = run.report.expect("collector");
    let git = fs::canonicalize(ws.join(".git")).unwrap();
    let reported: Vec<&str> = report
        .denials
        .iter()
        .filter(|d| d.kind == DenialKind::Write)
        .filter_map(|d| d.path.as_deref())
        .collect();
    for object in [
        "config",
        "hooks/pre-commit.sample",
        "hooks/post-checkout",
        "commondir",
        "modules",
    ] {
        let expected = git.join(object).display().to_string();
        assert!(
            reported.contains(&expected.as_str()),
            "{expected} not in {reported:?}"
        );
    }
    // Writes the sandbox allowed are not reported.
    assert!(
        report.denials.iter().all(|d| d
            .path
            .as_deref()
            .is_none_or(|p| p.starts_with(&*git.display().to_string()))),
        "{report:?}"
    );
}

#[test]
fn a_commit_works_in_the_sandbox_and_its_hooks_run_sandboxed() {
    if !landlock_available()
        || !available(
            Command::new("git").arg("--version").output().is_ok(),
            "git missing",
        )
    {
        return;
    }
    let base = scratch();
    let ws = base.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git").args(args).current_dir(&ws).status().unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "t"]);
    let hook = ws.join(".git/hooks/pre-commit");
    fs::write(
        &hook,
        "#!/bin/sh\ntouch /etc/shellgate-hook-probe 2>/dev/null && echo HOOK-ESCAPED\necho hook-ran\n",
    )
    .unwrap();
    Command::new("chmod").arg("755").arg(&hook).status().unwrap();
    let run = run_sandboxed(
        &workspace_policy(&ws),
        &ws,
        &[],
        &[
            "sh",
            "-c",
            "echo a > a.txt && git add a.txt && git commit -q -m first && git log --oneline | wc -l",
        ],
        collector(),
    );
    // git runs hooks with their output on stderr.
    let (stdout, stderr) = (run.stdout(), run.stderr());
    assert!(
        stderr.contains("hook-ran") && !stderr.contains("ESCAPED"),
        "{stdout} {stderr}"
    );
    assert_eq!(stdout.trim(), "1", "{stdout} {stderr}");
    assert!(!std::path::Path::new("/etc/shellgate-hook-probe").exists());
}

#[test]
fn sockets_that_leave_the_network_namespace_are_refused_while_the_network_is_off() {
    if !landlock_available() {
        return;
    }
    let Some(python) = real_python() else { return };
    let base = scratch();
    // Netlink, packet and vsock sockets are not confined by a network namespace (vsock reaches the
    // hypervisor); UDP and the rest of the internet families stay on the sandbox's loopback.
    let probe = "import socket\n\
        for fam, typ, proto in [(socket.AF_NETLINK, socket.SOCK_RAW, 0), (socket.AF_PACKET, socket.SOCK_RAW, 0),\n\
        \x20                       (socket.AF_VSOCK, socket.SOCK_STREAM, 0)]:\n\
        \x20   try:\n\
        \x20       socket.socket(fam, typ, proto); print('opened', fam, typ, proto)\n\
        \x20   except PermissionError:\n\
        \x20       print('refused', fam, typ, proto)\n\
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
        try:\n\
        \x20   u.sendto(b'x', ('192.0.2.1', 53)); print('udp-sent')\n\
        except OSError:\n\
        \x20   print('udp-unreachable')\n\
        socket.socket(socket.AF_INET, socket.SOCK_STREAM); print('tcp-ok')\n\
        socket.socketpair(); print('unix-ok')";
    let refused_alike = |run: &common::Run| {
        let stdout = run.stdout();
        assert!(!stdout.contains("opened"), "{stdout} {}", run.stderr());
        assert_eq!(stdout.matches("refused").count(), 3, "{stdout}");
        assert!(stdout.contains("udp-unreachable"), "{stdout}");
        assert!(
            stdout.contains("tcp-ok") && stdout.contains("unix-ok"),
            "{stdout}"
        );
    };
    // Without a supervisor the base filter refuses them itself.
    let unsupervised = run_sandboxed(
        &workspace_policy(base.path()),
        base.path(),
        &[],
        &[&python, "-c", probe],
        None,
    );
    refused_alike(&unsupervised);
    // With one, the supervised filter stops them and the supervisor refuses and reports them.
    let collector = collector();
    let run = run_sandboxed(
        &workspace_policy(base.path()),
        base.path(),
        &[],
        &[&python, "-c", probe],
        collector,
    );
    refused_alike(&run);
    let Some(report) = run.report else { return };
    let network: Vec<&str> = report
        .denials
        .iter()
        .filter(|d| d.kind == DenialKind::Network)
        .filter_map(|d| d.address.as_deref())
        .collect();
    assert!(network.contains(&"socket(AF_NETLINK, SOCK_RAW)"), "{report:?}");
    assert!(network.contains(&"socket(AF_PACKET, SOCK_RAW)"), "{report:?}");
    assert!(network.contains(&"socket(AF_VSOCK, SOCK_STREAM)"), "{report:?}");
    assert!(!network.iter().any(|a| a.contains("AF_UNIX")), "{report:?}");
}

#[test]
fn unenforceable_policy_fails_closed_unless_degrading_is_allowed() {
    // A minimum ABI above the kernel's stands for "the kernel cannot enforce a requested feature".
    let base = scratch();
    let mut policy = workspace_policy(base.path());
    policy.min_landlock_abi = Some(shellgate_sandbox::landlock_abi().saturating_add(1));
    let refused = run_sandboxed(&policy, base.path(), &[], &["sh", "-c", "echo ran"], None);
    assert_eq!(refused.output.status.code(), Some(EXIT_SANDBOX_FAILED));
    assert!(!refused.stdout().contains("ran"), "the command ran unsandboxed");
    let line = refused.stderr();
    match HelperFailure::parse(line.lines().next().unwrap_or("")) {
        Some(HelperFailure::Unavailable { reason }) => assert!(reason.contains("ABI"), "{reason}"),
        other => panic!("unexpected failure line {line:?}: {other:?}"),
    }

    policy.allow_degraded = true;
    let degraded = run_sandboxed(&policy, base.path(), &[], &["sh", "-c", "echo ran"], None);
    assert!(degraded.output.status.success(), "{}", degraded.stderr());
    assert_eq!(degraded.stdout().trim(), "ran");
}

#[test]
fn a_missing_command_reports_not_found() {
    let base = scratch();
    let policy = SandboxPolicy::new(SandboxMode::Full, base.path());
    let run = run_sandboxed(&policy, base.path(), &[], &["shellgate-no-such-command"], None);
    assert_eq!(run.output.status.code(), Some(EXIT_NOT_FOUND));
    assert!(matches!(
        HelperFailure::parse(run.stderr().trim_end()),
        Some(HelperFailure::Exec { .. })
    ));
}

#[test]
fn an_address_space_limit_stops_a_memory_hog() {
    let Some(python) = real_python() else { return };
    let base = scratch();
    let hog = "b = bytearray(1 << 30); print('allocated', len(b))";
    let free = SandboxPolicy::new(SandboxMode::Full, base.path());
    let unlimited = run_sandboxed(&free, base.path(), &[], &[&python, "-c", hog], None);
    assert!(unlimited.stdout().contains("allocated"), "{}", unlimited.stderr());

    let mut limits = ResourceLimits::default();
    limits.address_space_bytes = Some(256 << 20);
    let limited_policy = free.with_limits(limits);
    let limited = run_sandboxed(&limited_policy, base.path(), &[], &[&python, "-c", hog], None);
    assert!(!limited.output.status.success());
    assert!(!limited.stdout().contains("allocated"));
    assert!(limited.stderr().contains("MemoryError"), "{}", limited.stderr());
}

/// A call through the x32 ABI (`getpid` with bit 30 set) kills the caller, under the base filter alone
/// and under the supervised one: its number matches no rule, so without that check `ptrace` or
/// `io_uring_setup` made this way would pass. Outside the sandbox the same call just returns.
#[cfg(target_arch = "x86_64")]
#[test]
fn calls_through_the_x32_abi_kill_the_caller() {
    use std::os::unix::process::ExitStatusExt;
    if !landlock_available() {
        return;
    }
    let Some(python) = real_python() else { return };
    let probe = "import ctypes\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        print('calling', flush=True)\n\
        print('returned', libc.syscall(0x40000000 | 39), flush=True)";
    let plain = run(
        {
            let mut c = Command::new(&python);
            c.args(["-c", probe]);
            c
        },
        &[],
        None,
    );
    assert!(plain.stdout().contains("returned"), "{}", plain.stderr());
    let base = scratch();
    let killed = |run: &common::Run| {
        assert!(
            run.stdout().contains("calling"),
            "{} {}",
            run.stdout(),
            run.stderr()
        );
        assert!(!run.stdout().contains("returned"), "{}", run.stdout());
        assert_eq!(
            run.output.status.signal(),
            Some(libc::SIGSYS),
            "{:?}",
            run.output.status
        );
    };
    let full = SandboxPolicy::new(SandboxMode::Full, base.path());
    killed(&run_sandboxed(
        &full,
        base.path(),
        &[],
        &[&python, "-c", probe],
        None,
    ));
    // A workspace with a `.git` and the network off: the supervised filter is installed too, and the
    // caller still dies (the base filter's kill outranks the supervised filter's answer; the latter's
    // own x32 check is asserted on its program in `supervise::filter`).
    fs::create_dir_all(base.path().join(".git")).unwrap();
    let supervised = run_sandboxed(
        &workspace_policy(base.path()),
        base.path(),
        &[],
        &[&python, "-c", probe],
        collector(),
    );
    killed(&supervised);
}

#[test]
fn ptrace_is_refused_in_every_mode() {
    let Some(strace) = shellgate_executor::find_on_path("strace") else {
        available(false, "strace is not installed");
        return;
    };
    let base = scratch();
    let policy = SandboxPolicy::new(SandboxMode::Full, base.path());
    let strace = strace.display().to_string();
    let plain = run(
        {
            let mut c = Command::new(&strace);
            c.args(["-o", "/dev/null", "true"]);
            c
        },
        &[],
        None,
    );
    assert!(
        plain.output.status.success(),
        "strace itself fails here: {}",
        plain.stderr()
    );
    let sandboxed = run_sandboxed(
        &policy,
        base.path(),
        &[],
        &[&strace, "-o", "/dev/null", "true"],
        None,
    );
    assert!(
        !sandboxed.output.status.success(),
        "ptrace worked inside the sandbox"
    );
}

#[test]
fn an_ordinary_permission_error_outside_the_sandbox_is_not_a_denial() {
    if !landlock_available() {
        return;
    }
    let Some(setpriv) = shellgate_executor::find_on_path("setpriv") else {
        available(false, "setpriv is not installed");
        return;
    };
    let Some(collector) = collector() else { return };
    let base = scratch();
    let target = format!("/etc/shellgate-eacces-probe-{}", std::process::id());
    // A sandboxed denial happens during the same window, from another pid.
    let sandboxed = run_sandboxed(
        &workspace_policy(base.path()),
        base.path(),
        &[],
        &["touch", &target],
        None,
    );
    assert!(!sandboxed.output.status.success());
    let mut command = Command::new(setpriv);
    command.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "touch",
        &target,
    ]);
    let plain = run(command, &[("LC_ALL", OsStr::new("C"))], Some(collector));
    assert!(!plain.output.status.success());
    assert!(plain.stderr().contains("Permission denied"), "{}", plain.stderr());
    let report = plain.report.expect("collector was given");
    assert!(report.complete, "{report:?}");
    assert!(report.denials.is_empty(), "{report:?}");
}

/// The real Python interpreter (not a version-manager shim, which would itself run under limits).
fn real_python() -> Option<String> {
    let output = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let path = output.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    available(path.is_some(), "python3 is not installed");
    path
}
