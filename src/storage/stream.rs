//! Writing a table that arrives in pieces (from the ranks of an MPI job,
//! say), never held whole: the pieces are cut into blocks as they come and
//! each block is written in its layout as soon as it is complete. A byte
//! table goes into the rows or blocks layout; a table of two-bit codes
//! (0 to 2, the remoteness mod 3, or 3, unreachable) into the residues
//! layout, and it comes already packed as that layout stores it: each
//! block's codes four a byte, the last byte padded with 3
//! ([`residues::pack`](super::residues::pack)).

use rusqlite::{Connection, Statement, params};

use super::checksum::{Checksum, RunningChecksum, block_checksum};
use super::schema::Layout;
use super::{blocks, frames, residues, rows};
use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

/// The writer of one class's blocks in its layout.
enum Writer<'c, 'a, W: Word> {
    Rows(rows::Writer<'c, 'a, W>),
    Blocks(blocks::Writer<'c>),
    Residues(Box<Residues<'c>>),
    Frames(frames::Writer<'c>),
}

/// Two-bit codes, packed four to a byte, a row per block; the class
/// checksum is that of the block checksums.
struct Residues<'c> {
    row: Statement<'c>,
    class: usize,
    sums: RunningChecksum,
}

/// Takes a class's cells in tight-index order (for the residues layout,
/// its blocks packed), in pieces of any length, and writes every block of
/// them as it completes.
pub(super) struct Cutter<'c, 'a, W: Word> {
    writer: Writer<'c, 'a, W>,
    index: &'a TightIndex<W>,
    /// The white-set rank of the block being filled.
    next: u64,
    /// Its bytes so far.
    pending: Vec<u8>,
    /// The checksum of every cell taken, for the rows and blocks layouts.
    checksum: RunningChecksum,
}

impl<'c, 'a, W: Word> Cutter<'c, 'a, W> {
    /// A cutter of the cells of the class `spec`, whose tight index is
    /// `index`, into `layout`: bytes into rows or blocks, two-bit codes
    /// into residues.
    pub(super) fn new(
        tx: &'c Connection,
        spec: &'a ClassSpec<W>,
        index: &'a TightIndex<W>,
        layout: Layout,
    ) -> Result<Self> {
        let sql = |e| Error::Sqlite("the database being written".into(), e);
        let writer = match layout {
            Layout::Rows => Writer::Rows(rows::Writer::new(tx, spec, index).map_err(sql)?),
            Layout::Blocks => Writer::Blocks(blocks::Writer::new(tx, spec.class.index()).map_err(sql)?),
            Layout::Frames => {
                Writer::Frames(frames::Writer::new(tx, spec.class.index(), index.white_sets()).map_err(sql)?)
            }
            Layout::Residues => Writer::Residues(Box::new(Residues {
                row: tx.prepare(blocks::INSERT).map_err(sql)?,
                class: spec.class.index(),
                sums: RunningChecksum::default(),
            })),
        };
        Ok(Cutter {
            writer,
            index,
            next: 0,
            pending: Vec::new(),
            checksum: RunningChecksum::default(),
        })
    }

    /// Takes the next `bytes` of the class: cells a byte each, or for the
    /// residues layout the blocks' packed codes.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when they run past the class's blocks, or a
    /// packed block's last byte is not padded with 3; what SQLite runs
    /// into.
    pub(super) fn take(&mut self, mut bytes: &[u8]) -> Result<()> {
        if !matches!(self.writer, Writer::Residues(_)) {
            self.checksum.add(bytes);
        }
        while !bytes.is_empty() {
            if self.next == self.index.white_sets() {
                return Err(Error::Exchange(format!(
                    "more came than the {} positions of the class",
                    self.index.len()
                )));
            }
            let want = self.block_bytes(self.next) - self.pending.len();
            let (now, rest) = bytes.split_at(want.min(bytes.len()));
            self.pending.extend_from_slice(now);
            bytes = rest;
            self.flush()?;
        }
        Ok(())
    }

    /// The bytes the block of white set `r` comes in.
    fn block_bytes(&self, r: u64) -> usize {
        let cells = self.index.block(r);
        let len = (cells.end - cells.start) as usize;
        match self.writer {
            Writer::Residues(_) => len.div_ceil(4),
            Writer::Rows(_) | Writer::Blocks(_) | Writer::Frames(_) => len,
        }
    }

    /// Writes the pending block when it is complete, and every empty block
    /// after it.
    fn flush(&mut self) -> Result<()> {
        while self.next < self.index.white_sets() {
            if self.pending.len() != self.block_bytes(self.next) {
                return Ok(());
            }
            if !self.pending.is_empty() {
                let r = self.next;
                let written = match &mut self.writer {
                    Writer::Rows(w) => w.block(r, &self.pending),
                    Writer::Blocks(w) => w.block(r, &self.pending),
                    Writer::Frames(w) => w.block(r, &self.pending),
                    Writer::Residues(w) => {
                        let cells = self.index.block(r);
                        if !residues::packs(&self.pending, (cells.end - cells.start) as usize) {
                            return Err(Error::Exchange(format!(
                                "the packed codes of block {r} of class {} are not padded with 3",
                                w.class
                            )));
                        }
                        let sum = block_checksum(w.class, r, &self.pending);
                        w.sums.add(&sum.signed().to_le_bytes());
                        w.row
                            .execute(params![w.class as i64, r as i64, &self.pending, sum.signed()])
                            .map(|_| ())
                    }
                };
                written.map_err(|e| Error::Sqlite("the database being written".into(), e))?;
                self.pending.clear();
            }
            self.next += 1;
        }
        Ok(())
    }

    /// The class checksum, once every block has come.
    ///
    /// # Errors
    ///
    /// [`Error::Exchange`] when less came than the class has.
    pub(super) fn finish(mut self) -> Result<Checksum> {
        self.flush()?;
        if self.next != self.index.white_sets() {
            return Err(Error::Exchange(format!(
                "the class's positions stopped in block {} of {}",
                self.next,
                self.index.white_sets()
            )));
        }
        Ok(match self.writer {
            Writer::Residues(w) => w.sums.checksum(),
            Writer::Frames(w) => {
                w.finish()
                    .map_err(|e| Error::Sqlite("the database being written".into(), e))?;
                self.checksum.checksum()
            }
            Writer::Rows(_) | Writer::Blocks(_) => self.checksum.checksum(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mod3::Mod3Table;
    use crate::solver::ClassStats;
    use crate::solver::{ClassSolution, ClassTable, TwoBitSolution};
    use crate::storage::schema::SCHEMA;
    use crate::variant::Variant;

    /// The blocks a cutter writes from pieces of any length are those the
    /// whole table gives, in both layouts.
    #[test]
    fn pieces_of_any_length_make_the_same_blocks() {
        let variant = Variant::named("7x6").unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let cells: Vec<u8> = (0..index.len()).map(|i| (i % 17) as u8).collect();
        for layout in [Layout::Rows, Layout::Blocks, Layout::Frames] {
            let whole = Connection::open_in_memory().unwrap();
            whole.execute_batch(SCHEMA).unwrap();
            match layout {
                Layout::Rows => rows::write_class(&whole, spec, &index, &cells).unwrap(),
                Layout::Frames => frames::write_class(&whole, 0, &index, &cells).unwrap(),
                _ => blocks::write_class(&whole, 0, &index, &cells).unwrap(),
            }
            for piece in [1, 7, 1000, cells.len()] {
                let cut = Connection::open_in_memory().unwrap();
                cut.execute_batch(SCHEMA).unwrap();
                let mut cutter = Cutter::new(&cut, spec, &index, layout).unwrap();
                for chunk in cells.chunks(piece) {
                    cutter.take(chunk).unwrap();
                }
                assert_eq!(cutter.finish().unwrap(), Checksum::of(&cells));
                for table in ["blocks", "positions", "row_checksums", "frames"] {
                    let dump = |c: &Connection| -> Vec<String> {
                        let mut s = c.prepare(&format!("SELECT * FROM {table}")).unwrap();
                        let n = s.column_count();
                        s.query_map([], |r| {
                            Ok((0..n)
                                .map(|k| format!("{:?}", r.get_ref(k).unwrap()))
                                .collect::<Vec<_>>()
                                .join(","))
                        })
                        .unwrap()
                        .map(Result::unwrap)
                        .collect()
                    };
                    assert_eq!(dump(&cut), dump(&whole), "{layout:?} in pieces of {piece}: {table}");
                }
            }
        }
        // Two-bit codes: the blocks of the one-process writer, whose class
        // checksum is that of the block checksums.
        let codes: Vec<u8> = (0..index.len()).map(|i| (i * 7 % 11 % 4) as u8).collect();
        let mut table = Mod3Table::new(index.len());
        for (i, &c) in codes.iter().enumerate() {
            table.set(i as u64, (c < 3).then_some(c));
        }
        let solution = TwoBitSolution {
            classes: vec![ClassSolution {
                class: spec.class,
                dense: spec.index,
                index: index.clone(),
                table: ClassTable::Own(table),
                stats: ClassStats::default(),
            }],
            elapsed: std::time::Duration::ZERO,
        };
        let whole = Connection::open_in_memory().unwrap();
        whole.execute_batch(SCHEMA).unwrap();
        let expected = residues::write_class(&whole, &solution, 0).unwrap();
        let ClassTable::Own(table) = &solution.classes[0].table else {
            unreachable!()
        };
        let packed: Vec<u8> = (0..index.white_sets())
            .flat_map(|r| table.pack_range(index.block(r)))
            .collect();
        for piece in [1, 7, 1000, packed.len()] {
            let cut = Connection::open_in_memory().unwrap();
            cut.execute_batch(SCHEMA).unwrap();
            let mut cutter = Cutter::new(&cut, spec, &index, Layout::Residues).unwrap();
            for chunk in packed.chunks(piece) {
                cutter.take(chunk).unwrap();
            }
            assert_eq!(cutter.finish().unwrap(), expected, "in pieces of {piece}");
            let dump = |c: &Connection| -> Vec<(i64, i64, Vec<u8>, i64)> {
                let mut s = c.prepare("SELECT class, white, data, checksum FROM blocks").unwrap();
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            };
            assert_eq!(dump(&cut), dump(&whole), "residues in pieces of {piece}");
        }
        // A packed block must be padded with 3, and its blocks must all come.
        let odd = (0..index.white_sets())
            .find(|&r| packed_len(&index, r) * 4 != index.block(r).end - index.block(r).start)
            .expect("a block of a length not a multiple of 4");
        let before: u64 = (0..odd).map(|r| packed_len(&index, r)).sum();
        let last = (before + packed_len(&index, odd) - 1) as usize;
        let mut unpadded = packed.clone();
        unpadded[last] &= 0x3f;
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let mut cutter = Cutter::new(&conn, spec, &index, Layout::Residues).unwrap();
        assert!(matches!(cutter.take(&unpadded), Err(Error::Exchange(_))));
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let mut cutter = Cutter::new(&conn, spec, &index, Layout::Residues).unwrap();
        cutter.take(&packed[..last]).unwrap();
        assert!(matches!(cutter.finish(), Err(Error::Exchange(_))));
        // Too many or too few cells are refused.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        let mut cutter = Cutter::new(&conn, spec, &index, Layout::Blocks).unwrap();
        cutter.take(&cells[..10]).unwrap();
        assert!(matches!(cutter.finish(), Err(Error::Exchange(_))));
        let mut cutter = Cutter::new(&conn, spec, &index, Layout::Blocks).unwrap();
        assert!(cutter.take(&vec![0; cells.len() + 1]).is_err());
    }

    /// The bytes block `r` of `index` takes packed.
    fn packed_len(index: &TightIndex, r: u64) -> u64 {
        (index.block(r).end - index.block(r).start).div_ceil(4)
    }
}
