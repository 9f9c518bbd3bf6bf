//! Decoding of `$'…'` strings (bash ANSI-C quoting).

/// Decode the text between `$'` and `'`. Returns the bytes bash would produce.
///
/// Bash stops the string at a NUL byte (`$'a\0b'` is `a`), so decoding stops there too.
pub(crate) fn decode(raw: &str) -> Vec<u8> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        let simple = match c {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'e' | b'E' => Some(0x1b),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' => Some(b'\\'),
            b'\'' => Some(b'\''),
            b'"' => Some(b'"'),
            b'?' => Some(b'?'),
            _ => None,
        };
        if let Some(v) = simple {
            out.push(v);
            continue;
        }
        match c {
            b'0'..=b'7' => {
                let (v, used) = number(&b[i - 1..], 8, 3);
                i += used - 1;
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let (v, used) = number(&b[i..], 16, 2);
                if used == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    i += used;
                    out.push(v as u8);
                }
            }
            b'u' | b'U' => {
                let max = if c == b'u' { 4 } else { 8 };
                let (v, used) = number(&b[i..], 16, max);
                if used == 0 {
                    out.push(b'\\');
                    out.push(c);
                } else {
                    i += used;
                    match char::from_u32(v) {
                        Some(ch) => {
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        // Not a scalar value: keep an invalid byte so the word is marked inexact.
                        None => out.push(0xff),
                    }
                }
            }
            b'c' if i < b.len() => {
                let ctl = b[i];
                i += 1;
                out.push(if ctl == b'?' {
                    0x7f
                } else {
                    ctl.to_ascii_uppercase() & 0x1f
                });
            }
            _ => {
                out.push(b'\\');
                out.push(c);
            }
        }
    }
    if let Some(nul) = out.iter().position(|&x| x == 0) {
        out.truncate(nul);
    }
    out
}

/// Parse up to `max` digits of `radix` at the start of `b`; returns the value and digits used.
fn number(b: &[u8], radix: u32, max: usize) -> (u32, usize) {
    let mut v: u32 = 0;
    let mut used = 0;
    while used < max && used < b.len() {
        let Some(d) = (b[used] as char).to_digit(radix) else {
            break;
        };
        v = v.wrapping_mul(radix).wrapping_add(d);
        used += 1;
    }
    (v, used)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_common_escapes() {
        assert_eq!(decode(r"a\tb\n"), b"a\tb\n");
        assert_eq!(decode(r"\x41\101\u00e9"), "AAé".as_bytes());
        assert_eq!(decode(r"\cA\e"), [1, 0x1b]);
        assert_eq!(decode(r"\q"), b"\\q");
        assert_eq!(decode(r"a\0b"), b"a");
        assert_eq!(decode(r"\'"), b"'");
    }
}
