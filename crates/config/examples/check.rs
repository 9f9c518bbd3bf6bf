//! Check a configuration file's keys and say where each is set:
//! `cargo run -p shellgate-config --example check -- FILE`.

use shellgate_config::{ParseError, Sources, join_keys, parse};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: check FILE");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(1);
        }
    };
    let keys = join_keys(
        &["timeout", "session"],
        &[
            (
                "policy",
                &[
                    "security",
                    "ask",
                    "rules[].allow",
                    "rules[].deny",
                    "rules[].match",
                ],
            ),
            ("env", &["allow", "redact"]),
        ],
    );
    match parse::<toml::Table>(&text, &keys) {
        Ok((table, lines)) => {
            let mut sources = Sources::default();
            sources.push(std::path::Path::new(&path), lines);
            print!("{}", sources.text(&table, &keys, &[]));
        }
        Err(ParseError::UnknownKey(unknown)) => {
            let hint = unknown
                .suggestion
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            eprintln!(
                "unknown key `{}` at line {} of {path}{hint}",
                unknown.key, unknown.line
            );
            std::process::exit(1);
        }
        Err(ParseError::Invalid(message)) => {
            eprintln!("invalid configuration in {path}: {message}");
            std::process::exit(1);
        }
    }
}
