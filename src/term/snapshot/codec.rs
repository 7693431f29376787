//! The byte format of a snapshot: LEB128 integers, length-prefixed bytes, little else.
//!
//! A reader never trusts a length: each is checked against what is left before anything is
//! allocated, so a short or hostile input is an error, never a panic or a huge allocation.

use super::SnapshotError;

#[derive(Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    pub fn bool(&mut self, value: bool) {
        self.u8(u8::from(value));
    }

    pub fn u64(&mut self, mut value: u64) {
        loop {
            let low = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                self.bytes.push(low);
                return;
            }
            self.bytes.push(low | 0x80);
        }
    }

    pub fn usize(&mut self, value: usize) {
        self.u64(value as u64);
    }

    pub fn u32(&mut self, value: u32) {
        self.u64(u64::from(value));
    }

    pub fn bytes(&mut self, value: &[u8]) {
        self.usize(value.len());
        self.bytes.extend_from_slice(value);
    }

    pub fn str(&mut self, value: &str) {
        self.bytes(value.as_bytes());
    }

    pub fn opt_str(&mut self, value: Option<&str>) {
        self.bool(value.is_some());
        if let Some(value) = value {
            self.str(value);
        }
    }
}

pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    pub fn u8(&mut self) -> Result<u8, SnapshotError> {
        let (&first, rest) = self.rest.split_first().ok_or(SnapshotError::Truncated)?;
        self.rest = rest;
        Ok(first)
    }

    pub fn bool(&mut self) -> Result<bool, SnapshotError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(SnapshotError::Invalid("a flag")),
        }
    }

    pub fn u64(&mut self) -> Result<u64, SnapshotError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(SnapshotError::Invalid("an integer"));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(SnapshotError::Invalid("an integer"))
    }

    /// A count or index, at most `most`.
    pub fn up_to(&mut self, most: usize, what: &'static str) -> Result<usize, SnapshotError> {
        let value = self.u64()?;
        if value > most as u64 {
            return Err(SnapshotError::Invalid(what));
        }
        Ok(value as usize)
    }

    pub fn u32(&mut self) -> Result<u32, SnapshotError> {
        u32::try_from(self.u64()?).map_err(|_| SnapshotError::Invalid("an integer"))
    }

    /// A count of items that take at least `each` bytes apiece: never more than could follow.
    pub fn count(&mut self, each: usize) -> Result<usize, SnapshotError> {
        let count = self.u64()?;
        if count > (self.rest.len() / each.max(1)) as u64 {
            return Err(SnapshotError::Invalid("a count"));
        }
        Ok(count as usize)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], SnapshotError> {
        let len = self.count(1)?;
        let (bytes, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(bytes)
    }

    pub fn string(&mut self) -> Result<String, SnapshotError> {
        let bytes = self.bytes()?;
        String::from_utf8(bytes.to_vec()).map_err(|_| SnapshotError::Invalid("text"))
    }

    pub fn opt_string(&mut self) -> Result<Option<String>, SnapshotError> {
        Ok(if self.bool()? { Some(self.string()?) } else { None })
    }
}
