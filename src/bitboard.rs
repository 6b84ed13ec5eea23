//! Sets of cells of one colour class.

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, Not};

/// A set of cells of one colour class, one bit per cell.
///
/// Cells are the squares of a class numbered from 0 in row-then-column order
/// (see [`Geometry`](crate::Geometry)), so a class has at most 64 of them.
///
/// # Examples
///
/// ```
/// use bishops::Bitboard;
///
/// let set: Bitboard = [0u8, 3, 5].into_iter().collect();
/// assert_eq!(set.count(), 3);
/// assert!(set.contains(3));
/// assert_eq!(set.without(3).iter().collect::<Vec<_>>(), vec![0, 5]);
/// assert_eq!(set.first(), Some(0));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Bitboard(pub u64);

impl Bitboard {
    /// The empty set.
    pub const EMPTY: Bitboard = Bitboard(0);

    /// The set of cells `0..n`.
    pub fn below(n: u8) -> Bitboard {
        Bitboard(if n >= 64 { u64::MAX } else { (1u64 << n) - 1 })
    }

    /// The set holding only `cell`.
    pub fn single(cell: u8) -> Bitboard {
        Bitboard(1 << cell)
    }

    /// Whether `cell` is in the set.
    pub fn contains(self, cell: u8) -> bool {
        self.0 >> cell & 1 != 0
    }

    /// The set with `cell` added.
    #[must_use]
    pub fn with(self, cell: u8) -> Bitboard {
        Bitboard(self.0 | 1 << cell)
    }

    /// The set with `cell` removed.
    #[must_use]
    pub fn without(self, cell: u8) -> Bitboard {
        Bitboard(self.0 & !(1 << cell))
    }

    /// How many cells the set holds.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every cell of `self` is in `other`.
    pub fn is_subset(self, other: Bitboard) -> bool {
        self.0 & !other.0 == 0
    }

    /// The lowest cell, if any.
    pub fn first(self) -> Option<u8> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as u8)
    }

    /// The highest cell, if any.
    pub fn last(self) -> Option<u8> {
        (self.0 != 0).then(|| 63 - self.0.leading_zeros() as u8)
    }

    /// The cells in increasing order.
    pub fn iter(self) -> Cells {
        Cells(self.0)
    }
}

/// The cells of a [`Bitboard`] in increasing order.
#[derive(Clone, Debug)]
pub struct Cells(u64);

impl Iterator for Cells {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            return None;
        }
        let cell = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(cell)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Cells {}

impl IntoIterator for Bitboard {
    type Item = u8;
    type IntoIter = Cells;

    fn into_iter(self) -> Cells {
        self.iter()
    }
}

impl FromIterator<u8> for Bitboard {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Bitboard {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}

impl BitAnd for Bitboard {
    type Output = Bitboard;
    fn bitand(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 & rhs.0)
    }
}

impl BitOr for Bitboard {
    type Output = Bitboard;
    fn bitor(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 | rhs.0)
    }
}

impl BitXor for Bitboard {
    type Output = Bitboard;
    fn bitxor(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 ^ rhs.0)
    }
}

impl Not for Bitboard {
    type Output = Bitboard;
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}

impl BitAndAssign for Bitboard {
    fn bitand_assign(&mut self, rhs: Bitboard) {
        self.0 &= rhs.0;
    }
}

impl BitOrAssign for Bitboard {
    fn bitor_assign(&mut self, rhs: Bitboard) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a: Bitboard = [1u8, 2, 63].into_iter().collect();
        assert_eq!(a.count(), 3);
        assert_eq!(a.first(), Some(1));
        assert_eq!(a.last(), Some(63));
        assert!(a.with(7).contains(7));
        assert!(!a.without(2).contains(2));
        assert!(Bitboard::single(2).is_subset(a));
        assert!(!Bitboard::single(3).is_subset(a));
        assert_eq!(Bitboard::EMPTY.first(), None);
        assert_eq!(Bitboard::below(64).count(), 64);
        assert_eq!(Bitboard::below(3), Bitboard(0b111));
        assert_eq!(a.iter().len(), 3);
    }
}
