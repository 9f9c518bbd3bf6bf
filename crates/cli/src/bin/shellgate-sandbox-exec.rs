//! The sandbox helper installed beside `shellgate`: what `shellgate sandbox-exec` does, from a small
//! binary that starts faster than the whole CLI (every sandboxed process starts through it). The
//! engine uses it when it finds it next to its own executable.

fn main() {
    shellgate_sandbox::standalone_main()
}
