//! Rectangles of cells and directions, for layout and for moving focus between panes.

/// A rectangle of cells: `col`/`row` of its top-left cell, and its size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    pub col: usize,
    pub row: usize,
    pub cols: usize,
    pub rows: usize,
}

/// Where to move focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Left,
    Right,
    Up,
    Down,
}

impl Rect {
    pub fn new(col: usize, row: usize, cols: usize, rows: usize) -> Rect {
        Rect { col, row, cols, rows }
    }

    fn end_col(&self) -> usize {
        self.col + self.cols
    }

    fn end_row(&self) -> usize {
        self.row + self.rows
    }

    /// Whether `other` lies against this rectangle's side in `direction` (across at most a
    /// one-cell divider) and overlaps it along that side.
    pub fn is_beside(&self, other: &Rect, direction: Direction) -> bool {
        let touches = |near: usize, far: usize| far == near || far == near + 1;
        let against = match direction {
            Direction::Right => touches(self.end_col(), other.col),
            Direction::Left => touches(other.end_col(), self.col),
            Direction::Down => touches(self.end_row(), other.row),
            Direction::Up => touches(other.end_row(), self.row),
        };
        against && self.overlap_along(other, direction) > 0
    }

    /// How many cells the two share along the side facing `direction`.
    pub fn overlap_along(&self, other: &Rect, direction: Direction) -> usize {
        let (a, b) = match direction {
            Direction::Left | Direction::Right => {
                ((self.row, self.end_row()), (other.row, other.end_row()))
            }
            Direction::Up | Direction::Down => {
                ((self.col, self.end_col()), (other.col, other.end_col()))
            }
        };
        b.1.min(a.1).saturating_sub(b.0.max(a.0))
    }

    /// Where this rectangle starts along a side facing `direction`: its row for left and
    /// right, its column for up and down.
    pub fn start_along(&self, direction: Direction) -> usize {
        match direction {
            Direction::Left | Direction::Right => self.row,
            Direction::Up | Direction::Down => self.col,
        }
    }

    /// Whether the cell (`col`, `row`) is inside.
    pub fn contains(&self, col: usize, row: usize) -> bool {
        (self.col..self.end_col()).contains(&col) && (self.row..self.end_row()).contains(&row)
    }
}
