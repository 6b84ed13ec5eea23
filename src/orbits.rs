//! The orbit index: one number per orbit of a class whose one symmetry
//! exchanges the colours, so that a table of it takes half the room.
//!
//! On 12x10 (the half turn) and 13x10 (the left-right mirror) the only
//! symmetry of a class besides the identity sends a position `(W, B)` to
//! `(g(B), g(W))`, `g` the motion's map of cells ([`Symmetry`]): both have
//! one remoteness, so a table needs one entry for the two. The entry is the
//! canonical position's, the least in the order of (white set, black set)
//! read as numbers ([`Symmetries::canonical`]); with as many black bishops as
//! white ones that is the position with `W ≤ g(B)`.
//!
//! In the block of white set `W` the images `C = g(B)` of the legal black
//! sets are the `b`-subsets of `g(safe(W))`, and ranked in colex among them
//! the canonical ones are exactly those of rank at least
//! `skip(W)`, the number of those subsets that lie below `W` read as a
//! number. So
//!
//! ```text
//! orbit(W, B) = offset[rank(W)] + rank of g(B) among the b-subsets of g(safe(W)) − skip(W)
//! offset[r]   = Σ over white sets W′ of rank below r of C(|safe(W′)|, b) − skip(W′)
//! ```
//!
//! numbers the orbits densely, block after block as the [`TightIndex`]
//! numbers positions, with the block of `W` holding the orbits whose
//! canonical position has white set `W`: half the tight index, plus half
//! the positions that are their own image.

use std::ops::Range;

use rayon::prelude::*;

use crate::bitboard::{Bitboard, Word};
use crate::index::{binomial, colex_rank, colex_unrank, expand, rank_within};
use crate::rules::Part;
use crate::symmetry::{Symmetries, Symmetry};
use crate::tight::TightIndex;

/// The dense number of each orbit of a class whose symmetries are the
/// identity and one that exchanges the colours, over the [`TightIndex`] of
/// its positions.
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class, Geometry, OrbitIndex, Part, Symmetries, TightIndex};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// let goal = Part { white: geo.row(4), black: geo.row(0) };
/// let tight = TightIndex::new(&geo, 2, 2);
/// let group = Symmetries::of(&geo, goal);
/// let orbits = OrbitIndex::new(tight.clone(), &group).unwrap();
/// // 100 positions, 14 of them their own image: 57 orbits.
/// assert_eq!((tight.len(), orbits.len()), (100, 57));
/// // A position and its image share a number, that of the canonical one.
/// let start = Part { white: geo.row(0), black: geo.row(4) };
/// let image = group.others()[0].part(start);
/// let o = orbits.rank(start).unwrap();
/// assert_eq!(orbits.rank(image), Some(o));
/// assert_eq!(orbits.unrank(o), group.canonical(start));
/// ```
#[derive(Clone, Debug)]
pub struct OrbitIndex<W: Word = u64> {
    tight: TightIndex<W>,
    /// The symmetry that exchanges the colours.
    symmetry: Symmetry,
    /// `offsets[r]`: the first orbit whose canonical position has the white
    /// set of colex rank `r`; one more entry holds the total.
    offsets: Vec<u64>,
    /// `mapped[r]`: the image of the safe cells of white set `r`.
    mapped: Vec<Bitboard<W>>,
}

impl<W: Word> OrbitIndex<W> {
    /// The orbit index of the positions `tight` numbers under `group`, which it keeps:
    /// `None` unless the group is the identity and one symmetry that
    /// exchanges the colours, with as many white bishops as black.
    pub fn new(tight: TightIndex<W>, group: &Symmetries) -> Option<OrbitIndex<W>> {
        if !Self::applies(group, tight.white(), tight.black()) {
            return None;
        }
        let symmetry = group.others()[0].clone();
        let black = tight.black();
        let mapped: Vec<Bitboard<W>> = (0..tight.white_sets() as usize)
            .into_par_iter()
            .with_min_len(1024)
            .map(|r| symmetry.cells(tight.safe(r as u64)))
            .collect();
        let counts: Vec<u64> = mapped
            .par_iter()
            .enumerate()
            .with_min_len(1024)
            .map(|(r, &mapped)| binomial(mapped.count(), black) - subsets_below(colex_unrank(r as u64, black), mapped))
            .collect();
        let mut offsets = Vec::with_capacity(counts.len() + 1);
        let mut total = 0u64;
        for count in counts {
            offsets.push(total);
            total += count;
        }
        offsets.push(total);
        Some(OrbitIndex {
            tight,
            symmetry,
            offsets,
            mapped,
        })
    }

    /// Whether [`new`](Self::new) numbers the orbits of `white` and
    /// `black` bishops under `group`: the identity and one symmetry that
    /// exchanges the colours, with as many white bishops as black. Asked
    /// without building anything (a plan asks it before it knows the
    /// memory is there).
    pub fn applies(group: &Symmetries, white: u32, black: u32) -> bool {
        matches!(group.others(), [symmetry] if symmetry.exchanges_colours()) && white == black
    }

    /// The number of orbits.
    pub fn len(&self) -> u64 {
        *self.offsets.last().expect("offsets end with the total")
    }

    /// Whether there is no orbit.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tight index of the positions.
    pub fn tight(&self) -> &TightIndex<W> {
        &self.tight
    }

    /// The symmetry that pairs the positions.
    pub fn symmetry(&self) -> &Symmetry {
        &self.symmetry
    }

    /// The orbits whose canonical position has the white set of colex rank
    /// `r`.
    pub fn block(&self, r: u64) -> Range<u64> {
        self.offsets[r as usize]..self.offsets[r as usize + 1]
    }

    /// The number of the orbit of a legal `part`, `None` when it is illegal.
    #[inline]
    pub fn rank(&self, part: Part<W>) -> Option<u64> {
        let image = self.symmetry.part(part);
        let canonical = if (part.white.0, part.black.0) <= (image.white.0, image.black.0) {
            part
        } else {
            image
        };
        let r = colex_rank(canonical.white);
        if !canonical.black.is_subset(self.tight.safe(r)) {
            return None;
        }
        Some(self.in_block(r, canonical.white, self.symmetry.cells(canonical.black)))
    }

    /// The number of the orbit whose canonical position has the white set
    /// `white`, of colex rank `r`, and a black set whose image is `image`.
    #[inline]
    pub fn in_block(&self, r: u64, white: Bitboard<W>, image: Bitboard<W>) -> u64 {
        let mapped = self.mapped[r as usize];
        self.offsets[r as usize] + rank_within(image, mapped) - subsets_below(white, mapped)
    }

    /// The image of the safe cells of the white set of colex rank `r`:
    /// where the images of its black sets lie.
    #[inline]
    pub fn mapped_safe(&self, r: u64) -> Bitboard<W> {
        self.mapped[r as usize]
    }

    /// The number of the orbit of tight index `i`, which must be below the
    /// tight index's length.
    pub fn of_tight(&self, i: u64) -> u64 {
        self.rank(self.tight.unrank(i))
            .expect("a tight index numbers legal positions")
    }

    /// The canonical position of orbit `o`, which must be below
    /// [`len`](Self::len).
    pub fn unrank(&self, o: u64) -> Part<W> {
        let r = self.offsets.partition_point(|&x| x <= o) as u64 - 1;
        let white = colex_unrank(r, self.tight.white());
        let mapped = self.mapped[r as usize];
        let skip = subsets_below(white, mapped);
        let image = expand(
            colex_unrank(o - self.offsets[r as usize] + skip, self.tight.black()),
            mapped,
        );
        Part {
            white,
            // The symmetry is its own inverse: a mirror or the half turn.
            black: self.symmetry.cells(image),
        }
    }

    /// Bytes the index's tables take in memory, the tight index's included.
    pub fn table_bytes(&self) -> u64 {
        (self.offsets.len() * 8 + self.mapped.len() * size_of::<Bitboard<W>>()) as u64 + self.tight.table_bytes()
    }
}

/// The number of subsets of `within` with as many cells as `set` that lie
/// below `set` read as numbers (`set` need not lie inside `within`).
///
/// A smaller subset agrees with `set` above some cell of `set`, leaves that
/// cell out and takes the rest of its cells below it.
pub(crate) fn subsets_below<W: Word>(set: Bitboard<W>, within: Bitboard<W>) -> u64 {
    let k = set.count();
    let (mut count, mut above, mut rest) = (0, 0, set);
    while let Some(cell) = rest.last() {
        count += binomial((within & Bitboard::below(cell)).count(), k - above);
        if !within.contains(cell) {
            break;
        }
        above += 1;
        rest = rest.without(cell);
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::colex_rank;
    use crate::variant::Variant;

    /// Counts the subsets one by one.
    fn subsets_below_by_hand(set: Bitboard<u64>, within: Bitboard<u64>) -> u64 {
        let k = set.count();
        let cells: Vec<u8> = within.iter().collect();
        (0..1u64 << cells.len())
            .filter(|m| m.count_ones() == k)
            .map(|m| {
                cells
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| m >> j & 1 == 1)
                    .fold(Bitboard::<u64>::EMPTY, |s, (_, &c)| s.with(c))
            })
            .filter(|s| s.0 < set.0)
            .count() as u64
    }

    #[test]
    fn subsets_below_counts_what_a_count_by_hand_counts() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..400 {
            let within = Bitboard::<u64>(next() & 0x3fff);
            let k = (next() % 4 + 1) as u32;
            let set = colex_unrank::<u64>(next() % binomial(15, k), k);
            assert_eq!(
                subsets_below(set, within),
                subsets_below_by_hand(set, within),
                "{set:?} within {within:?}"
            );
            assert_eq!(colex_rank(set), subsets_below(set, Bitboard::below(63)));
        }
    }

    /// Every class of the named variants whose group is one symmetry that
    /// exchanges the colours: the orbit index numbers its orbits densely,
    /// one number for a position and its image, each number's position
    /// canonical, checked over every legal position.
    #[test]
    fn every_orbit_has_one_number_and_every_number_one_orbit() {
        let mut checked = Vec::new();
        for name in ["5x4", "7x4", "7x6", "9x6", "5x4-full", "7x5-a1"] {
            let variant = Variant::named(name).unwrap();
            for spec in variant.classes() {
                let (geo, start, goal) = (&spec.geometry, spec.start, spec.goal);
                let group = Symmetries::of(geo, goal);
                let tight = TightIndex::new(geo, start.white.count(), start.black.count());
                let Some(orbits) = OrbitIndex::new(tight.clone(), &group) else {
                    assert!(group.order() != 2 || !group.others()[0].exchanges_colours());
                    continue;
                };
                let mut seen = vec![0u32; orbits.len() as usize];
                let mut own_images = 0;
                for i in 0..tight.len() {
                    let part = tight.unrank(i);
                    let o = orbits.rank(part).unwrap();
                    assert_eq!(orbits.of_tight(i), o);
                    assert_eq!(orbits.rank(group.others()[0].part(part)), Some(o));
                    assert_eq!(orbits.unrank(o), group.canonical(part), "{name} {i}");
                    seen[o as usize] += 1;
                    own_images += u64::from(group.images(part).as_slice().is_empty());
                }
                // Two positions an orbit, one when the position is its own image.
                assert!(seen.iter().all(|&n| n == 1 || n == 2));
                assert_eq!(orbits.len(), (tight.len() + own_images) / 2);
                let blocks: u64 = (0..tight.white_sets())
                    .map(|r| orbits.block(r).end - orbits.block(r).start)
                    .sum();
                assert_eq!(blocks, orbits.len());
                checked.push(format!("{name} {}", tight.len()));
            }
        }
        assert!(checked.len() >= 2, "too few classes to check: {checked:?}");
    }
}
