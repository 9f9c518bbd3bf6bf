//! A command as deny rules see it: the names its program runs as, its arguments with git's
//! aliases expanded, and its canonical form under the program's table.

use std::borrow::Cow;
use std::path::Path;

use super::{Canonical, Program, canonical, program, words};
use crate::argv::{Arg, basename};

/// A command as deny rules see it.
#[derive(Debug)]
pub(crate) struct CommandView<'a> {
    /// The program word as written, when known.
    pub word: Option<String>,
    /// The program word's source text, when only known at run time.
    pub dynamic_word: Option<String>,
    /// The names it runs as: the invoked one, then the real file's (a link followed); empty for a
    /// program only known at run time.
    pub names: Vec<String>,
    /// The arguments after the program word (git's aliases expanded).
    pub args: Cow<'a, [Arg]>,
    /// Its canonical form under the first of its names with an option table.
    pub canonical: Option<(&'static Program, Canonical)>,
}

impl<'a> CommandView<'a> {
    /// The view of `argv`, run in `dir`; `real_name` is the name the program word runs as when it
    /// differs from its own (see `identity`).
    pub fn new(argv: &'a [Arg], real_name: Option<String>, dir: Option<&Path>) -> Self {
        Self::configured(argv, real_name, dir, None)
    }

    /// Like [`new`](Self::new), for a command whose git configuration may be changed by the
    /// environment (`config_env` says how): git's aliases are then only known when it runs.
    pub fn configured(
        argv: &'a [Arg],
        real_name: Option<String>,
        dir: Option<&Path>,
        config_env: Option<&str>,
    ) -> Self {
        let Some((first, rest)) = argv.split_first() else {
            return Self::empty();
        };
        let word = first.get().filter(|_| !super::uncertain(first));
        let Some(w) = word else {
            // An unquoted `$c`, `$(…)` or glob may expand to several words: the program and what
            // follows it (`c='git push'; $c origin`), so its words stand among the arguments too.
            let args = if super::may_split(first) {
                let mut args = Vec::with_capacity(argv.len());
                args.push(Arg::dynamic(&first.raw, true));
                args.extend_from_slice(rest);
                Cow::Owned(args)
            } else {
                Cow::Borrowed(rest)
            };
            return Self {
                word: None,
                dynamic_word: Some(first.raw.clone()),
                names: Vec::new(),
                args,
                canonical: None,
            };
        };
        let mut names = vec![basename(w).to_owned()];
        names.extend(real_name);
        let mut args = Cow::Borrowed(rest);
        // `git-push` is `git push`: git runs the subcommand its invoked name carries.
        let dashed;
        let mut argv = argv;
        if let Some((program, sub)) = dispatched(basename(w)) {
            names.push(program.to_owned());
            let mut words = Vec::with_capacity(argv.len() + 1);
            words.push(Arg::literal(program));
            words.push(Arg::literal(sub));
            words.extend_from_slice(rest);
            dashed = words;
            argv = &dashed;
            args = Cow::Owned(dashed[1..].to_vec());
        }
        if names.iter().any(|n| n == "git")
            && let Some(mut expanded) = super::expand_git_aliases(argv, dir, config_env)
        {
            expanded.remove(0);
            args = Cow::Owned(expanded);
        }
        let canonical = names
            .iter()
            .find_map(|n| program(n))
            .map(|p| (p, canonical(p, &words(&args), false)));
        Self {
            word: Some(w.to_owned()),
            dynamic_word: None,
            names,
            args,
            canonical,
        }
    }

    fn empty() -> Self {
        Self {
            word: None,
            dynamic_word: None,
            names: Vec::new(),
            args: Cow::Borrowed(&[]),
            canonical: None,
        }
    }

    /// The same command with words appended at run time (`xargs`): one more word that may be
    /// anything, options included.
    pub fn with_appended(&self) -> CommandView<'static> {
        let mut args = self.args.to_vec();
        args.push(Arg::dynamic(APPENDED, true));
        let canonical = self
            .canonical
            .as_ref()
            .map(|(p, _)| (*p, canonical(p, &words(&args), false)));
        CommandView {
            word: self.word.clone(),
            dynamic_word: self.dynamic_word.clone(),
            names: self.names.clone(),
            args: Cow::Owned(args),
            canonical,
        }
    }

    /// A word only known at run time in the command, if any (the program word included).
    pub fn uncertain_word(&self) -> Option<&str> {
        if self.names.is_empty() {
            return Some(self.dynamic_word.as_deref().unwrap_or("the command name"));
        }
        self.args
            .iter()
            .find(|a| super::uncertain(a))
            .map(|a| a.raw.as_str())
    }
}

/// A program invoked under a name that carries its subcommand: `git-push` is `git push` (git
/// dispatches on the name it is run as, and runs `git-NAME` for a subcommand it does not have).
pub(crate) fn dispatched(name: &str) -> Option<(&'static str, &str)> {
    let sub = name.strip_prefix("git-")?;
    (!sub.is_empty() && !sub.starts_with('-')).then_some(("git", sub))
}

/// How the words appended at run time are named.
pub(crate) const APPENDED: &str = "(the words appended at run time)";
