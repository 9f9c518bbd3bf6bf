//! A byte-at-a-time recogniser for terminal escape sequences (ECMA-48 / VT500 shapes), so that every
//! sequence is removed completely even when a chunk boundary falls inside it.
//!
//! The parser holds O(1) state. A newline always ends whatever sequence is open and is then handled as
//! text: that keeps the sanitized stream's lines aligned one-to-one with the raw stream's lines (line N
//! of the model text is line N of the artifact), and an unterminated `ESC ]` can never swallow the rest
//! of the output.

/// What kind of string a control-string introducer opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StringKind {
    /// OSC (`ESC ]`): ends at BEL or ST.
    Osc,
    /// DCS, SOS, PM, APC (`ESC P`, `ESC X`, `ESC ^`, `ESC _`): end at ST only.
    Other,
}

/// Where in a sequence the parser is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum EscState {
    /// Not inside a sequence.
    #[default]
    Ground,
    /// After `ESC`.
    Esc,
    /// After `ESC` and one or more intermediate bytes (`ESC ( B`).
    EscIntermediate,
    /// Inside a CSI sequence; remembers what is needed to apply erase-in-line.
    Csi {
        /// The first numeric parameter (saturating).
        param: u16,
        /// A second parameter, a private marker or an intermediate was seen: not a plain `CSI n K`.
        unusual: bool,
    },
    /// Inside the payload of a control string.
    Str(StringKind),
    /// `ESC` seen inside a control string: `\` ends the string, anything else starts a new sequence.
    StrEsc(StringKind),
    /// After SS2/SS3 (`ESC N`, `ESC O`): one more character belongs to the sequence.
    SingleShift,
}

/// An edit of the current line that a CSI sequence asks for (the parameter defaults applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEdit {
    /// `CSI n K`: erase in line, mode `n` (0 to the end, 1 to the start, 2 all).
    Erase(u16),
    /// `CSI n G`: the cursor to column `n` (1-based).
    Column(u16),
    /// `CSI n C`: the cursor `n` columns to the right.
    Forward(u16),
    /// `CSI n D`: the cursor `n` columns to the left (not past the start).
    Back(u16),
}

/// The parser's verdict on one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The byte belongs to a sequence that is still open.
    Continue,
    /// The byte completed a sequence.
    Done,
    /// The byte completed a sequence that edits the current line: erase in line, or a cursor move
    /// along it.
    Edit(LineEdit),
    /// The sequence was abandoned; the byte is not part of it and must be handled as ground text.
    Reprocess,
}

const BEL: u8 = 0x07;
const ESC: u8 = 0x1b;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const DEL: u8 = 0x7f;

impl EscState {
    /// Whether a sequence is open.
    pub(crate) fn in_sequence(self) -> bool {
        self != EscState::Ground
    }

    /// Whether the parser is inside a control-string payload (which may be long and is skipped fast).
    pub(crate) fn in_string(self) -> bool {
        matches!(self, EscState::Str(_))
    }

    /// Feed one byte of an open sequence.
    pub(crate) fn step(&mut self, b: u8) -> Step {
        if b == b'\n' {
            *self = EscState::Ground;
            return Step::Reprocess;
        }
        if b == CAN || b == SUB {
            *self = EscState::Ground;
            return Step::Done;
        }
        match *self {
            EscState::Ground => Step::Reprocess,
            EscState::Esc => self.after_esc(b),
            EscState::EscIntermediate => match b {
                0x20..=0x2f => Step::Continue,
                0x30..=0x7e => self.done(),
                ESC => {
                    *self = EscState::Esc;
                    Step::Continue
                }
                0x80..=0xff => self.abandon(),
                _ => Step::Continue,
            },
            EscState::Csi { param, unusual } => self.in_csi(b, param, unusual),
            EscState::Str(kind) => match b {
                BEL if kind == StringKind::Osc => self.done(),
                ESC => {
                    *self = EscState::StrEsc(kind);
                    Step::Continue
                }
                _ => Step::Continue,
            },
            EscState::StrEsc(_) => {
                if b == b'\\' {
                    self.done()
                } else {
                    // ESC inside a string terminates it and starts a new sequence.
                    *self = EscState::Esc;
                    self.after_esc(b)
                }
            }
            EscState::SingleShift => {
                if (0x20..=0x7e).contains(&b) {
                    self.done()
                } else {
                    self.abandon()
                }
            }
        }
    }

    fn after_esc(&mut self, b: u8) -> Step {
        *self = match b {
            b'[' => EscState::Csi {
                param: 0,
                unusual: false,
            },
            b']' => EscState::Str(StringKind::Osc),
            b'P' | b'X' | b'^' | b'_' => EscState::Str(StringKind::Other),
            b'N' | b'O' => EscState::SingleShift,
            0x20..=0x2f => EscState::EscIntermediate,
            0x30..=0x7e => return self.done(),
            0x80..=0xff => return self.abandon(),
            // ESC again restarts; other C0 controls and DEL are ignored inside a sequence.
            _ => EscState::Esc,
        };
        Step::Continue
    }

    fn in_csi(&mut self, b: u8, param: u16, unusual: bool) -> Step {
        match b {
            b'0'..=b'9' => {
                if !unusual {
                    let digit = u16::from(b - b'0');
                    *self = EscState::Csi {
                        param: param.saturating_mul(10).saturating_add(digit),
                        unusual,
                    };
                }
                Step::Continue
            }
            // A second parameter, sub-parameters, private markers and intermediates.
            b':' | b';' | b'<'..=b'?' | 0x20..=0x2f => {
                *self = EscState::Csi { param, unusual: true };
                Step::Continue
            }
            0x40..=0x7e => {
                *self = EscState::Ground;
                match (b, unusual) {
                    (b'K', false) => Step::Edit(LineEdit::Erase(param)),
                    // CHA (`G`), HPA (`` ` ``): to column n (1-based); CUF/CUB: n columns right or left.
                    (b'G' | b'`', false) => Step::Edit(LineEdit::Column(param.max(1))),
                    (b'C' | b'a', false) => Step::Edit(LineEdit::Forward(param.max(1))),
                    (b'D', false) => Step::Edit(LineEdit::Back(param.max(1))),
                    _ => Step::Done,
                }
            }
            ESC => {
                *self = EscState::Esc;
                Step::Continue
            }
            0x80..=0xff => self.abandon(),
            // Other C0 controls and DEL inside CSI are ignored.
            _ => {
                debug_assert!(b < 0x20 || b == DEL);
                Step::Continue
            }
        }
    }

    fn done(&mut self) -> Step {
        *self = EscState::Ground;
        Step::Done
    }

    fn abandon(&mut self) -> Step {
        *self = EscState::Ground;
        Step::Reprocess
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(bytes: &[u8]) -> (EscState, Vec<Step>) {
        let mut state = EscState::Esc;
        let steps = bytes.iter().map(|&b| state.step(b)).collect();
        (state, steps)
    }

    #[test]
    fn csi_with_parameters_ends_at_final_byte() {
        let (state, steps) = run(b"[38;5;196m");
        assert_eq!(state, EscState::Ground);
        assert_eq!(*steps.last().unwrap(), Step::Done);
        assert!(steps[..steps.len() - 1].iter().all(|s| *s == Step::Continue));
    }

    #[test]
    fn erase_in_line_is_reported_with_its_mode() {
        assert_eq!(run(b"[K").1.last(), Some(&Step::Edit(LineEdit::Erase(0))));
        assert_eq!(run(b"[2K").1.last(), Some(&Step::Edit(LineEdit::Erase(2))));
        assert_eq!(run(b"[G").1.last(), Some(&Step::Edit(LineEdit::Column(1))));
        assert_eq!(run(b"[12G").1.last(), Some(&Step::Edit(LineEdit::Column(12))));
        assert_eq!(run(b"[3C").1.last(), Some(&Step::Edit(LineEdit::Forward(3))));
        assert_eq!(run(b"[D").1.last(), Some(&Step::Edit(LineEdit::Back(1))));
        assert_eq!(run(b"[1;2D").1.last(), Some(&Step::Done));
        assert_eq!(run(b"[?2K").1.last(), Some(&Step::Done));
    }

    #[test]
    fn osc_ends_at_bel_or_st() {
        assert_eq!(run(b"]0;title\x07").0, EscState::Ground);
        let (state, steps) = run(b"]8;;http://x\x1b\\");
        assert_eq!(state, EscState::Ground);
        assert_eq!(*steps.last().unwrap(), Step::Done);
    }

    #[test]
    fn dcs_ignores_bel_and_ends_at_st() {
        let (state, _) = run(b"Pq#0;2;0;0;0\x07more");
        assert_eq!(state, EscState::Str(StringKind::Other));
        let (state, _) = run(b"Pq#0\x1b\\");
        assert_eq!(state, EscState::Ground);
    }

    #[test]
    fn newline_abandons_any_sequence() {
        let (state, steps) = run(b"]0;unterminated\n");
        assert_eq!(state, EscState::Ground);
        assert_eq!(*steps.last().unwrap(), Step::Reprocess);
    }

    #[test]
    fn single_shift_takes_one_character() {
        let (state, steps) = run(b"OP");
        assert_eq!(state, EscState::Ground);
        assert_eq!(steps, vec![Step::Continue, Step::Done]);
    }

    #[test]
    fn non_ascii_after_esc_is_text() {
        let (state, steps) = run(&[0xc3]);
        assert_eq!(state, EscState::Ground);
        assert_eq!(steps, vec![Step::Reprocess]);
    }
}
