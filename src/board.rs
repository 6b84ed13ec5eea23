//! Board geometry: sizes, colour classes, cells and diagonal rays.

use std::fmt;

use crate::bitboard::{Bitboard, Word};
use crate::square::{MAX_ROWS, Square};

/// The most squares one colour class may have: a class fits a
/// [`Bitboard<u128>`](Bitboard).
pub const MAX_CLASS_SQUARES: usize = 128;

/// One of the two colour classes of squares.
///
/// A bishop never leaves its class, and attacks and blocking happen only
/// inside a class, so the two classes are independent puzzles.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Class {
    /// The class of `a1`: squares whose 0-based row + column is even.
    Even = 0,
    /// The class of `a2`: squares whose 0-based row + column is odd.
    Odd = 1,
}

impl Class {
    /// Both classes, `Even` first.
    pub const ALL: [Class; 2] = [Class::Even, Class::Odd];

    /// The class of a square.
    pub fn of(square: Square) -> Class {
        if square.parity() == 0 { Class::Even } else { Class::Odd }
    }

    /// 0 for `Even`, 1 for `Odd`: the class number used in databases.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The class with the given number.
    pub fn from_index(index: usize) -> Option<Class> {
        Class::ALL.get(index).copied()
    }

    /// The name of the class numbered `index` (`a1` or `a2`), as every
    /// message names a class; the number itself when no class has it (a
    /// damaged record's).
    pub fn name_of(index: usize) -> String {
        Class::from_index(index).map_or_else(|| index.to_string(), |c| c.name().to_owned())
    }

    /// The square that names the class: `a1` or `a2`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Even => "a1",
            Class::Odd => "a2",
        }
    }
}

/// A board: its size, `rows` × `cols`, and the squares cut out of it, if
/// any. At most 26 rows and at most 128 squares per colour class.
///
/// A *hole* is a square cut out of the board: it holds no bishop and stops
/// every diagonal that meets it, as the board's edge does. The standard
/// boards and the named variants have none; a variant file may cut some out.
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class};
///
/// let board = Board::new(5, 4).unwrap();
/// assert_eq!(board.to_string(), "5x4");
/// assert_eq!(board.class_squares(Class::Even), 10);
/// assert!(Board::new(27, 2).is_err());
/// assert!(Board::new(17, 16).is_err()); // 136 squares per class
///
/// let holed = board.with_holes(&["c2".parse().unwrap()]).unwrap();
/// assert_eq!(holed.to_string(), "5x4 (holes c2)");
/// assert_eq!(holed.class_squares(Class::Odd), 9);
/// assert!(!holed.contains("c2".parse().unwrap()));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Board {
    rows: u8,
    cols: u8,
    holes: Holes,
}

/// The holes of a board: bit `row * cols + col` of each square cut out.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
struct Holes([u64; 4]);

/// The most squares a board with holes may span, holes included: what
/// [`Holes`] has a bit for.
const MAX_HOLED_SQUARES: u32 = 256;

impl Board {
    /// A board of `rows` × `cols`.
    ///
    /// # Errors
    ///
    /// A one-line reason when the board has no rows or columns, more than 26
    /// rows, or more than 128 squares in a colour class.
    pub fn new(rows: u32, cols: u32) -> Result<Board, String> {
        let board = Board::sized(rows, cols)?;
        board.check_classes()?;
        Ok(board)
    }

    /// The board of `rows` × `cols` with nothing cut out, its size checked
    /// but not its classes.
    fn sized(rows: u32, cols: u32) -> Result<Board, String> {
        if rows == 0 || cols == 0 {
            return Err(format!("board {rows}x{cols} has no squares"));
        }
        if rows > u32::from(MAX_ROWS) {
            return Err(format!(
                "board {rows}x{cols} is out of range: at most {MAX_ROWS} rows (a to z)"
            ));
        }
        if cols > 255 {
            return Err(format!("board {rows}x{cols} is out of range: at most 255 columns"));
        }
        Ok(Board {
            rows: rows as u8,
            cols: cols as u8,
            holes: Holes::default(),
        })
    }

    /// Refuses a board with more squares in a class than a [`Bitboard`] holds.
    fn check_classes(self) -> Result<(), String> {
        for class in Class::ALL {
            let squares = self.class_squares(class);
            if squares > MAX_CLASS_SQUARES {
                return Err(format!(
                    "board {self} is out of range: {squares} squares per colour class, at most {MAX_CLASS_SQUARES}"
                ));
            }
        }
        Ok(())
    }

    /// This board with the squares `holes` cut out as well.
    ///
    /// # Errors
    ///
    /// A one-line reason when a hole is off the board or named twice, when
    /// the board spans more than 256 squares, or when a class still has more
    /// than 128 squares.
    pub fn with_holes(self, holes: &[Square]) -> Result<Board, String> {
        if holes.is_empty() {
            return Ok(self);
        }
        let span = u32::from(self.rows) * u32::from(self.cols);
        if span > MAX_HOLED_SQUARES {
            return Err(format!(
                "board {self} is out of range for holes: {span} squares, at most {MAX_HOLED_SQUARES}"
            ));
        }
        let mut board = self;
        for &hole in holes {
            if !self.within(hole) {
                return Err(format!("hole {hole} is off the {self} board"));
            }
            if board.is_hole(hole) {
                return Err(format!("hole {hole} is named twice"));
            }
            let bit = board.bit(hole);
            board.holes.0[bit / 64] |= 1 << (bit % 64);
        }
        board.check_classes()?;
        Ok(board)
    }

    /// The board of `rows` × `cols` less the squares `holes`: a board whose
    /// classes would be too large whole may still be set with holes.
    ///
    /// # Errors
    ///
    /// As [`Board::new`] and [`Board::with_holes`].
    pub fn holed(rows: u32, cols: u32, holes: &[Square]) -> Result<Board, String> {
        Board::sized(rows, cols)?.with_holes(holes)
    }

    /// The bit of `square` in [`Holes`].
    fn bit(self, square: Square) -> usize {
        usize::from(square.row()) * usize::from(self.cols) + usize::from(square.col())
    }

    /// Whether `square` is inside the rectangle, hole or not.
    pub fn within(self, square: Square) -> bool {
        square.row() < self.rows && square.col() < self.cols
    }

    /// Whether `square` is a hole of the board.
    pub fn is_hole(self, square: Square) -> bool {
        if !self.has_holes() || !self.within(square) {
            return false;
        }
        let bit = self.bit(square);
        self.holes.0[bit / 64] >> (bit % 64) & 1 != 0
    }

    /// The holes, in row-then-column order.
    pub fn holes(self) -> impl Iterator<Item = Square> {
        self.rectangle().filter(move |&sq| self.is_hole(sq))
    }

    /// Whether the board has holes.
    pub fn has_holes(self) -> bool {
        self.holes != Holes::default()
    }

    /// The same size with nothing cut out.
    #[must_use]
    pub fn whole(self) -> Board {
        Board {
            holes: Holes::default(),
            ..self
        }
    }

    /// The number of rows.
    pub fn rows(self) -> u8 {
        self.rows
    }

    /// The number of columns.
    pub fn cols(self) -> u8 {
        self.cols
    }

    /// Whether `square` is on the board: inside it and not a hole.
    pub fn contains(self, square: Square) -> bool {
        self.within(square) && !self.is_hole(square)
    }

    /// The number of squares of `class`, holes left out.
    pub fn class_squares(self, class: Class) -> usize {
        self.squares().filter(|&sq| Class::of(sq) == class).count()
    }

    /// Every square of the rectangle, holes included, in row-then-column order.
    fn rectangle(self) -> impl Iterator<Item = Square> {
        (0..self.rows).flat_map(move |row| (0..self.cols).map(move |col| Square::new(row, col)))
    }

    /// Every square, holes left out, in row-then-column order.
    pub fn squares(self) -> impl Iterator<Item = Square> {
        self.rectangle().filter(move |&sq| !self.is_hole(sq))
    }

    /// The squares of `row` that belong to `class`, left to right, holes
    /// left out.
    pub fn row_squares(self, row: u8, class: Class) -> impl Iterator<Item = Square> {
        (0..self.cols)
            .map(move |col| Square::new(row, col))
            .filter(move |&sq| Class::of(sq) == class && !self.is_hole(sq))
    }
}

/// `5x4`, or with holes `5x4 (holes b2-c3)`: the size, then the holes
/// joined as a position joins squares.
impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)?;
        if self.has_holes() {
            let holes: Vec<String> = self.holes().map(|sq| sq.to_string()).collect();
            write!(f, " (holes {})", holes.join("-"))?;
        }
        Ok(())
    }
}

/// The four diagonal directions as (row step, column step). The first two go
/// up the board, so along them cell numbers increase.
const DIRECTIONS: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// The geometry of one colour class of a board: its cells and diagonal rays.
///
/// The class's squares are numbered 0, 1, … in row-then-column order; these
/// numbers are the *cells* that [`Bitboard`]s hold. Moving up a row always
/// increases the cell number, which is what makes ray blocking a matter of
/// the lowest or highest set bit.
///
/// # Examples
///
/// ```
/// use bishops::{Board, Class, Geometry};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// assert_eq!(geo.len(), 10);
/// let a1 = geo.cell("a1".parse().unwrap()).unwrap();
/// let b2 = geo.cell("b2".parse().unwrap()).unwrap();
/// assert_eq!((a1, b2), (0, 2));
/// assert_eq!(geo.square(b2).to_string(), "b2");
/// // From b2 with nothing in the way a bishop reaches a1, a3, c1, c3, d4.
/// assert_eq!(geo.attacks(b2, bishops::Bitboard::EMPTY).count(), 5);
/// ```
#[derive(Clone, Debug)]
pub struct Geometry<W: Word = u64> {
    board: Board,
    class: Class,
    squares: Vec<Square>,
    /// Cell of each square of the board, by `row * cols + col`.
    cells: Vec<Option<u8>>,
    /// `rays[cell][d]`: the cells a bishop on `cell` sees in direction `d` on
    /// an empty board.
    rays: Vec<[Bitboard<W>; 4]>,
}

impl Geometry {
    /// The geometry of `class` on `board`, its sets in 64-bit words.
    pub fn new(board: Board, class: Class) -> Geometry {
        Geometry::in_words(board, class)
    }
}

impl<W: Word> Geometry<W> {
    /// The geometry of `class` on `board`, its sets in words `W`.
    ///
    /// # Panics
    ///
    /// When the class has more cells than a `W` holds.
    #[track_caller]
    pub fn in_words(board: Board, class: Class) -> Geometry<W> {
        let squares: Vec<Square> = board.squares().filter(|&sq| Class::of(sq) == class).collect();
        assert!(
            squares.len() <= W::BITS as usize,
            "{} squares in a class, more than a {}-bit word holds",
            squares.len(),
            W::BITS
        );
        let mut cells = vec![None; usize::from(board.rows) * usize::from(board.cols)];
        for (cell, sq) in squares.iter().enumerate() {
            cells[usize::from(sq.row()) * usize::from(board.cols) + usize::from(sq.col())] = Some(cell as u8);
        }
        let cell_at = |row: i16, col: i16| -> Option<u8> {
            if row < 0 || col < 0 || row >= i16::from(board.rows) || col >= i16::from(board.cols) {
                return None;
            }
            cells[row as usize * usize::from(board.cols) + col as usize]
        };
        let rays = squares
            .iter()
            .map(|sq| {
                DIRECTIONS.map(|(dr, dc)| {
                    let mut ray = Bitboard::<W>::EMPTY;
                    let (mut row, mut col) = (i16::from(sq.row()), i16::from(sq.col()));
                    loop {
                        row += i16::from(dr);
                        col += i16::from(dc);
                        match cell_at(row, col) {
                            Some(cell) => ray = ray.with(cell),
                            None => break ray,
                        }
                    }
                })
            })
            .collect();
        Geometry {
            board,
            class,
            squares,
            cells,
            rays,
        }
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// The class.
    pub fn class(&self) -> Class {
        self.class
    }

    /// The number of cells (squares of the class).
    pub fn len(&self) -> usize {
        self.squares.len()
    }

    /// Whether the class has no squares (only on a 1x1 board's odd class).
    pub fn is_empty(&self) -> bool {
        self.squares.is_empty()
    }

    /// Every cell.
    pub fn all(&self) -> Bitboard<W> {
        Bitboard::below(self.squares.len() as u8)
    }

    /// The cell of `square`, or `None` when it is off the board or of the
    /// other class.
    pub fn cell(&self, square: Square) -> Option<u8> {
        if !self.board.contains(square) {
            return None;
        }
        self.cells[usize::from(square.row()) * usize::from(self.board.cols) + usize::from(square.col())]
    }

    /// The square of `cell`.
    ///
    /// # Panics
    ///
    /// When `cell` is not a cell of this class.
    #[track_caller]
    pub fn square(&self, cell: u8) -> Square {
        self.squares[usize::from(cell)]
    }

    /// The cells of the squares of `row`.
    pub fn row(&self, row: u8) -> Bitboard<W> {
        self.board
            .row_squares(row, self.class)
            .filter_map(|sq| self.cell(sq))
            .collect()
    }

    /// The cells a bishop on `cell` sees along diagonal `direction` on an
    /// empty board. Directions are numbered 0 to 3: up-right, up-left,
    /// down-right, down-left.
    #[inline]
    pub fn ray(&self, cell: u8, direction: usize) -> Bitboard<W> {
        self.rays[usize::from(cell)][direction]
    }

    /// The cells a bishop on `cell` attacks when `occupied` cells block:
    /// along each diagonal up to and including the first occupied cell.
    /// Inlined where it is called: it sits in the searches' inner loops.
    #[inline]
    pub fn attacks(&self, cell: u8, occupied: Bitboard<W>) -> Bitboard<W> {
        let rays = &self.rays[usize::from(cell)];
        let mut attacks = Bitboard::EMPTY;
        for (d, &ray) in rays.iter().enumerate() {
            let blockers = ray & occupied;
            let nearest = if d < 2 { blockers.first() } else { blockers.last() };
            attacks |= match nearest {
                Some(b) => ray ^ self.rays[usize::from(b)][d],
                None => ray,
            };
        }
        attacks
    }

    /// The cells attacked by any bishop of `bishops` when `occupied` block.
    pub fn attacks_of(&self, bishops: Bitboard<W>, occupied: Bitboard<W>) -> Bitboard<W> {
        bishops
            .iter()
            .fold(Bitboard::EMPTY, |acc, cell| acc | self.attacks(cell, occupied))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attacks by walking the board square by square, for comparison.
    fn slow_attacks(geo: &Geometry, cell: u8, occupied: Bitboard) -> Bitboard {
        let sq = geo.square(cell);
        let mut attacks = Bitboard::EMPTY;
        for (dr, dc) in DIRECTIONS {
            let (mut row, mut col) = (i16::from(sq.row()), i16::from(sq.col()));
            loop {
                row += i16::from(dr);
                col += i16::from(dc);
                if row < 0 || col < 0 || row >= i16::from(geo.board.rows) || col >= i16::from(geo.board.cols) {
                    break;
                }
                let c = geo.cell(Square::new(row as u8, col as u8)).unwrap();
                attacks = attacks.with(c);
                if occupied.contains(c) {
                    break;
                }
            }
        }
        attacks
    }

    #[test]
    fn sliding_attacks_match_a_ray_walk() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for (rows, cols) in [(5, 4), (7, 4), (7, 6), (9, 8), (11, 8), (1, 5), (8, 16), (26, 4)] {
            let board = Board::new(rows, cols).unwrap();
            for class in Class::ALL {
                let geo = Geometry::new(board, class);
                for cell in 0..geo.len() as u8 {
                    for _ in 0..200 {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let occupied = Bitboard(seed & seed.rotate_left(17)) & geo.all();
                        assert_eq!(
                            geo.attacks(cell, occupied),
                            slow_attacks(&geo, cell, occupied),
                            "{board} class {class:?} cell {cell}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn cells_number_the_class_in_row_order() {
        let board = Board::new(5, 4).unwrap();
        let even = Geometry::new(board, Class::Even);
        let odd = Geometry::new(board, Class::Odd);
        assert_eq!((even.len(), odd.len()), (10, 10));
        let names: Vec<String> = (0..10).map(|c| even.square(c).to_string()).collect();
        assert_eq!(names, ["a1", "a3", "b2", "b4", "c1", "c3", "d2", "d4", "e1", "e3"]);
        assert_eq!(odd.square(0).to_string(), "a2");
        assert_eq!(even.cell("a2".parse().unwrap()), None);
        assert_eq!(even.cell("f1".parse().unwrap()), None);
        assert_eq!(even.row(4), Bitboard(0b11_0000_0000));
    }

    #[test]
    fn out_of_range_boards_are_refused() {
        assert!(Board::new(0, 4).is_err());
        assert!(Board::new(4, 0).is_err());
        assert!(Board::new(27, 1).is_err());
        assert!(Board::new(26, 4).is_ok());
        assert!(Board::new(11, 11).is_ok()); // 61 squares in the larger class
        assert!(Board::new(16, 16).is_ok()); // 128 squares in each class
        assert!(Board::new(17, 16).is_err());
        assert!(Board::new(1, 256).is_err());
        // Counting the classes of the largest boards named, whose corner
        // squares' row + column passes 255, refuses them (the fuzz test
        // found `12_246__` overflowing it).
        assert!(Board::new(12, 246).is_err());
        assert!(Board::new(26, 255).is_err());
    }
}
