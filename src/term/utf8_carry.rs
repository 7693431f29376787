//! Hold back a UTF-8 character cut by the end of a chunk until the next chunk completes it.
//!
//! vte joins a character split across `advance` calls itself, but when the bytes after the cut
//! also hold an invalid byte it swallows the next valid character with the completed one
//! (vte 0.15, `advance_partial_utf8`). Handing vte whole characters (or a lone byte that can
//! never complete one, which vte handles correctly) avoids that path. Only
//! the order of bytes matters to the parser, so holding up to three bytes back changes nothing
//! else, inside or outside escape sequences.

#[derive(Clone, Debug, Default)]
pub struct Utf8Carry {
    bytes: [u8; 4],
    len: usize,
}

impl Utf8Carry {
    /// The bytes held, for a snapshot.
    pub(super) fn held(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// A carry holding `bytes`: nothing, or the start of a character it would hold.
    pub(super) fn holding(bytes: &[u8]) -> Option<Utf8Carry> {
        let mut carry = Utf8Carry::default();
        carry.feed(bytes, |_| {});
        (carry.held() == bytes).then_some(carry)
    }

    /// Feed `input` through `sink` in whole characters, keeping a cut-off tail for next time.
    pub fn feed(&mut self, mut input: &[u8], mut sink: impl FnMut(&[u8])) {
        if self.len > 0 {
            let need = expected_len(self.bytes[0]) - self.len;
            let mut taken = 0;
            while taken < need && taken < input.len() && is_continuation(input[taken]) {
                self.bytes[self.len] = input[taken];
                self.len += 1;
                taken += 1;
            }
            input = &input[taken..];
            if self.len < expected_len(self.bytes[0]) && input.is_empty() {
                return; // still incomplete: wait for more
            }
            sink(&self.bytes[..self.len]);
            self.len = 0;
        }
        let tail = cut_tail_len(input);
        let (whole, tail) = input.split_at(input.len() - tail);
        if !whole.is_empty() {
            sink(whole);
        }
        self.bytes[..tail.len()].copy_from_slice(tail);
        self.len = tail.len();
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

fn expected_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC2..=0xDF => 2,
        _ => 1,
    }
}

/// Length of an incomplete character at the end of `bytes` (0 if it ends on a boundary).
fn cut_tail_len(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if is_continuation(byte) {
            continue;
        }
        return if expected_len(byte) > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut carry = Utf8Carry::default();
        let mut out = Vec::new();
        for chunk in chunks {
            carry.feed(chunk, |b| out.push(b.to_vec()));
        }
        out
    }

    #[test]
    fn a_cut_character_is_delivered_whole() {
        let e_acute = "é".as_bytes();
        assert_eq!(
            run(&[b"a\xc3", b"\xa9b"]),
            vec![b"a".to_vec(), e_acute.to_vec(), b"b".to_vec()]
        );
        assert_eq!(
            run(&[b"\xe4", b"\xbd", b"\xa0!"]),
            vec![b"\xe4\xbd\xa0".to_vec(), b"!".to_vec()]
        );
    }

    #[test]
    fn invalid_bytes_pass_through_in_order() {
        assert_eq!(run(&[b"\xcc", b"\x41\x80"]), vec![b"\xcc".to_vec(), b"\x41\x80".to_vec()]);
        assert_eq!(run(&[b"ok\x80"]), vec![b"ok\x80".to_vec()]);
        assert_eq!(run(&[b"\xf0\x9f", b"\x8e\x89"]), vec!["🎉".as_bytes().to_vec()]);
    }
}
