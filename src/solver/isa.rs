//! The instruction sets the searches' inner loops are compiled for.
//!
//! A baseline x86-64 build has neither `popcnt` nor `pext`: a `count_ones`
//! is a dozen instructions, so the [`Kernel`](super::kernel::Kernel) ranks
//! black sets with per-block tables instead. Most processors have both (as
//! part of BMI2 and POPCNT), and there a rank is a `pext` and a few reads,
//! with no table to build per block. So a search compiles its per-block work
//! twice, generic over an [`Isa`]: once for any processor ([`Tables`]), and
//! once inside a `#[target_feature]` function for [`Bmi2`], which exists
//! only where [`Bmi2::detect`] found the instructions. Everything that work
//! inlines, `count_ones` and `trailing_zeros` included, then uses them.

use crate::bitboard::{Bitboard, Word};
use crate::index::compress;

/// An instruction set the kernel's inner loops are compiled for.
pub(super) trait Isa: Copy + Send + Sync {
    /// Whether [`compress`](Self::compress) is one instruction. When it is
    /// not, the kernel ranks through per-block tables and never calls it.
    const PEXT: bool;

    /// The cells of `set` renumbered as their positions among the cells of
    /// `within` ([`compress`]), in words of either width.
    fn compress<W: Word>(self, set: W, within: W) -> W;

    /// [`compress`](Self::compress) where `within` has at most 64 cells, so
    /// that the result fits 64 bits: how the kernel ranks, in 64-bit
    /// arithmetic, on a board past 64 squares a class whose safe sets
    /// never pass 64 cells. Only [`Bmi2`] is asked.
    fn compress_low<W: Word>(self, set: W, within: W) -> u64;
}

/// Any processor: ranks go through per-block tables.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Tables;

impl Isa for Tables {
    const PEXT: bool = false;

    #[inline]
    fn compress<W: Word>(self, set: W, within: W) -> W {
        compress(Bitboard(set), Bitboard(within)).0
    }

    fn compress_low<W: Word>(self, _: W, _: W) -> u64 {
        unreachable!("the kernel ranks through tables without PEXT")
    }
}

/// A processor with BMI1, BMI2, POPCNT and LZCNT (every x86-64 since about
/// 2013–2015). A value exists only where [`detect`](Self::detect) found
/// them, which is what makes the `pext` in [`compress`](Isa::compress) and
/// the `#[target_feature]` functions that take one sound to call.
#[cfg(target_arch = "x86_64")]
#[derive(Copy, Clone, Debug)]
pub(super) struct Bmi2(());

#[cfg(target_arch = "x86_64")]
impl Bmi2 {
    /// The instruction set, when this processor has it.
    pub(super) fn detect() -> Option<Bmi2> {
        (std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("popcnt")
            && std::is_x86_feature_detected!("lzcnt"))
        .then_some(Bmi2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Isa for Bmi2 {
    const PEXT: bool = true;

    #[inline(always)]
    fn compress<W: Word>(self, set: W, within: W) -> W {
        // SAFETY: a `Bmi2` exists only where `detect` found BMI2.
        unsafe { set.pext(within) }
    }

    #[inline(always)]
    fn compress_low<W: Word>(self, set: W, within: W) -> u64 {
        // SAFETY: as above.
        unsafe { set.pext_low(within) }
    }
}

/// The best instruction set of this processor for the searches, found once.
#[derive(Copy, Clone, Debug)]
pub(super) struct Best {
    #[cfg(target_arch = "x86_64")]
    pub(super) bmi2: Option<Bmi2>,
}

impl Best {
    pub(super) fn detect() -> Best {
        Best {
            #[cfg(target_arch = "x86_64")]
            bmi2: Bmi2::detect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_agrees_in_128_bit_words() {
        let within = 0xF0F0_0000_0000_0000_0000_0000_0000_0003u128 | 0b1011u128 << 60;
        for set in [
            0u128,
            1,
            0b1000u128 << 60,
            within,
            0x1010_0000_0000_0000_0000_0000_0000_0002,
        ] {
            let set = set & within;
            let expected = compress(Bitboard(set), Bitboard(within)).0;
            assert_eq!(Tables.compress(set, within), expected);
            #[cfg(target_arch = "x86_64")]
            if let Some(isa) = Bmi2::detect() {
                assert_eq!(isa.compress(set, within), expected);
            }
        }
    }

    /// A safe set of at most 64 cells of a 128-bit class, as 13x10's (65
    /// cells, 5 white bishops) always is, compressed into 64 bits: with
    /// and without cells past the 64th, and with all 64 below it.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn compress_low_agrees_in_128_bit_words() {
        let Some(isa) = Bmi2::detect() else {
            return;
        };
        for within in [
            0x0000_0000_0000_0001_F7FF_FFFF_FFFF_FFFEu128,
            0x0000_0000_0000_0000_FFFF_FFFF_FFFF_FFFFu128,
            0x8000_0000_0000_0001_0000_0000_0000_0000u128,
            0x0000_0000_0000_0003_0F0F_0F0F_0F0F_0F0Fu128,
            u128::from(u64::MAX) << 64,
        ] {
            for set in [0u128, 1, 1 << 64, 1 << 65, 0xA5A5_A5A5 << 48, u128::MAX] {
                let set = set & within;
                let expected = compress(Bitboard(set), Bitboard(within)).0;
                assert_eq!(
                    u128::from(isa.compress_low(set, within)),
                    expected,
                    "{set:#x} in {within:#x}"
                );
            }
        }
    }

    #[test]
    fn compress_agrees_everywhere() {
        let within = 0b1011_0110_1101_0011u64;
        for set in [0, 0b1_0000_0001, 0b1011_0000_0000_0010, within] {
            let expected = compress(Bitboard(set), Bitboard(within)).0;
            assert_eq!(Tables.compress(set, within), expected);
            #[cfg(target_arch = "x86_64")]
            if let Some(isa) = Bmi2::detect() {
                assert_eq!(isa.compress(set, within), expected);
            }
        }
    }
}
