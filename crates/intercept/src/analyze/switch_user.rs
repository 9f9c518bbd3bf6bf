//! `su` and `runuser` (util-linux): `-c CMD` (or `--session-command`) is run by the user's
//! shell, words after the user name are that shell's arguments (`su me -- -c CMD`), and
//! `runuser -u USER CMD…` runs the command itself. Options and operands mix, as with GNU getopt.
//! What runs is judged as run with raised privileges, like `sudo`.

use super::options::{self, Order};
use super::wrappers::{bare_wrapper, inner};
use super::{Invocation, Walker};
use crate::argv::Arg;
use crate::meaning::Table;

static SU: Table = Table::new(
    "c|command= session-command= f|fast g|group= G|supp-group= l|login m|p|preserve-environment \
     P|pty s|shell= u|user= w|whitelist-environment= h|help V|version",
)
.abbreviations();

pub(super) fn run(w: &mut Walker<'_, '_>, text: &str, inv: Invocation, base: &str) {
    let argv = &inv.argv;
    let read = match options::read(argv, 1, &SU, Order::Gnu, base) {
        Ok(r) => r,
        Err(u) => return super::prefixes::unreadable(w, text, argv, u),
    };
    if read.has("h") || read.has("V") {
        return w.record(text, inv);
    }
    // `-` alone is `--login`.
    let operands: Vec<Arg> = read
        .operands
        .iter()
        .map(|&i| argv[i].clone())
        .filter(|a| !a.is("-"))
        .collect();
    let command = read
        .options
        .iter()
        .rev()
        .find(|(n, _)| n == "c" || n == "session-command")
        .and_then(|(_, v)| v.clone());
    let mut next = inner(&inv, 0);
    next.elevated = true;
    if read.has("u") && command.is_none() {
        // `runuser -u USER [--] CMD ARGS…`.
        if operands.is_empty() {
            return bare_wrapper(w, text, inv);
        }
        next.argv = operands;
        return w.invoke(text, next, None);
    }
    // The user's shell, given `-c CMD` and the words after the user name.
    let mut shell = vec![Arg::literal("sh")];
    if let Some(c) = command {
        shell.push(Arg::literal("-c"));
        shell.push(c);
    }
    let skip = usize::from(!read.has("u"));
    shell.extend(operands.into_iter().skip(skip));
    if shell.len() == 1 {
        // An interactive shell.
        return w.record(text, inv);
    }
    next.argv = shell;
    w.invoke(text, next, None);
}
