//! Which host a command runs on, as written in a `host` parameter (`ssh:build`, `docker:web`, …).

use std::fmt;

use crate::HostError;

/// The container engine of a container host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// `docker exec`.
    Docker,
    /// `podman exec`.
    Podman,
}

impl Engine {
    /// The engine's name, as in the host syntax and the client's program name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Docker => "docker",
            Self::Podman => "podman",
        }
    }
}

/// A remote host (SPEC X-3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostTarget {
    /// `ssh:<destination>`: the system OpenSSH client; the destination is anything `ssh` takes
    /// (`user@host`, an alias of the ssh configuration, `ssh://user@host:port`).
    Ssh {
        /// The destination.
        destination: String,
    },
    /// `docker:<container>` or `podman:<container>`.
    Container {
        /// The engine.
        engine: Engine,
        /// Container name or id.
        container: String,
    },
    /// `k8s:<pod>[/<container>][@<namespace>]`: `kubectl exec`.
    Kube {
        /// The pod.
        pod: String,
        /// The container in the pod, when not the default one.
        container: Option<String>,
        /// The namespace, when not the current one.
        namespace: Option<String>,
    },
}

impl HostTarget {
    /// Parse `ssh:…`, `docker:…`, `podman:…` or `k8s:…`.
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let (scheme, rest) = text
            .split_once(':')
            .ok_or_else(|| HostError::Unknown(text.to_owned()))?;
        let name = |what: &str| -> Result<String, HostError> {
            if rest.is_empty() {
                return Err(HostError::Empty {
                    host: text.to_owned(),
                    what: what.to_owned(),
                });
            }
            // A leading `-` would be taken as an option by the client.
            if rest.starts_with('-') || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(HostError::BadName {
                    host: text.to_owned(),
                    what: what.to_owned(),
                });
            }
            Ok(rest.to_owned())
        };
        match scheme {
            "ssh" => Ok(Self::Ssh {
                destination: name("destination")?,
            }),
            "docker" => Ok(Self::Container {
                engine: Engine::Docker,
                container: name("container")?,
            }),
            "podman" => Ok(Self::Container {
                engine: Engine::Podman,
                container: name("container")?,
            }),
            "k8s" | "kubernetes" => {
                let spec = name("pod")?;
                let (spec, namespace) = match spec.split_once('@') {
                    Some((spec, ns)) => (spec.to_owned(), Some(ns.to_owned())),
                    None => (spec, None),
                };
                let (pod, container) = match spec.split_once('/') {
                    Some((pod, c)) => (pod.to_owned(), Some(c.to_owned())),
                    None => (spec, None),
                };
                let empty = |part: &Option<String>| part.as_deref() == Some("");
                if pod.is_empty() || empty(&container) || empty(&namespace) {
                    return Err(HostError::Empty {
                        host: text.to_owned(),
                        what: "pod, container or namespace".to_owned(),
                    });
                }
                Ok(Self::Kube {
                    pod,
                    container,
                    namespace,
                })
            }
            _ => Err(HostError::Unknown(text.to_owned())),
        }
    }
}

impl fmt::Display for HostTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ssh { destination } => write!(f, "ssh:{destination}"),
            Self::Container { engine, container } => write!(f, "{}:{container}", engine.name()),
            Self::Kube {
                pod,
                container,
                namespace,
            } => {
                write!(f, "k8s:{pod}")?;
                if let Some(c) = container {
                    write!(f, "/{c}")?;
                }
                if let Some(ns) = namespace {
                    write!(f, "@{ns}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_and_prints_it_back() {
        for text in [
            "ssh:build",
            "ssh:me@10.0.0.2",
            "docker:web",
            "podman:db-1",
            "k8s:api",
            "k8s:api/sidecar",
            "k8s:api@prod",
            "k8s:api/sidecar@prod",
        ] {
            let host = HostTarget::parse(text).unwrap();
            assert_eq!(host.to_string(), text);
        }
        assert_eq!(
            HostTarget::parse("k8s:api/side@ns").unwrap(),
            HostTarget::Kube {
                pod: "api".into(),
                container: Some("side".into()),
                namespace: Some("ns".into())
            }
        );
    }

    #[test]
    fn refuses_what_a_client_would_misread() {
        assert!(matches!(HostTarget::parse("ftp:x"), Err(HostError::Unknown(_))));
        assert!(matches!(HostTarget::parse("web"), Err(HostError::Unknown(_))));
        assert!(matches!(HostTarget::parse("ssh:"), Err(HostError::Empty { .. })));
        assert!(matches!(
            HostTarget::parse("ssh:-oProxyCommand=x"),
            Err(HostError::BadName { .. })
        ));
        assert!(matches!(
            HostTarget::parse("docker:a b"),
            Err(HostError::BadName { .. })
        ));
        assert!(matches!(
            HostTarget::parse("k8s:pod/@ns"),
            Err(HostError::Empty { .. })
        ));
        let message = HostTarget::parse("ftp:x").unwrap_err().to_string();
        assert!(message.contains("ftp:x"), "{message}");
    }
}
