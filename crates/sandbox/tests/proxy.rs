//! The network by name: a sandbox whose only way out is the engine's proxy. Attacks first — every
//! way around the lists fails, is reported, and never reaches the server (which counts requests) —
//! then the tools that should work: curl, python's urllib, `pip download`, `git clone` over http.
//!
//! Names lead to the loopback server through the proxy's static `hosts`; the server listens on
//! every address, so a direct connect to this machine's other address would reach it if the
//! sandbox had any route there.

mod common;

use std::net::IpAddr;
use std::path::Path;
use std::process::Command;

use common::static_server::StaticServer;
use common::{HELPER, Run, available, collector, landlock_available, run, scratch, workspace_policy};
use shellgate_sandbox::{Denial, ProxyPolicy, SandboxLayer, SandboxPolicy};

fn usable() -> bool {
    landlock_available() && available(which("curl"), "curl is not installed")
}

fn which(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Rules allowing `allowed`, refusing `denied`, with every name in `names` leading to `ip`.
fn proxy(allowed: &[&str], denied: &[&str], names: &[&str], ip: &str, allow_local: bool) -> ProxyPolicy {
    let mut proxy = ProxyPolicy::allowing(allowed.iter().copied());
    proxy.denied_domains = denied.iter().map(|d| (*d).to_owned()).collect();
    for name in names {
        proxy.hosts.insert((*name).to_owned(), ip.parse().unwrap());
    }
    proxy.allow_local_addresses = allow_local;
    proxy
}

/// Run `script` with `sh -c` in a workspace-write sandbox reaching out through `proxy`, with the
/// engine's supervisor and a collector around it; the launch layer sets the proxy variables.
fn run_proxied(workspace: &Path, proxy: ProxyPolicy, script: &str) -> Run {
    run_with_policy(workspace_policy(workspace).with_proxy(proxy), workspace, script)
}

fn run_with_policy(mut policy: SandboxPolicy, workspace: &Path, script: &str) -> Run {
    policy.denial_supervisor = Some(shellgate_sandbox::denial_supervisor().expect("denial supervisor"));
    let spec = SandboxLayer::new(HELPER, policy).wrap(shellgate_executor::LaunchSpec::new(
        "sh",
        ["-c", script],
        workspace,
    ));
    let mut command = Command::new(&spec.program);
    command.args(&spec.args).current_dir(&spec.cwd).envs(&spec.env);
    let run = run(command, &[], collector());
    eprintln!("stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    run
}

fn denials(run: &Run) -> Vec<Denial> {
    run.report.as_ref().map(|r| r.denials.clone()).unwrap_or_default()
}

fn has_denial(run: &Run, address: &str, reason: &str) -> bool {
    denials(run)
        .iter()
        .any(|d| d.address.as_deref() == Some(address) && d.reason.as_deref() == Some(reason))
}

/// An address of this machine other than loopback, where the server also listens.
fn outside_address() -> Option<IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

fn served_root() -> tempfile::TempDir {
    let root = scratch();
    std::fs::write(root.path().join("hello.txt"), "hello through the proxy\n").unwrap();
    root
}

#[test]
fn names_outside_the_lists_and_denied_spellings_never_reach_the_server() {
    if !usable() {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let server = StaticServer::start(root.path());
    let port = server.port;
    let names = ["pkg.test", "other.test", "bad.ok.test", "good.ok.test", "ok.test"];
    let rules = proxy(
        &["pkg.test:1", "*.ok.test"],
        &["bad.ok.test"],
        &names,
        "127.0.0.1",
        true,
    );
    let script = format!(
        "for url in http://other.test:{port}/hello.txt http://BAD.ok.test.:{port}/hello.txt \
         http://ok.test:{port}/hello.txt http://pkg.test:{port}/hello.txt; do \
           curl -sS -o /dev/null -w '%{{http_code}}\\n' \"$url\"; done; \
         curl -sS -p -o /dev/null https://other.test:{port}/ || echo tunnel-refused; \
         curl -sS --proxy socks5h://127.0.0.1:3128 http://bad.ok.test:{port}/hello.txt || echo socks-refused"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    let stdout = run.stdout();
    assert_eq!(stdout.matches("403").count(), 4, "{stdout}");
    assert!(
        stdout.contains("tunnel-refused") && stdout.contains("socks-refused"),
        "{stdout}"
    );
    assert_eq!(server.requests(), 0, "a refused request reached the server");
    if run.report.is_none() {
        return;
    }
    assert!(
        has_denial(&run, &format!("other.test:{port}"), "domain not allowed"),
        "{:?}",
        denials(&run)
    );
    assert!(
        has_denial(&run, &format!("bad.ok.test:{port}"), "denied domain"),
        "{:?}",
        denials(&run)
    );
    assert!(
        has_denial(&run, &format!("ok.test:{port}"), "domain not allowed"),
        "{:?}",
        denials(&run)
    );
    assert!(
        has_denial(&run, &format!("pkg.test:{port}"), "domain not allowed"),
        "{:?}",
        denials(&run)
    );
    let bad = denials(&run)
        .into_iter()
        .find(|d| d.address.as_deref() == Some(&format!("bad.ok.test:{port}")))
        .unwrap();
    assert_eq!(bad.count, 2, "the curl and the SOCKS request");
    assert!(run.report.as_ref().unwrap().network.is_empty());
}

#[test]
fn programs_that_ignore_the_proxy_have_no_route() {
    if !usable() || !available(which("python3"), "python3 is not installed") {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let server = StaticServer::start(root.path());
    let port = server.port;
    // This machine's other address where it has one (the server listens there too), else a
    // documentation address (TEST-NET-1): either way nothing but the proxy may lead out.
    let outside = outside_address().map_or_else(|| "192.0.2.1".to_owned(), |ip| ip.to_string());
    let rules = proxy(&["pkg.test"], &[], &["pkg.test"], "127.0.0.1", true);
    // Each attempt goes to an address of its own, so each must be reported once.
    let script = format!(
        "curl -sS --noproxy '*' http://127.0.0.1:{port}/hello.txt || echo loopback-refused; \
         curl -sS --noproxy '*' http://{outside}:{port}/hello.txt || echo direct-refused; \
         python3 -c '
import socket
def attempt(name, kind, address, connect=True):
    s = socket.socket(socket.AF_INET, kind)
    s.settimeout(5)
    try:
        if connect:
            s.connect(address)
            s.send(b\"GET /hello.txt HTTP/1.0\\r\\n\\r\\n\")
            print(name, \"got\", s.recv(100))
        else:
            s.sendto(b\"x\", address)
            print(name, \"went\")
    except OSError as e:
        print(name, \"refused\", e)
attempt(\"tcp-loopback\", socket.SOCK_STREAM, (\"127.0.0.2\", {port}))
attempt(\"tcp\", socket.SOCK_STREAM, (\"{outside}\", {port}))
attempt(\"udp\", socket.SOCK_DGRAM, (\"192.0.2.1\", 53))
attempt(\"sendto\", socket.SOCK_DGRAM, (\"192.0.2.1\", 54), connect=False)
attempt(\"udp-loopback\", socket.SOCK_DGRAM, (\"127.0.0.1\", 55), connect=False)
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    print(\"raw went\")
except OSError as e:
    print(\"raw refused\", e)
'"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    let stdout = run.stdout();
    for line in [
        "loopback-refused",
        "direct-refused",
        "tcp-loopback refused",
        "tcp refused",
        "udp refused",
        "sendto refused",
        "udp-loopback refused",
        "raw refused",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    assert_eq!(server.requests(), 0, "a direct connection reached the server");
    if run.report.is_none() {
        return;
    }
    for address in [
        format!("127.0.0.1:{port}"),
        format!("{outside}:{port}"),
        format!("127.0.0.2:{port}"),
        "192.0.2.1:53".to_owned(),
        "192.0.2.1:54".to_owned(),
        "127.0.0.1:55".to_owned(),
        "socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)".to_owned(),
    ] {
        let found: Vec<_> = denials(&run)
            .into_iter()
            .filter(|d| d.address.as_deref() == Some(address.as_str()))
            .collect();
        let counted = if address.starts_with(&outside) && address.ends_with(&format!(":{port}")) {
            // curl and the TCP socket.
            2
        } else {
            1
        };
        assert!(
            found.len() == 1
                && found[0].count == counted
                && found[0].reason.as_deref() == Some("direct connection"),
            "{address}: {:?}",
            denials(&run)
        );
    }
}

#[test]
fn the_commands_own_loopback_servers_are_reached_directly() {
    if !usable() || !available(which("python3"), "python3 is not installed") {
        return;
    }
    let workspace = scratch();
    let rules = proxy(&["pkg.test"], &[], &["pkg.test"], "127.0.0.1", true);
    let script = "python3 -c '
import socket, threading
tcp = socket.socket(); tcp.bind((\"127.0.0.1\", 0)); tcp.listen(1)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.bind((\"127.0.0.1\", 0))
def serve():
    c, _ = tcp.accept(); c.sendall(c.recv(10)); c.close()
threading.Thread(target=serve).start()
c = socket.create_connection(tcp.getsockname()); c.sendall(b\"ping\"); print(\"tcp\", c.recv(10).decode())
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b\"pong\", udp.getsockname()); print(\"udp\", udp.recv(10).decode())
'";
    let run = run_proxied(workspace.path(), rules, script);
    assert_eq!(run.stdout(), "tcp ping\nudp pong\n", "{}", run.stderr());
    if let Some(report) = &run.report {
        assert!(report.denials.is_empty(), "{:?}", report.denials);
    }
}

#[test]
fn a_listed_name_leading_to_a_local_address_is_refused() {
    if !usable() {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let server = StaticServer::start(root.path());
    let port = server.port;
    let mut rules = proxy(
        &["pkg.test", "meta.test", "[::ffff:127.0.0.1]"],
        &[],
        &["pkg.test"],
        "127.0.0.1",
        false,
    );
    rules
        .hosts
        .insert("meta.test".into(), "169.254.169.254".parse().unwrap());
    let script = format!(
        "for url in http://pkg.test:{port}/hello.txt http://meta.test/latest/meta-data/ \
         'http://[::ffff:127.0.0.1]:{port}/hello.txt'; do \
           curl -sS -o /dev/null -w '%{{http_code}}\\n' \"$url\"; done"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    assert_eq!(run.stdout().matches("403").count(), 3, "{}", run.stdout());
    assert_eq!(server.requests(), 0, "a local address was reached");
    if run.report.is_none() {
        return;
    }
    for address in [
        format!("pkg.test:{port}"),
        "meta.test:80".to_owned(),
        format!("[::ffff:127.0.0.1]:{port}"),
    ] {
        assert!(
            has_denial(&run, &address, "resolves to a local address"),
            "{address}: {:?}",
            denials(&run)
        );
    }
}

#[test]
fn internationalised_names_match_in_either_spelling() {
    if !usable() || !available(which("python3"), "python3 is not installed") {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let server = StaticServer::start(root.path());
    let port = server.port;
    // The lists in one spelling, the hosts in the other; requests in both.
    let mut rules = proxy(
        &["bücher.test", "xn--caf-dma.test"],
        &["xn--bse-sna.bücher.test"],
        &["xn--bcher-kva.test", "café.test", "böse.xn--bcher-kva.test"],
        "127.0.0.1",
        true,
    );
    rules.allowed_domains.push("*.bücher.test".into());
    // Raw requests carry the names as UTF-8, as a client that does not map them would send them.
    let script = format!(
        "python3 -c '
import socket
def rest(s):
    data = b\"\"
    while True:
        more = s.recv(4096)
        if not more:
            return data
        data += more
def fetch(how, host):
    s = socket.create_connection((\"127.0.0.1\", 3128))
    if how == \"connect\":
        s.sendall(\"CONNECT {{}}:{port} HTTP/1.1\\r\\n\\r\\n\".format(host).encode())
        reply = s.recv(1000)
        if b\" 200 \" in reply:
            s.sendall(b\"GET /hello.txt HTTP/1.0\\r\\n\\r\\n\")
            reply = rest(s)
    elif how == \"socks\":
        name = host.encode()
        s.sendall(b\"\\x05\\x01\\x00\")
        s.recv(2)
        s.sendall(b\"\\x05\\x01\\x00\\x03\" + bytes([len(name)]) + name + ({port}).to_bytes(2, \"big\"))
        reply = s.recv(10)
        if reply[1] == 0:
            s.sendall(b\"GET /hello.txt HTTP/1.0\\r\\n\\r\\n\")
            reply = rest(s)
    else:
        s.sendall(\"GET http://{{}}:{port}/hello.txt HTTP/1.1\\r\\n\\r\\n\".format(host).encode())
        reply = rest(s)
    print(how, host, \"reached\" if b\"hello through the proxy\" in reply else \"refused\")
fetch(\"get\", \"bücher.test\")
fetch(\"connect\", \"BÜCHER.test.\")
fetch(\"socks\", \"xn--bcher-kva.test\")
fetch(\"get\", \"xn--caf-dma.test\")
fetch(\"socks\", \"café.test\")
fetch(\"get\", \"xn--bse-sna.xn--bcher-kva.test\")
fetch(\"connect\", \"böse.bücher.test\")
fetch(\"get\", \"xn--zz.test\")
'"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    let stdout = run.stdout();
    for line in [
        "get bücher.test reached",
        "connect BÜCHER.test. reached",
        "socks xn--bcher-kva.test reached",
        "get xn--caf-dma.test reached",
        "socks café.test reached",
        "get xn--bse-sna.xn--bcher-kva.test refused",
        "connect böse.bücher.test refused",
        "get xn--zz.test refused",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    assert_eq!(server.requests(), 5);
    let Some(report) = &run.report else { return };
    assert_eq!(report.network.len(), 2, "{:?}", report.network);
    assert!(
        report
            .network
            .iter()
            .all(|t| ["xn--bcher-kva.test", "xn--caf-dma.test"].contains(&t.host.as_str())),
        "{:?}",
        report.network
    );
    let denied = |address: &str, reason: &str, count: u32| {
        report.denials.iter().any(|d| {
            d.address.as_deref() == Some(address) && d.reason.as_deref() == Some(reason) && d.count == count
        })
    };
    assert!(
        denied(
            &format!("xn--bse-sna.xn--bcher-kva.test:{port}"),
            "denied domain",
            2
        ),
        "{:?}",
        report.denials
    );
    assert!(
        denied(&format!("xn--zz.test:{port}"), "domain not allowed", 1),
        "{:?}",
        report.denials
    );
}

#[test]
fn a_name_outside_the_static_hosts_goes_through_the_system_resolver() {
    if !usable() {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let server = StaticServer::start(root.path());
    let port = server.port;
    // `localhost` is in no `hosts` table of the proxy: the system resolver answers it.
    // (`NO_PROXY` names localhost: an empty list sends it to the proxy all the same.)
    let fetch = format!(
        "curl -sS --noproxy '' -o /dev/null -w '%{{http_code}}\\n' http://localhost:{port}/hello.txt"
    );
    let refused = run_proxied(
        workspace.path(),
        proxy(&["localhost"], &[], &[], "127.0.0.1", false),
        &fetch,
    );
    assert_eq!(refused.stdout().trim(), "403", "{}", refused.stderr());
    assert_eq!(server.requests(), 0);
    if refused.report.is_some() {
        assert!(
            has_denial(
                &refused,
                &format!("localhost:{port}"),
                "resolves to a local address"
            ),
            "{:?}",
            denials(&refused)
        );
    }
    let reached = run_proxied(
        workspace.path(),
        proxy(&["localhost"], &[], &[], "127.0.0.1", true),
        &fetch,
    );
    assert_eq!(reached.stdout().trim(), "200", "{}", reached.stderr());
    assert_eq!(server.requests(), 1);
    if let Some(report) = &reached.report {
        assert_eq!(report.network.len(), 1, "{:?}", report.network);
        assert_eq!(report.network[0].host, "localhost");
    }
}

#[test]
fn an_allowed_name_is_fetched_by_curl_python_and_socks() {
    if !usable() || !available(which("python3"), "python3 is not installed") {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let server = StaticServer::start(root.path());
    let port = server.port;
    let rules = proxy(&["pkg.test"], &[], &["pkg.test"], "127.0.0.1", true);
    let url = format!("http://pkg.test:{port}/hello.txt");
    let script = format!(
        "curl -sS {url}; curl -sS --proxy socks5h://127.0.0.1:3128 {url}; \
         python3 -c 'import urllib.request; print(urllib.request.urlopen(\"{url}\").read().decode(), end=\"\")'"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    assert_eq!(
        run.stdout().matches("hello through the proxy").count(),
        3,
        "{}",
        run.stdout()
    );
    assert_eq!(server.requests(), 3);
    let Some(report) = &run.report else { return };
    assert!(report.denials.is_empty(), "{:?}", report.denials);
    let traffic = &report.network;
    assert_eq!(traffic.len(), 1, "{traffic:?}");
    assert_eq!((traffic[0].host.as_str(), traffic[0].port), ("pkg.test", port));
    assert!(
        traffic[0].bytes_in >= 3 * 24 && traffic[0].bytes_out > 0,
        "{traffic:?}"
    );
}

/// A simple index (PEP 503) holding one wheel, built with python's `zipfile`.
fn simple_index(root: &Path) {
    let dir = root.join("simple/demo-pkg");
    std::fs::create_dir_all(&dir).unwrap();
    let wheel = "demo_pkg-1.0-py3-none-any.whl";
    let build = format!(
        "import zipfile\n\
         z = zipfile.ZipFile('{}', 'w')\n\
         z.writestr('demo_pkg/__init__.py', 'VALUE = 1\\n')\n\
         z.writestr('demo_pkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: demo-pkg\\nVersion: 1.0\\n')\n\
         z.writestr('demo_pkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
         z.writestr('demo_pkg-1.0.dist-info/RECORD', '')\n\
         z.close()\n",
        dir.join(wheel).display()
    );
    let status = Command::new("python3").args(["-c", &build]).status().unwrap();
    assert!(status.success());
    std::fs::write(
        dir.join("index.html"),
        format!("<html><body><a href=\"{wheel}\">{wheel}</a></body></html>\n"),
    )
    .unwrap();
}

#[test]
fn pip_downloads_from_an_allowed_index() {
    let pip = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable() || !available(pip, "python3 -m pip is not installed") {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    simple_index(root.path());
    let server = StaticServer::start(root.path());
    let rules = proxy(&["pkg.test"], &[], &["pkg.test"], "127.0.0.1", true);
    let script = format!(
        "python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check \
         --trusted-host pkg.test --index-url http://pkg.test:{}/simple/ -d wheels demo-pkg",
        server.port
    );
    let run = run_proxied(workspace.path(), rules, &script);
    assert!(run.output.status.success(), "{}", run.stderr());
    assert!(
        workspace
            .path()
            .join("wheels/demo_pkg-1.0-py3-none-any.whl")
            .is_file()
    );
    // The index page and the wheel.
    assert_eq!(server.requests(), 2);
}

#[test]
fn git_clones_over_http_from_an_allowed_host() {
    if !usable() || !available(which("git"), "git is not installed") {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let git = |dir: &Path, args: &[&str]| {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let source = root.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    git(&source, &["init", "-q"]);
    std::fs::write(source.join("README"), "cloned through the proxy\n").unwrap();
    git(&source, &["add", "README"]);
    git(&source, &["commit", "-qm", "first"]);
    git(root.path(), &["clone", "-q", "--bare", "source", "repo.git"]);
    // Dumb HTTP: the bare repository served as files.
    git(&root.path().join("repo.git"), &["update-server-info"]);
    let server = StaticServer::start(root.path());
    let rules = proxy(&["pkg.test"], &[], &["pkg.test"], "127.0.0.1", true);
    let script = format!(
        "git clone -q http://pkg.test:{}/repo.git clone && cat clone/README",
        server.port
    );
    // A new repository is refused where `.git` is a protected name: this workspace protects none.
    let mut policy = workspace_policy(workspace.path()).with_proxy(rules);
    policy.protected_names.clear();
    let run = run_with_policy(policy, workspace.path(), &script);
    assert!(run.output.status.success(), "{}", run.stderr());
    assert_eq!(run.stdout(), "cloned through the proxy\n");
    assert!(server.requests() >= 3, "{}", server.requests());
}

/// An HTTPS server (python's `http.server` behind `ssl`) with a throwaway certificate for
/// `secure.test`, made with the openssl command; each answered request appends a byte to `count`.
struct TlsServer {
    child: std::process::Child,
    port: u16,
    count: std::path::PathBuf,
    cert: std::path::PathBuf,
}

impl TlsServer {
    fn start(dir: &Path) -> Self {
        let (cert, key, count) = (dir.join("cert.pem"), dir.join("key.pem"), dir.join("count"));
        let made = Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=secure.test",
            ])
            .args(["-addext", "subjectAltName=DNS:secure.test", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let script = format!(
            "import http.server, ssl, sys\n\
             class H(http.server.BaseHTTPRequestHandler):\n\
             \x20   def do_GET(self):\n\
             \x20       open('{count}', 'a').write('x')\n\
             \x20       body = b'secure hello\\n'\n\
             \x20       self.send_response(200)\n\
             \x20       self.send_header('Content-Length', str(len(body)))\n\
             \x20       self.end_headers()\n\
             \x20       self.wfile.write(body)\n\
             \x20   def log_message(self, *args):\n\
             \x20       pass\n\
             server = http.server.HTTPServer(('127.0.0.1', 0), H)\n\
             context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
             context.load_cert_chain('{cert}', '{key}')\n\
             server.socket = context.wrap_socket(server.socket, server_side=True)\n\
             print(server.server_address[1], flush=True)\n\
             server.serve_forever()\n",
            count = count.display(),
            cert = cert.display(),
            key = key.display(),
        );
        let mut child = Command::new("python3")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let port = line.trim().parse().expect("the server's port");
        Self {
            child,
            port,
            count,
            cert,
        }
    }

    fn requests(&self) -> usize {
        std::fs::read_to_string(&self.count).map_or(0, |c| c.len())
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn https_goes_through_a_connect_tunnel_to_allowed_names_only() {
    if !usable()
        || !available(which("openssl"), "openssl is not installed")
        || !available(which("python3"), "python3 is not installed")
    {
        return;
    }
    let (dir, workspace) = (scratch(), scratch());
    let server = TlsServer::start(dir.path());
    let port = server.port;
    let rules = proxy(
        &["secure.test"],
        &[],
        &["secure.test", "other.test"],
        "127.0.0.1",
        true,
    );
    let cert = server.cert.display();
    let script = format!(
        "curl -sS --cacert {cert} https://secure.test:{port}/; \
         python3 -c 'import ssl, urllib.request; \
print(urllib.request.urlopen(\"https://secure.test:{port}/\", context=ssl.create_default_context(cafile=\"{cert}\")).read().decode(), end=\"\")'; \
         curl -sS --cacert {cert} https://other.test:{port}/ || echo other-refused"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    assert_eq!(
        run.stdout().matches("secure hello").count(),
        2,
        "{}",
        run.stdout()
    );
    assert!(run.stdout().contains("other-refused"), "{}", run.stdout());
    assert_eq!(server.requests(), 2, "only the allowed name's requests arrived");
    let Some(report) = &run.report else { return };
    assert!(
        has_denial(&run, &format!("other.test:{port}"), "domain not allowed"),
        "{:?}",
        report.denials
    );
    assert_eq!(report.network.len(), 1, "{:?}", report.network);
    assert_eq!(report.network[0].host, "secure.test");
}

#[test]
fn a_forwarded_response_tells_the_client_not_to_reuse_the_connection() {
    if !usable() || !available(which("python3"), "python3 is not installed") {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    let server = StaticServer::start(root.path());
    let port = server.port;
    // A request on a reused proxy connection would go to the host already connected, whatever it
    // names: the client is told to open a new one.
    let rules = proxy(&["pkg.test"], &[], &["pkg.test", "other.test"], "127.0.0.1", true);
    let script = format!(
        "python3 -c '
import socket
s = socket.create_connection((\"127.0.0.1\", 3128))
s.sendall(b\"GET http://pkg.test:{port}/hello.txt HTTP/1.1\\r\\nHost: pkg.test\\r\\nConnection: keep-alive\\r\\n\\r\\n\")
first = b\"\"
while b\"through the proxy\" not in first:
    first += s.recv(1000)
print(\"closes\" if b\"Connection: close\" in first else \"keeps\")
'"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    assert_eq!(run.stdout().trim(), "closes", "{}", run.stderr());
    assert_eq!(server.requests(), 1);
}

/// A server on 127.0.0.1 that reads a connection to its end, then sends everything back.
fn echo_after_end() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut all = Vec::new();
                if std::io::Read::read_to_end(&mut stream, &mut all).is_ok() {
                    let _ = std::io::Write::write_all(&mut stream, &all);
                }
            });
        }
    });
    port
}

#[test]
fn bulk_transfers_arrive_whole_both_ways() {
    if !usable() || !available(which("python3"), "python3 is not installed") {
        return;
    }
    let (root, workspace) = (served_root(), scratch());
    // 24 MiB that no run of equal bytes hides a lost or repeated chunk in.
    let big: Vec<u8> = (0u32..6 * 1024 * 1024)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect();
    std::fs::write(root.path().join("big.bin"), &big).unwrap();
    std::fs::write(workspace.path().join("expected.bin"), &big).unwrap();
    let server = StaticServer::start(root.path());
    let (port, echo) = (server.port, echo_after_end());
    let rules = proxy(
        &["pkg.test", "echo.test"],
        &[],
        &["pkg.test", "echo.test"],
        "127.0.0.1",
        true,
    );
    let script = format!(
        "curl -sS -o forwarded.bin http://pkg.test:{port}/big.bin && cmp forwarded.bin expected.bin && echo forwarded-whole; \
         curl -sS -p -o tunnelled.bin http://pkg.test:{port}/big.bin && cmp tunnelled.bin expected.bin && echo tunnelled-whole; \
         python3 -c '
import socket, threading
data = open(\"expected.bin\", \"rb\").read()
s = socket.create_connection((\"127.0.0.1\", 3128))
s.sendall(b\"CONNECT echo.test:{echo} HTTP/1.1\\r\\n\\r\\n\")
head = b\"\"
while not head.endswith(b\"\\r\\n\\r\\n\"):
    head += s.recv(1)
def send():
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=send).start()
back = bytearray()
while True:
    more = s.recv(1 << 20)
    if not more:
        break
    back += more
print(\"echoed-whole\" if bytes(back) == data else \"echoed %d of %d\" % (len(back), len(data)))
'"
    );
    let run = run_proxied(workspace.path(), rules, &script);
    let stdout = run.stdout();
    for line in ["forwarded-whole", "tunnelled-whole", "echoed-whole"] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    let Some(report) = &run.report else { return };
    let size = big.len() as u64;
    let of = |host: &str| report.network.iter().find(|t| t.host == host).cloned();
    let pkg = of("pkg.test").expect("pkg.test traffic");
    assert!(
        pkg.bytes_in >= 2 * size && pkg.bytes_in < 2 * size + 4096,
        "{pkg:?}"
    );
    let echoed = of("echo.test").expect("echo.test traffic");
    assert_eq!((echoed.bytes_in, echoed.bytes_out), (size, size), "{echoed:?}");
}
