//! Retrograde breadth-first search: the remoteness of every position.
//!
//! Every move can be undone, so the state graph is undirected and the
//! remoteness of a position is its breadth-first distance from the goal. The
//! search starts at the goal and fills a table, layer by layer. A variant
//! with two colour classes is solved as two independent class puzzles: a
//! whole-board remoteness is the sum of the two class values.
//!
//! There is one search engine, [`search`], over the [`TightIndex`] (one
//! entry per *legal* position), on every core, by one worker or the ranks
//! of an MPI job. It fills a table of either kind:
//!
//! - a byte a position, its remoteness ([`Method::Tight`], the default);
//! - two bits a position, its remoteness mod 3 ([`Method::TwoBit`]), for
//!   boards whose byte table does not fit in memory; exact values come back
//!   by [`exact::descend`].
//!
//! [`Method::Dense`] ([`dense`]) runs over the public hash R(n, w, b), one
//! byte per hash, on one core: deliberately simple, a cross-check.
//!
//! The engine expands one position of each orbit of the class's
//! [`Symmetries`](crate::Symmetries) (found from the rules) and sets the
//! rest of the orbit with it. When the two classes are mirror images (an
//! even number of columns, see [`Mirror`]), only one is searched and the
//! other is answered through it ([`classes`]).
//!
//! | concept | where |
//! |---|---|
//! | solving a variant: the plan, the result ([`Solution`]) | this module |
//! | the class loop: every class searched or mirrored, its statistics and start | [`classes`] |
//! | the engine's entry points, and how the parts below fit | [`search`] |
//! | the layer loop: push or pull, report, too deep, save | `search::layers` |
//! | a layer on one worker: blocks in rounds, claims, images, the block summary, moving the cuts | `search::worker` |
//! | how a class is cut, the transport, whether the workers resume and save | `search::share` |
//! | what workers exchange at a layer's end: halo bits, images, counts | `search::exchange` |
//! | the halo of other workers' blocks; moving the cuts | `search::halo`, `search::recut` |
//! | what a table is to the worker: scan, claim, save, resume | `table` (`Table`) |
//! | the byte table, its bitmaps between layers | `table::bytes` |
//! | the two-bit table | `table::codes`, over [`Mod3Table`](mod3::Mod3Table) |
//! | the summary byte of each block, beside either table | [`summary`] |
//! | a position's neighbours, block by block | `kernel` |
//! | push or pull, by measured rates | `direction` ([`Rates`]) |
//! | the images of found positions, in batches | `images` |
//! | a layer's pass over the blocks on every thread (`each_block`); where a search starts, what it reports, the too-deep error | `layer` |
//! | the hardest positions kept during a search | `hardest` |
//! | a search's state at a layer boundary, and where it is saved | `boundary` ([`ShareCheckpoints`]) |
//! | a class's histogram and hardest positions | `stats` ([`ClassStats`]) |
//! | the instruction sets the inner loops are compiled for | `isa` |
//! | the simple search, a cross-check | [`dense`] |
//! | the ranks of an MPI job as the workers' transport (feature `mpi`) | `mpi` |
//! | a rank gone silent ending the MPI job, named (feature `mpi`) | `watch` |

mod boundary;
pub mod classes;
pub mod contents;
pub mod dense;
mod direction;
pub mod fold;
mod hardest;
mod images;
mod isa;
mod kernel;
mod layer;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod search;
mod stats;
pub mod summary;
mod table;
#[cfg(feature = "mpi")]
pub mod watch;

pub use boundary::{
    Coding, LayerHardest, NoCheckpoints, Save, Sealed, ShareCheckpoints, Snapshot, SnapshotRef, Stored, StoredRef,
    Wanted,
};
pub use direction::{Direction, Rates};
pub use layer::{Event, Resumed};
pub use stats::{ClassStats, HARDEST};
pub use table::disk::{DiskStats, OnDisk};
pub use table::seal::{SEAL_WORDS, Seal};

use std::borrow::Cow;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::mod3::{self, exact};

use crate::bitboard::Word;
use crate::board::Class;
use crate::error::Result;
use crate::index::{DenseIndex, colex_rank, colex_unrank};
use crate::remoteness::{Cell, Remoteness};
use crate::symmetry::Mirror;
use crate::tight::TightIndex;
use crate::variant::{ClassSpec, Variant, Width};
use hardest::Lowest;
use search::ChannelTransport;

/// What a user should know of how this processor's searches rank black
/// sets, when it is not the obvious choice (a processor with `pext` that
/// runs it in microcode, or `BISHOPS_RANKS=tables`): one phrase for the
/// log.
///
/// # Errors
///
/// [`Error::Usage`](crate::error::Error::Usage) when `BISHOPS_RANKS` is set to
/// anything but `pext` or `tables`, or asks for `pext` where there is none.
pub fn ranks_note() -> crate::error::Result<Option<&'static str>> {
    isa::Best::detect().map(|best| best.note())
}

/// Which search fills the tables.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Method {
    /// Parallel search over the tight index of legal positions.
    #[default]
    Tight,
    /// One-core search over the dense public hash.
    Dense,
    /// Parallel search over the tight index keeping the remoteness mod 3
    /// ([`search::two_bit_with`]). Run by [`Plan::solve_two_bit`]; [`Plan::solve`]
    /// gives byte tables and runs the tight search for it.
    TwoBit,
}

impl Method {
    /// The name `--method` and the reports give it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Tight => "tight",
            Method::Dense => "dense",
            Method::TwoBit => "two-bit",
        }
    }
}

/// The tables one search filled, as a writer or a reader of its answers
/// takes them.
#[derive(Debug)]
pub enum Tables<'a, W: Word = u64, R = mod3::Mod3Table> {
    /// A byte a position, from the byte searches.
    Bytes(&'a Solution<Vec<u8>, W>),
    /// Two bits a position, from the two-bit search: in memory, or in the
    /// files a search on disk leaves ([`mod3::file::Mod3File`]).
    TwoBit(&'a Solution<R, W>),
    /// Not held in this process: handed over as they come.
    Streamed(&'a Streamed<'a>),
}

// By hand: the tables are borrowed, so they copy whatever `R` is.
impl<W: Word, R> Clone for Tables<'_, W, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W: Word, R> Copy for Tables<'_, W, R> {}

/// A pipe of a class's cells: it hands the cells of class `k`, in
/// tight-index order and in pieces of any length, to `sink`: bytes of
/// remoteness, or each block's two-bit codes packed ([`Streamed::residues`]).
pub type CellPipe<'a> = dyn FnMut(usize, &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> + 'a;

/// Tables not held in this process: every class's statistics and start
/// remoteness are known, and the cells of each searched class come through
/// a [`CellPipe`] when they are written (from the workers of a partitioned
/// search, each sending its share).
pub struct Streamed<'a> {
    /// The statistics of each class.
    pub stats: Vec<ClassStats>,
    /// For each class that is the mirror image of another: that class.
    pub mirrored: Vec<Option<usize>>,
    /// The start's remoteness in each class.
    pub starts: Vec<Option<Remoteness>>,
    /// The time the search took.
    pub elapsed: Duration,
    /// Whether the cells are the codes of the two-bit search (0 to 2, the
    /// remoteness mod 3; 3, unreachable), each block's packed four a byte
    /// as the residues layout stores them, rather than bytes of remoteness.
    pub residues: bool,
    /// Where the cells of the searched classes come from.
    pub cells: std::cell::RefCell<&'a mut CellPipe<'a>>,
}

impl std::fmt::Debug for Streamed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed")
            .field("stats", &self.stats)
            .field("mirrored", &self.mirrored)
            .field("starts", &self.starts)
            .field("residues", &self.residues)
            .finish_non_exhaustive()
    }
}

impl<'a, W: Width, R: mod3::Residues> Tables<'a, W, R> {
    /// The statistics of class `k`.
    pub fn stats(&self, k: usize) -> &'a ClassStats {
        match *self {
            Tables::Bytes(s) => &s.classes[k].stats,
            Tables::TwoBit(s) => &s.classes[k].stats,
            Tables::Streamed(s) => &s.stats[k],
        }
    }

    /// Whether class `k` is the mirror image of another and has no table
    /// of its own.
    pub fn is_mirrored(&self, k: usize) -> bool {
        match *self {
            Tables::Bytes(s) => s.classes[k].is_mirrored(),
            Tables::TwoBit(s) => s.classes[k].is_mirrored(),
            Tables::Streamed(s) => s.mirrored[k].is_some(),
        }
    }

    /// The time the search took, building the indices included.
    pub fn elapsed(&self) -> Duration {
        match *self {
            Tables::Bytes(s) => s.elapsed,
            Tables::TwoBit(s) => s.elapsed,
            Tables::Streamed(s) => s.elapsed,
        }
    }

    /// The remoteness of the start of `variant` in class `k` (its part
    /// there); `None` when it is unreachable.
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`](crate::Error::Mismatch) when a two-bit table
    /// fails the descent: no search leaves such a table, and nothing is to
    /// be written from it.
    pub fn start(&self, variant: &Variant, k: usize) -> Result<Option<Remoteness>> {
        let (spec, hash) = (&variant.specs::<W>()[k], variant.class_hashes(variant.start())[k]);
        match *self {
            Tables::Bytes(s) => Ok(s.cell(k, hash).remoteness()),
            // The start's, known before the cells come.
            Tables::Streamed(s) => Ok(s.starts[k]),
            Tables::TwoBit(s) => {
                let descent = s.descend(k, spec, spec.index.unrank(hash));
                // A table in a file that could not be read answers for
                // nothing: its failure, not the descent's.
                if let ClassTable::Own(table) = &s.classes[s.source(k)].table {
                    table.fault()?;
                }
                descent.map(|d| d.map(|d| d.remoteness)).map_err(|e| {
                    crate::error::Error::Mismatch(format!("the two-bit search left a table that fails a descent: {e}"))
                })
            }
        }
    }
}

/// Where the cells of one solved class come from: its own table `D` (bytes
/// of remoteness, or a [`Mod3Table`](mod3::Mod3Table) of two-bit codes),
/// or another class's through a mirror.
#[derive(Clone, Debug)]
pub enum ClassTable<D = Vec<u8>> {
    /// The class was searched: its table, in tight-index order (which is
    /// also public-hash order).
    Own(D),
    /// The class is the mirror image of class `from` (its place in
    /// [`Solution::classes`]) and has no table of its own: the cell of a
    /// position is that of its image under `mirror` there.
    Mirrored {
        /// The class whose table answers for this one.
        from: usize,
        /// Carries this class's cells onto those of `from`.
        mirror: Mirror,
    },
}

/// The solved table of one colour class.
#[derive(Clone, Debug)]
pub struct ClassSolution<D = Vec<u8>, W: Word = u64> {
    /// The class.
    pub class: Class,
    /// The public hash of the class.
    pub dense: DenseIndex<W>,
    /// The tight index of the class; its own table follows its order.
    pub index: TightIndex<W>,
    /// Its table, or the class whose table answers for it.
    pub table: ClassTable<D>,
    /// What the table holds: exact counts and hardest positions, whichever
    /// table the search kept.
    pub stats: ClassStats,
}

impl<D, W: Word> ClassSolution<D, W> {
    /// Whether the class is answered through the other class's mirror image.
    pub fn is_mirrored(&self) -> bool {
        matches!(self.table, ClassTable::Mirrored { .. })
    }

    /// The class's own table; `None` when mirrored.
    pub fn own(&self) -> Option<&D> {
        match &self.table {
            ClassTable::Own(table) => Some(table),
            ClassTable::Mirrored { .. } => None,
        }
    }
}

/// A solved variant: a table per class, and how long solving took. Every
/// search gives one: a byte a position (`Solution`, the default), or the
/// two-bit codes ([`TwoBitSolution`]).
#[derive(Clone, Debug)]
pub struct Solution<D = Vec<u8>, W: Word = u64> {
    /// One per class of the variant, in class order.
    pub classes: Vec<ClassSolution<D, W>>,
    /// Time spent solving, building the indices included.
    pub elapsed: Duration,
}

/// A variant solved by the two-bit search: each searched class's
/// remoteness mod 3.
pub type TwoBitSolution<W = u64> = Solution<mod3::Mod3Table, W>;

impl<D, W: Word> Solution<D, W> {
    /// The same solution with each class's own table made by `f`.
    ///
    /// # Errors
    ///
    /// The first error `f` gives.
    pub fn try_map<E, T>(
        self,
        mut f: impl FnMut(D) -> std::result::Result<T, E>,
    ) -> std::result::Result<Solution<T, W>, E> {
        let classes = self
            .classes
            .into_iter()
            .map(|class| {
                let table = match class.table {
                    ClassTable::Own(table) => ClassTable::Own(f(table)?),
                    ClassTable::Mirrored { from, mirror } => ClassTable::Mirrored { from, mirror },
                };
                Ok(ClassSolution {
                    table,
                    class: class.class,
                    dense: class.dense,
                    index: class.index,
                    stats: class.stats,
                })
            })
            .collect::<std::result::Result<_, E>>()?;
        Ok(Solution {
            classes,
            elapsed: self.elapsed,
        })
    }

    /// The class whose own table answers for class `k`: `k`, or the class
    /// it is the mirror image of.
    pub fn source(&self, k: usize) -> usize {
        match self.classes[k].table {
            ClassTable::Own(_) => k,
            ClassTable::Mirrored { from, .. } => from,
        }
    }
}

impl<W: Word> Solution<Vec<u8>, W> {
    /// The cell of public hash `hash` in class `k`: [`Cell::ILLEGAL`] when
    /// no legal position has it. A mirrored class answers through its source.
    pub fn cell(&self, k: usize, hash: u64) -> Cell {
        let class = &self.classes[k];
        let (source, i) = match &class.table {
            ClassTable::Own(_) => (class, class.index.from_hash(hash)),
            ClassTable::Mirrored { .. } if hash >= class.dense.len() => return Cell::ILLEGAL,
            ClassTable::Mirrored { from, mirror } => {
                let source = &self.classes[*from];
                (source, source.index.rank(mirror.part(class.dense.unrank(hash))))
            }
        };
        let cells = source.own().expect("a class mirrors a searched one");
        i.map_or(Cell::ILLEGAL, |i| Cell(cells[i as usize]))
    }

    /// The cells of class `k` in tight-index order: borrowed when the class
    /// has its own, built through the mirror when not (a full table: for
    /// tests and small boards).
    pub fn class_cells(&self, k: usize) -> Cow<'_, [u8]> {
        let class = &self.classes[k];
        match &class.table {
            ClassTable::Own(cells) => Cow::Borrowed(cells),
            ClassTable::Mirrored { from, mirror } => {
                Cow::Owned(derive_by_mirror(&self.classes[*from], mirror, &class.index))
            }
        }
    }
}

impl<W: Word, R: mod3::Residues> Solution<R, W> {
    /// The remoteness mod 3 of `part` in class `k`, `None` when it is
    /// unreachable or illegal.
    pub fn residue(&self, k: usize, part: crate::rules::Part<W>) -> Option<u8> {
        let class = &self.classes[k];
        match &class.table {
            ClassTable::Own(table) => table.get(class.index.rank(part)?),
            ClassTable::Mirrored { from, mirror } => self.residue(*from, mirror.part(part)),
        }
    }

    /// The exact remoteness and a best move of `part`, a legal position of
    /// class `k`, whose spec is `spec`: see [`exact::descend`]. `None` when
    /// it is unreachable.
    ///
    /// # Errors
    ///
    /// What the descent ran into: no search leaves such a table.
    pub fn descend(
        &self,
        k: usize,
        spec: &ClassSpec<W>,
        part: crate::rules::Part<W>,
    ) -> std::result::Result<Option<exact::Descent<W>>, exact::DescentError> {
        let max = self.classes[k].stats.max_remoteness().map_or(0, |r| r.0);
        exact::descend(&spec.geometry, spec.goal, part, max, |p| self.residue(k, p))
    }
}

/// For each class of `specs`, the earlier class it is the left-right mirror
/// image of, start included, and the verified map from its cells to that
/// class's: such a class is answered through the other, not searched.
pub fn mirrors<W: Word>(specs: &[ClassSpec<W>]) -> Vec<Option<(usize, Mirror)>> {
    specs
        .iter()
        .enumerate()
        .map(|(k, spec)| {
            specs[..k].iter().enumerate().find_map(|(j, earlier)| {
                let mirror = Mirror::left_right(&spec.geometry, &earlier.geometry)?;
                (mirror.part(spec.start) == earlier.start).then_some((j, mirror))
            })
        })
        .collect()
}

/// What a solve will do and need, worked out before it starts: the tight
/// index of each class and which class is derived by symmetry.
#[derive(Debug)]
pub struct Plan<'a, W: Word = u64> {
    variant: &'a Variant,
    method: Method,
    indices: Vec<TightIndex<W>>,
    /// For each class, the earlier class it mirrors and the verified map.
    mirrors: Vec<Option<(usize, Mirror)>>,
    /// Where a two-bit search keeps its tables when they are on disk.
    disk: Option<OnDisk>,
    started: Instant,
}

impl<'a> Plan<'a> {
    /// Plans a solve of `variant`, a variant of at most 64 squares a class,
    /// by `method`, building the tight indices: [`Plan::in_words`] in
    /// 64-bit words.
    pub fn new(variant: &'a Variant, method: Method) -> Plan<'a> {
        Plan::in_words(variant, method)
    }
}

impl<'a, W: Width> Plan<'a, W> {
    /// Plans a solve of `variant` by `method`, building the tight indices,
    /// its classes in words `W` (the word [`Variant::is_wide`] says).
    pub fn in_words(variant: &'a Variant, method: Method) -> Plan<'a, W> {
        let started = Instant::now();
        let specs = variant.specs::<W>();
        let indices = specs.iter().map(|s| s.tight_index()).collect();
        let mirrors = mirrors(specs);
        Plan {
            variant,
            method,
            indices,
            mirrors,
            disk: None,
            started,
        }
    }

    /// The same plan, whose two-bit search keeps each class's table on disk
    /// as `disk` says ([`solve_two_bit_with`](Self::solve_two_bit_with)).
    pub fn on_disk(mut self, disk: OnDisk) -> Plan<'a, W> {
        self.disk = Some(disk);
        self
    }

    /// Where the two-bit search keeps its tables, when on disk.
    pub fn disk(&self) -> Option<&OnDisk> {
        self.disk.as_ref()
    }

    /// The same plan, run by `method`.
    pub fn with_method(self, method: Method) -> Plan<'a, W> {
        Plan { method, ..self }
    }

    /// The variant the plan solves.
    pub fn variant(&self) -> &'a Variant {
        self.variant
    }

    /// The search the plan runs.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Legal positions per class.
    pub fn legal(&self) -> Vec<u64> {
        self.indices.iter().map(TightIndex::<W>::len).collect()
    }

    /// White sets (blocks of the tight index) per class.
    pub fn white_sets(&self) -> Vec<u64> {
        self.indices.iter().map(TightIndex::<W>::white_sets).collect()
    }

    /// Whether class `k` will be derived from a mirror image.
    pub fn is_mirrored(&self, k: usize) -> bool {
        self.mirrors[k].is_some()
    }

    /// The peak memory of the solve in bytes, by the planned method:
    /// [`byte_memory_bytes`](Self::byte_memory_bytes) or
    /// [`two_bit_memory_bytes`](Self::two_bit_memory_bytes).
    pub fn memory_bytes(&self) -> u64 {
        if self.method == Method::TwoBit {
            return self.two_bit_memory_bytes();
        }
        self.byte_memory_bytes(self.method)
    }

    /// The peak memory in bytes of a byte search by `method` (the tight
    /// search for [`Method::TwoBit`]): every searched class's table (they
    /// are all held until written; a mirrored class keeps none) and the
    /// index tables, plus what the search of the largest class holds besides.
    pub fn byte_memory_bytes(&self, method: Method) -> u64 {
        let tables: u64 = self.searched().map(TightIndex::<W>::len).sum();
        let index: u64 = self.indices.iter().map(TightIndex::<W>::table_bytes).sum();
        let search = match method {
            // The bitmap of the class being searched, a bit per position,
            // and its per-block summary and canonical-block flags.
            Method::Tight | Method::TwoBit => self
                .searched()
                .map(|i| i.len().div_ceil(64) * 8 + 2 * i.white_sets())
                .max()
                .unwrap_or(0),
            // The dense table of the class and its frontier.
            Method::Dense => self
                .variant
                .specs::<W>()
                .iter()
                .zip(&self.indices)
                .map(|(s, i)| s.index.len() + 8 * i.len())
                .max()
                .unwrap_or(0),
        };
        tables + index + search
    }

    /// The bytes of the two-bit tables of the searched classes: what a
    /// search on disk keeps there.
    pub fn two_bit_table_bytes(&self) -> u64 {
        self.searched().map(|i| mod3::code_words(i.len()) * 8).sum()
    }

    /// The peak memory of a two-bit solve ([`solve_two_bit`](Self::solve_two_bit))
    /// in bytes: as [`byte_memory_bytes`](Self::byte_memory_bytes) with 2
    /// bits a position, and of the class searched only the summary byte and
    /// canonical-block flag of each white set. Nothing else grows with the
    /// positions: the hardest candidates are a few lists of [`HARDEST`].
    pub fn two_bit_memory_bytes(&self) -> u64 {
        let tables = self.two_bit_table_bytes();
        let summaries = self.searched().map(|i| 2 * i.white_sets()).max().unwrap_or(0);
        let index: u64 = self.indices.iter().map(TightIndex::<W>::table_bytes).sum();
        tables + summaries + index
    }

    /// The tight index of each class searched, not mirrored.
    fn searched(&self) -> impl Iterator<Item = &TightIndex<W>> {
        self.indices
            .iter()
            .zip(&self.mirrors)
            .filter(|(_, m)| m.is_none())
            .map(|(i, _)| i)
    }

    /// Runs the solve by the two-bit search ([`search`]), whatever the
    /// planned method, telling `observe` of each step.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness does not fit a [`Remoteness`].
    pub fn solve_two_bit(self, observe: &mut dyn FnMut(Event)) -> Result<TwoBitSolution<W>> {
        self.solve_two_bit_with(&mut NoCheckpoints, observe)
    }

    /// As [`solve_two_bit`](Self::solve_two_bit), with the search of each
    /// searched class resuming from and saving to `checkpoints`: the
    /// search of [`search_two_bit_shares`](Self::search_two_bit_shares) by
    /// one worker, whose share is the whole class.
    ///
    /// # Errors
    ///
    /// As [`solve_two_bit`](Self::solve_two_bit), and whatever `checkpoints`
    /// fails with.
    pub fn solve_two_bit_with(
        self,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
    ) -> Result<TwoBitSolution<W>> {
        // A variant in one process is searched as by the one worker of a
        // job whose exchanges do nothing, and says nothing of them.
        let variant = self.variant;
        if self.disk.is_some() {
            let (solution, _) = self.solve_on_disk_with(checkpoints, observe)?;
            // Asked for in memory: read whole.
            return solution.try_map(|file| file.load());
        }
        let shares =
            self.shares::<table::codes::CodeTable, _>(&mut ChannelTransport::solo(), checkpoints, false, observe)?;
        Ok(shares.into_solution(variant))
    }

    /// The two-bit search with each searched class's table on disk as
    /// [`on_disk`](Self::on_disk) said, without checkpoints: the solution,
    /// its tables left in their files ([`Mod3File`](mod3::file::Mod3File), read
    /// back a segment at a time in no more memory than the search had),
    /// and what the disk did for each class searched, in class order.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`](crate::Error::Usage) when the plan is not on disk;
    /// as [`solve_two_bit`](Self::solve_two_bit), and
    /// [`Error::Io`](crate::Error::Io) when the disk fails.
    pub fn solve_on_disk(
        self,
        observe: &mut dyn FnMut(Event),
    ) -> Result<(Solution<mod3::file::Mod3File, W>, Vec<DiskStats>)> {
        self.solve_on_disk_with(&mut NoCheckpoints, observe)
    }

    /// As [`solve_on_disk`](Self::solve_on_disk), resuming from and saving
    /// to `checkpoints`, which keep the seals of each table's file
    /// ([`Stored::Sealed`]) when [`OnDisk::kept`] says the file outlives
    /// the search, at every layer boundary.
    ///
    /// # Errors
    ///
    /// As [`solve_on_disk`](Self::solve_on_disk), and whatever
    /// `checkpoints` fails with.
    pub fn solve_on_disk_with(
        self,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
    ) -> Result<(Solution<mod3::file::Mod3File, W>, Vec<DiskStats>)> {
        if self.disk.is_none() {
            return Err(crate::error::Error::Usage(
                "this plan keeps its tables in memory".into(),
            ));
        }
        let variant = self.variant;
        let shares =
            self.shares::<table::disk::DiskTable, _>(&mut ChannelTransport::solo(), checkpoints, false, observe)?;
        let mut stats = Vec::new();
        let solution = shares.into_solution(variant).try_map(|done| {
            let (codes, disk) = done?;
            stats.push(disk);
            Ok::<_, crate::error::Error>(codes)
        })?;
        Ok((solution, stats))
    }

    /// Runs the solve, telling `observe` of each step.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`](crate::Error::TooLarge) when a table does not fit the dense method's
    /// limit or a remoteness does not fit a [`Cell`].
    pub fn solve(self, observe: &mut dyn FnMut(Event)) -> Result<Solution<Vec<u8>, W>> {
        self.solve_with(&mut NoCheckpoints, observe)
    }

    /// As [`solve`](Self::solve), with the tight search of each searched
    /// class resuming from and saving to `checkpoints` (the search of
    /// [`search_shares`](Self::search_shares) by one worker, whose share is
    /// the whole class); the dense search ignores them.
    ///
    /// # Errors
    ///
    /// As [`solve`](Self::solve), and whatever `checkpoints` fails with.
    pub fn solve_with(
        self,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
    ) -> Result<Solution<Vec<u8>, W>> {
        if self.method == Method::Dense {
            return self.solve_dense(observe);
        }
        let variant = self.variant;
        let shares =
            self.shares::<table::bytes::ByteTable, _>(&mut ChannelTransport::solo(), checkpoints, false, observe)?;
        Ok(shares.into_solution(variant))
    }

    /// Solves every class by the dense search, the simple one, a class
    /// that mirrors another through it.
    fn solve_dense(self, observe: &mut dyn FnMut(Event)) -> Result<Solution<Vec<u8>, W>> {
        let (specs, name) = (self.variant.specs::<W>(), self.variant.name());
        let mut classes: Vec<ClassSolution<Vec<u8>, W>> = Vec::with_capacity(specs.len());
        for (k, (spec, index)) in specs.iter().zip(self.indices).enumerate() {
            observe(Event::Counted {
                class: spec.class,
                legal: index.len(),
            });
            let (table, stats) = match &self.mirrors[k] {
                Some((j, mirror)) => {
                    observe(Event::Mirrored {
                        class: spec.class,
                        from: classes[*j].class,
                    });
                    let stats = mirrored_stats(&classes[*j], mirror, &spec.index);
                    let (from, mirror) = (*j, mirror.clone());
                    (ClassTable::Mirrored { from, mirror }, stats)
                }
                None => {
                    let cells = dense::search(name, spec, &index, observe)?;
                    let stats = ClassStats::of(&cells, &index);
                    (ClassTable::Own(cells), stats)
                }
            };
            classes.push(ClassSolution {
                class: spec.class,
                dense: spec.index,
                index,
                table,
                stats,
            });
        }
        Ok(Solution {
            classes,
            elapsed: self.started.elapsed(),
        })
    }
}

/// Solves every class of `variant` by the default method.
///
/// # Errors
///
/// As [`Plan::solve`].
///
/// # Examples
///
/// ```
/// use bishops::{Remoteness, Variant, solver};
///
/// let variant = Variant::named("5x4").unwrap();
/// let solution = solver::solve(&variant, &mut |_| {}).unwrap();
/// assert_eq!(solution.classes[0].stats.legal, 100);
/// let start = variant.class_hashes(variant.start())[0];
/// assert_eq!(solution.cell(0, start).remoteness(), Some(Remoteness(18)));
/// ```
pub fn solve(variant: &Variant, observe: &mut dyn FnMut(Event)) -> Result<Solution> {
    Plan::new(variant, Method::default()).solve(observe)
}

/// The statistics of a class whose positions mirror those of `source`'s
/// class by `mirror` (from this class to the source's), without building its
/// table: the counts are the source's, and the hardest positions are the
/// images of the source's positions of the largest remoteness, lowest
/// public hash (`dense`) first.
fn mirrored_stats<W: Word>(source: &ClassSolution<Vec<u8>, W>, mirror: &Mirror, dense: &DenseIndex<W>) -> ClassStats {
    let cells = source.own().expect("a class mirrors a searched one");
    let back = mirror.inverse();
    let index = &source.index;
    let hardest = match source.stats.max_remoteness() {
        Some(top) => (0..index.white_sets() as usize)
            .into_par_iter()
            .with_min_len(64)
            .map(|r| {
                let mut found = Lowest::default();
                for i in index.block(r as u64).filter(|&i| u16::from(cells[i as usize]) == top.0) {
                    found.offer(dense.rank(back.part(index.unrank(i))));
                }
                found
            })
            .reduce(Lowest::default, |a, b| a.merge(&b))
            .as_slice()
            .to_vec(),
        None => Vec::new(),
    };
    ClassStats {
        hardest,
        ..source.stats.clone()
    }
}

/// The table of a class whose positions mirror those of `source`'s class:
/// each position's remoteness is its mirror image's.
fn derive_by_mirror<W: Word>(source: &ClassSolution<Vec<u8>, W>, mirror: &Mirror, index: &TightIndex<W>) -> Vec<u8> {
    let source_cells = source.own().expect("a class mirrors a searched one");
    let mut cells = vec![0u8; index.len() as usize];
    // One slice of the table per block, so blocks fill in parallel.
    let mut blocks = Vec::with_capacity(index.white_sets() as usize);
    let mut rest = cells.as_mut_slice();
    for r in 0..index.white_sets() {
        let range = index.block(r);
        let (block, tail) = rest.split_at_mut((range.end - range.start) as usize);
        blocks.push((r, block));
        rest = tail;
    }
    blocks.into_par_iter().with_min_len(64).for_each(|(r, block)| {
        if block.is_empty() {
            return;
        }
        // Every position of the block has the same white set, and so does its image.
        let image_rank = colex_rank(mirror.cells(colex_unrank::<u64>(r, index.white())));
        let range = source.index.block(image_rank);
        mirror.block(
            index.safe(r),
            index.black(),
            source.index.safe(image_rank),
            &source_cells[range.start as usize..range.end as usize],
            block,
        );
    });
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solved(name: &str, method: Method) -> (Variant, Solution) {
        let variant = Variant::named(name).unwrap();
        let solution = Plan::new(&variant, method).solve(&mut |_| {}).unwrap();
        (variant, solution)
    }

    #[test]
    fn five_by_four() {
        for method in [Method::Tight, Method::Dense] {
            let (variant, solution) = solved("5x4", method);
            let class = &solution.classes[0];
            assert_eq!(class.stats.legal, 100);
            assert_eq!(class.stats.reachable, 100);
            assert_eq!(class.stats.histogram.iter().sum::<u64>(), 100);
            assert_eq!(class.stats.histogram[0], 1);
            let start = variant.class_hashes(variant.start())[0];
            assert_eq!(solution.cell(0, start), Cell(18));
        }
    }

    #[test]
    fn tight_and_dense_searches_agree() {
        // 6x4 has an even number of rows: no reflection; 7x5 has an odd
        // number of columns: no class mirror.
        for name in ["7x4", "7x6", "5x4-full", "7x5-full", "6x4-full", "8x6-a2"] {
            let (_, tight) = solved(name, Method::Tight);
            let (_, dense) = solved(name, Method::Dense);
            for (k, (t, d)) in tight.classes.iter().zip(&dense.classes).enumerate() {
                assert_eq!(tight.class_cells(k), dense.class_cells(k), "{name}");
                assert_eq!(t.stats, d.stats, "{name}");
            }
        }
    }

    #[test]
    fn mirrored_class_equals_a_searched_one() {
        // 5x4-full derives its a2 class; 5x4-a2 searches it.
        let (_, full) = solved("5x4-full", Method::Tight);
        assert!(full.classes[1].is_mirrored());
        let (_, odd) = solved("5x4-a2", Method::Tight);
        assert!(!odd.classes[0].is_mirrored());
        assert_eq!(full.class_cells(1), odd.class_cells(0));
        // The stats computed without the table are those of the table.
        assert_eq!(full.classes[1].stats, odd.classes[0].stats);
        assert_eq!(
            full.classes[1].stats,
            ClassStats::of(&full.class_cells(1), &full.classes[1].index)
        );
        // Every hash, legal or not, answers as the searched class does.
        for hash in 0..full.classes[1].dense.len() {
            assert_eq!(full.cell(1, hash), odd.cell(0, hash), "hash {hash}");
        }
        // 7x5 has an odd number of columns: no mirror, both searched.
        let (_, full) = solved("7x5-full", Method::Tight);
        assert!(!full.classes[1].is_mirrored());
    }

    #[test]
    fn layers_are_reported_in_order() {
        let variant = Variant::named("7x4").unwrap();
        let mut layers = Vec::new();
        solve(&variant, &mut |e| {
            if let Event::Layer { depth, found, .. } = e {
                layers.push((depth, found));
            }
        })
        .unwrap();
        assert_eq!(layers[0], (0, 1));
        assert!(layers.windows(2).all(|w| w[1].0 == w[0].0 + 1));
        assert_eq!(layers.iter().map(|l| l.1).sum::<u64>(), 972);
    }
}
