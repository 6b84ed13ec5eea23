//! From a variant to a database on disk: plan the memory, search, check the
//! answer against what is known, write.
//!
//! This is the whole of `bishops solve` without its terminal output, so that
//! the command line, the query API (which solves small variants on demand)
//! and tests all run one pipeline.
//!
//! # Examples
//!
//! ```
//! use bishops::Variant;
//! use bishops::pipeline::{SolveOptions, SolvePlan};
//!
//! let dir = std::env::temp_dir().join(format!("bishops-doc-pipeline-{}", std::process::id()));
//! let variant = Variant::named("7x4").unwrap();
//! let plan = SolvePlan::new(&variant, SolveOptions::default()).unwrap();
//! assert_eq!(plan.legal(), vec![972]);
//! let solved = plan.run(&dir, &mut |_| {}).unwrap();
//! assert!(solved.path.ends_with("7x4.sqlite"));
//! assert_eq!(solved.layers.last().unwrap().depth, 12);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, CheckpointOptions, Checkpointer};
use crate::error::{Error, Result};
use crate::index::binomial;
use crate::solver::{Event, Method, Plan, Solution};
use crate::storage::{self, Layout};
use crate::variant::Variant;

/// How a solve runs.
#[derive(Copy, Clone, Debug, Default)]
pub struct SolveOptions {
    /// The search.
    pub method: Method,
    /// `None`: rows or blocks by size.
    pub layout: Option<Layout>,
    /// Bytes the solve may use at most, besides what is available.
    pub max_memory: Option<u64>,
    /// `None`: no checkpoints. Otherwise the tight search saves checkpoints
    /// into the database directory and resumes from one ([`checkpoint`]);
    /// the caller should hold the variant's
    /// [`WriteLock`](crate::storage::WriteLock).
    pub checkpoints: Option<CheckpointOptions>,
}

/// One search layer of a solve.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LayerReport {
    /// The class number (0: a1's class, 1: a2's).
    pub class: usize,
    /// The remoteness of the layer.
    pub depth: u16,
    /// Positions in the layer.
    pub found: u64,
    /// Seconds the layer took.
    pub seconds: f64,
}

/// What one solve did.
#[derive(Clone, Debug)]
pub struct Solved {
    /// The database written.
    pub path: PathBuf,
    /// Seconds spent searching, building the indices included.
    pub solve_seconds: f64,
    /// Seconds spent writing the database.
    pub write_seconds: f64,
    /// Legal positions per class.
    pub legal: Vec<u64>,
    /// Each search layer (a mirrored class has none); a resumed search
    /// reports its saved layers with the seconds they took now.
    pub layers: Vec<LayerReport>,
    /// Checkpoints written, with the seconds and bytes they took.
    pub checkpoints: (u32, f64, u64),
}

/// A solve whose memory has been checked, ready to run: built by
/// [`SolvePlan::new`], which refuses a variant that does not fit.
#[derive(Debug)]
pub struct SolvePlan<'a> {
    variant: &'a Variant,
    plan: Plan<'a>,
    options: SolveOptions,
}

impl<'a> SolvePlan<'a> {
    /// Builds the indices of `variant` and checks that the solve fits in
    /// memory.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] when the solve needs more memory than is
    /// available, or than `options.max_memory`.
    pub fn new(variant: &'a Variant, options: SolveOptions) -> Result<SolvePlan<'a>> {
        // The tight index's tables come first: one safe set and offset per white set.
        let index_bytes = variant
            .classes()
            .iter()
            .map(|s| binomial(s.geometry.len() as u32, s.counts().0).saturating_mul(16))
            .fold(0u64, u64::saturating_add);
        check_memory(variant, index_bytes, options.max_memory)?;
        let plan = Plan::new(variant, options.method);
        check_memory(variant, plan.memory_bytes(), options.max_memory)?;
        Ok(SolvePlan { variant, plan, options })
    }

    /// Legal positions per class.
    pub fn legal(&self) -> Vec<u64> {
        self.plan.legal()
    }

    /// How many classes are derived from a mirror image instead of searched.
    pub fn mirrored(&self) -> usize {
        (0..self.legal().len()).filter(|&k| self.plan.is_mirrored(k)).count()
    }

    /// The peak memory of the solve, in bytes.
    pub fn memory_bytes(&self) -> u64 {
        self.plan.memory_bytes()
    }

    /// One line saying what the solve will do and need.
    pub fn summary(&self) -> String {
        let legal = self.legal();
        let mirrored = self.mirrored();
        format!(
            "solving {} ({} search, {} threads): {} legal positions in {} class{}{}; needs about {}{}",
            self.variant.name(),
            match self.options.method {
                Method::Tight => "tight",
                Method::Dense => "dense",
            },
            rayon::current_num_threads(),
            legal.iter().map(u64::to_string).collect::<Vec<_>>().join(" + "),
            legal.len(),
            if legal.len() == 1 { "" } else { "es" },
            if mirrored > 0 { " (one by mirror symmetry)" } else { "" },
            human_bytes(self.memory_bytes()),
            available_memory().map_or(String::new(), |a| format!(" of {} available", human_bytes(a)))
        )
    }

    /// Searches, checks the answer against the variant's known values, and
    /// writes the database into `dir`, telling `observe` of each step.
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`] when the answer contradicts the known values
    /// (nothing is written then); whatever the search or the write ran into.
    pub fn run(self, dir: &Path, observe: &mut dyn FnMut(Event)) -> Result<Solved> {
        self.run_with_notes(dir, observe, &mut |_| {})
    }

    /// As [`run`](Self::run), telling `note` what a user should know about
    /// checkpoints: a resume, a checkpoint ignored or discarded. With
    /// checkpoints asked for, a finished solve removes the variant's
    /// checkpoints once its database is written.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); [`Error::Stopped`] when the test hook of
    /// [`CheckpointOptions::stop_after`] stops the search.
    pub fn run_with_notes(
        self,
        dir: &Path,
        observe: &mut dyn FnMut(Event),
        note: &mut dyn FnMut(&str),
    ) -> Result<Solved> {
        let mut layers = Vec::new();
        let mut last = Instant::now();
        let mut checkpointer = match self.options.checkpoints {
            Some(options) => {
                storage::check_dir(dir)?;
                Some(Checkpointer::new(dir, self.variant, options, note))
            }
            None => None,
        };
        let mut no_checkpoints = crate::solver::parallel::NoCheckpoints;
        let checkpoints: &mut dyn crate::solver::parallel::Checkpoints = match checkpointer.as_mut() {
            Some(c) => c,
            None => &mut no_checkpoints,
        };
        let solution = self.plan.solve_with(checkpoints, &mut |event| {
            match event {
                Event::Counted { .. } => last = Instant::now(),
                Event::Layer {
                    class, depth, found, ..
                } => {
                    layers.push(LayerReport {
                        class: class.index(),
                        depth,
                        found,
                        seconds: last.elapsed().as_secs_f64(),
                    });
                    last = Instant::now();
                }
                Event::Mirrored { .. } => {}
            }
            observe(event);
        })?;
        if let Err(e) = check_known(self.variant, &solution) {
            // A wrong answer may come from a resumed checkpoint: the next
            // solve starts over instead of resuming from it again.
            if self.options.checkpoints.is_some() {
                checkpoint::remove(dir, self.variant);
            }
            return Err(e);
        }
        let writing = Instant::now();
        let layout = self.options.layout.unwrap_or_else(|| Layout::for_solution(&solution));
        let path = storage::write_with(dir, self.variant, &solution, layout)?;
        let written = checkpointer.map_or((0, 0.0, 0), |c| c.written);
        if self.options.checkpoints.is_some() {
            checkpoint::remove(dir, self.variant);
        }
        Ok(Solved {
            checkpoints: written,
            path,
            solve_seconds: solution.elapsed.as_secs_f64(),
            write_seconds: writing.elapsed().as_secs_f64(),
            legal: solution.classes.iter().map(|c| c.stats.legal).collect(),
            layers,
        })
    }
}

/// Bytes of memory available to a new allocation, from `/proc/meminfo`.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The peak resident memory of this process so far, from `/proc/self/status`.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A size for people: KiB below a MiB, whole MiB above.
///
/// ```
/// assert_eq!(bishops::pipeline::human_bytes(1000), "1 KiB");
/// assert_eq!(bishops::pipeline::human_bytes(3 << 20), "3 MiB");
/// ```
pub fn human_bytes(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    } else {
        format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
    }
}

/// Refuses a solve that needs more memory than is available, or than
/// `limit` bytes when given.
fn check_memory(variant: &Variant, need: u64, limit: Option<u64>) -> Result<()> {
    let available = match (available_memory(), limit) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    };
    match available {
        Some(available) if need > available => Err(Error::TooLarge(format!(
            "variant {} needs about {} of memory to solve, only {} is available",
            variant.name(),
            human_bytes(need),
            human_bytes(available)
        ))),
        _ => Ok(()),
    }
}

/// Checks a solution against the answers the variant file knows.
fn check_known(variant: &Variant, solution: &Solution) -> Result<()> {
    let Some(known) = variant.known() else {
        return Ok(());
    };
    let legal: Vec<u64> = solution.classes.iter().map(|c| c.stats.legal).collect();
    let max: Option<u16> = solution
        .classes
        .iter()
        .map(|c| c.stats.max_remoteness().map(|r| r.0))
        .sum();
    let starts = variant.class_hashes(variant.start());
    let start: Option<u16> = starts
        .iter()
        .enumerate()
        .map(|(k, &h)| solution.cell(k, h).remoteness().map(|r| r.0))
        .sum();
    if legal != known.legal || max != Some(known.max_remoteness) || start != Some(known.start_remoteness) {
        return Err(Error::Mismatch(format!(
            "variant {}: solved {legal:?} legal positions, start {start:?}, largest {max:?}, but {} give {:?}, {}, {}; nothing written",
            variant.name(),
            known.source,
            known.legal,
            known.start_remoteness,
            known.max_remoteness
        )));
    }
    Ok(())
}
