//! The input side of a terminal (or a pipe), read from the kernel: bytes written to the program but
//! not read by it yet, and what the line discipline will make of bytes about to be written — whether
//! they reach the program's `read` at all, and how much of them the terminal echoes by itself.
//!
//! These let a caller that writes input wait for the program's answer rather than for the first
//! output after the write (which is often only the echo of the input).

use std::fs::OpenOptions;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::sys::termios::{InputFlags, LocalFlags, OutputFlags, SpecialCharacterIndices, Termios, tcgetattr};

nix::ioctl_read_bad!(fionread, libc::FIONREAD, libc::c_int);

/// Bytes waiting to be read from `fd`: a pipe (either end), or a terminal's slave side (in canonical
/// mode only complete lines count). `FIONREAD`.
pub fn unread_bytes(fd: BorrowedFd<'_>) -> std::io::Result<usize> {
    let mut n: libc::c_int = 0;
    #[allow(unsafe_code)]
    // SAFETY: FIONREAD stores one `int` through the pointer, which points to `n`, alive for the call.
    unsafe { fionread(fd.as_raw_fd(), &raw mut n) }.map_err(std::io::Error::from)?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Unread input of terminal `tty` (`/dev/pts/N`): its slave side is opened for the question only,
/// without becoming our controlling terminal, and closed again at once (a slave descriptor left open
/// here would hide the program's exit from the reader).
pub(crate) fn terminal_unread(tty: &Path) -> Option<usize> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(tty)
        .ok()?;
    unread_bytes(file.as_fd()).ok()
}

/// What the terminal will do with bytes written as input, from its modes at the time of the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputForecast {
    /// Whether the bytes give the program something to read: in canonical mode only a line end or
    /// end-of-file completes a read; signal characters (`^C`, `^\`, `^Z`) are never read.
    pub reaches_program: bool,
    /// The bytes the terminal itself echoes for them (0 with echo off; a lower bound for line-editing
    /// characters such as erase).
    pub echoed: usize,
}

/// The forecast for `bytes` under the terminal modes of `fd` (a terminal's master or slave side).
pub(crate) fn forecast(fd: impl AsFd, bytes: &[u8]) -> Option<InputForecast> {
    tcgetattr(fd.as_fd()).ok().map(|t| forecast_with(&t, bytes))
}

fn forecast_with(termios: &Termios, bytes: &[u8]) -> InputForecast {
    let cc = |i: SpecialCharacterIndices| termios.control_chars[i as usize];
    let local = termios.local_flags;
    let signals: Vec<u8> = if local.contains(LocalFlags::ISIG) {
        [
            SpecialCharacterIndices::VINTR,
            SpecialCharacterIndices::VQUIT,
            SpecialCharacterIndices::VSUSP,
        ]
        .into_iter()
        .map(cc)
        .filter(|&c| c != 0)
        .collect()
    } else {
        Vec::new()
    };
    let canonical = local.contains(LocalFlags::ICANON);
    let eof = cc(SpecialCharacterIndices::VEOF);
    let cr_ends_line =
        termios.input_flags.contains(InputFlags::ICRNL) && !termios.input_flags.contains(InputFlags::IGNCR);
    let line_ends = |b: u8| {
        b == b'\n'
            || (b == b'\r' && cr_ends_line)
            || b == eof
            || [SpecialCharacterIndices::VEOL, SpecialCharacterIndices::VEOL2]
                .into_iter()
                .any(|i| cc(i) != 0 && cc(i) == b)
    };
    let readable = |b: u8| !signals.contains(&b);
    let reaches_program = if canonical {
        bytes.iter().any(|&b| readable(b) && line_ends(b))
    } else {
        bytes.iter().any(|&b| readable(b))
    };
    // End-of-file in canonical mode is not echoed; a line end is echoed as `\r\n` when output
    // post-processing adds the `\r`; a control character as `^X` with `echoctl`; every other byte
    // as at least itself.
    let crlf = termios
        .output_flags
        .contains(OutputFlags::OPOST | OutputFlags::ONLCR);
    let caret = local.contains(LocalFlags::ECHOCTL);
    let width = |b: u8| match b {
        b'\n' => 1 + usize::from(crlf),
        b'\r' if cr_ends_line => 1 + usize::from(crlf),
        b'\t' => 1,
        0..0x20 if caret => 2,
        _ => 1,
    };
    let echoed = if local.contains(LocalFlags::ECHO) {
        bytes
            .iter()
            .filter(|&&b| readable(b) && !(canonical && b == eof))
            .map(|&b| width(b))
            .sum()
    } else {
        0
    };
    InputForecast {
        reaches_program,
        echoed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal() -> (portable_pty::PtyPair, std::fs::File) {
        let pair = crate::process::open_pty(crate::size::TermSize::default()).expect("a terminal");
        let tty = pair.master.tty_name().expect("a terminal name");
        let slave = OpenOptions::new()
            .custom_flags(libc::O_NOCTTY)
            .read(true)
            .write(true)
            .open(tty)
            .expect("open the slave");
        (pair, slave)
    }

    #[test]
    fn canonical_input_reaches_the_program_only_with_a_line_end() {
        let (_pair, slave) = terminal();
        let cooked = tcgetattr(slave.as_fd()).unwrap();
        assert!(!forecast_with(&cooked, b"abc").reaches_program);
        assert!(forecast_with(&cooked, b"abc\r").reaches_program);
        assert!(forecast_with(&cooked, b"abc\n").reaches_program);
        assert!(!forecast_with(&cooked, b"\x03").reaches_program);
        let crlf = cooked
            .output_flags
            .contains(OutputFlags::OPOST | OutputFlags::ONLCR);
        assert_eq!(forecast_with(&cooked, b"abc\n").echoed, 4 + usize::from(crlf));
        let mut raw = cooked.clone();
        nix::sys::termios::cfmakeraw(&mut raw);
        assert!(forecast_with(&raw, b"a").reaches_program);
        assert_eq!(forecast_with(&raw, b"abc").echoed, 0);
    }

    #[test]
    fn unread_input_counts_complete_lines_until_read() {
        use std::io::{Read, Write};
        let (pair, mut slave) = terminal();
        let tty = pair.master.tty_name().unwrap();
        let mut writer = pair.master.take_writer().unwrap();
        writer.write_all(b"partial").unwrap();
        writer.write_all(b" line\n").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while terminal_unread(&tty) != Some(13) {
            assert!(
                std::time::Instant::now() < deadline,
                "{:?}",
                terminal_unread(&tty)
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut buf = [0u8; 64];
        let n = slave.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"partial line\n");
        assert_eq!(terminal_unread(&tty), Some(0));
    }
}
