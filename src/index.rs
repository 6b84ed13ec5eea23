//! The public position hash: a dense rank of every placement of one class.
//!
//! For a colour class of `n` cells holding `w` white and `b` black bishops,
//! the hash is a bijection between placements and `0..R(n, w, b)`, where
//! `R(n, w, b) = n! / (w! b! (n − w − b)!)`:
//!
//! ```text
//! hash = rank(W) · C(n − w, b) + rank(B′)
//! ```
//!
//! `rank` is the colexicographic rank of the combinatorial number system,
//! `rank({c₁ < c₂ < … < c_k}) = C(c₁, 1) + C(c₂, 2) + … + C(c_k, k)`, `W` is the
//! set of white cells and `B′` the black cells renumbered among the `n − w`
//! cells that hold no white bishop. Cells are numbered in row-then-column order
//! (see [`Geometry`](crate::Geometry)). A variant with both classes combines
//! the two class hashes in mixed radix, the even class (of `a1`) first:
//! `hash = hash_even · R_odd + hash_odd`.
//!
//! The hash is stable: databases and exports name positions by it, and
//! [`HASH_VERSION`] changes whenever it does.

use crate::bitboard::{Bitboard, Word};
use crate::rules::Part;

/// The version of the hash scheme, written into every database.
pub const HASH_VERSION: u32 = 1;

/// A one-line description of the hash scheme, written into every database.
pub const HASH_SCHEME: &str = "R(n,w,b): rank(W)*C(n-w,b) + rank(B among cells without white), colex combinatorial number system, cells in row-then-column order; classes in mixed radix, even class (a1) first";

/// `BINOMIAL[k][n]` = C(n, k) for n, k ≤ 64 (0 when k > n). Indexed by `k`
/// first: a rank reads one short row per bishop count, which stays in cache.
static BINOMIAL: [[u64; 65]; 65] = binomial_table();

/// `WIDE[k][n]` = C(n, k) for n, k ≤ 128, or `u64::MAX` where that does not
/// fit 64 bits (C(128, 64) is about 2^124). A rank of a set of `k` cells is
/// a sum of entries no larger than itself, so an index whose size fits 64
/// bits ([`DenseIndex::new`] checks) never reads a saturated entry.
static WIDE: [[u64; 129]; 129] = wide_table();

const fn binomial_table() -> [[u64; 65]; 65] {
    // The wide table's corner: C(64, 32) < 2^63, so none of it saturated.
    let wide = wide_table();
    let mut table = [[0u64; 65]; 65];
    let mut k = 0;
    while k <= 64 {
        let mut n = 0;
        while n <= 64 {
            table[k][n] = wide[k][n];
            n += 1;
        }
        k += 1;
    }
    table
}

/// Pascal's rule over C(n, k) for n, k ≤ 128, saturating at `u64::MAX`:
/// the one place the binomial tables (here and the kernel's) are computed.
pub(crate) const fn wide_table() -> [[u64; 129]; 129] {
    let mut table = [[0u64; 129]; 129];
    let mut n = 0;
    while n <= 128 {
        table[0][n] = 1;
        let mut k = 1;
        while k <= n {
            table[k][n] = table[k - 1][n - 1].saturating_add(if k < n { table[k][n - 1] } else { 0 });
            k += 1;
        }
        n += 1;
    }
    table
}

/// C(n, k), the number of `k`-subsets of `n` things, for n, k ≤ 128;
/// `u64::MAX` where it does not fit 64 bits.
///
/// # Examples
///
/// ```
/// assert_eq!(bishops::index::binomial(10, 2), 45);
/// assert_eq!(bishops::index::binomial(2, 3), 0);
/// assert_eq!(bishops::index::binomial(78, 6), 256_851_595);
/// assert_eq!(bishops::index::binomial(128, 64), u64::MAX);
/// ```
#[inline]
pub fn binomial(n: u32, k: u32) -> u64 {
    if n <= 64 {
        BINOMIAL[k as usize][n as usize]
    } else {
        WIDE[k as usize][n as usize]
    }
}

/// The colexicographic rank of a set among the sets of its size.
///
/// # Examples
///
/// ```
/// use bishops::{Bitboard, index};
///
/// // The 2-sets in colex order: {0,1} {0,2} {1,2} {0,3} …
/// assert_eq!(index::colex_rank(Bitboard(0b0101u64)), 1);
/// assert_eq!(index::colex_unrank(3, 2), Bitboard(0b1001u64));
/// ```
#[inline]
pub fn colex_rank<W: Word>(set: Bitboard<W>) -> u64 {
    set.iter()
        .enumerate()
        .map(|(i, cell)| binomial(u32::from(cell), i as u32 + 1))
        .sum()
}

/// The set of `k` cells with colexicographic rank `rank`: the inverse of
/// [`colex_rank`]. `rank` must be below C(`W::BITS`, k).
pub fn colex_unrank<W: Word>(mut rank: u64, k: u32) -> Bitboard<W> {
    let mut set = Bitboard::EMPTY;
    let mut top = W::BITS;
    for i in (1..=k).rev() {
        // The largest cell c < top with C(c, i) <= rank.
        let mut c = top - 1;
        while binomial(c, i) > rank {
            c -= 1;
        }
        set = set.with(c as u8);
        rank -= binomial(c, i);
        top = c;
    }
    set
}

/// The colex rank of `set`, a subset of `within`, among the subsets of
/// `within` of its size: `colex_rank(compress(set, within))`, computed with
/// one popcount per cell of `set`.
///
/// # Examples
///
/// ```
/// use bishops::{Bitboard, index};
///
/// let within = Bitboard(0b1011_0110u64);
/// let set = Bitboard(0b1000_0100u64);
/// assert_eq!(index::rank_within(set, within), index::colex_rank(index::compress(set, within)));
/// ```
#[inline]
pub fn rank_within<W: Word>(set: Bitboard<W>, within: Bitboard<W>) -> u64 {
    set.iter()
        .enumerate()
        .map(|(i, cell)| binomial((within & Bitboard::below(cell)).count(), i as u32 + 1))
        .sum()
}

/// Renumbers the cells of `set` (all inside `within`) as their positions
/// among the cells of `within`: a software `pext`.
pub fn compress<W: Word>(set: Bitboard<W>, within: Bitboard<W>) -> Bitboard<W> {
    let mut out = Bitboard::EMPTY;
    for (i, cell) in within.iter().enumerate() {
        if set.contains(cell) {
            out = out.with(i as u8);
        }
    }
    out
}

/// The inverse of [`compress`]: the cells of `within` at the positions in
/// `set`, a software `pdep`.
pub fn expand<W: Word>(set: Bitboard<W>, within: Bitboard<W>) -> Bitboard<W> {
    let mut out = Bitboard::EMPTY;
    for (i, cell) in within.iter().enumerate() {
        if set.contains(i as u8) {
            out = out.with(cell);
        }
    }
    out
}

/// The public hash of one colour class: `n` cells, `white` and `black`
/// bishops, every placement ranked into `0..R(n, white, black)`.
///
/// # Examples
///
/// ```
/// use bishops::{Bitboard, DenseIndex, Part};
///
/// let index = DenseIndex::new(10, 2, 2);
/// assert_eq!(index.len(), 1260);
/// let part = Part { white: Bitboard(0b11), black: Bitboard(0b11_0000_0000) };
/// let hash = index.rank(part);
/// assert_eq!(index.unrank(hash), part);
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct DenseIndex<W: Word = u64> {
    cells: u32,
    white: u32,
    black: u32,
    /// C(cells − white, black): how many black placements each white set has.
    per_white: u64,
    /// The word the placements' sets are kept in.
    word: std::marker::PhantomData<W>,
}

impl DenseIndex {
    /// The index of `white` and `black` bishops on `cells` cells, its
    /// placements in 64-bit words.
    ///
    /// # Panics
    ///
    /// As [`DenseIndex::in_words`].
    #[track_caller]
    pub fn new(cells: u32, white: u32, black: u32) -> DenseIndex {
        DenseIndex::in_words(cells, white, black)
    }

    /// R(n, w, b) for `white` and `black` bishops on `cells` cells, when
    /// there are at most 128 cells, no more bishops than cells and R fits
    /// 64 bits (it does for every board of at most 128 squares a class and
    /// 12 bishops a class); `None` otherwise.
    ///
    /// ```
    /// use bishops::DenseIndex;
    /// assert_eq!(DenseIndex::size(78, 6, 6), Some(256_851_595 * 156_238_908));
    /// assert_eq!(DenseIndex::size(128, 20, 20), None);
    /// ```
    pub fn size(cells: u32, white: u32, black: u32) -> Option<u64> {
        if cells > 128 || white + black > cells {
            return None;
        }
        let exact = |n: u32, k: u32| {
            // C(n, k) fits 64 bits exactly when the table holds less than MAX.
            Some(binomial(n, k)).filter(|&c| c != u64::MAX)
        };
        exact(cells, white)?.checked_mul(exact(cells - white, black)?)
    }
}

impl<W: Word> DenseIndex<W> {
    /// The index of `white` and `black` bishops on `cells` cells, its
    /// placements in words `W`.
    ///
    /// # Panics
    ///
    /// When there are more than 128 cells, more bishops than cells, or
    /// more placements than 64 bits count ([`DenseIndex::size`] says).
    #[track_caller]
    pub fn in_words(cells: u32, white: u32, black: u32) -> DenseIndex<W> {
        assert!(
            cells <= W::BITS && DenseIndex::size(cells, white, black).is_some(),
            "{white}+{black} bishops on {cells} cells: no 64-bit hash in {}-bit words",
            W::BITS
        );
        DenseIndex {
            cells,
            white,
            black,
            per_white: binomial(cells - white, black),
            word: std::marker::PhantomData,
        }
    }

    /// R(n, w, b): the number of placements, the size of the hash space.
    pub fn len(&self) -> u64 {
        binomial(self.cells, self.white) * self.per_white
    }

    /// Whether there are no placements (never: the empty placement counts).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hash of `part`, which must have the right numbers of bishops on
    /// cells below `n`.
    pub fn rank(&self, part: Part<W>) -> u64 {
        debug_assert_eq!(part.white.count(), self.white);
        debug_assert_eq!(part.black.count(), self.black);
        let free = !part.white & Bitboard::below(self.cells as u8);
        colex_rank(part.white) * self.per_white + rank_within(part.black, free)
    }

    /// The placement with hash `hash`, which must be below [`len`](Self::len).
    pub fn unrank(&self, hash: u64) -> Part<W> {
        let white = colex_unrank(hash / self.per_white, self.white);
        let free = !white & Bitboard::below(self.cells as u8);
        let black = expand(colex_unrank(hash % self.per_white, self.black), free);
        Part { white, black }
    }
}

/// Combines class hashes in mixed radix, the first class most significant.
///
/// # Examples
///
/// ```
/// use bishops::index::{combine, split};
///
/// let sizes = [1260, 1260];
/// assert_eq!(combine(&[2, 5], &sizes), 2 * 1260 + 5);
/// assert_eq!(split(2 * 1260 + 5, &sizes), vec![2, 5]);
/// ```
pub fn combine(hashes: &[u64], sizes: &[u64]) -> u128 {
    hashes
        .iter()
        .zip(sizes)
        .fold(0u128, |acc, (&h, &size)| acc * u128::from(size) + u128::from(h))
}

/// Splits a combined hash into class hashes: the inverse of [`combine`].
pub fn split(mut hash: u128, sizes: &[u64]) -> Vec<u64> {
    let mut hashes = vec![0; sizes.len()];
    for (slot, &size) in hashes.iter_mut().zip(sizes).rev() {
        *slot = (hash % u128::from(size)) as u64;
        hash /= u128::from(size);
    }
    hashes
}

/// splitmix64: a small, seedable sequence for drawing hashes at random
/// (the sampled checks).
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed for [`splitmix`] from the clock and the process: a different
/// one each run, for the draws no one outside the process should know.
pub fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

/// The [`splitmix`] state before the first draw of class `k` with `seed`.
pub fn sample_state(seed: u64, k: usize) -> u64 {
    seed ^ (k as u64).wrapping_mul(0x5851_f42d_4c95_7f2d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials_match_pascal() {
        assert_eq!(binomial(64, 32), 1_832_624_140_942_590_534);
        assert_eq!(binomial(21, 3), 1330);
        assert_eq!(binomial(0, 0), 1);
        for n in 1..=64 {
            for k in 1..=n {
                assert_eq!(binomial(n, k), binomial(n - 1, k - 1) + binomial(n - 1, k));
            }
        }
    }

    #[test]
    fn known_index_sizes() {
        assert_eq!(DenseIndex::new(10, 2, 2).len(), 1_260);
        assert_eq!(DenseIndex::new(14, 2, 2).len(), 6_006);
        assert_eq!(DenseIndex::new(21, 3, 3).len(), 1_085_280);
        assert_eq!(DenseIndex::new(27, 3, 3).len(), 5_920_200);
        assert_eq!(DenseIndex::new(36, 4, 4).len(), 2_118_223_800);
        assert_eq!(DenseIndex::new(44, 4, 4).len(), 12_406_283_890);
    }

    fn round_trip(index: DenseIndex) {
        let mut seen = vec![false; index.len() as usize];
        for hash in 0..index.len() {
            let part = index.unrank(hash);
            assert_eq!(part.white.count(), index.white);
            assert_eq!(part.black.count(), index.black);
            assert!((part.white & part.black).is_empty());
            assert!(part.occupied().is_subset(Bitboard::below(index.cells as u8)));
            assert_eq!(index.rank(part), hash);
            assert!(!std::mem::replace(&mut seen[hash as usize], true));
        }
    }

    #[test]
    fn round_trip_5x4_and_7x4() {
        round_trip(DenseIndex::new(10, 2, 2));
        round_trip(DenseIndex::new(14, 2, 2));
    }

    #[test]
    fn round_trip_7x6() {
        round_trip(DenseIndex::new(21, 3, 3));
    }

    #[test]
    fn round_trip_uneven_counts() {
        round_trip(DenseIndex::new(9, 1, 3));
        round_trip(DenseIndex::new(9, 4, 0));
        round_trip(DenseIndex::new(6, 0, 0));
    }

    #[test]
    fn colex_round_trips_on_large_cells() {
        for k in 0..=5 {
            let max = binomial(64, k);
            for rank in [0, 1, max / 3, max / 2, max - 1] {
                if rank < max {
                    let set: Bitboard = colex_unrank(rank, k);
                    assert_eq!(set.count(), k);
                    assert_eq!(colex_rank(set), rank);
                }
            }
        }
    }
}
