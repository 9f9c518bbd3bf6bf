//! `cargo xtask install-check`: install every package `cargo xtask dist` made into an empty prefix,
//! from `target/dist` only (never the network), and use it: the npm packages with `npm install
//! --offline`, the wheel into a fresh venv, the CLI with `cargo install --path` (sharing the release
//! build). Each installed `shellgate` runs a command, runs one sandboxed with its helper found beside
//! it, and lists its tools over MCP through the Inspector CLI.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

use crate::workspace::{self, Metadata};

/// Run every check; `Ok(false)` when one failed (each failure is printed).
pub fn run() -> anyhow::Result<bool> {
    let meta = Metadata::load()?;
    let dist = meta.target_directory.join("dist");
    let scratch = meta.target_directory.join("install-check");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)?;
    }
    std::fs::create_dir_all(&scratch)?;
    let mut checks = Checks::default();
    let version = meta.version_of("shellgate-cli")?;
    let found = |suffix: &str| find_one(&dist, suffix);
    let launcher = dist.join(format!("shellgate-{version}.tgz"));
    let npm = npm_install(
        &scratch.join("npm"),
        &launcher,
        &found(&format!("-{version}.tgz"))?,
    );
    checks.installed("npm", npm.as_deref(), &scratch);
    if let Ok(launcher) = &npm {
        checks.record("npm: the launcher execs the engine", launcher_execs(launcher));
        let npx = ["npx", "--no-install", "shellgate", "mcp"];
        let prefix = scratch.join("npm");
        checks.record("npm: npx shellgate mcp lists tools", mcp_tools(&npx, &prefix));
        // Last: the attack may remove the link npx starts.
        checks.record("npm: the launcher is protected", launcher_protected(launcher));
    }
    let pip = pip_install(&scratch.join("venv"), &found(".whl")?);
    checks.installed("pip", pip.as_deref(), &scratch);
    let cargo = cargo_install(&scratch.join("cargo"));
    checks.installed("cargo install", cargo.as_deref(), &scratch);
    checks.record("release archive", archive(&found(".tar.gz")?, &scratch));
    Ok(checks.report())
}

#[derive(Default)]
struct Checks {
    failed: Vec<String>,
    passed: usize,
}

impl Checks {
    fn record(&mut self, what: &str, outcome: anyhow::Result<()>) {
        match outcome {
            Ok(()) => {
                println!("ok    {what}");
                self.passed += 1;
            }
            Err(e) => {
                println!("FAIL  {what}: {e:#}");
                self.failed.push(what.to_owned());
            }
        }
    }

    /// The checks every installed `shellgate` passes.
    fn installed(&mut self, channel: &str, binary: Result<&Path, &anyhow::Error>, scratch: &Path) {
        let binary = match binary {
            Ok(binary) => binary,
            Err(e) => {
                self.record(&format!("{channel}: install"), Err(anyhow::anyhow!("{e:#}")));
                return;
            }
        };
        let bin = binary.display().to_string();
        self.record(&format!("{channel}: run 'echo ok'"), runs_echo(binary));
        self.record(
            &format!("{channel}: sandboxed run finds its helper"),
            helper_found(binary, scratch),
        );
        self.record(
            &format!("{channel}: MCP tools/list"),
            mcp_tools(&[&bin, "mcp"], scratch),
        );
    }

    fn report(self) -> bool {
        println!("{} checks passed, {} failed", self.passed, self.failed.len());
        self.failed.is_empty()
    }
}

/// The one file in `dir` whose name ends with `suffix` (the npm launcher's tarball, named
/// `shellgate-VERSION.tgz`, is looked up by its whole name and never counted here).
fn find_one(dir: &Path, suffix: &str) -> anyhow::Result<PathBuf> {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {} (run cargo xtask dist first)", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.ends_with(suffix) && n.starts_with("shellgate-") && n.matches('-').count() > 1
            })
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "expected one file ending {suffix:?} in {}, found {found:?}",
            dir.display()
        ),
    }
}

fn run_ok(command: &mut Command) -> anyhow::Result<String> {
    let out = command.output().with_context(|| format!("running {command:?}"))?;
    if !out.status.success() {
        bail!(
            "{command:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn npm_install(prefix: &Path, launcher: &Path, platform: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(prefix)?;
    run_ok(
        Command::new("npm")
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(prefix)
            .arg(launcher)
            .arg(platform),
    )?;
    Ok(prefix.join("node_modules/.bin/shellgate"))
}

fn pip_install(venv: &Path, wheel: &Path) -> anyhow::Result<PathBuf> {
    run_ok(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    run_ok(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--no-index", "--quiet", "--disable-pip-version-check"])
            .arg(wheel),
    )?;
    let binary = venv.join("bin/shellgate");
    let version = run_ok(Command::new(&binary).arg("--version"))?;
    if !version.contains(env!("CARGO_PKG_VERSION")) {
        bail!("shellgate --version printed {version:?}");
    }
    Ok(binary)
}

/// `cargo install --path crates/cli`: the workspace's lock file and its release build (the target
/// directory of a path install is the workspace's), offline.
fn cargo_install(root: &Path) -> anyhow::Result<PathBuf> {
    run_ok(
        workspace::cargo()
            .args([
                "install",
                "--quiet",
                "--locked",
                "--offline",
                "--path",
                "crates/cli",
                "--root",
            ])
            .arg(root),
    )?;
    for name in ["shellgate", "shellgate-sandbox-exec"] {
        if !root.join("bin").join(name).is_file() {
            bail!("cargo install left no bin/{name}");
        }
    }
    Ok(root.join("bin/shellgate"))
}

fn runs_echo(binary: &Path) -> anyhow::Result<()> {
    let out = run_ok(Command::new(binary).args(["run", "echo ok"]))?;
    if out.trim() != "ok" {
        bail!("printed {out:?}");
    }
    Ok(())
}

/// A sandboxed call through `shellgate rpc` answers, and the engine holds the sealed copy of the
/// helper installed beside it (`memfd:shellgate-sandbox-exec`) rather than falling back to its own
/// image: the helper was found.
fn helper_found(binary: &Path, workspace: &Path) -> anyhow::Result<()> {
    let mut child = Command::new(binary)
        .arg("rpc")
        .current_dir(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"bash","params":{"command":"echo sandboxed","sandbox":"workspace-write","session":"none"}}"#;
    let mut stdin = child.stdin.take().context("stdin")?;
    writeln!(stdin, "{request}")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let answer = loop {
        let line = lines.next().context("the server closed its output")??;
        let value: serde_json::Value = serde_json::from_str(&line)?;
        if value["id"] == 1 {
            break value;
        }
    };
    let fds = std::fs::read_dir(format!("/proc/{}/fd", child.id()))?
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .any(|target| target.to_string_lossy().contains("memfd:shellgate-sandbox-exec"));
    drop(stdin);
    child.wait()?;
    let output = answer["result"]["output"].as_str().unwrap_or_default();
    if output.trim() != "sandboxed" {
        bail!("the sandboxed call answered {answer}");
    }
    if !fds {
        bail!(
            "the engine holds no sealed copy of shellgate-sandbox-exec: the helper beside it was not found"
        );
    }
    Ok(())
}

/// `tools/list` through the Inspector CLI against `server` (a command and its arguments), run in
/// `cwd`; the Inspector comes from `SHELLGATE_MCP_INSPECTOR` (installed by `.ci/run`).
fn mcp_tools(server: &[&str], cwd: &Path) -> anyhow::Result<()> {
    let Some(inspector) = std::env::var_os("SHELLGATE_MCP_INSPECTOR").filter(|p| Path::new(p).is_file())
    else {
        if std::env::var_os("SHELLGATE_REQUIRE_ALL").is_some_and(|v| v == "1") {
            bail!("SHELLGATE_MCP_INSPECTOR names no Inspector CLI");
        }
        println!("skip  MCP check: SHELLGATE_MCP_INSPECTOR is not set (.ci/run installs the Inspector)");
        return Ok(());
    };
    let (program, args) = server.split_first().context("no server command")?;
    let out = run_ok(
        Command::new(inspector)
            .arg("--cli")
            .arg(program)
            .args(args)
            .args(["--", "--method", "tools/list", "--format", "json"])
            .current_dir(cwd),
    )?;
    let value: serde_json::Value =
        serde_json::from_str(out.trim()).with_context(|| format!("the Inspector printed no JSON: {out}"))?;
    let names: Vec<&str> = value["result"]["tools"]
        .as_array()
        .context("no tools in the answer")?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    if !names.contains(&"bash") {
        bail!("tools/list answered {names:?}");
    }
    Ok(())
}

/// The process `node_modules/.bin/shellgate` leaves running is the engine itself: the launcher
/// replaced itself with the platform package's binary.
fn launcher_execs(launcher: &Path) -> anyhow::Result<()> {
    let mut child = Command::new(launcher)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let expected = launcher
        .ancestors()
        .nth(2)
        .context("launcher path")?
        .join("@shellgate/linux-x64/bin/shellgate")
        .canonicalize()?;
    let mut exe = None;
    for _ in 0..100 {
        exe = std::fs::read_link(format!("/proc/{}/exe", child.id())).ok();
        if exe.as_deref() == Some(expected.as_path()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(child.stdin.take());
    child.wait()?;
    if exe.as_deref() != Some(expected.as_path()) {
        bail!("the launched process runs {exe:?}, not {}", expected.display());
    }
    Ok(())
}

/// A sandboxed command in a workspace holding the npm install cannot rewrite or replace the
/// launcher (a replaced launcher would run unsandboxed the next time a client starts shellgate).
fn launcher_protected(launcher: &Path) -> anyhow::Result<()> {
    let prefix = launcher.ancestors().nth(3).context("launcher path")?;
    let script = prefix.join("node_modules/shellgate/bin/shellgate");
    let before = std::fs::read(&script)?;
    let attack = "echo 'echo owned' > node_modules/shellgate/bin/shellgate; \
                  mv node_modules/shellgate/bin/shellgate /tmp/x; \
                  rm -f node_modules/.bin/shellgate; ln -sf /bin/true node_modules/.bin/shellgate; \
                  mv node_modules/shellgate node_modules/moved; true";
    let _ = Command::new(launcher)
        .args(["run", "--sandbox", "workspace-write", attack])
        .current_dir(prefix)
        .output()?;
    if std::fs::read(&script)? != before {
        bail!("the launcher script was changed");
    }
    // Removing the link only stops the next start (a link's own entry cannot be mounted over);
    // it must never lead anywhere else.
    let link = prefix.join("node_modules/.bin/shellgate");
    if link.symlink_metadata().is_ok() && link.canonicalize()? != script.canonicalize()? {
        bail!(
            "node_modules/.bin/shellgate now leads to {}",
            link.canonicalize()?.display()
        );
    }
    Ok(())
}

/// The release archive unpacks to one directory with both binaries, the licences and completions,
/// and its `shellgate` runs.
fn archive(archive: &Path, scratch: &Path) -> anyhow::Result<()> {
    let dir = scratch.join("archive");
    std::fs::create_dir_all(&dir)?;
    run_ok(Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(&dir))?;
    let name = archive
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".tar.gz"))
        .context("archive name")?;
    let root = dir.join(name);
    for file in [
        "shellgate",
        "shellgate-sandbox-exec",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "completions/shellgate.bash",
        "completions/_shellgate",
        "completions/shellgate.fish",
    ] {
        if !root.join(file).is_file() {
            bail!("{name} lacks {file}");
        }
    }
    runs_echo(&root.join("shellgate"))
}
