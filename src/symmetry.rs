//! Symmetries of the board and the puzzle, found from the rules.
//!
//! A rectangle has four rigid motions ([`Motion`]): the identity, the
//! left-right mirror, the top-bottom mirror and the half turn. Each sends
//! squares to squares and diagonals to diagonals; what it does to a colour
//! class depends on the board's shape, so nothing here is assumed per shape.
//! Every map is built from its square map and its direction map and then
//! checked ray by ray against the class's [`Geometry`]
//! ([`Mirror::left_right`], [`Symmetry::new`]).
//!
//! - [`Mirror`]: a motion that sends one class onto the *other* one (the
//!   left-right mirror on an even number of columns) and one class's start
//!   to the other's: an isomorphism of the two class puzzles, so one class's
//!   table gives the other's for free. Storage and the solver use it.
//! - [`Symmetry`]: a motion that keeps a class, with or without exchanging
//!   the colours, and sends the class's goal to itself: an automorphism of
//!   the class puzzle. Legality and moves only ask whether bishops of
//!   different colours see each other along a ray, which neither a
//!   ray-preserving map nor an exchange of colours changes; so a position
//!   and its image have one remoteness.
//! - [`Symmetries`]: every such symmetry of a class, a group (closed under
//!   composition; the tests check it). The searches expand only the
//!   *canonical* position of each orbit, the least in the order of
//!   (white set, black set) read as numbers, and set its images with it.
//!
//! Which motions keep a class: the left-right mirror when the column count
//! is odd, the top-bottom mirror when the row count is odd, the half turn
//! when rows + columns is even. On the standard starts (white on the bottom
//! row, black on the top) the goal is kept by the left-right mirror as it is
//! and by the other two with the colours exchanged, so an odd number of rows
//! gives "top-bottom, colours exchanged", an odd number of columns
//! "left-right", rows + columns even "half turn, colours exchanged", and
//! odd by odd all three: a group of 4. 12x10 has exactly the half turn with
//! the colours exchanged.

use crate::bitboard::{Bitboard, Word};
use crate::board::{Board, Geometry};
use crate::index::{binomial, rank_within};
use crate::rules::Part;
use crate::square::Square;
use crate::tight::Subsets;

/// A rigid motion of the rectangle: where it sends a square, and where it
/// sends each of the four diagonal directions (up-right, up-left,
/// down-right, down-left, as [`Geometry::ray`] numbers them).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Motion {
    /// Every square stays.
    Identity,
    /// Column `c` goes to column `C − 1 − c`.
    LeftRight,
    /// Row `r` goes to row `R − 1 − r`.
    TopBottom,
    /// Both: a turn by 180 degrees about the centre.
    HalfTurn,
}

impl Motion {
    /// The four motions.
    pub const ALL: [Motion; 4] = [Motion::Identity, Motion::LeftRight, Motion::TopBottom, Motion::HalfTurn];

    /// The image of `square` on `board`.
    pub fn square(self, board: Board, square: Square) -> Square {
        let (row, col) = (square.row(), square.col());
        let (flip_row, flip_col) = (board.rows() - 1 - row, board.cols() - 1 - col);
        match self {
            Motion::Identity => square,
            Motion::LeftRight => Square::new(row, flip_col),
            Motion::TopBottom => Square::new(flip_row, col),
            Motion::HalfTurn => Square::new(flip_row, flip_col),
        }
    }

    /// `directions()[d]`: the direction a ray of direction `d` goes to.
    pub fn directions(self) -> [usize; 4] {
        match self {
            Motion::Identity => [0, 1, 2, 3],
            // Up-right and up-left swap, and so do the two downward ones.
            Motion::LeftRight => [1, 0, 3, 2],
            // Up-right and down-right swap, and so do the two leftward ones.
            Motion::TopBottom => [2, 3, 0, 1],
            // Every direction turns round.
            Motion::HalfTurn => [3, 2, 1, 0],
        }
    }

    /// The motion done after `self`: the group of the rectangle's motions
    /// is the Klein four-group, each its own inverse.
    #[must_use]
    pub fn then(self, other: Motion) -> Motion {
        let bits = |m: Motion| match m {
            Motion::Identity => 0,
            Motion::LeftRight => 1,
            Motion::TopBottom => 2,
            Motion::HalfTurn => 3,
        };
        Motion::ALL[bits(self) ^ bits(other)]
    }

    /// Its name in reports: `identity`, `left-right`, `top-bottom`, `half turn`.
    pub fn name(self) -> &'static str {
        match self {
            Motion::Identity => "identity",
            Motion::LeftRight => "left-right",
            Motion::TopBottom => "top-bottom",
            Motion::HalfTurn => "half turn",
        }
    }
}

/// A verified map from the cells of one class to the cells of another that
/// preserves every diagonal ray.
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class, Geometry, Mirror};
///
/// let board = Board::new(5, 4).unwrap();
/// let odd = Geometry::new(board, Class::Odd);
/// let even = Geometry::new(board, Class::Even);
/// let mirror = Mirror::left_right(&odd, &even).unwrap();
/// // a2 is mirrored to a3.
/// let a2 = odd.cell("a2".parse().unwrap()).unwrap();
/// assert_eq!(even.square(mirror.cell(a2)).to_string(), "a3");
/// // On an odd number of columns the mirror keeps each square's class.
/// let board = Board::new(7, 5).unwrap();
/// assert!(Mirror::left_right(&Geometry::new(board, Class::Odd), &Geometry::new(board, Class::Even)).is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mirror {
    map: Vec<u8>,
}

impl Mirror {
    /// The left-right mirror from the cells of `from` to those of `to`, if
    /// it maps every cell of `from` to a cell of `to`, one to one, and every
    /// ray to the mirrored ray.
    pub fn left_right<W: Word>(from: &Geometry<W>, to: &Geometry<W>) -> Option<Mirror> {
        Mirror::of_motion(Motion::LeftRight, from, to)
    }

    /// The map `motion` gives from the cells of `from` to those of `to`, if
    /// it maps every cell of `from` to a cell of `to`, one to one, and every
    /// ray to a ray.
    fn of_motion<W: Word>(motion: Motion, from: &Geometry<W>, to: &Geometry<W>) -> Option<Mirror> {
        let board = from.board();
        Mirror::verified(from, to, motion.directions(), |sq| motion.square(board, sq))
    }

    /// The map of every cell of `from` to the cell of `to` on the square
    /// `square` gives, if that is one to one and sends each ray of direction
    /// `d` to the ray of direction `directions[d]`.
    fn verified<W: Word>(
        from: &Geometry<W>,
        to: &Geometry<W>,
        directions: [usize; 4],
        square: impl Fn(Square) -> Square,
    ) -> Option<Mirror> {
        if from.board() != to.board() || from.len() != to.len() {
            return None;
        }
        let map = (0..from.len() as u8)
            .map(|cell| to.cell(square(from.square(cell))))
            .collect::<Option<Vec<u8>>>()?;
        let mirror = Mirror { map };
        let image: Bitboard<W> = mirror.map.iter().copied().collect();
        if image != to.all() {
            return None;
        }
        for cell in 0..from.len() as u8 {
            for (d, &md) in directions.iter().enumerate() {
                if mirror.cells(from.ray(cell, d)) != to.ray(mirror.cell(cell), md) {
                    return None;
                }
            }
        }
        Some(mirror)
    }

    /// The map back: from the cells of `to` to those of `from`, which
    /// preserves every ray as well.
    pub fn inverse(&self) -> Mirror {
        let mut map = vec![0u8; self.map.len()];
        for (cell, &image) in self.map.iter().enumerate() {
            map[usize::from(image)] = cell as u8;
        }
        Mirror { map }
    }

    /// The image of one cell.
    pub fn cell(&self, cell: u8) -> u8 {
        self.map[usize::from(cell)]
    }

    /// The image of a set of cells.
    pub fn cells<W: Word>(&self, set: Bitboard<W>) -> Bitboard<W> {
        set.iter().map(|c| self.cell(c)).collect()
    }

    /// Fills `out` with one block of the mirrored class from the block of its
    /// image: every position of a block has one white set, whose safe cells
    /// are `safe`, and its image has one white set too, whose safe cells are
    /// `image_safe`, so a block is a permutation of its image's block.
    /// `source` holds the image block's cells and `out` receives this
    /// block's, each in colex order of the `black`-bishop sets among the
    /// safe cells.
    pub fn block<W: Word>(
        &self,
        safe: Bitboard<W>,
        black: u32,
        image_safe: Bitboard<W>,
        source: &[u8],
        out: &mut [u8],
    ) {
        for (cell, set) in out.iter_mut().zip(Subsets::new(safe, black)) {
            *cell = source[rank_within(self.cells(set), image_safe) as usize];
        }
    }

    /// The image of a part: each bishop moved to its mirror square.
    pub fn part<W: Word>(&self, part: Part<W>) -> Part<W> {
        Part {
            white: self.cells(part.white),
            black: self.cells(part.black),
        }
    }
}

/// A cell map of a [`Symmetry`]: room for the 128 cells of the widest class.
type CellMap = [u8; 128];

/// The image of `set` under the cell map `map` (cells beyond the class map
/// to 0 and are never asked for). Inlined into the searches' inner loops.
#[inline]
fn map_cells<W: Word>(map: &CellMap, set: Bitboard<W>) -> Bitboard<W> {
    // Cells are below `W::BITS`, which the masks tell the compiler: no
    // bounds checks, no overlong shifts.
    let mask = W::BITS - 1;
    let mut image = W::ZERO;
    let mut bits = set.0;
    while bits != W::ZERO {
        image |= W::ONE << (u32::from(map[(bits.trailing_zeros() & mask) as usize]) & mask);
        bits = bits & (bits - W::ONE);
    }
    Bitboard(image)
}

/// A symmetry of one class puzzle: a [`Motion`] that keeps the class (each
/// ray checked), with or without the colours exchanged, that sends the
/// class's goal to itself. A position and its image have one remoteness.
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class, Geometry, Motion, Part, Symmetry};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// let goal = Part { white: geo.row(4), black: geo.row(0) };
/// let flip = Symmetry::new(&geo, Motion::TopBottom, true, goal).unwrap();
/// assert_eq!(flip.name(), "top-bottom, colours exchanged");
/// assert_eq!(flip.part(goal), goal);
/// let a1 = geo.cell("a1".parse().unwrap()).unwrap();
/// assert_eq!(geo.square(flip.cell(a1)).to_string(), "e1");
/// // Without the exchange the flip does not keep the goal; on an even
/// // number of columns the left-right mirror does not keep the class.
/// assert!(Symmetry::new(&geo, Motion::TopBottom, false, goal).is_none());
/// assert!(Symmetry::new(&geo, Motion::LeftRight, false, goal).is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetry {
    motion: Motion,
    exchange: bool,
    /// The class's cells.
    len: u8,
    /// `map[c]`: the cell of the image of cell `c`'s square; 0 beyond the class.
    map: CellMap,
}

impl Symmetry {
    /// `motion`, with the colours exchanged when `exchange`, as a symmetry
    /// of the class of `geo` whose goal is `goal`: `None` unless the motion
    /// sends every cell of the class to a cell of the class and every ray to
    /// a ray (checked ray by ray), and the goal to itself.
    pub fn new<W: Word>(geo: &Geometry<W>, motion: Motion, exchange: bool, goal: Part<W>) -> Option<Symmetry> {
        let mirror = Mirror::of_motion(motion, geo, geo)?;
        let mut map = [0u8; 128];
        map[..mirror.map.len()].copy_from_slice(&mirror.map);
        let symmetry = Symmetry {
            motion,
            exchange,
            len: geo.len() as u8,
            map,
        };
        (symmetry.part(goal) == goal).then_some(symmetry)
    }

    /// The identity of the class of `geo`.
    pub fn identity<W: Word>(geo: &Geometry<W>) -> Symmetry {
        let mut map = [0u8; 128];
        for (c, m) in map.iter_mut().enumerate().take(geo.len()) {
            *m = c as u8;
        }
        Symmetry {
            motion: Motion::Identity,
            exchange: false,
            len: geo.len() as u8,
            map,
        }
    }

    /// The motion of the board.
    pub fn motion(&self) -> Motion {
        self.motion
    }

    /// Whether the colours are exchanged.
    pub fn exchanges_colours(&self) -> bool {
        self.exchange
    }

    /// Whether every position is its own image.
    pub fn is_identity(&self) -> bool {
        self.motion == Motion::Identity && !self.exchange
    }

    /// Its name in reports: the motion's, with `, colours exchanged` when
    /// it exchanges them.
    pub fn name(&self) -> String {
        if self.exchange {
            format!("{}, colours exchanged", self.motion.name())
        } else {
            self.motion.name().to_owned()
        }
    }

    /// The image of one cell.
    pub fn cell(&self, cell: u8) -> u8 {
        self.map[usize::from(cell)]
    }

    /// The image of a set of cells.
    #[inline]
    pub fn cells<W: Word>(&self, set: Bitboard<W>) -> Bitboard<W> {
        map_cells(&self.map, set)
    }

    /// The image of a part: its cells mapped, and the colours exchanged
    /// when the symmetry exchanges them.
    #[inline]
    pub fn part<W: Word>(&self, part: Part<W>) -> Part<W> {
        let (white, black) = (self.cells(part.white), self.cells(part.black));
        if self.exchange {
            Part {
                white: black,
                black: white,
            }
        } else {
            Part { white, black }
        }
    }

    /// `self`, then `other`: the map that sends a part `p` to
    /// `other.part(self.part(p))`.
    #[must_use]
    pub fn then(&self, other: &Symmetry) -> Symmetry {
        let mut map = [0u8; 128];
        for (image, &cell) in map.iter_mut().zip(&self.map).take(usize::from(self.len)) {
            *image = other.map[usize::from(cell)];
        }
        Symmetry {
            motion: self.motion.then(other.motion),
            exchange: self.exchange != other.exchange,
            len: self.len,
            map,
        }
    }
}

/// The most images a position has besides itself: a class has at most the
/// four symmetries of the rectangle.
pub const MAX_IMAGES: usize = 3;

/// The images of a position under a class's symmetries, each once, the
/// position itself left out ([`Symmetries::images`]).
#[derive(Copy, Clone, Debug, Default)]
pub struct Images<W: Word = u64> {
    parts: [Part<W>; MAX_IMAGES],
    len: usize,
}

impl<W: Word> Images<W> {
    /// The images.
    #[inline]
    pub fn as_slice(&self) -> &[Part<W>] {
        &self.parts[..self.len]
    }
}

/// Every symmetry of one class puzzle ([`Symmetry`]), the identity first:
/// a group. The searches expand the *canonical* position of each orbit, the
/// least of the orbit in the order of (white set, black set), each read as
/// a number, and set the others with it.
///
/// # Examples
///
/// ```
/// use bishops::{Part, Symmetries, Variant};
///
/// let variant = Variant::named("7x5-a1").unwrap();
/// let spec = &variant.classes()[0];
/// let group = Symmetries::of(&spec.geometry, spec.goal);
/// assert_eq!(
///     group.names(),
///     ["left-right", "top-bottom, colours exchanged", "half turn, colours exchanged"]
/// );
/// // The start is its own image under each of them.
/// assert!(group.images(spec.start).as_slice().is_empty());
/// // A position one move on has images; one of its orbit is canonical.
/// let mut after = None;
/// spec.start.for_each_move(&spec.geometry, |_, _, _, p| {
///     after.get_or_insert(p);
/// });
/// let after: Part = after.unwrap();
/// let mut orbit = vec![after];
/// orbit.extend_from_slice(group.images(after).as_slice());
/// assert!(orbit.len() > 1);
/// assert_eq!(orbit.iter().filter(|&&p| group.is_canonical(p)).count(), 1);
/// assert!(orbit.contains(&group.canonical(after)));
/// ```
#[derive(Clone, Debug)]
pub struct Symmetries {
    elements: Vec<Symmetry>,
}

impl Symmetries {
    /// Every symmetry of the class of `geo` whose goal is `goal`: each of
    /// the four motions, with and without the colours exchanged, that
    /// [`Symmetry::new`] verifies.
    pub fn of<W: Word>(geo: &Geometry<W>, goal: Part<W>) -> Symmetries {
        let mut elements = vec![Symmetry::identity(geo)];
        for motion in Motion::ALL {
            for exchange in [false, true] {
                if motion == Motion::Identity && !exchange {
                    continue;
                }
                elements.extend(Symmetry::new(geo, motion, exchange, goal));
            }
        }
        Symmetries { elements }
    }

    /// The identity alone: a search that uses no symmetry.
    pub fn trivial<W: Word>(geo: &Geometry<W>) -> Symmetries {
        Symmetries {
            elements: vec![Symmetry::identity(geo)],
        }
    }

    /// The symmetries, the identity first.
    pub fn elements(&self) -> &[Symmetry] {
        &self.elements
    }

    /// How many symmetries, the identity included: 1, 2 or 4 (the order
    /// of the group).
    pub fn order(&self) -> usize {
        self.elements.len()
    }

    /// Whether the identity is the only one.
    pub fn is_trivial(&self) -> bool {
        self.elements.len() == 1
    }

    /// The symmetries other than the identity.
    #[inline]
    pub fn others(&self) -> &[Symmetry] {
        &self.elements[1..]
    }

    /// The names of the symmetries other than the identity.
    pub fn names(&self) -> Vec<String> {
        self.elements[1..].iter().map(Symmetry::name).collect()
    }

    /// The order the canonical position is the least in.
    #[inline]
    fn key<W: Word>(part: Part<W>) -> (W, W) {
        (part.white.0, part.black.0)
    }

    /// The canonical position of the orbit of `part`: the least of its images.
    pub fn canonical<W: Word>(&self, part: Part<W>) -> Part<W> {
        self.elements
            .iter()
            .map(|s| s.part(part))
            .min_by_key(|&p| Symmetries::key(p))
            .expect("the identity is a symmetry")
    }

    /// Whether `part` is the canonical position of its orbit.
    pub fn is_canonical<W: Word>(&self, part: Part<W>) -> bool {
        self.elements[1..]
            .iter()
            .all(|s| Symmetries::key(part) <= Symmetries::key(s.part(part)))
    }

    /// The images of `part` other than itself, each once.
    #[inline]
    pub fn images<W: Word>(&self, part: Part<W>) -> Images<W> {
        let mut images = Images::default();
        for s in &self.elements[1..] {
            let image = s.part(part);
            if image != part && !images.as_slice().contains(&image) {
                images.parts[images.len] = image;
                images.len += 1;
            }
        }
        images
    }

    /// Whether the block of white set `white`, with `black` black bishops
    /// among the cells `safe`, may hold a canonical position: `false` only
    /// when it holds none. That is exact when the class has at most one
    /// symmetry besides the identity; with more, some blocks that hold none
    /// may pass (and [`block_test`](Self::block_test) then says no to each
    /// of their positions).
    pub fn may_hold_canonical<W: Word>(&self, white: Bitboard<W>, safe: Bitboard<W>, black: u32) -> bool {
        self.elements[1..].iter().all(|s| {
            if s.exchange {
                // The image's white set is the black set mapped; the largest
                // of those is the top `black` cells of the mapped safe cells.
                let (mut image, mut top) = (s.cells(safe), Bitboard::EMPTY);
                for _ in 0..black {
                    let Some(high) = image.last() else {
                        return false;
                    };
                    top = top.with(high);
                    image = image.without(high);
                }
                let top = top.0;
                white.0 <= top
            } else {
                s.cells(white).0 >= white.0
            }
        })
    }

    /// The canonical test of the positions whose white set is `white`:
    /// what depends on the white set alone is worked out once. `None` when
    /// a symmetry that keeps the colours maps `white` below itself, so that
    /// none of them is canonical.
    #[inline]
    pub fn block_test<W: Word>(&self, white: Bitboard<W>) -> Option<BlockTest<'_, W>> {
        let identity = &self.elements[0].map;
        let mut test = BlockTest {
            white,
            checks: [Check::Keep { map: identity }; MAX_IMAGES],
            len: 0,
        };
        for s in &self.elements[1..] {
            let image = s.cells(white);
            let check = if s.exchange {
                Check::Exchange {
                    map: &s.map,
                    mapped_white: image,
                }
            } else {
                match image.0.cmp(&white.0) {
                    std::cmp::Ordering::Less => return None,
                    std::cmp::Ordering::Greater => continue,
                    std::cmp::Ordering::Equal => Check::Keep { map: &s.map },
                }
            };
            test.checks[test.len] = check;
            test.len += 1;
        }
        Some(test)
    }
}

/// One comparison of [`BlockTest`] against one symmetry.
#[derive(Copy, Clone, Debug)]
enum Check<'a, W: Word> {
    /// The colours are exchanged: the image's white set is the black set
    /// mapped, and on a tie its black set is `mapped_white`.
    Exchange {
        map: &'a CellMap,
        mapped_white: Bitboard<W>,
    },
    /// The colours are kept and the white set is its own image: the image's
    /// black set decides.
    Keep { map: &'a CellMap },
}

/// Whether positions of one block are canonical ([`Symmetries::block_test`]):
/// what depends only on the white set is worked out once.
#[derive(Copy, Clone, Debug)]
pub struct BlockTest<'a, W: Word = u64> {
    white: Bitboard<W>,
    checks: [Check<'a, W>; MAX_IMAGES],
    len: usize,
}

impl<W: Word> BlockTest<'_, W> {
    /// Whether the position of the block with black set `black` is
    /// canonical: not above any of its images.
    #[inline]
    pub fn is_canonical(&self, black: Bitboard<W>) -> bool {
        for check in &self.checks[..self.len] {
            match *check {
                Check::Exchange { map, mapped_white } => {
                    let image_white = map_cells(map, black);
                    if self.white.0 > image_white.0 || (self.white == image_white && black.0 > mapped_white.0) {
                        return false;
                    }
                }
                Check::Keep { map } => {
                    if black.0 > map_cells(map, black).0 {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Whether every position of the block is canonical (no comparison is
    /// left to make).
    #[inline]
    pub fn is_all(&self) -> bool {
        self.len == 0
    }

    /// About what share of the block's positions are canonical, when its
    /// `black` black bishops stand among the cells `safe`: for a check
    /// that exchanges the colours, the share of black sets whose image is
    /// not below the white set (exact but for ties), for one that keeps
    /// them a half, and the least over the checks (every check must pass,
    /// and they tend to pass together: on 7x5 the product guessed 27% low,
    /// the least 5% high). What a partitioned search weighs a block's
    /// positions by when it balances work.
    pub fn canonical_share(&self, safe: Bitboard<W>, black: u32) -> f64 {
        self.checks[..self.len]
            .iter()
            .map(|check| match *check {
                Check::Exchange { map, .. } => {
                    let image = map_cells(map, safe);
                    let all = binomial(image.count(), black);
                    if all == 0 {
                        0.0
                    } else {
                        1.0 - subsets_below(image, black, self.white) as f64 / all as f64
                    }
                }
                Check::Keep { .. } => 0.5,
            })
            .fold(1.0, f64::min)
    }
}

/// How many sets of `k` cells of `cells` are below `bound` as numbers.
fn subsets_below<W: Word>(cells: Bitboard<W>, mut k: u32, bound: Bitboard<W>) -> u64 {
    let mut below = 0;
    for c in (0..W::BITS as u8).rev() {
        let lower = (cells & Bitboard::below(c)).count();
        match (bound.contains(c), cells.contains(c)) {
            // Leaving out a cell the bound has puts the set below it,
            // whatever the lower cells.
            (true, false) => return below + binomial(lower, k),
            (true, true) => {
                below += binomial(lower, k);
                if k == 0 {
                    return below;
                }
                k -= 1;
            }
            // Taking a cell the bound lacks puts the set above it.
            _ => {}
        }
    }
    below
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Class};
    use crate::index::{DenseIndex, colex_unrank};
    use crate::tight::TightIndex;

    /// `n` pseudo-random placements on the cells `all` (white and black
    /// disjoint, legal or not), from `seed`.
    fn random_parts(all: Bitboard, mut seed: u64, n: usize) -> impl Iterator<Item = Part> {
        (0..n).map(move |_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let white = Bitboard(seed) & all;
            let black = Bitboard(seed.rotate_left(23)) & all & !white;
            Part { white, black }
        })
    }

    #[test]
    fn wide_words_find_the_symmetries_and_images_narrow_ones_do() {
        let widen = |p: Part| Part::<u128> {
            white: Bitboard(u128::from(p.white.0)),
            black: Bitboard(u128::from(p.black.0)),
        };
        for (rows, cols) in [(7u32, 5u32), (9, 7), (8, 4), (9, 6)] {
            let board = Board::new(rows, cols).unwrap();
            for class in Class::ALL {
                let narrow: Geometry = Geometry::new(board, class);
                let wide: Geometry<u128> = Geometry::in_words(board, class);
                let top = board.rows() - 1;
                let goal = Part {
                    white: narrow.row(top),
                    black: narrow.row(0),
                };
                let group = Symmetries::of(&narrow, goal);
                let wide_group = Symmetries::of(&wide, widen(goal));
                assert_eq!(group.names(), wide_group.names(), "{board} {class:?}");
                for part in random_parts(narrow.all(), u64::from(rows * 16 + cols), 200) {
                    let images: Vec<Part<u128>> = group.images(part).as_slice().iter().map(|&p| widen(p)).collect();
                    assert_eq!(images, wide_group.images(widen(part)).as_slice());
                    assert_eq!(widen(group.canonical(part)), wide_group.canonical(widen(part)));
                }
            }
        }
    }

    #[test]
    fn a_class_of_72_squares_has_the_group_of_4_and_its_images_keep_the_rules() {
        // 13x11, odd by odd: the standard a1 class has 72 squares.
        let geo: Geometry<u128> = Geometry::in_words(Board::new(13, 11).unwrap(), Class::Even);
        assert_eq!(geo.len(), 72);
        let goal = Part {
            white: geo.row(12),
            black: geo.row(0),
        };
        let group = Symmetries::of(&geo, goal);
        assert_eq!(group.order(), 4);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut legal = 0;
        for _ in 0..4000 {
            let mut draw = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            // A few bishops each, anywhere in the class.
            let mut part = Part::<u128>::default();
            for k in 0..6 {
                let cell = (draw() % 72) as u8;
                if !part.occupied().contains(cell) {
                    if k % 2 == 0 {
                        part.white = part.white.with(cell);
                    } else {
                        part.black = part.black.with(cell);
                    }
                }
            }
            legal += usize::from(part.is_legal(&geo));
            for s in group.others() {
                let image = s.part(part);
                assert_eq!(part.is_legal(&geo), image.is_legal(&geo));
                if part.is_legal(&geo) {
                    let mut moves = Vec::new();
                    part.for_each_move(&geo, |_, _, _, after| moves.push(s.part(after)));
                    let mut image_moves = Vec::new();
                    image.for_each_move(&geo, |_, _, _, after| image_moves.push(after));
                    moves.sort();
                    image_moves.sort();
                    assert_eq!(moves, image_moves);
                }
            }
            let mut orbit = vec![part];
            orbit.extend_from_slice(group.images(part).as_slice());
            assert_eq!(orbit.iter().filter(|&&p| group.is_canonical(p)).count(), 1);
        }
        assert!(legal > 200, "only {legal} legal draws");
    }

    /// Asserts that `map` carries `part` on `from` to `image` on `to` as a
    /// symmetry must: legality kept, and the moves of `part` mapped onto
    /// those of `image`.
    fn assert_carried(part: Part, from: &Geometry, image: Part, to: &Geometry, map: impl Fn(Part) -> Part) {
        assert_eq!(part.is_legal(from), image.is_legal(to));
        if part.is_legal(from) {
            let mut moves = Vec::new();
            part.for_each_move(from, |_, _, _, after| moves.push(map(after)));
            let mut image_moves = Vec::new();
            image.for_each_move(to, |_, _, _, after| image_moves.push(after));
            moves.sort();
            image_moves.sort();
            assert_eq!(moves, image_moves);
        }
    }

    /// The goal of the standard start on the class of `geo`: white on the
    /// class's squares of the top row, black on those of the bottom row;
    /// `None` when the class has none there or the goal is illegal.
    fn standard_goal(geo: &Geometry) -> Option<Part> {
        let goal = Part {
            white: geo.row(geo.board().rows() - 1),
            black: geo.row(0),
        };
        (!goal.white.is_empty() && goal.white.count() == goal.black.count() && goal.is_legal(geo)).then_some(goal)
    }

    /// Every class of every standard start on boards of 3 to 9 rows with
    /// fewer columns than rows: (rows, columns, geometry, goal).
    fn standard_classes() -> Vec<(u8, u8, Geometry, Part)> {
        let mut classes = Vec::new();
        for rows in 3..=9u8 {
            for cols in 2..rows {
                for class in [Class::Even, Class::Odd] {
                    let geo = Geometry::new(Board::new(rows.into(), cols.into()).unwrap(), class);
                    if let Some(goal) = standard_goal(&geo) {
                        classes.push((rows, cols, geo, goal));
                    }
                }
            }
        }
        classes
    }

    #[test]
    fn mirror_carries_legality_and_moves() {
        let board = Board::new(7, 6).unwrap();
        let odd = Geometry::new(board, Class::Odd);
        let even = Geometry::new(board, Class::Even);
        let mirror = Mirror::left_right(&odd, &even).unwrap();
        for part in random_parts(odd.all(), 0x9e37_79b9_7f4a_7c15, 2000) {
            assert_carried(part, &odd, mirror.part(part), &even, |p| mirror.part(p));
        }
    }

    /// The symmetries found are the ones the board's shape predicts, and
    /// no others: odd rows, the top-bottom mirror with the colours
    /// exchanged; odd columns, the left-right mirror; rows + columns even,
    /// the half turn with the colours exchanged; odd by odd, all three.
    /// (Even rows and odd columns give a class different numbers of squares
    /// on the two home rows: no standard start.)
    #[test]
    fn symmetries_follow_the_board_shape() {
        let mut sizes = Vec::new();
        for (rows, cols, geo, goal) in standard_classes() {
            let group = Symmetries::of(&geo, goal);
            let mut want = Vec::new();
            if cols % 2 == 1 {
                want.push("left-right");
            }
            if rows % 2 == 1 {
                want.push("top-bottom, colours exchanged");
            }
            if (rows + cols) % 2 == 0 {
                want.push("half turn, colours exchanged");
            }
            assert_eq!(group.names(), want, "{rows}x{cols} {:?}", geo.class());
            assert!(group.elements()[0].is_identity());
            for s in group.elements() {
                assert_eq!(s.part(goal), goal, "{rows}x{cols}: {}", s.name());
            }
            sizes.push(group.order());
            if rows % 2 == 1 && cols % 2 == 1 {
                assert_eq!(group.order(), 4, "{rows}x{cols}");
            }
        }
        // Groups of 2 and of 4 both occur (odd-by-odd boards give the 4).
        assert!(sizes.contains(&2) && sizes.contains(&4));
    }

    /// The boards the solver is aimed at: 11x10 has the top-bottom mirror
    /// with the colours exchanged, 12x10 exactly the half turn with the
    /// colours exchanged, in both classes.
    #[test]
    fn the_large_boards_have_one_symmetry_each() {
        for (rows, cols, want) in [
            (11, 10, "top-bottom, colours exchanged"),
            (12, 10, "half turn, colours exchanged"),
            (11, 8, "top-bottom, colours exchanged"),
        ] {
            for class in [Class::Even, Class::Odd] {
                let geo = Geometry::new(Board::new(rows, cols).unwrap(), class);
                let group = Symmetries::of(&geo, standard_goal(&geo).unwrap());
                assert_eq!(group.names(), [want], "{rows}x{cols} {class:?}");
            }
        }
    }

    /// Every symmetry found carries legality and moves, checked on every
    /// placement of the class's bishops of the small boards.
    #[test]
    fn every_symmetry_carries_every_placement() {
        let mut boards = 0;
        for (rows, cols, geo, goal) in standard_classes() {
            let dense = DenseIndex::new(geo.len() as u32, goal.white.count(), goal.black.count());
            if dense.len() > 60_000 {
                continue;
            }
            boards += 1;
            let group = Symmetries::of(&geo, goal);
            for s in &group.elements()[1..] {
                for hash in 0..dense.len() {
                    let part = dense.unrank(hash);
                    assert_carried(part, &geo, s.part(part), &geo, |p| s.part(p));
                    assert_eq!(s.part(s.part(part)), part, "{rows}x{cols} {}: an involution", s.name());
                }
            }
        }
        assert!(boards >= 10, "{boards}");
    }

    /// A group of 4 on a board too large to check every placement.
    #[test]
    fn the_group_of_four_carries_random_placements() {
        let geo = Geometry::new(Board::new(9, 7).unwrap(), Class::Even);
        let group = Symmetries::of(&geo, standard_goal(&geo).unwrap());
        assert_eq!(group.order(), 4);
        for s in group.elements() {
            for part in random_parts(geo.all(), 0x2545_f491_4f6c_dd1d, 3000) {
                assert_carried(part, &geo, s.part(part), &geo, |p| s.part(p));
            }
        }
    }

    /// The symmetries of a class form a group: the composition of any two
    /// is one of them.
    #[test]
    fn symmetries_are_closed_under_composition() {
        for (rows, cols, geo, goal) in standard_classes() {
            let group = Symmetries::of(&geo, goal);
            for a in group.elements() {
                for b in group.elements() {
                    let ab = a.then(b);
                    assert!(
                        group.elements().contains(&ab),
                        "{rows}x{cols}: {} then {} is {} (not found)",
                        a.name(),
                        b.name(),
                        ab.name()
                    );
                    let part = random_parts(geo.all(), u64::from(rows) << 8 | u64::from(cols), 1)
                        .next()
                        .unwrap();
                    assert_eq!(ab.part(part), b.part(a.part(part)));
                }
            }
        }
    }

    /// Counting the sets below a bound agrees with listing them.
    #[test]
    fn subsets_below_count_the_sets_below() {
        for cells in [0b1011_0110u64, 0xff, 0x8000_0000_0000_0001, 0b1_0000_1110] {
            for k in 0..=cells.count_ones() + 1 {
                for bound in [0u64, 1, 0b110, 0b1010_0000, 0x8000_0000_0000_0000, u64::MAX] {
                    let listed = Subsets::new(Bitboard(cells), k).filter(|t| t.0 < bound).count() as u64;
                    assert_eq!(
                        subsets_below(Bitboard(cells), k, Bitboard(bound)),
                        listed,
                        "{cells:#x} {k} {bound:#x}"
                    );
                }
            }
        }
    }

    /// A block's canonical share is its share of canonical positions, to
    /// within the ties it leaves out and the guesses it makes for several
    /// checks: within 10% over the whole class, and exact but for ties in
    /// blocks with one exchanging check.
    #[test]
    fn canonical_shares_match_the_blocks() {
        for (rows, cols, class) in [(7, 4, Class::Even), (7, 5, Class::Odd), (8, 6, Class::Even)] {
            let geo = Geometry::new(Board::new(rows, cols).unwrap(), class);
            let goal = standard_goal(&geo).unwrap();
            let (w, b) = (goal.white.count(), goal.black.count());
            let index = TightIndex::new(&geo, w, b);
            let group = Symmetries::of(&geo, goal);
            let (mut estimated, mut counted) = (0.0, 0u64);
            for r in 0..index.white_sets() {
                let white = colex_unrank(r, w);
                let Some(test) = group.block_test(white) else { continue };
                let safe = index.safe(r);
                let canonical = Subsets::new(safe, b).filter(|&black| test.is_canonical(black)).count() as u64;
                let share = test.canonical_share(safe, b);
                let block = index.block(r);
                estimated += share * (block.end - block.start) as f64;
                counted += canonical;
                if let [Check::Exchange { map, .. }] = test.checks[..test.len] {
                    let ties = Subsets::new(safe, b)
                        .filter(|&black| map_cells(map, black) == white)
                        .count();
                    let above = share * (block.end - block.start) as f64;
                    assert!(
                        (above - (canonical as f64)).abs() <= ties as f64 + 1e-6,
                        "{rows}x{cols} block {r}"
                    );
                }
            }
            let off = (estimated - counted as f64).abs() / counted as f64;
            assert!(off < 0.1, "{rows}x{cols}: {estimated} estimated, {counted} counted");
        }
    }

    /// Exactly one position of each orbit is canonical; the block test
    /// agrees with the test of a position, and says a block has none only
    /// when it has none (exactly so with at most one symmetry besides the
    /// identity).
    #[test]
    fn one_canonical_position_per_orbit() {
        let boards = [
            (5, 4, Class::Even),
            (7, 4, Class::Even),
            (5, 3, Class::Even),
            (7, 5, Class::Even),
            (7, 5, Class::Odd),
            (5, 3, Class::Odd),
            (7, 3, Class::Even),
            (6, 4, Class::Even),
            (8, 4, Class::Odd),
            (8, 6, Class::Even),
        ];
        for (rows, cols, class) in boards {
            let name = format!("{rows}x{cols} {class:?}");
            let geo = Geometry::new(Board::new(rows, cols).unwrap(), class);
            let goal = standard_goal(&geo).unwrap();
            let (w, b) = (goal.white.count(), goal.black.count());
            let index = TightIndex::new(&geo, w, b);
            let group = Symmetries::of(&geo, goal);
            let mut canonical = 0;
            for r in 0..index.white_sets() {
                let white = colex_unrank(r, w);
                let safe = index.safe(r);
                let test = group.block_test(white);
                let may = group.may_hold_canonical(white, safe, b);
                let mut any = false;
                for black in Subsets::new(safe, b) {
                    let part = Part { white, black };
                    let is = group.is_canonical(part);
                    assert_eq!(is, group.canonical(part) == part, "{name} {part:?}");
                    match test {
                        Some(t) => assert_eq!(t.is_canonical(black), is, "{name} {part:?}"),
                        None => assert!(!is, "{name} {part:?}: canonical, but its white set says none is"),
                    }
                    assert!(may || !is, "{name} {part:?}: a canonical position in a skipped block");
                    let images = group.images(part);
                    let orbit = 1 + images.as_slice().len();
                    assert_eq!(group.order() % orbit, 0, "{name} {part:?}");
                    let canonical_in_orbit =
                        usize::from(is) + images.as_slice().iter().filter(|&&p| group.is_canonical(p)).count();
                    assert_eq!(canonical_in_orbit, 1, "{name} {part:?}");
                    for &image in images.as_slice() {
                        assert!(image.is_legal(&geo));
                        assert_eq!(group.canonical(image), group.canonical(part));
                    }
                    any |= is;
                    canonical += usize::from(is);
                }
                if group.order() <= 2 && Subsets::new(safe, b).next().is_some() {
                    assert_eq!(may, any, "{name} block {r}");
                }
            }
            // A group of g symmetries leaves at least 1/g of the positions.
            assert!(canonical as u64 * group.order() as u64 >= index.len(), "{name}");
            if !group.is_trivial() {
                assert!((canonical as u64) < index.len(), "{name}");
            }
        }
    }

    #[test]
    fn odd_columns_have_no_class_swapping_mirror() {
        let board = Board::new(9, 7).unwrap();
        assert!(Mirror::left_right(&Geometry::new(board, Class::Odd), &Geometry::new(board, Class::Even)).is_none());
    }

    #[test]
    fn motions_compose_as_the_klein_group() {
        for a in Motion::ALL {
            assert_eq!(a.then(a), Motion::Identity);
            for b in Motion::ALL {
                assert_eq!(a.then(b), b.then(a));
                let board = Board::new(7, 4).unwrap();
                for sq in board.squares() {
                    assert_eq!(b.square(board, a.square(board, sq)), a.then(b).square(board, sq));
                }
            }
        }
    }
}
