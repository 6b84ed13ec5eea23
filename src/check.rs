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

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::index::colex_unrank;
use crate::position::Position;
use crate::remoteness::{Cell, Remoteness};
use crate::rules::Part;
use crate::storage::Database;
use crate::tight::{Subsets, TightIndex};
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
    /// Legal positions of the class.
    pub legal: u64,
    /// Positions checked.
    pub checked: u64,
    /// Positions per remoteness, counted by the check (full check only).
    pub histogram: Vec<u64>,
}

/// Checks the database of `variant` in `dir`, telling `progress(done,
/// total)` how far it is.
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
    let started = Instant::now();
    let database = Database::open(dir, variant)?;
    let indices: Vec<TightIndex> = variant
        .classes()
        .iter()
        .map(|s| TightIndex::new(&s.geometry, s.counts().0, s.counts().1))
        .collect();
    let total: u64 = indices
        .iter()
        .map(|i| options.sample.map_or(i.len(), |n| n.min(i.len())))
        .sum();
    let mut classes = Vec::new();
    let mut done = 0;
    for (k, (spec, index)) in variant.classes().iter().zip(&indices).enumerate() {
        let class = match options.sample {
            None => check_class(&database, k, spec, index, &mut |n| progress(done + n, total))?,
            Some(n) => sample_class(&database, k, spec, index, n, options.seed)?,
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
        legal: indices.iter().map(TightIndex::len).sum(),
        proof: options.sample.is_none(),
        seconds: started.elapsed().as_secs_f64(),
        classes,
    })
}

/// What is wrong with a position of value `cell` whose neighbours have the
/// values `neighbours`, if anything.
fn broken_rule(at_goal: bool, cell: Cell, neighbours: impl Iterator<Item = Cell>) -> Option<String> {
    let mut best = None;
    for n in neighbours {
        if !n.is_legal() {
            return Some("has a neighbour missing from the table".into());
        }
        if let Some(r) = n.remoteness() {
            best = Some(best.map_or(r, |b: Remoteness| b.min(r)));
        }
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

fn bad_position(database: &Database, spec: &ClassSpec, part: Part, problem: &str) -> Error {
    let position = Position::from_parts(spec.geometry.board(), &[(&spec.geometry, part)]);
    database.corrupt(format!("fails the check at {position}, which {problem}"))
}

/// Checks every position of class `k`: reads the table into memory in
/// index order, then checks each block of positions in parallel.
fn check_class(
    database: &Database,
    k: usize,
    spec: &ClassSpec,
    index: &TightIndex,
    progress: &mut dyn FnMut(u64),
) -> Result<ClassCheck> {
    let mut table = Vec::with_capacity(index.len() as usize);
    database.for_each_row(k, |hash, part, cell| {
        if index.rank(part) != Some(table.len() as u64) {
            return Err(database.corrupt(format!(
                "stores the class {} hash {hash} out of order or illegal",
                spec.class.index()
            )));
        }
        table.push(cell.0);
        Ok(())
    })?;
    if table.len() as u64 != index.len() {
        return Err(database.corrupt(format!(
            "stores {} positions of class {}, the rules give {}",
            table.len(),
            spec.class.index(),
            index.len()
        )));
    }
    let done = AtomicU64::new(0);
    let geo = &spec.geometry;
    let (white_count, black_count) = spec.counts();
    let failure = (0..index.white_sets() as usize)
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
        });
    if let Some((part, problem)) = failure {
        return Err(bad_position(database, spec, part, &problem));
    }
    progress(done.load(Ordering::Relaxed));
    let mut counts = vec![0u64; 256];
    for &byte in &table {
        counts[usize::from(byte)] += 1;
    }
    let top = counts[..=usize::from(Cell::MAX_REMOTENESS)]
        .iter()
        .rposition(|&n| n > 0)
        .map_or(0, |t| t + 1);
    let histogram = counts[..top].to_vec();
    let stored = &database.classes()[k].stats;
    if stored.histogram != histogram || stored.legal != index.len() || stored.reachable != histogram.iter().sum::<u64>()
    {
        return Err(database.corrupt(format!(
            "stores counts for class {} that differ from its table",
            spec.class.index()
        )));
    }
    Ok(ClassCheck {
        class: spec.class.index(),
        legal: index.len(),
        checked: index.len(),
        histogram,
    })
}

/// splitmix64: a small, seedable sequence for sampling.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Checks `n` positions of class `k` drawn uniformly with `seed`, each and
/// its neighbours read from the database one lookup at a time.
fn sample_class(
    database: &Database,
    k: usize,
    spec: &ClassSpec,
    index: &TightIndex,
    n: u64,
    seed: u64,
) -> Result<ClassCheck> {
    let mut state = seed ^ (k as u64).wrapping_mul(0x5851_f42d_4c95_7f2d);
    let n = n.min(index.len());
    let cell = |part: Part| database.cell(k, spec.index.rank(part));
    for _ in 0..n {
        let part = index.unrank(splitmix(&mut state) % index.len());
        let mut neighbours = Vec::new();
        part.for_each_move(&spec.geometry, |_, _, _, after| neighbours.push(after));
        let values = neighbours.into_iter().map(cell).collect::<Result<Vec<Cell>>>()?;
        if let Some(problem) = broken_rule(part == spec.goal, cell(part)?, values.into_iter()) {
            return Err(bad_position(database, spec, part, &problem));
        }
    }
    Ok(ClassCheck {
        class: spec.class.index(),
        legal: index.len(),
        checked: n,
        histogram: Vec::new(),
    })
}
