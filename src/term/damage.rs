//! Damage: which visible rows changed since the renderer last looked.
//!
//! Writers mark rows; the renderer takes the set and redraws only those rows. Whole-screen
//! operations (scrolling, clearing, resizing, switching screens) mark everything at once.

#[derive(Clone, Debug)]
pub struct Damage {
    rows: Vec<bool>,
    full: bool,
}

/// What the renderer must redraw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DamagedRows {
    /// Every visible row.
    All,
    /// Only these rows, in increasing order (possibly none).
    Rows(Vec<usize>),
}

impl Damage {
    pub fn new(lines: usize) -> Damage {
        Damage { rows: vec![false; lines], full: true }
    }

    #[inline]
    pub fn row(&mut self, line: usize) {
        if let Some(row) = self.rows.get_mut(line) {
            *row = true;
        }
    }

    pub fn all(&mut self) {
        self.full = true;
    }

    pub fn resize(&mut self, lines: usize) {
        self.rows = vec![false; lines];
        self.full = true;
    }

    /// Hand the damage over and start clean.
    pub fn take(&mut self) -> DamagedRows {
        let taken = if self.full {
            DamagedRows::All
        } else {
            DamagedRows::Rows((0..self.rows.len()).filter(|&i| self.rows[i]).collect())
        };
        self.full = false;
        self.rows.fill(false);
        taken
    }
}
