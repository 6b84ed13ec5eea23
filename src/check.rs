//! Proving a solved database correct from the rules alone, without trusting
//! the search that wrote it.
//!
//! For every position of a class (or a seeded random sample of them), the
//! check reads the stored value and the values of all its neighbours, which
//! it finds with the move rules ([`Part::for_each_move`]) and the index, and
//! asks:
//!
//! - the goal has remoteness 0, and no other position has;
//! - any other position of remoteness `r` has a neighbour of remoteness
//!   `r - 1` and none lower;
//! - an unreachable position has no neighbour that reaches the goal;
//! - the counts per remoteness equal the stored histogram (full check only).
//!
//! When every position passes, the table is the true distance to the goal,
//! by induction: following neighbours one lower from any position of value
//! `r` reaches a position of value 0, which can only be the goal, in `r`
//! moves, so the true distance is at most `r`; and along a shortest path
//! from the goal, values rise by at most one a move, so it is at least `r`.
//! A position marked unreachable that could reach the goal would, on the
//! way, neighbour a position that reaches it. A sample proves nothing, but
//! checks the same rules on the positions it draws.
//!
//! A two-bit table ([`Mod3Table`], remoteness mod 3) is checked the same
//! way, on the values its residues stand for (see [`exact`]):
//! [`check_residues`] resolves the whole class into bytes and runs the byte
//! check ([`check_cells`]) over them; [`sample_residues`] finds the value of
//! each drawn position and of its neighbours by descent, each neighbour only
//! as far as it takes to show it is not too close. Both take the table in
//! memory, wherever it came from.
//!
//! # Examples
//!
//! ```
//! use bishops::Variant;
//! use bishops::check::{self, CheckOptions};
//! use bishops::pipeline::{SolveOptions, SolvePlan};
//!
//! let dir = std::env::temp_dir().join(format!("bishops-doc-check-{}", std::process::id()));
//! let variant = Variant::named("7x4").unwrap();
//! SolvePlan::new(&variant, SolveOptions::default()).unwrap().run(&dir, &mut |_| {}).unwrap();
//! let report = check::check(&dir, &variant, CheckOptions::default(), &mut |_, _| {}).unwrap();
//! assert!(report.proof);
//! assert_eq!(report.checked, 972);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::index::{colex_unrank, sample_state, splitmix};
use crate::mod3::Mod3Table;
use crate::mod3::exact::{self, Known};
use crate::position::Position;
use crate::remoteness::{Cell, Remoteness};
use crate::rules::Part;
use crate::solver::ClassStats;
use crate::storage::{Database, Layout};
use crate::symmetry::Mirror;
use crate::system::{available_memory, human_bytes};
use crate::tight::{Subsets, TightIndex};
use crate::variant::Width;
use crate::variant::by_width;
use crate::variant::{ClassSpec, Variant};

/// What to check.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Check this many random positions per class instead of every one.
    pub sample: Option<u64>,
    /// The seed of the sample.
    pub seed: u64,
}

/// What a check found: everything it checked passed, or it returned an error
/// naming the first position that did not.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The variant.
    pub variant: String,
    /// The database checked.
    pub path: PathBuf,
    /// `full` or `sample`.
    pub mode: &'static str,
    /// The seed of a sample.
    pub seed: Option<u64>,
    /// Positions checked, all classes.
    pub checked: u64,
    /// Legal positions, all classes.
    pub legal: u64,
    /// True when every position was checked, which proves the table.
    pub proof: bool,
    /// Seconds the check took.
    pub seconds: f64,
    /// Per class.
    pub classes: Vec<ClassCheck>,
}

/// What a check found in one class.
#[derive(Clone, Debug, Serialize)]
pub struct ClassCheck {
    /// The class number (0: a1's class, 1: a2's).
    pub class: usize,
    /// The class's name: `a1` or `a2`, the square that names it.
    pub class_name: &'static str,
    /// Legal positions of the class.
    pub legal: u64,
    /// Positions checked.
    pub checked: u64,
    /// Positions per remoteness, counted by the check (full check only).
    pub histogram: Vec<u64>,
}

/// Checks the database of `variant` in `dir`, telling `progress(done,
/// total)` how far it is: positions checked so far, all classes, rising
/// to `total`, the positions it will check. It is called a few times a
/// second at most, from one thread at a time, not always the caller's (not
/// while a two-bit class is resolved before its full check).
///
/// # Errors
///
/// [`Error::Corrupt`] naming the first position (in class, then hash order)
/// that breaks a rule, or the count that disagrees; what opening or reading
/// the database ran into.
pub fn check(
    dir: &Path,
    variant: &Variant,
    options: CheckOptions,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> Result<CheckReport> {
    by_width!(variant, W => check_in::<W>(dir, variant, options, progress))
}

/// [`check`] of a variant whose classes are in words `W`.
fn check_in<W: Width>(
    dir: &Path,
    variant: &Variant,
    options: CheckOptions,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> Result<CheckReport> {
    let started = Instant::now();
    let database = Database::<W>::open_in(dir, variant)?;
    let indices: Vec<TightIndex<W>> = variant.specs::<W>().iter().map(|s| s.tight_index()).collect();
    let total: u64 = indices
        .iter()
        .map(|i| options.sample.map_or(i.len(), |n| n.min(i.len())))
        .sum();
    let mut classes = Vec::new();
    let mut done = 0;
    // The residues of the last searched class read, for a sample of the
    // class that mirrors it.
    let mut source: Option<(usize, Mod3Table)> = None;
    for (k, (spec, index)) in variant.specs::<W>().iter().zip(&indices).enumerate() {
        let class = if database.layout() == Layout::Residues {
            let progress = &mut |n| progress(done + n, total);
            residues_class(&database, variant, &indices, k, options, &mut source, progress)?
        } else {
            match options.sample {
                None => check_class(&database, k, spec, index, &mut |n| progress(done + n, total))?,
                Some(n) => sample_class(&database, k, spec, index, (n, options.seed), &mut |n| {
                    progress(done + n, total)
                })?,
            }
        };
        done += class.checked;
        progress(done, total);
        classes.push(class);
    }
    Ok(CheckReport {
        variant: variant.name().to_owned(),
        path: database.path().to_path_buf(),
        mode: if options.sample.is_some() { "sample" } else { "full" },
        seed: options.sample.map(|_| options.seed),
        checked: done,
        legal: indices.iter().map(TightIndex::<W>::len).sum(),
        proof: options.sample.is_none(),
        seconds: started.elapsed().as_secs_f64(),
        classes,
    })
}

/// Checks class `k` of a residues database (see [`check`]), all of it or a
/// sample: a class stored as the mirror image of another is sampled
/// through that class's residues. `source` keeps the residues of the last
/// searched class read, so that the class mirroring it reads none.
fn residues_class<W: Width>(
    database: &Database<W>,
    variant: &Variant,
    indices: &[TightIndex<W>],
    k: usize,
    options: CheckOptions,
    source: &mut Option<(usize, Mod3Table)>,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<ClassCheck> {
    let (spec, index) = (&variant.specs::<W>()[k], &indices[k]);
    let stored = &database.classes()[k].stats;
    let max = stored.max_remoteness();
    let mut residues_of = |from: usize| match source.take() {
        Some((s, table)) if s == from => Ok(table),
        _ => database.residues(from),
    };
    if let (Some(n), Some((from, mirror))) = (options.sample, database.mirror_of(k)) {
        let residues = residues_of(from)?;
        let class = sample_mirrored_residues(
            (spec, index),
            mirror,
            (&variant.specs::<W>()[from], &indices[from], &residues),
            max,
            (k, n, options.seed),
            progress,
        )
        .map_err(|problem| database.corrupt(problem))?;
        *source = Some((from, residues));
        return Ok(class);
    }
    if options.sample.is_none() {
        // The full check resolves exact values: a byte a position.
        let need = index.len() + index.len().div_ceil(4);
        if let Some(available) = available_memory().filter(|&a| need > a) {
            return Err(Error::TooLarge(format!(
                "checking every position of class {} of {} needs {} of memory, only {} is available; check a sample with --sample N",
                spec.class.name(),
                variant.name(),
                human_bytes(need),
                human_bytes(available)
            )));
        }
    }
    let residues = residues_of(k)?;
    let class = match options.sample {
        None => check_residues(spec, index, &residues, max, stored, progress),
        Some(n) => sample_residues(spec, index, &residues, max, (k, n, options.seed), progress),
    }
    .map_err(|problem| database.corrupt(problem))?;
    if database.mirror_of(k).is_none() {
        *source = Some((k, residues));
    }
    Ok(class)
}

/// What is wrong with a position of value `cell` whose neighbours have the
/// values `neighbours`, if anything.
fn broken_rule(at_goal: bool, cell: Cell, neighbours: impl Iterator<Item = Cell>) -> Option<String> {
    let mut best = None;
    let mut unreachable = false;
    for n in neighbours {
        if !n.is_legal() {
            return Some("has a neighbour missing from the table".into());
        }
        match n.remoteness() {
            Some(r) => best = Some(best.map_or(r, |b: Remoteness| b.min(r))),
            None => unreachable = true,
        }
    }
    // Moves can be undone: a neighbour of a position that reaches the goal
    // reaches it too.
    if let (Some(r), true) = (cell.remoteness(), unreachable) {
        return Some(format!("has remoteness {r} but a neighbour is marked unreachable"));
    }
    match (cell.remoteness(), at_goal) {
        (_, _) if !cell.is_legal() => Some("is missing from the table".into()),
        (Some(r), true) if r.0 != 0 => Some(format!("is the goal but has remoteness {r}")),
        (None, true) => Some("is the goal but is marked unreachable".into()),
        (_, true) => None,
        (Some(r), false) if r.0 == 0 => Some("has remoteness 0 but is not the goal".into()),
        (Some(r), false) => match best {
            Some(b) if b.0 + 1 == r.0 => None,
            Some(b) => Some(format!("has remoteness {r} but its best neighbour has {b}")),
            None => Some(format!("has remoteness {r} but no neighbour reaches the goal")),
        },
        (None, false) => best.map(|b| format!("is marked unreachable but a neighbour has remoteness {b}")),
    }
}

/// About how many times a sequential sample reports its progress.
const PROGRESS_STEPS: u64 = 256;

/// How often a parallel check tells its observer how far it is.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// Runs `work` on the calling thread (so on the current rayon pool), while
/// a second thread, asleep in between, tells `progress` the count `work`
/// keeps in the counter it is given, every [`PROGRESS_EVERY`] that it has
/// risen and once more when `work` is done; returns what `work` does. The
/// work runs in one parallel pass, with no pause to report, and the
/// observer is called from one thread at a time, with rising counts, never
/// after this returns.
fn with_progress<T>(progress: &mut (dyn FnMut(u64) + Send), work: impl FnOnce(&AtomicU64) -> T) -> T {
    let done = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reporter = scope.spawn(|| {
            let mut told = 0;
            loop {
                std::thread::park_timeout(PROGRESS_EVERY);
                // Read before the count, so that the last report has it all.
                let last = finished.load(Ordering::Acquire);
                let now = done.load(Ordering::Relaxed);
                if now > told {
                    progress(now);
                    told = now;
                }
                if last {
                    break;
                }
            }
        });
        let result = work(&done);
        finished.store(true, Ordering::Release);
        reporter.thread().unpark();
        result
    })
}

fn bad_position<W: Width>(database: &Database<W>, spec: &ClassSpec<W>, part: Part<W>, problem: &str) -> Error {
    database.corrupt(fails_at(spec, part, problem))
}

/// Checks every position of class `k`: reads the table into memory in
/// index order, then checks it ([`check_cells`]).
fn check_class<W: Width>(
    database: &Database<W>,
    k: usize,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<ClassCheck> {
    let mut table = Vec::with_capacity(index.len() as usize);
    database.for_each_row(k, |hash, part, cell| {
        if index.rank(part) != Some(table.len() as u64) {
            return Err(database.corrupt(format!(
                "stores the class {} hash {hash} out of order or illegal",
                spec.class.name()
            )));
        }
        table.push(cell.0);
        Ok(())
    })?;
    if table.len() as u64 != index.len() {
        return Err(database.corrupt(format!(
            "stores {} positions of class {}, the rules give {}",
            table.len(),
            spec.class.name(),
            index.len()
        )));
    }
    check_cells(spec, index, &table, &database.classes()[k].stats, progress).map_err(|p| database.corrupt(p))
}

/// Checks every position of the class `spec` against the rules, given its
/// byte table `table` (one [`Cell`] per position, in the order of `index`)
/// in memory, wherever it came from: each block of positions in parallel,
/// then the counts per remoteness against `stored`, the statistics stored
/// with the class. `progress(done)` is told the positions checked so far
/// while it runs, from another thread, and last with them all.
///
/// # Errors
///
/// The problem, one line as [`Database::corrupt`] takes it: the first
/// position (in index order) that breaks a rule, or the counts that differ.
pub fn check_cells<W: Width>(
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    table: &[u8],
    stored: &ClassStats,
    progress: &mut (dyn FnMut(u64) + Send),
) -> std::result::Result<ClassCheck, String> {
    if table.len() as u64 != index.len() {
        return Err(format!(
            "holds {} positions of class {}, the rules give {}",
            table.len(),
            spec.class.name(),
            index.len()
        ));
    }
    let geo = &spec.geometry;
    let (white_count, black_count) = spec.counts();
    let failure = with_progress(progress, |done| {
        (0..index.white_sets() as usize)
            .into_par_iter()
            .with_min_len(64)
            .find_map_first(|r| {
                let r = r as u64;
                let block = index.block(r);
                if block.is_empty() {
                    return None;
                }
                let white = colex_unrank(r, white_count);
                // One buffer for the block: a position has at most a few dozen moves.
                let mut neighbours = Vec::with_capacity(64);
                for (i, black) in block.clone().zip(Subsets::new(index.safe(r), black_count)) {
                    let part = Part { white, black };
                    neighbours.clear();
                    part.for_each_move(geo, |_, _, _, after| neighbours.push(index.rank(after)));
                    if neighbours.iter().any(Option::is_none) {
                        return Some((part, "has a move to an illegal position".to_owned()));
                    }
                    let values = neighbours.iter().map(|n| Cell(table[n.expect("checked") as usize]));
                    if let Some(problem) = broken_rule(part == spec.goal, Cell(table[i as usize]), values) {
                        return Some((part, problem));
                    }
                }
                done.fetch_add(block.end - block.start, Ordering::Relaxed);
                None
            })
    });
    if let Some((part, problem)) = failure {
        return Err(fails_at(spec, part, &problem));
    }
    let mut counts = vec![0u64; 256];
    for &byte in table {
        counts[usize::from(byte)] += 1;
    }
    let top = counts[..=usize::from(Cell::MAX_REMOTENESS)]
        .iter()
        .rposition(|&n| n > 0)
        .map_or(0, |t| t + 1);
    let histogram = counts[..top].to_vec();
    if stored.histogram != histogram || stored.legal != index.len() || stored.reachable != histogram.iter().sum::<u64>()
    {
        return Err(format!(
            "stores counts for class {} that differ from its table",
            spec.class.name()
        ));
    }
    Ok(ClassCheck {
        class: spec.class.index(),
        class_name: spec.class.name(),
        legal: index.len(),
        checked: index.len(),
        histogram,
    })
}

/// Checks every position of the class `spec` given its two-bit table
/// `residues` (remoteness mod 3 in the order of `index`) in memory: resolves
/// the exact remoteness of every position ([`exact::resolve`], with `max`
/// the stored largest remoteness), then checks that table as the byte path
/// does ([`check_cells`]), counts against `stored` included. A pass proves
/// the residues, as the byte check proves a byte table.
///
/// Memory: one byte per position besides the residues.
///
/// # Errors
///
/// The problem, one line as [`Database::corrupt`] takes it, naming a
/// position: residues that cannot be resolved, or the first position that
/// breaks a rule, or counts that differ.
pub fn check_residues<W: Width>(
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    residues: &Mod3Table,
    max: Option<Remoteness>,
    stored: &ClassStats,
    progress: &mut (dyn FnMut(u64) + Send),
) -> std::result::Result<ClassCheck, String> {
    let table = exact::resolve(spec, index, residues, max).map_err(|e| format!("fails the check: {e}"))?;
    check_cells(spec, index, &table, stored, progress)
}

/// Checks `n` positions of the class `spec` (class number `k` of its
/// variant) drawn uniformly with `seed`, the same draws as the byte sample
/// check, given its two-bit table `residues` in memory; `max` is the stored
/// largest remoteness. When `n` is the number of positions or more, each
/// position is checked once instead. The samples run in parallel on the
/// current rayon pool.
///
/// For a drawn position `p` its value `v` is the length of its descent
/// ([`exact`]); then each neighbour `q` is descended too, but only `v − 2`
/// steps: a descent not at the goal by then shows `q` is no closer than
/// `v − 1`, and the first step of `p`'s own descent is a neighbour at
/// `v − 1`. Descents of one sample share what they learn (a position met on
/// an earlier walk ends a later one). The rules are those of the byte check:
/// the goal, and only the goal, at 0; a reachable position has a neighbour
/// exactly one closer and none closer; an unreachable position (and only
/// one) has no reachable neighbour.
///
/// `progress(done)` is told the samples checked so far while it runs, from
/// another thread, and last with them all: a sample of a large class can
/// take minutes.
///
/// # Errors
///
/// The problem, one line as [`Database::corrupt`] takes it, of the first
/// failing sample in draw order, naming a position.
pub fn sample_residues<W: Width>(
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    residues: &Mod3Table,
    max: Option<Remoteness>,
    drawn: (usize, u64, u64),
    progress: &mut (dyn FnMut(u64) + Send),
) -> std::result::Result<ClassCheck, String> {
    sample_through((spec, index), None, (spec, index, residues), max, drawn, progress)
}

/// [`sample_residues`] of the class `spec`, whose tight index is `index`,
/// which is the mirror image of the class of `source` (its spec, tight
/// index and residues in memory): each position drawn is checked as its
/// image under `mirror`, which carries moves to moves and the goal to the
/// goal, so its value is its image's. Only the source's table is held.
///
/// # Errors
///
/// As [`sample_residues`].
pub fn sample_mirrored_residues<W: Width>(
    checked: (&ClassSpec<W>, &TightIndex<W>),
    mirror: &Mirror,
    source: (&ClassSpec<W>, &TightIndex<W>, &Mod3Table),
    max: Option<Remoteness>,
    drawn: (usize, u64, u64),
    progress: &mut (dyn FnMut(u64) + Send),
) -> std::result::Result<ClassCheck, String> {
    sample_through(checked, Some(mirror), source, max, drawn, progress)
}

/// The sample check of the class `spec` (class `k`, tight index `index`):
/// `n` positions drawn with `seed`, each checked in the class of `source`
/// as itself, or as its image under `mirror` when there is one.
fn sample_through<W: Width>(
    (spec, index): (&ClassSpec<W>, &TightIndex<W>),
    mirror: Option<&Mirror>,
    (source, source_index, residues): (&ClassSpec<W>, &TightIndex<W>, &Mod3Table),
    max: Option<Remoteness>,
    (k, n, seed): (usize, u64, u64),
    progress: &mut (dyn FnMut(u64) + Send),
) -> std::result::Result<ClassCheck, String> {
    if residues.len() != source_index.len() || index.len() != source_index.len() {
        return Err(format!(
            "holds {} residues of class {}, the rules give {}",
            residues.len(),
            spec.class.name(),
            index.len()
        ));
    }
    let n = n.min(index.len());
    let start = sample_state(seed, k);
    let walker = exact::Walker {
        spec: source,
        index: source_index,
        residues,
    };
    let drawn = |j: u64| {
        // Asked for every position or more: each once, a full check.
        let i = if n == index.len() {
            j
        } else {
            splitmix_at(start, j) % index.len()
        };
        let part = index.unrank(i);
        match mirror {
            None => (part, i),
            Some(mirror) => {
                let image = mirror.part(part);
                (
                    image,
                    source_index
                        .rank(image)
                        .expect("the image of a legal position is legal"),
                )
            }
        }
    };
    sample_drawn(&walker, limit_of(max), n, drawn, progress)?;
    Ok(ClassCheck {
        class: spec.class.index(),
        class_name: spec.class.name(),
        legal: index.len(),
        checked: n,
        histogram: Vec::new(),
    })
}

/// The largest remoteness a check allows: the stored largest, never above
/// what a [`Cell`] holds.
fn limit_of(max: Option<Remoteness>) -> u16 {
    max.map_or(u16::from(Cell::MAX_REMOTENESS), |m| {
        m.0.min(u16::from(Cell::MAX_REMOTENESS))
    })
}

/// Checks the `n` positions `drawn(0..n)` gives (each a placement and its
/// tight index in `walker`'s class) in parallel ([`check_sample`]),
/// telling `progress` as they go; the first failure in draw order.
fn sample_drawn<W: Width>(
    walker: &exact::Walker<'_, W>,
    limit: u16,
    n: u64,
    drawn: impl Fn(u64) -> (Part<W>, u64) + Sync,
    progress: &mut (dyn FnMut(u64) + Send),
) -> std::result::Result<(), String> {
    let failure = with_progress(progress, |done| {
        // A range of u64 is not an indexed parallel iterator; of usize it is.
        (0..n as usize)
            .into_par_iter()
            .with_min_len(16)
            .map_init(SampleScratch::default, |scratch, j| {
                let (part, i) = drawn(j as u64);
                let failure = check_sample(walker, part, i, limit, scratch).err();
                done.fetch_add(1, Ordering::Relaxed);
                failure
            })
            .find_map_first(|failure| failure)
    });
    failure.map_or(Ok(()), Err)
}

/// A fast hash for tight indices, which are already well spread.
#[derive(Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (i ^ (i >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
}

/// The buffers of one thread's samples.
#[derive(Default)]
struct SampleScratch<W: Width> {
    /// Descent values learnt in this sample, by tight index.
    known: HashMap<u64, Known, BuildHasherDefault<IndexHasher>>,
    path: Vec<u64>,
    neighbours: Vec<Part<W>>,
}

/// Checks one drawn position `part` (tight index `i`): see [`sample_residues`].
fn check_sample<W: Width>(
    walker: &exact::Walker<'_, W>,
    part: Part<W>,
    i: u64,
    limit: u16,
    scratch: &mut SampleScratch<W>,
) -> std::result::Result<(), String> {
    let spec = walker.spec;
    let (index, residues) = (walker.index, walker.residues);
    let SampleScratch {
        known,
        path,
        neighbours,
    } = scratch;
    known.clear();
    neighbours.clear();
    part.for_each_move(&spec.geometry, |_, _, _, after| neighbours.push(after));
    let mut ranked = Vec::with_capacity(neighbours.len());
    for &q in neighbours.iter() {
        match index.rank(q) {
            Some(j) => ranked.push((q, j, residues.get(j))),
            None => return Err(fails_at(spec, part, "has a move to an illegal position")),
        }
    }
    let descent_failed = |e: exact::DescentError| format!("fails the check: {e}");
    // The full descent of a position, sharing what earlier walks learnt.
    let value = |q: Part<W>, j: u64, here: u8, budget: u16, known: &mut HashMap<_, _, _>, path: &mut Vec<u64>| {
        let found = walker
            .walk(q, j, here, budget, &mut |k| known.get(&k).copied(), path)
            .map_err(descent_failed)?;
        for (t, &k) in path.iter().enumerate() {
            let t = t as u16;
            match found {
                Some(v) => {
                    known.insert(k, Known::Exact(v - t));
                }
                // Above the budget: the t-th position is above budget − t.
                None if budget + 1 > t => {
                    let low = budget + 1 - t;
                    let entry = known.entry(k).or_insert(Known::AtLeast(low));
                    if let Known::AtLeast(old) = entry {
                        *old = (*old).max(low);
                    }
                }
                None => {}
            }
        }
        Ok::<_, String>(found)
    };
    let Some(here) = residues.get(i) else {
        if part == spec.goal {
            return Err(fails_at(spec, part, "is the goal but is marked unreachable"));
        }
        for &(q, j, r) in &ranked {
            if let Some(r) = r {
                return Err(match value(q, j, r, limit, known, path)? {
                    Some(b) => fails_at(
                        spec,
                        part,
                        &format!("is marked unreachable but a neighbour has remoteness {b}"),
                    ),
                    None => fails_at(spec, part, "is marked unreachable but a neighbour is not"),
                });
            }
        }
        return Ok(());
    };
    let Some(v) = value(part, i, here, limit, known, path)? else {
        return Err(descent_failed(exact::DescentError::TooLong {
            position: exact::position_string(&spec.geometry, part),
            max_steps: limit,
        }));
    };
    if v > limit {
        return Err(fails_at(
            spec,
            part,
            &format!("has remoteness {v}, above the largest, {limit}"),
        ));
    }
    if part == spec.goal {
        return Ok(());
    }
    let mut best: Option<u16> = None;
    for &(q, j, r) in &ranked {
        let Some(r) = r else {
            return Err(fails_at(
                spec,
                q,
                &format!("is marked unreachable but a neighbour has remoteness {v}"),
            ));
        };
        // Only a value below v − 1 matters: v − 2 steps settle that.
        if v >= 2
            && let Some(w) = value(q, j, r, v - 2, known, path)?
            && w + 1 < v
        {
            best = Some(best.map_or(w, |b| b.min(w)));
        }
    }
    match best {
        Some(b) => Err(fails_at(
            spec,
            part,
            &format!("has remoteness {v} but its best neighbour has {b}"),
        )),
        None => Ok(()),
    }
}

/// The problem of `part` breaking a rule, as [`Database::corrupt`] takes it.
fn fails_at<W: Width>(spec: &ClassSpec<W>, part: Part<W>, problem: &str) -> String {
    let position = Position::from_parts(spec.geometry.board(), &[(&spec.geometry, part)]);
    format!("fails the check at {position}, which {problem}")
}

/// The draw `j` (from 0) of the splitmix sequence from `state`: what the
/// `j + 1`-th call of [`splitmix`] gives, without the calls before it.
fn splitmix_at(state: u64, j: u64) -> u64 {
    let mut s = state.wrapping_add(j.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    splitmix(&mut s)
}

/// Checks `n` positions of class `k` drawn uniformly with `seed`, each and
/// its neighbours read from the database one lookup at a time, telling
/// `progress(done)` the samples checked so far, as [`sample_residues`]
/// does.
fn sample_class<W: Width>(
    database: &Database<W>,
    k: usize,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    (n, seed): (u64, u64),
    progress: &mut dyn FnMut(u64),
) -> Result<ClassCheck> {
    let mut state = sample_state(seed, k);
    let n = n.min(index.len());
    let every = n.div_ceil(PROGRESS_STEPS).max(1);
    let cell = |part: Part<W>| database.cell(k, spec.index.rank(part));
    for j in 0..n {
        if j % every == 0 && j > 0 {
            progress(j);
        }
        let part = index.unrank(splitmix(&mut state) % index.len());
        let mut neighbours = Vec::new();
        part.for_each_move(&spec.geometry, |_, _, _, after| neighbours.push(after));
        let values = neighbours.into_iter().map(cell).collect::<Result<Vec<Cell>>>()?;
        if let Some(problem) = broken_rule(part == spec.goal, cell(part)?, values.into_iter()) {
            return Err(bad_position(database, spec, part, &problem));
        }
    }
    progress(n);
    Ok(ClassCheck {
        class: spec.class.index(),
        class_name: spec.class.name(),
        legal: index.len(),
        checked: n,
        histogram: Vec::new(),
    })
}
