//! Line reading and number parsing shared by the text formats.

use std::io::BufRead;

use super::TraceError;

/// Reads `\n`-terminated lines, numbering them from 1 and dropping the line ending (`\n` or
/// `\r\n`). With `require_newline`, a last line without `\n` is an error (a truncated file).
pub(crate) struct LineReader<R> {
    input: R,
    line_no: u64,
    buf: Vec<u8>,
    require_newline: bool,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(input: R, require_newline: bool) -> Self {
        LineReader {
            input,
            line_no: 0,
            buf: Vec::new(),
            require_newline,
        }
    }

    /// The number of the current line (0 before the first).
    pub(crate) fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Moves to the next line; `false` at end of input.
    pub(crate) fn advance(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| TraceError::line(self.line_no + 1, format!("read error: {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        self.line_no += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.require_newline {
            let problem = "missing newline at end of file (truncated?)";
            return Err(TraceError::line(self.line_no, problem));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(true)
    }

    /// The current line as text.
    pub(crate) fn text(&self) -> Result<&str, TraceError> {
        std::str::from_utf8(&self.buf).map_err(|e| {
            let problem = format!("not valid UTF-8 (byte {} of the line)", e.valid_up_to() + 1);
            TraceError::line(self.line_no, problem)
        })
    }
}

/// Parses an unsigned decimal made of ASCII digits only (no sign), at most `max`.
/// `what` names the field in the error message.
pub(crate) fn parse_uint(text: &str, what: &str, max: u64) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "bad {what} '{text}' (expected an unsigned integer)"
        ));
    }
    match text.parse::<u64>() {
        Ok(value) if value <= max => Ok(value),
        _ => Err(format!("{what} {text} out of range (at most {max})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &str, require_newline: bool) -> Result<Vec<(u64, String)>, String> {
        let mut reader = LineReader::new(input.as_bytes(), require_newline);
        let mut out = Vec::new();
        while reader.advance().map_err(|e| e.to_string())? {
            let text = reader.text().map_err(|e| e.to_string())?;
            out.push((reader.line_no(), text.to_owned()));
        }
        Ok(out)
    }

    #[test]
    fn lines_are_numbered_and_stripped() {
        let got = lines("a\r\n\nb c\n", true).unwrap();
        let want = [(1, "a"), (2, ""), (3, "b c")].map(|(n, s)| (n, s.to_owned()));
        assert_eq!(got, want);
    }

    #[test]
    fn missing_final_newline_only_matters_when_required() {
        assert_eq!(
            lines("a\nb", true).unwrap_err(),
            "line 2: missing newline at end of file (truncated?)"
        );
        assert_eq!(lines("a\nb", false).unwrap().len(), 2);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let mut reader = LineReader::new(&b"ok\nx\xffy\n"[..], true);
        assert!(reader.advance().unwrap());
        assert!(reader.advance().unwrap());
        assert_eq!(
            reader.text().unwrap_err().to_string(),
            "line 2: not valid UTF-8 (byte 2 of the line)"
        );
    }

    #[test]
    fn uints_are_digits_only_and_bounded() {
        assert_eq!(parse_uint("0042", "pid", 100), Ok(42));
        assert_eq!(
            parse_uint("+1", "pid", 100).unwrap_err(),
            "bad pid '+1' (expected an unsigned integer)"
        );
        assert!(parse_uint("", "pid", 100).is_err());
        assert!(parse_uint("-1", "pid", 100).is_err());
        assert!(parse_uint(" 1", "pid", 100).is_err());
        assert_eq!(
            parse_uint("101", "pid", 100).unwrap_err(),
            "pid 101 out of range (at most 100)"
        );
        assert_eq!(
            parse_uint("99999999999999999999", "page", u64::MAX).unwrap_err(),
            format!(
                "page 99999999999999999999 out of range (at most {})",
                u64::MAX
            )
        );
    }
}
