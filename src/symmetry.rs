//! Symmetries of the board and the puzzle.
//!
//! - [`Mirror::left_right`]: on a board with an even number of columns, the
//!   left-right mirror sends every square of one colour class to a square of
//!   the other. When it also sends diagonals to diagonals (checked ray by
//!   ray, not assumed) and one class's start to the other's, it is an
//!   isomorphism of the two class puzzles, so one class's table gives the
//!   other's for free.
//! - [`Reflection`]: on a board with an odd number of rows, the top-bottom
//!   mirror keeps each class, and with the colours exchanged it sends the
//!   goal to itself. A position and its reflection are then equally far from
//!   the goal, so a search need only expand one of the two.

use crate::bitboard::Bitboard;
use crate::board::Geometry;
use crate::index::rank_within;
use crate::rules::Part;
use crate::square::Square;
use crate::tight::Subsets;

/// Directions as the left-right mirror sees them: up-right and up-left swap,
/// and so do down-right and down-left.
const MIRRORED_DIRECTION: [usize; 4] = [1, 0, 3, 2];

/// Directions as the top-bottom mirror sees them: up-right and down-right
/// swap, and so do up-left and down-left.
const FLIPPED_DIRECTION: [usize; 4] = [2, 3, 0, 1];

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
    pub fn left_right(from: &Geometry, to: &Geometry) -> Option<Mirror> {
        let cols = from.board().cols();
        Mirror::verified(from, to, MIRRORED_DIRECTION, |sq| {
            Square::new(sq.row(), cols - 1 - sq.col())
        })
    }

    /// The top-bottom mirror of the cells of `geo` onto themselves, if it
    /// maps every cell to a cell of the same class (the board has an odd
    /// number of rows) and every ray to the flipped ray.
    ///
    /// # Examples
    ///
    /// ```
    /// use bishops::{Board, Class, Geometry, Mirror};
    ///
    /// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
    /// let flip = Mirror::top_bottom(&geo).unwrap();
    /// let a1 = geo.cell("a1".parse().unwrap()).unwrap();
    /// assert_eq!(geo.square(flip.cell(a1)).to_string(), "e1");
    /// // On an even number of rows the flip changes each square's class.
    /// let geo = Geometry::new(Board::new(6, 4).unwrap(), Class::Even);
    /// assert!(Mirror::top_bottom(&geo).is_none());
    /// ```
    pub fn top_bottom(geo: &Geometry) -> Option<Mirror> {
        let rows = geo.board().rows();
        Mirror::verified(geo, geo, FLIPPED_DIRECTION, |sq| {
            Square::new(rows - 1 - sq.row(), sq.col())
        })
    }

    /// The map of every cell of `from` to the cell of `to` on the square
    /// `square` gives, if that is one to one and sends each ray of direction
    /// `d` to the ray of direction `directions[d]`.
    fn verified(
        from: &Geometry,
        to: &Geometry,
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
        let image: Bitboard = mirror.map.iter().copied().collect();
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
    pub fn cells(&self, set: Bitboard) -> Bitboard {
        set.iter().map(|c| self.cell(c)).collect()
    }

    /// Fills `out` with one block of the mirrored class from the block of its
    /// image: every position of a block has one white set, whose safe cells
    /// are `safe`, and its image has one white set too, whose safe cells are
    /// `image_safe`, so a block is a permutation of its image's block.
    /// `source` holds the image block's cells and `out` receives this
    /// block's, each in colex order of the `black`-bishop sets among the
    /// safe cells.
    pub fn block(&self, safe: Bitboard, black: u32, image_safe: Bitboard, source: &[u8], out: &mut [u8]) {
        for (cell, set) in out.iter_mut().zip(Subsets::new(safe, black)) {
            *cell = source[rank_within(self.cells(set), image_safe) as usize];
        }
    }

    /// The image of a part: each bishop moved to its mirror square.
    pub fn part(&self, part: Part) -> Part {
        Part {
            white: self.cells(part.white),
            black: self.cells(part.black),
        }
    }
}

/// The top-bottom mirror with the colours exchanged, on one class whose
/// goal it fixes: an automorphism of that class's puzzle.
///
/// Legality and moves only ask whether bishops of different colours see
/// each other, which neither a ray-preserving mirror nor an exchange of
/// colours changes, and the goal (white on the top row, black on the
/// bottom) is its own reflection. So a position and its reflection have one
/// remoteness. The searches use it to expand only one position of each such
/// pair, the *canonical* one: the one whose white set, read as a number, is
/// not above its reflection's ([`is_canonical`](Self::is_canonical)).
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class, Geometry, Part, Reflection};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// let goal = Part { white: geo.row(4), black: geo.row(0) };
/// let reflection = Reflection::new(&geo, goal).unwrap();
/// assert_eq!(reflection.part(goal), goal);
/// let start = goal.swapped();
/// assert_eq!(reflection.part(start), start);
/// ```
#[derive(Clone, Debug)]
pub struct Reflection {
    /// `map[c]`: the cell of `c`'s mirror square; 0 beyond the class.
    map: [u8; 64],
}

impl Reflection {
    /// The reflection of the class of `geo`, when the board has an odd
    /// number of rows and it fixes `goal`.
    pub fn new(geo: &Geometry, goal: Part) -> Option<Reflection> {
        let mirror = Mirror::top_bottom(geo)?;
        let mut map = [0u8; 64];
        for (cell, &image) in mirror.map.iter().enumerate() {
            map[cell] = image;
        }
        let reflection = Reflection { map };
        (reflection.part(goal) == goal).then_some(reflection)
    }

    /// The mirror image of a set of cells.
    #[inline]
    pub fn cells(&self, set: Bitboard) -> Bitboard {
        let mut image = 0u64;
        let mut bits = set.0;
        while bits != 0 {
            image |= 1 << (self.map[bits.trailing_zeros() as usize & 63] & 63);
            bits &= bits - 1;
        }
        Bitboard(image)
    }

    /// The reflection of a part: mirrored, colours exchanged.
    #[inline]
    pub fn part(&self, part: Part) -> Part {
        Part {
            white: self.cells(part.black),
            black: self.cells(part.white),
        }
    }

    /// Whether `part` is the canonical one of it and its reflection: its
    /// white set, as a number, is at most the reflection's. Exactly one of
    /// the two is, unless the part is its own reflection, which is.
    #[inline]
    pub fn is_canonical(&self, part: Part) -> bool {
        part.white.0 <= self.cells(part.black).0
    }

    /// Whether some position with white set `white` and `black` black
    /// bishops among the cells `safe` is canonical: the largest mirrored
    /// black set is the top `black` cells of the mirrored `safe`.
    #[inline]
    pub fn has_canonical(&self, white: Bitboard, safe: Bitboard, black: u32) -> bool {
        let mut image = self.cells(safe).0;
        if image.count_ones() < black {
            return false;
        }
        while image.count_ones() > black {
            image &= image - 1;
        }
        white.0 <= image
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Class};

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

    #[test]
    fn reflection_carries_legality_and_moves_and_fixes_the_goal() {
        for (rows, cols) in [(5, 4), (7, 6), (9, 8), (7, 5)] {
            let board = Board::new(rows, cols).unwrap();
            for class in [Class::Even, Class::Odd] {
                let geo = Geometry::new(board, class);
                let k = (cols / 2) as usize;
                let top: Bitboard = geo.row(rows as u8 - 1);
                let bottom: Bitboard = geo.row(0);
                if top.count() as usize != k || bottom.count() as usize != k {
                    continue;
                }
                let goal = Part {
                    white: top,
                    black: bottom,
                };
                let reflection = Reflection::new(&geo, goal).unwrap();
                let seed = 0x2545_f491_4f6c_dd1d ^ u64::from(rows * 16 + cols);
                for part in random_parts(geo.all(), seed, 2000) {
                    let image = reflection.part(part);
                    assert_eq!(reflection.part(image), part);
                    assert!(reflection.is_canonical(part) || reflection.is_canonical(image));
                    assert_eq!(
                        reflection.is_canonical(part) && reflection.is_canonical(image),
                        part == image
                    );
                    assert_carried(part, &geo, image, &geo, |p| reflection.part(p));
                }
            }
        }
    }

    #[test]
    fn has_canonical_is_exact() {
        let geo = Geometry::new(Board::new(7, 6).unwrap(), Class::Even);
        let goal = Part {
            white: geo.row(6),
            black: geo.row(0),
        };
        let reflection = Reflection::new(&geo, goal).unwrap();
        let index = crate::tight::TightIndex::new(&geo, 3, 3);
        for r in 0..index.white_sets() {
            let white = crate::index::colex_unrank(r, 3);
            let safe = index.safe(r);
            let any = Subsets::new(safe, 3).any(|black| reflection.is_canonical(Part { white, black }));
            assert_eq!(reflection.has_canonical(white, safe, 3), any, "{white:?}");
        }
    }

    #[test]
    fn even_rows_have_no_reflection() {
        let geo = Geometry::new(Board::new(6, 4).unwrap(), Class::Even);
        assert!(Mirror::top_bottom(&geo).is_none());
    }

    #[test]
    fn odd_columns_have_no_class_swapping_mirror() {
        let board = Board::new(9, 7).unwrap();
        assert!(Mirror::left_right(&Geometry::new(board, Class::Odd), &Geometry::new(board, Class::Even)).is_none());
    }
}
