//! Retrograde breadth-first search: the remoteness of every position.
//!
//! Every move can be undone, so the state graph is undirected and the
//! remoteness of a position is its breadth-first distance from the goal. The
//! search starts at the goal and fills a table with one [`Cell`] byte per
//! index of the public hash, layer by layer. A variant with two colour
//! classes is solved as two independent class puzzles: a whole-board
//! remoteness is the sum of the two class values.

use std::time::{Duration, Instant};

use crate::board::Class;
use crate::error::{Error, Result};
use crate::index::colex_unrank;
use crate::remoteness::{Cell, Remoteness};
use crate::rules::safe_cells;
use crate::variant::{ClassSpec, Variant};

/// How many of the hardest positions a solution keeps per class.
pub const HARDEST: usize = 10;

/// Something worth telling a watching user while solving.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A class's legal positions have been counted.
    Counted {
        /// The class.
        class: Class,
        /// How many legal positions it has.
        legal: u64,
    },
    /// A search layer is complete.
    Layer {
        /// The class.
        class: Class,
        /// The remoteness of the layer.
        depth: u16,
        /// Positions in the layer.
        found: u64,
        /// Positions found so far in the class, this layer included.
        total: u64,
    },
}

/// Facts about one solved class, computed from its table.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ClassStats {
    /// Legal positions.
    pub legal: u64,
    /// Legal positions that reach the goal.
    pub reachable: u64,
    /// `histogram[r]`: how many positions have remoteness `r`.
    pub histogram: Vec<u64>,
    /// Hashes of up to [`HARDEST`] positions of the largest remoteness, lowest first.
    pub hardest: Vec<u64>,
}

impl ClassStats {
    /// Counts `cells`, one per hash.
    pub fn of(cells: &[u8]) -> ClassStats {
        let mut stats = ClassStats::default();
        for &byte in cells {
            let cell = Cell(byte);
            if !cell.is_legal() {
                continue;
            }
            stats.legal += 1;
            if let Some(r) = cell.remoteness() {
                stats.reachable += 1;
                let r = usize::from(r.0);
                if stats.histogram.len() <= r {
                    stats.histogram.resize(r + 1, 0);
                }
                stats.histogram[r] += 1;
            }
        }
        if let Some(max) = stats.max_remoteness() {
            stats.hardest = cells
                .iter()
                .enumerate()
                .filter(|&(_, &c)| Cell(c).remoteness() == Some(max))
                .map(|(h, _)| h as u64)
                .take(HARDEST)
                .collect();
        }
        stats
    }

    /// The largest remoteness of any position, if any reaches the goal.
    pub fn max_remoteness(&self) -> Option<Remoteness> {
        (!self.histogram.is_empty()).then(|| Remoteness(self.histogram.len() as u16 - 1))
    }
}

/// The solved table of one colour class.
#[derive(Clone, Debug)]
pub struct ClassSolution {
    /// The class.
    pub class: Class,
    /// One [`Cell`] byte per public hash.
    pub cells: Vec<u8>,
    /// What the table holds.
    pub stats: ClassStats,
}

impl ClassSolution {
    /// The cell of `hash`.
    pub fn cell(&self, hash: u64) -> Cell {
        Cell(self.cells[hash as usize])
    }
}

/// A solved variant: a table per class, and how long solving took.
#[derive(Clone, Debug)]
pub struct Solution {
    /// One per class of the variant, in class order.
    pub classes: Vec<ClassSolution>,
    /// Time spent solving.
    pub elapsed: Duration,
}

/// The largest dense index this solver allocates for one class: one byte per
/// entry, so this is also its memory in bytes.
pub const MAX_DENSE_ENTRIES: u64 = 1 << 32;

/// Solves every class of `variant`, telling `observe` of each layer.
///
/// # Errors
///
/// [`Error::TooLarge`] when a class's dense index is over
/// [`MAX_DENSE_ENTRIES`] or a remoteness would not fit a [`Cell`].
///
/// # Examples
///
/// ```
/// use bishops::{Remoteness, Variant, solver};
///
/// let variant = Variant::named("5x4").unwrap();
/// let solution = solver::solve(&variant, &mut |_| {}).unwrap();
/// let class = &solution.classes[0];
/// assert_eq!(class.stats.legal, 100);
/// let start = variant.class_hashes(variant.start())[0];
/// assert_eq!(class.cell(start).remoteness(), Some(Remoteness(18)));
/// ```
pub fn solve(variant: &Variant, observe: &mut dyn FnMut(Event)) -> Result<Solution> {
    let started = Instant::now();
    let classes = variant
        .classes()
        .iter()
        .map(|spec| solve_class(variant.name(), spec, observe))
        .collect::<Result<Vec<_>>>()?;
    Ok(Solution {
        classes,
        elapsed: started.elapsed(),
    })
}

/// Solves one colour class over the dense public hash.
///
/// # Errors
///
/// As [`solve`].
pub fn solve_class(name: &str, spec: &ClassSpec, observe: &mut dyn FnMut(Event)) -> Result<ClassSolution> {
    let len = spec.index.len();
    if len > MAX_DENSE_ENTRIES {
        return Err(Error::TooLarge(format!(
            "variant {name}: the {} class has {len} hash entries, more than the dense solver's {MAX_DENSE_ENTRIES}",
            spec.class.name()
        )));
    }
    let mut cells = legal_cells(spec);
    let legal = cells.iter().filter(|&&c| Cell(c).is_legal()).count() as u64;
    observe(Event::Counted {
        class: spec.class,
        legal,
    });

    // Legal cells not yet reached hold UNREACHABLE; what is left so after the
    // search is unreachable.
    let goal = spec.index.rank(spec.goal);
    cells[goal as usize] = 0;
    let mut frontier = vec![goal];
    let mut total = 1;
    let mut depth: u8 = 0;
    observe(Event::Layer {
        class: spec.class,
        depth: 0,
        found: 1,
        total,
    });
    while !frontier.is_empty() {
        if depth == Cell::MAX_REMOTENESS {
            return Err(Error::TooLarge(format!(
                "variant {name}: a remoteness above {} does not fit the table",
                Cell::MAX_REMOTENESS
            )));
        }
        depth += 1;
        let mut next = Vec::new();
        for &hash in &frontier {
            spec.index.unrank(hash).for_each_move(&spec.geometry, |_, _, _, after| {
                let h = spec.index.rank(after);
                let cell = &mut cells[h as usize];
                if *cell == Cell::UNREACHABLE.0 {
                    *cell = depth;
                    next.push(h);
                }
            });
        }
        if !next.is_empty() {
            total += next.len() as u64;
            observe(Event::Layer {
                class: spec.class,
                depth: u16::from(depth),
                found: next.len() as u64,
                total,
            });
        }
        frontier = next;
    }
    let stats = ClassStats::of(&cells);
    Ok(ClassSolution {
        class: spec.class,
        cells,
        stats,
    })
}

/// A table with every legal hash marked [`Cell::UNREACHABLE`] and every other
/// one [`Cell::ILLEGAL`].
///
/// Hashes are grouped by white set, so each white set's safe cells are
/// computed once and each black set is checked with one subset test.
fn legal_cells(spec: &ClassSpec) -> Vec<u8> {
    let (white, black) = spec.counts();
    let n = spec.geometry.len() as u32;
    let per_white = crate::index::binomial(n - white, black);
    let whites = crate::index::binomial(n, white);
    let mut cells = vec![Cell::ILLEGAL.0; spec.index.len() as usize];
    for (w, chunk) in (0..whites).zip(cells.chunks_mut(per_white as usize)) {
        let white_set = colex_unrank(w, white);
        let free = !white_set & spec.geometry.all();
        // Black sets are ranked among the free cells; the safe ones among them:
        let safe = crate::index::compress(safe_cells(&spec.geometry, white_set), free);
        for (b, cell) in chunk.iter_mut().enumerate() {
            if colex_unrank(b as u64, black).is_subset(safe) {
                *cell = Cell::UNREACHABLE.0;
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solved(name: &str) -> (Variant, Solution) {
        let variant = Variant::named(name).unwrap();
        let solution = solve(&variant, &mut |_| {}).unwrap();
        (variant, solution)
    }

    #[test]
    fn legal_cells_agree_with_part_legality() {
        let variant = Variant::named("7x4").unwrap();
        let spec = &variant.classes()[0];
        let cells = legal_cells(spec);
        for (hash, &cell) in cells.iter().enumerate() {
            let part = spec.index.unrank(hash as u64);
            assert_eq!(Cell(cell).is_legal(), part.is_legal(&spec.geometry), "{part:?}");
        }
    }

    #[test]
    fn five_by_four() {
        let (variant, solution) = solved("5x4");
        let class = &solution.classes[0];
        assert_eq!(class.stats.legal, 100);
        assert_eq!(class.stats.reachable, 100);
        assert_eq!(class.stats.histogram.iter().sum::<u64>(), 100);
        assert_eq!(class.stats.histogram[0], 1);
        let start = variant.class_hashes(variant.start())[0];
        assert_eq!(class.cell(start), Cell(18));
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
