//! Kitty keyboard-protocol input (`CSI … u` and friends) normalized to the legacy bytes programs
//! expect, so keystrokes captured from a Kitty-protocol terminal can be replayed into a plain PTY.

use crate::keys::{Key, KeyCode, KeyModes, KeypadKey, Modifiers, NamedKey};

/// Longest CSI sequence considered; longer ones pass through untouched.
const MAX_CSI: usize = 64;

/// Rewrite Kitty keyboard-protocol sequences in `input` as legacy key bytes for `modes`.
///
/// Key-release events are dropped, as are presses of bare modifier keys and keys without a legacy
/// form. Everything that is not a recognised key sequence (plain text, other escapes, incomplete
/// sequences) passes through unchanged.
pub fn normalize_kitty(input: &[u8], modes: KeyModes) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == 0x1b && input.get(i + 1) == Some(&b'[') {
            let body_start = i + 2;
            let end = input[body_start..]
                .iter()
                .take(MAX_CSI)
                .position(|b| (0x40..=0x7e).contains(b))
                .map(|p| body_start + p);
            if let Some(end) = end {
                let params = &input[body_start..end];
                if let Some(event) = parse_event(params, input[end]) {
                    if let Some(key) = event {
                        // Keys that cannot be encoded are dropped like any key without a legacy form.
                        if let Ok(bytes) = key.encode(modes) {
                            out.extend(bytes);
                        }
                    }
                    i = end + 1;
                    continue;
                }
            }
        }
        out.push(input[i]);
        i += 1;
    }
    out
}

/// `None`: not a key sequence (pass through). `Some(None)`: a key event that sends nothing.
#[allow(clippy::option_option)]
fn parse_event(params: &[u8], fin: u8) -> Option<Option<Key>> {
    if !params
        .iter()
        .all(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
    {
        return None;
    }
    let params = std::str::from_utf8(params).ok()?;
    let mut fields = params.split(';');
    let key_field = fields.next().unwrap_or("");
    let mod_field = fields.next().unwrap_or("");
    let text_field = fields.next();
    if fields.next().is_some() {
        return None;
    }
    let mut mod_parts = mod_field.split(':');
    let mod_value: u32 = match mod_parts.next() {
        Some("") | None => 1,
        Some(v) => v.parse().ok()?,
    };
    let event_type: u32 = match mod_parts.next() {
        None | Some("") => 1,
        Some(v) => v.parse().ok()?,
    };
    let bits = mod_value.saturating_sub(1);
    let mods = Modifiers {
        shift: bits & 1 != 0,
        alt: bits & 2 != 0,
        ctrl: bits & 4 != 0,
    };
    let mut key_parts = key_field.split(':');
    let number: u32 = match key_parts.next() {
        Some("") | None => 1,
        Some(v) => v.parse().ok()?,
    };
    let shifted: Option<u32> = key_parts.next().and_then(|v| v.parse().ok());

    let code = match fin {
        b'u' => {
            if let Some(code) = functional_u(number) {
                code
            } else if let Some(c) = char::from_u32(number).filter(|c| !c.is_control() && !is_private_use(*c))
            {
                // Prefer the text the terminal reported, then the shifted key.
                if !mods.ctrl
                    && !mods.alt
                    && let Some(text) = text_field.and_then(text_from_codepoints)
                {
                    let key = Key {
                        code: KeyCode::Char(text),
                        mods: Modifiers::default(),
                    };
                    return Some((event_type != 3).then_some(key));
                }
                match shifted.and_then(char::from_u32) {
                    Some(s) if mods.shift => {
                        let key = Key {
                            code: KeyCode::Char(s),
                            mods: Modifiers { shift: false, ..mods },
                        };
                        return Some((event_type != 3).then_some(key));
                    }
                    _ => KeyCode::Char(c),
                }
            } else {
                // Modifier keys, media keys, private-use keys: nothing to send, but consumed.
                return Some(None);
            }
        }
        b'~' => KeyCode::Named(match number {
            2 => NamedKey::Insert,
            3 => NamedKey::Delete,
            5 => NamedKey::PageUp,
            6 => NamedKey::PageDown,
            1 | 7 => NamedKey::Home,
            4 | 8 => NamedKey::End,
            11..=15 => NamedKey::F((number - 10) as u8),
            17..=21 => NamedKey::F((number - 11) as u8),
            23 | 24 => NamedKey::F((number - 12) as u8),
            _ => return None,
        }),
        b'A' | b'B' | b'C' | b'D' | b'H' | b'F' | b'P' | b'Q' | b'R' | b'S' => {
            // Only the `CSI 1;<mods>X` form (or no parameters) is a key; `CSI 5A` moves a cursor.
            if number != 1 {
                return None;
            }
            KeyCode::Named(match fin {
                b'A' => NamedKey::Up,
                b'B' => NamedKey::Down,
                b'C' => NamedKey::Right,
                b'D' => NamedKey::Left,
                b'H' => NamedKey::Home,
                b'F' => NamedKey::End,
                b'P' => NamedKey::F(1),
                b'Q' => NamedKey::F(2),
                b'R' => NamedKey::F(3),
                _ => NamedKey::F(4),
            })
        }
        _ => return None,
    };
    // Event type 3 is a key release; 2 (repeat) sends like a press.
    Some((event_type != 3).then_some(Key { code, mods }))
}

/// Kitty numbers keys without a character (modifiers, media keys) in the private use area.
fn is_private_use(c: char) -> bool {
    ('\u{e000}'..='\u{f8ff}').contains(&c)
}

fn text_from_codepoints(field: &str) -> Option<char> {
    let mut chars = field
        .split(':')
        .filter_map(|v| v.parse::<u32>().ok())
        .filter_map(char::from_u32);
    let first = chars.next()?;
    chars.next().is_none().then_some(first)
}

/// Key numbers of the `CSI <n> u` form that are named keys.
fn functional_u(number: u32) -> Option<KeyCode> {
    use KeypadKey as K;
    let named = match number {
        9 => NamedKey::Tab,
        13 => NamedKey::Enter,
        27 => NamedKey::Escape,
        32 => NamedKey::Space,
        127 => NamedKey::Backspace,
        57399..=57408 => NamedKey::Keypad(K::Digit((number - 57399) as u8)),
        57409 => NamedKey::Keypad(K::Decimal),
        57410 => NamedKey::Keypad(K::Divide),
        57411 => NamedKey::Keypad(K::Multiply),
        57412 => NamedKey::Keypad(K::Subtract),
        57413 => NamedKey::Keypad(K::Add),
        57414 => NamedKey::Keypad(K::Enter),
        57415 => NamedKey::Keypad(K::Equal),
        57417 => NamedKey::Left,
        57418 => NamedKey::Right,
        57419 => NamedKey::Up,
        57420 => NamedKey::Down,
        57421 => NamedKey::PageUp,
        57422 => NamedKey::PageDown,
        57423 => NamedKey::Home,
        57424 => NamedKey::End,
        57425 => NamedKey::Insert,
        57426 => NamedKey::Delete,
        _ => return None,
    };
    Some(KeyCode::Named(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(input: &[u8]) -> Vec<u8> {
        normalize_kitty(input, KeyModes::default())
    }

    #[test]
    fn plain_text_and_unknown_escapes_pass_through() {
        assert_eq!(norm(b"hello"), b"hello");
        assert_eq!(norm(b"\x1b[1;1R"), b"\x1bOR");
        assert_eq!(norm(b"\x1b[?25h"), b"\x1b[?25h");
        assert_eq!(norm(b"\x1b[5A"), b"\x1b[5A");
        assert_eq!(norm(b"\x1b[12"), b"\x1b[12");
        assert_eq!(norm(b"\x1b"), b"\x1b");
        assert_eq!(norm(b"a\x1bOAb"), b"a\x1bOAb");
    }

    #[test]
    fn u_sequences_become_legacy_bytes() {
        assert_eq!(norm(b"\x1b[97u"), b"a");
        assert_eq!(norm(b"\x1b[97;5u"), b"\x01");
        assert_eq!(norm(b"\x1b[99;5u"), b"\x03");
        assert_eq!(norm(b"\x1b[120;3u"), b"\x1bx");
        assert_eq!(norm(b"\x1b[120;7u"), b"\x1b\x18");
        assert_eq!(norm(b"\x1b[13u"), b"\r");
        assert_eq!(norm(b"\x1b[9u"), b"\t");
        assert_eq!(norm(b"\x1b[9;2u"), b"\x1b[Z");
        assert_eq!(norm(b"\x1b[27u"), b"\x1b");
        assert_eq!(norm(b"\x1b[127u"), b"\x7f");
        assert_eq!(norm(b"\x1b[32u"), b" ");
        assert_eq!(norm(b"\x1b[97:65;2u"), b"A");
        assert_eq!(norm(b"\x1b[97;2;65u"), b"A");
        assert_eq!(norm(b"\x1b[233u"), "é".as_bytes());
        assert_eq!(norm(b"\x1b[57399u"), b"0");
        assert_eq!(norm(b"\x1b[57414u"), b"\r");
        assert_eq!(norm(b"\x1b[57419u"), b"\x1b[A");
    }

    #[test]
    fn releases_and_bare_modifiers_are_dropped() {
        assert_eq!(norm(b"\x1b[97;1:3u"), b"");
        assert_eq!(norm(b"\x1b[97;1:1u\x1b[97;1:3u"), b"a");
        assert_eq!(norm(b"\x1b[97;1:2u"), b"a");
        assert_eq!(norm(b"\x1b[1;1:3A"), b"");
        assert_eq!(norm(b"\x1b[5;1:3~"), b"");
        assert_eq!(norm(b"\x1b[57441;2u"), b"");
        assert_eq!(norm(b"\x1b[57441;2:3u"), b"");
    }

    #[test]
    fn functional_keys_follow_cursor_mode_and_modifiers() {
        let app = KeyModes {
            application_cursor: true,
            ..KeyModes::default()
        };
        assert_eq!(norm(b"\x1b[A"), b"\x1b[A");
        assert_eq!(normalize_kitty(b"\x1b[A", app), b"\x1bOA");
        assert_eq!(normalize_kitty(b"\x1b[1;1:1H", app), b"\x1bOH");
        assert_eq!(norm(b"\x1b[1;5C"), b"\x1b[1;5C");
        assert_eq!(normalize_kitty(b"\x1b[1;5C", app), b"\x1b[1;5C");
        assert_eq!(norm(b"\x1b[3~"), b"\x1b[3~");
        assert_eq!(norm(b"\x1b[3;5~"), b"\x1b[3;5~");
        assert_eq!(norm(b"\x1b[13~"), b"\x1bOR");
        assert_eq!(norm(b"\x1b[15~"), b"\x1b[15~");
        assert_eq!(norm(b"\x1b[24;2~"), b"\x1b[24;2~");
        assert_eq!(norm(b"\x1b[1P"), b"\x1bOP");
        assert_eq!(norm(b"\x1b[7~"), b"\x1b[H");
        assert_eq!(norm(b"\x1b[99~"), b"\x1b[99~");
    }

    #[test]
    fn mixed_stream() {
        assert_eq!(norm(b"ls\x1b[13u\x1b[13;1:3u\x1b[108;5u"), b"ls\r\x0c");
    }

    #[test]
    fn odd_bytes_never_panic() {
        let samples: [&[u8]; 6] = [
            b"\x1b[;;;u",
            b"\x1b[4294967296u",
            b"\x1b[1114112u",
            b"\x1b[97;99999999999u",
            b"\x1b[:::u",
            b"\x1b[\xff\xfeu",
        ];
        for s in samples {
            let _ = norm(s);
        }
        assert_eq!(norm(b"\x1b[1114112u"), b"");
    }
}
