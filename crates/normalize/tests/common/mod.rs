//! A deterministic generator of shell commands (valid and deliberately broken), shared by the
//! differential and property tests.

#![allow(dead_code)]

/// A small deterministic generator (xorshift), so the corpus is the same on every run.
pub struct Gen(pub u64);

impl Gen {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn word(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a",
            "foo",
            "-n",
            "--x=1",
            "é",
            "日本",
            "1",
            "%s",
            "x.y",
            "a/b",
            "@",
            "+",
            ":",
            "=",
            "!",
            "'s q'",
            "'a\"b'",
            "\"d q\"",
            "\"a'b\"",
            "\"x\\\"y\"",
            "\"\\\\\"",
            "\"\\$x\"",
            "\"e\\x\"",
            "$'t\\tb'",
            "$'\\x41'",
            "$'\\''",
            "\\ ",
            "\\\\",
            "\\'",
            "\\\"",
            "\\$",
            "\\a",
            "\\#",
            "#",
            "{",
            "}",
            ",",
            "{x}",
            "[",
            "]",
            "$",
            "''",
            "\"\"",
            "\\\n",
            "~",
            "$HOME",
            "*",
            "?",
        ];
        let n = 1 + self.below(4);
        let mut w = String::new();
        for _ in 0..n {
            w.push_str(self.pick(PIECES));
        }
        w
    }

    pub fn simple(&mut self) -> String {
        let mut s = self
            .pick(&["echo", "printf", "ls", "cat", "x=1 env", "grep"])
            .to_owned();
        for _ in 0..self.below(4) {
            s.push(' ');
            s.push_str(&self.word());
        }
        if self.below(4) == 0 {
            s.push(' ');
            s.push_str(self.pick(&[
                "2>&1",
                "> f",
                ">> f",
                "< f",
                "&> f",
                "2>/dev/null",
                ">|f",
                "<<< w",
            ]));
        }
        s
    }

    pub fn command(&mut self, depth: u32) -> String {
        match if depth > 1 { 0 } else { self.below(16) } {
            0..=3 => self.simple(),
            4 => format!("{{ {}; }}", self.list(depth + 1)),
            5 => format!("( {} )", self.list(depth + 1)),
            6 => format!("if {}; then {}; fi", self.simple(), self.list(depth + 1)),
            7 => format!(
                "for v in {} {}; do {}; done",
                self.word(),
                self.word(),
                self.simple()
            ),
            8 => format!("echo $({})", self.list(depth + 1)),
            9 => format!("echo \"x $({}) ${{v:-{}}}\"", self.list(depth + 1), self.word()),
            10 => format!(
                "cat <<{d}{}\n{}\n{d}\n",
                if self.below(2) == 0 { "" } else { " | head -n 3" },
                self.word(),
                d = self.pick(&["EOF", "'EOF'", "\"E\"OF", "-X"])
            ),
            11 => format!(
                "case {} in {}) {};; *) {};; esac",
                self.word(),
                self.word(),
                self.simple(),
                self.simple()
            ),
            12 => format!("while {}; do {}; done", self.simple(), self.list(depth + 1)),
            13 => format!("f() {{ {}; }}", self.list(depth + 1)),
            14 => format!("diff <({}) `{}` # {}", self.simple(), self.simple(), self.word()),
            _ => format!(
                "(( {} )) && [[ {} == {} ]]",
                self.word(),
                self.word(),
                self.word()
            ),
        }
    }

    pub fn list(&mut self, depth: u32) -> String {
        let mut s = self.command(depth);
        for _ in 0..self.below(3) {
            s.push_str(self.pick(&[" | ", " |& ", " && ", " || ", "; ", "\n", " & "]));
            s.push_str(&self.command(depth));
        }
        s
    }

    /// Occasionally damage a command so syntax errors are exercised too.
    pub fn maybe_break(&mut self, s: String) -> String {
        if self.below(5) != 0 {
            return s;
        }
        let junk = self.pick(&[
            "(", ")", ";;", "'", "\"", "`", "$(", "{", "}", "|", "&&", "fi", "done", "<",
        ]);
        let mut at = (self.next() % (s.len() as u64 + 1)) as usize;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        format!("{}{junk}{}", &s[..at], &s[at..])
    }
}
