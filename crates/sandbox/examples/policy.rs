//! Print which paths a workspace-write policy lets a command change.

use shellgate_sandbox::{SandboxMode, SandboxPolicy};

fn main() {
    let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/work/project");
    for path in [
        "/work/project/src/lib.rs",
        "/work/project/.git/HEAD",
        "/etc/hosts",
        "/dev/null",
    ] {
        println!("{path:<28} writable: {}", policy.may_write(path.as_ref()));
    }
}
