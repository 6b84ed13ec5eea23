//! Exact remoteness from remoteness mod 3: the answers a two-bit table
//! ([`Mod3Table`]) stands for, recovered without trusting it.
//!
//! The state graph is undirected, so the neighbours of a position at
//! remoteness `k` are at `k − 1`, `k` or `k + 1`, and those differ mod 3: a
//! neighbour whose residue is one less mod 3 is exactly one move closer.
//! Stepping to such a neighbour until the goal is reached therefore walks an
//! optimal path, and the number of steps is the remoteness ([`descend`]).
//!
//! On a damaged table the walk can go wrong in three ways, each refused with
//! a [`DescentError`] instead of a panic or an endless loop: a position with
//! no neighbour one less mod 3, a walk longer than the largest remoteness
//! there can be (the residues then form a cycle), or a goal whose residue is
//! not 0.
//!
//! At each step the walk prefers a closer neighbour reached by moving a
//! *black* bishop: that keeps the white set, so the neighbour lies in the
//! same block of the tight index (the same storage block), which makes
//! database lookups hit the block cache; failing those, a white move that
//! brings a bishop nearest the goal, which is most often closer too
//! ([`Toward`]). The path found is therefore *an* optimal path, not the
//! first one in move order.
//!
//! [`resolve`] turns a whole class's residues into its byte table (one
//! [`Cell`] per position, in tight-index order) by descent with
//! memoisation: from a position not resolved yet it walks along closer
//! neighbours until it meets a resolved one (or the goal), then assigns the
//! values back along the path. Each position is resolved once, so the cost
//! is about that of one search layer, spread over all cores. It needs the
//! output bytes (one per legal position) plus the residues (two bits per
//! position) and a short path per thread: nothing else.
//!
//! The walk is deterministic (the neighbour chosen depends only on the
//! residues), so every position has one *descent value*, the length of its
//! walk; that is what [`resolve`] writes and what the checks in
//! [`check`](crate::check) test against the rules.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::bitboard::{Bitboard, Word};
use crate::board::Geometry;
use crate::index::{colex_rank, colex_unrank, rank_within};
use crate::position::Position;
use crate::remoteness::{Cell, Remoteness};
use crate::rules::{Colour, Part};
use crate::tight::{Subsets, TightIndex};
use crate::variant::ClassSpec;

use super::{Mod3Table, PER_WORD, Residues, UNSEEN};

/// The answer of [`descend`]: the exact remoteness of a position and the
/// position after one optimal move.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Descent<W: Word = u64> {
    /// The fewest moves to the goal.
    pub remoteness: Remoteness,
    /// The position one optimal move on; `None` at the goal.
    pub best: Option<Part<W>>,
}

/// Why residues could not be descended: the table is not the remoteness
/// mod 3 of a breadth-first search from the goal. Each names a position as
/// the program's position string (the bishops of its class alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DescentError {
    /// `position` has residue `residue` and no neighbour one less mod 3.
    NoCloser {
        /// The position.
        position: String,
        /// Its residue.
        residue: u8,
    },
    /// The walk from `position` took more than `max_steps` steps without
    /// reaching the goal: the residues form a cycle, or the remoteness is
    /// above the largest there is.
    TooLong {
        /// Where the walk started.
        position: String,
        /// The steps allowed.
        max_steps: u16,
    },
    /// The goal's residue is not 0 (`None`: unreachable, or illegal).
    Goal {
        /// The goal.
        position: String,
        /// Its residue.
        residue: Option<u8>,
    },
}

impl fmt::Display for DescentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescentError::NoCloser { position, residue } => write!(
                f,
                "position {position} has remoteness {residue} mod 3 but no neighbour at {} mod 3",
                (residue + 2) % 3
            ),
            DescentError::TooLong { position, max_steps } => write!(
                f,
                "the descent from position {position} takes more than {max_steps} steps (the residues form a cycle)"
            ),
            DescentError::Goal {
                position,
                residue: Some(r),
            } => write!(f, "the goal {position} has remoteness {r} mod 3, not 0"),
            DescentError::Goal {
                position,
                residue: None,
            } => {
                write!(f, "the goal {position} is marked unreachable")
            }
        }
    }
}

impl std::error::Error for DescentError {}

/// Why [`resolve`] refused a class's residues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// A descent failed.
    Descent(DescentError),
    /// `position` resolves to `remoteness`, above `max` (the stored largest
    /// remoteness, or [`Cell::MAX_REMOTENESS`]).
    TooHigh {
        /// The position.
        position: String,
        /// Its value.
        remoteness: u16,
        /// The largest allowed.
        max: u16,
    },
    /// The table does not hold one residue per legal position.
    Length {
        /// Positions in the table.
        table: u64,
        /// Legal positions of the class.
        legal: u64,
    },
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::Descent(e) => e.fmt(f),
            ResolveError::TooHigh {
                position,
                remoteness,
                max,
            } => write!(
                f,
                "position {position} resolves to remoteness {remoteness}, above the largest, {max}"
            ),
            ResolveError::Length { table, legal } => {
                write!(f, "the residue table holds {table} positions, the class has {legal}")
            }
        }
    }
}

impl std::error::Error for ResolveError {}

impl From<DescentError> for ResolveError {
    fn from(e: DescentError) -> ResolveError {
        ResolveError::Descent(e)
    }
}

/// The position string of `part`, the bishops of one class.
pub(crate) fn position_string<W: Word>(geo: &Geometry<W>, part: Part<W>) -> String {
    Position::from_parts(geo.board(), &[(geo, part)]).to_string()
}

/// The exact remoteness of `part`, a legal position of the class `geo`
/// whose goal is `goal`, from remoteness mod 3 alone: `residue` gives it for
/// any legal position (`None` for unreachable ones). `Ok(None)` when `part`
/// is unreachable.
///
/// It walks to the goal, each step to a neighbour whose residue is one less
/// mod 3, which is one move closer, black moves first (see the [module
/// docs](self)): the remoteness is the number of steps, `best` the first.
///
/// # Errors
///
/// A [`DescentError`] when `residue` is not the remoteness mod 3 of a
/// breadth-first search from `goal`: a step finds no closer neighbour, the
/// walk takes more than `max_steps` steps, or it ends at a goal whose
/// residue is not 0.
///
/// # Examples
///
/// ```
/// use bishops::mod3::exact;
/// use bishops::solver;
/// use bishops::{Part, Remoteness, Variant};
///
/// let variant = Variant::named("5x4").unwrap();
/// let spec = &variant.classes()[0];
/// let solved = solver::solve(&variant, &mut |_| {}).unwrap();
/// let residue = |p: Part| solved.cell(0, spec.index.rank(p)).remoteness().map(|r| (r.0 % 3) as u8);
/// let descent = exact::descend(&spec.geometry, spec.goal, spec.start, 253, residue).unwrap().unwrap();
/// assert_eq!(descent.remoteness, Remoteness(18));
/// // Too few steps allowed: refused, not looped on.
/// assert!(exact::descend(&spec.geometry, spec.goal, spec.start, 17, residue).is_err());
/// ```
pub fn descend<W: Word>(
    geo: &Geometry<W>,
    goal: Part<W>,
    part: Part<W>,
    max_steps: u16,
    mut residue: impl FnMut(Part<W>) -> Option<u8>,
) -> Result<Option<Descent<W>>, DescentError> {
    let Some(mut here) = residue(part) else {
        if part == goal {
            return Err(DescentError::Goal {
                position: position_string(geo, goal),
                residue: None,
            });
        }
        return Ok(None);
    };
    let mut at = part;
    let mut steps = 0u16;
    let mut best = None;
    let toward = Toward::new(geo, goal);
    while at != goal {
        if steps >= max_steps {
            return Err(DescentError::TooLong {
                position: position_string(geo, part),
                max_steps,
            });
        }
        let closer = (here + 2) % 3;
        let next = toward
            .closer(geo, at, closer, |p| Ok::<_, std::convert::Infallible>(residue(p)))
            .unwrap_or_else(|never| match never {})
            .ok_or_else(|| DescentError::NoCloser {
                position: position_string(geo, at),
                residue: here,
            })?;
        if steps == 0 {
            best = Some(next);
        }
        at = next;
        here = closer;
        steps += 1;
    }
    if here != 0 {
        return Err(DescentError::Goal {
            position: position_string(geo, goal),
            residue: Some(here),
        });
    }
    Ok(Some(Descent {
        remoteness: Remoteness(steps),
        best,
    }))
}

/// The order a descent tries the moves of a position in, where each lookup
/// of a position with another white set may read a block from disk: the
/// black moves first, in move order (they keep the white set, so their
/// block is the one at hand), then the white moves, those that bring a
/// white bishop nearest the goal's white bishops first. Any closer
/// neighbour gives the same remoteness; this order finds one after few
/// blocks read. On the 17x8 start, `query` reads 243 blocks in it and
/// 1,695 in plain move order.
#[derive(Clone, Debug)]
pub struct Toward {
    /// For each cell, how far it is from the nearest cell of the goal's
    /// white set: the larger of the rows and the columns between them.
    distance: Vec<u16>,
}

impl Toward {
    /// The order for descents to `goal` on `geo`.
    pub fn new<W: Word>(geo: &Geometry<W>, goal: Part<W>) -> Toward {
        let distance = (0..geo.len() as u8)
            .map(|c| {
                let at = geo.square(c);
                (goal.white.into_iter())
                    .map(|g| {
                        let to = geo.square(g);
                        u16::from(at.row().abs_diff(to.row()).max(at.col().abs_diff(to.col())))
                    })
                    .min()
                    .unwrap_or(0)
            })
            .collect();
        Toward { distance }
    }

    /// The first neighbour of `at` in this order whose residue, by
    /// `residue`, is `want`; `Ok(None)` when none is. The first error of
    /// `residue` ends the search.
    pub fn closer<W: Word, E>(
        &self,
        geo: &Geometry<W>,
        at: Part<W>,
        want: u8,
        mut residue: impl FnMut(Part<W>) -> Result<Option<u8>, E>,
    ) -> Result<Option<Part<W>>, E> {
        let mut failed = None;
        let mut whites: Vec<(u16, Part<W>)> = Vec::new();
        let mut check = |after: Part<W>| match residue(after) {
            Ok(r) => (r == Some(want)).then_some(after),
            Err(e) => {
                failed = Some(e);
                Some(after)
            }
        };
        let mut found = at.find_move(geo, |colour, from, to, after| match colour {
            Colour::Black => check(after),
            Colour::White => {
                // Lower first: the distance after the move, less before.
                let gain = self.distance[usize::from(to)] + 64 - self.distance[usize::from(from)];
                whites.push((gain, after));
                None
            }
        });
        if found.is_none() {
            whites.sort_by_key(|&(gain, _)| gain);
            found = whites.iter().find_map(|&(_, after)| check(after));
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }
}

/// One walk over a class's residues in tight-index order, for [`resolve`]
/// and the checks.
pub(crate) struct Walker<'a, W: Word = u64, R: Residues + ?Sized = Mod3Table> {
    /// The class.
    pub spec: &'a ClassSpec<W>,
    /// Its tight index.
    pub index: &'a TightIndex<W>,
    /// Its residues, in `index` order.
    pub residues: &'a R,
}

/// What a walk may already know of a position's descent value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Known {
    /// The value.
    Exact(u16),
    /// A lower bound of the value.
    AtLeast(u16),
}

impl<W: Word, R: Residues + ?Sized> Walker<'_, W, R> {
    /// The first neighbour of `at` (black moves first) whose residue is
    /// `want`, with its tight index.
    #[inline]
    fn closer(&self, at: Part<W>, want: u8) -> Option<(Part<W>, u64)> {
        self.find_neighbour(at, |after, k| {
            (self.residues.get(k) == Some(want)).then_some((after, k))
        })
    }

    /// The first `Some` of `f(after, k)` over the neighbours `after` of
    /// `at`, with their tight indices `k`, in the order of
    /// [`Part::find_move`]. The moves come from
    /// [`Part::find_pseudo_legal_move`] with the index's safe cells: a black
    /// move keeps the white set, so its block and safe cells are looked up
    /// once and it is ranked within the block; a white move is ranked by
    /// the index, which refuses the illegal ones.
    #[inline]
    fn find_neighbour<T>(&self, at: Part<W>, mut f: impl FnMut(Part<W>, u64) -> Option<T>) -> Option<T> {
        let r = colex_rank(at.white);
        let (start, safe) = (self.index.block(r).start, self.index.safe(r));
        at.find_pseudo_legal_move(&self.spec.geometry, safe, |colour, _, _, after| {
            let k = match colour {
                Colour::Black => start + rank_within(after.black, safe),
                Colour::White => self.index.rank(after)?,
            };
            f(after, k)
        })
    }

    /// The descent value of `part` (tight index `i`, residue `here`), when
    /// the walk settles it within `budget` steps: it reaches the goal, or a
    /// position whose value `known` gives. `Ok(None)` when the value is
    /// above `budget`: the walk took `budget` steps without settling it, or
    /// met a position whose lower bound shows it. `path` gets the tight
    /// indices walked, `i` first; the `t`-th has the value less `t`.
    pub fn walk(
        &self,
        part: Part<W>,
        i: u64,
        here: u8,
        budget: u16,
        known: &mut impl FnMut(u64) -> Option<Known>,
        path: &mut Vec<u64>,
    ) -> Result<Option<u16>, DescentError> {
        let geo = &self.spec.geometry;
        path.clear();
        path.push(i);
        let (mut at, mut j, mut here) = (part, i, here);
        let mut steps = 0u16;
        loop {
            if at == self.spec.goal {
                if here != 0 {
                    return Err(DescentError::Goal {
                        position: position_string(geo, at),
                        residue: Some(here),
                    });
                }
                return Ok(Some(steps));
            }
            match known(j) {
                Some(Known::Exact(v)) => return Ok(Some(steps + v)),
                Some(Known::AtLeast(low)) if steps + low > budget => return Ok(None),
                _ => {}
            }
            if steps >= budget {
                return Ok(None);
            }
            let closer = (here + 2) % 3;
            let (next, k) = self.closer(at, closer).ok_or_else(|| DescentError::NoCloser {
                position: position_string(geo, at),
                residue: here,
            })?;
            path.push(k);
            (at, j, here) = (next, k, closer);
            steps += 1;
        }
    }
}

impl<W: Word, R: Residues + ?Sized> Walker<'_, W, R> {
    /// [`walk`](Self::walk) to a value no higher than `limit`, whatever
    /// stops it otherwise refused as a [`ResolveError`] naming `part`.
    fn value(
        &self,
        part: Part<W>,
        i: u64,
        here: u8,
        limit: u16,
        known: &mut impl FnMut(u64) -> Option<Known>,
        path: &mut Vec<u64>,
    ) -> Result<u16, ResolveError> {
        let position = || position_string(&self.spec.geometry, part);
        match self.walk(part, i, here, limit, known, path)? {
            None => Err(ResolveError::Descent(DescentError::TooLong {
                position: position(),
                max_steps: limit,
            })),
            Some(value) if value > limit => Err(ResolveError::TooHigh {
                position: position(),
                remoteness: value,
                max: limit,
            }),
            Some(value) => Ok(value),
        }
    }
}

/// The largest remoteness a resolution allows: the class's stored largest
/// (`max`), and never above what a [`Cell`] holds.
fn limit_of(max: Option<Remoteness>) -> u16 {
    max.map_or(u16::from(Cell::MAX_REMOTENESS), |m| {
        m.0.min(u16::from(Cell::MAX_REMOTENESS))
    })
}

/// The tight index of the goal of `spec`, when its residue is 0 as it must
/// be; else the refusal.
fn checked_goal<W: Word, R: Residues + ?Sized>(
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    residues: &R,
) -> Result<u64, ResolveError> {
    if residues.len() != index.len() {
        return Err(ResolveError::Length {
            table: residues.len(),
            legal: index.len(),
        });
    }
    let goal = index.rank(spec.goal);
    let residue = goal.and_then(|g| residues.get(g));
    match (goal, residue) {
        (Some(g), Some(0)) => Ok(g),
        _ => Err(DescentError::Goal {
            position: position_string(&spec.geometry, spec.goal),
            residue,
        }
        .into()),
    }
}

/// A cell not resolved yet, while [`resolve`] runs.
const UNRESOLVED: u8 = Cell::ILLEGAL.0;

/// The exact remoteness of every position of the class `spec`, whose tight
/// index is `index`, from its residues: one [`Cell`] byte per position in
/// tight-index order, [`Cell::UNREACHABLE`] where the residue is `None`.
/// `max` is the largest remoteness the class is known to have (stored with
/// it), if any.
///
/// Each position is resolved once, by descent with memoisation (see the
/// [module docs](self)), in parallel over blocks on the current rayon pool;
/// threads that meet on a path write the same values, since the walk is
/// deterministic. Memory: the output (one byte per position) besides the
/// residues.
///
/// The result is what the residues say, not a proof: a damaged table can
/// resolve to values that break the rules without failing here, which is
/// what [`check`](crate::check) looks for.
///
/// # Errors
///
/// A [`ResolveError`] naming a position: a descent fails ([`DescentError`]),
/// or a value is above `max` or [`Cell::MAX_REMOTENESS`]; or the table's
/// length is not the class's.
pub fn resolve<W: Word>(
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    residues: &Mod3Table,
    max: Option<Remoteness>,
) -> Result<Vec<u8>, ResolveError> {
    let goal = checked_goal(spec, index, residues)?;
    let limit = limit_of(max);
    let mut cells = vec![UNRESOLVED; index.len() as usize];
    cells[goal as usize] = 0;
    {
        // SAFETY: `AtomicU8` has the size and alignment of `u8`, and `cells`
        // is borrowed only through `table` in this scope.
        let table: &[AtomicU8] = unsafe { &*(cells.as_mut_slice() as *mut [u8] as *const [AtomicU8]) };
        let walker = Walker { spec, index, residues };
        let black_count = index.black();
        let failure = (0..index.white_sets() as usize)
            .into_par_iter()
            .with_min_len(16)
            .map_init(Vec::new, |path, r| {
                let r = r as u64;
                let block = index.block(r);
                if block.is_empty() {
                    return None;
                }
                let white = colex_unrank(r, index.white());
                for (i, black) in block.zip(Subsets::new(index.safe(r), black_count)) {
                    if table[i as usize].load(Ordering::Relaxed) != UNRESOLVED {
                        continue;
                    }
                    let Some(here) = residues.get(i) else {
                        table[i as usize].store(Cell::UNREACHABLE.0, Ordering::Relaxed);
                        continue;
                    };
                    let part = Part { white, black };
                    let mut known = |j: u64| {
                        let v = table[j as usize].load(Ordering::Relaxed);
                        (v != UNRESOLVED).then_some(Known::Exact(u16::from(v)))
                    };
                    match walker.value(part, i, here, limit, &mut known, path) {
                        Err(e) => return Some(e),
                        Ok(value) => {
                            for (t, &j) in path.iter().enumerate() {
                                table[j as usize].store((value - t as u16) as u8, Ordering::Relaxed);
                            }
                        }
                    }
                }
                None
            })
            .find_map_first(|failure| failure);
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(cells)
}

/// A bounded memo of descent values for [`Resolver`]: a direct-mapped
/// table of slots, each holding one tight index and its value, where a
/// value for another index that maps to the same slot replaces the older.
/// Threads share it without locks: every value stored is the deterministic
/// descent value of its position, so a lost or replaced entry costs a walk
/// again, never a wrong answer.
struct Memo {
    slots: Vec<AtomicU64>,
    /// The slot of index `i` is the top bits of `i` times a constant.
    shift: u32,
}

impl Memo {
    /// A memo of at most `bytes` (a power of two slots of 8 bytes).
    fn new(bytes: u64) -> Memo {
        // The largest power of two that fits.
        let slots = 1u64 << (63 - (bytes / 8).max(2).leading_zeros());
        Memo {
            slots: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            shift: 64 - slots.trailing_zeros(),
        }
    }

    #[inline]
    fn slot(&self, i: u64) -> &AtomicU64 {
        // Fibonacci hashing: neighbouring indices land far apart.
        &self.slots[(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize]
    }

    /// The value stored for index `i`, if its slot still holds it.
    #[inline]
    fn get(&self, i: u64) -> Option<u16> {
        let entry = self.slot(i).load(Ordering::Relaxed);
        (entry >> 16 == i + 1).then_some(entry as u16)
    }

    /// Stores `value` for index `i` (below 2^47), replacing what its slot held.
    #[inline]
    fn put(&self, i: u64, value: u16) {
        self.slot(i).store((i + 1) << 16 | u64::from(value), Ordering::Relaxed);
    }
}

/// Exact remoteness from residues one position at a time, in bounded
/// memory: what [`resolve`] gives for a whole class, for a reader that
/// cannot hold a byte per position (an export of 11x10 or 12x10).
///
/// Each position is settled by a walk down the table (`Walker::walk`) with a bounded memo of
/// values already found instead of a byte table: walks from positions of
/// one block mostly meet the values of their neighbours in that block
/// (the walk prefers black moves, which stay in it), so a memo of a few
/// hundred megabytes saves most of the walking. Memory: the residues (two
/// bits a position) and the memo. Any number of threads may ask at once.
///
/// # Examples
///
/// ```
/// use bishops::mod3::{Mod3Table, exact::Resolver};
/// use bishops::solver;
/// use bishops::{Cell, Variant};
///
/// let variant = Variant::named("5x4").unwrap();
/// let spec = &variant.classes()[0];
/// let index = spec.tight_index();
/// let cells = solver::search::bytes("5x4", spec, &index, &mut |_| {}).unwrap();
/// let residues = Mod3Table::from_cells(&cells);
/// let resolver = Resolver::new(spec, &index, &residues, None, 1 << 12).unwrap();
/// let start = index.rank(spec.start).unwrap();
/// assert_eq!(resolver.cell(spec.start, start, &mut Vec::new()).unwrap(), Cell(18));
/// ```
pub struct Resolver<'a, W: Word = u64, R: Residues + ?Sized = Mod3Table> {
    walker: Walker<'a, W, R>,
    memo: Memo,
    limit: u16,
}

impl<'a, W: Word, R: Residues + ?Sized> Resolver<'a, W, R> {
    /// A resolver of the class `spec`, whose tight index is `index` and
    /// residues `residues`, no value above `max` (the class's stored
    /// largest remoteness), with a memo of at most `memo_bytes`.
    ///
    /// # Errors
    ///
    /// [`ResolveError::Length`] when the table is not the class's, a
    /// [`DescentError::Goal`] when the goal's residue is not 0.
    pub fn new(
        spec: &'a ClassSpec<W>,
        index: &'a TightIndex<W>,
        residues: &'a R,
        max: Option<Remoteness>,
        memo_bytes: u64,
    ) -> Result<Resolver<'a, W, R>, ResolveError> {
        let goal = checked_goal(spec, index, residues)?;
        let memo = Memo::new(memo_bytes);
        memo.put(goal, 0);
        Ok(Resolver {
            walker: Walker { spec, index, residues },
            memo,
            limit: limit_of(max),
        })
    }

    /// The exact remoteness of `part`, whose tight index is `i`, as a
    /// cell ([`Cell::UNREACHABLE`] where its residue says so); `path` is
    /// scratch space.
    ///
    /// # Errors
    ///
    /// A [`ResolveError`] naming a position, as [`resolve`] gives.
    pub fn cell(&self, part: Part<W>, i: u64, path: &mut Vec<u64>) -> Result<Cell, ResolveError> {
        let Some(here) = self.walker.residues.get(i) else {
            return Ok(Cell::UNREACHABLE);
        };
        if let Some(value) = self.memo.get(i) {
            return Ok(Cell(value as u8));
        }
        let mut known = |j: u64| self.memo.get(j).map(Known::Exact);
        let value = self.walker.value(part, i, here, self.limit, &mut known, path)?;
        for (t, &j) in path.iter().enumerate() {
            self.memo.put(j, value - t as u16);
        }
        Ok(Cell(value as u8))
    }

    /// The cells of the whole block of white-set rank `r`, in its order:
    /// what [`cell`](Self::cell) gives for each of its positions, mostly
    /// without walking. A black move keeps the white set, so it stays in
    /// the block, and a move of a black bishop to a lower cell leads to a
    /// black set earlier in colex order, already settled when the block is
    /// read in order; the value here follows from the value there and the
    /// two residues (one more, the same or one less, as the moves can be
    /// undone). Only a position with no such move is walked.
    ///
    /// # Errors
    ///
    /// As [`cell`](Self::cell); [`ResolveError::Descent`] naming a
    /// position whose residue and its neighbour's disagree on reaching the
    /// goal, or that would go below 0 or above the largest remoteness: no
    /// search leaves that.
    pub fn block(&self, r: u64, path: &mut Vec<u64>) -> Result<Vec<u8>, ResolveError> {
        let Walker { spec, index, residues } = self.walker;
        let geo = &spec.geometry;
        let (start, safe) = (index.block(r).start, index.safe(r));
        let white = colex_unrank::<W>(r, index.white());
        let end = index.block(r).end;
        let mut cells = Vec::with_capacity((end - start) as usize);
        // The block's codes, read at once: from a file, a lookup a position
        // would cost far more than the position's own work.
        let first = start / PER_WORD;
        let words = residues.words(first..end.div_ceil(PER_WORD).max(first));
        for (black, i) in Subsets::new(safe, index.black()).zip(start..) {
            let part = Part { white, black };
            let code = (words[(i / PER_WORD - first) as usize] >> (2 * (i % PER_WORD))) as u8 & 3;
            let Some(here) = (code != UNSEEN).then_some(code) else {
                cells.push(Cell::UNREACHABLE.0);
                continue;
            };
            let empty = !(white | black) & geo.all();
            let earlier = black.into_iter().find_map(|from| {
                let below = Bitboard::below(from);
                let to = (geo.attacks(from, white | black) & empty & safe & below)
                    .into_iter()
                    .next()?;
                Some(black.without(from).with(to))
            });
            let value = match earlier {
                Some(before) => {
                    let there = cells[rank_within(before, safe) as usize];
                    let wrong = || {
                        ResolveError::Descent(DescentError::NoCloser {
                            position: position_string(geo, part),
                            residue: here,
                        })
                    };
                    if there == Cell::UNREACHABLE.0 {
                        return Err(wrong());
                    }
                    let (there, was) = (u16::from(there), there % 3);
                    let value = match (here + 3 - was) % 3 {
                        0 => there,
                        1 => there + 1,
                        _ => there.checked_sub(1).ok_or_else(wrong)?,
                    };
                    if value > self.limit {
                        return Err(wrong());
                    }
                    value as u8
                }
                None => self.cell(part, i, path)?.0,
            };
            cells.push(value);
        }
        Ok(cells)
    }
}

/// The most memory a resolved read of a residues class keeps of values
/// already found ([`Resolver`]), besides the residues.
pub const MEMO_BYTES: u64 = 256 << 20;

/// Positions a resolved read works out together, in parallel, before it
/// hands them on in order.
const WINDOW: u64 = 1 << 20;

/// Works out the cells of every block of `index` from white set `from` on
/// by `cells_of(path, r)`, a window of about `WINDOW` (2^20) positions at a
/// time in parallel, and hands them to `f(r, cells)` in block order; a
/// refusal becomes `fault`'s error. `prepare` is told each window's
/// positions before its blocks are worked out
/// ([`Residues::prepare`]).
pub fn in_windows<W: Word>(
    index: &TightIndex<W>,
    (from, prepare): (u64, &dyn Fn(Range<u64>)),
    cells_of: impl Fn(&mut Vec<u64>, u64) -> std::result::Result<Vec<u8>, ResolveError> + Sync,
    fault: impl Fn(ResolveError) -> crate::error::Error,
    mut f: impl FnMut(u64, &[u8]) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    let mut first = from;
    while first < index.white_sets() {
        let mut end = first + 1;
        while end < index.white_sets() && index.block(end).end - index.block(first).start < WINDOW {
            end += 1;
        }
        let last = if end < index.white_sets() {
            index.block(end).start
        } else {
            index.len()
        };
        prepare(index.block(first).start..last);
        let window: Vec<Vec<u8>> = (first..end)
            .into_par_iter()
            .map_init(Vec::new, |path, r| cells_of(path, r))
            .collect::<std::result::Result<_, _>>()
            .map_err(&fault)?;
        for (r, cells) in (first..end).zip(window) {
            f(r, &cells)?;
        }
        first = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    /// [`Toward`] asks of every move once, black ones first and then white
    /// ones by how near the goal they bring a bishop; it stops at the first
    /// closer neighbour, and at the first failed lookup.
    #[test]
    fn toward_tries_black_moves_first_then_white_ones_nearest_the_goal() {
        let variant = Variant::named("7x6").unwrap();
        for spec in variant.classes() {
            let geo = &spec.geometry;
            let toward = Toward::new(geo, spec.goal);
            let mut moves = Vec::new();
            spec.start.for_each_move(geo, |_, _, _, after| moves.push(after));
            // No residue is 3: every move is asked about, none is closer.
            let mut asked = Vec::new();
            let none = toward.closer(geo, spec.start, 3, |after| {
                asked.push(after);
                Ok::<_, ()>(Some(0))
            });
            assert_eq!(none, Ok(None));
            assert_eq!(asked.len(), moves.len());
            assert!(moves.iter().all(|m| asked.contains(m)));
            let whites = asked.iter().position(|a| a.white != spec.start.white).unwrap();
            assert!(asked[whites..].iter().all(|a| a.white != spec.start.white));
            let nearness =
                |after: &Part| -> u16 { after.white.into_iter().map(|c| toward.distance[usize::from(c)]).sum() };
            assert!(asked[whites..].windows(2).all(|w| nearness(&w[0]) <= nearness(&w[1])));
            // The first closer one ends the search; so does the first error.
            let target = asked[whites + 1];
            let found = toward.closer(geo, spec.start, 1, |after| Ok::<_, ()>(Some(u8::from(after == target))));
            assert_eq!(found, Ok(Some(target)));
            let mut tried = 0;
            let failed = toward.closer(geo, spec.start, 1, |_| {
                tried += 1;
                Err::<Option<u8>, _>("unreadable")
            });
            assert_eq!((failed, tried), (Err("unreadable"), 1));
        }
    }

    /// The bounded resolver gives every position the value the whole-class
    /// resolution gives, with a memo so small that entries keep replacing
    /// each other, and from any number of threads.
    #[test]
    fn the_resolver_agrees_with_resolve() {
        for name in ["5x4", "7x6", "5x4-full", "9x6"] {
            let variant = Variant::named(name).unwrap();
            for spec in variant.classes() {
                let index = spec.tight_index();
                let cells = crate::solver::search::bytes(name, spec, &index, &mut |_| {}).unwrap();
                let residues = Mod3Table::from_cells(&cells);
                let whole = resolve(spec, &index, &residues, None).unwrap();
                assert_eq!(whole, cells, "{name}");
                for memo in [16, 1 << 12, 1 << 20] {
                    let resolver = Resolver::new(spec, &index, &residues, None, memo).unwrap();
                    let one_by_one: Vec<u8> = (0..index.len())
                        .into_par_iter()
                        .map_init(Vec::new, |path, i| resolver.cell(index.unrank(i), i, path).unwrap().0)
                        .collect();
                    assert!(one_by_one == whole, "{name} with a memo of {memo} bytes");
                    let by_blocks: Vec<u8> = (0..index.white_sets())
                        .into_par_iter()
                        .map_init(Vec::new, |path, r| resolver.block(r, path).unwrap())
                        .flatten()
                        .collect();
                    assert!(by_blocks == whole, "{name} by blocks with a memo of {memo} bytes");
                }
            }
        }
    }

    /// A damaged table is refused by the resolver as by `resolve`.
    #[test]
    fn the_resolver_refuses_damage() {
        let variant = Variant::named("7x6").unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let cells = crate::solver::search::bytes("7x6", spec, &index, &mut |_| {}).unwrap();
        let mut residues = Mod3Table::from_cells(&cells);
        let goal = index.rank(spec.goal).unwrap();
        residues.set(goal, Some(1));
        assert!(matches!(
            Resolver::new(spec, &index, &residues, None, 1 << 10).err(),
            Some(ResolveError::Descent(DescentError::Goal { .. }))
        ));
        // Every position at 0 mod 3: none has a neighbour at 2 mod 3.
        let flat = Mod3Table::from_cells(&vec![0; index.len() as usize]);
        let resolver = Resolver::new(spec, &index, &flat, None, 1 << 10).unwrap();
        let start = index.rank(spec.start).unwrap();
        assert!(matches!(
            resolver.cell(spec.start, start, &mut Vec::new()),
            Err(ResolveError::Descent(DescentError::NoCloser { .. }))
        ));
        assert!(Resolver::new(spec, &index, &Mod3Table::new(3), None, 64).is_err());
    }

    /// The walk's neighbours are exactly the moves of `Part::for_each_move`,
    /// in its order (black moves first), each with its tight index.
    #[test]
    fn walker_neighbours_are_the_moves() {
        for name in ["5x4", "7x4", "5x4-full"] {
            let variant = Variant::named(name).unwrap();
            for spec in variant.classes() {
                let index = spec.tight_index();
                let residues = Mod3Table::new(index.len());
                let walker = Walker {
                    spec,
                    index: &index,
                    residues: &residues,
                };
                for i in 0..index.len() {
                    let part = index.unrank(i);
                    let mut expected = Vec::new();
                    part.for_each_move(&spec.geometry, |_, _, _, after| {
                        expected.push((after, index.rank(after).unwrap()));
                    });
                    let mut seen = Vec::new();
                    let none: Option<()> = walker.find_neighbour(part, |after, k| {
                        seen.push((after, k));
                        None
                    });
                    assert!(none.is_none());
                    assert_eq!(expected, seen, "{name} {i}");
                    let black_first = seen.iter().take_while(|(p, _)| p.white == part.white).count();
                    assert!(
                        seen[black_first..].iter().all(|(p, _)| p.white != part.white),
                        "{name} {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn descent_gives_the_exact_remoteness_and_a_best_move() {
        let variant = Variant::named("7x4").unwrap();
        let spec = &variant.classes()[0];
        let solved = crate::solver::Plan::new(&variant, crate::solver::Method::Tight)
            .solve(&mut |_| {})
            .unwrap();
        let class = &solved.classes[0];
        let cells = class.own().unwrap();
        let exact = |p: crate::Part| cells[class.index.rank(p).unwrap() as usize];
        for i in 0..class.index.len() {
            let part = class.index.unrank(i);
            let descent = descend(&spec.geometry, spec.goal, part, 253, |p| Some(exact(p) % 3))
                .unwrap()
                .unwrap();
            assert_eq!(descent.remoteness, crate::Remoteness(u16::from(cells[i as usize])));
            match descent.best {
                None => assert_eq!(part, spec.goal),
                Some(best) => assert_eq!(exact(best) + 1, exact(part)),
            }
        }
        assert_eq!(
            descend(&spec.geometry, spec.goal, spec.start, 253, |_| None).unwrap(),
            None
        );
    }
}
