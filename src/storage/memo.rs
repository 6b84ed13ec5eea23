//! The cells a connection read lately, by position: a question's
//! confirmations look up some positions many times over (on 11x10 about
//! 3,500 lookups a question, of some 1,800 positions: the position itself
//! is a neighbour of every move, and two moves in either order meet at the
//! same position), and each lookup that is remembered costs no ranking and
//! no read of a table that mostly misses the processor's caches.
//!
//! A [`CellMemo`] is direct-mapped: each position has one slot, found by
//! its hash, and a new cell takes the slot from whatever was there. It
//! never has to be cleared, as the file is never changed under the
//! connection that reads it and every cell it holds came from a checked
//! block.

use hashbrown::DefaultHashBuilder;
use std::hash::BuildHasher;

use crate::bitboard::Word;
use crate::rules::Part;

/// How many cells a [`CellMemo`] keeps: 8,192 slots of 32 bytes (64 on
/// boards past 64 squares a class), four times the distinct positions a
/// question on 11x10 reads, so that few of them take another's slot.
pub(super) const REMEMBERED_CELLS: usize = 1 << 13;

/// A cell read lately: the class number, the part, the cell.
type Slot<W> = Option<(u32, Part<W>, u8)>;

/// The cells of the positions a connection read lately, one slot each by
/// hash (see the [module](self)).
#[derive(Default)]
pub(super) struct CellMemo<W: Word> {
    slots: Vec<Slot<W>>,
    hasher: DefaultHashBuilder,
}

impl<W: Word> CellMemo<W> {
    /// The slot of part `part` of class `k`.
    fn slot(&self, k: usize, part: Part<W>) -> usize {
        self.hasher.hash_one((k, part)) as usize % REMEMBERED_CELLS
    }

    /// The cell remembered for part `part` of class `k`, if it is.
    pub(super) fn get(&self, k: usize, part: Part<W>) -> Option<u8> {
        match self.slots.get(self.slot(k, part)) {
            Some(&Some((at, kept, cell))) if at as usize == k && kept == part => Some(cell),
            _ => None,
        }
    }

    /// Remembers `cell` for part `part` of class `k`, in place of what
    /// had its slot.
    pub(super) fn put(&mut self, k: usize, part: Part<W>, cell: u8) {
        if self.slots.is_empty() {
            self.slots.resize(REMEMBERED_CELLS, None);
        }
        let slot = self.slot(k, part);
        self.slots[slot] = Some((k as u32, part, cell));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitboard::Bitboard;

    fn part(white: u64, black: u64) -> Part<u64> {
        Part {
            white: Bitboard(white),
            black: Bitboard(black),
        }
    }

    #[test]
    fn a_cell_is_given_back_only_for_its_own_class_and_part() {
        let mut memo = CellMemo::default();
        assert_eq!(memo.get(0, part(1, 2)), None);
        memo.put(0, part(1, 2), 7);
        assert_eq!(memo.get(0, part(1, 2)), Some(7));
        assert_eq!(memo.get(1, part(1, 2)), None);
        assert_eq!(memo.get(0, part(2, 1)), None);
        memo.put(0, part(1, 2), 9);
        assert_eq!(memo.get(0, part(1, 2)), Some(9));
    }

    #[test]
    fn a_full_memo_keeps_the_latest_cell_of_each_slot_and_never_a_wrong_one() {
        let mut memo = CellMemo::default();
        let n = 4 * REMEMBERED_CELLS as u64;
        for i in 0..n {
            memo.put((i % 2) as usize, part(i, !i), (i % 251) as u8);
        }
        let mut kept = 0;
        for i in 0..n {
            if let Some(cell) = memo.get((i % 2) as usize, part(i, !i)) {
                assert_eq!(cell, (i % 251) as u8);
                kept += 1;
            }
        }
        assert!(kept <= REMEMBERED_CELLS);
        // The last of them all is in its slot.
        assert_eq!(
            memo.get(((n - 1) % 2) as usize, part(n - 1, !(n - 1))),
            Some(((n - 1) % 251) as u8)
        );
    }
}
