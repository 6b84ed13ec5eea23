//! Remoteness, and how solved tables store it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The fewest moves from a position to the goal.
///
/// | value | meaning |
/// |---|---|
/// | 0 | the position is the goal |
/// | n > 0 | the goal is n moves away, and no fewer |
///
/// A position from which the goal cannot be reached has no remoteness: it is
/// [`Cell::UNREACHABLE`] in a table and `None` where an `Option<Remoteness>`
/// is returned. A whole-board remoteness is the sum of its classes'.
///
/// # Examples
///
/// ```
/// use bishops::Remoteness;
///
/// let r = Remoteness(17) + Remoteness(19);
/// assert_eq!(r, Remoteness(36));
/// assert_eq!(r.to_string(), "36");
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Remoteness(pub u16);

impl std::ops::Add for Remoteness {
    type Output = Remoteness;
    fn add(self, rhs: Remoteness) -> Remoteness {
        Remoteness(self.0 + rhs.0)
    }
}

impl Remoteness {
    /// The remoteness of a whole position from those of its class parts:
    /// their sum, `None` when any part cannot reach the goal.
    ///
    /// ```
    /// use bishops::Remoteness;
    /// assert_eq!(Remoteness::total([Some(Remoteness(3)), Some(Remoteness(4))]), Some(Remoteness(7)));
    /// assert_eq!(Remoteness::total([Some(Remoteness(3)), None]), None);
    /// ```
    pub fn total(parts: impl IntoIterator<Item = Option<Remoteness>>) -> Option<Remoteness> {
        parts.into_iter().try_fold(Remoteness(0), |sum, r| Some(sum + r?))
    }
}

impl fmt::Display for Remoteness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// One entry of a solved class table: a byte per index.
///
/// | byte | meaning |
/// |---|---|
/// | 0 ..= 253 | a legal position with that remoteness |
/// | 254 ([`Cell::UNREACHABLE`]) | a legal position that cannot reach the goal |
/// | 255 ([`Cell::ILLEGAL`]) | no position: a bishop would stand attacked |
///
/// # Examples
///
/// ```
/// use bishops::{Cell, Remoteness};
///
/// assert_eq!(Cell(18).remoteness(), Some(Remoteness(18)));
/// assert_eq!(Cell::UNREACHABLE.remoteness(), None);
/// assert!(Cell::UNREACHABLE.is_legal() && !Cell::ILLEGAL.is_legal());
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Cell(pub u8);

impl Cell {
    /// A legal position from which the goal cannot be reached.
    pub const UNREACHABLE: Cell = Cell(254);
    /// An index that names no legal position.
    pub const ILLEGAL: Cell = Cell(255);
    /// The largest remoteness a cell can hold.
    pub const MAX_REMOTENESS: u8 = 253;

    /// The remoteness, when the position is legal and reaches the goal.
    pub fn remoteness(self) -> Option<Remoteness> {
        (self.0 <= Cell::MAX_REMOTENESS).then_some(Remoteness(u16::from(self.0)))
    }

    /// Whether the cell holds a legal position.
    pub fn is_legal(self) -> bool {
        self != Cell::ILLEGAL
    }
}
