//! Sets of cells of one colour class.

use std::fmt;
use std::hash::Hash;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, Not, Shl, Shr, Sub};

/// The machine word a [`Bitboard`] keeps its cells in: `u64` for a class of
/// at most 64 cells, `u128` for one of at most 128. Code that works on
/// sets is written once over `W: Word` and compiled for each width, so a
/// board of 64 cells or fewer runs on 64-bit words throughout.
pub trait Word:
    Copy
    + Eq
    + Ord
    + Hash
    + Default
    + fmt::Debug
    + Send
    + Sync
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + Sub<Output = Self>
{
    /// No bit set.
    const ZERO: Self;
    /// The lowest bit alone.
    const ONE: Self;
    /// How many cells a word holds.
    const BITS: u32;
    /// An array of one `T` per cell a word holds: `[T; 64]` or `[T; 128]`,
    /// for tables indexed by cell.
    type PerCell<T: Copy>: Copy + AsRef<[T]> + AsMut<[T]>;
    /// The array of one `fill` per cell.
    fn per_cell<T: Copy>(fill: T) -> Self::PerCell<T>;
    /// How many bits are set.
    fn count_ones(self) -> u32;
    /// How many bits below the lowest set one.
    fn trailing_zeros(self) -> u32;
    /// How many bits above the highest set one.
    fn leading_zeros(self) -> u32;
    /// The word with its lowest set bit cleared (0 stays 0).
    fn clear_lowest(self) -> Self;
    /// The bits of `self` at the set bits of `mask`, packed at the bottom:
    /// `pext`, one instruction for 64 bits and two for 128.
    ///
    /// # Safety
    ///
    /// Only where the processor has BMI2 (x86-64; elsewhere it panics).
    unsafe fn pext(self, mask: Self) -> Self;
    /// [`pext`](Word::pext) for a `mask` of at most 64 set bits, whose
    /// result fits a `u64`: in 128-bit words the two halves are joined in
    /// 64-bit arithmetic, and what ranks the result works in 64 bits too.
    ///
    /// # Safety
    ///
    /// Only where the processor has BMI2 (x86-64; elsewhere it panics).
    unsafe fn pext_low(self, mask: Self) -> u64;
}

macro_rules! word {
    ($t:ty, $bits:literal) => {
        impl Word for $t {
            const ZERO: $t = 0;
            const ONE: $t = 1;
            const BITS: u32 = $bits;
            type PerCell<T: Copy> = [T; $bits];
            #[inline(always)]
            fn per_cell<T: Copy>(fill: T) -> [T; $bits] {
                [fill; $bits]
            }
            #[inline(always)]
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }
            #[inline(always)]
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            #[inline(always)]
            fn leading_zeros(self) -> u32 {
                <$t>::leading_zeros(self)
            }
            #[inline(always)]
            fn clear_lowest(self) -> $t {
                self & self.wrapping_sub(1)
            }
            #[inline(always)]
            unsafe fn pext(self, mask: $t) -> $t {
                // SAFETY: the caller's: BMI2 is there.
                unsafe { pext_words(self as u128, mask as u128) as $t }
            }
            #[inline(always)]
            unsafe fn pext_low(self, mask: $t) -> u64 {
                // SAFETY: the caller's: BMI2 is there.
                unsafe { pext_words_low(self as u128, mask as u128) }
            }
        }
    };
}

/// `pext` of a word of up to 128 bits as two 64-bit ones: the high half's
/// bits go above as many bits as the low half of the mask has.
///
/// # Safety
///
/// Only where the processor has BMI2.
#[inline(always)]
unsafe fn pext_words(value: u128, mask: u128) -> u128 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::_pext_u64;
        let (low_mask, high_mask) = (mask as u64, (mask >> 64) as u64);
        // SAFETY: the caller's: BMI2 is there.
        let low = unsafe { _pext_u64(value as u64, low_mask) };
        if high_mask == 0 {
            return u128::from(low);
        }
        // SAFETY: as above.
        let high = unsafe { _pext_u64((value >> 64) as u64, high_mask) };
        u128::from(low) | u128::from(high) << low_mask.count_ones()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (value, mask);
        unreachable!("pext is only called where BMI2 was found")
    }
}

/// [`pext_words`] for a `mask` of at most 64 set bits, in 64-bit words.
///
/// # Safety
///
/// Only where the processor has BMI2.
#[inline(always)]
unsafe fn pext_words_low(value: u128, mask: u128) -> u64 {
    debug_assert!(mask.count_ones() <= 64, "a mask of {} bits", mask.count_ones());
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::_pext_u64;
        let (low_mask, high_mask) = (mask as u64, (mask >> 64) as u64);
        // SAFETY: the caller's: BMI2 is there.
        let low = unsafe { _pext_u64(value as u64, low_mask) };
        if high_mask == 0 {
            return low;
        }
        // SAFETY: as above.
        let high = unsafe { _pext_u64((value >> 64) as u64, high_mask) };
        // The high half has a bit, so the low one has at most 63: the
        // shift is below 64.
        low | high << low_mask.count_ones()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (value, mask);
        unreachable!("pext is only called where BMI2 was found")
    }
}

word!(u64, 64);
word!(u128, 128);

/// A set of cells of one colour class, one bit per cell.
///
/// Cells are the squares of a class numbered from 0 in row-then-column order
/// (see [`Geometry`](crate::Geometry)); a set in a word `W` holds cells below
/// `W::BITS`: 64 by default, 128 in a `u128`.
///
/// # Examples
///
/// ```
/// use bishops::Bitboard;
///
/// let set: Bitboard = [0u8, 3, 5].into_iter().collect();
/// assert_eq!(set.count(), 3);
/// assert!(set.contains(3));
/// assert_eq!(set.without(3).iter().collect::<Vec<_>>(), vec![0, 5]);
/// assert_eq!(set.first(), Some(0));
///
/// let wide: Bitboard<u128> = [1u8, 100].into_iter().collect();
/// assert_eq!(wide.last(), Some(100));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Bitboard<W: Word = u64>(pub W);

impl<W: Word> Bitboard<W> {
    /// The empty set.
    pub const EMPTY: Bitboard<W> = Bitboard(W::ZERO);

    /// The set of cells `0..n`.
    #[inline]
    pub fn below(n: u8) -> Bitboard<W> {
        Bitboard(if u32::from(n) >= W::BITS {
            !W::ZERO
        } else {
            (W::ONE << u32::from(n)) - W::ONE
        })
    }

    /// The set holding only `cell`.
    #[inline]
    pub fn single(cell: u8) -> Bitboard<W> {
        Bitboard(W::ONE << u32::from(cell))
    }

    /// Whether `cell` is in the set.
    #[inline]
    pub fn contains(self, cell: u8) -> bool {
        (self.0 >> u32::from(cell)) & W::ONE != W::ZERO
    }

    /// The set with `cell` added.
    #[must_use]
    #[inline]
    pub fn with(self, cell: u8) -> Bitboard<W> {
        Bitboard(self.0 | W::ONE << u32::from(cell))
    }

    /// The set with `cell` removed.
    #[must_use]
    #[inline]
    pub fn without(self, cell: u8) -> Bitboard<W> {
        Bitboard(self.0 & !(W::ONE << u32::from(cell)))
    }

    /// How many cells the set holds.
    #[inline]
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == W::ZERO
    }

    /// Whether every cell of `self` is in `other`.
    #[inline]
    pub fn is_subset(self, other: Bitboard<W>) -> bool {
        self.0 & !other.0 == W::ZERO
    }

    /// The lowest cell, if any.
    #[inline]
    pub fn first(self) -> Option<u8> {
        (self.0 != W::ZERO).then(|| self.0.trailing_zeros() as u8)
    }

    /// The highest cell, if any.
    #[inline]
    pub fn last(self) -> Option<u8> {
        (self.0 != W::ZERO).then(|| (W::BITS - 1 - self.0.leading_zeros()) as u8)
    }

    /// The cells in increasing order.
    #[inline]
    pub fn iter(self) -> Cells<W> {
        Cells(self.0)
    }
}

/// The cells of a [`Bitboard`] in increasing order.
#[derive(Clone, Debug)]
pub struct Cells<W: Word = u64>(W);

impl<W: Word> Iterator for Cells<W> {
    type Item = u8;

    #[inline]
    fn next(&mut self) -> Option<u8> {
        if self.0 == W::ZERO {
            return None;
        }
        let cell = self.0.trailing_zeros() as u8;
        self.0 = self.0 & (self.0 - W::ONE);
        Some(cell)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl<W: Word> ExactSizeIterator for Cells<W> {}

impl<W: Word> IntoIterator for Bitboard<W> {
    type Item = u8;
    type IntoIter = Cells<W>;

    #[inline]
    fn into_iter(self) -> Cells<W> {
        self.iter()
    }
}

impl<W: Word> FromIterator<u8> for Bitboard<W> {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Bitboard<W> {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}

impl<W: Word> BitAnd for Bitboard<W> {
    type Output = Bitboard<W>;
    #[inline]
    fn bitand(self, rhs: Bitboard<W>) -> Bitboard<W> {
        Bitboard(self.0 & rhs.0)
    }
}

impl<W: Word> BitOr for Bitboard<W> {
    type Output = Bitboard<W>;
    #[inline]
    fn bitor(self, rhs: Bitboard<W>) -> Bitboard<W> {
        Bitboard(self.0 | rhs.0)
    }
}

impl<W: Word> BitXor for Bitboard<W> {
    type Output = Bitboard<W>;
    #[inline]
    fn bitxor(self, rhs: Bitboard<W>) -> Bitboard<W> {
        Bitboard(self.0 ^ rhs.0)
    }
}

impl<W: Word> Not for Bitboard<W> {
    type Output = Bitboard<W>;
    #[inline]
    fn not(self) -> Bitboard<W> {
        Bitboard(!self.0)
    }
}

impl<W: Word> BitAndAssign for Bitboard<W> {
    #[inline]
    fn bitand_assign(&mut self, rhs: Bitboard<W>) {
        self.0 &= rhs.0;
    }
}

impl<W: Word> BitOrAssign for Bitboard<W> {
    #[inline]
    fn bitor_assign(&mut self, rhs: Bitboard<W>) {
        self.0 |= rhs.0;
    }
}

impl<W: Word> fmt::Debug for Bitboard<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a: Bitboard = [1u8, 2, 63].into_iter().collect();
        assert_eq!(a.count(), 3);
        assert_eq!(a.first(), Some(1));
        assert_eq!(a.last(), Some(63));
        assert!(a.with(7).contains(7));
        assert!(!a.without(2).contains(2));
        assert!(Bitboard::single(2).is_subset(a));
        assert!(!Bitboard::single(3).is_subset(a));
        assert_eq!(Bitboard::<u64>::EMPTY.first(), None);
        assert_eq!(Bitboard::<u64>::below(64).count(), 64);
        assert_eq!(Bitboard::<u64>::below(3), Bitboard(0b111));
        assert_eq!(a.iter().len(), 3);
    }

    #[test]
    fn wide_sets_hold_cells_up_to_127() {
        let a: Bitboard<u128> = [0u8, 63, 64, 127].into_iter().collect();
        assert_eq!(a.count(), 4);
        assert_eq!((a.first(), a.last()), (Some(0), Some(127)));
        assert!(a.contains(64) && !a.contains(65));
        assert_eq!(a.iter().collect::<Vec<_>>(), [0, 63, 64, 127]);
        assert_eq!(a.without(127).last(), Some(64));
        assert_eq!(Bitboard::<u128>::below(128).count(), 128);
        assert_eq!(Bitboard::<u128>::below(70).count(), 70);
        assert!(Bitboard::<u128>::single(100).is_subset(a.with(100)));
    }
}
