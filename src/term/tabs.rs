//! Horizontal tab stops (HTS, TBC, HT, CHT, CBT).

#[derive(Clone, Debug)]
pub struct TabStops {
    stops: Vec<bool>,
}

const DEFAULT_INTERVAL: usize = 8;

impl TabStops {
    pub fn new(cols: usize) -> TabStops {
        TabStops { stops: (0..cols).map(|c| c % DEFAULT_INTERVAL == 0).collect() }
    }

    /// Keep the stops the program set; new columns get the default stops.
    pub(super) fn stops(&self) -> &[bool] {
        &self.stops
    }

    pub(super) fn from_stops(stops: Vec<bool>) -> TabStops {
        TabStops { stops }
    }

    pub fn resize(&mut self, cols: usize) {
        let old = self.stops.len();
        self.stops.resize(cols, false);
        for c in old..cols {
            self.stops[c] = c % DEFAULT_INTERVAL == 0;
        }
    }

    pub fn set(&mut self, col: usize, on: bool) {
        if let Some(stop) = self.stops.get_mut(col) {
            *stop = on;
        }
    }

    pub fn clear_all(&mut self) {
        self.stops.fill(false);
    }

    /// The next stop after `col`, or the last column.
    pub fn next(&self, col: usize) -> usize {
        let last = self.stops.len().saturating_sub(1);
        (col + 1..self.stops.len()).find(|&c| self.stops[c]).unwrap_or(last)
    }

    /// The previous stop before `col`, if there is one.
    pub fn prev(&self, col: usize) -> Option<usize> {
        (0..col.min(self.stops.len())).rev().find(|&c| self.stops[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_stops_every_eight_columns() {
        let tabs = TabStops::new(20);
        assert_eq!(tabs.next(0), 8);
        assert_eq!(tabs.next(8), 16);
        assert_eq!(tabs.next(16), 19);
        assert_eq!(tabs.prev(16), Some(8));
        assert_eq!(tabs.prev(3), Some(0));
    }

    #[test]
    fn cleared_and_set_stops() {
        let mut tabs = TabStops::new(20);
        tabs.clear_all();
        assert_eq!(tabs.prev(10), None);
        tabs.set(5, true);
        assert_eq!(tabs.next(0), 5);
        assert_eq!(tabs.next(5), 19);
        tabs.resize(30);
        assert_eq!(tabs.next(5), 24);
    }
}
