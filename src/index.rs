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
//!
//! A class hash is a `u64` wherever a table numbers the class (its
//! `R(n, w, b)` below 2^63, as a database stores it). A variant of the
//! user's may put down more bishops than that numbers, 7 + 7 on the 105
//! squares of a class of 15x14 for one (R ≈ 3.1 × 10^20): its positions
//! are still named, by the same formula in `u128`
//! ([`DenseIndex::rank128`]), though no table of it can be built.

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
/// a sum of entries no larger than itself, so a rank whose index fits 64
/// bits ([`DenseIndex::fits_64`]) never reads a saturated entry.
static WIDE: [[u64; 129]; 129] = wide_table();

/// `EXACT[k][n]` = C(n, k) for n, k ≤ 128, every one of them: the largest,
/// C(128, 64), is below 2^125. The public hash of a class past 64 bits is
/// ranked with it.
static EXACT: [[u128; 129]; 129] = pascal();

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

/// Pascal's rule over C(n, k) for n, k ≤ 128, exact in 128 bits: the one
/// place the binomial tables (here and the kernel's) are computed.
const fn pascal() -> [[u128; 129]; 129] {
    let mut table = [[0u128; 129]; 129];
    let mut n = 0;
    while n <= 128 {
        table[0][n] = 1;
        let mut k = 1;
        while k <= n {
            table[k][n] = table[k - 1][n - 1] + if k < n { table[k][n - 1] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    table
}

/// [`pascal`]'s table cut to 64 bits, `u64::MAX` where C(n, k) does not fit.
pub(crate) const fn wide_table() -> [[u64; 129]; 129] {
    let exact = pascal();
    let mut table = [[0u64; 129]; 129];
    let mut k = 0;
    while k <= 128 {
        let mut n = 0;
        while n <= 128 {
            table[k][n] = if exact[k][n] > u64::MAX as u128 {
                u64::MAX
            } else {
                exact[k][n] as u64
            };
            n += 1;
        }
        k += 1;
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

/// C(n, k) for n, k ≤ 128, exactly.
///
/// ```
/// assert_eq!(bishops::index::binomial128(128, 64), 23_951_146_041_928_082_866_135_587_776_380_551_750);
/// assert_eq!(bishops::index::binomial128(64, 32), u128::from(bishops::index::binomial(64, 32)));
/// ```
#[inline]
pub fn binomial128(n: u32, k: u32) -> u128 {
    EXACT[k as usize][n as usize]
}

/// The integers hashes are computed in: `u64` for every class a table
/// numbers, `u128` for the public hash past that. Rank and unrank are
/// written once over it, and compiled for each.
trait HashInt: Copy + Ord + std::ops::AddAssign + std::ops::SubAssign + std::iter::Sum {
    /// C(n, k) in this integer (for `u64`, saturated where it does not fit).
    fn binomial(n: u32, k: u32) -> Self;
}

impl HashInt for u64 {
    #[inline(always)]
    fn binomial(n: u32, k: u32) -> u64 {
        binomial(n, k)
    }
}

impl HashInt for u128 {
    #[inline(always)]
    fn binomial(n: u32, k: u32) -> u128 {
        binomial128(n, k)
    }
}

#[inline(always)]
fn colex_rank_in<W: Word, H: HashInt>(set: Bitboard<W>) -> H {
    set.iter()
        .enumerate()
        .map(|(i, cell)| H::binomial(u32::from(cell), i as u32 + 1))
        .sum()
}

fn colex_unrank_in<W: Word, H: HashInt>(mut rank: H, k: u32) -> Bitboard<W> {
    let mut set = Bitboard::EMPTY;
    let mut top = W::BITS;
    for i in (1..=k).rev() {
        // The largest cell c < top with C(c, i) <= rank.
        let mut c = top - 1;
        while H::binomial(c, i) > rank {
            c -= 1;
        }
        set = set.with(c as u8);
        rank -= H::binomial(c, i);
        top = c;
    }
    set
}

#[inline(always)]
fn rank_within_in<W: Word, H: HashInt>(set: Bitboard<W>, within: Bitboard<W>) -> H {
    set.iter()
        .enumerate()
        .map(|(i, cell)| H::binomial((within & Bitboard::below(cell)).count(), i as u32 + 1))
        .sum()
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
    colex_rank_in(set)
}

/// The set of `k` cells with colexicographic rank `rank`: the inverse of
/// [`colex_rank`]. `rank` must be below C(`W::BITS`, k).
pub fn colex_unrank<W: Word>(rank: u64, k: u32) -> Bitboard<W> {
    colex_unrank_in(rank, k)
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
    rank_within_in(set, within)
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
/// Tables number a class by its `u64` hash ([`rank`](Self::rank),
/// [`unrank`](Self::unrank), [`len`](Self::len)), which is there when
/// R fits 64 bits ([`fits_64`](Self::fits_64)); the same hash in `u128`
/// ([`rank128`](Self::rank128), [`unrank128`](Self::unrank128),
/// [`len128`](Self::len128)) names the placements of every class.
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
/// assert_eq!(index.rank128(part), u128::from(hash));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct DenseIndex<W: Word = u64> {
    cells: u32,
    white: u32,
    black: u32,
    /// C(cells − white, black): how many black placements each white set has.
    per_white: u128,
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
    /// 128 bits; `None` otherwise.
    ///
    /// ```
    /// use bishops::DenseIndex;
    /// assert_eq!(DenseIndex::size(78, 6, 6), Some(256_851_595 * 156_238_908));
    /// // 7 + 7 bishops on a class of 15x14: past 64 bits.
    /// assert_eq!(DenseIndex::size(105, 7, 7), Some(314_881_255_304_318_102_400));
    /// assert_eq!(DenseIndex::size(128, 40, 40), None);
    /// ```
    pub fn size(cells: u32, white: u32, black: u32) -> Option<u128> {
        if cells > 128 || white + black > cells {
            return None;
        }
        binomial128(cells, white).checked_mul(binomial128(cells - white, black))
    }
}

impl<W: Word> DenseIndex<W> {
    /// The index of `white` and `black` bishops on `cells` cells, its
    /// placements in words `W`.
    ///
    /// # Panics
    ///
    /// When there are more cells than `W` holds, more bishops than cells,
    /// or more placements than 128 bits count ([`DenseIndex::size`] says).
    #[track_caller]
    pub fn in_words(cells: u32, white: u32, black: u32) -> DenseIndex<W> {
        assert!(
            cells <= W::BITS && DenseIndex::size(cells, white, black).is_some(),
            "{white}+{black} bishops on {cells} cells: no 128-bit hash in {}-bit words",
            W::BITS
        );
        DenseIndex {
            cells,
            white,
            black,
            per_white: binomial128(cells - white, black),
            word: std::marker::PhantomData,
        }
    }

    /// Whether R(n, w, b) fits 64 bits, so that the `u64` hash
    /// ([`rank`](Self::rank), [`unrank`](Self::unrank), [`len`](Self::len))
    /// is there.
    pub fn fits_64(&self) -> bool {
        self.len128() <= u128::from(u64::MAX)
    }

    /// R(n, w, b): the number of placements, the size of the hash space.
    ///
    /// # Panics
    ///
    /// When it does not fit 64 bits ([`fits_64`](Self::fits_64)).
    #[track_caller]
    pub fn len(&self) -> u64 {
        u64::try_from(self.len128()).expect("a class past 64 bits has no 64-bit hash: ask fits_64 first")
    }

    /// R(n, w, b) in 128 bits, for every class.
    pub fn len128(&self) -> u128 {
        binomial128(self.cells, self.white) * self.per_white
    }

    /// Whether there are no placements (never: the empty placement counts).
    pub fn is_empty(&self) -> bool {
        self.len128() == 0
    }

    /// The hash of `part`, which must have the right numbers of bishops on
    /// cells below `n`, in an index that [`fits_64`](Self::fits_64).
    pub fn rank(&self, part: Part<W>) -> u64 {
        debug_assert_eq!(part.white.count(), self.white);
        debug_assert_eq!(part.black.count(), self.black);
        debug_assert!(self.fits_64());
        let free = !part.white & Bitboard::below(self.cells as u8);
        colex_rank(part.white) * self.per_white as u64 + rank_within(part.black, free)
    }

    /// The placement with hash `hash`, which must be below [`len`](Self::len).
    pub fn unrank(&self, hash: u64) -> Part<W> {
        debug_assert!(self.fits_64());
        let per_white = self.per_white as u64;
        let white = colex_unrank(hash / per_white, self.white);
        let free = !white & Bitboard::below(self.cells as u8);
        let black = expand(colex_unrank(hash % per_white, self.black), free);
        Part { white, black }
    }

    /// The hash of `part` in 128 bits: [`rank`](Self::rank) where that is
    /// there, and the same formula past it.
    pub fn rank128(&self, part: Part<W>) -> u128 {
        debug_assert_eq!(part.white.count(), self.white);
        debug_assert_eq!(part.black.count(), self.black);
        let free = !part.white & Bitboard::below(self.cells as u8);
        colex_rank_in::<W, u128>(part.white) * self.per_white + rank_within_in::<W, u128>(part.black, free)
    }

    /// The placement with hash `hash`, which must be below
    /// [`len128`](Self::len128): the inverse of [`rank128`](Self::rank128).
    pub fn unrank128(&self, hash: u128) -> Part<W> {
        let white = colex_unrank_in(hash / self.per_white, self.white);
        let free = !white & Bitboard::below(self.cells as u8);
        let black = expand(colex_unrank_in(hash % self.per_white, self.black), free);
        Part { white, black }
    }
}

/// Combines class hashes in mixed radix, the first class most significant.
/// The sizes' product must fit 128 bits (a variant whose classes' does not
/// is refused when it is loaded).
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
pub fn combine(hashes: &[u128], sizes: &[u128]) -> u128 {
    hashes.iter().zip(sizes).fold(0, |acc, (&h, &size)| acc * size + h)
}

/// Splits a combined hash into class hashes: the inverse of [`combine`].
pub fn split(mut hash: u128, sizes: &[u128]) -> Vec<u128> {
    let mut hashes = vec![0; sizes.len()];
    for (slot, &size) in hashes.iter_mut().zip(sizes).rev() {
        *slot = hash % size;
        hash /= size;
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
            // The 128-bit hash is the same number, by the same formula.
            assert_eq!(index.rank128(part), u128::from(hash));
            assert_eq!(index.unrank128(u128::from(hash)), part);
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
    fn the_exact_binomials_keep_pascals_rule_and_agree_where_64_bits_hold() {
        for n in 1..=128 {
            for k in 1..=n {
                assert_eq!(binomial128(n, k), binomial128(n - 1, k - 1) + binomial128(n - 1, k));
                let narrow = binomial(n, k);
                if narrow == u64::MAX {
                    assert!(binomial128(n, k) >= u128::from(u64::MAX));
                } else {
                    assert_eq!(u128::from(narrow), binomial128(n, k));
                }
            }
        }
        // One value past 64 bits, worked out apart (Python's math.comb).
        assert_eq!(binomial128(100, 50), 100_891_344_545_564_193_334_812_497_256);
    }

    #[test]
    fn a_class_past_64_bits_hashes_every_placement_it_is_given_and_back() {
        // 20 + 20 bishops on 128 cells are past 128 bits: no index. 7 + 7
        // on the 105 cells of a class of 15x14 (R ≈ 3.1 × 10^20) have one.
        assert_eq!(DenseIndex::size(128, 20, 20), None);
        let index: DenseIndex<u128> = DenseIndex::in_words(105, 7, 7);
        assert!(!index.fits_64());
        let len = index.len128();
        assert_eq!(Some(len), DenseIndex::size(105, 7, 7));
        // The first hash is the lowest cells, white below black; the last
        // the highest, black below white.
        let first = index.unrank128(0);
        assert_eq!(first.white, Bitboard::below(7));
        assert_eq!(first.black, Bitboard::below(14) & !Bitboard::below(7));
        let last = index.unrank128(len - 1);
        assert_eq!(last.white, Bitboard::below(105) & !Bitboard::below(98));
        assert_eq!(last.black, Bitboard::below(98) & !Bitboard::below(91));
        let mut state = 2026;
        for _ in 0..20_000 {
            let hash = (u128::from(splitmix(&mut state)) << 64 | u128::from(splitmix(&mut state))) % len;
            let part = index.unrank128(hash);
            assert_eq!((part.white.count(), part.black.count()), (7, 7));
            assert!((part.white & part.black).is_empty());
            assert!(part.occupied().is_subset(Bitboard::below(105)));
            assert_eq!(index.rank128(part), hash);
        }
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
