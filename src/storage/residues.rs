//! The `residues` layout of the two-bit search: the `blocks` table with two
//! bits a position, the remoteness mod 3 or 3 for unreachable, packed four
//! to a byte ([`pack`], [`unpack`]). Writing a searched class's blocks,
//! packed and checksummed in parallel, and reading one block back, checked.

use std::ops::Range;

use rayon::prelude::*;
use rusqlite::{Connection, params};

use super::block::BlockAt;
use super::blocks;
use super::checksum::{Checksum, RunningChecksum, block_checksum};
use super::fault::{Checked, Fault};
use crate::bitboard::Word;
use crate::mod3::Residues;
use crate::solver::{ClassTable, Solution};

/// Block checksums of the two-bit tables are computed this many white sets
/// at a time, in parallel, and then written in order.
pub(super) const PACK_BATCH: u64 = 1 << 14;

/// The code of an unreachable position in a packed two-bit block.
pub(super) const UNREACHABLE_CODE: u8 = 3;

/// Packs two-bit codes (0 to 2: remoteness mod 3; 3: unreachable) four to a
/// byte, the first in the low bits; the last byte is padded with 3.
///
/// ```
/// assert_eq!(bishops::storage::pack([0u8, 1, 2, 3, 1].into_iter()), [0b11_10_01_00, 0b11_11_11_01]);
/// ```
pub fn pack(codes: impl Iterator<Item = u8>) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(codes.size_hint().0.div_ceil(4));
    let (mut byte, mut filled) = (0u8, 0);
    for code in codes {
        byte |= (code & 3) << (2 * filled);
        filled += 1;
        if filled == 4 {
            bytes.push(byte);
            (byte, filled) = (0, 0);
        }
    }
    if filled > 0 {
        bytes.push(byte | (0xff << (2 * filled)));
    }
    bytes
}

/// The `len` codes packed in `bytes` by [`pack`]; `None` when `bytes` has
/// another length or its padding is not 3.
///
/// ```
/// use bishops::storage::{pack, unpack};
/// assert_eq!(unpack(&pack([2u8, 0, 1].into_iter()), 3), Some(vec![2, 0, 1]));
/// assert_eq!(unpack(&[0b0000_0001], 1), None);
/// ```
pub fn unpack(bytes: &[u8], len: usize) -> Option<Vec<u8>> {
    if !packs(bytes, len) {
        return None;
    }
    let mut codes: Vec<u8> = bytes
        .iter()
        .flat_map(|&b| [b & 3, b >> 2 & 3, b >> 4 & 3, b >> 6])
        .collect();
    codes.truncate(len);
    Some(codes)
}

/// Whether `bytes` are what [`pack`] makes of `len` codes: as long as they
/// take, the last byte padded with 3.
pub(super) fn packs(bytes: &[u8], len: usize) -> bool {
    if bytes.len() != len.div_ceil(4) {
        return false;
    }
    let used = len % 4;
    used == 0 || bytes.last().is_some_and(|&b| b >> (2 * used) == 0xff >> (2 * used))
}

/// The `i`-th code packed in `bytes` by [`pack`], read alone: what
/// [`unpack`] gives at `i`, without unpacking the rest. `i` must be below
/// the number of codes packed.
///
/// ```
/// use bishops::storage::{code_at, pack};
/// let bytes = pack([2u8, 0, 1, 3, 1].into_iter());
/// assert_eq!((0..5).map(|i| code_at(&bytes, i)).collect::<Vec<_>>(), [2, 0, 1, 3, 1]);
/// ```
#[inline]
pub fn code_at(bytes: &[u8], i: usize) -> u8 {
    bytes[i / 4] >> (2 * (i % 4)) & 3
}

/// Writes the blocks of the searched class `k` of `solution`, and returns
/// the class checksum: that of the block checksums (each as 8 bytes,
/// little-endian) in white-set order, so that it is computed in parallel.
pub(super) fn write_class<W: Word, R: Residues>(
    tx: &Connection,
    solution: &Solution<R, W>,
    k: usize,
) -> rusqlite::Result<Checksum> {
    let class = solution.classes[k].class.index() as i64;
    let mut block_row = tx.prepare(blocks::INSERT)?;
    let mut checksum = RunningChecksum::default();
    let white_sets = solution.classes[k].index.white_sets();
    for first in (0..white_sets).step_by(PACK_BATCH as usize) {
        let batch = residue_blocks(solution, k, first..(first + PACK_BATCH).min(white_sets));
        for (r, packed, block_sum) in batch {
            checksum.add(&block_sum.signed().to_le_bytes());
            block_row.execute(params![class, r as i64, packed, block_sum.signed()])?;
        }
    }
    Ok(checksum.checksum())
}

/// The packed two-bit block (see [`pack`]) of each white set in `range` of
/// the searched class `k`, with its checksum; empty blocks are left out.
fn residue_blocks<W: Word, R: Residues>(
    solution: &Solution<R, W>,
    k: usize,
    range: Range<u64>,
) -> Vec<(u64, Vec<u8>, Checksum)> {
    let class = &solution.classes[k];
    let ClassTable::Own(table) = &class.table else {
        unreachable!("only a searched class has blocks of its own")
    };
    range
        .into_par_iter()
        .filter_map(|r| {
            let block = class.index.block(r);
            if block.is_empty() {
                return None;
            }
            let packed = table.pack_range(block);
            let checksum = block_checksum(class.class.index(), r, &packed);
            Some((r, packed, checksum))
        })
        .collect()
}

/// Reads the two-bit codes of the block `at` and checks them: packed in as
/// many bytes as its positions take, matching its checksum, padded with 3.
/// Returns them with the block's checksum, which they were checked against.
pub(super) fn read_block<W: Word>(conn: &Connection, at: &BlockAt<W>) -> Checked<(Vec<u8>, Checksum)> {
    let (data, sum) = read_packed(conn, at)?;
    let codes = unpack(&data, at.len as usize).ok_or_else(bad_padding)?;
    Ok((codes, sum))
}

/// Reads the packed two-bit codes of the block `at` and checks them as
/// [`read_block`] does, leaving them packed: each is then read alone with
/// [`code_at`]. Returns them with the block's checksum.
pub(super) fn read_packed<W: Word>(conn: &Connection, at: &BlockAt<W>) -> Checked<(Vec<u8>, Checksum)> {
    let (data, stored) = blocks::read_row(conn, at, at.len.div_ceil(4))?;
    let sum = block_checksum(at.class, at.white, &data);
    if sum.signed() != stored {
        return Err(Fault::Wrong("a block that fails its checksum".into()));
    }
    if !packs(&data, at.len as usize) {
        return Err(bad_padding());
    }
    Ok((data, sum))
}

fn bad_padding() -> Fault {
    Fault::Wrong("a block with bad padding".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_read_alone_is_the_one_unpacked() {
        // Every length across a byte's four places, every code in every
        // place.
        for len in 0..40usize {
            let codes: Vec<u8> = (0..len).map(|i| ((i * 7 + len) % 4) as u8).collect();
            let bytes = pack(codes.iter().copied());
            let unpacked = unpack(&bytes, len).unwrap();
            assert_eq!(unpacked, codes);
            for (i, &c) in unpacked.iter().enumerate() {
                assert_eq!(code_at(&bytes, i), c, "code {i} of {len}");
            }
        }
    }

    #[test]
    fn padding_other_than_3_is_refused() {
        for len in 1..8usize {
            let bytes = pack(std::iter::repeat_n(1u8, len));
            assert!(packs(&bytes, len));
            if len % 4 != 0 {
                let mut bad = bytes.clone();
                *bad.last_mut().unwrap() &= 0x7f;
                assert!(!packs(&bad, len), "{len}");
                assert_eq!(unpack(&bad, len), None);
            }
            assert!(!packs(&bytes, len + 4), "{len}: too short");
        }
    }
}
