//! Whole-board positions and moves: parsing, printing, legality, moves.

use std::fmt;
use std::str::FromStr;

use bitflags::bitflags;

use crate::bitboard::Word;
use crate::board::{Board, Class, Geometry};
use crate::rules::{Colour, Part};
use crate::square::Square;
use crate::text::{Problems, clip};

bitflags! {
    /// The reasons a position string is refused. One refusal can carry
    /// several, and [`PositionError`] says each in words.
    #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
    pub struct Refusals: u16 {
        /// Not four `_`-separated fields.
        const FIELDS = 1 << 0;
        /// The board size is not a number, or out of range.
        const BOARD = 1 << 1;
        /// A square is badly written or off the board.
        const SQUARE = 1 << 2;
        /// A square holds two bishops.
        const DUPLICATE = 1 << 3;
        /// The numbers of bishops do not fit the variant.
        const COUNTS = 1 << 4;
        /// Bishops stand on a colour class the variant does not use.
        const CLASS = 1 << 5;
        /// A bishop stands where a bishop of the other colour attacks it.
        const ATTACKED = 1 << 6;
        /// The variant named does not exist.
        const VARIANT = 1 << 7;
    }
}

/// The longest position string parsed, in bytes. The largest board has 64
/// squares a colour class, so a position names at most 128 squares of at
/// most three characters each: anything longer is refused unread.
pub const MAX_POSITION_LEN: usize = 600;

/// How many distinct reasons a [`PositionError`] keeps; more are counted.
const MAX_REASONS: usize = 4;

/// How many characters of a refused square name are quoted.
const SQUARE_QUOTE: usize = 8;

/// Why a position string was refused: every reason found, in words.
///
/// Displayed as one line: `bad position `…`: reason; reason`. However long
/// or bad the input, the error stays small: the input is quoted clipped,
/// each reason is said once, and at most a few are kept (the rest counted).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PositionError {
    /// The string as given, clipped to a few dozen characters for quoting.
    pub input: String,
    /// The kinds of reasons.
    pub reasons: Refusals,
    /// One phrase per distinct reason, in the order found; at most a few.
    pub details: Problems,
}

impl PositionError {
    /// An error about `input` with no reasons yet.
    pub fn new(input: &str) -> PositionError {
        PositionError {
            input: clip(input, 40),
            reasons: Refusals::empty(),
            details: Problems::new(MAX_REASONS),
        }
    }

    /// Adds a reason.
    pub fn push(&mut self, reason: Refusals, detail: impl Into<String>) {
        self.reasons |= reason;
        self.details.push(detail.into());
    }

    /// `Err(self)` when any reason was added, `Ok(value)` otherwise.
    ///
    /// # Errors
    ///
    /// When a reason was added.
    pub fn or_ok<T>(self, value: T) -> Result<T, PositionError> {
        if self.reasons.is_empty() { Ok(value) } else { Err(self) }
    }
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad position `{}`: {}", self.input, self.details)
    }
}

impl std::error::Error for PositionError {}

/// A placement of white and black bishops on a board: what the position
/// strings `R_C_<white>_<black>` name.
///
/// A `Position` is only well formed (squares on the board, none used twice);
/// whether a bishop is attacked is [`Position::attack`]'s business, and which
/// variant it belongs to is [`Variant`](crate::Variant)'s.
///
/// # Examples
///
/// ```
/// use bishops::Position;
///
/// let pos: Position = "5_4_a3-a1_e1-e3".parse().unwrap();
/// assert_eq!(pos.to_string(), "5_4_a1-a3_e1-e3");
/// assert!(pos.attack().is_none());
/// assert_eq!(pos.moves().len(), 4);
/// assert!("5_4_a1-a9_e1-e3".parse::<Position>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Position {
    board: Board,
    white: Vec<Square>,
    black: Vec<Square>,
}

impl Position {
    /// A position from squares, which are sorted.
    ///
    /// # Errors
    ///
    /// When a square is off the board or used twice.
    pub fn new(board: Board, white: Vec<Square>, black: Vec<Square>) -> Result<Position, PositionError> {
        let mut position = Position { board, white, black };
        position.white.sort();
        position.black.sort();
        let mut err = PositionError::new(&position.to_string());
        position.check_squares(&mut err);
        err.or_ok(position)
    }

    fn check_squares(&self, err: &mut PositionError) {
        let mut all: Vec<Square> = self.white.iter().chain(&self.black).copied().collect();
        for &sq in &all {
            if self.board.is_hole(sq) {
                err.push(Refusals::SQUARE, format!("{sq} is a hole of the {} board", self.board));
            } else if !self.board.contains(sq) {
                err.push(Refusals::SQUARE, format!("{sq} is off the {} board", self.board));
            }
        }
        all.sort();
        for pair in all.windows(2) {
            if pair[0] == pair[1] {
                err.push(Refusals::DUPLICATE, format!("{} is used twice", pair[0]));
            }
        }
    }

    /// The position with the bishops of `parts` (one per class, as cells of
    /// the matching geometry).
    pub fn from_parts<W: Word>(board: Board, parts: &[(&Geometry<W>, Part<W>)]) -> Position {
        let mut white = Vec::new();
        let mut black = Vec::new();
        for (geo, part) in parts {
            white.extend(part.white.iter().map(|c| geo.square(c)));
            black.extend(part.black.iter().map(|c| geo.square(c)));
        }
        white.sort();
        black.sort();
        Position { board, white, black }
    }

    /// The same bishops on `board`, a board of the same size: a variant's,
    /// with the holes a position string does not name.
    ///
    /// # Errors
    ///
    /// When a bishop stands on a hole of `board`.
    pub fn on(&self, board: Board) -> Result<Position, PositionError> {
        let position = Position {
            board,
            white: self.white.clone(),
            black: self.black.clone(),
        };
        let mut err = PositionError::new(&position.to_string());
        position.check_squares(&mut err);
        err.or_ok(position)
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// The white bishops, sorted.
    pub fn white(&self) -> &[Square] {
        &self.white
    }

    /// The black bishops, sorted.
    pub fn black(&self) -> &[Square] {
        &self.black
    }

    /// The bishops of one class, as cells of `geo`.
    pub fn part<W: Word>(&self, geo: &Geometry<W>) -> Part<W> {
        let cells = |squares: &[Square]| squares.iter().filter_map(|&sq| geo.cell(sq)).collect();
        Part {
            white: cells(&self.white),
            black: cells(&self.black),
        }
    }

    /// How many bishops of each colour stand on `class`: (white, black).
    pub fn counts(&self, class: Class) -> (usize, usize) {
        let count = |squares: &[Square]| squares.iter().filter(|&&sq| Class::of(sq) == class).count();
        (count(&self.white), count(&self.black))
    }

    /// The same squares with the colours exchanged.
    #[must_use]
    pub fn swapped(&self) -> Position {
        Position {
            board: self.board,
            white: self.black.clone(),
            black: self.white.clone(),
        }
    }

    /// The geometry of each class, in words wide enough for any board:
    /// the rules of a whole position are not where the time goes.
    fn geometries(&self) -> [Geometry<u128>; 2] {
        Class::ALL.map(|class| Geometry::in_words(self.board, class))
    }

    /// A bishop that stands attacked, as `(attacker, victim)`, if any: the
    /// position is legal when there is none.
    pub fn attack(&self) -> Option<(Square, Square)> {
        self.geometries().iter().find_map(|geo| {
            let (a, v) = self.part(geo).first_attack(geo)?;
            Some((geo.square(a), geo.square(v)))
        })
    }

    /// The colour of the bishop on `square`, if any.
    pub fn colour_at(&self, square: Square) -> Option<Colour> {
        if self.white.contains(&square) {
            Some(Colour::White)
        } else if self.black.contains(&square) {
            Some(Colour::Black)
        } else {
            None
        }
    }

    /// Every legal move and the position after it, ordered by move. The
    /// position must be legal.
    pub fn moves(&self) -> Vec<(Move, Position)> {
        let geos = self.geometries();
        let parts = geos.each_ref().map(|geo| (geo, self.part(geo)));
        (Position::moves_of(self.board, &parts).into_iter())
            .map(|(mv, _, _, position)| (mv, position))
            .collect()
    }

    /// [`moves`](Self::moves) of the position whose bishops are `parts`
    /// (one per class, as cells of the matching geometry) on `board`, with
    /// the geometries given: a caller that built them once, a variant, does
    /// not build them again for every position. Each move comes with the
    /// number of its class in `parts` and that class's part after it.
    pub fn moves_of<W: Word>(board: Board, parts: &[(&Geometry<W>, Part<W>)]) -> Vec<(Move, usize, Part<W>, Position)> {
        let mut moves = Vec::new();
        let mut after_parts = parts.to_vec();
        for (k, &(geo, part)) in parts.iter().enumerate() {
            part.for_each_move(geo, |_, from, to, after| {
                after_parts[k].1 = after;
                let mv = Move {
                    from: geo.square(from),
                    to: geo.square(to),
                };
                moves.push((mv, k, after, Position::from_parts(board, &after_parts)));
            });
            after_parts[k].1 = part;
        }
        moves.sort_by_key(|&(mv, ..)| mv);
        moves
    }

    /// The position after `mv`, if it is a legal move here.
    pub fn play(&self, mv: Move) -> Option<Position> {
        self.try_play(mv).ok()
    }

    /// The position after `mv`, or why it is not a legal move here.
    ///
    /// This walks the move square by square on the board, apart from the
    /// bitboard move generator of [`Position::moves`]; tests hold the two to
    /// each other. The position must be legal.
    ///
    /// # Errors
    ///
    /// The first rule the move breaks, in this order: a square off the
    /// board, no bishop on `from`, not a diagonal, `to` occupied, a bishop in
    /// the way, a bishop attacked afterwards.
    ///
    /// # Examples
    ///
    /// ```
    /// use bishops::{IllegalMove, Position};
    ///
    /// let start: Position = "5_4_a1-a3_e1-e3".parse().unwrap();
    /// let after = start.try_play("a3-b2".parse().unwrap()).unwrap();
    /// assert_eq!(after.to_string(), "5_4_a1-b2_e1-e3");
    /// let err = start.try_play("a1-c3".parse().unwrap()).unwrap_err();
    /// assert!(matches!(err, IllegalMove::Attacked { .. }));
    /// assert_eq!(err.to_string(), "it leaves the white bishop on c3 attacked by the black bishop on e1");
    /// ```
    pub fn try_play(&self, mv: Move) -> Result<Position, IllegalMove> {
        let Move { from, to } = mv;
        for sq in [from, to] {
            if !self.board.contains(sq) {
                return Err(IllegalMove::OffBoard(sq, self.board));
            }
        }
        let colour = self.colour_at(from).ok_or(IllegalMove::NoBishop(from))?;
        let (dr, dc) = (
            i32::from(to.row()) - i32::from(from.row()),
            i32::from(to.col()) - i32::from(from.col()),
        );
        if dr == 0 || dr.abs() != dc.abs() {
            return Err(IllegalMove::NotDiagonal(mv));
        }
        if self.colour_at(to).is_some() {
            return Err(IllegalMove::Occupied(to));
        }
        for step in 1..dr.abs() {
            let between = Square::new(
                (i32::from(from.row()) + step * dr.signum()) as u8,
                (i32::from(from.col()) + step * dc.signum()) as u8,
            );
            if self.colour_at(between).is_some() {
                return Err(IllegalMove::Blocked(mv, between));
            }
            if self.board.is_hole(between) {
                return Err(IllegalMove::Hole(mv, between));
            }
        }
        let mut after = self.clone();
        let side = match colour {
            Colour::White => &mut after.white,
            Colour::Black => &mut after.black,
        };
        side.retain(|&sq| sq != from);
        side.push(to);
        side.sort();
        match after.attack() {
            Some((attacker, victim)) => Err(IllegalMove::Attacked {
                attacker,
                victim,
                victim_colour: after.colour_at(victim).unwrap_or(Colour::White),
            }),
            None => Ok(after),
        }
    }

    /// The board drawn as text, top row first: `W` and `B` for bishops, `.`
    /// for empty squares, `#` for holes, with row letters and column numbers.
    pub fn diagram(&self) -> String {
        let mut out = String::new();
        for row in (0..self.board.rows()).rev() {
            out.push((b'a' + row) as char);
            for col in 0..self.board.cols() {
                let sq = Square::new(row, col);
                out.push(' ');
                out.push(match self.colour_at(sq) {
                    Some(Colour::White) => 'W',
                    Some(Colour::Black) => 'B',
                    None if self.board.is_hole(sq) => '#',
                    None => '.',
                });
            }
            out.push('\n');
        }
        out.push(' ');
        for col in 1..=u16::from(self.board.cols()) {
            out.push(' ');
            out.push_str(&(col % 10).to_string());
        }
        out.push('\n');
        out
    }
}

impl FromStr for Position {
    type Err = PositionError;

    /// Parses `R_C_<white>_<black>`, squares joined by `-` in any order.
    fn from_str(s: &str) -> Result<Position, PositionError> {
        let mut err = PositionError::new(s);
        if s.len() > MAX_POSITION_LEN {
            err.push(
                Refusals::FIELDS,
                format!(
                    "it is {} bytes long; a position has at most {MAX_POSITION_LEN}",
                    s.len()
                ),
            );
            return Err(err);
        }
        let fields: Vec<&str> = s.split('_').collect();
        if fields.len() != 4 {
            err.push(
                Refusals::FIELDS,
                format!(
                    "expected 4 fields `ROWS_COLS_WHITE_BLACK` separated by `_`, found {}",
                    fields.len()
                ),
            );
            return Err(err);
        }
        let number = |field: &str, what: &str, err: &mut PositionError| match field.parse::<u32>() {
            Ok(n) if !field.starts_with('+') => Some(n),
            _ => {
                err.push(
                    Refusals::BOARD,
                    format!("`{}` is not a number of {what}", clip(field, SQUARE_QUOTE)),
                );
                None
            }
        };
        let rows = number(fields[0], "rows", &mut err);
        let cols = number(fields[1], "columns", &mut err);
        let board = match (rows, cols) {
            (Some(r), Some(c)) => match Board::new(r, c) {
                Ok(board) => Some(board),
                Err(reason) => {
                    err.push(Refusals::BOARD, reason);
                    None
                }
            },
            _ => None,
        };
        let mut squares = |field: &str| -> Vec<Square> {
            if field.is_empty() {
                return Vec::new();
            }
            field
                .split('-')
                .filter_map(|name| match name.parse::<Square>() {
                    Ok(sq) => Some(sq),
                    Err(_) => {
                        err.push(
                            Refusals::SQUARE,
                            format!(
                                "`{}` is not a square: write a row letter and a column number, like `a1`",
                                clip(name, SQUARE_QUOTE)
                            ),
                        );
                        None
                    }
                })
                .collect()
        };
        let white = squares(fields[2]);
        let black = squares(fields[3]);
        let Some(board) = board else {
            return Err(err);
        };
        let mut position = Position { board, white, black };
        position.white.sort();
        position.black.sort();
        position.check_squares(&mut err);
        err.or_ok(position)
    }
}

impl serde::Serialize for Position {
    /// One string, written once: a serializer that escapes what it is
    /// given, as JSON's does, sees it whole, not in the dozens of pieces a
    /// formatter would hand it (a server's answer holds some fifty).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match Written::of(self) {
            Some(written) => s.serialize_str(written.as_str()),
            None => s.collect_str(self),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Written::of(self).ok_or(fmt::Error)?.as_str())
    }
}

/// A position's string, gathered on the stack in one pass over its squares
/// without the formatting machinery: for a server's answer of some fifty
/// positions, the pieces written one by one through a formatter were the
/// larger part of writing it.
struct Written {
    bytes: [u8; Written::MOST],
    len: usize,
}

impl Written {
    /// The longest string of any position: `26_255_`, then at most 256
    /// squares (128 a class) of at most four bytes and a separator each.
    const MOST: usize = 8 + 256 * 5;

    /// The string of `position`; `None` only if it were longer than any
    /// position's can be.
    fn of(position: &Position) -> Option<Written> {
        let mut written = Written {
            bytes: [0; Written::MOST],
            len: 0,
        };
        written.number(position.board.rows())?;
        written.push(b"_")?;
        written.number(position.board.cols())?;
        for side in [&position.white, &position.black] {
            written.push(b"_")?;
            for (i, square) in side.iter().enumerate() {
                if i > 0 {
                    written.push(b"-")?;
                }
                let (name, len) = square.name_bytes();
                written.push(&name[..len])?;
            }
        }
        Some(written)
    }

    fn push(&mut self, text: &[u8]) -> Option<()> {
        let end = self.len + text.len();
        self.bytes.get_mut(self.len..end)?.copy_from_slice(text);
        self.len = end;
        Some(())
    }

    fn number(&mut self, n: u8) -> Option<()> {
        let digits = [b'0' + n / 100, b'0' + n / 10 % 10, b'0' + n % 10];
        let skip = if n >= 100 {
            0
        } else if n >= 10 {
            1
        } else {
            2
        };
        self.push(&digits[skip..])
    }

    /// The string: ASCII, as every piece pushed is.
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

/// A move: the bishop on `from` slides to `to`. Written `a1-b2`; `a1b2` is
/// accepted on input.
///
/// # Examples
///
/// ```
/// use bishops::Move;
///
/// let mv: Move = "a1b2".parse().unwrap();
/// assert_eq!(mv.to_string(), "a1-b2");
/// assert_eq!("a1-b2".parse::<Move>(), Ok(mv));
/// assert!("a1".parse::<Move>().is_err());
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Move {
    /// Where the bishop stands.
    pub from: Square,
    /// Where it goes.
    pub to: Square,
}

/// Why a move is not legal in a position: [`Position::try_play`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum IllegalMove {
    /// A square of the move is not on the board.
    OffBoard(Square, Board),
    /// No bishop stands on the square the move starts from.
    NoBishop(Square),
    /// The two squares are not on one diagonal (or are the same square).
    NotDiagonal(Move),
    /// A bishop already stands on the square the move goes to.
    Occupied(Square),
    /// A bishop stands between the two squares.
    Blocked(Move, Square),
    /// A hole of the board lies between the two squares.
    Hole(Move, Square),
    /// After the move a bishop stands attacked by one of the other colour.
    Attacked {
        /// The attacking bishop's square.
        attacker: Square,
        /// The attacked bishop's square.
        victim: Square,
        /// The attacked bishop's colour.
        victim_colour: Colour,
    },
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |c: Colour| match c {
            Colour::White => "white",
            Colour::Black => "black",
        };
        match *self {
            IllegalMove::OffBoard(sq, board) if board.is_hole(sq) => write!(f, "{sq} is a hole of the {board} board"),
            IllegalMove::OffBoard(sq, board) => write!(f, "{sq} is off the {board} board"),
            IllegalMove::NoBishop(sq) => write!(f, "there is no bishop on {sq}"),
            IllegalMove::NotDiagonal(mv) => write!(f, "{} and {} are not on one diagonal", mv.from, mv.to),
            IllegalMove::Occupied(sq) => write!(f, "{sq} is occupied"),
            IllegalMove::Blocked(mv, sq) => {
                write!(f, "the bishop on {sq} blocks the way from {} to {}", mv.from, mv.to)
            }
            IllegalMove::Hole(mv, sq) => {
                write!(f, "the hole at {sq} blocks the way from {} to {}", mv.from, mv.to)
            }
            IllegalMove::Attacked {
                attacker,
                victim,
                victim_colour,
            } => {
                let other = match victim_colour {
                    Colour::White => Colour::Black,
                    Colour::Black => Colour::White,
                };
                write!(
                    f,
                    "it leaves the {} bishop on {victim} attacked by the {} bishop on {attacker}",
                    name(victim_colour),
                    name(other)
                )
            }
        }
    }
}

impl std::error::Error for IllegalMove {}

impl FromStr for Move {
    type Err = String;

    fn from_str(s: &str) -> Result<Move, String> {
        let bad = || format!("`{s}` is not a move: write it like `a1-b2`");
        let (from, to) = match s.split_once('-') {
            Some(pair) => pair,
            None => {
                // `a1b2`: the second square starts at the second letter.
                let at = s
                    .char_indices()
                    .skip(1)
                    .find(|(_, c)| c.is_ascii_lowercase())
                    .ok_or_else(bad)?
                    .0;
                s.split_at(at)
            }
        };
        Ok(Move {
            from: from.parse().map_err(|_| bad())?,
            to: to.parse().map_err(|_| bad())?,
        })
    }
}

impl Move {
    /// The move's string, `a1-b2`, as ASCII bytes and their count.
    fn written(self) -> ([u8; 9], usize) {
        let (from, from_len) = self.from.name_bytes();
        let (to, to_len) = self.to.name_bytes();
        let mut text = [b'-'; 9];
        text[..from_len].copy_from_slice(&from[..from_len]);
        text[from_len + 1..from_len + 1 + to_len].copy_from_slice(&to[..to_len]);
        (text, from_len + 1 + to_len)
    }
}

impl serde::Serialize for Move {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (text, len) = self.written();
        s.serialize_str(std::str::from_utf8(&text[..len]).map_err(serde::ser::Error::custom)?)
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (text, len) = self.written();
        f.write_str(std::str::from_utf8(&text[..len]).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(s: &str) -> PositionError {
        s.parse::<Position>().expect_err(s)
    }

    #[test]
    fn parsing_sorts_and_prints() {
        let pos: Position = "7_6_a5-a1-a3_g3-g1-g5".parse().unwrap();
        assert_eq!(pos.to_string(), "7_6_a1-a3-a5_g1-g3-g5");
        assert_eq!(pos.counts(Class::Even), (3, 3));
        assert_eq!(pos.swapped().to_string(), "7_6_g1-g3-g5_a1-a3-a5");
    }

    #[test]
    fn positions_and_moves_serialize_as_they_are_written() {
        let json = |p: &Position| serde_json::to_string(p).unwrap();
        let short: Position = "7_6_a5-a1-a3_g3-g1-g5".parse().unwrap();
        assert_eq!(json(&short), "\"7_6_a1-a3-a5_g1-g3-g5\"");
        // A large position: 16x16, its three bottom rows white and three
        // top rows black, 96 bishops, 3 to 4 bytes each.
        let rows =
            |from: u8| (from..from + 3).flat_map(|r| (1..=16).map(move |c| format!("{}{c}", char::from(b'a' + r))));
        let white: Vec<String> = rows(0).collect();
        let black: Vec<String> = rows(13).collect();
        // Made in the order a position sorts its squares, so written back as is.
        let text = format!("16_16_{}_{}", white.join("-"), black.join("-"));
        let long: Position = text.parse().unwrap();
        assert!(text.len() > 256);
        assert_eq!(long.to_string(), text);
        assert_eq!(json(&long), format!("\"{text}\""));
        // Numbers of one, two and three digits, in the board and its squares.
        let wide: Position = "2_120_b120-a9-a100_b10-a7".parse().unwrap();
        assert_eq!(wide.to_string(), "2_120_a9-a100-b120_a7-b10");
        assert_eq!(json(&wide), "\"2_120_a9-a100-b120_a7-b10\"");
        for (written, shown) in [("a1b2", "a1-b2"), ("a9-b10", "a9-b10"), ("b120-a119", "b120-a119")] {
            let mv: Move = written.parse().unwrap();
            assert_eq!(mv.to_string(), shown);
            assert_eq!(serde_json::to_string(&mv).unwrap(), format!("\"{shown}\""));
        }
    }

    #[test]
    fn every_kind_of_bad_string_is_named() {
        assert_eq!(refusal("5_4_a1-a3").reasons, Refusals::FIELDS);
        assert_eq!(refusal("5_4_a1_e1_x").reasons, Refusals::FIELDS);
        assert_eq!(refusal("x_4_a1_e1").reasons, Refusals::BOARD);
        assert_eq!(refusal("27_4_a1_e1").reasons, Refusals::BOARD);
        assert_eq!(refusal("17_16_a1_e1").reasons, Refusals::BOARD);
        assert_eq!(refusal("5_4_a1-a0_e1").reasons, Refusals::SQUARE);
        assert_eq!(refusal("5_4_a1-f1_e1").reasons, Refusals::SQUARE);
        assert_eq!(refusal("5_4_a1-a5_e1").reasons, Refusals::SQUARE);
        assert_eq!(refusal("5_4_a1_a1").reasons, Refusals::DUPLICATE);
        let both = refusal("5_4_a1-a1_e1-e9");
        assert_eq!(both.reasons, Refusals::SQUARE | Refusals::DUPLICATE);
        assert_eq!(both.details.kept().len(), 2);
        assert!(!both.to_string().contains('\n'));
        assert!(both.to_string().contains("e9 is off the 5x4 board"));
    }

    #[test]
    fn a_huge_or_repetitive_string_gives_a_small_error() {
        // Too long: refused before it is split, whatever it holds.
        let huge = format!("5_4_{}_e1", "-".repeat(2_000_000));
        let err = refusal(&huge);
        assert_eq!(err.reasons, Refusals::FIELDS);
        let length = format!("{} bytes long", huge.len());
        assert!(err.to_string().contains(&length), "{err}");
        assert!(err.to_string().len() < 200, "{err}");
        // Within the bound, every repeat of one mistake is said once.
        let repeats = format!("5_4_{}_e1", ["a1"; 100].join("-"));
        let err = refusal(&repeats);
        assert_eq!(err.to_string().matches("a1 is used twice").count(), 1, "{err}");
        // Many different mistakes: a few said, the rest counted.
        let many = format!(
            "5_4_{}_e1",
            (1..=60).map(|c| format!("a{c}")).collect::<Vec<_>>().join("-")
        );
        let err = refusal(&many);
        assert!(err.to_string().contains("more"), "{err}");
        assert!(err.to_string().len() < 400, "{err}");
        // A long bad square is quoted clipped, with its own length.
        let err = refusal("5_4_a1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_e1");
        assert!(
            err.to_string().contains("`xxxxxxxx… (30 characters)` is not a square"),
            "{err}"
        );
    }

    #[test]
    fn attacks_name_attacker_and_victim() {
        let pos: Position = "5_4_a1_c3".parse().unwrap();
        let (attacker, victim) = pos.attack().unwrap();
        assert_eq!((attacker.to_string(), victim.to_string()), ("c3".into(), "a1".into()));
        let blocked: Position = "5_4_a1-b2_c3".parse().unwrap();
        assert_eq!(
            blocked.attack().map(|(a, v)| (a.to_string(), v.to_string())),
            Some(("c3".into(), "b2".into()))
        );
        let pos: Position = "5_4_a1-a3_e1-e3".parse().unwrap();
        assert_eq!(pos.attack(), None);
    }

    #[test]
    fn moves_play_and_draw() {
        let start: Position = "5_4_a1-a3_e1-e3".parse().unwrap();
        let moves: Vec<String> = start.moves().iter().map(|(m, _)| m.to_string()).collect();
        assert_eq!(moves, ["a1-b2", "a3-b2", "e1-d2", "e3-d2"]);
        let after = start.play("a1-b2".parse().unwrap()).unwrap();
        assert_eq!(after.to_string(), "5_4_a3-b2_e1-e3");
        assert!(start.play("a1-c3".parse().unwrap()).is_none());
        assert_eq!(
            start.diagram(),
            "e B . B .\nd . . . .\nc . . . .\nb . . . .\na W . W .\n  1 2 3 4\n"
        );
    }
}
