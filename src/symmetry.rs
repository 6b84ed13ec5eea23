//! Symmetries of the board that carry one colour class onto the other.
//!
//! On a board with an even number of columns, the left-right mirror sends
//! every square of one colour class to a square of the other. When it also
//! sends diagonals to diagonals (checked ray by ray, not assumed) and one
//! class's start to the other's, it is an isomorphism of the two class
//! puzzles, so one class's table gives the other's for free.

use crate::bitboard::Bitboard;
use crate::board::Geometry;
use crate::index::rank_within;
use crate::rules::Part;
use crate::square::Square;
use crate::tight::Subsets;

/// Directions as the mirror sees them: up-right and up-left swap, and so do
/// down-right and down-left.
const MIRRORED_DIRECTION: [usize; 4] = [1, 0, 3, 2];

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
        let board = from.board();
        if board != to.board() || from.len() != to.len() {
            return None;
        }
        let map = (0..from.len() as u8)
            .map(|cell| {
                let sq = from.square(cell);
                to.cell(Square::new(sq.row(), board.cols() - 1 - sq.col()))
            })
            .collect::<Option<Vec<u8>>>()?;
        let mirror = Mirror { map };
        let image: Bitboard = mirror.map.iter().copied().collect();
        if image != to.all() {
            return None;
        }
        for cell in 0..from.len() as u8 {
            for (d, &md) in MIRRORED_DIRECTION.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Class};

    #[test]
    fn mirror_carries_legality_and_moves() {
        let board = Board::new(7, 6).unwrap();
        let odd = Geometry::new(board, Class::Odd);
        let even = Geometry::new(board, Class::Even);
        let mirror = Mirror::left_right(&odd, &even).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let white = Bitboard(seed) & odd.all();
            let black = Bitboard(seed.rotate_left(23)) & odd.all() & !white;
            let part = Part { white, black };
            let image = mirror.part(part);
            assert_eq!(part.is_legal(&odd), image.is_legal(&even));
            if part.is_legal(&odd) {
                let mut moves = Vec::new();
                part.for_each_move(&odd, |_, _, _, after| moves.push(mirror.part(after)));
                let mut image_moves = Vec::new();
                image.for_each_move(&even, |_, _, _, after| image_moves.push(after));
                moves.sort();
                image_moves.sort();
                assert_eq!(moves, image_moves);
            }
        }
    }

    #[test]
    fn odd_columns_have_no_class_swapping_mirror() {
        let board = Board::new(9, 7).unwrap();
        assert!(Mirror::left_right(&Geometry::new(board, Class::Odd), &Geometry::new(board, Class::Even)).is_none());
    }
}
