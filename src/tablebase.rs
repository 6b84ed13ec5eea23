//! The query API: every question a front end asks about a position.
//!
//! A [`Tablebase`] opens the solved databases of one directory (solving
//! small variants on demand) and hands out a [`Table`] per variant, which
//! answers: the remoteness of a position, every legal move with its value
//! ([`Table::probe`]), the best move, an optimal line ([`Table::line`]), and
//! the judgement of a whole move sequence ([`Table::verify`]). The command
//! line, the terminal game and the web server all ask through here.
//!
//! Nothing read from a database is given out unchecked against the rules:
//! every probe checks that the remoteness is 0 exactly at the goal and
//! otherwise one more than the best of its moves' (or, unreachable, that no
//! move reaches a solvable position), and refuses to answer when it is not.
//!
//! # Examples
//!
//! ```
//! use bishops::{Position, Remoteness, Tablebase, Value};
//!
//! # let dir = std::env::temp_dir().join(format!("bishops-doc-tb-{}", std::process::id()));
//! let tablebase = Tablebase::new(&dir); // solves 5x4 on demand: it is small
//! let start: Position = "5_4_a1-a3_e1-e3".parse().unwrap();
//! let table = tablebase.table(&start, None).unwrap();
//! let probe = table.probe(&start).unwrap();
//! assert_eq!(probe.remoteness, Some(Remoteness(18)));
//! assert_eq!(probe.moves.len(), 4);
//! let best = probe.best_move().unwrap();
//! assert_eq!((best.remoteness, best.value), (Some(Remoteness(17)), Value::Better));
//!
//! let line = table.line(&start).unwrap();
//! assert_eq!(line.moves.len(), 18);
//! let verdict = table.verify(&start, &line.moves).unwrap();
//! assert!(verdict.reached_goal && verdict.optimal);
//! assert_eq!(verdict.wasted, Some(0));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::collections::HashMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use serde::Serialize;

use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::pipeline::{SolveOptions, SolvePlan};
use crate::position::{Move, Position};
use crate::remoteness::Remoteness;
use crate::rules::Part;
use crate::storage::{Database, Held, Walks, WriteLock};
use crate::text::clip;
use crate::variant::{Variant, Width};

/// A variant whose dense index has at most this many entries in all is
/// solved on the spot when its database is missing.
pub const QUICK_SOLVE_ENTRIES: u64 = 30_000_000;

/// Where a position stands.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The goal itself: remoteness 0.
    Solved,
    /// The goal can be reached.
    Solvable,
    /// Legal, but the goal cannot be reached.
    Unreachable,
}

impl Status {
    /// The status of a position of remoteness `r`.
    pub fn of(r: Option<Remoteness>) -> Status {
        match r {
            Some(Remoteness(0)) => Status::Solved,
            Some(_) => Status::Solvable,
            None => Status::Unreachable,
        }
    }

    /// The lowercase name, as JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::Solvable => "solvable",
            Status::Unreachable => "unreachable",
        }
    }
}

/// What a move does to the remoteness.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Value {
    /// It lowers the remoteness (by exactly one: moves are reversible).
    Better,
    /// It keeps the remoteness.
    Same,
    /// It raises the remoteness.
    Worse,
    /// The position cannot reach the goal, before or after.
    Unreachable,
}

impl Value {
    /// The value of a move from remoteness `before` to `after`, with the
    /// delta `after - before` when both are reachable.
    pub fn of(before: Option<Remoteness>, after: Option<Remoteness>) -> (Value, Option<i32>) {
        match (before, after) {
            (Some(a), Some(b)) => {
                let delta = i32::from(b.0) - i32::from(a.0);
                let value = match delta {
                    d if d < 0 => Value::Better,
                    0 => Value::Same,
                    _ => Value::Worse,
                };
                (value, Some(delta))
            }
            _ => (Value::Unreachable, None),
        }
    }

    /// The lowercase name, as JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            Value::Better => "better",
            Value::Same => "same",
            Value::Worse => "worse",
            Value::Unreachable => "unreachable",
        }
    }
}

/// One legal move, valued.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct MoveValue {
    /// The move.
    #[serde(rename = "move")]
    pub mv: Move,
    /// The position after it.
    pub position: Position,
    /// The remoteness after it.
    pub remoteness: Option<Remoteness>,
    /// Remoteness after minus before; `None` when unreachable.
    pub delta: Option<i32>,
    /// Better, same, worse or unreachable.
    pub value: Value,
}

/// Everything the table says of one position.
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    /// The position.
    pub position: Position,
    /// The variant's name.
    pub variant: String,
    /// The public hash, mixed radix over the classes.
    pub hash: u128,
    /// The public hash of each class part.
    pub class_hashes: Vec<u64>,
    /// Solved, solvable or unreachable.
    pub status: Status,
    /// The remoteness; `None` when unreachable.
    pub remoteness: Option<Remoteness>,
    /// The board drawn as text ([`Position::diagram`]).
    pub board: String,
    /// The squares cut out of the variant's board, which a position string
    /// does not name; left out of JSON when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holes: Vec<String>,
    /// Every legal move in move order, valued.
    pub moves: Vec<MoveValue>,
}

impl Probe {
    /// The first move (in move order) that lowers the remoteness: `None` at
    /// the goal and where the goal cannot be reached.
    pub fn best_move(&self) -> Option<&MoveValue> {
        self.moves.iter().find(|m| m.value == Value::Better)
    }
}

/// An optimal line from a position to the goal.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    /// Where the line starts.
    pub position: Position,
    /// The variant's name.
    pub variant: String,
    /// The status of the start.
    pub status: Status,
    /// The remoteness of the start, which is the line's length.
    pub remoteness: Option<Remoteness>,
    /// The moves in order: empty at the goal and when it cannot be reached.
    pub moves: Vec<Move>,
    /// The position after each move; the last is the goal.
    pub positions: Vec<Position>,
}

/// The judgement of a move sequence: [`Table::verify`].
#[derive(Clone, Debug, Serialize)]
pub struct Verification {
    /// The position the sequence starts from.
    pub position: Position,
    /// The variant's name.
    pub variant: String,
    /// The remoteness of the start.
    pub remoteness: Option<Remoteness>,
    /// Each move with the position after it, its remoteness and value.
    pub moves: Vec<MoveValue>,
    /// Whether the last position is the goal.
    pub reached_goal: bool,
    /// Whether the goal was reached in the fewest moves possible.
    pub optimal: bool,
    /// The 1-based number of the first move that did not lower the
    /// remoteness; `None` when every move did (or the goal cannot be reached).
    pub first_mistake: Option<usize>,
    /// Moves played beyond the start's remoteness; `None` unless the goal
    /// was reached.
    pub wasted: Option<u32>,
}

/// Which missing databases a [`Tablebase`] solves when asked about them,
/// and how it treats another process that is solving one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnDemand {
    /// The largest variant solved, in hash entries over all its classes
    /// (0: none is).
    pub max_entries: u64,
    /// How many variants without a file in `variants/` (standard ones,
    /// named like `6x4-full`) may be solved in the life of the
    /// `Tablebase`; `None`: any number.
    pub standard: Option<usize>,
    /// Whether to wait while another process holds a variant's write lock
    /// (it is solving it), or to refuse at once with [`Error::Busy`].
    pub wait: bool,
}

impl Default for OnDemand {
    /// What the command line does: solve any variant of at most
    /// [`QUICK_SOLVE_ENTRIES`] entries, and wait for another solver.
    fn default() -> OnDemand {
        OnDemand {
            max_entries: QUICK_SOLVE_ENTRIES,
            standard: None,
            wait: true,
        }
    }
}

/// The solved databases of one directory: the way in to every question.
///
/// Databases are opened once and kept; a missing one is solved and written
/// first when the [`OnDemand`] policy allows. A `Tablebase` may be shared
/// between threads: each variant has its own slot, so opening or solving
/// one variant never holds up questions about another.
pub struct Tablebase {
    dir: PathBuf,
    on_demand: OnDemand,
    /// Standard variants solved on demand so far (counted against
    /// `on_demand.standard`).
    standard_solved: AtomicUsize,
    notes: Box<dyn Fn(&str) + Send + Sync>,
    /// Connections opened to each database ([`Tablebase::with_connections`]).
    connections: usize,
    /// Bytes of checked blocks kept for each database
    /// ([`Tablebase::with_cache_bytes`]).
    cache_bytes: usize,
    /// One slot per variant asked about, held only to find the slot.
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

/// The most KiB of a database's file a [`Tablebase`] has SQLite keep in
/// memory (its page cache, filled as pages are read): 64 pages of 64 KiB,
/// enough for the B-trees' inner pages, which are few (an inner page
/// points to thousands of others), and the pages read lately. The blocks
/// themselves are kept, checked, in the database's own cache of blocks
/// (192 MiB at most, which holds 11x8's whole table), so SQLite need not
/// keep them too. More costs a short question: each page read into a
/// fresh slot is fresh memory to map, and a `query` of the 17x8 start took
/// 14 ms of processor time with 16 MiB here and 10 ms with 4 MiB.
const PAGE_CACHE_KIB: u32 = 4 << 10;

/// [`PAGE_CACHE_KIB`] of a pool of one connection, whose question reads
/// ahead ([`Database::read_ahead`]): 16 pages. Such a question reads each
/// page once or twice, and each slot filled is fresh memory: `query` on
/// 12x10's start took 16.3 ms with 1 MiB against 18.8 ms with 4 MiB
/// (means of 20, 3,147 page faults against 4,039), and no less with 512 KiB.
const PAGE_CACHE_KIB_ALONE: u32 = 1 << 10;

/// One variant's place in a [`Tablebase`]: its database once opened. The
/// lock is held while the database is opened or solved, by the askers of
/// this variant only.
#[derive(Default)]
struct Slot {
    database: Mutex<Option<Arc<Pools>>>,
}

/// The open connections to one variant's database, each checked as it was
/// opened, all sharing one memory of checked blocks
/// ([`Database::reopen`]). A question takes a connection no other question
/// is using, and waits for one when all are: as many questions about one
/// variant are answered at once as there are connections.
struct Pool<W: Word> {
    idle: Mutex<Vec<Database<W>>>,
    /// Told when a connection is given back.
    returned: Condvar,
    /// Whether it has one connection: its question then has the machine
    /// to itself and reads ahead on every core ([`Database::read_ahead`]).
    /// Where many questions are answered at once, each keeps to its own.
    alone: bool,
}

/// A variant's [`Pool`], in the word its classes are kept in.
enum Pools {
    Narrow(Pool<u64>),
    Wide(Pool<u128>),
}

impl<W: Width> Pool<W> {
    /// A pool of `database` and `size - 1` more connections to its file.
    fn open(database: Database<W>, variant: &Variant, size: usize) -> Result<Pool<W>> {
        let alone = size <= 1;
        let kib = if alone { PAGE_CACHE_KIB_ALONE } else { PAGE_CACHE_KIB };
        database.keep_pages(kib)?;
        let mut idle = Vec::with_capacity(size);
        for _ in 1..size {
            let again = database.reopen(variant)?;
            again.keep_pages(kib)?;
            idle.push(again);
        }
        idle.push(database);
        Ok(Pool {
            idle: Mutex::new(idle),
            returned: Condvar::new(),
            alone,
        })
    }

    /// A connection no one else is using, given back when the lease is
    /// dropped.
    fn take(&self) -> Lease<'_, W> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(database) = idle.pop() {
                return Lease {
                    pool: self,
                    database: Some(database),
                };
            }
            idle = self.returned.wait(idle).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// How many white sets [`Pool::hold`] reads between looks at whether the
/// memory of blocks is full and at what the others have done.
const HOLD_STEP: u64 = 1 << 12;

impl<W: Width> Pool<W> {
    /// [`Table::hold`]: every connection idle now reads its share of each
    /// class, a contiguous run of white sets (the frames of a run lie
    /// together in the file), until the classes are read or the memory of
    /// blocks is full.
    fn hold(&self, classes: usize, report: &(dyn Fn(Held) + Sync)) -> Result<Held> {
        let threads = self.idle.lock().unwrap_or_else(|e| e.into_inner()).len().max(1) as u64;
        let total = std::sync::Mutex::new(Held::default());
        for k in 0..classes {
            let whites = self.take().white_sets(k);
            let share = whites.div_ceil(threads);
            std::thread::scope(|scope| {
                let runs: Vec<_> = (0..threads)
                    .map(|t| {
                        let total = &total;
                        scope.spawn(move || -> Result<()> {
                            let db = self.take();
                            let (start, end) = ((t * share).min(whites), ((t + 1) * share).min(whites));
                            let mut at = start;
                            while at < end {
                                if total.lock().unwrap_or_else(|e| e.into_inner()).full {
                                    break;
                                }
                                let step = db.hold(k, at..(at + HOLD_STEP).min(end))?;
                                at += HOLD_STEP;
                                let mut sum = total.lock().unwrap_or_else(|e| e.into_inner());
                                *sum = sum.and(step);
                                report(*sum);
                            }
                            Ok(())
                        })
                    })
                    .collect();
                runs.into_iter()
                    .try_for_each(|run| run.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            })?;
        }
        Ok(total.into_inner().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A connection of a [`Pool`], taken by one question.
struct Lease<'a, W: Word> {
    pool: &'a Pool<W>,
    /// Always there until the lease is dropped.
    database: Option<Database<W>>,
}

impl<W: Word> Deref for Lease<'_, W> {
    type Target = Database<W>;

    fn deref(&self) -> &Database<W> {
        self.database
            .as_ref()
            .expect("a lease holds its database until dropped")
    }
}

impl<W: Word> Drop for Lease<'_, W> {
    fn drop(&mut self) {
        if let Some(database) = self.database.take() {
            let mut idle = self.pool.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push(database);
            self.pool.returned.notify_one();
        }
    }
}

impl std::fmt::Debug for Tablebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebase")
            .field("dir", &self.dir)
            .field("on_demand", &self.on_demand)
            .finish_non_exhaustive()
    }
}

impl Tablebase {
    /// The databases of `dir`, solving small variants on demand
    /// ([`OnDemand::default`]).
    pub fn new(dir: impl Into<PathBuf>) -> Tablebase {
        Tablebase {
            dir: dir.into(),
            on_demand: OnDemand::default(),
            standard_solved: AtomicUsize::new(0),
            notes: Box::new(|_| {}),
            connections: 1,
            cache_bytes: crate::storage::BLOCK_CACHE_BYTES,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// Opens `n` connections (at least one) to each database, so that `n`
    /// questions about one variant are answered at once, on as many
    /// threads: for a server. The connections share their memory of
    /// checked blocks; each has its own of SQLite's pages.
    #[must_use]
    pub fn with_connections(mut self, n: usize) -> Tablebase {
        self.connections = n.max(1);
        self
    }

    /// Keeps up to `bytes` of checked blocks in memory for each database
    /// (all its connections together), instead of
    /// [`BLOCK_CACHE_BYTES`](crate::storage::BLOCK_CACHE_BYTES): for a
    /// server whose questions range over a large table. Confirming a
    /// question's values reads some hundreds of blocks, and a block kept is
    /// not read and decompressed again. The memory is taken only as blocks
    /// are read.
    #[must_use]
    pub fn with_cache_bytes(mut self, bytes: usize) -> Tablebase {
        self.cache_bytes = bytes;
        self
    }

    /// Solves on demand only variants of at most `entries` hash entries (0:
    /// never).
    #[must_use]
    pub fn with_quick_solve(mut self, entries: u64) -> Tablebase {
        self.on_demand.max_entries = entries;
        self
    }

    /// Solves on demand what `policy` allows.
    #[must_use]
    pub fn with_on_demand(mut self, policy: OnDemand) -> Tablebase {
        self.on_demand = policy;
        self
    }

    /// Tells `notes` what happens besides answering (a solve on demand).
    #[must_use]
    pub fn with_notes(mut self, notes: impl Fn(&str) + Send + Sync + 'static) -> Tablebase {
        self.notes = Box::new(notes);
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The table of `position`'s variant: `variant` when named, else the one
    /// its board and bishop counts choose ([`Variant::for_position`]).
    ///
    /// # Errors
    ///
    /// A [`PositionError`](crate::PositionError) when the position does not
    /// fit; [`Error::NotSolved`] when the database is missing and the
    /// [`OnDemand`] policy does not solve it; [`Error::Busy`] when another
    /// process is solving it and the policy does not wait;
    /// [`Error::Corrupt`] when it cannot be trusted.
    pub fn table(&self, position: &Position, variant: Option<&str>) -> Result<Table> {
        self.variant_table(Variant::for_position(position, variant)?)
    }

    /// The table of `variant`.
    ///
    /// # Errors
    ///
    /// As [`Tablebase::table`].
    pub fn variant_table(&self, variant: Variant) -> Result<Table> {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(slots.entry(variant.name().to_owned()).or_default())
        };
        let mut held = slot.database.lock().unwrap_or_else(|e| e.into_inner());
        let database = match held.as_ref() {
            Some(database) => Arc::clone(database),
            None => {
                let n = self.connections;
                let pool = Arc::new(if variant.is_wide() {
                    Pools::Wide(Pool::open(self.open_or_solve(&variant)?, &variant, n)?)
                } else {
                    Pools::Narrow(Pool::open(self.open_or_solve(&variant)?, &variant, n)?)
                });
                *held = Some(Arc::clone(&pool));
                pool
            }
        };
        Ok(Table { variant, database })
    }

    /// The table of `position`'s variant when its database is open already
    /// and no one is opening or solving it: what can be answered at once,
    /// without waiting for a database to open. `Ok(None)` otherwise
    /// ([`Tablebase::table`] then waits, opens or solves).
    ///
    /// # Errors
    ///
    /// A [`PositionError`](crate::PositionError) when the position does not
    /// fit.
    pub fn open_table(&self, position: &Position, variant: Option<&str>) -> Result<Option<Table>> {
        let variant = Variant::for_position(position, variant)?;
        let slot = {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.get(variant.name()).map(Arc::clone)
        };
        let Some(slot) = slot else { return Ok(None) };
        let held = match slot.database.try_lock() {
            Ok(held) => held,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(None),
        };
        Ok(held.as_ref().map(|database| Table {
            variant,
            database: Arc::clone(database),
        }))
    }

    /// Remoteness and every move of `position`: [`Table::probe`] on the
    /// position's own variant.
    ///
    /// # Errors
    ///
    /// As [`Tablebase::table`] and [`Table::probe`].
    pub fn probe(&self, position: &Position, variant: Option<&str>) -> Result<Probe> {
        self.table(position, variant)?.probe(position)
    }

    fn open_or_solve<W: Width>(&self, variant: &Variant) -> Result<Database<W>> {
        let not_solved = match Database::open_with_cache(&self.dir, variant, self.cache_bytes) {
            Err(e @ Error::NotSolved { .. }) => e,
            other => return other,
        };
        self.may_solve(variant).map_err(|why| match not_solved {
            Error::NotSolved { variant, path, .. } => Error::NotSolved {
                variant,
                path,
                why: Some(why),
            },
            other => other,
        })?;
        let name = variant.name();
        let _lock = if self.on_demand.wait {
            WriteLock::acquire(&self.dir, name, &mut || {
                (self.notes)(&format!(
                    "another process is solving {name} into {}; waiting for it",
                    crate::text::path(&self.dir)
                ));
            })?
        } else {
            WriteLock::try_acquire(&self.dir, name)?.ok_or_else(|| Error::solving_elsewhere(name))?
        };
        // Whoever held the lock may have solved it meanwhile.
        if let Ok(database) = Database::open_with_cache(&self.dir, variant, self.cache_bytes) {
            return Ok(database);
        }
        let standard = !variant.is_named();
        if standard && !self.reserve_standard() {
            return Err(Error::NotSolved {
                variant: name.to_owned(),
                path: crate::storage::path(&self.dir, name),
                why: Some(self.policy()),
            });
        }
        (self.notes)(&format!("variant {name} is not solved yet; solving it now"));
        let solved = SolvePlan::new(variant, SolveOptions::default()).and_then(|plan| plan.run(&self.dir, &mut |_| {}));
        let done = match solved {
            Ok(done) => done,
            Err(e) => {
                if standard {
                    self.standard_solved.fetch_sub(1, Ordering::Relaxed);
                }
                return Err(e);
            }
        };
        (self.notes)(&format!(
            "solved {name} in {:.3} s, wrote {}",
            done.solve_seconds,
            crate::text::path(&done.path)
        ));
        Database::open_with_cache(&self.dir, variant, self.cache_bytes)
    }

    /// Whether the policy lets `variant` be solved on demand, and if not,
    /// why (one phrase, for the refusal).
    fn may_solve(&self, variant: &Variant) -> std::result::Result<(), String> {
        let entries = variant.hash_sizes().iter().fold(0u128, |a, &b| a.saturating_add(b));
        let standard_allowed = self.on_demand.standard != Some(0);
        if entries > u128::from(self.on_demand.max_entries) || (!variant.is_named() && !standard_allowed) {
            return Err(self.policy());
        }
        Ok(())
    }

    /// Counts one more standard variant solved on demand, if the policy
    /// allows one more.
    fn reserve_standard(&self) -> bool {
        let Some(max) = self.on_demand.standard else {
            self.standard_solved.fetch_add(1, Ordering::Relaxed);
            return true;
        };
        self.standard_solved
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < max).then_some(n + 1))
            .is_ok()
    }

    /// What is solved on demand here, in words.
    fn policy(&self) -> String {
        let OnDemand {
            max_entries, standard, ..
        } = self.on_demand;
        if max_entries == 0 {
            return "nothing is solved on demand here".into();
        }
        let which = match standard {
            Some(0) => "only named variants",
            Some(_) => "named variants and a few others",
            None => "variants",
        };
        format!("{which} of at most {max_entries} hash entries are solved on demand here")
    }
}

/// One variant's solved database: answers about its positions.
///
/// Every method takes a position of this variant; check a position from
/// outside with [`Variant::check`] (which [`Tablebase::table`] does). A
/// position whose string names only the board's size is put on the
/// variant's board, holes and all ([`Variant::placed`]), before anything is
/// looked up.
#[derive(Clone)]
pub struct Table {
    variant: Variant,
    database: Arc<Pools>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("variant", &self.variant.name()).finish()
    }
}

/// The remoteness of each class part whose class hashes are `hashes`, as
/// `db` stores them.
fn stored_remoteness<W: Width>(db: &Database<W>, hashes: &[u64]) -> Result<Vec<Option<Remoteness>>> {
    hashes
        .iter()
        .enumerate()
        .map(|(k, &h)| db.remoteness_of(k, h))
        .collect()
}

impl Table {
    /// The variant.
    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    /// Reads the whole table into the memory of checked blocks its
    /// database keeps ([`Tablebase::with_cache_bytes`]), as far as that
    /// memory allows, on all its connections at once, each block read and
    /// checked as a question reads it. Questions that range over the whole
    /// table, each holding its values against some hundreds of blocks,
    /// then read nothing from the file. `report` is told the running
    /// counts as the work goes. Blocks already held are skipped; nothing
    /// held is pushed out. In the `frames` layout a block is held in the
    /// bits its values need (3.05 a position on 11x8, 3.21 on 11x10), in
    /// the others as it is stored.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("bishops-doc-hold-{}", std::process::id()));
    /// let tablebase = bishops::Tablebase::new(&dir); // solves 5x4 on demand
    /// let table = tablebase.variant_table(bishops::Variant::named("5x4").unwrap()).unwrap();
    /// let held = table.hold(&|_| {}).unwrap();
    /// assert!(held.blocks > 0 && !held.full);
    /// assert_eq!(table.hold(&|_| {}).unwrap().blocks, 0, "held already");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when a block cannot be read or fails its checks.
    pub fn hold(&self, report: &(dyn Fn(Held) + Sync)) -> Result<Held> {
        let classes = self.variant.class_count();
        match &*self.database {
            Pools::Narrow(pool) => pool.hold(classes, report),
            Pools::Wide(pool) => pool.hold(classes, report),
        }
    }

    /// The remoteness of each class part of the position whose class
    /// hashes are `hashes`, as stored.
    fn class_remoteness(&self, hashes: &[u64]) -> Result<Vec<Option<Remoteness>>> {
        match &*self.database {
            Pools::Narrow(pool) => stored_remoteness(&pool.take(), hashes),
            Pools::Wide(pool) => stored_remoteness(&pool.take(), hashes),
        }
    }

    /// The remoteness of `position`; `None` when it cannot reach the goal.
    /// A single lookup per class: use [`Table::probe`] for an answer checked
    /// against the position's moves.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the database cannot be read or has no entry
    /// for the position.
    pub fn remoteness(&self, position: &Position) -> Result<Option<Remoteness>> {
        let position = &*self.variant.placed(position)?;
        Ok(total(&self.class_remoteness(&self.variant.class_hashes(position))?))
    }

    /// The remoteness and every legal move of `position`, each valued, checked
    /// against the rules before it is given out.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the database cannot be read, or when what it
    /// says contradicts the rules (the remoteness is not 0 exactly at the
    /// goal and otherwise one more than the best move's).
    pub fn probe(&self, position: &Position) -> Result<Probe> {
        Ok(self.probe_known(&*self.variant.placed(position)?, None)?.0)
    }

    /// [`Table::probe`], given the remoteness of each class part when it is
    /// known already (from the probe of a neighbour); also gives each move's
    /// class parts, for the next probe along a line. In a two-bit table a
    /// part's remoteness takes a descent to the goal, and a neighbour's one
    /// lookup once it is known.
    fn probe_known(&self, position: &Position, known: Option<Vec<Option<Remoteness>>>) -> Result<(Probe, MoveParts)> {
        match &*self.database {
            Pools::Narrow(pool) => self.probe_in((&pool.take(), pool.alone), position, known),
            Pools::Wide(pool) => self.probe_in((&pool.take(), pool.alone), position, known),
        }
    }

    /// [`Table::probe_known`] by the connection `db`, reading ahead when
    /// it is its pool's only one (`alone`).
    fn probe_in<W: Width>(
        &self,
        (db, alone): (&Database<W>, bool),
        position: &Position,
        known: Option<Vec<Option<Remoteness>>>,
    ) -> Result<(Probe, MoveParts)> {
        let hashes = self.variant.class_hashes(position);
        // What the descents of this probe learn, in the residues layout.
        let mut walks = Walks::default();
        let specs = self.variant.specs::<W>();
        let here: Vec<Part<W>> = specs.iter().map(|spec| position.part(&spec.geometry)).collect();
        if alone {
            db.read_ahead(&here);
        }
        let parts = match known {
            Some(parts) => parts,
            None => (here.iter().enumerate())
                .map(|(k, &part)| db.value(k, part, &mut walks))
                .collect::<Result<_>>()?,
        };
        let remoteness = total(&parts);
        // Every value shown is confirmed by the rules around it: the
        // position's in each class, and each move's.
        for (k, &part) in here.iter().enumerate() {
            db.confirm(k, part, parts[k], &mut walks)?;
        }
        // The moves with the classes' own geometries, built with the
        // variant, each with its class and part.
        let by_class: Vec<_> = (specs.iter().zip(&here))
            .map(|(spec, &part)| (&spec.geometry, part))
            .collect();
        let each = Position::moves_of(position.board(), &by_class);
        let mut moves = Vec::with_capacity(each.len());
        let mut changed = Vec::with_capacity(each.len());
        for (mv, k, part, after) in each {
            // A move changes one class: only that part is looked up again.
            let after_part = db.value_beside(k, part, parts[k])?;
            db.confirm(k, part, after_part, &mut walks)?;
            let r = total_with(&parts, k, after_part);
            let (value, delta) = Value::of(remoteness, r);
            moves.push(MoveValue {
                mv,
                position: after,
                remoteness: r,
                delta,
                value,
            });
            changed.push((k, after_part));
        }
        let probe = Probe {
            position: position.clone(),
            variant: self.variant.name().to_owned(),
            hash: self.variant.hash(position),
            class_hashes: hashes,
            status: Status::of(remoteness),
            remoteness,
            board: position.diagram(),
            holes: position.board().holes().map(|sq| sq.to_string()).collect(),
            moves,
        };
        if let Some(problem) = self.contradiction(&probe) {
            return Err(db.corrupt(problem));
        }
        Ok((probe, MoveParts { parts, changed }))
    }

    /// What is wrong with `probe` by the rules, if anything.
    fn contradiction(&self, probe: &Probe) -> Option<String> {
        let at_goal = probe.position == self.variant.goal();
        let best = probe.moves.iter().filter_map(|m| m.remoteness).min();
        let position = &probe.position;
        match probe.remoteness {
            Some(Remoteness(0)) if !at_goal => Some(format!("gives {position} remoteness 0, but it is not the goal")),
            Some(r) if at_goal && r.0 != 0 => Some(format!("gives the goal {position} remoteness {r}")),
            Some(Remoteness(0)) => None,
            Some(r) => match best {
                Some(b) if b.0 + 1 == r.0 => None,
                Some(b) => Some(format!(
                    "gives {position} remoteness {r}, but its best move leads to {b}"
                )),
                None => Some(format!("gives {position} remoteness {r}, but no move reaches the goal")),
            },
            None if at_goal => Some(format!("gives the goal {position} no remoteness")),
            None => best.map(|b| format!("gives {position} no remoteness, but a move leads to remoteness {b}")),
        }
    }

    /// The best move of `position`: the first, in move order, that lowers the
    /// remoteness; `None` at the goal and where the goal cannot be reached.
    ///
    /// # Errors
    ///
    /// As [`Table::probe`].
    pub fn best_move(&self, position: &Position) -> Result<Option<MoveValue>> {
        Ok(self.probe(position)?.best_move().cloned())
    }

    /// An optimal line from `position` to the goal, each step checked as
    /// [`Table::probe`] checks.
    ///
    /// # Errors
    ///
    /// As [`Table::probe`].
    pub fn line(&self, position: &Position) -> Result<Line> {
        let position = &*self.variant.placed(position)?;
        let (mut probe, mut parts) = self.probe_known(position, None)?;
        let mut line = Line {
            position: position.clone(),
            variant: self.variant.name().to_owned(),
            status: probe.status,
            remoteness: probe.remoteness,
            moves: Vec::new(),
            positions: Vec::new(),
        };
        while let Some(best) = probe.best_move() {
            let i = probe
                .moves
                .iter()
                .position(|m| m.mv == best.mv)
                .expect("the best move is a move");
            line.moves.push(best.mv);
            line.positions.push(best.position.clone());
            (probe, parts) = self.probe_known(&best.position, Some(parts.after(i)))?;
        }
        Ok(line)
    }

    /// Plays `moves` from `position` and judges them: each move's value, and
    /// whether the goal was reached, optimally, where ground was first lost
    /// and how many moves were wasted.
    ///
    /// # Errors
    ///
    /// [`Error::IllegalMove`] naming the first move that is not legal in its
    /// position (nothing after it is judged); as [`Table::probe`].
    pub fn verify(&self, position: &Position, moves: &[Move]) -> Result<Verification> {
        let written: Vec<String> = moves.iter().map(Move::to_string).collect();
        self.verify_written(position, &written)
    }

    /// [`Table::verify`] of moves as people write them (`a1-b2` or `a1b2`):
    /// a move that does not parse is refused at its turn, like an illegal one.
    ///
    /// # Errors
    ///
    /// As [`Table::verify`].
    pub fn verify_written(&self, position: &Position, moves: &[impl AsRef<str>]) -> Result<Verification> {
        let position = &*self.variant.placed(position)?;
        let (start, mut parts) = self.probe_known(position, None)?;
        let mut verdict = Verification {
            position: position.clone(),
            variant: self.variant.name().to_owned(),
            remoteness: start.remoteness,
            moves: Vec::with_capacity(moves.len()),
            reached_goal: false,
            optimal: false,
            first_mistake: None,
            wasted: None,
        };
        let mut here = start;
        for (i, written) in moves.iter().enumerate() {
            let written = written.as_ref();
            let refuse = |reason: String| Error::IllegalMove {
                number: i + 1,
                mv: clip(written, 24),
                reason,
            };
            let mv: Move = written
                .parse()
                .map_err(|_| refuse("it is not a move: write it like `a1-b2`".into()))?;
            let after = here.position.try_play(mv).map_err(|e| refuse(e.to_string()))?;
            let played = here
                .moves
                .iter()
                .position(|m| m.mv == mv)
                .expect("a legal move is among the moves");
            let next;
            (next, parts) = self.probe_known(&after, Some(parts.after(played)))?;
            let (value, delta) = Value::of(here.remoteness, next.remoteness);
            if verdict.first_mistake.is_none() && here.remoteness.is_some() && value != Value::Better {
                verdict.first_mistake = Some(i + 1);
            }
            verdict.moves.push(MoveValue {
                mv,
                position: after,
                remoteness: next.remoteness,
                delta,
                value,
            });
            here = next;
        }
        verdict.reached_goal = here.remoteness == Some(Remoteness(0));
        if verdict.reached_goal {
            let best = u32::from(verdict.remoteness.map_or(0, |r| r.0));
            let wasted = (moves.len() as u32).saturating_sub(best);
            verdict.wasted = Some(wasted);
            verdict.optimal = wasted == 0;
        }
        Ok(verdict)
    }
}

/// The sum of the class parts' remoteness; `None` when any is unreachable.
fn total(parts: &[Option<Remoteness>]) -> Option<Remoteness> {
    sum_of(parts.iter().copied())
}

/// [`total`] of `parts` with class `k`'s part valued `value` instead.
fn total_with(parts: &[Option<Remoteness>], k: usize, value: Option<Remoteness>) -> Option<Remoteness> {
    sum_of(parts.iter().enumerate().map(|(j, &r)| if j == k { value } else { r }))
}

/// The sum of `values`; `None` when any is unreachable.
fn sum_of(values: impl IntoIterator<Item = Option<Remoteness>>) -> Option<Remoteness> {
    values.into_iter().try_fold(Remoteness(0), |sum, r| Some(sum + r?))
}

/// The class parts' remoteness after each move of a probe, for the next
/// probe along a line: a move changes one class's part, so each is kept
/// as that class and its new value beside the position's parts, not as a
/// list of its own (a server's question has some fifty moves).
struct MoveParts {
    /// The position's parts.
    parts: Vec<Option<Remoteness>>,
    /// For each move, in the probe's order, its class and that class's value.
    changed: Vec<(usize, Option<Remoteness>)>,
}

impl MoveParts {
    /// The parts after move `i`.
    fn after(&self, i: usize) -> Vec<Option<Remoteness>> {
        let mut parts = self.parts.clone();
        let (k, value) = self.changed[i];
        parts[k] = value;
        parts
    }
}

/// The moves of a text written by a person: separated by whitespace or
/// newlines, `#` starting a comment to the end of its line.
///
/// ```
/// let moves = bishops::tablebase::split_moves("a3-b2 # first\n\n e1d2  # second\n");
/// assert_eq!(moves, ["a3-b2", "e1d2"]);
/// ```
pub fn split_moves(text: &str) -> Vec<&str> {
    moves_in(text).collect()
}

/// The moves of a text, as [`split_moves`] finds them, one at a time: so a
/// text can be counted before anything is kept of it.
///
/// ```
/// assert_eq!(bishops::tablebase::moves_in("a3-b2 e1d2 # e1-b4").count(), 2);
/// ```
pub fn moves_in(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|line| line.split_once('#').map_or(line, |(code, _)| code))
        .flat_map(str::split_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bishops-tablebase-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// Another connection to an open database is refused once another
    /// file has been written in its place: a pool never mixes two tables.
    #[test]
    fn a_file_replaced_while_open_is_not_reopened() {
        let (one, other) = (scratch("reopen-one"), scratch("reopen-other"));
        let variant = Variant::named("5x4").unwrap();
        for (dir, method) in [
            (&one, crate::solver::Method::Tight),
            (&other, crate::solver::Method::TwoBit),
        ] {
            let options = SolveOptions {
                method: Some(method),
                ..SolveOptions::default()
            };
            SolvePlan::new(&variant, options)
                .unwrap()
                .run(dir, &mut |_| {})
                .unwrap();
        }
        let database = Database::open(&one, &variant).unwrap();
        assert!(database.reopen(&variant).is_ok());
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let answers = |db: &Database| -> Vec<_> {
            (0..index.len())
                .map(|i| db.remoteness_of(0, index.to_hash(i)).unwrap())
                .collect()
        };
        let before = answers(&database);
        // Written beside it and renamed into place, as a solve does.
        let file = crate::storage::path(&one, "5x4");
        let beside = one.join("replacement");
        std::fs::copy(crate::storage::path(&other, "5x4"), &beside).unwrap();
        std::fs::rename(&beside, &file).unwrap();
        match database.reopen(&variant) {
            Err(Error::Corrupt { problem, .. }) => assert!(problem.contains("replaced"), "{problem}"),
            other => panic!("a replaced file was reopened: {other:?}"),
        }
        // And the open one still answers from its own file alone.
        assert_eq!(answers(&database), before);
        for dir in [one, other] {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn solving_one_variant_holds_up_no_other() {
        let dir = scratch("slots");
        let tablebase = Tablebase::new(&dir);
        let start: Position = "5_4_a1-a3_e1-e3".parse().unwrap();
        tablebase.table(&start, None).unwrap();
        let solved = AtomicBool::new(false);
        std::thread::scope(|scope| {
            // A variant that takes a while to solve on demand…
            scope.spawn(|| {
                tablebase.variant_table(Variant::named("9x6-a1").unwrap()).unwrap();
                solved.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(100));
            // …while the open one answers at once, many times over.
            for _ in 0..20 {
                let probe = tablebase.probe(&start, None).unwrap();
                assert_eq!(probe.remoteness, Some(Remoteness(18)));
            }
            assert!(!solved.load(Ordering::SeqCst), "9x6-a1 was solved before 5x4 answered");
        });
        assert!(solved.load(Ordering::SeqCst));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `len` positions of a walk from the start of `variant`, each move
    /// picked pseudo-randomly from `seed`.
    fn walk(variant: &Variant, len: usize, seed: u64) -> Vec<Position> {
        let mut positions = vec![variant.start().clone()];
        let mut state = seed;
        while positions.len() < len {
            let moves = positions.last().unwrap().moves();
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            positions.push(moves[(state >> 33) as usize % moves.len()].1.clone());
        }
        positions
    }

    #[test]
    fn a_cache_of_any_size_answers_as_the_default_one_does() {
        let dir = scratch("cache-size");
        let variant = Variant::named("7x6").unwrap();
        let options = SolveOptions {
            layout: Some(crate::storage::Layout::Frames),
            ..SolveOptions::default()
        };
        SolvePlan::new(&variant, options)
            .unwrap()
            .run(&dir, &mut |_| {})
            .unwrap();
        let positions = walk(&variant, 200, 11);
        let answers = |tablebase: Tablebase| -> Vec<String> {
            let table = tablebase.variant_table(variant.clone()).unwrap();
            (positions.iter())
                .map(|p| serde_json::to_string(&table.probe(p).unwrap()).unwrap())
                .collect()
        };
        let expected = answers(Tablebase::new(&dir));
        // A byte: every block read pushes out the one before, and is read
        // from its frame again when next asked for.
        assert_eq!(answers(Tablebase::new(&dir).with_cache_bytes(1)), expected);
        assert_eq!(answers(Tablebase::new(&dir).with_cache_bytes(1 << 30)), expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_held_table_answers_as_one_read_from_the_file() {
        let variant = Variant::named("7x6").unwrap();
        for layout in [crate::storage::Layout::Frames, crate::storage::Layout::Blocks] {
            let dir = scratch(&format!("hold-{layout:?}"));
            let options = SolveOptions {
                layout: Some(layout),
                ..SolveOptions::default()
            };
            SolvePlan::new(&variant, options)
                .unwrap()
                .run(&dir, &mut |_| {})
                .unwrap();
            let positions = walk(&variant, 200, 5);
            let answers = |table: &Table| -> Vec<String> {
                (positions.iter())
                    .map(|p| serde_json::to_string(&table.probe(p).unwrap()).unwrap())
                    .collect()
            };
            let expected = answers(&Tablebase::new(&dir).variant_table(variant.clone()).unwrap());
            // A class stored as another's mirror image is held through it.
            let own = Database::open(&dir, &variant).unwrap();
            let legal: u64 = (variant.classes().iter().enumerate())
                .filter(|&(k, _)| own.mirror_of(k).is_none())
                .map(|(_, spec)| spec.tight_index().len())
                .sum();

            let tablebase = Tablebase::new(&dir).with_connections(3);
            let table = tablebase.variant_table(variant.clone()).unwrap();
            let reports = Mutex::new(0);
            let held = table.hold(&|_| *reports.lock().unwrap() += 1).unwrap();
            assert!(!held.full, "{layout:?}: {held:?}");
            assert_eq!(held.positions, legal, "{layout:?}");
            assert!(*reports.lock().unwrap() > 0);
            if layout == crate::storage::Layout::Frames {
                // Fewer bits a position than the byte the file's frames
                // decode to.
                assert!(held.bytes < held.positions, "{held:?}");
            }
            assert_eq!(answers(&table), expected, "{layout:?}");
            assert_eq!(table.hold(&|_| {}).unwrap(), Held::default(), "all held already");

            // A memory too small for the table (its 1,330 white sets' slots
            // take some 31 KiB) holds what fits, and answers the same.
            let small = Tablebase::new(&dir).with_cache_bytes(40 << 10);
            let table = small.variant_table(variant.clone()).unwrap();
            let held = table.hold(&|_| {}).unwrap();
            assert!(
                held.full && held.blocks > 0 && held.positions < legal,
                "{layout:?}: {held:?}"
            );
            assert_eq!(answers(&table), expected, "{layout:?}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn a_pool_of_connections_answers_as_one_connection_does() {
        let dir = scratch("pool");
        let variant = Variant::named("5x4-full").unwrap();
        let options = SolveOptions {
            method: Some(crate::solver::Method::TwoBit),
            ..SolveOptions::default()
        };
        SolvePlan::new(&variant, options)
            .unwrap()
            .run(&dir, &mut |_| {})
            .unwrap();
        let positions = walk(&variant, 300, 7);
        let answer = |table: &Table, p: &Position| serde_json::to_string(&table.probe(p).unwrap()).unwrap();
        let one = Tablebase::new(&dir).variant_table(variant.clone()).unwrap();
        let expected: Vec<String> = positions.iter().map(|p| answer(&one, p)).collect();
        let pool = Tablebase::new(&dir).with_connections(3).variant_table(variant).unwrap();
        // Four threads on three connections: at times one waits for another.
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (pool, positions, expected) = (&pool, &positions, &expected);
                scope.spawn(move || {
                    for i in (t..positions.len()).step_by(4).chain(0..positions.len()) {
                        assert_eq!(answer(pool, &positions[i]), expected[i], "{}", positions[i]);
                    }
                });
            }
        });
        // The three connections can be held at once, and are given back.
        let Pools::Narrow(connections) = &*pool.database else {
            panic!("5x4-full keeps its classes in 64-bit words");
        };
        let held: Vec<_> = (0..3).map(|_| connections.take()).collect();
        assert!(connections.idle.lock().unwrap().is_empty());
        drop(held);
        assert_eq!(connections.idle.lock().unwrap().len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_policy_says_what_it_refuses() {
        let dir = scratch("policy");
        let tablebase = Tablebase::new(&dir).with_on_demand(OnDemand {
            max_entries: 10_000,
            standard: Some(0),
            wait: false,
        });
        let refused = |name: &str| match tablebase.variant_table(Variant::named(name).unwrap()) {
            Err(Error::NotSolved { why: Some(why), .. }) => why,
            other => panic!("{name}: {other:?}"),
        };
        // Too large, though named; standard, though small.
        assert!(refused("7x6").contains("at most 10000 hash entries"));
        assert!(refused("6x4-a1").contains("only named variants"));
        assert!(!dir.join("6x4-a1.sqlite").exists());
        // Named and small: solved.
        assert!(tablebase.variant_table(Variant::named("7x4").unwrap()).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
