//! `sed`: read-only unless the script runs (`e`, `s///e`) or writes (`w`, `W`, `s///w`), or `-i`
//! edits in place. The script is parsed, not pattern-matched: `s/a;w x/b/` is a substitution.

use crate::argv::Arg;
use crate::getopt::{Item, Spec, long_may_be, scan};

pub(super) fn check(args: &[Arg]) -> Result<(), String> {
    let spec = Spec {
        short_values: "efl",
        long_values: &["expression", "file", "line-length"],
    };
    let mut scripts: Vec<&str> = Vec::new();
    let mut positional_script = true;
    let items = scan(args, spec);
    for item in &items {
        match item {
            Item::Short('i', _) => return Err("`sed -i` edits files in place".into()),
            Item::Long(n, _) if long_may_be(n, "in-place") => {
                return Err("`sed --in-place` edits files in place".into());
            }
            Item::Short('f', _) => return Err("`sed -f` reads a script the analysis cannot see".into()),
            Item::Long(n, _) if long_may_be(n, "file") => {
                return Err("`sed --file` reads a script the analysis cannot see".into());
            }
            Item::Short('e', v) => {
                positional_script = false;
                scripts.push(v.ok_or("a `sed` script is only known when it runs")?);
            }
            Item::Long(n, v) if long_may_be(n, "expression") => {
                positional_script = false;
                scripts.push(v.ok_or("a `sed` script is only known when it runs")?);
            }
            Item::Unknown(a) => return Err(format!("`sed` argument `{}` may expand to an option", a.raw)),
            _ => {}
        }
    }
    if positional_script {
        match items.iter().find_map(|i| match i {
            Item::Positional(a) => Some(*a),
            _ => None,
        }) {
            Some(a) => match a.get() {
                Some(s) => scripts.push(s),
                None => return Err(format!("the `sed` script `{}` is only known when it runs", a.raw)),
            },
            None => return Err("`sed` without a script".into()),
        }
    }
    // `-e` arguments join with newlines into one script.
    let script = scripts.join("\n");
    Parser {
        s: script.as_bytes(),
        i: 0,
    }
    .script()
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_to_newline(&mut self) {
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == b'\n' {
                break;
            }
        }
    }

    fn skip_text(&mut self) {
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == b'\\' {
                self.i += 1;
            } else if c == b'\n' {
                break;
            }
        }
    }

    fn script(mut self) -> Result<(), String> {
        loop {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b';')) {
                self.i += 1;
            }
            let Some(_) = self.peek() else { return Ok(()) };
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(b',') {
                self.i += 1;
                self.skip_blanks();
                self.address()?;
                self.skip_blanks();
            }
            while self.peek() == Some(b'!') {
                self.i += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    fn address(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(b'0'..=b'9' | b'+' | b'~') => {
                self.i += 1;
                while matches!(self.peek(), Some(b'0'..=b'9' | b'~')) {
                    self.i += 1;
                }
            }
            Some(b'$') => self.i += 1,
            Some(b'/') => {
                self.i += 1;
                self.delimited(b'/')?;
                while matches!(self.peek(), Some(b'I' | b'M')) {
                    self.i += 1;
                }
            }
            Some(b'\\') => {
                let d = self
                    .s
                    .get(self.i + 1)
                    .copied()
                    .ok_or("unfinished `sed` address")?;
                self.i += 2;
                self.delimited(d)?;
                while matches!(self.peek(), Some(b'I' | b'M')) {
                    self.i += 1;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Skip to the unescaped delimiter `d` (consumed).
    fn delimited(&mut self, d: u8) -> Result<(), String> {
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == b'\\' {
                self.i += 1;
            } else if c == d {
                return Ok(());
            } else if c == b'\n' && d != b'\n' {
                return Err("a `sed` expression spans lines".into());
            }
        }
        Err("an unterminated `sed` expression".into())
    }

    fn command(&mut self) -> Result<(), String> {
        let Some(c) = self.peek() else {
            return Err("a `sed` address without a command".into());
        };
        self.i += 1;
        match c {
            b'{' | b'}' | b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p' | b'P'
            | b'x' | b'z' | b'F' => Ok(()),
            b'l' | b'q' | b'Q' | b'L' => {
                self.skip_blanks();
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.i += 1;
                }
                Ok(())
            }
            // Text to insert continues over backslash-newline.
            b'a' | b'i' | b'c' => {
                self.skip_text();
                Ok(())
            }
            // A comment and a file name end at the newline, whatever precedes it (GNU sed).
            b'#' | b'r' | b'R' => {
                self.skip_to_newline();
                Ok(())
            }
            // A label (or `v`'s version) ends at a blank, `;` or newline: GNU sed reads
            // `:a e cmd` as a label and an `e` command.
            b':' | b'b' | b't' | b'T' | b'v' => {
                self.skip_blanks();
                while let Some(c) = self.peek() {
                    if matches!(c, b'\n' | b';' | b' ' | b'\t') {
                        break;
                    }
                    self.i += 1;
                }
                Ok(())
            }
            b'e' => Err("the `sed` command `e` runs a shell command".into()),
            b'w' | b'W' => Err("the `sed` command `w` writes a file".into()),
            b's' => {
                let d = self.peek().ok_or("an unfinished `sed` `s` command")?;
                if d == b'\\' || d == b'\n' {
                    return Err("an unusual `sed` delimiter".into());
                }
                self.i += 1;
                self.delimited(d)?;
                self.delimited(d)?;
                while let Some(f) = self.peek() {
                    match f {
                        b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'0'..=b'9' => self.i += 1,
                        b'e' => return Err("the `sed` flag `s///e` runs the result as a command".into()),
                        b'w' => return Err("the `sed` flag `s///w` writes a file".into()),
                        _ => break,
                    }
                }
                Ok(())
            }
            b'y' => {
                let d = self.peek().ok_or("an unfinished `sed` `y` command")?;
                self.i += 1;
                self.delimited(d)?;
                self.delimited(d)
            }
            other => Err(format!(
                "the `sed` command `{}` is not known to be read-only",
                other as char
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::argv::Arg;

    fn ok(args: &[&str]) -> bool {
        let a: Vec<Arg> = args.iter().map(|s| Arg::literal(s)).collect();
        check(&a).is_ok()
    }

    #[test]
    fn sed_scripts() {
        assert!(ok(&["-n", "1,5p", "f"]));
        assert!(ok(&["s/a/b/g", "f"]));
        assert!(ok(&["-e", "s/a;w x/b/", "f"]));
        assert!(ok(&["-n", "/foo/{p;q}", "f"]));
        assert!(ok(&["-E", "s|a|b|2", "f"]));
        assert!(ok(&["y/abc/xyz/"]));
        assert!(!ok(&["1e id", "f"]));
        assert!(!ok(&["s/x/id/e", "f"]));
        assert!(!ok(&["s/x/y/w out", "f"]));
        assert!(!ok(&["-n", "w out", "f"]));
        assert!(!ok(&["-n", "1p;W out", "f"]));
        assert!(!ok(&["-i", "s/a/b/", "f"]));
        assert!(!ok(&["-ni", "p", "f"]));
        assert!(!ok(&["--in-pl", "s/a/b/", "f"]));
        assert!(!ok(&["-f", "script.sed", "f"]));
        assert!(!ok(&["-e", "p", "-e", "e ls"]));
    }
}
