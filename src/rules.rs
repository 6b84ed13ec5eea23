//! The rules of one colour class: legality and moves.
//!
//! Everything here works on a [`Part`], the bishops of one colour class in
//! that class's cells, because the two classes never interact. Whole-board
//! positions are split into parts by [`Position::part`](crate::Position::part).

use crate::bitboard::{Bitboard, Word};
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
pub struct Part<W: Word = u64> {
    /// Cells of the white bishops.
    pub white: Bitboard<W>,
    /// Cells of the black bishops.
    pub black: Bitboard<W>,
}

impl<W: Word> Part<W> {
    /// Every occupied cell.
    pub fn occupied(self) -> Bitboard<W> {
        self.white | self.black
    }

    /// The same cells with the colours exchanged: the goal of a start.
    #[must_use]
    pub fn swapped(self) -> Part<W> {
        Part {
            white: self.black,
            black: self.white,
        }
    }

    /// The bishops of `colour`.
    pub fn of(self, colour: Colour) -> Bitboard<W> {
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
    pub fn is_legal(self, geo: &Geometry<W>) -> bool {
        self.black.is_subset(safe_cells(geo, self.white))
    }

    /// Calls `f(colour, from, to, after)` for every legal move: a bishop of
    /// either colour slides diagonally over empty cells to an empty cell, and
    /// the part after the move is legal. `self` must be legal. The moves come
    /// in the order of [`find_move`](Self::find_move): black bishops first.
    #[inline]
    pub fn for_each_move(self, geo: &Geometry<W>, mut f: impl FnMut(Colour, u8, u8, Part<W>)) {
        self.find_move(geo, |colour, from, to, after| -> Option<()> {
            f(colour, from, to, after);
            None
        });
    }

    /// The first `Some` that `f(colour, from, to, after)` returns over the
    /// legal moves of [`for_each_move`](Self::for_each_move), stopping
    /// there; `None` when every call returns `None`. `self` must be legal.
    ///
    /// It is for searches that want one move with some property (a neighbour
    /// one closer to the goal, say). The moves of black bishops are tried
    /// first, by bishop, then those of white bishops: a black move keeps the
    /// white set, so the part after it lies in the same block of the tight
    /// index, and of a database, as `self`, and a search that finds its move
    /// there reads no other block.
    ///
    /// # Examples
    ///
    /// ```
    /// use bishops::{Board, Class, Colour, Geometry, Part};
    ///
    /// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
    /// let start = Part { white: geo.row(0), black: geo.row(4) };
    /// // The first move tried is a black one, and the search stops there.
    /// let mut tried = 0;
    /// let first = start.find_move(&geo, |colour, _, _, after| {
    ///     tried += 1;
    ///     Some((colour, after))
    /// });
    /// let (colour, after) = first.unwrap();
    /// assert_eq!((colour, tried), (Colour::Black, 1));
    /// assert_eq!(after.white, start.white);
    /// // A white move, when only white ones will do.
    /// let white = start.find_move(&geo, |colour, from, to, _| (colour == Colour::White).then_some((from, to)));
    /// assert!(white.is_some());
    /// ```
    #[inline]
    pub fn find_move<T>(self, geo: &Geometry<W>, mut f: impl FnMut(Colour, u8, u8, Part<W>) -> Option<T>) -> Option<T> {
        self.find_pseudo_legal_move(geo, safe_cells(geo, self.white), |colour, from, to, after| {
            // A black move to a safe cell is legal; a white one may not be.
            if colour == Colour::White && !white_move_keeps_legal(geo, to, after) {
                return None;
            }
            f(colour, from, to, after)
        })
    }

    /// [`find_move`](Self::find_move) with the safe cells of the white set
    /// given and no legality check of white moves: the black moves (all
    /// legal) to cells of `safe`, which must be
    /// [`safe_cells`]`(geo, self.white)`, then every slide of a white bishop
    /// to an empty cell, legal or not, in the same order. `f` must refuse
    /// the illegal white moves itself.
    ///
    /// It is for callers with a tight index at hand, which holds the safe
    /// cells of every white set and ranks only legal parts: they skip
    /// computing the safe cells here and checking legality twice.
    #[inline]
    pub(crate) fn find_pseudo_legal_move<T>(
        self,
        geo: &Geometry<W>,
        safe: Bitboard<W>,
        mut f: impl FnMut(Colour, u8, u8, Part<W>) -> Option<T>,
    ) -> Option<T> {
        let occupied = self.occupied();
        let empty = !occupied & geo.all();
        // White does not move, so the safe cells for black stay the same.
        for from in self.black {
            let black = self.black.without(from);
            for to in geo.attacks(from, occupied) & empty & safe {
                let after = Part {
                    white: self.white,
                    black: black.with(to),
                };
                if let found @ Some(_) = f(Colour::Black, from, to, after) {
                    return found;
                }
            }
        }
        for from in self.white {
            let white = self.white.without(from);
            for to in geo.attacks(from, occupied) & empty {
                let after = Part {
                    white: white.with(to),
                    black: self.black,
                };
                if let found @ Some(_) = f(Colour::White, from, to, after) {
                    return found;
                }
            }
        }
        None
    }

    /// The first pair (attacker, victim) of opposite colours where the
    /// attacker sees the victim, if any, in cell order of the victim.
    pub fn first_attack(self, geo: &Geometry<W>) -> Option<(u8, u8)> {
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

/// Whether `after`, a legal part with one white bishop then slid to `to`,
/// is legal: [`Part::is_legal`] of `after`, from one bishop's attacks
/// instead of every white bishop's.
///
/// A move brings two bishops of opposite colours into each other's sight
/// only if one of them is the moved bishop, or if the cell it left was all
/// that stood between them. The second cannot happen: from the cell it
/// left, the moved bishop saw the nearest bishop on each side along both
/// its diagonals, and in a legal part those are white. (Arriving on `to` only blocks
/// lines.) So `after` is legal exactly when the bishop on `to` sees no
/// black bishop.
#[inline]
fn white_move_keeps_legal<W: Word>(geo: &Geometry<W>, to: u8, after: Part<W>) -> bool {
    (geo.attacks(to, after.occupied()) & after.black).is_empty()
}

/// The cells that `white` bishops do not attack when only white bishops block:
/// the cells where a black bishop may stand beside this white set.
///
/// A placement is legal exactly when every black bishop stands on one of
/// these. If a white bishop saw a black one through a gap that another black
/// bishop fills, that nearer black bishop would be attacked.
pub fn safe_cells<W: Word>(geo: &Geometry<W>, white: Bitboard<W>) -> Bitboard<W> {
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

    /// The moves of `part` with legality by the definition: every slide of
    /// a bishop over empty cells to an empty cell that leaves no bishop
    /// attacked.
    fn moves_by_definition(geo: &Geometry, part: Part) -> Vec<(Colour, u8, u8, Part)> {
        let mut moves = Vec::new();
        for (colour, bishops) in [(Colour::White, part.white), (Colour::Black, part.black)] {
            for from in bishops {
                let reach = geo.attacks(from, part.occupied()) & !part.occupied() & geo.all();
                for to in reach {
                    let after = match colour {
                        Colour::White => Part {
                            white: part.white.without(from).with(to),
                            black: part.black,
                        },
                        Colour::Black => Part {
                            white: part.white,
                            black: part.black.without(from).with(to),
                        },
                    };
                    if legal_by_definition(geo, after) {
                        moves.push((colour, from, to, after));
                    }
                }
            }
        }
        moves
    }

    #[test]
    fn find_move_tries_every_legal_move_black_first_and_stops() {
        let geo = Geometry::new(Board::new(7, 4).unwrap(), Class::Even);
        let n = geo.len() as u32;
        let mut parts = 0;
        for white in 0u64..1 << n {
            if white.count_ones() != 3 {
                continue;
            }
            for black in 0u64..1 << n {
                if black & white != 0 || black.count_ones() != 2 {
                    continue;
                }
                let part = Part {
                    white: Bitboard(white),
                    black: Bitboard(black),
                };
                if !part.is_legal(&geo) {
                    continue;
                }
                parts += 1;
                let mut seen = Vec::new();
                let none: Option<()> = part.find_move(&geo, |colour, from, to, after| {
                    seen.push((colour, from, to, after));
                    None
                });
                assert!(none.is_none());
                let mut each = Vec::new();
                part.for_each_move(&geo, |colour, from, to, after| each.push((colour, from, to, after)));
                assert_eq!(each, seen, "{part:?}: for_each_move and find_move");
                let blacks = seen.iter().take_while(|m| m.0 == Colour::Black).count();
                assert!(
                    seen[blacks..].iter().all(|m| m.0 == Colour::White),
                    "{part:?}: black first"
                );
                let mut expected = moves_by_definition(&geo, part);
                let key = |m: &(Colour, u8, u8, Part)| (m.0 == Colour::White, m.1, m.2);
                expected.sort_by_key(key);
                seen.sort_by_key(key);
                assert_eq!(expected, seen, "{part:?}");
                // Stopping at the k-th move: it is returned, and no later move is tried.
                for (k, &expected) in each.iter().enumerate() {
                    let mut calls = 0;
                    let found = part.find_move(&geo, |colour, from, to, after| {
                        calls += 1;
                        (calls == k + 1).then_some((colour, from, to, after))
                    });
                    assert_eq!((found, calls), (Some(expected), k + 1), "{part:?}");
                }
            }
        }
        assert!(parts > 100);
    }

    /// White moves are checked for legality by the moved bishop's attacks
    /// alone ([`white_move_keeps_legal`]): on crowded parts of a wide board
    /// and of one with holes, which end diagonals, the moves are still
    /// exactly those of the definition.
    #[test]
    fn moves_of_crowded_parts_match_the_definition() {
        let wide = Board::new(9, 8).unwrap();
        let holed = Board::holed(
            9,
            8,
            &["c3".parse().unwrap(), "e5".parse().unwrap(), "f2".parse().unwrap()],
        )
        .unwrap();
        let mut state = 1u64;
        let mut next = move || crate::index::splitmix(&mut state);
        let mut checked = 0;
        for board in [wide, holed] {
            for class in [Class::Even, Class::Odd] {
                let geo = Geometry::new(board, class);
                let cells = geo.len() as u64;
                for _ in 0..3_000 {
                    let (mut white, mut black) = (Bitboard::EMPTY, Bitboard::EMPTY);
                    let (whites, blacks) = (2 + next() % 8, 2 + next() % 8);
                    while u64::from(white.count()) < whites {
                        white = white.with((next() % cells) as u8);
                    }
                    // Black bishops where the white ones leave room, so
                    // that most parts drawn are legal.
                    let safe = safe_cells(&geo, white);
                    let room = u64::from(safe.count());
                    for _ in 0..blacks.min(room) {
                        black = black.with(safe.iter().nth((next() % room) as usize).unwrap());
                    }
                    let part = Part { white, black };
                    if !legal_by_definition(&geo, part) {
                        continue;
                    }
                    checked += 1;
                    let mut seen = Vec::new();
                    part.for_each_move(&geo, |colour, from, to, after| seen.push((colour, from, to, after)));
                    let mut expected = moves_by_definition(&geo, part);
                    let key = |m: &(Colour, u8, u8, Part)| (m.0 == Colour::White, m.1, m.2);
                    expected.sort_by_key(key);
                    seen.sort_by_key(key);
                    assert_eq!(expected, seen, "{board:?} {class:?} {part:?}");
                }
            }
        }
        assert!(checked > 5_000, "{checked} legal parts");
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
