//! A stand-alone sandbox helper: `shellgate-sandbox-exec [sandbox-exec] --policy JSON -- argv…`.
//!
//! The same entry point the `shellgate sandbox-exec` subcommand calls; tests and benchmarks use
//! this binary so they do not need the whole CLI.

fn main() {
    shellgate_sandbox::standalone_main()
}
