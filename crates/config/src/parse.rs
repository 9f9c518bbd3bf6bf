//! A configuration file's text into its serde type, its keys checked first.

use serde::de::DeserializeOwned;

use crate::{KeyLines, UnknownKey, check_keys, line_of};

/// Why a configuration text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A key no setting has.
    UnknownKey(UnknownKey),
    /// Not TOML, or a value of the wrong type: the message, with its line.
    Invalid(String),
}

/// Parse `text` as a `T` whose every key is among `keys` (see [`crate::join_keys`]), also giving
/// the line of every key it sets.
pub fn parse<T: DeserializeOwned>(text: &str, keys: &[&str]) -> Result<(T, KeyLines), ParseError> {
    let lines = match check_keys(text, keys) {
        Ok(lines) => lines,
        Err(Some(unknown)) => return Err(ParseError::UnknownKey(unknown)),
        // Not TOML: deserializing says where.
        Err(None) => KeyLines::new(),
    };
    let value = toml::from_str(text).map_err(|e| {
        ParseError::Invalid(match e.span() {
            Some(span) => format!("{} (line {})", e.message().trim_end(), line_of(text, &span)),
            None => e.message().trim_end().to_owned(),
        })
    })?;
    Ok((value, lines))
}
