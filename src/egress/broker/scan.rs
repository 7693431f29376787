//! Finding a pane's placeholders in bytes that arrive in pieces (a request body, a tunnel's
//! outgoing bytes): each piece is searched, and so is the seam between it and the one before,
//! so a placeholder split across two reads is found too. Pure.

use std::sync::Arc;

/// A stream's search for any of a set of needles.
pub struct Scanner {
    needles: Arc<[Box<[u8]>]>,
    /// The end of what came before: as much as a needle could have started in.
    carry: Vec<u8>,
    longest: usize,
}

impl Scanner {
    /// A search for `needles` (none: nothing is ever found).
    pub fn new(needles: Arc<[Box<[u8]>]>) -> Scanner {
        let longest = needles.iter().map(|n| n.len()).max().unwrap_or(0);
        Scanner { needles, carry: Vec::new(), longest }
    }

    /// The index of a needle the stream holds once `piece` is added to it, if any.
    pub fn feed(&mut self, piece: &[u8]) -> Option<usize> {
        if self.longest == 0 || piece.is_empty() {
            return None;
        }
        let keep = self.longest - 1;
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
        self.needles.iter().position(|needle| memchr::memmem::find(haystack, needle).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanner(needles: &[&str]) -> Scanner {
        let needles: Vec<Box<[u8]>> = needles.iter().map(|n| n.as_bytes().into()).collect();
        Scanner::new(needles.into())
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
    fn text_without_a_needle_finds_none_and_an_empty_set_finds_nothing() {
        let mut scan = scanner(&["sk-pl-AAAABBBBCCCC"]);
        for piece in [&b"sk-pl-AAAA"[..], b"BBBB", b"CCC", b"C"] {
            assert_eq!(scan.feed(&piece[..piece.len().min(3)]), None);
        }
        let mut none = scanner(&[]);
        assert_eq!(none.feed(b"anything"), None);
    }
}
