//! What a brokered secret's pane holds instead of the value: a placeholder shaped like it
//! (the same prefix where the value has a known kind of one, the same length, characters of
//! the same kind), so that a program that checks a key's shape before using it still starts,
//! and random, so that it tells nothing about the value and is new for every pane and every
//! release. Pure: the random bytes are handed in.

/// How many random bits a placeholder holds at least, whatever the value's length.
const RANDOM_BITS: usize = 128;

/// The placeholder for `value`, its random part drawn from `random` (as many bytes as it
/// asks for; uniformly random bytes give a uniformly random placeholder).
pub fn shaped_like(value: &[u8], random: &mut dyn FnMut(&mut [u8])) -> String {
    let text = std::str::from_utf8(value).ok().filter(|t| t.is_ascii() && !t.is_empty());
    let Some(text) = text else {
        return format!("paddock-{}", draw(Alphabet::ALNUM, 22, random));
    };
    let prefix = prefix_of(text);
    let rest = &text[prefix.len()..];
    let alphabet = Alphabet::smallest_for(rest);
    let least = RANDOM_BITS.div_ceil(alphabet.bits_per_char());
    let length = rest.len().max(least);
    format!("{prefix}{}", draw(alphabet, length, random))
}

/// The part of a key that says what kind of key it is (`sk-ant-api03-`, `sk-proj-`, `ghp_`,
/// `AIza`): through its last `-` or `_` within the first 16 characters, when that is at most
/// half of it; nothing when the key has none (no random character of it is given away).
fn prefix_of(text: &str) -> &str {
    if text.starts_with("AIza") && text.len() >= 8 {
        return &text[..4];
    }
    let head = &text[..text.len().min(16)];
    match head.rfind(['-', '_']) {
        Some(at) if (at + 1) * 2 <= text.len() => &text[..=at],
        _ => "",
    }
}

#[derive(Clone, Copy)]
struct Alphabet(&'static [u8]);

impl Alphabet {
    const DIGITS: Alphabet = Alphabet(b"0123456789");
    const LOWER_HEX: Alphabet = Alphabet(b"0123456789abcdef");
    const UPPER_HEX: Alphabet = Alphabet(b"0123456789ABCDEF");
    const LOWER: Alphabet = Alphabet(b"0123456789abcdefghijklmnopqrstuvwxyz");
    const UPPER: Alphabet = Alphabet(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    const ALNUM: Alphabet =
        Alphabet(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

    /// The smallest alphabet that holds each letter and digit of `rest` (a key's `-` and `_`
    /// are left out of placeholders: every key checker takes letters and digits).
    fn smallest_for(rest: &str) -> Alphabet {
        let chars = || rest.bytes().filter(u8::is_ascii_alphanumeric);
        [
            Alphabet::DIGITS,
            Alphabet::LOWER_HEX,
            Alphabet::UPPER_HEX,
            Alphabet::LOWER,
            Alphabet::UPPER,
        ]
        .into_iter()
        .find(|a| chars().all(|c| a.0.contains(&c)))
        .unwrap_or(Alphabet::ALNUM)
    }

    /// Whole bits of randomness one character carries.
    fn bits_per_char(self) -> usize {
        (usize::BITS - 1 - self.0.len().leading_zeros()) as usize
    }
}

/// `length` characters of `alphabet`, uniformly (bytes past the largest multiple of the
/// alphabet's size are drawn again).
fn draw(alphabet: Alphabet, length: usize, random: &mut dyn FnMut(&mut [u8])) -> String {
    let size = alphabet.0.len();
    let limit = 256 - 256 % size;
    let mut out = String::with_capacity(length);
    let mut pool = [0u8; 64];
    while out.len() < length {
        random(&mut pool);
        for byte in pool.iter().map(|b| usize::from(*b)).filter(|b| *b < limit) {
            if out.len() == length {
                break;
            }
            out.push(char::from(alphabet.0[byte % size]));
        }
    }
    out
}

/// The placeholder for `value`, from the operating system's random source (without which
/// no placeholder could be trusted to be unguessable).
pub fn placeholder_for(value: &[u8]) -> Result<String, String> {
    let mut failed = None;
    let placeholder = shaped_like(value, &mut |bytes| {
        if let Err(e) = getrandom::fill(bytes) {
            failed = Some(format!("the operating system's random source failed: {e}"));
        }
    });
    failed.map_or(Ok(placeholder), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter() -> impl FnMut(&mut [u8]) {
        let mut next = 0u8;
        move |bytes: &mut [u8]| {
            for b in bytes {
                *b = next;
                next = next.wrapping_add(37);
            }
        }
    }

    #[test]
    fn a_placeholder_keeps_a_keys_kind_and_length_and_nothing_else() {
        let anthropic = "sk-ant-api03-Xy7_kQ2-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij-AAAAAAAA";
        let cases = [
            (anthropic, "sk-ant-api03-", anthropic.len()),
            ("sk-proj-0123456789abcdefghijABCDEFGHIJ0123456789", "sk-proj-", 48),
            ("AIzaSyD-0123456789abcdefghijklmnopqrstu", "AIza", 39),
            ("ghp_0123456789abcdefghijABCDEFGHIJabcdef", "ghp_", 40),
            // No prefix: the first characters of a random token are its own, and stay hidden.
            ("0123456789abcdef0123456789abcdef01234567", "", 40),
            // Short: long enough to be unguessable.
            ("xyz", "", 128usize.div_ceil(5)),
        ];
        for (value, prefix, length) in cases {
            let placeholder = shaped_like(value.as_bytes(), &mut counter());
            assert!(placeholder.starts_with(prefix), "{value}: {placeholder}");
            assert_eq!(placeholder.len(), length, "{value}: {placeholder}");
            assert_ne!(placeholder, value);
            let rest = &placeholder[prefix.len()..];
            assert!(rest.bytes().all(|b| b.is_ascii_alphanumeric()), "{placeholder}");
        }
        // A hex token stays hex, digits stay digits.
        let hex = shaped_like(b"0123456789abcdef0123456789abcdef01234567", &mut counter());
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{hex}");
        let digits = shaped_like(b"123456789012", &mut counter());
        assert!(digits.bytes().all(|b| b.is_ascii_digit()) && digits.len() >= 39, "{digits}");
        // Binary: a placeholder of paddock's own.
        let binary = shaped_like(&[0xff, 0x00, 0x13], &mut counter());
        assert!(binary.starts_with("paddock-") && binary.len() == 30, "{binary}");
    }

    #[test]
    fn every_release_gets_a_new_placeholder() {
        let value = b"sk-ant-api03-abcdefghijklmnopqrstuvwxyz";
        let (a, b) = (placeholder_for(value).unwrap(), placeholder_for(value).unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with("sk-ant-api03-") && a.len() == value.len());
    }
}
