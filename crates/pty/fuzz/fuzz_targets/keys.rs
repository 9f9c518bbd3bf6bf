//! Key tokens, hex strings and whole requests: parsing and encoding never panic, and every
//! successful encoding is non-empty for a key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shellgate_pty::KeyModes;
use shellgate_pty::keys::{Key, KeySpec, encode_keys, parse_hex, paste_bytes};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let modes = KeyModes {
        application_cursor: flags & 1 != 0,
        application_keypad: flags & 2 != 0,
        bracketed_paste: flags & 4 != 0,
    };
    let text = String::from_utf8_lossy(rest);
    if let Ok(key) = Key::parse(&text) {
        if let Ok(bytes) = key.encode(modes) {
            assert!(!bytes.is_empty());
        }
    }
    let _ = parse_hex(&text);
    let specs: Vec<KeySpec> = text
        .split('\u{1f}')
        .enumerate()
        .map(|(i, part)| match i % 3 {
            0 => KeySpec::Key(part.to_owned()),
            1 => KeySpec::Hex(part.to_owned()),
            _ => KeySpec::Text(part.to_owned()),
        })
        .collect();
    let _ = encode_keys(&specs, modes);
    let pasted = paste_bytes(&text, modes);
    if modes.bracketed_paste {
        assert!(pasted.starts_with(b"\x1b[200~") && pasted.ends_with(b"\x1b[201~"));
    }
});
