//! [`Sanitizer`]: turns a raw terminal byte stream into clean model text, incrementally.
//!
//! Removes escape sequences completely (CSI, OSC ended by BEL or ST, DCS/SOS/PM/APC, SS2/SS3, other
//! `ESC` sequences), including sequences split across chunks; collapses `\r` overwrites and applies
//! backspace and erase-in-line the way a terminal would, so a progress bar ends as its final frame;
//! drops other C0 controls, DEL and C1 controls (keeping `\t` and `\n`); decodes UTF-8 incrementally
//! (U+FFFD for invalid bytes, counted); and caps lines at `max_column` bytes with a marker.
//!
//! Every raw `\n` yields exactly one clean `\n` and nothing else does, so line N of the clean text is
//! line N of the raw stream.

use memchr::{memchr, memchr3, memrchr};

use crate::escape::{EscState, LineEdit, Step};
use crate::line::LineEditor;
use crate::scan::{ChunkHints, count_newlines, first_long_line, is_utf8, text_run};
use crate::utf8::{Resumed, Utf8Carry};
use crate::{Flow, Sink};

/// Default line cap of the model text, in bytes.
pub const DEFAULT_MAX_COLUMN: usize = 4000;

/// The largest line cap honoured (also used when `max_column` is 0), so a line buffer stays bounded.
pub const MAX_COLUMN_LIMIT: usize = 1 << 20;

const ESC: u8 = 0x1b;
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// Receives the sanitizer's output.
pub trait CleanOutput {
    /// Accept clean text (always valid UTF-8). When `text` ends with `\n`, `raw_end` is the offset in the
    /// raw stream just after the corresponding raw newline; every newline inside `text` has the same
    /// distance between its raw and clean offsets.
    fn emit(&mut self, text: &[u8], raw_end: u64);
}

impl CleanOutput for Vec<u8> {
    fn emit(&mut self, text: &[u8], _raw_end: u64) {
        self.extend_from_slice(text);
    }
}

/// What the sanitizer removed or changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SanitizeStats {
    /// Invalid UTF-8 bytes replaced with U+FFFD.
    pub replaced_bytes: u64,
    /// Control characters dropped (C0 other than `\t`, `\n`, `\r`, BS, ESC; DEL; C1).
    pub dropped_controls: u64,
    /// Complete escape sequences removed.
    pub escape_sequences: u64,
    /// Finished lines that were cut at the column cap.
    pub capped_lines: u64,
    /// Bytes of text cut by the column cap on finished lines.
    pub capped_bytes: u64,
    /// Invisible or reordering characters (bidi controls, zero-width characters, Unicode tags…)
    /// shown as `<U+XXXX>` instead (see `is_hidden`).
    pub made_visible: u64,
}

/// Whether `c` is a character that hides or reorders text without showing itself: bidi controls
/// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), zero-width characters (U+200B, U+200C,
/// U+FEFF, and U+200D unless it joins an emoji sequence after `previous`), U+2060–U+2064, the soft
/// hyphen U+00AD and the Unicode tag characters U+E0000–U+E007F (invisible to people, read by
/// models: a known way to hide instructions).
pub fn is_hidden(c: char, previous: Option<char>) -> bool {
    match c {
        '\u{200D}' => !previous.is_some_and(is_emoji_part),
        '\u{00AD}'
        | '\u{061C}'
        | '\u{200B}'
        | '\u{200C}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{FEFF}'
        | '\u{E0000}'..='\u{E007F}' => true,
        _ => false,
    }
}

/// Characters after which a zero-width joiner continues an emoji sequence.
fn is_emoji_part(c: char) -> bool {
    matches!(c, '\u{2600}'..='\u{27BF}' | '\u{1F000}'..='\u{1FAFF}' | '\u{FE0F}')
}

/// A streaming sanitizer; see the module docs. Memory is O(`max_column`).
#[derive(Debug, Clone)]
pub struct Sanitizer {
    esc: EscState,
    line: LineEditor,
    carry: Utf8Carry,
    cap: usize,
    raw_pos: u64,
    newlines: u64,
    stats: SanitizeStats,
    scratch: Vec<u8>,
}

impl Default for Sanitizer {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_COLUMN)
    }
}

impl Sanitizer {
    /// A sanitizer capping lines at `max_column` bytes (0 or anything above [`MAX_COLUMN_LIMIT`] means
    /// [`MAX_COLUMN_LIMIT`]).
    pub fn new(max_column: usize) -> Self {
        let cap = if max_column == 0 {
            MAX_COLUMN_LIMIT
        } else {
            max_column.min(MAX_COLUMN_LIMIT)
        };
        Self {
            esc: EscState::Ground,
            line: LineEditor::new(cap),
            carry: Utf8Carry::default(),
            cap,
            raw_pos: 0,
            newlines: 0,
            stats: SanitizeStats::default(),
            scratch: Vec::new(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> SanitizeStats {
        self.stats
    }

    /// Whether any line, including the one still open, was cut at the column cap.
    pub fn any_line_capped(&self) -> bool {
        self.stats.capped_lines > 0 || self.line.is_capped()
    }

    /// Raw bytes consumed so far.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_pos
    }

    /// Newlines seen so far: the same number in the raw stream and in the clean output.
    pub fn newlines(&self) -> u64 {
        self.newlines
    }

    /// The line cap in bytes.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Whether the sanitizer is in the state every raw newline leaves it in: no open sequence, no
    /// carried character, nothing on the current line. From here on, its output depends only on the
    /// bytes that follow.
    pub(crate) fn at_line_start(&self) -> bool {
        !self.esc.in_sequence() && self.carry.is_empty() && self.line.is_fresh()
    }

    /// Account for `raw` bytes of complete lines (ending with the `newlines`-th newline among them)
    /// whose clean text is not needed, without producing it. Only valid [`Self::at_line_start`], for
    /// bytes that [`skippable`] accepts: those replace nothing and cut no line, so every reported
    /// figure stays exact.
    pub(crate) fn skip_lines(&mut self, raw: u64, newlines: u64) {
        debug_assert!(self.at_line_start());
        self.raw_pos += raw;
        self.newlines += newlines;
    }

    /// Sanitize the next raw chunk; complete lines go to `out` as soon as they end.
    pub fn push<O: CleanOutput + ?Sized>(&mut self, input: &[u8], out: &mut O) {
        let base = self.raw_pos;
        // Every raw newline becomes exactly one clean newline within this call.
        self.newlines += count_newlines(input);
        let hints = ChunkHints::of(input);
        let mut i = 0;
        if !self.carry.is_empty() && !input.is_empty() {
            i = self.resume_carry(input);
        }
        while i < input.len() {
            if self.esc.in_sequence() {
                i = self.escape(input, i);
                continue;
            }
            let run = text_run(&input[i..], hints);
            if run.len > 0 {
                let (end, high) = (i + run.len, i + run.first_high);
                if high > i {
                    self.text(&input[i..high], base + i as u64, out);
                }
                if high < end {
                    self.utf8_text(input, high, end, base, out);
                }
                i = end;
                continue;
            }
            match input[i] {
                ESC => self.esc = EscState::Esc,
                b'\r' => self.line.carriage_return(),
                0x08 => self.line.backspace(),
                _ => self.stats.dropped_controls += 1,
            }
            i += 1;
        }
        self.raw_pos += input.len() as u64;
    }

    /// The stream has ended: an incomplete character becomes U+FFFD, an open sequence is dropped, and
    /// the last line (without a newline) is emitted.
    pub fn finish<O: CleanOutput + ?Sized>(&mut self, out: &mut O) {
        if !self.carry.is_empty() {
            let n = self.carry.len();
            self.carry.clear();
            self.replace(n as u64);
        }
        self.esc = EscState::Ground;
        if !self.line.is_fresh() {
            self.end_line(false, self.raw_pos, out);
        }
    }

    fn resume_carry(&mut self, input: &[u8]) -> usize {
        match self.carry.resume(input) {
            Resumed::Char(bytes, len, used) => {
                let ch = &bytes[..len];
                if is_c1(ch) {
                    self.stats.dropped_controls += 1;
                } else {
                    self.line.put(ch);
                }
                used
            }
            Resumed::Invalid { invalid, used } => {
                self.replace(invalid as u64);
                used
            }
            Resumed::Pending => input.len(),
        }
    }

    /// Feed bytes to the open escape sequence until it ends (or the input does).
    fn escape(&mut self, input: &[u8], mut i: usize) -> usize {
        while i < input.len() {
            if self.esc.in_string() {
                // Skip a control string's payload in one scan.
                match memchr3(0x07, ESC, b'\n', &input[i..]) {
                    None => return input.len(),
                    Some(k) => i += k,
                }
            }
            match self.esc.step(input[i]) {
                Step::Continue => i += 1,
                Step::Done => {
                    self.stats.escape_sequences += 1;
                    return i + 1;
                }
                Step::Edit(edit) => {
                    self.stats.escape_sequences += 1;
                    match edit {
                        LineEdit::Erase(mode) => self.line.erase(mode),
                        LineEdit::Column(n) => self.line.move_to_column(usize::from(n) - 1),
                        LineEdit::Forward(n) => self.line.move_to_column(self.line.column() + usize::from(n)),
                        LineEdit::Back(n) => {
                            self.line
                                .move_to_column(self.line.column().saturating_sub(usize::from(n)));
                        }
                    }
                    return i + 1;
                }
                Step::Reprocess => return i,
            }
        }
        i
    }

    /// A run without control bytes that contains non-ASCII bytes: validate and decode it.
    fn utf8_text<O: CleanOutput + ?Sized>(
        &mut self,
        input: &[u8],
        start: usize,
        end: usize,
        base: u64,
        out: &mut O,
    ) {
        let mut p = start;
        while p < end {
            match std::str::from_utf8(&input[p..end]) {
                Ok(_) => {
                    self.valid_text(&input[p..end], base + p as u64, out);
                    p = end;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    if valid > 0 {
                        self.valid_text(&input[p..p + valid], base + p as u64, out);
                    }
                    p += valid;
                    match e.error_len() {
                        Some(bad) => {
                            self.replace(bad as u64);
                            p += bad;
                        }
                        None if end == input.len() => {
                            // A character split by the chunk boundary: finish it with the next chunk.
                            self.carry.set(&input[p..end]);
                            p = end;
                        }
                        None => {
                            // Cut short by a control byte: it can never complete.
                            self.replace((end - p) as u64);
                            p = end;
                        }
                    }
                }
            }
        }
    }

    /// Valid UTF-8 without C0 controls: drop C1 controls (U+0080..U+009F), show invisible and
    /// reordering characters as `<U+XXXX>`, pass the rest on.
    fn valid_text<O: CleanOutput + ?Sized>(&mut self, text: &[u8], raw: u64, out: &mut O) {
        // Only these lead bytes start a character handled here; most non-ASCII text has none.
        if memchr3(0xc2, 0xe2, 0xef, text).is_none() && memchr::memchr2(0xd8, 0xf3, text).is_none() {
            self.text(text, raw, out);
            return;
        }
        let as_str = std::str::from_utf8(text).unwrap_or_default();
        let mut start = 0;
        // An emoji sequence is one run of non-ASCII text: what came before this run does not count.
        let mut previous = None;
        for (pos, c) in as_str.char_indices() {
            let width = c.len_utf8();
            if ('\u{80}'..='\u{9f}').contains(&c) {
                self.text(&text[start..pos], raw + start as u64, out);
                self.stats.dropped_controls += 1;
                start = pos + width;
            } else if is_hidden(c, previous) {
                self.text(&text[start..pos], raw + start as u64, out);
                let shown = format!("<U+{:04X}>", u32::from(c));
                self.text(shown.as_bytes(), raw + pos as u64, out);
                self.stats.made_visible += 1;
                start = pos + width;
            }
            previous = Some(c);
        }
        self.text(&text[start..], raw + start as u64, out);
    }

    /// Clean text (valid UTF-8; only `\t` and `\n` among controls) starting at raw offset `raw`.
    fn text<O: CleanOutput + ?Sized>(&mut self, mut s: &[u8], mut raw: u64, out: &mut O) {
        if !self.line.is_fresh() {
            let Some(k) = memchr(b'\n', s) else {
                self.line.put(s);
                return;
            };
            self.line.put(&s[..k]);
            self.end_line(true, raw + k as u64 + 1, out);
            s = &s[k + 1..];
            raw += k as u64 + 1;
        }
        // The line is fresh: complete lines within the cap go straight out, without buffering.
        while let Some(last) = memrchr(b'\n', s) {
            let body = &s[..=last];
            let Some(long) = first_long_line(body, self.cap) else {
                out.emit(body, raw + body.len() as u64);
                s = &s[last + 1..];
                break;
            };
            if long > 0 {
                out.emit(&s[..long], raw + long as u64);
            }
            let nl = long + memchr(b'\n', &s[long..]).unwrap_or(s.len() - long - 1);
            self.line.put(&s[long..nl]);
            self.end_line(true, raw + nl as u64 + 1, out);
            s = &s[nl + 1..];
            raw += nl as u64 + 1;
        }
        self.line.put(s);
    }

    fn end_line<O: CleanOutput + ?Sized>(&mut self, newline: bool, raw_end: u64, out: &mut O) {
        let dropped = self.line.dropped();
        if self.line.take(newline, &mut self.scratch) {
            self.stats.capped_lines += 1;
            self.stats.capped_bytes += dropped;
        }
        out.emit(&self.scratch, raw_end);
    }

    fn replace(&mut self, bad: u64) {
        self.stats.replaced_bytes += bad;
        self.line.put(REPLACEMENT);
    }
}

/// Whether complete lines `lines` (ending with `\n`) can be passed over with
/// [`Sanitizer::skip_lines`]: they are valid UTF-8 and no line is longer than `cap` bytes.
///
/// Why that is enough: replacement characters come only from invalid UTF-8 in text, and escape
/// sequences consume only ASCII bytes or whole characters (a non-ASCII byte abandons a sequence, and
/// control strings end at ASCII bytes), so valid input yields no U+FFFD. Without U+FFFD, a line's
/// clean text is never longer than its raw bytes (editing replaces characters or blanks them with
/// at most as many bytes), so a raw line within the cap is never cut.
pub(crate) fn skippable(lines: &[u8], cap: usize) -> bool {
    lines.last() == Some(&b'\n') && first_long_line(lines, cap).is_none() && is_utf8(lines)
}

/// The longest prefix of complete lines `lines` (ending with `\n`) that is [`skippable`]: it ends
/// just before the first line that is invalid UTF-8 or longer than `cap`.
pub(crate) fn skippable_prefix(lines: &[u8], cap: usize) -> usize {
    if lines.last() != Some(&b'\n') {
        return 0;
    }
    let fits = first_long_line(lines, cap).unwrap_or(lines.len());
    if is_utf8(&lines[..fits]) {
        return fits;
    }
    let valid = std::str::from_utf8(&lines[..fits]).map_or_else(|e| e.valid_up_to(), str::len);
    memrchr(b'\n', &lines[..valid]).map_or(0, |k| k + 1)
}

fn is_c1(ch: &[u8]) -> bool {
    ch.len() == 2 && ch[0] == 0xc2 && (0x80..=0x9f).contains(&ch[1])
}

/// Sanitize a complete byte string with the default line cap.
pub fn sanitize(bytes: &[u8]) -> String {
    let mut sanitizer = Sanitizer::default();
    let mut out = Vec::with_capacity(bytes.len());
    sanitizer.push(bytes, &mut out);
    sanitizer.finish(&mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A [`Sink`] adapter: sanitizes the stream and forwards clean text to another sink.
///
/// Lines are forwarded when they end (a later `\r` could still rewrite an open line); call
/// [`Sink::finish`] to flush the last one.
#[derive(Debug, Clone)]
pub struct SanitizeSink<S> {
    sanitizer: Sanitizer,
    inner: S,
}

impl<S: Sink> SanitizeSink<S> {
    /// Sanitize into `inner` with the given line cap.
    pub fn new(inner: S, max_column: usize) -> Self {
        Self {
            sanitizer: Sanitizer::new(max_column),
            inner,
        }
    }

    /// The wrapped sink.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The sanitizer's counters.
    pub fn stats(&self) -> SanitizeStats {
        self.sanitizer.stats()
    }
}

struct Forward<'a, S> {
    sink: &'a mut S,
    flow: Flow,
}

impl<S: Sink> CleanOutput for Forward<'_, S> {
    fn emit(&mut self, text: &[u8], _raw_end: u64) {
        if self.sink.write(text).is_stop() {
            self.flow = Flow::Stop;
        }
    }
}

impl<S: Sink> Sink for SanitizeSink<S> {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        let mut forward = Forward {
            sink: &mut self.inner,
            flow: Flow::Continue,
        };
        self.sanitizer.push(chunk, &mut forward);
        forward.flow
    }

    fn finish(&mut self) {
        self.sanitizer.finish(&mut Forward {
            sink: &mut self.inner,
            flow: Flow::Continue,
        });
        self.inner.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skippable_prefix_stops_before_the_first_line_that_would_change_a_figure() {
        assert_eq!(skippable_prefix(b"ab\ncd\n", 10), 6);
        assert_eq!(
            skippable_prefix(b"ab\ncd", 10),
            0,
            "an open line is never skipped"
        );
        assert_eq!(skippable_prefix(b"ab\nc\xffd\nef\n", 10), 3);
        assert_eq!(skippable_prefix(b"ab\ncdefgh\nij\n", 4), 3);
        assert_eq!(skippable_prefix(b"\xc3\xa9\x1b[1mx\n\xc3\n", 10), 8);
        assert!(skippable(b"ab\ncd\n", 2));
        assert!(!skippable(b"ab\ncde\n", 2));
    }

    #[test]
    fn skipped_lines_count_like_sanitized_ones() {
        let mut skipping = Sanitizer::new(20);
        let mut full = Sanitizer::new(20);
        let lines = "a\x1b[31mé\r\x08z\n\x1b]0;t\x07q\n".as_bytes();
        assert!(skipping.at_line_start() && skippable(lines, 20));
        skipping.skip_lines(lines.len() as u64, 2);
        let mut out = Vec::new();
        full.push(lines, &mut out);
        assert_eq!(skipping.raw_bytes(), full.raw_bytes());
        assert_eq!(skipping.newlines(), full.newlines());
        assert_eq!(skipping.stats().replaced_bytes, full.stats().replaced_bytes);
        assert_eq!(skipping.stats().capped_lines, full.stats().capped_lines);
        assert!(full.at_line_start());
    }
}

#[cfg(test)]
mod hidden_tests {
    use super::*;

    #[test]
    fn invisible_and_reordering_characters_are_shown_as_what_they_are() {
        let mut s = Sanitizer::default();
        let mut out = Vec::new();
        let raw = "safe\u{202E}txt.exe \u{200B}x\u{E0041}\u{E0042} soft\u{00AD}hy \u{2066}i\u{2069}\n";
        s.push(raw.as_bytes(), &mut out);
        s.finish(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "safe<U+202E>txt.exe <U+200B>x<U+E0041><U+E0042> soft<U+00AD>hy <U+2066>i<U+2069>\n"
        );
        assert_eq!(s.stats().made_visible, 7);
        // A joiner inside an emoji sequence stays; ordinary accents stay.
        let mut s = Sanitizer::default();
        let mut out = Vec::new();
        s.push("👨\u{200D}👩 café\n".as_bytes(), &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "👨\u{200D}👩 café\n");
        assert_eq!(s.stats().made_visible, 0);
    }
}
