//! A checked block of exact values held in memory in as few bits a
//! position as its values need: each value as its distance from the
//! block's lowest, in a fixed number of bits, so that any one is read
//! without decoding the others.
//!
//! The `frames` layout stores exact values compressed, and a frame must be
//! decoded whole to read one value. A question holds its values against all
//! their neighbours and so reads some hundreds of blocks; a server whose
//! questions range over a whole table answers quickly only when those
//! blocks are in memory already, and a byte a position would not fit
//! 11x10's table in this machine's memory. Moves can be undone, so the
//! values of a block lie close together: held whole, 11x8's table took
//! 3.05 bits a position and 11x10's 3.21, headers included.
//!
//! The form: the lowest remoteness, the bits a position (0 to 8), the span
//! of the remoteness values (their highest less their lowest, plus one),
//! then each position's code, least significant bits first, and a byte of
//! padding. A code below the span is a remoteness less the lowest; the
//! code equal to the span is a position that cannot reach the goal.

use crate::remoteness::Cell;

/// Bytes before the codes: the lowest remoteness, the bits a code, the span.
pub(super) const HEADER: usize = 3;

/// `cells` (each a remoteness or [`Cell::UNREACHABLE`], as a checked block
/// holds them) in the packed form.
pub(super) fn pack(cells: &[u8]) -> Vec<u8> {
    let (mut low, mut high, mut unreachable) = (u8::MAX, 0u8, false);
    for &cell in cells {
        if cell == Cell::UNREACHABLE.0 {
            unreachable = true;
        } else {
            (low, high) = (low.min(cell), high.max(cell));
        }
    }
    let (low, span) = if low <= high { (low, high - low + 1) } else { (0, 0) };
    let symbols = u32::from(span) + u32::from(unreachable);
    let width = u32::BITS - symbols.saturating_sub(1).leading_zeros();
    let mut packed = vec![0u8; HEADER + (cells.len() * width as usize).div_ceil(8) + 1];
    packed[..HEADER].copy_from_slice(&[low, width as u8, span]);
    if width == 0 {
        return packed;
    }
    // Codes gather in a word, least significant first, and leave it four
    // bytes at a time.
    let (mut word, mut bits, mut at) = (0u64, 0u32, HEADER);
    for &cell in cells {
        let code = if cell == Cell::UNREACHABLE.0 { span } else { cell - low };
        word |= u64::from(code) << bits;
        bits += width;
        if bits >= 32 {
            packed[at..at + 4].copy_from_slice(&(word as u32).to_le_bytes());
            (word, bits, at) = (word >> 32, bits - 32, at + 4);
        }
    }
    for byte in &mut packed[at..at + bits.div_ceil(8) as usize] {
        *byte = word as u8;
        word >>= 8;
    }
    packed
}

/// The cell of the `i`-th position of a block in the packed form.
#[cfg(test)]
fn cell_at(packed: &[u8], i: usize) -> u8 {
    cell_in(packed[..HEADER].try_into().unwrap(), packed, i)
}

/// The cell of the `i`-th position of a block in the packed form, whose
/// header (its first [`HEADER`] bytes) is `header`: a reader that keeps
/// the header apart reads only the byte of the code from the block.
pub(super) fn cell_in(header: [u8; HEADER], packed: &[u8], i: usize) -> u8 {
    let [low, width, span] = header;
    let code = if width == 0 {
        0
    } else {
        let bit = i * usize::from(width);
        let at = HEADER + bit / 8;
        let word = u16::from_le_bytes([packed[at], packed[at + 1]]);
        (word >> (bit % 8)) as u8 & ((1u16 << width) - 1) as u8
    };
    if code == span { Cell::UNREACHABLE.0 } else { low + code }
}

/// The byte of the block where the `i`-th position's code starts, given
/// its header: the one [`cell_in`] reads.
pub(super) fn code_byte(header: [u8; HEADER], i: usize) -> usize {
    HEADER + i * usize::from(header[1]) / 8
}

/// The cells of a block of `len` positions in the packed form.
#[cfg(test)]
fn unpack(packed: &[u8], len: usize) -> Vec<u8> {
    (0..len).map(|i| cell_at(packed, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: u8 = Cell::UNREACHABLE.0;

    fn round_trip(cells: &[u8]) -> Vec<u8> {
        let packed = pack(cells);
        for (i, &cell) in cells.iter().enumerate() {
            assert_eq!(cell_at(&packed, i), cell, "position {i} of {cells:?}");
            // The two bytes a code is read from lie in the block.
            if packed[1] > 0 {
                assert!(code_byte(packed[..HEADER].try_into().unwrap(), i) + 1 < packed.len());
            }
        }
        assert_eq!(unpack(&packed, cells.len()), cells);
        packed
    }

    #[test]
    fn every_cell_reads_back_as_it_was() {
        round_trip(&[]);
        round_trip(&[7]);
        round_trip(&[U]);
        round_trip(&[U, U, U]);
        round_trip(&[0, 253, U, 1, 252]);
        round_trip(&[40, 41, 39, U, 42, 40]);
        let mut wide: Vec<u8> = (0..=253).collect();
        wide.push(U);
        round_trip(&wide);
        // Every width, at every bit offset.
        for spread in 1..=253u8 {
            let cells: Vec<u8> = (0..37u32).map(|i| (i * 7 % u32::from(spread)) as u8).collect();
            round_trip(&cells);
        }
    }

    #[test]
    fn a_block_takes_the_bits_its_spread_needs() {
        assert_eq!(round_trip(&[5; 1000]).len(), HEADER + 1, "one value: no codes");
        assert_eq!(round_trip(&[U; 1000]).len(), HEADER + 1);
        // Two symbols: a bit each.
        assert_eq!(round_trip(&[5, U].repeat(500)).len(), HEADER + 125 + 1);
        // 30 to 37: three bits; with the unreachable, nine symbols: four.
        let cells: Vec<u8> = (0..1000u32).map(|i| 30 + (i % 8) as u8).collect();
        assert_eq!(round_trip(&cells).len(), HEADER + 375 + 1);
        let mut cells = cells;
        cells[500] = U;
        assert_eq!(round_trip(&cells).len(), HEADER + 500 + 1);
    }
}
