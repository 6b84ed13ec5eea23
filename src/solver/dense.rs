//! The simple search: one core, one byte per public hash.
//!
//! Every hash of R(n, w, b) gets a byte, marked illegal or not yet reached;
//! the search keeps its frontier as a list of hashes. It needs far more
//! memory than [`search`](super::search) on large boards but is easy to
//! check, and the tests hold the two to the same answers.

use crate::bitboard::Word;
use crate::error::{Error, Result};
use crate::index::{binomial, colex_unrank, compress};
use crate::remoteness::Cell;
use crate::rules::safe_cells;
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

use super::layer::{BYTE_DEEPEST, Event, goal_index, report_saved, too_deep};

/// The largest dense index this search allocates for one class: one byte per
/// entry, so this is also its table's memory in bytes.
const MAX_DENSE_ENTRIES: u64 = 1 << 32;

/// Searches one class over its dense public hash and returns the cells of
/// its legal positions in `index` order.
///
/// # Errors
///
/// [`Error::TooLarge`] when the dense index is over 2^32 entries or
/// a remoteness would not fit a [`Cell`].
pub fn search<W: Word>(
    name: &str,
    spec: &ClassSpec<W>,
    index: &TightIndex<W>,
    observe: &mut dyn FnMut(Event),
) -> Result<Vec<u8>> {
    let len = spec.index.len();
    if len > MAX_DENSE_ENTRIES {
        return Err(Error::TooLarge(format!(
            "variant {name}: the {} class has {len} hash entries, more than the dense search's {MAX_DENSE_ENTRIES}",
            spec.class.name()
        )));
    }
    let mut cells = legal_cells(spec);
    let legal = index.len();

    // Legal cells not yet reached hold UNREACHABLE; what is left so after the
    // search is unreachable.
    let goal = spec.index.rank(spec.goal);
    debug_assert_eq!(index.to_hash(goal_index(spec, index)), goal);
    cells[goal as usize] = 0;
    let mut frontier = vec![goal];
    let mut total = report_saved(spec.class, &[1], legal, observe);
    let mut depth: u8 = 0;
    while !frontier.is_empty() {
        if depth == Cell::MAX_REMOTENESS {
            return Err(too_deep(name, BYTE_DEEPEST));
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
                legal,
                direction: None,
                resumed: None,
            });
        }
        frontier = next;
    }
    // Legal hashes in hash order are the tight index's order.
    Ok(cells.into_iter().filter(|&c| Cell(c).is_legal()).collect())
}

/// A table with every legal hash marked [`Cell::UNREACHABLE`] and every other
/// one [`Cell::ILLEGAL`].
///
/// Hashes are grouped by white set, so each white set's safe cells are
/// computed once and each black set is checked with one subset test.
fn legal_cells<W: Word>(spec: &ClassSpec<W>) -> Vec<u8> {
    let (white, black) = spec.counts();
    let n = spec.geometry.len() as u32;
    let per_white = binomial(n - white, black);
    let whites = binomial(n, white);
    let mut cells = vec![Cell::ILLEGAL.0; spec.index.len() as usize];
    for (w, chunk) in (0..whites).zip(cells.chunks_mut(per_white as usize)) {
        let white_set = colex_unrank(w, white);
        let free = !white_set & spec.geometry.all();
        // Black sets are ranked among the free cells; the safe ones among them:
        let safe = compress(safe_cells(&spec.geometry, white_set), free);
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
    use crate::variant::Variant;

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
}
