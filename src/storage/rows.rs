//! The `rows` layout: a row of `positions` per legal position, and a block
//! checksum per white set in `row_checksums`, for tables small enough that
//! a person may read them with `sqlite3` a position at a time. Writing a
//! class's table, and reading one block of it back, checked.

use rusqlite::{Connection, Statement, params};

use super::block::{BlockAt, own_blocks};
use super::checksum::block_checksum;
use super::fault::{Checked, Fault, RowOr};
use crate::bitboard::Word;
use crate::index::{binomial, colex_unrank};
use crate::remoteness::Cell;
use crate::rules::Part;
use crate::tight::{Subsets, TightIndex};
use crate::variant::ClassSpec;

/// Writes the blocks of one class as rows: a row per position, a checksum
/// per block.
pub(super) struct Writer<'c, 'a, W: Word> {
    row: Statement<'c>,
    row_checksum: Statement<'c>,
    spec: &'a ClassSpec<W>,
    index: &'a TightIndex<W>,
}

impl<'c, 'a, W: Word> Writer<'c, 'a, W> {
    /// A writer of the rows of the class `spec`, whose tight index is `index`.
    pub(super) fn new(tx: &'c Connection, spec: &'a ClassSpec<W>, index: &'a TightIndex<W>) -> rusqlite::Result<Self> {
        Ok(Writer {
            row: tx.prepare("INSERT INTO positions (class, hash, remoteness) VALUES (?1, ?2, ?3)")?,
            row_checksum: tx.prepare("INSERT INTO row_checksums (class, white, checksum) VALUES (?1, ?2, ?3)")?,
            spec,
            index,
        })
    }

    /// Writes the cells of the block of white-set rank `r`: its rows and
    /// its checksum.
    pub(super) fn block(&mut self, r: u64, cells: &[u8]) -> rusqlite::Result<()> {
        let class = self.spec.class.index() as i64;
        let white = colex_unrank(r, self.index.white());
        for (black, &byte) in Subsets::new(self.index.safe(r), self.index.black()).zip(cells) {
            let hash = self.spec.index.rank(Part { white, black });
            self.row
                .execute(params![class, hash as i64, Cell(byte).remoteness().map(|r| r.0)])?;
        }
        let block_sum = block_checksum(self.spec.class.index(), r, cells).signed();
        self.row_checksum.execute(params![class, r as i64, block_sum])?;
        Ok(())
    }
}

/// Writes the byte table `all` of the class `spec` (a cell per position in
/// the order of `index`): a row per position, a checksum per block.
pub(super) fn write_class<W: Word>(
    tx: &Connection,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    all: &[u8],
) -> rusqlite::Result<()> {
    let mut writer = Writer::new(tx, spec, index)?;
    own_blocks(index, all).try_for_each(|(r, cells)| writer.block(r, cells))
}

/// Reads the cells of the block `at` of the class `spec` from its rows, in
/// colex order of their black sets, and checks them: a row at every legal
/// hash and nowhere else, each a remoteness or unreachable, matching the
/// block's checksum.
pub(super) fn read_block<W: Word>(conn: &Connection, spec: &ClassSpec<W>, at: &BlockAt<W>) -> Checked<Vec<u8>> {
    let cells = read_cells(conn, spec, at)?;
    let stored = conn
        .prepare_cached("SELECT checksum FROM row_checksums WHERE class = ?1 AND white = ?2")?
        .query_row(params![at.class as i64, at.white as i64], |r| r.get::<_, i64>(0))
        .row_or("no checksum")?;
    at.check_cells(&cells, stored)?;
    Ok(cells)
}

/// The cells of the rows of the block `at`, each at the hash of the next
/// legal position of the block.
fn read_cells<W: Word>(conn: &Connection, spec: &ClassSpec<W>, at: &BlockAt<W>) -> Checked<Vec<u8>> {
    let (white_count, _) = spec.counts();
    let size = binomial(spec.geometry.len() as u32 - white_count, at.black);
    let low = at.white * size;
    let mut expected = Subsets::new(at.safe, at.black).map(|black| {
        spec.index.rank(Part {
            white: at.white_set,
            black,
        })
    });
    let mut cells = Vec::with_capacity(at.len as usize);
    let mut st = conn.prepare_cached(
        "SELECT hash, remoteness FROM positions WHERE class = ?1 AND hash >= ?2 AND hash < ?3 ORDER BY hash",
    )?;
    let mut rows = st.query(params![at.class as i64, low as i64, (low + size) as i64])?;
    while let Some(row) = rows.next()? {
        let hash = row.get::<_, i64>(0)?;
        match expected.next() {
            Some(legal) if legal as i64 == hash => {}
            Some(legal) if (legal as i64) < hash => {
                return Err(Fault::Wrong(format!("no row for the legal hash {legal}")));
            }
            _ => {
                return Err(Fault::Wrong(format!(
                    "a row at hash {hash}, where no legal position is"
                )));
            }
        }
        cells.push(match row.get::<_, Option<i64>>(1)? {
            None => Cell::UNREACHABLE.0,
            Some(r) if (0..=i64::from(Cell::MAX_REMOTENESS)).contains(&r) => r as u8,
            Some(r) => return Err(Fault::Wrong(format!("a remoteness of {r} at hash {hash}"))),
        });
    }
    if let Some(hash) = expected.next() {
        return Err(Fault::Wrong(format!("no row for the legal hash {hash}")));
    }
    Ok(cells)
}
