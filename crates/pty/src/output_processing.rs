//! The terminal's output post-processing (termios `OPOST`): whether the kernel rewrites what the
//! program writes (`ONLCR` turns every `\n` into `\r\n`), and turning that off.
//!
//! Post-processing runs the line discipline's per-byte output path for every write; without it the
//! kernel copies the program's writes through in blocks, which is several times faster for bulk
//! output, and the terminal's bytes are exactly the program's. Termios set on the master applies to
//! the terminal itself (the slave side), so the program starts with the setting in place.

use std::os::fd::AsFd;

use nix::sys::termios::{OutputFlags, SetArg, tcgetattr, tcsetattr};

/// Turn output post-processing off (`stty -opost`): the program's bytes reach the reader unchanged.
pub(crate) fn disable(fd: impl AsFd) -> nix::Result<()> {
    let mut attrs = tcgetattr(fd.as_fd())?;
    attrs.output_flags.remove(OutputFlags::OPOST);
    tcsetattr(fd.as_fd(), SetArg::TCSANOW, &attrs)
}

/// Whether the terminal now turns `\n` into `\r\n` (`opost` and `onlcr` both on). `None` when the
/// terminal cannot be asked (it is closed).
pub(crate) fn translates_newlines(fd: impl AsFd) -> Option<bool> {
    let flags = tcgetattr(fd.as_fd()).ok()?.output_flags;
    Some(flags.contains(OutputFlags::OPOST | OutputFlags::ONLCR))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::OpenOptionsExt;

    use super::*;

    #[test]
    fn disabling_on_the_master_reaches_the_terminal() {
        let pair = crate::process::open_pty(crate::size::TermSize::default()).expect("a terminal");
        let tty = pair.master.tty_name().expect("a terminal name");
        let slave = std::fs::OpenOptions::new()
            .custom_flags(libc::O_NOCTTY)
            .read(true)
            .write(true)
            .open(&tty)
            .expect("open the terminal");
        assert_eq!(
            translates_newlines(&slave),
            Some(true),
            "a fresh terminal is cooked"
        );
        let master = crate::process::own_master_fd(&*pair.master).expect("master descriptor");
        disable(&master).expect("tcsetattr");
        assert_eq!(translates_newlines(&slave), Some(false));
        assert_eq!(translates_newlines(&master), Some(false));
        let flags = tcgetattr(&slave).expect("tcgetattr").output_flags;
        assert!(!flags.contains(OutputFlags::OPOST), "{flags:?}");
        assert!(
            flags.contains(OutputFlags::ONLCR),
            "only OPOST changes: {flags:?}"
        );
    }
}
