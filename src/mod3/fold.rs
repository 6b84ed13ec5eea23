//! A class's table kept at one entry an orbit: [`fold`] keeps the entry of
//! each orbit's canonical position in the order of the [`OrbitIndex`], and
//! [`Folded`] answers for every position of the class from it, so that the
//! exact values and the database are worked out from half the table.

use std::borrow::Cow;
use std::ops::Range;

use rayon::prelude::*;

use super::{Mod3Table, PER_WORD, Residues, UNSEEN};
use crate::bitboard::Word;
use crate::index::{colex_unrank, expand, rank_within};
use crate::orbits::OrbitIndex;

/// The codes of the orbits of block `r`, in the orbit index's order, read
/// from `table`, the class's table in the tight index's order: for each
/// canonical position of the block, its code.
fn block_codes<R: Residues + ?Sized, W: Word>(table: &R, orbits: &OrbitIndex<'_, W>, r: u64) -> Vec<u8> {
    let tight = orbits.tight();
    let (block, wanted) = (tight.block(r), orbits.block(r));
    if wanted.is_empty() {
        return Vec::new();
    }
    let first = block.start / PER_WORD;
    let words = table.words(first..block.end.div_ceil(PER_WORD));
    let code = |i: u64| {
        let at = i - first * PER_WORD;
        (words[(at / PER_WORD) as usize] >> (2 * (at % PER_WORD))) as u8 & 3
    };
    let (symmetry, safe) = (orbits.symmetry(), tight.safe(r));
    let mapped = symmetry.cells(safe);
    let total = crate::index::binomial(mapped.count(), tight.black());
    let skip = total - (wanted.end - wanted.start);
    (skip..total)
        .map(|k| {
            let black = symmetry.cells(expand(colex_unrank::<W>(k, tight.black()), mapped));
            code(block.start + rank_within(black, safe))
        })
        .collect()
}

/// Blocks folded at once: enough to keep both cores busy, few enough that
/// their codes are a small share of the table.
const BATCH: u64 = 4096;

/// The table of `table`'s orbits: entry `o` holds the code of the canonical
/// position of orbit `o` of `orbits` (`table` holds the class in the order
/// of `orbits.tight()`). The codes of the other positions are their
/// images', which the search set with them.
///
/// # Panics
///
/// When `table` does not hold one code per position of the tight index.
pub fn fold<R: Residues + ?Sized, W: Word>(table: &R, orbits: &OrbitIndex<'_, W>) -> Mod3Table {
    let tight = orbits.tight();
    assert_eq!(table.len(), tight.len(), "a code per position");
    let mut folded = Mod3Table::new(orbits.len());
    let mut next = 0u64;
    let blocks = tight.white_sets();
    for start in (0..blocks).step_by(BATCH as usize) {
        let end = (start + BATCH).min(blocks);
        let codes: Vec<Vec<u8>> = (start as usize..end as usize)
            .into_par_iter()
            .map(|r| block_codes(table, orbits, r as u64))
            .collect();
        for code in codes.into_iter().flatten() {
            folded.set(next, (code != UNSEEN).then_some(code));
            next += 1;
        }
    }
    debug_assert_eq!(next, orbits.len());
    folded
}

/// A class's table answered from the table of its orbits ([`fold`]): the
/// code of a position is its orbit's.
///
/// # Examples
///
/// ```
/// use bishops::mod3::Residues;
/// use bishops::mod3::fold::{Folded, fold};
/// use bishops::mod3::Mod3Table;
/// use bishops::{Board, Class, Geometry, OrbitIndex, Part, Symmetries, TightIndex};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// let goal = Part { white: geo.row(4), black: geo.row(0) };
/// let tight = TightIndex::new(&geo, 2, 2);
/// let group = Symmetries::of(&geo, goal);
/// let orbits = OrbitIndex::new(&tight, &group).unwrap();
/// // A table whose code is a function of the orbit, as a search's is.
/// let mut table = Mod3Table::new(tight.len());
/// for i in 0..tight.len() {
///     table.set(i, Some((orbits.of_tight(i) % 3) as u8));
/// }
/// let half = fold(&table, &orbits);
/// assert_eq!(half.len(), orbits.len());
/// let folded = Folded::new(&orbits, half);
/// assert!((0..tight.len()).all(|i| Residues::get(&folded, i) == table.get(i)));
/// ```
#[derive(Debug)]
pub struct Folded<'o, 'a, R, W: Word = u64> {
    orbits: &'o OrbitIndex<'a, W>,
    table: R,
}

impl<'o, 'a, R: Residues, W: Word> Folded<'o, 'a, R, W> {
    /// The class of `orbits`, answered from `table`, the table of its
    /// orbits.
    ///
    /// # Panics
    ///
    /// When `table` does not hold one code per orbit.
    pub fn new(orbits: &'o OrbitIndex<'a, W>, table: R) -> Folded<'o, 'a, R, W> {
        assert_eq!(table.len(), orbits.len(), "a code per orbit");
        Folded { orbits, table }
    }

    /// The table of the orbits.
    pub fn orbits_table(&self) -> &R {
        &self.table
    }
}

impl<R: Residues, W: Word> Residues for Folded<'_, '_, R, W> {
    fn len(&self) -> u64 {
        self.orbits.tight().len()
    }

    fn get(&self, i: u64) -> Option<u8> {
        assert!(i < self.len(), "position {i} of a table of {}", self.len());
        self.table.get(self.orbits.of_tight(i))
    }

    fn words(&self, words: Range<u64>) -> Cow<'_, [u64]> {
        let len = self.len();
        assert!(
            words.end <= len.div_ceil(PER_WORD),
            "words {words:?} of a table of {len}"
        );
        let out = words
            .map(|w| {
                (0..PER_WORD).fold(u64::MAX, |word, j| {
                    let i = w * PER_WORD + j;
                    match (i < len).then(|| self.get(i)).flatten() {
                        Some(code) => word & !(3 << (2 * j)) | u64::from(code) << (2 * j),
                        None => word,
                    }
                })
            })
            .collect();
        Cow::Owned(out)
    }

    fn fault(&self) -> crate::error::Result<()> {
        self.table.fault()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::{Method, Plan};
    use crate::symmetry::Symmetries;
    use crate::variant::Variant;

    /// The two-bit search's table of a class whose symmetry exchanges the
    /// colours, folded and answered back: every position's code and every
    /// word are the full table's, and so is the packing of any range.
    #[test]
    fn a_folded_search_table_answers_as_the_whole_one() {
        for name in ["7x6", "9x6"] {
            let variant = Variant::named(name).unwrap();
            let spec = &variant.classes()[0];
            let group = Symmetries::of(&spec.geometry, spec.goal);
            let solution = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
            let class = &solution.classes[0];
            let (tight, table) = (&class.index, class.own().expect("the a1 class is searched"));
            let orbits = OrbitIndex::new(tight, &group).expect("one symmetry, colours exchanged");
            let half = fold(table, &orbits);
            assert_eq!(half.len(), orbits.len());
            assert!(
                half.len() < tight.len() * 51 / 100,
                "{name}: {} of {}",
                half.len(),
                tight.len()
            );
            let folded = Folded::new(&orbits, half);
            for i in 0..tight.len() {
                assert_eq!(Residues::get(&folded, i), table.get(i), "{name} position {i}");
            }
            let words = table.len().div_ceil(PER_WORD);
            assert_eq!(&*folded.words(0..words), &*Residues::words(table, 0..words));
            let mid = tight.len() / 3;
            assert_eq!(folded.pack_range(mid..mid + 77), table.pack_range(mid..mid + 77));
        }
    }
}
