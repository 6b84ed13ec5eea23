//! The tight index: a rank of the legal placements of one class only.
//!
//! The public hash R(n, w, b) counts every way to put the bishops down, and
//! on large boards almost all of them are illegal (on 11x8, 176 million legal
//! placements among 12.4 billion hashes). The tight index numbers only the
//! legal ones, using the fact that for a white set `W` the legal black sets
//! are exactly the `b`-subsets of one set, `safe(W)` (see
//! [`safe_cells`]):
//!
//! ```text
//! tight(W, B) = offset[rank(W)] + rank of B among the b-subsets of safe(W)
//! offset[r]   = Σ over white sets W′ of rank below r of C(|safe(W′)|, b)
//! ```
//!
//! Both parts use the colex order of [`index`](crate::index), so the tight
//! index lists the legal placements in the same order as their public
//! hashes, and the index space splits into independent *blocks*, one per white
//! set, each a contiguous range.

use std::ops::Range;

use rayon::prelude::*;

use crate::bitboard::Bitboard;
use crate::board::Geometry;
use crate::index::{DenseIndex, binomial, colex_rank, colex_unrank, expand, rank_within};
use crate::rules::{Part, safe_cells};

/// The rank of the legal placements of `white` and `black` bishops on one
/// class, with its per-white-set tables.
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class, Geometry, Part, TightIndex};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// let index = TightIndex::new(&geo, 2, 2);
/// assert_eq!(index.len(), 100); // the legal positions of 5x4
/// let start = Part { white: geo.row(0), black: geo.row(4) };
/// let i = index.rank(start).unwrap();
/// assert_eq!(index.unrank(i), start);
/// ```
#[derive(Clone, Debug)]
pub struct TightIndex {
    dense: DenseIndex,
    white: u32,
    black: u32,
    /// `offsets[r]`: the first tight index of the white set of colex rank
    /// `r`; one more entry holds the total.
    offsets: Vec<u64>,
    /// `safe[r]`: the cells where black may stand beside white set `r`.
    safe: Vec<Bitboard>,
}

impl TightIndex {
    /// Builds the tables for `white` and `black` bishops on `geo`, in
    /// parallel: one safe set and one offset per white set.
    pub fn new(geo: &Geometry, white: u32, black: u32) -> TightIndex {
        let n = geo.len() as u32;
        let whites = binomial(n, white);
        let safe: Vec<Bitboard> = (0..whites as usize)
            .into_par_iter()
            .with_min_len(1024)
            .map(|r| safe_cells(geo, colex_unrank(r as u64, white)))
            .collect();
        let mut offsets = Vec::with_capacity(safe.len() + 1);
        let mut total = 0u64;
        for s in &safe {
            offsets.push(total);
            total += binomial(s.count(), black);
        }
        offsets.push(total);
        TightIndex {
            dense: DenseIndex::new(n, white, black),
            white,
            black,
            offsets,
            safe,
        }
    }

    /// The number of legal placements.
    pub fn len(&self) -> u64 {
        *self.offsets.last().expect("offsets end with the total")
    }

    /// Whether no placement is legal.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of white sets, which is the number of blocks.
    pub fn white_sets(&self) -> u64 {
        self.safe.len() as u64
    }

    /// The white bishops of each placement.
    pub fn white(&self) -> u32 {
        self.white
    }

    /// The black bishops of each placement.
    pub fn black(&self) -> u32 {
        self.black
    }

    /// The range of tight indices whose white set has colex rank `r`.
    pub fn block(&self, r: u64) -> Range<u64> {
        self.offsets[r as usize]..self.offsets[r as usize + 1]
    }

    /// The colex rank of the white set whose block holds tight index `i`
    /// (the last block starting at or before `i`, so never an empty one when
    /// `i` is below [`len`](Self::len)).
    pub fn block_of(&self, i: u64) -> u64 {
        (self.offsets.partition_point(|&o| o <= i) as u64).saturating_sub(1)
    }

    /// The safe cells of the white set of colex rank `r`.
    pub fn safe(&self, r: u64) -> Bitboard {
        self.safe[r as usize]
    }

    /// The tight index of a legal `part`, `None` when it is illegal.
    #[inline]
    pub fn rank(&self, part: Part) -> Option<u64> {
        self.rank_in_block(colex_rank(part.white), part.black)
    }

    /// The tight index of black set `black` in the block of white-set rank
    /// `r`, when it lies among the block's safe cells: [`rank`](Self::rank)
    /// with the white set's rank already known.
    #[inline]
    pub fn rank_in_block(&self, r: u64, black: Bitboard) -> Option<u64> {
        let safe = self.safe[r as usize];
        black
            .is_subset(safe)
            .then(|| self.offsets[r as usize] + rank_within(black, safe))
    }

    /// Asks the processor to start loading the tables of block `r`, which
    /// a [`rank_in_block`](Self::rank_in_block) will read soon: the
    /// searches rank positions in random blocks in batches, fetching the
    /// next ones' tables while they rank the ones already fetched.
    #[inline]
    pub(crate) fn prefetch_block(&self, r: u64) {
        prefetch(&self.offsets[r as usize]);
        prefetch(&self.safe[r as usize]);
    }

    /// The placement of tight index `i`, which must be below
    /// [`len`](Self::len).
    pub fn unrank(&self, i: u64) -> Part {
        // The last white set whose block starts at or before i.
        let r = self.offsets.partition_point(|&o| o <= i) as u64 - 1;
        self.unrank_in_block(r, i)
    }

    /// The placement of tight index `i`, which must lie in the block of
    /// white-set rank `r`: [`unrank`](Self::unrank) with the block already
    /// known.
    pub fn unrank_in_block(&self, r: u64, i: u64) -> Part {
        debug_assert!(self.block(r).contains(&i), "{i} is not in block {r}");
        let safe = self.safe[r as usize];
        Part {
            white: colex_unrank(r, self.white),
            black: expand(colex_unrank(i - self.offsets[r as usize], self.black), safe),
        }
    }

    /// The public hash of tight index `i`.
    pub fn to_hash(&self, i: u64) -> u64 {
        self.dense.rank(self.unrank(i))
    }

    /// The tight index of public hash `hash`, `None` when that placement is
    /// illegal.
    pub fn from_hash(&self, hash: u64) -> Option<u64> {
        self.rank(self.dense.unrank(hash))
    }

    /// Bytes the tables take in memory.
    pub fn table_bytes(&self) -> u64 {
        (self.offsets.len() * 8 + self.safe.len() * 8) as u64
    }
}

/// Asks the processor to start loading the cache line of `value` (a hint:
/// it changes no result). Only x86-64 is given the hint; elsewhere this does
/// nothing.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; it reads nothing the program
    // sees and is valid for any address, and SSE is part of every x86-64.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The `k`-subsets of a set of cells in colex order, which is the order of
/// [`rank_within`]: the `j`-th subset yielded has rank `j`.
///
/// # Examples
///
/// ```
/// use bishops::{Bitboard, tight::Subsets};
///
/// let all: Vec<Bitboard> = Subsets::new(Bitboard(0b1101), 2).collect();
/// assert_eq!(all, [Bitboard(0b0101), Bitboard(0b1001), Bitboard(0b1100)]);
/// ```
#[derive(Clone, Debug)]
pub struct Subsets {
    cells: [u8; 64],
    m: usize,
    picks: [u8; 64],
    k: usize,
    started: bool,
    /// The subset the picks stand for.
    set: Bitboard,
}

impl Subsets {
    /// The `k`-subsets of `within`.
    pub fn new(within: Bitboard, k: u32) -> Subsets {
        let mut cells = [0u8; 64];
        let mut m = 0;
        for cell in within {
            cells[m] = cell;
            m += 1;
        }
        let mut picks = [0u8; 64];
        for (i, p) in picks.iter_mut().enumerate() {
            *p = i as u8;
        }
        let mut subsets = Subsets {
            cells,
            m,
            picks,
            k: k as usize,
            started: false,
            set: Bitboard::EMPTY,
        };
        subsets.set = subsets.current();
        subsets
    }

    fn current(&self) -> Bitboard {
        self.picks[..self.k]
            .iter()
            .fold(Bitboard::EMPTY, |acc, &p| acc.with(self.cells[usize::from(p)]))
    }
}

impl Iterator for Subsets {
    type Item = Bitboard;

    #[inline(always)]
    fn next(&mut self) -> Option<Bitboard> {
        // Colex successor: most steps raise the lowest pick, which moves one
        // cell; this short path is inlined into the searches' block loops.
        if self.started && self.k > 1 {
            let p = usize::from(self.picks[0]);
            if p + 1 < usize::from(self.picks[1]) {
                self.picks[0] += 1;
                self.set = self.set.without(self.cells[p & 63]).with(self.cells[(p + 1) & 63]);
                return Some(self.set);
            }
        }
        self.step()
    }
}

impl Subsets {
    /// The rest of [`next`](Iterator::next): the first subset, a single
    /// pick, or a carry into the higher picks.
    #[cold]
    #[inline(never)]
    fn step(&mut self) -> Option<Bitboard> {
        if !self.started {
            self.started = true;
            return (self.k <= self.m).then_some(self.set);
        }
        // Raise the lowest pick that can rise, reset the ones below.
        for i in 0..self.k {
            let limit = if i + 1 < self.k {
                usize::from(self.picks[i + 1])
            } else {
                self.m
            };
            if usize::from(self.picks[i]) + 1 < limit {
                self.picks[i] += 1;
                for j in 0..i {
                    self.picks[j] = j as u8;
                }
                self.set = self.current();
                return Some(self.set);
            }
        }
        None
    }
}

/// Calls `f(upper, lows)` for the `k`-subsets of `within` in colex order,
/// grouped into *runs*: the sets `upper | low` for each `low` in `lows` in
/// turn, which are consecutive in colex order (their lowest cell varies
/// fastest). A search that visits a block's positions scans a run's cells
/// at once instead of stepping a [`Subsets`] through every position.
///
/// Each `low` is one cell, the cells of `within` below `upper`'s lowest;
/// when `k` is 0 there is one run, `upper` empty and `lows` one empty set.
///
/// # Examples
///
/// ```
/// use bishops::{Bitboard, tight::{Subsets, for_each_run}};
///
/// let within = Bitboard(0b1011_0110);
/// let mut sets = Vec::new();
/// for_each_run(within, 3, |upper, lows| sets.extend(lows.iter().map(|&low| upper | low)));
/// assert_eq!(sets, Subsets::new(within, 3).collect::<Vec<_>>());
/// ```
///
/// Always inlined: the searches call it from functions compiled for more
/// instructions than the baseline, and `f` must be compiled there too.
#[inline(always)]
pub fn for_each_run(within: Bitboard, k: u32, mut f: impl FnMut(Bitboard, &[Bitboard])) {
    let mut lows = [Bitboard::EMPTY; 64];
    let mut m = 0;
    for (slot, cell) in lows.iter_mut().zip(within) {
        *slot = Bitboard::single(cell);
        m += 1;
    }
    if k == 0 {
        f(Bitboard::EMPTY, &[Bitboard::EMPTY]);
        return;
    }
    let Some(lowest) = within.first() else {
        return;
    };
    for upper in Subsets::new(within.without(lowest), k - 1) {
        // The cells of `within` below the upper cells' lowest.
        let len = match upper.first() {
            Some(c) => (within & Bitboard::below(c)).count() as usize,
            None => m,
        };
        f(upper, &lows[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Class};

    fn check(rows: u32, cols: u32, white: u32, black: u32) {
        let geo = Geometry::new(Board::new(rows, cols).unwrap(), Class::Even);
        let tight = TightIndex::new(&geo, white, black);
        let dense = DenseIndex::new(geo.len() as u32, white, black);
        let mut next = 0;
        for hash in 0..dense.len() {
            let part = dense.unrank(hash);
            match tight.rank(part) {
                Some(i) => {
                    assert!(part.is_legal(&geo));
                    // Same order as the public hash, no gaps.
                    assert_eq!(i, next);
                    next += 1;
                    assert_eq!(tight.unrank(i), part);
                    assert_eq!(tight.to_hash(i), hash);
                    assert_eq!(tight.from_hash(hash), Some(i));
                }
                None => assert!(!part.is_legal(&geo)),
            }
        }
        assert_eq!(next, tight.len());
    }

    #[test]
    fn tight_index_numbers_exactly_the_legal_placements() {
        check(5, 4, 2, 2);
        check(7, 4, 2, 2);
        check(7, 6, 3, 3);
        check(6, 5, 1, 3);
    }

    #[test]
    fn known_legal_counts() {
        let count =
            |rows, cols, k| TightIndex::new(&Geometry::new(Board::new(rows, cols).unwrap(), Class::Even), k, k).len();
        assert_eq!(count(7, 6, 3), 26_566);
    }

    #[test]
    fn subsets_follow_rank_within() {
        let within = Bitboard(0b1011_0110_1101);
        for k in 0..=within.count() {
            let mut n = 0;
            for (j, set) in Subsets::new(within, k).enumerate() {
                assert_eq!(set.count(), k);
                assert!(set.is_subset(within));
                assert_eq!(rank_within(set, within), j as u64);
                n += 1;
            }
            assert_eq!(n, binomial(within.count(), k));
        }
        assert_eq!(Subsets::new(Bitboard(0b11), 3).count(), 0);
    }

    #[test]
    fn runs_are_the_subsets_in_order() {
        for within in [
            Bitboard::EMPTY,
            Bitboard(0b1),
            Bitboard(0b1011_0110_1101),
            Bitboard(u64::MAX),
            Bitboard(0xF0F0_0000_0000_000F),
        ] {
            for k in 0..=within.count().min(3) + 1 {
                let mut sets = Vec::new();
                for_each_run(within, k, |upper, lows| {
                    assert!(!lows.is_empty());
                    sets.extend(lows.iter().map(|&low| upper | low));
                });
                let expected: Vec<Bitboard> = Subsets::new(within, k).collect();
                assert_eq!(sets, expected, "{within:?} {k}");
            }
        }
    }
}
