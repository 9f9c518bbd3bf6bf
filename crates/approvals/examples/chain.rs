//! An interceptor chain whose `Ask` verdicts wait in an approval broker until a person decides:
//! `cargo run -p shellgate-approvals --example chain`.

use std::path::PathBuf;
use std::time::Duration;

use shellgate_approvals::{ApprovalBroker, Lookup, prompt_text, rfc3339};
use shellgate_intercept::{Chain, Context, Interceptor, Verdict, from_fn};
use shellgate_normalize::{Normalizer, StandardNormalizer};

fn main() {
    let chain = Chain::new().with(from_fn(|cmd, _| {
        if cmd.script.starts_with("sudo ") {
            Verdict::ask("sudo", "runs with raised privileges")
        } else {
            Verdict::Allow
        }
    }));
    // What a request is, is the caller's: here the command line itself.
    let broker: ApprovalBroker<String> = ApprovalBroker::new(Duration::from_secs(30 * 60), 16);
    for command in ["ls -la", "sudo apt-get update"] {
        let normalized = StandardNormalizer::default().normalize(command);
        match chain.inspect(&normalized, &Context::default()) {
            Verdict::Ask { reason, .. } => {
                let ticket = broker.register(
                    command.to_owned(),
                    command,
                    PathBuf::from("/work"),
                    Vec::new(),
                    false,
                );
                let prompt = prompt_text(
                    &ticket.short_id,
                    &reason,
                    "local",
                    "/work",
                    command,
                    &rfc3339(ticket.expires),
                );
                println!("{prompt}\n");
                // A person answers allow-once: the request comes back to be run.
                if let Lookup::Found(pending) = broker.take(&ticket.short_id) {
                    println!(
                        "approved: would run {:?} in {}",
                        pending.request,
                        pending.cwd.display()
                    );
                }
            }
            verdict => println!("{command:<24} -> {verdict:?}"),
        }
    }
}
