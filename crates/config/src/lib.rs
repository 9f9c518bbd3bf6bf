//! shellgate-config: reading shellgate's TOML configuration (SPEC T-10) by key.
//!
//! Every stage declares its section's keys beside its serde type (`SANDBOX_KEYS` beside
//! `SandboxFile`); [`join_keys`] puts them under their section names. [`parse`] checks every key of
//! a file against that list before it deserializes the values: an unknown key is an error naming
//! its full path (`policy.rules[0].matches`) and line, with the closest known key of the same table
//! when one is within two edits. The lines of the known keys say where each effective value came
//! from ([`Sources`]).
//!
//! ```
//! use shellgate_config::{ParseError, join_keys, parse};
//!
//! #[derive(serde::Deserialize)]
//! struct File {
//!     timeout: Option<f64>,
//! }
//!
//! let keys = join_keys(&["timeout"], &[("policy", &["security", "rules[].allow"])]);
//! let (file, lines) = parse::<toml::Table>("timeout = 5\n[policy]\nsecurity = \"deny\"\n", &keys).unwrap();
//! assert_eq!(lines["policy.security"], 3);
//! assert!(file.contains_key("policy"));
//! let (file, _) = parse::<File>("timeout = 5\n", &["timeout"]).unwrap();
//! assert_eq!(file.timeout, Some(5.0));
//!
//! let Err(ParseError::UnknownKey(unknown)) = parse::<toml::Table>("[policy]\nsecuirty = 1\n", &keys) else {
//!     panic!("an unknown key is an error");
//! };
//! assert_eq!((unknown.key.as_str(), unknown.line), ("policy.secuirty", 2));
//! assert_eq!(unknown.suggestion.as_deref(), Some("security"));
//! ```

mod keys;
mod parse;
mod sources;
mod suggest;

use std::path::PathBuf;

pub use keys::{KeyLines, UnknownKey, check_keys, line_of};
pub use parse::{ParseError, parse};
pub use sources::Sources;
pub use suggest::closest;

/// Every key of a file whose own keys are `top` and whose sections hold the keys their owners
/// declare, in that order: a value's name, `table.key` inside a table, `array[].key` in an array
/// of tables, `*.key` in tables of any name. (Built once per program: the strings live as long.)
pub fn join_keys(top: &[&'static str], sections: &[(&str, &[&str])]) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = top.to_vec();
    for (section, owned) in sections {
        keys.extend(
            owned
                .iter()
                .map(|k| &*Box::leak(format!("{section}.{k}").into_boxed_str())),
        );
    }
    keys
}

/// The project's configuration file, relative to the current directory.
pub const PROJECT_CONFIG: &str = ".shellgate.toml";

/// The user's configuration file: `$XDG_CONFIG_HOME/shellgate/config.toml`, else
/// `~/.config/shellgate/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let user_dir = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    user_dir.map(|dir| dir.join("shellgate").join("config.toml"))
}

/// The files read when none is given, in the order they apply: the user's, then the project's.
pub fn default_config_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = user_config_path().into_iter().collect();
    paths.push(PathBuf::from(PROJECT_CONFIG));
    paths
}
