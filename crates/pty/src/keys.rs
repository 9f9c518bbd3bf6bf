//! Key encoding: key names, modifiers, hex bytes and pasted text turned into the bytes a terminal sends.
//!
//! Pure functions only; the terminal modes that change the encoding (application cursor and keypad
//! modes, bracketed paste) are passed in as [`KeyModes`]. Encodings follow xterm, which is what
//! `TERM=xterm-256color` promises to the program.

use std::fmt::Write as _;

pub use crate::kitty::normalize_kitty;

/// One item of a send-keys request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySpec {
    /// Text sent exactly as given.
    Text(String),
    /// Hex bytes: tokens separated by spaces or commas, each one or two hex digits with an optional
    /// `0x` prefix (`"1b 5b 41"`, `"0x0d"`).
    Hex(String),
    /// A key token: a name (`Enter`, `up`, `F5`, `kp7`), a single character, `^X` control notation,
    /// optionally prefixed by stackable modifiers `C-`, `M-`, `S-` (`C-M-x`, `S-Tab`, `C-right`).
    Key(String),
}

/// Terminal modes that change what a key sends, tracked from the program's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyModes {
    /// Application cursor mode (`ESC[?1h`): unmodified arrows/home/end send `ESC O x`.
    pub application_cursor: bool,
    /// Application keypad mode (`ESC =`): keypad keys send `ESC O x` instead of their characters.
    pub application_keypad: bool,
    /// Bracketed paste mode (`ESC[?2004h`): pasted text is wrapped in `ESC[200~ … ESC[201~`.
    pub bracketed_paste: bool,
}

/// Why a key request could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// An empty (or blank) key token.
    #[error("empty key token")]
    Empty,
    /// A token that is neither a known key name nor a single character.
    #[error("unknown key {0:?} (send plain text as literal text instead)")]
    UnknownKey(String),
    /// A hex token that is not one or two hex digits.
    #[error("invalid hex byte {0:?} (expected one or two hex digits, optionally prefixed by 0x)")]
    InvalidHex(String),
    /// Ctrl combined with a character that has no control code.
    #[error("no control code for {0:?}")]
    NoControlCode(char),
    /// A key only a terminal can encode (arrows, function keys, modifiers), sent to a pipe.
    #[error("unknown key {0:?} for a pipe job (only a terminal encodes it; use a PTY job)")]
    NotForPipe(String),
}

/// Keys of the numeric keypad.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeypadKey {
    /// A digit key, 0–9.
    Digit(u8),
    /// `.`
    Decimal,
    /// `/`
    Divide,
    /// `*`
    Multiply,
    /// `-`
    Subtract,
    /// `+`
    Add,
    /// `=`
    Equal,
    /// Keypad Enter.
    Enter,
}

/// Keys that are not plain characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedKey {
    /// Enter / Return (CR).
    Enter,
    /// Tab; with shift it is back-tab (`ESC[Z`).
    Tab,
    /// Escape.
    Escape,
    /// Space bar.
    Space,
    /// Backspace (DEL, 0x7f).
    Backspace,
    /// Cursor up.
    Up,
    /// Cursor down.
    Down,
    /// Cursor left.
    Left,
    /// Cursor right.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Insert.
    Insert,
    /// Delete (forward).
    Delete,
    /// Function key F1–F12.
    F(u8),
    /// A keypad key.
    Keypad(KeypadKey),
}

/// What a key is, before modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCode {
    /// A character key.
    Char(char),
    /// A named key.
    Named(NamedKey),
}

/// Modifier keys held with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(clippy::struct_excessive_bools)]
pub struct Modifiers {
    /// Shift.
    pub shift: bool,
    /// Alt / Meta.
    pub alt: bool,
    /// Control.
    pub ctrl: bool,
}

impl Modifiers {
    /// No modifier held.
    pub fn is_empty(self) -> bool {
        !(self.shift || self.alt || self.ctrl)
    }

    /// The xterm modifier parameter: `1 + shift(1) + alt(2) + ctrl(4)`.
    pub fn xterm_param(self) -> u8 {
        1 + u8::from(self.shift) + 2 * u8::from(self.alt) + 4 * u8::from(self.ctrl)
    }
}

/// A key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Modifiers held.
    pub mods: Modifiers,
}

impl Key {
    /// A key without modifiers.
    pub fn new(code: KeyCode) -> Self {
        Self {
            code,
            mods: Modifiers::default(),
        }
    }

    /// Parse a key token (case-insensitive names; see [`KeySpec::Key`]).
    pub fn parse(token: &str) -> Result<Self, KeyError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(KeyError::Empty);
        }
        let mut rest = token;
        let mut mods = Modifiers::default();
        // Stackable prefixes: a letter and '-' (or `ctrl-`), followed by at least one more character.
        loop {
            if rest.len() > 5 && rest.is_char_boundary(5) && rest[..5].eq_ignore_ascii_case("ctrl-") {
                mods.ctrl = true;
                rest = &rest[5..];
                continue;
            }
            let bytes = rest.as_bytes();
            if bytes.len() > 2 && bytes[1] == b'-' {
                match bytes[0].to_ascii_lowercase() {
                    b'c' => mods.ctrl = true,
                    b'm' | b'a' => mods.alt = true,
                    b's' => mods.shift = true,
                    _ => break,
                }
                rest = &rest[2..];
            } else {
                break;
            }
        }
        // `^X` control notation.
        let mut chars = rest.chars();
        if let (Some('^'), Some(c), None) = (chars.next(), chars.next(), chars.next()) {
            mods.ctrl = true;
            return Ok(Self {
                code: KeyCode::Char(c),
                mods,
            });
        }
        let mut chars = rest.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            return Ok(Self {
                code: KeyCode::Char(c),
                mods,
            });
        }
        let lower = rest.to_ascii_lowercase();
        if matches!(lower.as_str(), "btab" | "backtab" | "shift-tab" | "shifttab") {
            mods.shift = true;
            return Ok(Self {
                code: KeyCode::Named(NamedKey::Tab),
                mods,
            });
        }
        match named_key(&lower) {
            Some(named) => Ok(Self {
                code: KeyCode::Named(named),
                mods,
            }),
            None => Err(KeyError::UnknownKey(token.to_owned())),
        }
    }

    /// The bytes this key sends in `modes`.
    pub fn encode(&self, modes: KeyModes) -> Result<Vec<u8>, KeyError> {
        let mut out = Vec::new();
        match self.code {
            KeyCode::Char(c) => encode_char(c, self.mods, &mut out)?,
            KeyCode::Named(named) => encode_named(named, self.mods, modes, &mut out)?,
        }
        Ok(out)
    }
}

fn named_key(lower: &str) -> Option<NamedKey> {
    use NamedKey as N;
    let key = match lower {
        "enter" | "return" | "ret" | "cr" => N::Enter,
        "tab" => N::Tab,
        "escape" | "esc" => N::Escape,
        "space" | "spc" => N::Space,
        "backspace" | "bspace" | "bs" => N::Backspace,
        "up" => N::Up,
        "down" => N::Down,
        "left" => N::Left,
        "right" => N::Right,
        "home" => N::Home,
        "end" => N::End,
        "pageup" | "pgup" | "ppage" | "page_up" | "page-up" => N::PageUp,
        "pagedown" | "pgdn" | "npage" | "page_down" | "page-down" => N::PageDown,
        "insert" | "ins" | "ic" => N::Insert,
        "delete" | "del" | "dc" => N::Delete,
        _ => {
            if let Some(n) = lower.strip_prefix('f') {
                let n: u8 = n.parse().ok()?;
                return (1..=12).contains(&n).then_some(N::F(n));
            }
            let kp = lower
                .strip_prefix("kp")
                .or_else(|| lower.strip_prefix("keypad"))?;
            let kp = if kp.len() > 1 {
                kp.strip_prefix(['_', '-']).unwrap_or(kp)
            } else {
                kp
            };
            return keypad_key(kp).map(N::Keypad);
        }
    };
    Some(key)
}

fn keypad_key(name: &str) -> Option<KeypadKey> {
    use KeypadKey as K;
    Some(match name {
        "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" => K::Digit(name.as_bytes()[0] - b'0'),
        "." | "decimal" | "dot" => K::Decimal,
        "/" | "divide" | "slash" => K::Divide,
        "*" | "multiply" | "star" => K::Multiply,
        "-" | "subtract" | "minus" => K::Subtract,
        "+" | "add" | "plus" => K::Add,
        "=" | "equal" => K::Equal,
        "enter" => K::Enter,
        _ => return None,
    })
}

/// The control code for `c` (xterm's legacy table), if it has one.
pub fn control_code(c: char) -> Option<u8> {
    Some(match c {
        'a'..='z' => c as u8 - b'a' + 1,
        '@'..='_' => c as u8 - b'@',
        ' ' | '2' => 0,
        '?' | '8' => 0x7f,
        '3' => 0x1b,
        '4' => 0x1c,
        '5' => 0x1d,
        '6' => 0x1e,
        '7' | '/' => 0x1f,
        _ => return None,
    })
}

fn encode_char(c: char, mods: Modifiers, out: &mut Vec<u8>) -> Result<(), KeyError> {
    if mods.alt {
        out.push(0x1b);
    }
    let c = if mods.shift && c.is_ascii_lowercase() {
        c.to_ascii_uppercase()
    } else {
        c
    };
    if mods.ctrl {
        let code = control_code(c.to_ascii_lowercase()).ok_or(KeyError::NoControlCode(c))?;
        out.push(code);
    } else {
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
    Ok(())
}

/// Final byte of the CSI/SS3 form of the cursor-like keys.
fn cursor_final(key: NamedKey) -> Option<u8> {
    Some(match key {
        NamedKey::Up => b'A',
        NamedKey::Down => b'B',
        NamedKey::Right => b'C',
        NamedKey::Left => b'D',
        NamedKey::Home => b'H',
        NamedKey::End => b'F',
        _ => return None,
    })
}

/// The `n` of `ESC[n~` keys.
fn tilde_number(key: NamedKey) -> Option<u8> {
    Some(match key {
        NamedKey::Insert => 2,
        NamedKey::Delete => 3,
        NamedKey::PageUp => 5,
        NamedKey::PageDown => 6,
        NamedKey::F(n @ 5..=12) => [15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)],
        _ => return None,
    })
}

fn encode_named(key: NamedKey, mods: Modifiers, modes: KeyModes, out: &mut Vec<u8>) -> Result<(), KeyError> {
    let m = mods.xterm_param();
    if let Some(fin) = cursor_final(key) {
        if !mods.is_empty() {
            let _ = write!(Bytes(out), "\x1b[1;{m}{}", fin as char);
        } else if modes.application_cursor {
            out.extend_from_slice(&[0x1b, b'O', fin]);
        } else {
            out.extend_from_slice(&[0x1b, b'[', fin]);
        }
        return Ok(());
    }
    if let Some(n) = tilde_number(key) {
        if mods.is_empty() {
            let _ = write!(Bytes(out), "\x1b[{n}~");
        } else {
            let _ = write!(Bytes(out), "\x1b[{n};{m}~");
        }
        return Ok(());
    }
    match key {
        NamedKey::F(n @ 1..=4) => {
            let fin = b"PQRS"[usize::from(n - 1)];
            if mods.is_empty() {
                out.extend_from_slice(&[0x1b, b'O', fin]);
            } else {
                let _ = write!(Bytes(out), "\x1b[1;{m}{}", fin as char);
            }
        }
        NamedKey::Tab if mods.shift => {
            if mods.alt {
                out.push(0x1b);
            }
            out.extend_from_slice(b"\x1b[Z");
        }
        NamedKey::Keypad(kp) => encode_keypad(kp, mods, modes, out),
        NamedKey::Space => encode_char(' ', mods, out)?,
        // The remaining keys have one legacy byte; only alt (an ESC prefix) changes them, except
        // ctrl-backspace which xterm sends as ^H.
        _ => {
            if mods.alt {
                out.push(0x1b);
            }
            out.push(match key {
                NamedKey::Enter => b'\r',
                NamedKey::Tab => b'\t',
                NamedKey::Escape => 0x1b,
                NamedKey::Backspace if mods.ctrl => 0x08,
                NamedKey::Backspace => 0x7f,
                // Every other key was handled above.
                _ => return Err(KeyError::UnknownKey(format!("{key:?}"))),
            });
        }
    }
    Ok(())
}

fn encode_keypad(kp: KeypadKey, mods: Modifiers, modes: KeyModes, out: &mut Vec<u8>) {
    let (app, plain) = match kp {
        KeypadKey::Digit(d) => (b'p' + d, b'0' + d),
        KeypadKey::Decimal => (b'n', b'.'),
        KeypadKey::Divide => (b'o', b'/'),
        KeypadKey::Multiply => (b'j', b'*'),
        KeypadKey::Subtract => (b'm', b'-'),
        KeypadKey::Add => (b'k', b'+'),
        KeypadKey::Equal => (b'X', b'='),
        KeypadKey::Enter => (b'M', b'\r'),
    };
    if mods.alt {
        out.push(0x1b);
    }
    if modes.application_keypad {
        out.extend_from_slice(&[0x1b, b'O', app]);
    } else {
        out.push(plain);
    }
}

/// `fmt::Write` over a byte vector, so `write!` can format escape sequences.
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Parse hex bytes (`"1b 5b 41"`, `"0x0d,0x0a"`, or runs of pairs such as `"1b5b41"`).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, KeyError> {
    let mut out = Vec::new();
    for token in text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        let invalid = || KeyError::InvalidHex(token.to_owned());
        let digits = token
            .strip_prefix("0x")
            .or_else(|| token.strip_prefix("0X"))
            .unwrap_or(token);
        // One or two digits are one byte; a longer token must be whole pairs.
        let pairs = digits.len() <= 2 || digits.len().is_multiple_of(2);
        if digits.is_empty() || !pairs || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        let step = if digits.len() <= 2 { digits.len() } else { 2 };
        for chunk in digits.as_bytes().chunks(step) {
            let pair = std::str::from_utf8(chunk).map_err(|_| invalid())?;
            out.push(u8::from_str_radix(pair, 16).map_err(|_| invalid())?);
        }
    }
    Ok(out)
}

/// Encode a whole send-keys request, in order, into one byte string.
pub fn encode_keys(keys: &[KeySpec], modes: KeyModes) -> Result<Vec<u8>, KeyError> {
    let mut out = Vec::new();
    for spec in keys {
        match spec {
            KeySpec::Text(text) => out.extend_from_slice(text.as_bytes()),
            KeySpec::Hex(hex) => out.extend(parse_hex(hex)?),
            KeySpec::Key(token) => out.extend(Key::parse(token)?.encode(modes)?),
        }
    }
    Ok(out)
}

/// Encode a send-keys request for a program reading a pipe, which has no terminal to turn keys into
/// bytes: text and hex bytes as they are, and the keys a line-oriented reader understands — Enter as a
/// line feed (a terminal sends CR), Tab, Space, Escape, Backspace (DEL), single characters and their
/// control codes (`C-d`, `ctrl-d`, `^D`). Any other key (arrows, function keys, Alt) is
/// [`KeyError::NotForPipe`].
pub fn encode_keys_for_pipe(keys: &[KeySpec]) -> Result<Vec<u8>, KeyError> {
    let mut out = Vec::new();
    for spec in keys {
        match spec {
            KeySpec::Text(text) => out.extend_from_slice(text.as_bytes()),
            KeySpec::Hex(hex) => out.extend(parse_hex(hex)?),
            KeySpec::Key(token) => {
                let not_for_pipe = || KeyError::NotForPipe(token.clone());
                let key = Key::parse(token).map_err(|_| not_for_pipe())?;
                let Modifiers { ctrl, alt, shift } = key.mods;
                if alt || shift {
                    return Err(not_for_pipe());
                }
                match key.code {
                    KeyCode::Char(c) if ctrl => {
                        out.push(control_code(c.to_ascii_lowercase()).ok_or_else(not_for_pipe)?);
                    }
                    KeyCode::Char(c) => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    KeyCode::Named(named) => {
                        out.push(pipe_byte(named).filter(|_| !ctrl).ok_or_else(not_for_pipe)?);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The byte a named key means to a line-oriented reader, if any.
fn pipe_byte(key: NamedKey) -> Option<u8> {
    Some(match key {
        NamedKey::Enter | NamedKey::Keypad(KeypadKey::Enter) => b'\n',
        NamedKey::Tab => b'\t',
        NamedKey::Space => b' ',
        NamedKey::Escape => 0x1b,
        NamedKey::Backspace => 0x7f,
        _ => return None,
    })
}

/// The bytes for pasting `text`: wrapped in `ESC[200~ … ESC[201~` when the program enabled bracketed
/// paste, raw otherwise. An end marker inside the text is removed so the paste cannot end early.
pub fn paste_bytes(text: &str, modes: KeyModes) -> Vec<u8> {
    if !modes.bracketed_paste {
        return text.as_bytes().to_vec();
    }
    let body = text.replace("\x1b[201~", "");
    let mut out = Vec::with_capacity(body.len() + 12);
    out.extend_from_slice(b"\x1b[200~");
    out.extend_from_slice(body.as_bytes());
    out.extend_from_slice(b"\x1b[201~");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(token: &str) -> Vec<u8> {
        Key::parse(token).unwrap().encode(KeyModes::default()).unwrap()
    }

    fn enc_app(token: &str) -> Vec<u8> {
        let modes = KeyModes {
            application_cursor: true,
            application_keypad: true,
            bracketed_paste: false,
        };
        Key::parse(token).unwrap().encode(modes).unwrap()
    }

    #[test]
    fn basic_named_keys() {
        for (names, bytes) in [
            (&["enter", "Return", "ENTER", "cr"][..], &b"\r"[..]),
            (&["tab"], b"\t"),
            (&["escape", "Esc"], b"\x1b"),
            (&["space"], b" "),
            (&["backspace", "bspace", "BS"], b"\x7f"),
            (&["up"], b"\x1b[A"),
            (&["down"], b"\x1b[B"),
            (&["right"], b"\x1b[C"),
            (&["left"], b"\x1b[D"),
            (&["home"], b"\x1b[H"),
            (&["end"], b"\x1b[F"),
            (&["pageup", "PgUp", "ppage"], b"\x1b[5~"),
            (&["pagedown", "pgdn", "npage"], b"\x1b[6~"),
            (&["insert", "ic"], b"\x1b[2~"),
            (&["delete", "del", "dc"], b"\x1b[3~"),
            (&["btab", "shift-tab", "S-Tab", "s-tab"], b"\x1b[Z"),
        ] {
            for name in names {
                assert_eq!(enc(name), bytes, "{name}");
            }
        }
    }

    #[test]
    fn function_keys() {
        let expected: [&[u8]; 12] = [
            b"\x1bOP",
            b"\x1bOQ",
            b"\x1bOR",
            b"\x1bOS",
            b"\x1b[15~",
            b"\x1b[17~",
            b"\x1b[18~",
            b"\x1b[19~",
            b"\x1b[20~",
            b"\x1b[21~",
            b"\x1b[23~",
            b"\x1b[24~",
        ];
        for (i, bytes) in expected.iter().enumerate() {
            assert_eq!(enc(&format!("F{}", i + 1)), *bytes);
            assert_eq!(enc(&format!("f{}", i + 1)), *bytes);
        }
        assert_eq!(enc("C-F1"), b"\x1b[1;5P");
        assert_eq!(enc("S-F5"), b"\x1b[15;2~");
        assert_eq!(enc("C-M-S-F12"), b"\x1b[24;8~");
        assert_eq!(Key::parse("F13"), Err(KeyError::UnknownKey("F13".into())));
        assert_eq!(Key::parse("F0"), Err(KeyError::UnknownKey("F0".into())));
    }

    #[test]
    fn keypad_numeric_and_application() {
        let table: [(&str, u8, u8); 16] = [
            ("kp0", b'0', b'p'),
            ("kp1", b'1', b'q'),
            ("kp2", b'2', b'r'),
            ("kp3", b'3', b's'),
            ("kp4", b'4', b't'),
            ("kp5", b'5', b'u'),
            ("kp6", b'6', b'v'),
            ("kp7", b'7', b'w'),
            ("kp8", b'8', b'x'),
            ("kp9", b'9', b'y'),
            ("kp.", b'.', b'n'),
            ("kp/", b'/', b'o'),
            ("kp*", b'*', b'j'),
            ("kp-", b'-', b'm'),
            ("kp+", b'+', b'k'),
            ("kpenter", b'\r', b'M'),
        ];
        for (name, plain, app) in table {
            assert_eq!(enc(name), [plain], "{name}");
            assert_eq!(enc_app(name), [0x1b, b'O', app], "{name}");
        }
        assert_eq!(enc("KP_Enter"), b"\r");
        assert_eq!(enc_app("keypad-7"), b"\x1bOw");
        assert_eq!(enc("M-kp5"), b"\x1b5");
    }

    #[test]
    fn application_cursor_mode_only_for_unmodified_cursor_keys() {
        assert_eq!(enc_app("up"), b"\x1bOA");
        assert_eq!(enc_app("down"), b"\x1bOB");
        assert_eq!(enc_app("right"), b"\x1bOC");
        assert_eq!(enc_app("left"), b"\x1bOD");
        assert_eq!(enc_app("home"), b"\x1bOH");
        assert_eq!(enc_app("end"), b"\x1bOF");
        assert_eq!(enc_app("pageup"), b"\x1b[5~");
        assert_eq!(enc_app("M-up"), b"\x1b[1;3A");
    }

    #[test]
    fn xterm_modifier_encoding() {
        assert_eq!(enc("C-right"), b"\x1b[1;5C");
        assert_eq!(enc("S-down"), b"\x1b[1;2B");
        assert_eq!(enc("M-up"), b"\x1b[1;3A");
        assert_eq!(enc("S-M-left"), b"\x1b[1;4D");
        assert_eq!(enc("C-S-home"), b"\x1b[1;6H");
        assert_eq!(enc("C-M-end"), b"\x1b[1;7F");
        assert_eq!(enc("C-M-S-up"), b"\x1b[1;8A");
        assert_eq!(enc("C-delete"), b"\x1b[3;5~");
        assert_eq!(enc("S-pageup"), b"\x1b[5;2~");
        assert_eq!(enc("M-insert"), b"\x1b[2;3~");
        assert_eq!(enc("c-pgdn"), b"\x1b[6;5~");
    }

    #[test]
    fn characters_with_modifiers() {
        assert_eq!(enc("a"), b"a");
        assert_eq!(enc("C-c"), b"\x03");
        assert_eq!(enc("C-C"), b"\x03");
        assert_eq!(enc("c-a"), b"\x01");
        assert_eq!(enc("C-z"), b"\x1a");
        assert_eq!(enc("M-x"), b"\x1bx");
        assert_eq!(enc("S-a"), b"A");
        assert_eq!(enc("M-S-a"), b"\x1bA");
        assert_eq!(enc("C-M-x"), b"\x1b\x18");
        assert_eq!(enc("M-C-x"), b"\x1b\x18");
        assert_eq!(enc("C-["), b"\x1b");
        assert_eq!(enc("C-@"), b"\x00");
        assert_eq!(enc("C-space"), b"\x00");
        assert_eq!(enc("M-space"), b"\x1b ");
        // Ctrl with '-' has no legacy control code: an error value, not a panic.
        assert_eq!(
            Key::parse("C--").unwrap().encode(KeyModes::default()),
            Err(KeyError::NoControlCode('-'))
        );
        assert_eq!(enc("é"), "é".as_bytes());
        assert_eq!(enc("M-é"), "\x1bé".as_bytes());
        assert_eq!(
            Key::parse("C-é").unwrap().encode(KeyModes::default()),
            Err(KeyError::NoControlCode('é'))
        );
        assert_eq!(
            Key::parse("C-1").unwrap().encode(KeyModes::default()),
            Err(KeyError::NoControlCode('1'))
        );
    }

    #[test]
    fn caret_notation() {
        assert_eq!(enc("^C"), b"\x03");
        assert_eq!(enc("^c"), b"\x03");
        assert_eq!(enc("^["), b"\x1b");
        assert_eq!(enc("^?"), b"\x7f");
        assert_eq!(enc("^@"), b"\x00");
        assert_eq!(enc("^\\"), b"\x1c");
        assert_eq!(enc("^]"), b"\x1d");
        assert_eq!(enc("^^"), b"\x1e");
        assert_eq!(enc("^_"), b"\x1f");
        assert_eq!(enc("M-^X"), b"\x1b\x18");
        assert_eq!(enc("^"), b"^");
    }

    #[test]
    fn modifiers_on_single_byte_named_keys() {
        assert_eq!(enc("M-enter"), b"\x1b\r");
        assert_eq!(enc("C-enter"), b"\r");
        assert_eq!(enc("M-tab"), b"\x1b\t");
        assert_eq!(enc("M-S-tab"), b"\x1b\x1b[Z");
        assert_eq!(enc("M-escape"), b"\x1b\x1b");
        assert_eq!(enc("C-backspace"), b"\x08");
        assert_eq!(enc("M-backspace"), b"\x1b\x7f");
    }

    #[test]
    fn errors_are_values() {
        assert_eq!(Key::parse(""), Err(KeyError::Empty));
        assert_eq!(Key::parse("   "), Err(KeyError::Empty));
        assert_eq!(Key::parse("hello"), Err(KeyError::UnknownKey("hello".into())));
        assert_eq!(Key::parse("C-hello"), Err(KeyError::UnknownKey("C-hello".into())));
        assert_eq!(Key::parse("X-up"), Err(KeyError::UnknownKey("X-up".into())));
        assert_eq!(Key::parse("kp10"), Err(KeyError::UnknownKey("kp10".into())));
        // A lone modifier prefix is the two characters themselves, not a modifier.
        assert_eq!(Key::parse("C-"), Err(KeyError::UnknownKey("C-".into())));
        assert_eq!(Key::parse("-"), Ok(Key::new(KeyCode::Char('-'))));
    }

    #[test]
    fn pipe_keys_encode() {
        let keys = [
            KeySpec::Key("h".into()),
            KeySpec::Key("enter".into()),
            KeySpec::Key("C-d".into()),
            KeySpec::Key("^C".into()),
            KeySpec::Key("ctrl-d".into()),
            KeySpec::Key("kpenter".into()),
            KeySpec::Hex("1b41".into()),
            KeySpec::Text("x".into()),
        ];
        assert_eq!(encode_keys_for_pipe(&keys).unwrap(), b"h\n\x04\x03\x04\n\x1bAx");
        assert!(encode_keys_for_pipe(&[KeySpec::Key("F13x".into())]).is_err());
        assert_eq!(
            encode_keys_for_pipe(&[KeySpec::Key("up".into())]),
            Err(KeyError::NotForPipe("up".into()))
        );
        assert!(encode_keys_for_pipe(&[KeySpec::Key("M-x".into())]).is_err());
    }

    #[test]
    fn hex_tokens() {
        assert_eq!(parse_hex("0d 0x0a,1B  f"), Ok(vec![0x0d, 0x0a, 0x1b, 0x0f]));
        assert_eq!(parse_hex("1b5b41 0x0d0a"), Ok(vec![0x1b, 0x5b, 0x41, 0x0d, 0x0a]));
        assert_eq!(parse_hex(""), Ok(vec![]));
        assert_eq!(parse_hex("zz"), Err(KeyError::InvalidHex("zz".into())));
        assert_eq!(parse_hex("123"), Err(KeyError::InvalidHex("123".into())));
        assert_eq!(parse_hex("0x"), Err(KeyError::InvalidHex("0x".into())));
        assert_eq!(parse_hex("+1"), Err(KeyError::InvalidHex("+1".into())));
    }

    #[test]
    fn whole_requests_in_order() {
        let keys = [
            KeySpec::Text("hi".into()),
            KeySpec::Hex("0d 0x0a".into()),
            KeySpec::Key("Enter".into()),
            KeySpec::Key("C-d".into()),
        ];
        assert_eq!(
            encode_keys(&keys, KeyModes::default()),
            Ok(b"hi\r\n\r\x04".to_vec())
        );
        let bad = [KeySpec::Text("x".into()), KeySpec::Key("nope".into())];
        assert_eq!(
            encode_keys(&bad, KeyModes::default()),
            Err(KeyError::UnknownKey("nope".into()))
        );
    }

    #[test]
    fn paste_is_bracketed_only_when_enabled() {
        let on = KeyModes {
            bracketed_paste: true,
            ..KeyModes::default()
        };
        assert_eq!(paste_bytes("ls\n", KeyModes::default()), b"ls\n");
        assert_eq!(paste_bytes("ls\n", on), b"\x1b[200~ls\n\x1b[201~");
        assert_eq!(paste_bytes("a\x1b[201~b", on), b"\x1b[200~ab\x1b[201~");
        assert_eq!(paste_bytes("", on), b"\x1b[200~\x1b[201~");
    }

    #[test]
    fn every_named_key_round_trips_without_panicking() {
        let names = [
            "enter",
            "tab",
            "escape",
            "space",
            "backspace",
            "up",
            "down",
            "left",
            "right",
            "home",
            "end",
            "pageup",
            "pagedown",
            "insert",
            "delete",
            "btab",
        ];
        for name in names {
            for prefix in ["", "C-", "M-", "S-", "C-M-", "C-M-S-"] {
                let key = Key::parse(&format!("{prefix}{name}")).unwrap();
                for app in [false, true] {
                    let modes = KeyModes {
                        application_cursor: app,
                        application_keypad: app,
                        bracketed_paste: false,
                    };
                    let bytes = key.encode(modes).unwrap();
                    assert!(!bytes.is_empty(), "{prefix}{name}");
                }
            }
        }
    }
}
