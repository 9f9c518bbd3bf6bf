//! The clients that reach hosts (`ssh`, `docker`, `podman`, `kubectl`) and how they are invoked.

use std::path::PathBuf;

use crate::target::{Engine, HostTarget};

/// Settings of the OpenSSH client (`[ssh]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshSettings {
    /// The client program (default `ssh`).
    pub program: String,
    /// A configuration file passed as `-F` (OpenSSH reads `~/.ssh/config` from the passwd home
    /// directory, not `$HOME`, so tests and services name theirs).
    pub config_file: Option<PathBuf>,
    /// `-o` options, `Key=Value`; they win over the engine's own (OpenSSH keeps the first value).
    pub options: Vec<String>,
    /// Reuse one connection per destination (ControlMaster), kept by the engine.
    pub multiplex: bool,
}

impl Default for SshSettings {
    fn default() -> Self {
        Self {
            program: "ssh".to_owned(),
            config_file: None,
            options: Vec::new(),
            multiplex: true,
        }
    }
}

/// Every client's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSettings {
    /// `ssh`.
    pub ssh: SshSettings,
    /// The docker client (default `docker`) and arguments before `exec` (`--context x`).
    pub docker: Vec<String>,
    /// The podman client (default `podman`) and arguments before `exec` (`--root …`).
    pub podman: Vec<String>,
    /// The kubectl client (default `kubectl`) and arguments before `exec` (`--context x`).
    pub kubectl: Vec<String>,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            ssh: SshSettings::default(),
            docker: vec!["docker".to_owned()],
            podman: vec!["podman".to_owned()],
            kubectl: vec!["kubectl".to_owned()],
        }
    }
}

/// How a client is asked to run a script on the host.
#[derive(Debug, Clone, Copy, Default)]
pub struct Invocation<'a> {
    /// Allocate a terminal on the host.
    pub tty: bool,
    /// Keep the client's stdin attached (a job's input, a session's script).
    pub stdin: bool,
    /// Variables the client sets (`-e K=V`; containers only).
    pub env: &'a [(String, String)],
    /// The ControlMaster socket to go through (ssh).
    pub control_path: Option<&'a std::path::Path>,
}

impl ClientSettings {
    /// The argv that runs `sh -c SCRIPT` on `target`.
    pub fn argv(&self, target: &HostTarget, script: &str, how: &Invocation<'_>) -> Vec<String> {
        match target {
            HostTarget::Ssh { destination } => {
                let mut argv = self.ssh_base(how.control_path);
                argv.push(if how.tty { "-tt" } else { "-T" }.to_owned());
                argv.push("--".to_owned());
                argv.push(destination.clone());
                // ssh joins its arguments into one string for the login shell on the host.
                argv.push(format!("sh -c {}", crate::sh_quote(script)));
                argv
            }
            HostTarget::Container { engine, container } => {
                let mut argv = match engine {
                    Engine::Docker => self.docker.clone(),
                    Engine::Podman => self.podman.clone(),
                };
                argv.push("exec".to_owned());
                if how.stdin {
                    argv.push("-i".to_owned());
                }
                if how.tty {
                    argv.push("-t".to_owned());
                }
                for (key, value) in how.env {
                    argv.push("-e".to_owned());
                    argv.push(format!("{key}={value}"));
                }
                argv.extend([container.clone(), "sh".into(), "-c".into(), script.to_owned()]);
                argv
            }
            HostTarget::Kube {
                pod,
                container,
                namespace,
            } => {
                let mut argv = self.kubectl.clone();
                argv.push("exec".to_owned());
                if how.stdin {
                    argv.push("-i".to_owned());
                }
                if how.tty {
                    argv.push("-t".to_owned());
                }
                if let Some(ns) = namespace {
                    argv.extend(["-n".to_owned(), ns.clone()]);
                }
                argv.push(pod.clone());
                if let Some(c) = container {
                    argv.extend(["-c".to_owned(), c.clone()]);
                }
                argv.extend(["--".into(), "sh".into(), "-c".into(), script.to_owned()]);
                argv
            }
        }
    }

    /// `ssh` with the configured file and options, batch mode, and the multiplexing socket.
    pub(crate) fn ssh_base(&self, control_path: Option<&std::path::Path>) -> Vec<String> {
        let ssh = &self.ssh;
        let mut argv = vec![ssh.program.clone()];
        if let Some(file) = &ssh.config_file {
            argv.extend(["-F".to_owned(), file.display().to_string()]);
        }
        for option in &ssh.options {
            argv.extend(["-o".to_owned(), option.clone()]);
        }
        // Never wait for a password or a host-key question nobody can answer.
        argv.extend(["-o".to_owned(), "BatchMode=yes".to_owned()]);
        if let Some(path) = control_path {
            argv.extend([
                "-o".to_owned(),
                "ControlMaster=no".to_owned(),
                "-o".to_owned(),
                format!("ControlPath={}", path.display()),
            ]);
        }
        argv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_argv_names_namespace_pod_and_container() {
        let clients = ClientSettings::default();
        let target = HostTarget::parse("k8s:api/side@prod").unwrap();
        let how = Invocation {
            stdin: true,
            ..Invocation::default()
        };
        assert_eq!(
            clients.argv(&target, "echo hi", &how),
            [
                "kubectl", "exec", "-i", "-n", "prod", "api", "-c", "side", "--", "sh", "-c", "echo hi"
            ]
        );
        let target = HostTarget::parse("k8s:api").unwrap();
        let how = Invocation {
            tty: true,
            ..Invocation::default()
        };
        assert_eq!(
            clients.argv(&target, "x", &how),
            ["kubectl", "exec", "-t", "api", "--", "sh", "-c", "x"]
        );
    }

    #[test]
    fn container_argv_passes_env_as_arguments() {
        let clients = ClientSettings {
            podman: vec!["podman".into(), "--runtime".into(), "runc".into()],
            ..ClientSettings::default()
        };
        let target = HostTarget::parse("podman:db").unwrap();
        let env = [("A".to_owned(), "x y".to_owned())];
        let how = Invocation {
            stdin: true,
            env: &env,
            ..Invocation::default()
        };
        assert_eq!(
            clients.argv(&target, "s", &how),
            [
                "podman",
                "--runtime",
                "runc",
                "exec",
                "-i",
                "-e",
                "A=x y",
                "db",
                "sh",
                "-c",
                "s"
            ]
        );
    }

    #[test]
    fn ssh_argv_puts_user_options_first_and_quotes_the_script() {
        let clients = ClientSettings {
            ssh: SshSettings {
                config_file: Some("/etc/sg/ssh_config".into()),
                options: vec!["Port=2222".into()],
                ..SshSettings::default()
            },
            ..ClientSettings::default()
        };
        let target = HostTarget::parse("ssh:me@box").unwrap();
        let control = std::path::Path::new("/run/sg/cm");
        let how = Invocation {
            control_path: Some(control),
            ..Invocation::default()
        };
        assert_eq!(
            clients.argv(&target, "echo 'a'", &how),
            [
                "ssh",
                "-F",
                "/etc/sg/ssh_config",
                "-o",
                "Port=2222",
                "-o",
                "BatchMode=yes",
                "-o",
                "ControlMaster=no",
                "-o",
                "ControlPath=/run/sg/cm",
                "-T",
                "--",
                "me@box",
                "sh -c 'echo '\\''a'\\'''"
            ]
        );
    }
}
