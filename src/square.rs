//! Squares and their names.

use std::fmt;
use std::str::FromStr;

/// The most rows a board may have: rows are lettered `a` to `z`.
pub const MAX_ROWS: u8 = 26;

/// A square of a board, named by row letter and column number: `a1` is the
/// bottom-left corner, `e3` the fifth row's third column.
///
/// A `Square` knows nothing of the board it stands on; [`Board`](crate::Board)
/// says whether it is on the board and which colour class it belongs to.
///
/// # Examples
///
/// ```
/// use bishops::Square;
///
/// let sq: Square = "e3".parse().unwrap();
/// assert_eq!((sq.row(), sq.col()), (4, 2));
/// assert_eq!(sq.to_string(), "e3");
/// assert!("e0".parse::<Square>().is_err());
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Square {
    row: u8,
    col: u8,
}

impl Square {
    /// The square at 0-based `row` and `col`.
    ///
    /// # Panics
    ///
    /// When `row` is not below [`MAX_ROWS`].
    #[track_caller]
    pub fn new(row: u8, col: u8) -> Square {
        assert!(row < MAX_ROWS, "row {row} has no letter");
        Square { row, col }
    }

    /// The 0-based row, counted from the bottom (`a` is 0).
    pub fn row(self) -> u8 {
        self.row
    }

    /// The 0-based column, counted from the left (`1` is 0).
    pub fn col(self) -> u8 {
        self.col
    }

    /// The colour class, 0 for the class of `a1` (even row + column), 1 for
    /// the other.
    pub fn parity(self) -> u8 {
        // The parity of the sum, without the sum: row 25 and column 254 of
        // a board too large to accept would overflow a u8.
        (self.row ^ self.col) & 1
    }
}

/// Why a square name was refused.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseSquareError(pub String);

impl fmt::Display for ParseSquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a square: write a row letter and a column number, like `a1`",
            self.0
        )
    }
}

impl std::error::Error for ParseSquareError {}

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        let err = || ParseSquareError(s.to_owned());
        let mut chars = s.chars();
        let letter = chars.next().ok_or_else(err)?;
        if !letter.is_ascii_lowercase() {
            return Err(err());
        }
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let number: u16 = digits.parse().map_err(|_| err())?;
        if number == 0 || number > 256 || digits.starts_with('0') {
            return Err(err());
        }
        Ok(Square::new(letter as u8 - b'a', (number - 1) as u8))
    }
}

impl Square {
    /// The square's name as ASCII bytes, the row's letter then the column's
    /// number (1 to 256), and how many of the four bytes it takes: written
    /// without the formatting machinery, as a server's answer writes some
    /// eight hundred squares.
    pub(crate) fn name_bytes(self) -> ([u8; 4], usize) {
        let number = u16::from(self.col) + 1;
        let mut text = [b'a'.wrapping_add(self.row), 0, 0, 0];
        let digits = if number >= 100 {
            3
        } else if number >= 10 {
            2
        } else {
            1
        };
        let mut rest = number;
        for at in (1..=digits).rev() {
            text[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        (text, 1 + digits)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (text, len) = self.name_bytes();
        f.write_str(std::str::from_utf8(&text[..len]).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for row in 0..MAX_ROWS {
            for col in 0..=255u8 {
                let sq = Square::new(row, col);
                assert_eq!(sq.to_string().parse::<Square>(), Ok(sq));
            }
        }
        for (row, col, name) in [
            (0, 0, "a1"),
            (1, 8, "b9"),
            (2, 9, "c10"),
            (3, 98, "d99"),
            (4, 99, "e100"),
            (25, 255, "z256"),
        ] {
            assert_eq!(Square::new(row, col).to_string(), name);
        }
    }

    #[test]
    fn bad_names_are_refused() {
        for bad in ["", "a", "1", "A1", "a0", "a01", "a1x", "a-1", "a257", "é1", "a 1"] {
            assert!(bad.parse::<Square>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn parity_is_the_class_of_a1() {
        assert_eq!("a1".parse::<Square>().unwrap().parity(), 0);
        assert_eq!("a2".parse::<Square>().unwrap().parity(), 1);
        assert_eq!("b2".parse::<Square>().unwrap().parity(), 0);
        assert_eq!(Square::new(11, 245).parity(), 0);
        assert_eq!(Square::new(25, 254).parity(), 1);
    }
}
