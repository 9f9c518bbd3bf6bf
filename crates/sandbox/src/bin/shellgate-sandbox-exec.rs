//! A stand-alone sandbox helper: `shellgate-sandbox-exec [sandbox-exec] --policy JSON -- argv…`.
//!
//! The same entry point the `shellgate sandbox-exec` subcommand calls; tests and benchmarks use
//! this binary so they do not need the whole CLI.

fn main() {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "sandbox-exec") {
        args.next();
    }
    std::process::exit(shellgate_sandbox::helper_main(args));
}
