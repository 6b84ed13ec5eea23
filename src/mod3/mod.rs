//! Remoteness mod 3: the packed table of the two-bit search, and the exact
//! answers it stands for.
//!
//! [`Mod3Table`] holds the remoteness mod 3 of every position in 2 bits,
//! with the word-at-a-time tests on it that the search, its checkpoints and
//! the databases share; [`exact`] recovers exact values from it by descent,
//! without trusting it. The solver fills such tables; storage, `check` and
//! the query API read them, so they sit below all of those.

pub mod exact;
pub mod file;
pub mod fold;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Result;

use crate::bitboard::{Bitboard, Word};
use crate::remoteness::Cell;
use crate::tight::{TightIndex, for_each_piece, for_each_run};

/// The code of a position no layer has reached: left so, it is unreachable.
pub(crate) const UNSEEN: u8 = 3;

/// Positions per 64-bit word of a [`Mod3Table`].
pub(crate) const PER_WORD: u64 = 32;

/// Every other bit of a word: bit 0 of each 2-bit code.
const LOW_BITS: u64 = 0x5555_5555_5555_5555;

/// The remoteness mod 3 of each position of a class, wherever it is kept:
/// in memory ([`Mod3Table`]), or in a file read a segment at a time and
/// checked as it is read ([`Mod3File`](file::Mod3File), what a search on disk leaves). The
/// exact values ([`exact`]) and the databases are worked out from either.
///
/// Any number of threads may read at once.
///
/// ```
/// use bishops::mod3::{Mod3Table, Residues};
///
/// let mut table = Mod3Table::new(40);
/// table.set(33, Some(2));
/// assert_eq!(Residues::get(&table, 33), Some(2));
/// // Words 1 and up, 32 codes each: position 33 is the second code of word 1.
/// let words = table.words(1..2);
/// assert_eq!(words[0] >> 2 & 3, 2);
/// ```
pub trait Residues: Sync {
    /// Positions in the table.
    fn len(&self) -> u64;

    /// Whether it holds no position.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The remoteness mod 3 of position `i`, `None` when it is
    /// unreachable. A table in a file whose read failed answers `None`
    /// and keeps the failure for [`fault`](Self::fault).
    ///
    /// # Panics
    ///
    /// When `i` is not below [`len`](Self::len).
    fn get(&self, i: u64) -> Option<u8>;

    /// Words `words` of the table, 32 codes each as [`Mod3Table`] packs
    /// them (position `i` in bits `2·(i mod 32)` of word `i / 32`): a
    /// block's codes read at once, borrowed from a table in memory.
    ///
    /// # Panics
    ///
    /// When the words end past the table's.
    fn words(&self, words: Range<u64>) -> Cow<'_, [u64]>;

    /// The codes of positions `range`, packed four a byte as
    /// [`Mod3Table::pack_range`] packs them: a block of the residues
    /// layout.
    ///
    /// # Panics
    ///
    /// When the range ends beyond [`len`](Self::len).
    fn pack_range(&self, range: Range<u64>) -> Vec<u8> {
        assert!(
            range.end <= self.len(),
            "positions {range:?} of a table of {}",
            self.len()
        );
        let first = range.start / PER_WORD;
        let words = self.words(first..code_words(range.end).max(first));
        pack(&words, range.start - first * PER_WORD..range.end - first * PER_WORD)
    }

    /// Tells the table that the positions `positions` are about to be read
    /// in order, block by block, by many threads: a table that answers a
    /// run of positions much faster when it has made them ready first
    /// (a folded table unfolds a band of them, [`fold::Folded::with_bands`])
    /// makes them ready here, where no other reader is waiting on it. The
    /// answers are the same either way.
    fn prepare(&self, positions: Range<u64>) {
        let _ = positions;
    }

    /// The first read of the table that failed, if any: its answers since
    /// are not to be trusted, and nothing is to be written from them.
    ///
    /// # Errors
    ///
    /// That failure.
    fn fault(&self) -> Result<()> {
        Ok(())
    }
}

/// The codes of positions `range` of the words `words`, packed four a byte
/// from the low bits, the last byte padded with code 3.
fn pack(words: &[u64], range: Range<u64>) -> Vec<u8> {
    let len = range.end.saturating_sub(range.start);
    let bit = |b: u64| -> u64 {
        // Bits b.. of the table, at least 8 of them, padded with ones.
        let (w, shift) = ((b / 64) as usize, b % 64);
        let word = |w: usize| words.get(w).copied().unwrap_or(u64::MAX);
        let high = if shift == 0 { 0 } else { word(w + 1) << (64 - shift) };
        word(w) >> shift | high
    };
    let mut bytes: Vec<u8> = (0..len.div_ceil(4))
        .map(|j| bit(2 * (range.start + 4 * j)) as u8)
        .collect();
    if !len.is_multiple_of(4) {
        let last = bytes.len() - 1;
        bytes[last] |= 0xff << (2 * (len % 4));
    }
    bytes
}

impl Residues for Mod3Table {
    fn len(&self) -> u64 {
        self.len
    }

    #[inline]
    fn get(&self, i: u64) -> Option<u8> {
        Mod3Table::get(self, i)
    }

    fn words(&self, words: Range<u64>) -> Cow<'_, [u64]> {
        Cow::Borrowed(&self.words[words.start as usize..words.end as usize])
    }

    fn pack_range(&self, range: Range<u64>) -> Vec<u8> {
        Mod3Table::pack_range(self, range)
    }
}

/// A packed table of remoteness mod 3: 2 bits per position, 4 positions per
/// byte. Position `i` is bits `2·(i mod 4)` and up of byte `i / 4`; code 3
/// means unreachable (and pads the last byte), 0 to 2 the remoteness mod 3.
///
/// # Examples
///
/// ```
/// use bishops::mod3::Mod3Table;
///
/// let mut table = Mod3Table::new(5);
/// assert_eq!(table.get(4), None);
/// table.set(4, Some(38 % 3));
/// table.set(0, Some(0));
/// assert_eq!(table.get(4), Some(2));
/// let bytes: Vec<u8> = table.bytes().collect();
/// assert_eq!(bytes, [0b1111_1100, 0b1111_1110]);
/// assert_eq!(Mod3Table::from_bytes(&bytes, 5), Some(table));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mod3Table {
    /// Position `i` is bits `2·(i mod 32)` of word `i / 32`, which is the
    /// byte layout above when the words are read little-endian.
    words: Vec<u64>,
    len: u64,
}

impl Mod3Table {
    /// A table of `len` positions, all unreachable.
    pub fn new(len: u64) -> Mod3Table {
        Mod3Table {
            words: vec![u64::MAX; len.div_ceil(PER_WORD) as usize],
            len,
        }
    }

    /// The table of a byte table (one [`Cell`] per position): each
    /// remoteness mod 3, unreachable where the cell is.
    pub fn from_cells(cells: &[u8]) -> Mod3Table {
        let mut table = Mod3Table::new(cells.len() as u64);
        for (i, &c) in cells.iter().enumerate() {
            table.set(i as u64, Cell(c).remoteness().map(|r| (r.0 % 3) as u8));
        }
        table
    }

    /// Positions in the table.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the table holds no position.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The remoteness mod 3 of position `i`, `None` when it is unreachable.
    ///
    /// # Panics
    ///
    /// When `i` is not below [`len`](Self::len).
    #[inline]
    pub fn get(&self, i: u64) -> Option<u8> {
        assert!(i < self.len, "position {i} of a table of {}", self.len);
        let code = (self.words[(i / PER_WORD) as usize] >> (2 * (i % PER_WORD))) as u8 & 3;
        (code != UNSEEN).then_some(code)
    }

    /// Sets the remoteness mod 3 of position `i` (`None`: unreachable).
    ///
    /// # Panics
    ///
    /// When `i` is not below [`len`](Self::len).
    pub fn set(&mut self, i: u64, residue: Option<u8>) {
        assert!(i < self.len, "position {i} of a table of {}", self.len);
        let code = residue.map_or(UNSEEN, |r| r % 3);
        let shift = 2 * (i % PER_WORD);
        let word = &mut self.words[(i / PER_WORD) as usize];
        *word = *word & !(3 << shift) | u64::from(code) << shift;
    }

    /// The packed bytes, for storage.
    pub fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take(self.len.div_ceil(4) as usize)
    }

    /// The codes of positions `range`, packed as [`bytes`](Self::bytes)
    /// packs the whole table (4 a byte from the low bits, the last byte
    /// padded with code 3): a block of the residues layout, cut from the
    /// words eight bits at a time.
    ///
    /// # Panics
    ///
    /// When the range ends beyond [`len`](Self::len).
    ///
    /// ```
    /// use bishops::mod3::Mod3Table;
    ///
    /// let mut table = Mod3Table::new(40);
    /// for i in 0..40 {
    ///     table.set(i, Some((i % 3) as u8));
    /// }
    /// let packed = table.pack_range(33..38);
    /// assert_eq!(packed, [0b00_10_01_00, 0b11_11_11_01]);
    /// ```
    pub fn pack_range(&self, range: std::ops::Range<u64>) -> Vec<u8> {
        assert!(range.end <= self.len, "positions {range:?} of a table of {}", self.len);
        pack(&self.words, range)
    }

    /// The table of `len` positions packed in `bytes`, as [`bytes`](Self::bytes)
    /// gives them; `None` when the length does not match.
    pub fn from_bytes(bytes: &[u8], len: u64) -> Option<Mod3Table> {
        if bytes.len() as u64 != len.div_ceil(4) {
            return None;
        }
        let words = bytes
            .chunks(8)
            .map(|chunk| {
                let mut word = [0xffu8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                u64::from_le_bytes(word)
            })
            .collect();
        let mut table = Mod3Table { words, len };
        // Whatever the padding held, it reads as unreachable.
        if !len.is_multiple_of(PER_WORD) {
            let last = table.words.len() - 1;
            table.words[last] |= u64::MAX << (2 * (len % PER_WORD));
        }
        Some(table)
    }

    /// The table of `len` positions whose codes are `words`, 32 a word as
    /// [`Mod3Table`] keeps them (a search's table, taken over whole).
    ///
    /// # Panics
    ///
    /// When there are not `len / 32` words, rounded up.
    pub(crate) fn from_words(words: Vec<u64>, len: u64) -> Mod3Table {
        assert_eq!(words.len() as u64, code_words(len), "words of a table of {len}");
        Mod3Table { words, len }
    }

    /// The table's words, 32 codes each.
    #[cfg(test)]
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// How many positions hold each code: residues 0, 1, 2, then unreachable.
    pub fn counts(&self) -> [u64; 4] {
        let mut counts = [0u64; 4];
        for i in 0..self.len {
            counts[usize::from(self.get(i).unwrap_or(UNSEEN))] += 1;
        }
        counts
    }
}

/// The codes of positions `base..` of a two-bit table, in atomic words that
/// the threads of a layer read and write at once: a whole table (`base`
/// 0) or one worker's share of it (from the first position of its range).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Codes<'a> {
    words: &'a [AtomicU64],
    base: u64,
}

impl<'a> Codes<'a> {
    /// The codes in `words` of positions `base` on.
    pub(crate) fn new(words: &'a [AtomicU64], base: u64) -> Codes<'a> {
        Codes { words, base }
    }

    /// The word holding position `i`'s code.
    #[inline]
    pub(crate) fn word(&self, i: u64) -> &'a AtomicU64 {
        &self.words[((i - self.base) / PER_WORD) as usize]
    }

    /// The code of position `i`.
    #[inline]
    pub(crate) fn code(&self, i: u64) -> u8 {
        (self.word(i).load(Ordering::Relaxed) >> (2 * ((i - self.base) % PER_WORD))) as u8 & 3
    }

    /// Writes residue `residue` into position `i`, which must be unseen or
    /// hold `residue` already; whether it was unseen. Two threads writing
    /// one position write the same residue, and only one sees it unseen.
    #[inline]
    pub(crate) fn write(&self, i: u64, residue: u8) -> bool {
        let shift = 2 * ((i - self.base) % PER_WORD);
        let keep = !(3u64 << shift) | u64::from(residue) << shift;
        let old = self.word(i).fetch_and(keep, Ordering::Relaxed);
        (old >> shift) & 3 == u64::from(UNSEEN)
    }

    /// Bit `k` set when position `start + k` (`k` below `len`, at most 64)
    /// has code `want`.
    #[inline(always)]
    pub(crate) fn matching(&self, start: u64, len: usize, want: u8) -> u64 {
        let bit = 2 * (start - self.base);
        let (w, shift) = ((bit / 64) as usize, (bit % 64) as u32);
        let word = |k: usize| self.words.get(k).map_or(u64::MAX, |c| c.load(Ordering::Relaxed));
        let mut bits = (u128::from(word(w)) | u128::from(word(w + 1)) << 64) >> shift;
        if shift as usize + 2 * len > 128 {
            bits |= u128::from(word(w + 2)) << (128 - shift);
        }
        let low = u64::from(squeeze(equal_codes(bits as u64, want)));
        let high = u64::from(squeeze(equal_codes((bits >> 64) as u64, want)));
        let mask = low | high << 32;
        if len >= 64 { mask } else { mask & ((1 << len) - 1) }
    }

    /// Calls `f(i, black)` for every position `i` of block `r` of `index`,
    /// whose safe cells are `safe`, with code `want`: a run of the colex
    /// enumeration at a time ([`for_each_run`]), whose codes are tested
    /// together, a black set made only for those that match.
    #[inline(always)]
    pub(crate) fn scan<W: Word>(
        &self,
        index: &TightIndex<W>,
        r: u64,
        safe: Bitboard<W>,
        want: u8,
        mut f: impl FnMut(u64, Bitboard<W>),
    ) {
        let mut start = index.block(r).start;
        for_each_run(
            safe,
            index.black(),
            #[inline(always)]
            |upper, lows| {
                for_each_piece(
                    lows,
                    #[inline(always)]
                    |lows| {
                        let mut hits = self.matching(start, lows.len(), want);
                        while hits != 0 {
                            let k = hits.trailing_zeros() as usize;
                            hits &= hits - 1;
                            f(start + k as u64, upper | lows[k]);
                        }
                        start += lows.len() as u64;
                    },
                );
            },
        );
    }
}

/// The positions of `word` (32 codes) whose code is `want`, as bit 0 of
/// each 2-bit field.
#[inline]
pub(crate) fn equal_codes(word: u64, want: u8) -> u64 {
    let x = word ^ (u64::from(want & 3) * LOW_BITS);
    !(x | x >> 1) & LOW_BITS
}

/// The even bits of `x`, packed: bit `2i` to bit `i`.
#[inline]
pub(crate) fn squeeze(x: u64) -> u32 {
    let mut x = x & LOW_BITS;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x >> 4) & 0x00ff_00ff_00ff_00ff;
    x = (x | x >> 8) & 0x0000_ffff_0000_ffff;
    (x | x >> 16) as u32
}

/// How many of the positions `range` of the table `words` (32 codes a
/// word, read by `load`) hold code `want`.
pub(crate) fn count_codes<T>(words: &[T], load: impl Fn(&T) -> u64, range: std::ops::Range<u64>, want: u8) -> u64 {
    if range.is_empty() {
        return 0;
    }
    let (first, last) = (range.start / PER_WORD, (range.end - 1) / PER_WORD);
    (first..=last)
        .map(|w| {
            let mut mask = equal_codes(load(&words[w as usize]), want);
            if w == first {
                mask &= u64::MAX << (2 * (range.start % PER_WORD));
            }
            if w == last && !range.end.is_multiple_of(PER_WORD) {
                mask &= u64::MAX >> (64 - 2 * (range.end % PER_WORD));
            }
            u64::from(mask.count_ones())
        })
        .sum()
}

/// Words of the table of `legal` positions.
pub fn code_words(legal: u64) -> u64 {
    legal.div_ceil(PER_WORD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoteness::Cell;

    #[test]
    fn mod3_table_packs_four_positions_a_byte() {
        for len in [0u64, 1, 3, 4, 31, 32, 33, 64, 100] {
            let mut table = Mod3Table::new(len);
            assert_eq!(table.len(), len);
            assert!((0..len).all(|i| table.get(i).is_none()));
            for i in 0..len {
                table.set(i, (i % 5 != 4).then_some((i % 7 % 3) as u8));
            }
            for i in 0..len {
                assert_eq!(table.get(i), (i % 5 != 4).then_some((i % 7 % 3) as u8), "{len} {i}");
            }
            let bytes: Vec<u8> = table.bytes().collect();
            assert_eq!(bytes.len() as u64, len.div_ceil(4));
            for i in 0..len {
                let code = bytes[(i / 4) as usize] >> (2 * (i % 4)) & 3;
                assert_eq!(code, table.get(i).unwrap_or(3));
            }
            assert_eq!(Mod3Table::from_bytes(&bytes, len).as_ref(), Some(&table));
            assert_eq!(Mod3Table::from_bytes(&bytes, len + 4), None);
            let counts = table.counts();
            assert_eq!(counts.iter().sum::<u64>(), len);
            assert_eq!(counts[3], (0..len).filter(|i| i % 5 == 4).count() as u64);
        }
        // Any range packs as the codes one by one would.
        let mut table = Mod3Table::new(200);
        for i in 0..200 {
            table.set(i, (i % 7 != 3).then_some((i * i % 3) as u8));
        }
        for (start, end) in [(0, 0), (0, 1), (3, 9), (31, 97), (64, 128), (130, 200), (199, 200)] {
            let codes = (start..end).map(|i| table.get(i).unwrap_or(3)).collect::<Vec<u8>>();
            let mut expected = vec![0xffu8; codes.len().div_ceil(4)];
            for (j, c) in codes.iter().enumerate() {
                expected[j / 4] &= !(3 << (2 * (j % 4)));
                expected[j / 4] |= c << (2 * (j % 4));
            }
            assert_eq!(table.pack_range(start..end), expected, "{start}..{end}");
        }
        // Padding reads as unreachable whatever it holds.
        let table = Mod3Table::from_bytes(&[0b0000_0001], 1).unwrap();
        assert_eq!(table.get(0), Some(1));
        assert_eq!(table.counts(), [0, 1, 0, 0]);
    }

    #[test]
    fn from_cells_keeps_remoteness_mod_3() {
        let table = Mod3Table::from_cells(&[0, 1, 2, 3, 38, Cell::UNREACHABLE.0]);
        let got: Vec<Option<u8>> = (0..6).map(|i| table.get(i)).collect();
        assert_eq!(got, [Some(0), Some(1), Some(2), Some(0), Some(2), None]);
    }

    #[test]
    fn codes_are_matched_and_counted_a_word_at_a_time() {
        let mut table = Mod3Table::new(300);
        for i in 0..300 {
            table.set(i, (i % 7 != 3).then_some((i * i % 3) as u8));
        }
        let codes: Vec<AtomicU64> = table.words().iter().map(|&w| AtomicU64::new(w)).collect();
        let whole = Codes::new(&codes, 0);
        let code = |i: u64| table.get(i).unwrap_or(UNSEEN);
        for want in 0..4u8 {
            for (start, len) in [
                (0, 1),
                (0, 64),
                (3, 64),
                (31, 33),
                (32, 64),
                (60, 5),
                (200, 64),
                (236, 64),
                (299, 1),
            ] {
                let expected = (0..len).fold(0u64, |m, k| m | u64::from(code(start + k as u64) == want) << k);
                assert_eq!(whole.matching(start, len, want), expected, "{start} {len} {want}");
                // A share of the table from its third word on reads alike.
                if start >= 2 * PER_WORD {
                    let share = Codes::new(&codes[2..], 2 * PER_WORD);
                    assert_eq!(share.matching(start, len, want), expected, "{start} {len} {want}");
                }
            }
            for (start, end) in [(0, 0), (0, 300), (5, 6), (31, 33), (32, 64), (100, 299)] {
                let expected = (start..end).filter(|&i| code(i) == want).count() as u64;
                assert_eq!(count_codes(table.words(), |&w| w, start..end, want), expected);
            }
        }
    }

    #[test]
    fn squeeze_packs_the_even_bits() {
        assert_eq!(squeeze(0x5555_5555_5555_5555), u32::MAX);
        assert_eq!(squeeze(0b0100_0001), 0b1001);
    }
}
