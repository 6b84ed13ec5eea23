//! The rules of one colour class: legality and moves.
//!
//! Everything here works on a [`Part`], the bishops of one colour class in
//! that class's cells, because the two classes never interact. Whole-board
//! positions are split into parts by [`Position::part`](crate::Position::part).

use crate::bitboard::Bitboard;
use crate::board::Geometry;

/// The colour of a bishop.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Colour {
    /// White starts on the bottom row.
    White,
    /// Black starts on the top row.
    Black,
}

/// The bishops of one colour class: a set of white cells and a disjoint set
/// of black cells of a [`Geometry`].
///
/// # Examples
///
/// ```
/// use bishops::{Bitboard, Board, Class, Geometry, Part};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// let start = Part { white: geo.row(0), black: geo.row(4) };
/// assert!(start.is_legal(&geo));
/// assert_eq!(start.swapped(), Part { white: geo.row(4), black: geo.row(0) });
/// let mut moves = 0;
/// start.for_each_move(&geo, |_, _, _, _| moves += 1);
/// assert_eq!(moves, 4);
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Part {
    /// Cells of the white bishops.
    pub white: Bitboard,
    /// Cells of the black bishops.
    pub black: Bitboard,
}

impl Part {
    /// Every occupied cell.
    pub fn occupied(self) -> Bitboard {
        self.white | self.black
    }

    /// The same cells with the colours exchanged: the goal of a start.
    #[must_use]
    pub fn swapped(self) -> Part {
        Part {
            white: self.black,
            black: self.white,
        }
    }

    /// The bishops of `colour`.
    pub fn of(self, colour: Colour) -> Bitboard {
        match colour {
            Colour::White => self.white,
            Colour::Black => self.black,
        }
    }

    /// Whether no bishop stands where one of the other colour attacks it.
    ///
    /// This uses the fact that a placement is legal exactly when the black
    /// bishops avoid every cell the white bishops attack with only white
    /// bishops blocking (see [`safe_cells`]).
    pub fn is_legal(self, geo: &Geometry) -> bool {
        self.black.is_subset(safe_cells(geo, self.white))
    }

    /// Calls `f(colour, from, to, after)` for every legal move: a bishop of
    /// either colour slides diagonally over empty cells to an empty cell, and
    /// the part after the move is legal. `self` must be legal.
    #[inline]
    pub fn for_each_move(self, geo: &Geometry, mut f: impl FnMut(Colour, u8, u8, Part)) {
        let occupied = self.occupied();
        let empty = !occupied & geo.all();
        for from in self.white {
            let white = self.white.without(from);
            for to in geo.attacks(from, occupied) & empty {
                let after = Part {
                    white: white.with(to),
                    black: self.black,
                };
                if after.is_legal(geo) {
                    f(Colour::White, from, to, after);
                }
            }
        }
        // White did not move, so the safe cells for black stay the same.
        let safe = safe_cells(geo, self.white);
        for from in self.black {
            let black = self.black.without(from);
            for to in geo.attacks(from, occupied) & empty & safe {
                f(
                    Colour::Black,
                    from,
                    to,
                    Part {
                        white: self.white,
                        black: black.with(to),
                    },
                );
            }
        }
    }

    /// The first pair (attacker, victim) of opposite colours where the
    /// attacker sees the victim, if any, in cell order of the victim.
    pub fn first_attack(self, geo: &Geometry) -> Option<(u8, u8)> {
        let occupied = self.occupied();
        for victim in occupied {
            let enemies = if self.white.contains(victim) {
                self.black
            } else {
                self.white
            };
            if let Some(attacker) = (geo.attacks(victim, occupied) & enemies).first() {
                return Some((attacker, victim));
            }
        }
        None
    }
}

/// The cells that `white` bishops do not attack when only white bishops block:
/// the cells where a black bishop may stand beside this white set.
///
/// A placement is legal exactly when every black bishop stands on one of
/// these. If a white bishop saw a black one through a gap that another black
/// bishop fills, that nearer black bishop would be attacked.
pub fn safe_cells(geo: &Geometry, white: Bitboard) -> Bitboard {
    !(geo.attacks_of(white, white) | white) & geo.all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Class};

    /// Legality by the definition: no bishop sees one of the other colour.
    fn legal_by_definition(geo: &Geometry, part: Part) -> bool {
        part.first_attack(geo).is_none()
    }

    #[test]
    fn safe_cells_agree_with_the_definition_of_legality() {
        let geo = Geometry::new(Board::new(7, 4).unwrap(), Class::Even);
        let n = geo.len() as u32;
        // Every white set of up to 3 and black set of up to 3 in 14 cells.
        for white in 0u64..1 << n {
            if white.count_ones() > 3 {
                continue;
            }
            for black in 0u64..1 << n {
                if black & white != 0 || black.count_ones() > 3 {
                    continue;
                }
                let part = Part {
                    white: Bitboard(white),
                    black: Bitboard(black),
                };
                assert_eq!(part.is_legal(&geo), legal_by_definition(&geo, part), "{part:?}");
            }
        }
    }

    #[test]
    fn moves_are_reversible() {
        let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
        let start = Part {
            white: geo.row(0),
            black: geo.row(4),
        };
        start.for_each_move(&geo, |_, from, to, after| {
            let mut back = false;
            after.for_each_move(&geo, |_, f, t, again| back |= f == to && t == from && again == start);
            assert!(back, "move {from}->{to} cannot be undone");
        });
    }
}
