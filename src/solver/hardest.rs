//! The hardest positions of a class, kept while it is searched: the
//! lowest tight indices of each layer's positions (tight-index order is
//! public-hash order), and, for a class that mirrors the searched one, the
//! lowest public hashes of their mirror images there. A table whose codes
//! do not tell the last layer from older ones (the two-bit table) has no
//! other way to name them.

use crate::bitboard::Bitboard;
use crate::bitboard::Word;
use crate::index::{DenseIndex, binomial, colex_rank};
use crate::rules::Part;
use crate::symmetry::Mirror;
use crate::variant::ClassSpec;

use super::stats::HARDEST;

/// The lowest values offered, at most [`HARDEST`] of them, lowest first.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lowest {
    values: [u64; HARDEST],
    len: usize,
}

impl Lowest {
    /// Whether `value` would join the list.
    #[inline]
    pub(super) fn admits(&self, value: u64) -> bool {
        self.len < HARDEST || value < self.values[HARDEST - 1]
    }

    /// Adds `value` if it is among the lowest and not kept already,
    /// dropping the highest when the list is full. A value offered twice
    /// is one position offered twice: a search resumed inside a layer
    /// carries the lowest its side file recorded, and finds again those of
    /// them whose segment it had not written back.
    #[inline]
    pub(super) fn offer(&mut self, value: u64) {
        if !self.admits(value) || self.as_slice().contains(&value) {
            return;
        }
        if self.len < HARDEST {
            self.len += 1;
        }
        let mut k = self.len - 1;
        while k > 0 && self.values[k - 1] > value {
            self.values[k] = self.values[k - 1];
            k -= 1;
        }
        self.values[k] = value;
    }

    pub(super) fn merge(mut self, other: &Lowest) -> Lowest {
        for &v in other.as_slice() {
            self.offer(v);
        }
        self
    }

    pub(super) fn as_slice(&self) -> &[u64] {
        &self.values[..self.len]
    }
}

/// The public hashes of the mirror images of positions, in the class that
/// mirrors the searched one.
#[derive(Clone, Copy)]
pub(super) struct MirrorHashes<'a, W: Word = u64> {
    /// From the searched class's cells to the mirroring class's.
    mirror: &'a Mirror,
    /// The mirroring class's public hash.
    dense: &'a DenseIndex<W>,
    /// Black placements per white set in the public hash: C(n − w, b).
    per_white: u64,
}

impl<'a, W: Word> MirrorHashes<'a, W> {
    pub(super) fn new(mirror: &'a Mirror, dense: &'a DenseIndex<W>, spec: &ClassSpec<W>) -> MirrorHashes<'a, W> {
        let (white, black) = spec.counts();
        MirrorHashes {
            mirror,
            dense,
            per_white: binomial(spec.geometry.len() as u32 - white, black),
        }
    }

    /// The public hash of the image of `part`.
    pub(super) fn hash(&self, part: Part<W>) -> u64 {
        self.dense.rank(self.mirror.part(part))
    }

    /// A lower bound of the hash of the image of any position with white
    /// set `white`: the part of the hash the image's white set gives (its
    /// black set adds less than C(n − w, b)). Almost every position a layer
    /// finds has a white set whose image ranks above the hardest found so
    /// far, and is passed over without a whole hash.
    #[inline]
    pub(super) fn lower_bound(&self, white: Bitboard<W>) -> u64 {
        colex_rank(self.mirror.cells(white)) * self.per_white
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_keeps_the_lowest_ten() {
        let mut lowest = Lowest::default();
        for v in [50u64, 3, 99, 7, 7_000, 1, 42, 8, 13, 21, 34, 2, 5, 1_000_000] {
            lowest.offer(v);
        }
        assert_eq!(lowest.as_slice(), [1, 2, 3, 5, 7, 8, 13, 21, 34, 42]);
        let mut other = Lowest::default();
        for v in [0, 4, 100] {
            other.offer(v);
        }
        assert_eq!(lowest.merge(&other).as_slice(), [0, 1, 2, 3, 4, 5, 7, 8, 13, 21]);
        assert!(!lowest.admits(42) && lowest.admits(41));
    }

    /// A resumed layer offers again what it carried: a search on disk
    /// killed inside its layers once saved a checkpoint that kept a mirror
    /// image twice, which the next resume refused.
    #[test]
    fn lowest_keeps_a_value_once() {
        let mut lowest = Lowest::default();
        for v in [5u64, 9, 5, 1, 9, 1] {
            lowest.offer(v);
        }
        assert_eq!(lowest.as_slice(), [1, 5, 9]);
        let full: Lowest = (10..20).fold(Lowest::default(), |mut l, v| {
            l.offer(v);
            l
        });
        assert_eq!(full.merge(&full).as_slice(), full.as_slice());
        let mut again = full;
        again.offer(12);
        assert_eq!(again.as_slice(), (10..20).collect::<Vec<_>>());
    }
}
