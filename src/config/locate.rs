//! Where a field's value is in a RON text, by its path (`threads[2].lock.write[0]`): the
//! diagnostics of checks made after parsing (a folder that does not exist, a duplicate name)
//! point at the value that is wrong, as parse errors do. The text has already parsed, so this
//! walks it with a small scanner instead of a second parser.

use std::fmt;

/// One step of a path into the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// A struct's field.
    Field(String),
    /// A list's element.
    Index(usize),
    /// A map's value, by its key.
    Key(String),
    /// A map's key itself.
    KeyName(String),
}

/// A field path, shown as `threads[2].lock.write[0]` (map keys as `keys.new_tab`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    pub fn field(&self, name: &str) -> FieldPath {
        self.with(Segment::Field(name.to_owned()))
    }

    pub fn index(&self, index: usize) -> FieldPath {
        self.with(Segment::Index(index))
    }

    pub fn key(&self, key: &str) -> FieldPath {
        self.with(Segment::Key(key.to_owned()))
    }

    pub fn key_name(&self, key: &str) -> FieldPath {
        self.with(Segment::KeyName(key.to_owned()))
    }

    fn with(&self, segment: Segment) -> FieldPath {
        let mut path = self.0.clone();
        path.push(segment);
        FieldPath(path)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Field(name) | Segment::Key(name) | Segment::KeyName(name) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
            }
        }
        Ok(())
    }
}

/// A place in the text, both 1-based; columns count characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub col: usize,
}

/// The position of the value at `path`, or of the nearest enclosing value that exists (a
/// missing field is reported where its struct is).
pub fn locate(src: &str, path: &FieldPath) -> Position {
    let mut scanner = Scanner { src, at: 0 };
    scanner.skip_ws();
    let mut found = scanner.at;
    for segment in &path.0 {
        scanner.unwrap_some();
        if !scanner.enter(segment) {
            break;
        }
        found = scanner.at;
    }
    position_of(src, found)
}

pub fn position_of(src: &str, offset: usize) -> Position {
    let before = &src[..offset.min(src.len())];
    let line = 1 + before.matches('\n').count();
    let col = 1 + before.rsplit('\n').next().unwrap_or("").chars().count();
    Position { line, col }
}

struct Scanner<'a> {
    src: &'a str,
    at: usize,
}

impl<'a> Scanner<'a> {
    fn rest(&self) -> &'a str {
        &self.src[self.at..]
    }

    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.at += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.at += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if trimmed.starts_with("/*") {
                self.skip_block_comment();
            } else {
                return;
            }
        }
    }

    /// RON's block comments nest.
    fn skip_block_comment(&mut self) {
        let mut depth = 0usize;
        while self.at < self.src.len() {
            let rest = self.rest();
            if rest.starts_with("/*") {
                depth += 1;
                self.at += 2;
            } else if rest.starts_with("*/") {
                depth -= 1;
                self.at += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.at += rest.chars().next().map_or(1, char::len_utf8);
            }
        }
    }

    /// Past `Some(` when the value is written as `Some(…)`.
    fn unwrap_some(&mut self) {
        self.skip_ws();
        let start = self.at;
        if self.ident() == "Some" {
            self.skip_ws();
            if self.peek() == Some(b'(') {
                self.at += 1;
                self.skip_ws();
                return;
            }
        }
        self.at = start;
    }

    /// Step into `segment` of the value here; false (and anywhere) when it is not there.
    fn enter(&mut self, segment: &Segment) -> bool {
        self.skip_ws();
        if matches!(segment, Segment::Field(_)) {
            // A struct may be named: `Lock(write: …)`.
            let start = self.at;
            if self.ident().is_empty() {
                self.at = start;
            }
            self.skip_ws();
        }
        // Struct fields and map keys are found alike: a path from serde does not tell them
        // apart, and `{"copy": …}` and `(copy: …)` both name an entry.
        let close = match (segment, self.peek()) {
            (Segment::Index(_), Some(b'[')) => b']',
            (Segment::Field(_) | Segment::Key(_) | Segment::KeyName(_), Some(b'(')) => b')',
            (Segment::Field(_) | Segment::Key(_) | Segment::KeyName(_), Some(b'{')) => b'}',
            _ => return false,
        };
        self.at += 1;
        let mut index = 0;
        loop {
            self.skip_ws();
            match self.peek() {
                None => return false,
                Some(c) if c == close => return false,
                _ => {}
            }
            match segment {
                Segment::Index(wanted) => {
                    if index == *wanted {
                        return true;
                    }
                }
                Segment::Field(name) | Segment::Key(name) | Segment::KeyName(name) => {
                    let key_at = self.at;
                    let key = self.value_text().to_owned();
                    self.skip_ws();
                    if self.peek() != Some(b':') {
                        return false;
                    }
                    self.at += 1;
                    self.skip_ws();
                    let key = key.trim().trim_matches('"');
                    if key == name || key.strip_prefix("r#") == Some(name) {
                        if matches!(segment, Segment::KeyName(_)) {
                            self.at = key_at;
                        }
                        return true;
                    }
                }
            }
            self.skip_value();
            self.skip_ws();
            if self.peek() == Some(b',') {
                self.at += 1;
            }
            index += 1;
        }
    }

    fn ident(&mut self) -> &'a str {
        let start = self.at;
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || "_#.+-".contains(c)))
            .unwrap_or(rest.len());
        self.at += len;
        &self.src[start..self.at]
    }

    fn value_text(&mut self) -> &'a str {
        let start = self.at;
        self.skip_value();
        &self.src[start..self.at]
    }

    fn skip_value(&mut self) {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.skip_string(),
            Some(b'\'') => self.skip_char(),
            Some(b'(' | b'[' | b'{') => self.skip_group(),
            Some(b'r') if self.rest().starts_with("r#") || self.rest().starts_with("r\"") => {
                self.skip_raw_string()
            }
            Some(b'b') if self.rest().starts_with("b\"") => {
                self.at += 1;
                self.skip_string();
            }
            _ => {
                if self.ident().is_empty() {
                    // Not a value we know: step over one character rather than loop.
                    self.at += self.rest().chars().next().map_or(0, char::len_utf8);
                }
                self.skip_ws();
                if self.peek() == Some(b'(') {
                    self.skip_group();
                }
            }
        }
    }

    fn skip_group(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    self.at += 1;
                }
                b')' | b']' | b'}' => {
                    self.at += 1;
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                b'"' => self.skip_string(),
                b'\'' => self.skip_char(),
                b'/' if self.rest().starts_with("//") || self.rest().starts_with("/*") => {
                    self.skip_ws()
                }
                b'r' if self.rest().starts_with("r#\"") || self.rest().starts_with("r\"") => {
                    self.skip_raw_string()
                }
                _ => self.at += self.rest().chars().next().map_or(1, char::len_utf8),
            }
        }
    }

    fn skip_string(&mut self) {
        self.at += 1;
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                b'\\' => self.at += 1,
                b'"' => return,
                _ => {}
            }
        }
    }

    fn skip_char(&mut self) {
        self.at += 1;
        if self.peek() == Some(b'\\') {
            self.at += 1;
        }
        self.at += self.rest().chars().next().map_or(0, char::len_utf8);
        if let Some(end) = self.rest().find('\'') {
            self.at += end + 1;
        }
    }

    fn skip_raw_string(&mut self) {
        self.at += 1;
        let hashes = self.rest().len() - self.rest().trim_start_matches('#').len();
        self.at += hashes + 1;
        let end = format!("\"{}", "#".repeat(hashes));
        match self.rest().find(&end) {
            Some(i) => self.at += i + end.len(),
            None => self.at = self.src.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(segments: &[Segment]) -> FieldPath {
        FieldPath(segments.to_vec())
    }

    #[test]
    fn finds_fields_elements_and_map_entries_past_comments_and_strings() {
        let src = "// top\n(\n  font: (size: 12.0),\n  threads: [\n    (name: \"a,)\", /* ( */ cwd: \"/x\"),\n    Thread(name: \"b\", lock: Some((write: [\"/tmp\", \"/nope\"]))),\n  ],\n  keys: {\"copy\": \"Ctrl+C\"},\n)";
        let at = |p: &FieldPath| {
            let pos = locate(src, p);
            (pos.line, pos.col)
        };
        use Segment::*;
        let threads = Field("threads".into());
        assert_eq!(at(&path(&[Field("font".into()), Field("size".into())])), (3, 16));
        assert_eq!(at(&path(&[threads.clone(), Index(0), Field("cwd".into())])), (5, 32));
        let write = [threads.clone(), Index(1), Field("lock".into()), Field("write".into())];
        assert_eq!(at(&path(&[&write[..], &[Index(1)]].concat())), (6, 51));
        assert_eq!(at(&path(&[Field("keys".into()), Key("copy".into())])), (8, 18));
        assert_eq!(at(&path(&[Field("keys".into()), KeyName("copy".into())])), (8, 10));
        // A field that is not there: its struct.
        assert_eq!(at(&path(&[threads, Index(0), Field("env".into())])), (5, 5));
        let shown = path(&[Field("threads".into()), Index(2), Field("lock".into())]);
        assert_eq!(shown.to_string(), "threads[2].lock");
    }
}
