//! What a solved class table says as a whole: its histogram of remoteness
//! and its hardest positions.

use crate::bitboard::Word;
use crate::remoteness::{Cell, Remoteness};
use crate::tight::TightIndex;

/// How many of the hardest positions a solution keeps per class.
pub const HARDEST: usize = 10;

/// Facts about one solved class, computed from its table.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ClassStats {
    /// Legal positions.
    pub legal: u64,
    /// Legal positions that reach the goal.
    pub reachable: u64,
    /// `histogram[r]`: how many positions have remoteness `r`.
    pub histogram: Vec<u64>,
    /// Public hashes of up to [`HARDEST`] positions of the largest
    /// remoteness, lowest first.
    pub hardest: Vec<u64>,
}

impl ClassStats {
    /// Counts `cells`, the table of `index` in tight order.
    pub fn of<W: Word>(cells: &[u8], index: &TightIndex<W>) -> ClassStats {
        let mut histogram = [0u64; 256];
        for &byte in cells {
            histogram[usize::from(byte)] += 1;
        }
        let reachable_part = &histogram[..=usize::from(Cell::MAX_REMOTENESS)];
        let top = reachable_part.iter().rposition(|&n| n > 0);
        let histogram: Vec<u64> = top.map_or_else(Vec::new, |t| reachable_part[..=t].to_vec());
        let hardest = top.map_or_else(Vec::new, |t| {
            cells
                .iter()
                .enumerate()
                .filter(|&(_, &c)| usize::from(c) == t)
                .map(|(i, _)| index.to_hash(i as u64))
                .take(HARDEST)
                .collect()
        });
        ClassStats {
            legal: cells.len() as u64,
            reachable: histogram.iter().sum(),
            histogram,
            hardest,
        }
    }

    /// The largest remoteness of any position, if any reaches the goal.
    pub fn max_remoteness(&self) -> Option<Remoteness> {
        (!self.histogram.is_empty()).then(|| Remoteness(self.histogram.len() as u16 - 1))
    }
}
