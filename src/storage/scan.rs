//! Reading a class's table whole: every block in order, checked as it is
//! read, then the class checksum and the row count ([`Database::for_each_row`]);
//! a two-bit table into memory ([`Database::residues`]); and
//! [`Database::verify`], which recomputes every count from the tables.

use rayon::prelude::*;

use super::checksum::RunningChecksum;
use super::fault::Fault;
use super::frames;
use super::read::Database;
use super::residues::{PACK_BATCH, UNREACHABLE_CODE};
use super::schema::Layout;
use crate::error::{Error, Result};
use crate::index::{binomial, colex_rank, colex_unrank};
use crate::mod3::Mod3Table;
use crate::mod3::exact::{MEMO_BYTES, ResolveError, Resolver, in_windows};
use crate::remoteness::Cell;
use crate::rules::{Part, safe_cells};
use crate::solver::{ClassStats, HARDEST};
use crate::symmetry::Mirror;
use crate::tight::Subsets;
use crate::variant::ClassSpec;
use crate::variant::Width;

impl<W: Width> Database<W> {
    /// The residues of the `k`-th class in tight-index order (the order of
    /// its blocks), each block checked as it is read: the whole two-bit
    /// table in memory, a quarter of a byte per position (a mirrored class
    /// holds its source's for a while too).
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the table is damaged; [`Error::Usage`] when
    /// the database is not of the residues layout.
    pub fn residues(&self, k: usize) -> Result<Mod3Table> {
        if self.metadata.layout != Layout::Residues {
            return Err(Error::Usage(format!(
                "{} holds a byte per position, not residues",
                crate::text::path(&self.path)
            )));
        }
        if let Some((from, mirror)) = &self.mirrors[k] {
            return self.mirrored_residues(k, *from, mirror);
        }
        let mut table = Mod3Table::new(self.classes[k].stats.legal);
        let mut i = 0u64;
        self.for_each_block(k, |_, codes| {
            for &code in codes {
                // A table longer than its record fails for_each_block at the end.
                if i < table.len() {
                    table.set(i, (code != UNREACHABLE_CODE).then_some(code));
                }
                i += 1;
            }
            Ok(())
        })?;
        Ok(table)
    }

    /// The residues of the `k`-th class, the mirror image of class `from`
    /// through `mirror`, from the checked residues of `from` in memory: each
    /// block is a permutation of its image's block, built in parallel.
    fn mirrored_residues(&self, k: usize, from: usize, mirror: &Mirror) -> Result<Mod3Table> {
        let source = self.residues(from)?;
        let index_of = |spec: &ClassSpec<W>| spec.tight_index();
        let (index, source_index) = (index_of(&self.specs[k]), index_of(&self.specs[from]));
        if source.len() != source_index.len() || index.len() != self.classes[k].stats.legal {
            return Err(self.corrupt(format!(
                "has a class {} of another size than its mirror image",
                crate::board::Class::name_of(self.classes[k].class)
            )));
        }
        let mut table = Mod3Table::new(index.len());
        let white_sets = index.white_sets();
        for first in (0..white_sets).step_by(PACK_BATCH as usize) {
            let blocks: Vec<(u64, Vec<u8>)> = (first..(first + PACK_BATCH).min(white_sets))
                .into_par_iter()
                .filter_map(|r| {
                    let block = index.block(r);
                    if block.is_empty() {
                        return None;
                    }
                    let image = colex_rank(mirror.cells(colex_unrank::<u64>(r, index.white())));
                    let codes: Vec<u8> = source_index
                        .block(image)
                        .map(|i| source.get(i).unwrap_or(UNREACHABLE_CODE))
                        .collect();
                    let mut cells = vec![0u8; (block.end - block.start) as usize];
                    mirror.block(
                        index.safe(r),
                        index.black(),
                        source_index.safe(image),
                        &codes,
                        &mut cells,
                    );
                    Some((block.start, cells))
                })
                .collect();
            for (start, cells) in blocks {
                for (i, &code) in (start..).zip(&cells) {
                    table.set(i, (code != UNREACHABLE_CODE).then_some(code));
                }
            }
        }
        Ok(table)
    }

    /// Calls `f(hash, part, cell)` for every legal position of the `k`-th
    /// class in hash order, reading and checking the table block by block,
    /// then checks the whole table against its checksum and its row count.
    /// In the residues layout each cell is the exact remoteness, resolved
    /// as it goes in bounded memory (see `for_each_resolved_row`).
    ///
    /// # Errors
    ///
    /// What `f` returns, or [`Error::Corrupt`] when the table is damaged.
    pub fn for_each_row(&self, k: usize, mut f: impl FnMut(u64, Part<W>, Cell) -> Result<()>) -> Result<()> {
        if self.metadata.layout == Layout::Residues {
            return self.for_each_resolved_row(k, f);
        }
        let spec = &self.specs[k];
        let (white_count, black_count) = spec.counts();
        self.for_each_block(k, |r, cells| {
            let white = colex_unrank(r, white_count);
            let safe = safe_cells(&spec.geometry, white);
            for (black, &byte) in Subsets::new(safe, black_count).zip(cells) {
                let part = Part { white, black };
                f(spec.index.rank(part), part, Cell(byte))?;
            }
            Ok(())
        })
    }

    /// [`for_each_row`](Self::for_each_row) in the residues layout, in
    /// bounded memory: the searched class's residues (checked as they are
    /// read; for a mirrored class, those of its source), and a memo of at
    /// most [`MEMO_BYTES`]. The blocks are resolved a window at a time in
    /// parallel ([`Resolver`]) and handed to `f` in order; a position of a
    /// mirrored class is resolved as its image in the source.
    fn for_each_resolved_row(&self, k: usize, mut f: impl FnMut(u64, Part<W>, Cell) -> Result<()>) -> Result<()> {
        let (source, mirror) = match &self.mirrors[k] {
            Some((from, mirror)) => (*from, Some(mirror)),
            None => (k, None),
        };
        let index_of = |spec: &ClassSpec<W>| spec.tight_index();
        let (spec, source_spec) = (&self.specs[k], &self.specs[source]);
        let source_index = index_of(source_spec);
        let memo = MEMO_BYTES.min(8 * source_index.len().next_power_of_two());
        self.fits(k, source_index.len().div_ceil(4) + memo)?;
        let residues = self.residues(source)?;
        let max = self.classes[k].stats.max_remoteness();
        let fault = |e: ResolveError| {
            self.corrupt(format!(
                "cannot be resolved in class {}: {e}",
                crate::board::Class::name_of(self.classes[k].class)
            ))
        };
        let resolver = Resolver::new(source_spec, &source_index, &residues, max, memo).map_err(fault)?;
        let index = match mirror {
            Some(_) => index_of(spec),
            None => source_index.clone(),
        };
        let black_count = index.black();
        let cells_of = |path: &mut Vec<u64>, r: u64| -> std::result::Result<Vec<u8>, ResolveError> {
            let white = colex_unrank(r, index.white());
            Subsets::new(index.safe(r), black_count)
                .map(|black| {
                    let part = mirror.map_or(Part { white, black }, |m| m.part(Part { white, black }));
                    let i = source_index.rank(part).expect("the image of a legal position is legal");
                    resolver.cell(part, i, path).map(|c| c.0)
                })
                .collect()
        };
        in_windows(&index, (0, &|_| {}), cells_of, fault, |r, cells| {
            let white = colex_unrank(r, index.white());
            for (black, &cell) in Subsets::new(index.safe(r), black_count).zip(cells) {
                let part = Part { white, black };
                f(spec.index.rank(part), part, Cell(cell))?;
            }
            Ok(())
        })
    }

    /// Refuses, naming the class and what to do instead, a whole read of the
    /// `k`-th class that needs `need` bytes when less memory is available.
    fn fits(&self, k: usize, need: u64) -> Result<()> {
        let record = &self.classes[k];
        match crate::system::available_memory() {
            Some(available) if need > available => Err(Error::TooLarge(format!(
                "reading every position of class {} of {} needs {} of memory, only {} is available; ask for positions one at a time (query, or check --sample)",
                crate::board::Class::name_of(record.class),
                self.metadata.variant,
                crate::system::human_bytes(need),
                crate::system::human_bytes(available)
            ))),
            _ => Ok(()),
        }
    }

    /// Calls `f(white, cells)` for every non-empty block of the `k`-th class
    /// in white-set order with its checked cells (two-bit codes in the
    /// residues layout), then checks the whole table against its checksum
    /// and its row count.
    ///
    /// # Errors
    ///
    /// What `f` returns, or [`Error::Corrupt`] when the table is damaged.
    fn for_each_block(&self, k: usize, mut f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        let spec = &self.specs[k];
        let record = &self.classes[k];
        if self.metadata.layout == Layout::Frames && self.mirrors[k].is_none() {
            return self.for_each_framed_block(k, f);
        }
        let (white_count, _) = spec.counts();
        let mut checksum = RunningChecksum::default();
        let (mut positions, mut blocks) = (0u64, 0u64);
        for r in 0..binomial(spec.geometry.len() as u32, white_count) {
            let (cells, block_sum) = self.read_block_summed(k, r)?;
            if cells.is_empty() {
                continue;
            }
            match (self.metadata.layout, block_sum) {
                // The stored block's checksum, checked as it was read: the
                // class checksum is that of the block checksums in order.
                (Layout::Residues, Some(sum)) => checksum.add(&sum.signed().to_le_bytes()),
                // A mirrored class has no stored blocks; its checksum is
                // its source's, not checked here.
                (Layout::Residues, None) => {}
                (Layout::Rows | Layout::Blocks | Layout::Frames, _) => checksum.add(&cells),
            }
            positions += cells.len() as u64;
            blocks += 1;
            f(r, &cells)?;
        }
        self.check_row_count(k, positions, blocks)?;
        // A mirrored class carries its source's checksum, which the
        // source's own pass checks; each block it is derived from was
        // checked as it was read.
        let mirrored = self.mirrors[k].is_some();
        if checksum.checksum().hex() != record.checksum && !mirrored {
            return Err(self.corrupt(format!(
                "fails its checksum for class {}",
                crate::board::Class::name_of(record.class)
            )));
        }
        Ok(())
    }

    /// [`for_each_block`](Self::for_each_block) of a class of its own in
    /// the frames layout: its frames in order, each checked as it is read,
    /// tiling the class, then the class checksum (of every cell in order,
    /// as in the blocks layout) and the positions against the record.
    fn for_each_framed_block(&self, k: usize, mut f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        let spec = &self.specs[k];
        let record = &self.classes[k];
        let mut checksum = RunningChecksum::default();
        let mut positions = 0u64;
        let fault = |fault: Fault| match fault {
            Fault::Read(e) => self.read_error(e),
            Fault::Wrong(what) => self.corrupt(format!(
                "has {what} in class {}",
                crate::board::Class::name_of(record.class)
            )),
        };
        frames::for_each(&self.conn, spec, fault, |frame| {
            checksum.add(&frame.cells);
            positions += frame.cells.len() as u64;
            frame
                .blocks
                .iter()
                .try_for_each(|&(r, start, len)| f(r, &frame.cells[start..start + len]))
        })?;
        if positions != record.stats.legal {
            return Err(self.corrupt(format!(
                "has {positions} positions in class {}, where {} belong",
                record.class, record.stats.legal
            )));
        }
        if checksum.checksum().hex() != record.checksum {
            return Err(self.corrupt(format!(
                "fails its checksum for class {}",
                crate::board::Class::name_of(record.class)
            )));
        }
        Ok(())
    }

    /// Checks that the table of the `k`-th class holds as many rows as a
    /// read of it found `positions` in `blocks`, and as many positions as
    /// its record says.
    fn check_row_count(&self, k: usize, positions: u64, blocks: u64) -> Result<()> {
        let record = &self.classes[k];
        let sql = match self.metadata.layout {
            Layout::Rows => "SELECT count(*) FROM positions WHERE class = ?1",
            Layout::Blocks | Layout::Residues => "SELECT count(*) FROM blocks WHERE class = ?1",
            Layout::Frames => "SELECT count(*) FROM frames WHERE class = ?1",
        };
        let stored: i64 = self
            .conn
            .query_row(sql, [record.class as i64], |r| r.get(0))
            .map_err(|e| self.read_error(e))?;
        let expected = match self.metadata.layout {
            // A mirrored class keeps no rows or blocks of its own.
            _ if self.mirrors[k].is_some() => 0,
            Layout::Rows => positions,
            Layout::Blocks | Layout::Residues => blocks,
            // Only a mirrored class of this layout is counted here.
            Layout::Frames => 0,
        };
        if stored as u64 != expected || positions != record.stats.legal {
            return Err(self.corrupt(format!(
                "has {stored} rows in class {}, where {expected} belong",
                record.class
            )));
        }
        Ok(())
    }

    /// Reads every class's table, checks each block and the whole table
    /// against their checksums, and recomputes every count, histogram and
    /// hardest position from it: a full read, so done before trusting a file
    /// for a whole export or before `solve` keeps it, not on every lookup.
    /// In the residues layout it counts the positions of each residue
    /// against the histogram's layers of that residue, and the hardest
    /// positions were checked for the largest remoteness's residue when the
    /// file was opened; `bishops check` proves such a table whole.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when a table is damaged or disagrees with its
    /// class record.
    pub fn verify(&self) -> Result<()> {
        (0..self.classes.len()).try_for_each(|k| self.verify_class(k))
    }

    /// [`verify`](Self::verify) of the `k`-th class.
    fn verify_class(&self, k: usize) -> Result<()> {
        let record = &self.classes[k];
        let residues = self.metadata.layout == Layout::Residues;
        if self.mirrors[k].is_some() {
            // A mirrored class carries its source's checksum.
            if record.checksum != self.classes[0].checksum {
                return Err(self.corrupt(format!(
                    "fails its checksum for class {}",
                    crate::board::Class::name_of(record.class)
                )));
            }
            // Read through its source, whose table is verified in full,
            // with the same counts (checked when the file was opened).
            // A byte table's is still derived and counted below.
            if residues {
                return Ok(());
            }
        }
        let (counts, hardest) = self.count_class(k)?;
        let bad = || {
            self.corrupt(format!(
                "has counts for class {} that its table does not bear out",
                record.class
            ))
        };
        let agrees = if residues {
            residue_counts_agree(&record.stats, &counts)
        } else {
            byte_counts_agree(&record.stats, &counts, hardest)
        };
        if agrees { Ok(()) } else { Err(bad()) }
    }

    /// Reads the table of the `k`-th class whole, checked, and counts its
    /// cells (two-bit codes in the residues layout) by value; in a byte
    /// table, also finds its first hardest positions (at the record's
    /// largest remoteness, at most [`HARDEST`], in hash order).
    fn count_class(&self, k: usize) -> Result<([u64; 256], Vec<u64>)> {
        let spec = &self.specs[k];
        let max = self.classes[k].stats.max_remoteness().map_or(0, |r| usize::from(r.0));
        let residues = self.metadata.layout == Layout::Residues;
        let (white_count, black_count) = spec.counts();
        let mut counts = [0u64; 256];
        let mut hardest = Vec::new();
        self.for_each_block(k, |r, cells| {
            for &byte in cells {
                counts[usize::from(byte)] += 1;
            }
            if !residues && hardest.len() < HARDEST && cells.contains(&(max as u8)) {
                let white = colex_unrank(r, white_count);
                let safe = safe_cells(&spec.geometry, white);
                for (black, _) in Subsets::new(safe, black_count)
                    .zip(cells)
                    .filter(|&(_, &c)| usize::from(c) == max)
                {
                    if hardest.len() < HARDEST {
                        hardest.push(spec.index.rank(Part { white, black }));
                    }
                }
            }
            Ok(())
        })?;
        Ok((counts, hardest))
    }
}

/// Whether the two-bit codes counted in a table, `counts`, are what the
/// record `stats` says: each residue as many times as the histogram's
/// layers of that residue hold, and the unreachable positions.
fn residue_counts_agree(stats: &ClassStats, counts: &[u64; 256]) -> bool {
    let mut expected = [0u64; 4];
    for (d, &n) in stats.histogram.iter().enumerate() {
        expected[d % 3] += n;
    }
    expected[usize::from(UNREACHABLE_CODE)] = stats.legal - stats.reachable;
    counts[..4] == expected
}

/// Whether the cells counted in a byte table, `counts`, and its first
/// `hardest` positions are what the record `stats` says.
fn byte_counts_agree(stats: &ClassStats, counts: &[u64; 256], hardest: Vec<u64>) -> bool {
    let reachable = &counts[..=usize::from(Cell::MAX_REMOTENESS)];
    let top = reachable.iter().rposition(|&n| n > 0).map_or(0, |t| t + 1);
    let found = ClassStats {
        legal: counts.iter().sum(),
        reachable: reachable.iter().sum(),
        histogram: reachable[..top].to_vec(),
        hardest,
    };
    found == *stats
}
