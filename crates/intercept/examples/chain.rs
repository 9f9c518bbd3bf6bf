//! A chain of two interceptors judging a few commands.

use shellgate_intercept::{Chain, Context, Interceptor, Verdict, from_fn};
use shellgate_normalize::{Normalizer, StandardNormalizer};

fn main() {
    let chain = Chain::new()
        .with(from_fn(|cmd, _| {
            if cmd.script.contains("sudo") {
                Verdict::ask("sudo", "needs a person's approval")
            } else {
                Verdict::Allow
            }
        }))
        .with(from_fn(|cmd, _| {
            if cmd.script.contains("mkfs") {
                Verdict::deny("mkfs", "formats a disk")
            } else {
                Verdict::Allow
            }
        }));
    for command in ["ls -la", "sudo apt-get update", "mkfs.ext4 /dev/sda"] {
        let verdict = chain.inspect(
            &StandardNormalizer::default().normalize(command),
            &Context::default(),
        );
        println!("{command:<24} -> {verdict:?}");
    }
}
