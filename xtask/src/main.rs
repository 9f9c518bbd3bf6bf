//! Workspace automation: `cargo xtask bench | fuzz | stress`.

fn main() {
    eprintln!("usage: cargo xtask <bench|fuzz|stress>");
    std::process::exit(2);
}
