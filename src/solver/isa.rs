//! The instruction sets the searches' inner loops are compiled for.
//!
//! A baseline x86-64 build has neither `popcnt` nor `pext`: a `count_ones`
//! is a dozen instructions, so the [`Kernel`](super::kernel::Kernel) ranks
//! black sets with per-block tables instead. Most processors have both (as
//! part of BMI2 and POPCNT), and there a rank can be a `pext` and a few
//! reads, with no table to build per block. So a search compiles its
//! per-block work generic over an [`Isa`]: once for any processor
//! ([`Tables`]), and inside `#[target_feature]` functions for [`Bmi2`],
//! which exists only where [`Bmi2::detect`] found the instructions.
//! Everything that work inlines, `count_ones` and `trailing_zeros`
//! included, then uses them.
//!
//! Having `pext` is not the same as having a fast one. AMD's processors
//! before Zen 3 run it in microcode (measured on a Zen 2: 9.9 ns for a
//! mask of 4 cells, 78 ns for one of 63), where Intel's and later AMD's
//! take 3 cycles; on those the tables rank far faster, with `popcnt` all
//! the same ([`Best::detect`] chooses: [`Ranks`]).

use crate::bitboard::{Bitboard, Word};
use crate::error::{Error, Result};
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

/// How the kernel ranks black sets: what [`Best::detect`] chose.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Ranks {
    /// By `pext`: the processor has a fast one, or `BISHOPS_RANKS=pext`
    /// asked.
    Pext,
    /// By per-block tables, counting cells with `popcnt`: the processor's
    /// `pext` is microcoded (AMD's before Zen 3), or `BISHOPS_RANKS=tables`
    /// asked.
    TablesCounted,
    /// By per-block tables on any x86-64: the processor has no BMI2 and
    /// POPCNT, or this is not x86-64.
    Tables,
}

/// The best instruction set of this processor for the searches, found once.
#[derive(Copy, Clone, Debug)]
pub(super) struct Best {
    /// The processor's BMI2 and POPCNT, where it has them: the per-block
    /// work is compiled for them.
    #[cfg(target_arch = "x86_64")]
    pub(super) bmi2: Option<Bmi2>,
    /// How black sets are ranked: by `pext` only with [`bmi2`](Self::bmi2).
    pub(super) ranks: Ranks,
    /// Whether `BISHOPS_RANKS` chose, not the processor.
    asked: bool,
}

impl Best {
    /// What this processor does best, unless `BISHOPS_RANKS` asks for
    /// `pext` or `tables` (to measure one against the other): `pext` where
    /// it is fast, tables where it is microcoded.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when `BISHOPS_RANKS` is set to anything else, or
    /// asks for `pext` on a processor without it.
    pub(super) fn detect() -> Result<Best> {
        let asked = match std::env::var("BISHOPS_RANKS").as_deref().map(str::trim) {
            Ok("pext") => Some(true),
            Ok("tables") => Some(false),
            Ok("") | Err(_) => None,
            Ok(v) => return Err(Error::Usage(format!("BISHOPS_RANKS={v} is not pext or tables"))),
        };
        Best::choose(asked)
    }

    /// What a user should know of the choice, when it is not the obvious
    /// one: a processor with `pext` whose searches rank without it.
    pub(super) fn note(&self) -> Option<&'static str> {
        (self.ranks == Ranks::TablesCounted).then_some(if self.asked {
            "its search ranks black sets by tables, not pext, as BISHOPS_RANKS asks"
        } else {
            "its search ranks black sets by tables, not pext, which this processor runs in microcode"
        })
    }

    /// [`detect`](Self::detect), where `pext` says whether ranks are by
    /// `pext` (`None`: where it is fast).
    pub(super) fn choose(pext: Option<bool>) -> Result<Best> {
        #[cfg(target_arch = "x86_64")]
        {
            let bmi2 = Bmi2::detect();
            let ranks = match (bmi2, pext) {
                (None, Some(true)) => {
                    return Err(Error::Usage(
                        "BISHOPS_RANKS=pext, but this processor has no BMI2 and POPCNT".into(),
                    ));
                }
                (None, _) => Ranks::Tables,
                (Some(_), Some(true)) => Ranks::Pext,
                (Some(_), Some(false)) => Ranks::TablesCounted,
                (Some(_), None) if pext_is_microcoded() => Ranks::TablesCounted,
                (Some(_), None) => Ranks::Pext,
            };
            Ok(Best {
                bmi2,
                ranks,
                asked: pext.is_some(),
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        match pext {
            Some(true) => Err(Error::Usage(
                "BISHOPS_RANKS=pext, but this processor has no pext".into(),
            )),
            _ => Ok(Best {
                ranks: Ranks::Tables,
                asked: pext.is_some(),
            }),
        }
    }
}

/// Whether this processor runs `pext` in microcode: AMD's families 15h to
/// 17h (Excavator, Zen, Zen+, Zen 2) and Hygon's 18h (a Zen). Measured on
/// a Zen 2 (family 17h, model 31h): 9.9 ns a `pext` with a mask of 4
/// cells, 78 ns with 63, where Zen 3 (19h) and Intel's since Haswell take
/// 3 cycles whatever the mask, by their makers' tables.
#[cfg(target_arch = "x86_64")]
fn pext_is_microcoded() -> bool {
    use std::arch::x86_64::__cpuid;
    // Leaf 0: the vendor, in EBX, EDX, ECX; leaf 1: the signature.
    let leaf0 = __cpuid(0);
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&leaf0.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&leaf0.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&leaf0.ecx.to_le_bytes());
    microcoded(&vendor, __cpuid(1).eax)
}

/// [`pext_is_microcoded`] for the processor of `vendor` and the signature
/// `eax` (leaf 1 of CPUID: its family is the base, plus the extended
/// family when the base is 15).
#[cfg(target_arch = "x86_64")]
fn microcoded(vendor: &[u8; 12], eax: u32) -> bool {
    let base = (eax >> 8) & 0xF;
    let family = if base == 0xF { base + ((eax >> 20) & 0xFF) } else { base };
    match vendor {
        b"AuthenticAMD" => family < 0x19,
        b"HygonGenuine" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signatures of some processors: pext is microcoded on AMD's
    /// Zen to Zen 2 and Hygon's, not on Zen 3 and 4 nor Intel's.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn pext_is_microcoded_before_zen_3() {
        for (vendor, eax, slow) in [
            (b"AuthenticAMD", 0x0083_0F10, true),  // EPYC 7002, Zen 2 (family 17h, model 31h)
            (b"AuthenticAMD", 0x0080_0F12, true),  // Zen (17h, 1h)
            (b"AuthenticAMD", 0x0060_0F12, true),  // Excavator (15h)
            (b"AuthenticAMD", 0x00A0_0F11, false), // EPYC 7003, Zen 3 (19h)
            (b"AuthenticAMD", 0x00A1_0F11, false), // EPYC 9004, Zen 4 (19h, 11h)
            (b"HygonGenuine", 0x0090_0F01, true),  // Dhyana (18h)
            (b"GenuineIntel", 0x0005_0654, false), // Skylake-SP
            (b"GenuineIntel", 0x0003_06C3, false), // Haswell
        ] {
            assert_eq!(
                microcoded(vendor, eax),
                slow,
                "{} {eax:#x}",
                String::from_utf8_lossy(vendor)
            );
        }
    }

    /// `BISHOPS_RANKS`'s two choices, as [`Best::choose`] takes them.
    #[test]
    fn a_choice_asked_is_taken_or_refused() {
        let by_tables = Best::choose(Some(false)).unwrap();
        assert_ne!(by_tables.ranks, Ranks::Pext);
        match Best::choose(Some(true)) {
            Ok(best) => {
                assert_eq!(best.ranks, Ranks::Pext);
                assert_eq!(best.note(), None);
                assert_eq!(by_tables.ranks, Ranks::TablesCounted);
                assert!(by_tables.note().unwrap().contains("as BISHOPS_RANKS asks"));
            }
            Err(e) => assert!(e.to_string().contains("but this processor has no"), "{e}"),
        }
    }

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
