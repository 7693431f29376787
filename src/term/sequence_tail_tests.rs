use super::super::utf8_carry::Utf8Carry;
use super::SequenceTail;
use proptest::prelude::*;

/// What this model's `Perform` can tell apart: dispatches vte marks ignored (and DCS strings)
/// do nothing in `perform.rs`, so they are not recorded.
#[derive(Default)]
struct Log(Vec<String>);

impl vte::Perform for Log {
    fn print(&mut self, c: char) {
        self.0.push(format!("print {c:?}"));
    }
    fn execute(&mut self, byte: u8) {
        self.0.push(format!("execute {byte:#x}"));
    }
    fn csi_dispatch(&mut self, params: &vte::Params, inter: &[u8], ignore: bool, action: char) {
        if !ignore {
            let params: Vec<Vec<u16>> = params.iter().map(|p| p.to_vec()).collect();
            self.0.push(format!("csi {params:?} {inter:?} {action:?}"));
        }
    }
    fn esc_dispatch(&mut self, inter: &[u8], ignore: bool, byte: u8) {
        if !ignore {
            self.0.push(format!("esc {inter:?} {byte:#x}"));
        }
    }
    fn osc_dispatch(&mut self, params: &[&[u8]], bell: bool) {
        self.0.push(format!("osc {params:?} {bell}"));
    }
}

/// A parser fed `prefix`, and a fresh one fed the tail of `prefix`, read `suffix` alike. Both
/// read through a `Utf8Carry` as the terminal's does (vte never holds a cut character), the
/// fresh one's a copy of the original's.
fn same_after(prefix: &[u8], suffix: &[u8]) -> Result<(), TestCaseError> {
    let mut tail = SequenceTail::default();
    let mut original = vte::Parser::new();
    let mut carry = Utf8Carry::default();
    carry.feed(prefix, |whole| {
        tail.feed(whole);
        original.advance(&mut Log::default(), whole);
    });
    let mut fresh = vte::Parser::new();
    let mut fresh_carry = carry.clone();
    let mut quiet = Log::default();
    fresh.advance(&mut quiet, tail.bytes());
    prop_assert!(quiet.0.is_empty(), "the tail {:?} did {:?}", tail.bytes(), quiet.0);
    let (mut a, mut b) = (Log::default(), Log::default());
    carry.feed(suffix, |whole| original.advance(&mut a, whole));
    fresh_carry.feed(suffix, |whole| fresh.advance(&mut b, whole));
    prop_assert_eq!(a.0, b.0, "prefix {:?} tail {:?}", prefix, tail.bytes());
    Ok(())
}

/// Bytes that make sequences: every byte class vte's table tells apart.
fn sequence_bytes(len: usize) -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        Just(0x1bu8),
        Just(b'['),
        Just(b']'),
        Just(b'P'),
        Just(b'X'),
        Just(b'_'),
        Just(b'\\'),
        Just(0x07),
        Just(0x18),
        Just(0x1a),
        Just(0x9c),
        Just(0x7f),
        Just(b'\n'),
        b'0'..=b'9',
        Just(b';'),
        Just(b':'),
        0x3cu8..=0x3f,
        0x20u8..=0x2f,
        0x40u8..=0x7e,
        0x80u8..=0xff,
        0u8..=0x1f,
    ];
    proptest::collection::vec(byte, 0..len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn a_fresh_parser_fed_the_tail_behaves_as_the_original(
        prefix in sequence_bytes(40),
        suffix in sequence_bytes(40),
    ) {
        same_after(&prefix, &suffix)?;
    }
}

#[test]
fn every_state_is_reached_and_left_alike() {
    let prefixes: &[&[u8]] = &[
        b"",
        b"\x1b",
        b"\x1b(",
        b"\x1b(((((",
        b"\x1b[",
        b"\x1b[?",
        b"\x1b[1;2",
        b"\x1b[1\n;2",
        b"\x1b[ ",
        b"\x1b[1 ",
        b"\x1b[?>",
        b"\x1b[?>=",
        b"\x1b[1?",
        b"\x1bP",
        b"\x1bP1;2",
        b"\x1bP$",
        b"\x1bP1<",
        b"\x1bPqabc\n",
        b"\x1b]0;title",
        b"\x1b]0;ti\x01tle",
        b"\x1bXsos string",
        b"\x1b_apc",
        b"\x1b^pm",
    ];
    let suffixes: &[&[u8]] = &[
        b"m",
        b"H",
        b"1;2H",
        b";3m",
        b" q",
        b"\x07",
        b"\x1b\\",
        b"\x18x",
        b"0m",
        b"text\x1b[1mx",
        b"\x9cafter",
    ];
    for prefix in prefixes {
        for suffix in suffixes {
            same_after(prefix, suffix).unwrap();
        }
    }
}

#[test]
fn long_parameters_and_long_strings_stay_short_where_vte_is_bounded() {
    let mut digits = b"\x1b[".to_vec();
    digits.extend(std::iter::repeat_n(b'9', 1 << 20));
    let mut tail = SequenceTail::default();
    tail.feed(&digits);
    assert_eq!(tail.bytes(), b"\x1b[65535");
    same_after(&digits, b";2H").unwrap();

    let mut params = b"\x1b[".to_vec();
    params.extend(std::iter::repeat_n(b"1;".as_slice(), 10_000).flatten());
    let mut tail = SequenceTail::default();
    tail.feed(&params);
    assert_eq!(tail.bytes(), b"\x1b[0?");
    same_after(&params, b"5H").unwrap();

    let mut dcs = b"\x1bPq".to_vec();
    dcs.extend(std::iter::repeat_n(b'#', 1 << 20));
    let mut tail = SequenceTail::default();
    tail.feed(&dcs);
    assert_eq!(tail.bytes(), b"\x1bPq");
    same_after(&dcs, b"\x1b\\done").unwrap();
}

#[test]
fn the_tail_follows_input_cut_anywhere() {
    let stream = b"ab\x1b[1;3\x1b]2;t\x07c\x1b[38;5;1mx\x1bP1$q\x1b\\d";
    for cut in 0..=stream.len() {
        let mut whole = SequenceTail::default();
        whole.feed(&stream[..cut]);
        let mut pieces = SequenceTail::default();
        for byte in &stream[..cut] {
            pieces.feed(std::slice::from_ref(byte));
        }
        assert_eq!(whole.bytes(), pieces.bytes(), "cut at {cut}");
        same_after(&stream[..cut], &stream[cut..]).unwrap();
    }
}
