//! The fast path's text: whole, valid UTF-8 characters printed (and C0/C1 controls executed)
//! in one pass, as vte's ground state does after validating them in another.
//!
//! vte checks a stretch of text with `str::from_utf8`, then walks it again character by
//! character. Here each character is checked as it is decoded (RFC 3629: no overlong forms,
//! no surrogates, nothing past U+10FFFF). At the first byte that does not start a whole valid
//! character (invalid, or cut off by the end) this stops and says how far it got: vte reads
//! the rest, so what it does with bad bytes (a replacement character, a C1 control, a
//! character held for the next input) stays vte's.

use vte::Perform;

use super::state::State;

/// Print or execute every whole valid character from the start of `text`; how many bytes
/// that was.
#[inline(always)]
pub(super) fn read(state: &mut State, text: &[u8]) -> usize {
    let mut at = 0;
    while let Some(&lead) = text.get(at) {
        if lead < 0x80 {
            if lead < 0x20 {
                state.execute(lead);
            } else {
                state.print(char::from(lead));
            }
            at += 1;
            continue;
        }
        let Some((c, len)) = decode(&text[at..]) else { break };
        // vte executes C1 controls that arrive as characters (U+0080 to U+009F).
        if (c as u32) < 0xa0 {
            state.execute(c as u8);
        } else {
            state.print(c);
        }
        at += len;
    }
    at
}

/// The multi-byte character at the start of `bytes` and its length, if whole and valid.
#[inline(always)]
fn decode(bytes: &[u8]) -> Option<(char, usize)> {
    let continuation =
        |i: usize| bytes.get(i).filter(|b| **b & 0xc0 == 0x80).map(|b| u32::from(b & 0x3f));
    let lead = bytes[0];
    let (code, len) = match lead {
        0xc2..=0xdf => (u32::from(lead & 0x1f) << 6 | continuation(1)?, 2),
        0xe0..=0xef => {
            let second = *bytes.get(1)?;
            let valid = match lead {
                0xe0 => (0xa0..=0xbf).contains(&second),
                0xed => (0x80..=0x9f).contains(&second),
                _ => second & 0xc0 == 0x80,
            };
            if !valid {
                return None;
            }
            let code =
                u32::from(lead & 0x0f) << 12 | u32::from(second & 0x3f) << 6 | continuation(2)?;
            (code, 3)
        }
        0xf0..=0xf4 => {
            let second = *bytes.get(1)?;
            let valid = match lead {
                0xf0 => (0x90..=0xbf).contains(&second),
                0xf4 => (0x80..=0x8f).contains(&second),
                _ => second & 0xc0 == 0x80,
            };
            if !valid {
                return None;
            }
            let code = u32::from(lead & 0x07) << 18
                | u32::from(second & 0x3f) << 12
                | continuation(2)? << 6
                | continuation(3)?;
            (code, 4)
        }
        _ => return None,
    };
    Some((char::from_u32(code)?, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every one- to three-byte sequence, and every four-byte one over a sample of its last
    /// two bytes, decodes exactly when the standard library says it is one valid character.
    #[test]
    fn decodes_what_the_standard_library_accepts_and_nothing_else() {
        let check = |bytes: &[u8]| {
            let std = std::str::from_utf8(bytes).ok().and_then(|s| {
                let mut chars = s.chars();
                let c = chars.next()?;
                (chars.next().is_none() && c.len_utf8() == bytes.len()).then_some(c)
            });
            let ours = decode(bytes).filter(|&(_, len)| len == bytes.len()).map(|(c, _)| c);
            if bytes[0] >= 0x80 {
                assert_eq!(ours, std, "{bytes:02x?}");
            }
        };
        let edges = [0x00, 0x3f, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        for a in 0x80..=0xffu8 {
            for b in 0..=0xffu8 {
                check(&[a, b]);
                for c in 0..=0xffu8 {
                    check(&[a, b, c]);
                }
                for c in edges {
                    for d in edges {
                        check(&[a, b, c, d]);
                    }
                }
            }
        }
    }

    #[test]
    fn a_cut_or_invalid_character_stops_the_reading() {
        assert_eq!(decode(b"\xe4\xbd"), None);
        assert_eq!(decode(b"\xe4\xbd\xa0x"), Some(('你', 3)));
        assert_eq!(decode(b"\xf0\x9f\x8e"), None);
        assert_eq!(decode(b"\xc0\x80"), None);
        assert_eq!(decode(b"\xed\xa0\x80"), None);
        assert_eq!(decode(b"\xf4\x90\x80\x80"), None);
    }
}
