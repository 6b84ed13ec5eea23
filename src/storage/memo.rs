//! What a connection worked out lately, kept so that it is not worked out
//! again: the cells it read, by position, and where the white sets it
//! placed lie.
//!
//! A question's confirmations look up some positions many times over (on
//! 11x10 about 3,500 lookups a question, of some 1,800 positions: the
//! position itself is a neighbour of every move, and two moves in either
//! order meet at the same position), and each lookup that is remembered
//! costs no ranking and no read of a table that mostly misses the
//! processor's caches ([`CellMemo`]). Far fewer white sets than positions
//! are placed: the neighbours a black move leads to share a white set, so
//! a white move from any of them leads to the same few white sets, each
//! placed once, not once for each ([`WhiteMemo`]).
//!
//! Both are direct-mapped ([`Memo`]): each key has one slot, found by its
//! hash, and a new entry takes the slot from whatever was there. They never
//! have to be cleared, as the file is never changed under the connection
//! that reads it, every cell kept came from a checked block, and a white
//! set's place follows from the set alone.

use hashbrown::DefaultHashBuilder;
use std::hash::{BuildHasher, Hash};

use crate::bitboard::Bitboard;
use crate::rules::Part;
use crate::tight::prefetch;

/// How many cells a [`CellMemo`] keeps: 8,192 slots of 40 bytes (80 on
/// boards past 64 squares a class), 320 KiB, four times the distinct positions a
/// question on 11x10 reads, so that few of them take another's slot.
pub(super) const REMEMBERED_CELLS: usize = 1 << 13;

/// How many white sets a [`WhiteMemo`] keeps: 1,024 slots of 40 bytes (80
/// past 64 squares a class), 40 KiB.
pub(super) const REMEMBERED_WHITES: usize = 1 << 10;

/// Values by key, `SLOTS` of them at most, one slot a key by hash (see
/// the [module](self)).
pub(super) struct Memo<K, V, const SLOTS: usize> {
    slots: Vec<Option<(K, V)>>,
    hasher: DefaultHashBuilder,
}

impl<K, V, const SLOTS: usize> Default for Memo<K, V, SLOTS> {
    fn default() -> Self {
        Memo {
            slots: Vec::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }
}

impl<K: Hash + Eq + Copy, V: Copy, const SLOTS: usize> Memo<K, V, SLOTS> {
    /// The slot of `key`.
    fn slot(&self, key: &K) -> usize {
        self.hasher.hash_one(key) as usize % SLOTS
    }

    /// The value remembered for `key`, if it is.
    pub(super) fn get(&self, key: &K) -> Option<V> {
        match self.slots.get(self.slot(key)) {
            Some(Some((kept, value))) if kept == key => Some(*value),
            _ => None,
        }
    }

    /// Asks for `key`'s slot to be brought into the processor's caches,
    /// so that a [`get`](Self::get) of it soon after need not wait: a
    /// confirmation's neighbours fall on slots all over the memo, which the
    /// reads of a large table push out of the caches.
    pub(super) fn prefetch(&self, key: &K) {
        if let Some(slot) = self.slots.get(self.slot(key)) {
            prefetch(slot);
        }
    }

    /// Remembers `value` for `key`, in place of what had its slot.
    pub(super) fn put(&mut self, key: K, value: V) {
        if self.slots.is_empty() {
            self.slots.resize(SLOTS, None);
        }
        let slot = self.slot(&key);
        self.slots[slot] = Some((key, value));
    }
}

/// The cells of the positions a connection read lately: by class number
/// and part.
pub(super) type CellMemo<W> = Memo<(u32, Part<W>), u8, REMEMBERED_CELLS>;

/// The white sets a connection placed lately, by class number and set:
/// the cells each leaves safe, and its colex rank.
pub(super) type WhiteMemo<W> = Memo<(u32, Bitboard<W>), (Bitboard<W>, u64), REMEMBERED_WHITES>;

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
        let mut memo = CellMemo::<u64>::default();
        assert_eq!(memo.get(&(0, part(1, 2))), None);
        memo.put((0, part(1, 2)), 7);
        assert_eq!(memo.get(&(0, part(1, 2))), Some(7));
        assert_eq!(memo.get(&(1, part(1, 2))), None);
        assert_eq!(memo.get(&(0, part(2, 1))), None);
        memo.put((0, part(1, 2)), 9);
        assert_eq!(memo.get(&(0, part(1, 2))), Some(9));
    }

    #[test]
    fn a_white_set_is_placed_only_for_its_own_class_and_set() {
        let mut whites = WhiteMemo::<u64>::default();
        whites.put((0, Bitboard(0b101)), (Bitboard(0b1010), 3));
        assert_eq!(whites.get(&(0, Bitboard(0b101))), Some((Bitboard(0b1010), 3)));
        assert_eq!(whites.get(&(1, Bitboard(0b101))), None);
        assert_eq!(whites.get(&(0, Bitboard(0b110))), None);
    }

    /// The sizes the constants' documentation gives.
    #[test]
    fn slots_are_the_sizes_documented() {
        use std::mem::size_of;
        assert_eq!(size_of::<Option<((u32, Part<u64>), u8)>>(), 40);
        assert_eq!(size_of::<Option<((u32, Part<u128>), u8)>>(), 80);
        assert_eq!(size_of::<Option<((u32, Bitboard<u64>), (Bitboard<u64>, u64))>>(), 40);
        assert_eq!(size_of::<Option<((u32, Bitboard<u128>), (Bitboard<u128>, u64))>>(), 80);
    }

    #[test]
    fn a_full_memo_keeps_the_latest_cell_of_each_slot_and_never_a_wrong_one() {
        let mut memo = CellMemo::<u64>::default();
        let n = 4 * REMEMBERED_CELLS as u64;
        for i in 0..n {
            memo.put(((i % 2) as u32, part(i, !i)), (i % 251) as u8);
        }
        let mut kept = 0;
        for i in 0..n {
            if let Some(cell) = memo.get(&((i % 2) as u32, part(i, !i))) {
                assert_eq!(cell, (i % 251) as u8);
                kept += 1;
            }
        }
        assert!(kept <= REMEMBERED_CELLS);
        // The last of them all is in its slot.
        assert_eq!(
            memo.get(&(((n - 1) % 2) as u32, part(n - 1, !(n - 1)))),
            Some(((n - 1) % 251) as u8)
        );
    }
}
