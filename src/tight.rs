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

use crate::bitboard::{Bitboard, Word};
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
pub struct TightIndex<W: Word = u64> {
    dense: DenseIndex<W>,
    white: u32,
    black: u32,
    /// Where each white set's block starts.
    blocks: Blocks,
    /// `safe[r]`: the cells where black may stand beside white set `r`.
    safe: Vec<Bitboard<W>>,
}

/// How a [`TightIndex`] is cut into blocks, one per white set, whatever
/// word its sets are kept in: what a search's shares and checkpoints need
/// of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocks {
    /// `offsets[r]`: the first tight index of the white set of colex rank
    /// `r`; one more entry holds the total.
    offsets: Vec<u64>,
}

impl Blocks {
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
        self.offsets.len() as u64 - 1
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

    /// [`block_of`](Self::block_of) for a tight index `i` met soon after
    /// one of block `r`, as in a sorted run: found by galloping forward from
    /// `r`, in a few reads near it where a search of the whole table (23
    /// steps on 13x10, each a likely cache miss) would read far away. Any
    /// `i` is answered; one before block `r` by a search of the whole.
    pub fn block_of_after(&self, r: u64, i: u64) -> u64 {
        let offsets = &self.offsets;
        let mut low = r as usize;
        if offsets.get(low).is_none_or(|&o| o > i) {
            return self.block_of(i);
        }
        // offsets[low] <= i throughout; the block is low or after it.
        let mut step = 1;
        loop {
            let high = (low + step).min(offsets.len());
            if high == offsets.len() || offsets[high] > i {
                return (low + offsets[low..high].partition_point(|&o| o <= i) - 1) as u64;
            }
            (low, step) = (high, step * 2);
        }
    }
}

impl<W: Word> TightIndex<W> {
    /// Builds the tables for `white` and `black` bishops on `geo`, in
    /// parallel: one safe set and one offset per white set.
    pub fn new(geo: &Geometry<W>, white: u32, black: u32) -> TightIndex<W> {
        let n = geo.len() as u32;
        let whites = binomial(n, white);
        let safe: Vec<Bitboard<W>> = (0..whites as usize)
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
            dense: DenseIndex::in_words(n, white, black),
            white,
            black,
            blocks: Blocks { offsets },
            safe,
        }
    }

    /// The number of legal placements.
    pub fn len(&self) -> u64 {
        self.blocks.len()
    }

    /// Whether no placement is legal.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of white sets, which is the number of blocks.
    pub fn white_sets(&self) -> u64 {
        self.safe.len() as u64
    }

    /// How the index is cut into blocks.
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
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
        self.blocks.block(r)
    }

    /// The colex rank of the white set whose block holds tight index `i`
    /// (the last block starting at or before `i`, so never an empty one when
    /// `i` is below [`len`](Self::len)).
    pub fn block_of(&self, i: u64) -> u64 {
        self.blocks.block_of(i)
    }

    /// [`block_of`](Self::block_of) for an `i` met soon after one of block
    /// `r` ([`Blocks::block_of_after`]).
    pub fn block_of_after(&self, r: u64, i: u64) -> u64 {
        self.blocks.block_of_after(r, i)
    }

    /// The safe cells of the white set of colex rank `r`.
    pub fn safe(&self, r: u64) -> Bitboard<W> {
        self.safe[r as usize]
    }

    /// The tight index of a legal `part`, `None` when it is illegal.
    #[inline]
    pub fn rank(&self, part: Part<W>) -> Option<u64> {
        self.rank_in_block(colex_rank(part.white), part.black)
    }

    /// The tight index of black set `black` in the block of white-set rank
    /// `r`, when it lies among the block's safe cells: [`rank`](Self::rank)
    /// with the white set's rank already known.
    /// Always inlined, so that a search's loops compiled for an instruction
    /// set (the searches' BMI2 copies) count cells with its `popcnt`.
    #[inline(always)]
    pub fn rank_in_block(&self, r: u64, black: Bitboard<W>) -> Option<u64> {
        let safe = self.safe[r as usize];
        black
            .is_subset(safe)
            .then(|| self.blocks.offsets[r as usize] + rank_within(black, safe))
    }

    /// Asks the processor to start loading the tables of block `r`, which
    /// a [`rank_in_block`](Self::rank_in_block) will read soon: the
    /// searches rank positions in random blocks in batches, fetching the
    /// next ones' tables while they rank the ones already fetched.
    #[inline]
    pub(crate) fn prefetch_block(&self, r: u64) {
        prefetch(&self.blocks.offsets[r as usize]);
        prefetch(&self.safe[r as usize]);
    }

    /// The placement of tight index `i`, which must be below
    /// [`len`](Self::len).
    pub fn unrank(&self, i: u64) -> Part<W> {
        // The last white set whose block starts at or before i.
        let r = self.blocks.offsets.partition_point(|&o| o <= i) as u64 - 1;
        self.unrank_in_block(r, i)
    }

    /// The placement of tight index `i`, which must lie in the block of
    /// white-set rank `r`: [`unrank`](Self::unrank) with the block already
    /// known.
    pub fn unrank_in_block(&self, r: u64, i: u64) -> Part<W> {
        debug_assert!(self.block(r).contains(&i), "{i} is not in block {r}");
        let safe = self.safe[r as usize];
        Part {
            white: colex_unrank(r, self.white),
            black: expand(colex_unrank(i - self.blocks.offsets[r as usize], self.black), safe),
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
        (self.blocks.offsets.len() * 8 + self.safe.len() * size_of::<Bitboard<W>>()) as u64
    }
}

/// The number of white sets and of legal placements of `white` and `black`
/// bishops on `geo`, counted as [`TightIndex::new`] numbers them (one safe
/// set per white set, C(|safe|, black) placements in its block) without
/// keeping any table: for boards whose index would not fit in memory, or
/// that no search runs on yet.
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class, Geometry, TightIndex, tight};
///
/// let geo = Geometry::new(Board::new(7, 6).unwrap(), Class::Even);
/// assert_eq!(tight::legal_count(&geo, 3, 3), (1330, TightIndex::new(&geo, 3, 3).len()));
/// // 17x8 has 68 squares a class: its sets need 128-bit words.
/// let wide: Geometry<u128> = Geometry::in_words(Board::new(17, 8).unwrap(), Class::Even);
/// assert_eq!(tight::legal_count(&wide, 1, 1).0, 68);
/// ```
pub fn legal_count<W: Word>(geo: &Geometry<W>, white: u32, black: u32) -> (u64, u64) {
    let whites = binomial(geo.len() as u32, white);
    let legal = (0..whites as usize)
        .into_par_iter()
        .with_min_len(4096)
        .map(|r| binomial(safe_cells(geo, colex_unrank(r as u64, white)).count(), black))
        .sum();
    (whites, legal)
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
#[derive(Clone)]
pub struct Subsets<W: Word = u64> {
    cells: W::PerCell<u8>,
    m: usize,
    picks: W::PerCell<u8>,
    k: usize,
    started: bool,
    /// The subset the picks stand for.
    set: Bitboard<W>,
}

impl<W: Word> std::fmt::Debug for Subsets<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subsets")
            .field("cells", &&self.cells.as_ref()[..self.m])
            .field("k", &self.k)
            .field("set", &self.set)
            .finish()
    }
}

impl<W: Word> Subsets<W> {
    /// The `k`-subsets of `within`.
    pub fn new(within: Bitboard<W>, k: u32) -> Subsets<W> {
        let mut cells = W::per_cell(0u8);
        let mut m = 0;
        for cell in within {
            cells.as_mut()[m] = cell;
            m += 1;
        }
        let mut picks = W::per_cell(0u8);
        for (i, p) in picks.as_mut().iter_mut().enumerate() {
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

    fn current(&self) -> Bitboard<W> {
        self.picks.as_ref()[..self.k]
            .iter()
            .fold(Bitboard::EMPTY, |acc, &p| acc.with(self.cells.as_ref()[usize::from(p)]))
    }
}

impl<W: Word> Iterator for Subsets<W> {
    type Item = Bitboard<W>;

    #[inline(always)]
    fn next(&mut self) -> Option<Bitboard<W>> {
        // Colex successor: most steps raise the lowest pick, which moves one
        // cell; this short path is inlined into the searches' block loops.
        if self.started && self.k > 1 {
            let picks = self.picks.as_mut();
            let p = usize::from(picks[0]);
            if p + 1 < usize::from(picks[1]) {
                picks[0] += 1;
                // Cells are below `W::BITS`, which the mask tells the
                // compiler: no bounds checks.
                let mask = W::BITS as usize - 1;
                let cells = self.cells.as_ref();
                self.set = self.set.without(cells[p & mask]).with(cells[(p + 1) & mask]);
                return Some(self.set);
            }
        }
        self.step()
    }
}

impl<W: Word> Subsets<W> {
    /// The rest of [`next`](Iterator::next): the first subset, a single
    /// pick, or a carry into the higher picks.
    #[cold]
    #[inline(never)]
    fn step(&mut self) -> Option<Bitboard<W>> {
        if !self.started {
            self.started = true;
            return (self.k <= self.m).then_some(self.set);
        }
        // Raise the lowest pick that can rise, reset the ones below.
        for i in 0..self.k {
            let picks = self.picks.as_mut();
            let limit = if i + 1 < self.k {
                usize::from(picks[i + 1])
            } else {
                self.m
            };
            if usize::from(picks[i]) + 1 < limit {
                picks[i] += 1;
                for (j, pick) in picks[..i].iter_mut().enumerate() {
                    *pick = j as u8;
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
/// let within = Bitboard(0b1011_0110u64);
/// let mut sets = Vec::new();
/// for_each_run(within, 3, |upper, lows| sets.extend(lows.iter().map(|&low| upper | low)));
/// assert_eq!(sets, Subsets::new(within, 3).collect::<Vec<_>>());
/// ```
///
/// Always inlined: the searches call it from functions compiled for more
/// instructions than the baseline, and `f` must be compiled there too.
#[inline(always)]
pub fn for_each_run<W: Word>(within: Bitboard<W>, k: u32, mut f: impl FnMut(Bitboard<W>, &[Bitboard<W>])) {
    let mut lows = W::per_cell(Bitboard::<W>::EMPTY);
    let lows = lows.as_mut();
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

/// Calls `f` with `run` (a run of [`for_each_run`]) in pieces of at most 64
/// positions, so that a piece's matches fit a 64-bit mask: the run itself
/// when a word holds at most 64 cells, as it is decided at compile time.
#[inline(always)]
pub fn for_each_piece<W: Word>(run: &[Bitboard<W>], mut f: impl FnMut(&[Bitboard<W>])) {
    if W::BITS <= 64 {
        f(run);
    } else {
        for piece in run.chunks(64) {
            f(piece);
        }
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
    fn a_block_found_from_one_before_is_the_block_of_the_index() {
        // Empty blocks (3, 4, 6 and the last) among others of every size.
        let blocks = Blocks {
            offsets: vec![0, 1, 5, 9, 9, 9, 40, 40, 41, 100, 100],
        };
        let geo = Geometry::new(Board::new(7, 6).unwrap(), Class::Even);
        let tight = TightIndex::new(&geo, 3, 3);
        for blocks in [&blocks, &tight.blocks] {
            let (len, whites) = (blocks.len(), blocks.white_sets());
            for i in (0..len).step_by(((len / 500) as usize).max(1)).chain([len - 1]) {
                let expected = blocks.block_of(i);
                assert!(blocks.block(expected).contains(&i));
                for r in (0..whites)
                    .step_by(((whites / 40) as usize).max(1))
                    .chain([expected, whites])
                {
                    assert_eq!(blocks.block_of_after(r, i), expected, "block {r}, index {i}");
                }
            }
        }
    }

    #[test]
    fn tight_index_numbers_exactly_the_legal_placements() {
        check(5, 4, 2, 2);
        check(7, 4, 2, 2);
        check(7, 6, 3, 3);
        check(6, 5, 1, 3);
    }

    #[test]
    fn wide_words_count_and_number_what_narrow_ones_do() {
        for (rows, cols, w, b) in [(5, 4, 2, 2), (7, 6, 3, 3), (9, 6, 3, 2)] {
            let board = Board::new(rows, cols).unwrap();
            for class in Class::ALL {
                let narrow: Geometry = Geometry::new(board, class);
                let wide: Geometry<u128> = Geometry::in_words(board, class);
                let (a, b2) = (TightIndex::new(&narrow, w, b), TightIndex::new(&wide, w, b));
                assert_eq!(a.len(), b2.len());
                assert_eq!(legal_count(&wide, w, b), (a.white_sets(), a.len()));
                for i in (0..a.len()).step_by(7) {
                    let (p, q) = (a.unrank(i), b2.unrank(i));
                    assert_eq!((p.white.0 as u128, p.black.0 as u128), (q.white.0, q.black.0));
                    assert_eq!(b2.rank(q), Some(i));
                    assert_eq!(a.to_hash(i), b2.to_hash(i));
                }
            }
        }
    }

    #[test]
    fn a_class_of_more_than_64_cells_is_counted_and_numbered_in_128_bit_words() {
        // 17x8's a1 class: 68 cells. With one bishop a side the count is
        // direct: white anywhere, black on a cell the white bishop does not
        // see (and not on it).
        let geo: Geometry<u128> = Geometry::in_words(Board::new(17, 8).unwrap(), Class::Even);
        assert_eq!(geo.len(), 68);
        let direct: u64 = (0..68u8)
            .map(|c| u64::from(67 - geo.attacks(c, Bitboard::EMPTY).count()))
            .sum();
        let index = TightIndex::new(&geo, 1, 1);
        assert_eq!(index.len(), direct);
        assert_eq!(legal_count(&geo, 1, 1), (68, direct));
        // Numbering: every legal placement of two a side, ranked and back,
        // in the order of the public hash, on cells past 64 too.
        let index = TightIndex::new(&geo, 2, 2);
        let mut last = None;
        let mut high = 0;
        for i in (0..index.len()).step_by(997) {
            let part = index.unrank(i);
            assert!(part.is_legal(&geo));
            assert_eq!(index.rank(part), Some(i));
            let hash = index.to_hash(i);
            assert!(last.is_none_or(|l| l < hash));
            last = Some(hash);
            high += usize::from(part.occupied().last().is_some_and(|c| c >= 64));
        }
        assert!(high > 0, "no placement used a cell past 64");
    }

    #[test]
    fn known_legal_counts() {
        let count =
            |rows, cols, k| TightIndex::new(&Geometry::new(Board::new(rows, cols).unwrap(), Class::Even), k, k).len();
        assert_eq!(count(7, 6, 3), 26_566);
    }

    #[test]
    fn subsets_follow_rank_within() {
        let within = Bitboard(0b1011_0110_1101u64);
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
        assert_eq!(Subsets::new(Bitboard(0b11u64), 3).count(), 0);
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
