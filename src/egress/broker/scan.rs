//! Finding a pane's placeholders in bytes that arrive in pieces (a request body, a tunnel's
//! outgoing bytes): each piece is searched, and so is the seam between it and the one before,
//! so a placeholder split across two reads is found too. Letters' case does not matter (a
//! placeholder lower-cased is still one). Pure.

use std::sync::Arc;

use aho_corasick::AhoCorasick;

/// A set of needles, ready to be searched for (built once, shared by every stream).
#[derive(Clone)]
pub struct Needles {
    finder: Option<Arc<AhoCorasick>>,
    longest: usize,
}

impl Needles {
    /// `needles` (none, or none that can be searched for: nothing is ever found).
    pub fn new(needles: &[&[u8]]) -> Needles {
        let finder =
            AhoCorasick::builder().ascii_case_insensitive(true).build(needles).ok().map(Arc::new);
        let longest = needles.iter().map(|n| n.len()).max().unwrap_or(0);
        Needles { finder: finder.filter(|_| longest > 0), longest }
    }

    /// A search in one stream.
    pub fn scanner(&self) -> Scanner {
        Scanner { needles: self.clone(), carry: Vec::new() }
    }
}

/// A stream's search for any of a set of needles.
pub struct Scanner {
    needles: Needles,
    /// The end of what came before: as much as a needle could have started in.
    carry: Vec<u8>,
}

impl Scanner {
    /// The index of a needle the stream holds once `piece` is added to it, if any.
    pub fn feed(&mut self, piece: &[u8]) -> Option<usize> {
        if self.needles.finder.is_none() || piece.is_empty() {
            return None;
        }
        let keep = self.needles.longest - 1;
        if !self.carry.is_empty() {
            // The seam: what came before, and as much of this piece as a needle starting
            // there could reach into.
            let mut seam = self.carry.clone();
            seam.extend_from_slice(&piece[..piece.len().min(keep)]);
            if let Some(found) = self.find(&seam) {
                return Some(found);
            }
        }
        if let Some(found) = self.find(piece) {
            return Some(found);
        }
        if piece.len() >= keep {
            self.carry.clear();
            self.carry.extend_from_slice(&piece[piece.len() - keep..]);
        } else {
            self.carry.extend_from_slice(piece);
            let extra = self.carry.len().saturating_sub(keep);
            self.carry.drain(..extra);
        }
        None
    }

    fn find(&self, haystack: &[u8]) -> Option<usize> {
        let finder = self.needles.finder.as_ref()?;
        finder.find(haystack).map(|found| found.pattern().as_usize())
    }
}

/// A stream coming back to the pane with each secret value in it replaced (by its
/// placeholder): a value split across two pieces is caught too, by holding back the end of a
/// piece that could be the start of a value until the next piece (or the end) says. The
/// values are handed in with each piece, never kept here.
#[derive(Default)]
pub struct Replacer {
    held: Vec<u8>,
}

/// A value, and what replaces it.
pub type Pair<'a> = (&'a [u8], &'a [u8]);

/// Where `needle` first is in `haystack` from `from` on, letters' case aside (no copy of
/// either is made: the needle is a secret).
pub fn find_any_case(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let first = *needle.first()?;
    let (lower, upper) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    let rest = haystack.get(from..)?;
    memchr::memchr2_iter(lower, upper, rest).map(|at| from + at).find(|at| {
        haystack.get(*at..*at + needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

/// `text` with each of `pairs`' values in it (letters' case aside) replaced, if one was.
pub fn replace_any_case(text: &[u8], pairs: &[Pair<'_>]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    for (value, with) in pairs.iter().filter(|(value, _)| !value.is_empty()) {
        let current = out.as_deref().unwrap_or(text);
        if find_any_case(current, value, 0).is_none() {
            continue;
        }
        let mut next = Vec::with_capacity(current.len());
        let mut at = 0;
        while let Some(found) = find_any_case(current, value, at) {
            next.extend_from_slice(&current[at..found]);
            next.extend_from_slice(with);
            at = found + value.len();
        }
        next.extend_from_slice(&current[at..]);
        out = Some(next);
    }
    out
}

/// Whether `end` is where some value begins (letters' case aside).
fn begins_a_value(pairs: &[Pair<'_>], end: &[u8]) -> bool {
    pairs
        .iter()
        .any(|(value, _)| value.len() > end.len() && value[..end.len()].eq_ignore_ascii_case(end))
}

impl Replacer {
    /// What of the stream can go on now that `piece` came, `pairs`' values replaced (in any
    /// letters' case); whether any was.
    pub fn feed(&mut self, pairs: &[Pair<'_>], piece: &[u8]) -> (Vec<u8>, bool) {
        let mut text = std::mem::take(&mut self.held);
        text.extend_from_slice(piece);
        let replaced = match replace_any_case(&text, pairs) {
            Some(new) => {
                text = new;
                true
            }
            None => false,
        };
        // The longest end of `text` that begins some value: kept for the next piece.
        let longest = pairs.iter().map(|(v, _)| v.len()).max().unwrap_or(1).max(1);
        let from = text.len().saturating_sub(longest - 1);
        let hold = (from..text.len()).find(|at| begins_a_value(pairs, &text[*at..]));
        if let Some(at) = hold {
            self.held = text.split_off(at);
        }
        (text, replaced)
    }

    /// Whether `piece` can go on as it is: nothing is held back, no value is in it, and its
    /// end begins none (the common case, with no copy).
    pub fn passes(&self, pairs: &[Pair<'_>], piece: &[u8]) -> bool {
        if !self.held.is_empty() {
            return false;
        }
        pairs.iter().filter(|(value, _)| !value.is_empty()).all(|(value, _)| {
            let tail_from = piece.len().saturating_sub(value.len() - 1);
            let (lower, upper) = (value[0].to_ascii_lowercase(), value[0].to_ascii_uppercase());
            find_any_case(piece, value, 0).is_none()
                && memchr::memchr2_iter(lower, upper, &piece[tail_from..])
                    .all(|at| !begins_a_value(&[(value, b"")], &piece[tail_from + at..]))
        })
    }

    /// What was held back, at the stream's end.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanner(needles: &[&str]) -> Scanner {
        let needles: Vec<&[u8]> = needles.iter().map(|n| n.as_bytes()).collect();
        Needles::new(&needles).scanner()
    }

    #[test]
    fn a_needle_is_found_whole_or_split_over_any_pieces() {
        let text = b"POST /x HTTP/1.1\r\n\r\n{\"key\": \"sk-pl-AAAABBBBCCCC\"}";
        for cut_a in 0..text.len() {
            for cut_b in cut_a..text.len() {
                let mut scan = scanner(&["other-needle-zz", "sk-pl-AAAABBBBCCCC"]);
                let found = [&text[..cut_a], &text[cut_a..cut_b], &text[cut_b..]]
                    .iter()
                    .find_map(|piece| scan.feed(piece));
                assert_eq!(found, Some(1), "cut at {cut_a} and {cut_b}");
            }
        }
        // Byte by byte, too.
        let mut scan = scanner(&["sk-pl-AAAABBBBCCCC"]);
        assert_eq!(text.iter().find_map(|b| scan.feed(std::slice::from_ref(b))), Some(0));
    }

    #[test]
    fn a_value_coming_back_is_replaced_however_it_is_cut() {
        let pairs: [Pair<'_>; 1] = [(b"sk-REAL-value-1234", b"sk-PLAC-holder-zzzz")];
        let text = b"data: {\"echo\": \"sk-REAL-value-1234\"}\n\ndata: sk-REAL-val";
        for cut in 0..text.len() {
            let mut replacer = Replacer::default();
            let (mut out, mut replaced) = replacer.feed(&pairs, &text[..cut]);
            let (rest, more) = replacer.feed(&pairs, &text[cut..]);
            out.extend(rest);
            out.extend(replacer.finish());
            replaced |= more;
            assert_eq!(
                String::from_utf8_lossy(&out),
                "data: {\"echo\": \"sk-PLAC-holder-zzzz\"}\n\ndata: sk-REAL-val",
                "cut at {cut}"
            );
            assert!(replaced);
        }
        // A piece that ends in no value's beginning goes on whole, at once.
        let mut replacer = Replacer::default();
        let piece = b"event: tick\n\n";
        assert!(replacer.passes(&pairs, piece));
        assert_eq!(replacer.feed(&pairs, piece), (piece.to_vec(), false));
        // In another letters' case, too.
        let (out, replaced) = Replacer::default().feed(&pairs, b"x SK-real-VALUE-1234 y");
        assert_eq!((out.as_slice(), replaced), (&b"x sk-PLAC-holder-zzzz y"[..], true));
        assert!(!Replacer::default().passes(&pairs, b"ends in SK-REAL"));
        for (piece, passes) in [
            (&b"ends in sk-REA"[..], false),
            (b"holds sk-REAL-value-1234 whole", false),
            (b"ends in sk-", false),
            (b"ends in sk-X", true),
            (b"", true),
        ] {
            assert_eq!(
                replacer.passes(&pairs, piece),
                passes,
                "{:?}",
                String::from_utf8_lossy(piece)
            );
        }
        replacer.feed(&pairs, b"sk-RE");
        assert!(!replacer.passes(&pairs, b"anything"), "text is held back");
    }

    #[test]
    fn a_needle_in_other_letters_case_is_found() {
        let mut scan = scanner(&["sk-pl-AAAABBBBCCCC"]);
        assert_eq!(scan.feed(b"x-sk-pl-aaaabbbbcccc: 1"), Some(0));
    }

    #[test]
    fn text_without_a_needle_finds_none_and_an_empty_set_finds_nothing() {
        let mut scan = scanner(&["sk-pl-AAAABBBBCCCC"]);
        for piece in [&b"sk-pl-AAAA"[..], b"BBBB", b"CCC", b"C"] {
            assert_eq!(scan.feed(&piece[..piece.len().min(3)]), None);
        }
        let mut none = scanner(&[]);
        assert_eq!(none.feed(b"anything"), None);
    }
}
