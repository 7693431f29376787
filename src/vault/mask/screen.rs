//! The model's side of masking: a [`Redactor`] the pane's terminal model asks after each chunk
//! (and for titles, notifications and clipboard writes), finding the pane's values in the text
//! it actually holds. It catches what the stream masker cannot see whole: values drawn by REP,
//! backspace, cursor moves or partial redraws, and prefixes the stream masker had to pass on
//! early (its size and time bounds).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::matcher::Matcher;
use crate::term::Redactor;
use crate::vault::store::SecretBytes;

/// Finds a pane's values in the model's text, and counts what it finds.
pub struct ScreenRedactor {
    matcher: Matcher,
    longest: usize,
    line_ends: usize,
    ascii_only: bool,
    /// Added to as values are found, one count per value (the pane's masked counts).
    counts: Arc<[AtomicU64]>,
}

impl ScreenRedactor {
    /// A redactor for `values` (empty ones ignored), counting into `counts` (one per value, in
    /// the order given); `None` when there is nothing to find.
    pub fn new(values: &[SecretBytes], counts: Arc<[AtomicU64]>) -> Option<ScreenRedactor> {
        let values: Vec<SecretBytes> = values.iter().filter(|v| !v.is_empty()).cloned().collect();
        let longest = values.iter().map(|v| v.len()).max()?;
        let line_ends =
            values.iter().map(|v| v.iter().filter(|&&b| b == b'\n').count()).max().unwrap_or(0);
        let ascii_only = values.iter().all(|v| v.is_ascii());
        let matcher = Matcher::new(values)?;
        Some(ScreenRedactor { matcher, longest, line_ends, ascii_only, counts })
    }
}

impl Redactor for ScreenRedactor {
    fn find(&mut self, text: &[u8], found: &mut Vec<Range<usize>>) {
        let (matches, _) = self.matcher.find(text, &[]);
        for (from, to, value) in matches {
            if let Some(count) = self.counts.get(value) {
                count.fetch_add(1, Ordering::Relaxed);
            }
            found.push(from..to);
        }
    }

    fn longest(&self) -> usize {
        self.longest
    }

    fn line_ends(&self) -> usize {
        self.line_ends
    }

    fn ascii_only(&self) -> bool {
        self.ascii_only
    }
}
