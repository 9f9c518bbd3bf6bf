//! Resource limits, set soft and hard so the command cannot raise them again.

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use crate::{ResourceLimits, SandboxError};

/// Apply every configured limit to the calling process (inherited across `execve` and `fork`).
pub fn apply(limits: &ResourceLimits) -> Result<(), SandboxError> {
    let table = [
        ("cpu_seconds", Resource::RLIMIT_CPU, limits.cpu_seconds),
        (
            "address_space_bytes",
            Resource::RLIMIT_AS,
            limits.address_space_bytes,
        ),
        ("file_size_bytes", Resource::RLIMIT_FSIZE, limits.file_size_bytes),
        ("open_files", Resource::RLIMIT_NOFILE, limits.open_files),
        ("processes", Resource::RLIMIT_NPROC, limits.processes),
    ];
    for (name, resource, value) in table {
        // 0 asks for no limit: the configuration's way to lift a default.
        if let Some(wanted) = value.filter(|&v| v != 0) {
            // A lower inherited hard limit is already stricter; raising it would need privileges.
            let (_, hard) = getrlimit(resource)
                .map_err(|e| SandboxError::unavailable(format!("cannot read limit {name}: {e}")))?;
            let value = wanted.min(hard);
            setrlimit(resource, value, value)
                .map_err(|e| SandboxError::unavailable(format!("cannot set limit {name} = {value}: {e}")))?;
        }
    }
    Ok(())
}
