//! Keys for a pipe job, which has no terminal to encode them: what a line-oriented reader understands.

/// Key bytes for a pipe job: literal text, hex bytes, and the keys a line-oriented reader understands.
pub(super) fn encode_pipe_keys(
    keys: &[String],
    hex: &[String],
    literal: Option<&str>,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for key in keys {
        let lower = key.to_ascii_lowercase();
        match lower.as_str() {
            "enter" | "return" | "kpenter" => out.push(b'\n'),
            "tab" => out.push(b'\t'),
            "space" => out.push(b' '),
            "escape" | "esc" => out.push(0x1b),
            "backspace" | "bspace" => out.push(0x7f),
            _ => {
                let control = lower
                    .strip_prefix("c-")
                    .or_else(|| lower.strip_prefix("ctrl-"))
                    .or_else(|| key.strip_prefix('^'))
                    .filter(|rest| rest.chars().count() == 1)
                    .and_then(|rest| rest.chars().next())
                    .and_then(control_byte);
                if let Some(byte) = control {
                    out.push(byte);
                } else if key.chars().count() == 1 {
                    out.extend_from_slice(key.as_bytes());
                } else {
                    return Err(format!("Unknown key {key:?} for a pipe job."));
                }
            }
        }
    }
    for h in hex {
        let digits: String = h.chars().filter(|c| !c.is_whitespace()).collect();
        let digits = digits.trim_start_matches("0x");
        if !digits.len().is_multiple_of(2) {
            return Err(format!("Invalid hex {h:?}."));
        }
        for pair in digits.as_bytes().chunks(2) {
            let s = std::str::from_utf8(pair).map_err(|_| format!("Invalid hex {h:?}."))?;
            out.push(u8::from_str_radix(s, 16).map_err(|_| format!("Invalid hex {h:?}."))?);
        }
    }
    if let Some(text) = literal {
        out.extend_from_slice(text.as_bytes());
    }
    Ok(out)
}

fn control_byte(c: char) -> Option<u8> {
    match c.to_ascii_uppercase() {
        c @ '@'..='_' => Some(c as u8 - b'@'),
        '?' => Some(0x7f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_keys_encode() {
        let keys = vec![
            "h".to_owned(),
            "enter".to_owned(),
            "C-d".to_owned(),
            "^C".to_owned(),
        ];
        assert_eq!(
            encode_pipe_keys(&keys, &["1b41".into()], Some("x")).unwrap(),
            b"h\n\x04\x03\x1bAx"
        );
        assert!(encode_pipe_keys(&["F13x".into()], &[], None).is_err());
    }
}
