//! git's configuration syntax, read the way git's own parser (`config.c`) reads it: a UTF-8 byte
//! order mark at the start is skipped, `\r\n` is a newline, a section header is `[name]`,
//! `[name.sub]` or `[name "sub"]` (the quoted subsection may hold `]`, and `\` escapes the next
//! character), an entry may follow its header on the same line, a value's quotes, escapes
//! (`\t`, `\b`, `\n`, `\"`, `\\`), comments and backslash-newline continuations are resolved, and
//! anything git would reject (an unknown escape, an unterminated quote, a key not starting with a
//! letter) is an error. A reader that took such a file otherwise could miss a key git sees.

/// One `key = value` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// `section.name` or `section.subsection.name`; the section and name lower-cased, the
    /// subsection as written.
    pub key: String,
    /// The value; `None` for a key without `=` (a boolean true).
    pub value: Option<String>,
}

impl Entry {
    /// The section (lower-cased).
    pub fn section(&self) -> &str {
        self.key.split('.').next().unwrap_or("")
    }

    /// The variable name (lower-cased).
    pub fn name(&self) -> &str {
        self.key.rsplit('.').next().unwrap_or("")
    }
}

/// The line at which git would stop reading a configuration as invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadLine(pub usize);

/// The entries of a configuration file, in order.
pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Entry>, BadLine> {
    let mut r = Chars {
        b: bytes,
        i: 0,
        eof: false,
        line: 1,
    };
    let bom: &[u8] = b"\xef\xbb\xbf";
    if bytes.starts_with(bom) {
        r.i = bom.len();
    } else if bytes.first() == Some(&bom[0]) {
        // git does not take part of a byte order mark.
        return Err(BadLine(1));
    }
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    let mut comment = false;
    loop {
        let c = r.next();
        if c == b'\n' {
            if r.eof {
                return Ok(out);
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        if c == b'[' {
            section = Some(header(&mut r).ok_or(BadLine(r.line))?);
            continue;
        }
        let Some(stem) = section.as_deref().filter(|_| c.is_ascii_alphabetic()) else {
            return Err(BadLine(r.line));
        };
        let mut name = String::from(char::from(c.to_ascii_lowercase()));
        let mut c = r.next();
        while !r.eof && is_key_char(c) {
            name.push(char::from(c.to_ascii_lowercase()));
            c = r.next();
        }
        while c == b' ' || c == b'\t' {
            c = r.next();
        }
        let value = match c {
            b'\n' => None,
            b'=' => Some(value(&mut r).ok_or(BadLine(r.line))?),
            _ => return Err(BadLine(r.line)),
        };
        out.push(Entry {
            key: format!("{stem}.{name}"),
            value,
        });
        if r.eof {
            return Ok(out);
        }
    }
}

/// git's `isspace`: blank, tab, newline, carriage return.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// The bytes of a file as git's `get_next_char` gives them.
struct Chars<'a> {
    b: &'a [u8],
    i: usize,
    eof: bool,
    line: usize,
}

impl Chars<'_> {
    fn next(&mut self) -> u8 {
        let Some(&c) = self.b.get(self.i) else {
            self.eof = true;
            return b'\n';
        };
        self.i += 1;
        if c == b'\r' && self.b.get(self.i) == Some(&b'\n') {
            self.i += 1;
            self.line += 1;
            return b'\n';
        }
        if c == b'\n' {
            self.line += 1;
        }
        c
    }
}

/// A section header after its `[`: `name`, `name.sub` (lower-cased) or `name "sub"`.
fn header(r: &mut Chars<'_>) -> Option<String> {
    let mut name = String::new();
    let mut c = loop {
        let c = r.next();
        if r.eof {
            return None;
        }
        if c == b']' {
            return (!name.is_empty()).then_some(name);
        }
        if is_space(c) {
            break c;
        }
        if !is_key_char(c) && c != b'.' {
            return None;
        }
        name.push(char::from(c.to_ascii_lowercase()));
    };
    // `[name "sub"]`: blanks on this line, then the quoted subsection, then `]`.
    while is_space(c) {
        if c == b'\n' {
            return None;
        }
        c = r.next();
    }
    if c != b'"' || name.is_empty() {
        return None;
    }
    let mut sub = Vec::new();
    loop {
        let mut c = r.next();
        if c == b'\n' {
            return None;
        }
        if c == b'"' {
            break;
        }
        if c == b'\\' {
            c = r.next();
            if c == b'\n' {
                return None;
            }
        }
        sub.push(c);
    }
    if r.next() != b']' {
        return None;
    }
    Some(format!("{name}.{}", String::from_utf8_lossy(&sub)))
}

/// A value after its `=`, to the end of its (possibly continued) line.
fn value(r: &mut Chars<'_>) -> Option<String> {
    let mut out: Vec<u8> = Vec::new();
    let mut quote = false;
    let mut comment = false;
    let mut trim_len = 0;
    loop {
        let c = r.next();
        if c == b'\n' {
            if quote {
                return None;
            }
            if trim_len > 0 {
                out.truncate(trim_len);
            }
            return Some(String::from_utf8_lossy(&out).into_owned());
        }
        if comment {
            continue;
        }
        if is_space(c) && !quote {
            if trim_len == 0 {
                trim_len = out.len();
            }
            if !out.is_empty() {
                out.push(c);
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        trim_len = 0;
        match c {
            b'\\' => {
                let escaped = match r.next() {
                    b'\n' => continue,
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    c @ (b'\\' | b'"') => c,
                    _ => return None,
                };
                out.push(escaped);
            }
            b'"' => quote = !quote,
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &[u8]) -> Vec<(String, Option<String>)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect()
    }

    fn kv(k: &str, v: Option<&str>) -> (String, Option<String>) {
        (k.to_owned(), v.map(str::to_owned))
    }

    #[test]
    fn entries_as_git_reads_them() {
        assert_eq!(
            keys(b"\xef\xbb\xbf[core]\n\tfsmonitor = touch /tmp/p\n"),
            [kv("core.fsmonitor", Some("touch /tmp/p"))]
        );
        assert_eq!(
            keys(b"[diff \"a]b\"] command = touch x\n"),
            [kv("diff.a]b.command", Some("touch x"))]
        );
        assert_eq!(
            keys(b"[Diff \"A\\\"q\"]\r\n\tTextConv = \"sh\" -c \\\n  'x' ; c\n[a.B]k\n"),
            [kv("diff.A\"q.textconv", Some("sh -c   'x'")), kv("a.b.k", None)]
        );
        assert_eq!(
            keys(b"[x]\n\tv = \" a ; b \" # c\n\tw = a\\tb\\\\\n"),
            [kv("x.v", Some(" a ; b ")), kv("x.w", Some("a\tb\\"))]
        );
        assert_eq!(keys(b"[x]k=v"), [kv("x.k", Some("v"))]);
        assert_eq!(keys(b""), []);
    }

    #[test]
    fn what_git_rejects_is_an_error() {
        for bad in [
            &b"\xef\xbb[core]\n"[..],
            b"k = v\n",
            b"[core]\n1k = v\n",
            b"[core]\nk v\n",
            b"[core]\nk = \"v\n",
            b"[core]\nk = \\q\n",
            b"[core\n",
            b"[a \"b]\n",
            b"[a \"b\" ]\n",
            b"[a b]\n",
            b"[a_b]\n",
            b"[a\n \"b\"]\n",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
