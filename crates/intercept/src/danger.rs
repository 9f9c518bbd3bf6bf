//! Dangerous commands (SPEC I-4): asked about under every security mode, denied when asking is
//! off, and never made acceptable by a rule.

use std::path::{Path, PathBuf};

use shellgate_normalize::ast::{Redirect, RedirectOp};

use crate::argv::{Arg, basename};
use crate::getopt::long_may_be;
use crate::path_lookup::lexical_normalize;
use crate::segment::{Segment, SegmentKind};

/// Programs that fetch from the network.
pub(crate) const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "xh"];

/// Programs that run the code they read on stdin.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "deno",
    "bun",
    "osascript",
    "pwsh",
];

/// The engine's own name: killing it ends the service that judges commands.
const ENGINE: &str = "shellgate";

fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&name) || name.starts_with("python") || name.starts_with("pypy")
}

/// Why the command `argv` is dangerous, if it is.
/// `workspace` is where the command starts; `here` where this part runs, when known.
pub(crate) fn check(
    argv: &[Arg],
    (workspace, configured): (Option<&Path>, Option<&Path>),
    here: Option<&Path>,
    cd_seen: bool,
) -> Option<String> {
    let name = basename(argv.first()?.get()?);
    let args = &argv[1..];
    match name {
        "rm" => rm(args, here),
        "find" => find_delete(args, (workspace, configured), here, cd_seen),
        "dd" => args.iter().find_map(|a| {
            let target = a.get()?.strip_prefix("of=")?;
            is_device(target).then(|| format!("`dd` writes to the device `{target}`"))
        }),
        "kill" => kill(args),
        "pkill" | "killall" => {
            let hits = args.iter().any(|a| a.raw.to_ascii_lowercase().contains(ENGINE))
                || crate::engine_signal::pattern_matches_engine(name, args);
            let everyone = args
                .iter()
                .any(|a| a.is("-u") || a.is("--user") || a.get().is_some_and(|v| v.starts_with("--user=")));
            (hits || everyone).then(|| format!("`{name}` would stop the engine itself"))
        }
        "killall5" => Some("`killall5` signals every process".into()),
        // Writes, not reads: every file `tee` is given, the destination of `cp`/`install`/`mv`.
        "tee" | "cp" | "install" | "mv" => written_by(name, args)
            .filter(|t| is_device(t))
            .map(|t| format!("`{name}` writes to the device `{t}`")),
        "source" | "." if args.first().is_some_and(Arg::runs_downloader) => {
            Some("runs a script it downloads".into())
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(format!("`{name}` stops the machine")),
        "wipefs" | "shred" if args.iter().any(|a| a.get().is_some_and(is_device)) => {
            Some(format!("`{name}` destroys a device"))
        }
        n if n.starts_with("mkfs") || n == "mke2fs" || n == "mkswap" => {
            Some(format!("`{n}` formats a file system"))
        }
        "chmod" | "chown" | "chgrp"
            if recursive(args) && args.iter().any(|a| protected_target(a, here).is_some()) =>
        {
            Some(format!("`{name} -R` on a top-level directory"))
        }
        _ => None,
    }
}

/// The file `tee` writes first among its devices, or the destination of `cp`/`install`/`mv`
/// (`-t DIR`, or the last operand).
fn written_by<'a>(name: &str, args: &'a [Arg]) -> Option<&'a str> {
    let mut operands = Vec::new();
    let mut options_done = false;
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        let Some(v) = a.get() else { continue };
        if options_done || v == "-" || !v.starts_with('-') {
            operands.push(v);
        } else if v == "--" {
            options_done = true;
        } else if name != "tee" {
            if let Some(dir) = v.strip_prefix("--target-directory=").or_else(|| {
                v.strip_prefix("-t")
                    .filter(|d| !d.is_empty() && !v.starts_with("--"))
            }) {
                return Some(dir);
            }
            if v == "-t" || (v.starts_with("--t") && long_may_be(&v[2..], "target-directory")) {
                return iter.next().and_then(Arg::get);
            }
        }
    }
    if name == "tee" {
        operands.into_iter().find(|t| is_device(t))
    } else if operands.len() >= 2 {
        operands.last().copied()
    } else {
        None
    }
}

fn recursive(args: &[Arg]) -> bool {
    args.iter().any(|a| match a.get() {
        Some(v) if v.starts_with("--") => long_may_be(&v[2..], "recursive") && v.len() > 4,
        Some(v) if v.starts_with('-') => v[1..].contains(['r', 'R']),
        _ => false,
    })
}

fn rm(args: &[Arg], here: Option<&Path>) -> Option<String> {
    let mut recursive = false;
    let mut no_preserve = false;
    let mut targets = Vec::new();
    let mut options_done = false;
    let mut maybe_option: Option<&Arg> = None;
    for a in args {
        match a.get() {
            Some("--") if !options_done => options_done = true,
            Some(v) if !options_done && v.starts_with("--") => {
                let n = &v[2..];
                if n.len() >= 3 && long_may_be(n, "recursive") {
                    recursive = true;
                }
                if n.len() >= 3 && long_may_be(n, "no-preserve-root") {
                    no_preserve = true;
                }
            }
            Some(v) if !options_done && v.starts_with('-') && v.len() > 1 => {
                if v[1..].contains(['r', 'R']) {
                    recursive = true;
                }
            }
            _ => {
                // `x=-rf; rm $x /`: a word only known at run time may be the option.
                if !options_done && a.is_dynamic() && a.may_be_option && maybe_option.is_none() {
                    maybe_option = Some(a);
                }
                targets.push(a);
            }
        }
    }
    if no_preserve {
        return Some("`rm --no-preserve-root`".into());
    }
    if !recursive {
        let option = maybe_option?;
        let t = targets
            .iter()
            .filter(|t| !std::ptr::eq(**t, option))
            .find_map(|t| protected_target(t, here))?;
        return Some(format!(
            "`rm {} {t}`: `{}` is only known when it runs and could be `-r`, and `{t}` is a home or system directory",
            option.raw, option.raw
        ));
    }
    if let Some(t) = targets.iter().find_map(|t| protected_target(t, here)) {
        return Some(format!("`rm -r` of `{t}` deletes a home or system directory"));
    }
    if let Some(t) = targets
        .iter()
        .find(|t| t.is_dynamic() && could_be_root_or_home(&t.raw))
    {
        return Some(format!(
            "`rm -r {}`: the target is only known when it runs and could be `/` or the home directory",
            t.raw
        ));
    }
    // Everything in the current directory, when that is `/`, a top-level or the home directory.
    let here = here?;
    let everything = targets
        .iter()
        .find(|t| matches!(t.raw.as_str(), "*" | "." | "./" | "./*" | ".*" | "./.*"))?;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let top = here.components().count() <= 2 || home.as_deref() == Some(here);
    top.then(|| {
        format!(
            "`rm -r {}` in `{}` deletes a home or system directory",
            everything.raw,
            here.display()
        )
    })
}

/// Whether a target only known at run time could expand to `/` or the home directory: nothing
/// after its last expansion pins it elsewhere (`$x`, `"$(echo ~)"`, `${DIR}/`, `"$d"/..`).
fn could_be_root_or_home(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut end = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'$' if matches!(b.get(i + 1), Some(b'(' | b'{')) => {
                let close = if b[i + 1] == b'(' { b')' } else { b'}' };
                i = b
                    .iter()
                    .rposition(|&c| c == close)
                    .map_or(b.len(), |p| p.max(i + 1))
                    + 1;
                end = i;
            }
            b'$' => {
                i += 1;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'@' | b'*' | b'#' | b'?'))
                {
                    i += 1;
                }
                end = i;
            }
            b'`' => {
                i = b.iter().rposition(|&c| c == b'`').map_or(b.len(), |p| p.max(i)) + 1;
                end = i;
            }
            _ => i += 1,
        }
    }
    end > 0
        && raw[end.min(raw.len())..]
            .chars()
            .all(|c| matches!(c, '/' | '.' | '"' | '\'' | '*'))
}

/// `path` as the system sees it: `..`, `.` and `//` resolved, and `/proc/self/root`,
/// `/proc/thread-self/root` or `/proc/PID/root` (a process's view of `/`) read as `/`.
pub(crate) fn system_path(path: &str) -> PathBuf {
    let mut p = lexical_normalize(Path::new(path));
    for _ in 0..8 {
        let mut parts = p.components();
        let (Some(_), Some(proc_dir), Some(process), Some(root)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            break;
        };
        let process = process.as_os_str().to_string_lossy();
        let is_process = process == "self"
            || process == "thread-self"
            || (!process.is_empty() && process.bytes().all(|b| b.is_ascii_digit()));
        if proc_dir.as_os_str() != "proc" || !is_process || root.as_os_str() != "root" {
            break;
        }
        p = Path::new("/").join(parts.as_path());
    }
    p
}

/// The raw text of `a` when it names `/`, a top-level directory, the home directory, the parent
/// directory, or everything in one of them — as written, after `/proc/self/root` and the like,
/// or once the symbolic links on the way are followed (`here`: where a relative path starts).
fn protected_target(a: &Arg, here: Option<&Path>) -> Option<String> {
    let raw = a.raw.as_str();
    if let Some(t) = protected_text(a) {
        return Some(t);
    }
    // `/proc/self/cwd` is the directory the command runs in.
    if let (Some(v), Some(h)) = (a.get(), here) {
        let parts: Vec<&str> = v.splitn(5, '/').collect();
        if let ["", "proc", _, "cwd", ..] = parts.as_slice() {
            let inside = h.join(parts.get(4).copied().unwrap_or(""));
            let inside = format!("{}{}", inside.display(), if v.ends_with('/') { "/" } else { "" });
            if protected_text(&Arg::literal(&inside)).is_some() {
                return Some(raw.to_owned());
            }
        }
    }
    // Links on the way to the target are followed; the last one too when the target ends in
    // `/`, `/.` or `/*` (what is deleted is then inside it).
    let v = a.get()?;
    let followed = ["/", "/.", "/*", "/.*"].iter().any(|s| v.ends_with(s));
    let t = v.trim_end_matches(['*', '.']).trim_end_matches('/');
    // A name in the directory the command runs in, not followed, has no link on its way.
    if !followed && !t.contains('/') {
        return None;
    }
    let path = match (t.starts_with('/'), here) {
        (true, _) => PathBuf::from(t),
        (false, Some(h)) => h.join(t),
        (false, None) => return None,
    };
    let real = if followed {
        std::fs::canonicalize(&path).ok()?
    } else {
        std::fs::canonicalize(path.parent()?)
            .ok()?
            .join(path.file_name()?)
    };
    let real = real.to_str()?;
    (real != path.to_str()? && protected_text(&Arg::literal(real)).is_some()).then(|| raw.to_owned())
}

/// [`protected_target`] by the text alone.
fn protected_text(a: &Arg) -> Option<String> {
    let raw = a.raw.as_str();
    // Quotes do not change which directory is named; keep `$HOME` and `~` symbolic.
    let mut t: String = raw.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    t = t.replace("${HOME}", "$HOME");
    // Strip what selects "everything inside": trailing `/`, `/*`, `/.*`, `/.`.
    loop {
        let before = t.len();
        for suffix in ["/*", "/.*", "/.", "/"] {
            if (t.len() > suffix.len() || (suffix == "/" && t.len() > 1))
                && let Some(s) = t.strip_suffix(suffix)
            {
                t = s.to_owned();
            }
        }
        if t.len() == before {
            break;
        }
    }
    // `/usr/../etc` is `/etc`, `//` is `/`, `/proc/self/root/etc` is `/etc`.
    if t.starts_with('/') && !t.contains('$') {
        t = system_path(&t).to_string_lossy().into_owned();
    }
    // `/proc/PID/root` is a process's view of `/` whatever the process (`/proc/$$/root`).
    let parts: Vec<&str> = t.splitn(5, '/').collect();
    if let ["", "proc", _, "root", ..] = parts.as_slice() {
        t = format!("/{}", parts.get(4).copied().unwrap_or(""));
        t = system_path(&t).to_string_lossy().into_owned();
    }
    let t = t.as_str();
    let top_level = t.starts_with('/') && !t[1..].contains('/');
    let home = matches!(t, "~" | "$HOME")
        || (t.starts_with('~') && !t.contains('/'))
        || (t.starts_with("${HOME") && t.ends_with('}') && !t.contains('/') || t.starts_with("${HOME:-/}"));
    let parent = t == ".." || t.ends_with("/..") || t == "*" && raw.starts_with('/');
    (t.is_empty() || t == "/" || t == "/*" || top_level || home || parent || t.starts_with("/*"))
        .then(|| raw.to_owned())
}

/// `find … -delete` judged against the workspace (`places.1`) from where it starts (`places.0`).
fn find_delete(
    args: &[Arg],
    places: (Option<&Path>, Option<&Path>),
    here: Option<&Path>,
    cd_seen: bool,
) -> Option<String> {
    let (cwd, workspace) = places;
    // `-delete`, or a clause that removes what is found (`-exec rm {} +`).
    let removes = args.windows(2).any(|w| {
        w[0].get()
            .is_some_and(|v| matches!(v, "-exec" | "-execdir" | "-ok" | "-okdir"))
            && w[1]
                .get()
                .is_some_and(|p| matches!(basename(p), "rm" | "unlink" | "rmdir" | "shred"))
    });
    if !removes && !args.iter().any(|a| a.is("-delete")) {
        return None;
    }
    // `-H`, `-L`, `-P`, `-D OPTS` and `-O<level>` come before the starting points.
    let mut first = 0;
    while let Some(v) = args.get(first).and_then(Arg::get) {
        match v {
            "-H" | "-L" | "-P" => first += 1,
            "-D" => first += 2,
            "--" => {
                first += 1;
                break;
            }
            _ if v.starts_with("-O") || (v.starts_with("-D") && v.len() > 2) => first += 1,
            _ => break,
        }
    }
    let starts: Vec<&Arg> = args[first.min(args.len())..]
        .iter()
        .take_while(|a| {
            a.is_dynamic()
                || a.get()
                    .is_some_and(|v| !v.starts_with('-') && v != "(" && v != "!")
        })
        .collect();
    let outside = |a: &Arg| -> bool {
        let Some(v) = a.get() else { return true };
        let p = Path::new(v);
        let base = if cd_seen { here } else { cwd };
        match (cwd, base) {
            (_, None) if cd_seen && !p.is_absolute() => true,
            (Some(cwd), Some(base)) => {
                let abs: PathBuf = lexical_normalize(&base.join(p));
                let home = std::env::var_os("HOME").map(PathBuf::from);
                if abs.components().count() <= 2 || home.as_deref() == Some(abs.as_path()) {
                    return true;
                }
                !abs.starts_with(lexical_normalize(workspace.unwrap_or(cwd)))
            }
            _ => p.is_absolute() || v.split('/').any(|c| c == ".."),
        }
    };
    let dot = Arg::literal(".");
    let starts = if starts.is_empty() { vec![&dot] } else { starts };
    let how = if removes {
        "removing what it finds"
    } else {
        "-delete"
    };
    starts
        .into_iter()
        .find(|a| outside(a))
        .map(|a| format!("`find {} {how}` deletes outside the workspace", a.raw))
}

fn kill(args: &[Arg]) -> Option<String> {
    let mut i = 0;
    match args.first().and_then(Arg::get) {
        Some("-l" | "-L" | "--list" | "--table") => return None,
        Some("-s" | "-n" | "--signal") => i = 2,
        Some(v) if v.starts_with('-') && v != "--" => i = 1,
        _ => {}
    }
    if args.get(i).is_some_and(|a| a.is("--")) {
        i += 1;
    }
    args.get(i..)?.iter().find_map(|a| {
        let raw = a.raw.trim_matches(['"', '\'']);
        let hit = match a.get() {
            Some(v) => {
                v == "0" || v == "-1" || (v.starts_with('-') && v[1..].bytes().all(|b| b.is_ascii_digit()))
            }
            None => {
                // `$$` is the command's own shell, behind a guard process: not the engine.
                raw.contains("PPID")
                    || raw.to_ascii_lowercase().contains(ENGINE)
                    || crate::engine_signal::lookup_finds_engine(raw)
            }
        };
        hit.then(|| format!("`kill {}` would stop the engine itself", a.raw))
    })
}

/// Whether writing `path` writes a disk: a block device by name (`/dev/sda`, `/dev/nvme0n1`,
/// `/dev/mapper/…`, `/dev/block/8:0`, in any spelling: `/dev//sda`, `/dev/./sda`,
/// `/proc/self/root/dev/sda`) or, for a path in `/dev`, by what it is.
fn is_device(path: &str) -> bool {
    if !path.contains("dev") {
        return false;
    }
    let normal = system_path(path);
    let Ok(dev) = normal.strip_prefix("/dev") else {
        return false;
    };
    let dev = dev.to_string_lossy();
    let named = [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "md", "dm-", "loop", "mapper/", "root", "block/",
    ]
    .iter()
    .any(|p| dev.starts_with(p));
    named
        || std::fs::metadata(&normal)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
}

/// A redirect that writes to a block device.
pub(crate) fn device_write(redirects: &[Redirect], src: &str) -> Option<String> {
    redirects.iter().find_map(|r| {
        let t = r.target.static_value()?;
        (r.op.may_write() && is_device(&t))
            .then(|| format!("`{}` writes to a disk device", r.span.slice(src)))
    })
}

/// Whether a redirect gives a command's stdin what a download prints: `<<< "$(curl …)"`, `<
/// <(wget …)`, a here-document expanding `$(curl …)`.
pub(crate) fn stdin_downloads(r: &Redirect, src: &str) -> bool {
    let text = match r.op {
        RedirectOp::Input | RedirectOp::HereString => r.target.span.slice(src),
        RedirectOp::Heredoc | RedirectOp::HeredocStripTabs => match &r.heredoc {
            Some(h) if !h.quoted => h.body.as_str(),
            _ => return false,
        },
        _ => return false,
    };
    Arg::dynamic(text, false).runs_downloader()
}

/// Whether an interpreter reads the program it runs from stdin (`bash`, `sh -s`, `python3 -`,
/// `node` with no script).
pub(crate) fn reads_program_from_stdin(argv: &[Arg]) -> bool {
    let Some(name) = argv.first().and_then(Arg::get).map(basename) else {
        return false;
    };
    if !is_interpreter(name) {
        return false;
    }
    let args = &argv[1..];
    if crate::segment::is_shell(name) {
        let command_string = args.iter().any(|a| {
            a.get()
                .is_some_and(|v| v.starts_with('-') && !v.starts_with("--") && v.contains('c'))
        });
        let script = args.iter().any(|a| !a.option_like() && !a.is("-"));
        let stdin = args.iter().any(|a| a.is("-s") || a.is("-"));
        return !command_string && (stdin || !script);
    }
    args.iter().all(Arg::option_like) || args.iter().any(|a| a.is("-"))
}

/// Mark a later pipeline stage that is an interpreter fed by an earlier downloader stage.
pub(crate) fn pipe_to_interpreter(out: &mut [Segment], stage_starts: &[usize]) {
    let name_at = |seg: &Segment| match &seg.kind {
        SegmentKind::Run(inv) => inv
            .argv
            .first()
            .and_then(Arg::get)
            .map(|n| basename(n).to_owned()),
        _ => None,
    };
    let mut downloaded = false;
    for (k, &start) in stage_starts.iter().enumerate() {
        let end = stage_starts.get(k + 1).copied().unwrap_or(out.len());
        let mut stage_downloads = false;
        for seg in &mut out[start..end] {
            let Some(name) = name_at(seg) else { continue };
            if downloaded && is_interpreter(&name) {
                seg.danger
                    .get_or_insert_with(|| format!("pipes a download into `{name}`"));
            }
            if DOWNLOADERS.contains(&name.as_str()) {
                stage_downloads = true;
            }
        }
        downloaded |= stage_downloads;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    fn dangerous(s: &str) -> bool {
        check(
            &args(s),
            (Some(Path::new("/work/ws")), None),
            Some(Path::new("/work/ws")),
            false,
        )
        .is_some()
    }

    #[test]
    fn rm_of_root_and_home_in_any_spelling() {
        for c in [
            "rm -rf /",
            "rm -fr /",
            "rm -Rf /",
            "rm -r -f /",
            "rm --recursive --force /",
            "rm -rf /*",
            "rm -rf ~",
            "rm -rf ~/",
            "rm -rf $HOME",
            "rm -rf ..",
            "rm -rf /usr",
            "rm -r --force -- /",
            "rm --rec -f /etc/",
            "rm --no-preserve-root -rf /",
        ] {
            assert!(dangerous(c), "{c}");
        }
        for c in [
            "rm -rf build",
            "rm -f /tmp/x",
            "rm x",
            "rm -rf ./target",
            "rm -rf /tmp/x/y",
        ] {
            assert!(!dangerous(c), "{c}");
        }
    }

    #[test]
    fn find_delete_outside_the_workspace() {
        assert!(dangerous("find / -name x -delete"));
        assert!(dangerous("find .. -delete"));
        assert!(!dangerous("find . -name '*.o' -delete"));
        assert!(!dangerous("find -name x -delete"));
        assert!(!dangerous("find /work/ws/sub -delete"));
        assert!(check(&args("find . -delete"), (Some(Path::new("/w")), None), None, true).is_some());
        assert!(
            check(
                &args("find . -delete"),
                (Some(Path::new("/w")), None),
                Some(Path::new("/w/sub")),
                true
            )
            .is_none()
        );
        assert!(check(&args("rm -rf *"), (None, None), Some(Path::new("/")), false).is_some());
        assert!(
            check(
                &args("rm -rf *"),
                (None, None),
                Some(Path::new("/work/ws/build")),
                false
            )
            .is_none()
        );
        // Judged against the configured workspace, wherever the command starts.
        let from_usr = (Some(Path::new("/usr/share")), Some(Path::new("/work/ws")));
        assert!(
            check(
                &args("find . -delete"),
                from_usr,
                Some(Path::new("/usr/share")),
                false
            )
            .is_some()
        );
    }

    #[test]
    fn engine_killers_and_disks() {
        for c in [
            "kill 0",
            "kill -9 -1",
            "kill -- -1",
            "kill -s KILL 0",
            "pkill shellgate",
            "killall -9 shellgate",
            "pkill -u me",
            "mkfs.ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/sda",
        ] {
            assert!(dangerous(c), "{c}");
        }
        for c in [
            "kill 1234",
            "kill -1 1234",
            "kill -l",
            "pkill -f myserver",
            "dd if=a of=b",
            "pgrep shellgate",
        ] {
            assert!(!dangerous(c), "{c}");
        }
    }
}
