//! The `blocks` layout: a row of `blocks` per white set, a byte per
//! position, for tables too large for a row each. Writing a class's table,
//! and reading one block back, checked; the residues layout keeps its
//! blocks in the same table and reads them the same way.

use rusqlite::{Connection, Statement, params};

use super::block::{BlockAt, own_blocks};
use super::checksum::block_checksum;
use super::fault::{Checked, Fault, RowOr};
use crate::bitboard::Word;
use crate::tight::TightIndex;

/// The statement that stores one block: class, white rank, data, checksum.
pub(super) const INSERT: &str = "INSERT INTO blocks (class, white, data, checksum) VALUES (?1, ?2, ?3, ?4)";

/// Writes the blocks of one class, one row of `blocks` each.
pub(super) struct Writer<'c> {
    row: Statement<'c>,
    class: usize,
}

impl<'c> Writer<'c> {
    /// A writer of the blocks of class number `class`.
    pub(super) fn new(tx: &'c Connection, class: usize) -> rusqlite::Result<Writer<'c>> {
        Ok(Writer {
            row: tx.prepare(INSERT)?,
            class,
        })
    }

    /// Writes the cells of the block of white-set rank `r`, with its checksum.
    pub(super) fn block(&mut self, r: u64, cells: &[u8]) -> rusqlite::Result<()> {
        let block_sum = block_checksum(self.class, r, cells).signed();
        self.row
            .execute(params![self.class as i64, r as i64, cells, block_sum])?;
        Ok(())
    }
}

/// Writes the byte table `all` of class number `class` (a cell per
/// position in the order of `index`): a row per non-empty block.
pub(super) fn write_class<W: Word>(
    tx: &Connection,
    class: usize,
    index: &TightIndex<W>,
    all: &[u8],
) -> rusqlite::Result<()> {
    let mut writer = Writer::new(tx, class)?;
    own_blocks(index, all).try_for_each(|(r, cells)| writer.block(r, cells))
}

/// Reads the cells of the block `at` and checks them: as many as it has
/// positions, each a remoteness or unreachable, matching its checksum.
pub(super) fn read_block<W: Word>(conn: &Connection, at: &BlockAt<W>) -> Checked<Vec<u8>> {
    let (data, checksum) = read_row(conn, at, at.len)?;
    at.check_cells(&data, checksum)?;
    Ok(data)
}

/// The stored data of the block `at` and its stored checksum, the data
/// checked to be `bytes` long.
pub(super) fn read_row<W: Word>(conn: &Connection, at: &BlockAt<W>, bytes: u64) -> Checked<(Vec<u8>, i64)> {
    let (data, checksum) = conn
        .prepare_cached("SELECT data, checksum FROM blocks WHERE class = ?1 AND white = ?2")?
        .query_row(params![at.class as i64, at.white as i64], |r| {
            Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, i64>(1)?))
        })
        .row_or("no block")?;
    if data.len() as u64 != bytes {
        return Err(Fault::Wrong(format!(
            "a block of {} bytes for {} positions",
            data.len(),
            at.len
        )));
    }
    Ok((data, checksum))
}
