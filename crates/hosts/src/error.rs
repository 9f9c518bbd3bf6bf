//! Errors of host selection and remote sessions.

/// Why a host cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// Not a host this engine knows.
    #[error(
        "unknown host '{0}': expected local, auto, sandbox, ssh:<destination>, docker:<container>, \
         podman:<container>, k8s:<pod>[/<container>][@<namespace>] or a host named in the configuration"
    )]
    Unknown(String),
    /// A part of the host is empty.
    #[error("host '{host}' names no {what}")]
    Empty {
        /// The host as written.
        host: String,
        /// The missing part.
        what: String,
    },
    /// A name the client would take for an option or split.
    #[error("host '{host}': the {what} must not start with '-' or contain spaces or control characters")]
    BadName {
        /// The host as written.
        host: String,
        /// The offending part.
        what: String,
    },
    /// The host could not be reached, or its shell could not be started.
    #[error("host {host} is not reachable: {reason}")]
    Unreachable {
        /// The host.
        host: String,
        /// What the client said.
        reason: String,
    },
    /// The working directory does not exist on the host.
    #[error("no such directory on host {host}: {dir}")]
    NoDirectory {
        /// The host.
        host: String,
        /// The directory.
        dir: String,
    },
}
