//! A redactor for the model's tests that knows its values (the vault's `ScreenRedactor` stays
//! out of the model's tests).

use std::ops::Range;

use crate::term::{Redactor, TermConfig, TermSize, Terminal};

pub(super) struct Values(pub(super) Vec<&'static [u8]>);

impl Redactor for Values {
    fn find(&mut self, text: &[u8], found: &mut Vec<Range<usize>>) {
        for value in &self.0 {
            let mut at = 0;
            while let Some(n) = text[at..].windows(value.len()).position(|w| w == *value) {
                found.push(at + n..at + n + value.len());
                at += n + 1;
            }
        }
    }

    fn longest(&self) -> usize {
        self.0.iter().map(|v| v.len()).max().unwrap_or(1)
    }

    fn line_ends(&self) -> usize {
        self.0.iter().map(|v| v.iter().filter(|&&b| b == b'\n').count()).max().unwrap_or(0)
    }

    fn ascii_only(&self) -> bool {
        self.0.iter().all(|v| v.is_ascii())
    }
}

/// A terminal whose model checks for `values`.
pub(super) fn term(cols: usize, lines: usize, values: Vec<&'static [u8]>) -> Terminal {
    let mut term = Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: 100 });
    term.set_redactor(Box::new(Values(values)));
    term
}
