//! The two-bit search: the remoteness mod 3 in 2 bits per legal position
//! and nothing else per position, for boards whose byte table does not fit
//! in memory (after Korf's two-bit breadth-first search: R. E. Korf,
//! "Minimizing Disk I/O in Two-Bit Breadth-First Search", AAAI 2008).
//!
//! The table holds, per position, a [code](Mod3Table::get): unseen, or the
//! remoteness mod 3. That is enough to run the search and to answer exact
//! queries afterwards, because the state graph is undirected: the
//! neighbours of a position at remoteness `k` are at `k − 1`, `k` or
//! `k + 1`, which differ mod 3, so a neighbour whose residue is one less
//! mod 3 is exactly one move closer ([`exact::descend`](super::exact::descend)).
//!
//! # A layer
//!
//! Layer `d` finds layer `d + 1` in one of two directions:
//!
//! - *pull*: every unseen position with a neighbour coded `d mod 3` is at
//!   `d + 1`. An unseen position lies deeper than `d`, so each of its
//!   neighbours lies at `d` or deeper, and one coded `d mod 3` is at `d`
//!   exactly.
//! - *push*: every position coded `d mod 3` is expanded and its unseen
//!   neighbours are at `d + 1`. The code also marks layers `d − 3`,
//!   `d − 6`, …; their neighbours were all reached long ago, so expanding
//!   them again costs time and changes nothing. Only the blocks that hold a
//!   position of layer `d` are visited, so while the layers grow little is
//!   expanded twice.
//!
//! Besides the table the search keeps a *summary* byte per block (white
//! set): [`CURRENT`](super::mod3::CURRENT), the block holds a position of layer `d`; [`NEXT`](super::mod3::NEXT), a
//! position of layer `d + 1` has been written into it (set by whoever
//! writes one, and turned into `CURRENT` between layers); [`UNSEEN_LEFT`](super::mod3::UNSEEN_LEFT),
//! it may hold an unseen position (cleared by a pull that sees none left).
//! A push visits the `CURRENT` blocks; a pull visits the `UNSEEN_LEFT`
//! blocks and tries only moves into `CURRENT` blocks.
//!
//! As in the byte search ([`parallel`](super::parallel)), a position and its
//! images under the class's [`Symmetries`] are equally far from the goal:
//! a layer expands (push) or tests (pull) only the canonical position of
//! each orbit, and every position it writes has its images written with it.
//!
//! # Push or pull
//!
//! Each layer takes the direction that should cost less, from the time per
//! position of the latest layer of each kind
//! ([`Rates`](super::Rates)): a pull costs its rate times the unseen
//! positions, a push its rate times the positions coded `d mod 3` in the
//! `CURRENT` blocks (older layers included). That count needs a pass over
//! the `CURRENT` blocks, so it is made only when the bounds do not settle
//! it already (at least the layer itself, at most every position coded
//! `d mod 3`).
//!
//! # The hardest positions
//!
//! The code of a position no longer tells the last layer from older ones
//! with its residue, so the hardest positions ([`HARDEST`](super::HARDEST) of the last
//! layer, lowest public hash first) are kept as the search goes: every
//! position is written once, by one thread, and each thread keeps the
//! lowest tight indices it wrote in the layer (tight-index order is
//! public-hash order); when a class is the mirror image of the searched one
//! ([`Mirror`]), each thread also keeps the lowest public hashes of the
//! mirror images, in that class, of the positions it wrote, ranking an image
//! only when a cheap lower bound (from its white set's highest cell) says
//! it could be among them. When a layer finds nothing, the lists of the
//! layer before are the answer ([`LayerHardest`](super::LayerHardest)).
//!
//! # One search, whole or shared
//!
//! The layer loop is that of a worker of the partitioned two-bit search
//! ([`partition::worker`](super::partition::worker)): a whole class in
//! one process is the share of one worker, whose exchanges do nothing
//! ([`search_with`]). At a layer boundary the search's whole state is the
//! table, the summary, the count of each layer and the newest layer's
//! [`LayerHardest`](super::LayerHardest): the worker hands them to its
//! [`ShareCheckpoints`] and can start from a saved one.
//!
//! # Memory
//!
//! 2 bits per legal position of the class, a summary byte and a
//! canonical-block flag per white set, and the tight index tables: 14.95 GiB
//! of table for a class of 12x10. When the two classes are mirror images
//! only one is searched and the other is answered through the mirror
//! ([`ClassTable::Mirrored`](super::ClassTable::Mirrored)), so no second table is ever built.

use crate::error::Result;
use crate::index::DenseIndex;
use crate::symmetry::{Mirror, Symmetries};
use crate::tight::TightIndex;
use crate::variant::ClassSpec;

use super::boundary::{NoCheckpoints, ShareCheckpoints};
use super::layer::Event;
use super::partition::worker::{self, Asked, TwoBitShare};
use super::partition::{ChannelTransport, ClassSearch, Partition};
use super::table::codes::CodeTable;

/// Searches one class by two bits per position on the current rayon pool,
/// telling `observe` of each layer.
///
/// # Errors
///
/// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness would not fit
/// a [`Remoteness`](crate::Remoteness).
pub fn search(name: &str, spec: &ClassSpec, index: &TightIndex, observe: &mut dyn FnMut(Event)) -> Result<TwoBitShare> {
    search_with(name, spec, index, None, &mut NoCheckpoints, observe)
}

/// As [`search`], resuming from `checkpoints` when it has a saved state for
/// the class ([`ShareCheckpoints::resume_two_bit_share`] of the whole class)
/// and handing it the state at layer boundaries
/// ([`ShareCheckpoints::save_two_bit_share`]). A resumed search reports its
/// saved layers again, in order, before the new ones.
///
/// `mirrored`, when a class is the mirror image of this one: the map from
/// this class's cells to that class's and that class's public hash; the
/// search then keeps that class's hardest positions as well
/// ([`TwoBitShare::mirrored_hardest`](super::partition::worker::Share::mirrored_hardest)).
///
/// # Errors
///
/// As [`search`], and whatever `checkpoints` fails with.
pub fn search_with(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    mirrored: Option<(&Mirror, &DenseIndex)>,
    checkpoints: &mut dyn ShareCheckpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<TwoBitShare> {
    let symmetries = Symmetries::of(&spec.geometry, spec.goal);
    search_by(name, spec, index, &symmetries, mirrored, checkpoints, observe)
}

/// As [`search_with`], expanding one position of each orbit of
/// `symmetries`, which must be symmetries of the class: the partitioned
/// two-bit search by one worker, whose exchanges do nothing.
fn search_by(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    symmetries: &Symmetries,
    mirrored: Option<(&Mirror, &DenseIndex)>,
    checkpoints: &mut dyn ShareCheckpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<TwoBitShare> {
    let mut solo = ChannelTransport::solo();
    let class = ClassSearch {
        name,
        spec,
        index,
        symmetries,
        partition: &Partition::by_work(spec, index, 1)?,
    };
    let asked = Asked { mirrored, watch: &[] };
    // One process exchanges nothing, and says nothing of it.
    worker::search_on::<CodeTable, _>(&class, &mut solo, asked, checkpoints, false, observe)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoteness::Cell;
    use crate::solver::{Method, Plan};
    use crate::variant::Variant;

    #[test]
    fn descent_gives_the_exact_remoteness_and_a_best_move() {
        let variant = Variant::named("7x4").unwrap();
        let spec = &variant.classes()[0];
        let solved = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();
        let class = &solved.classes[0];
        let cells = class.own().unwrap();
        let exact = |p: crate::Part| cells[class.index.rank(p).unwrap() as usize];
        for i in 0..class.index.len() {
            let part = class.index.unrank(i);
            let descent = super::super::exact::descend(&spec.geometry, spec.goal, part, 253, |p| Some(exact(p) % 3))
                .unwrap()
                .unwrap();
            assert_eq!(descent.remoteness, crate::Remoteness(u16::from(cells[i as usize])));
            match descent.best {
                None => assert_eq!(part, spec.goal),
                Some(best) => assert_eq!(exact(best) + 1, exact(part)),
            }
        }
        assert_eq!(
            super::super::exact::descend(&spec.geometry, spec.goal, spec.start, 253, |_| None).unwrap(),
            None
        );
    }

    #[test]
    fn two_bit_search_matches_the_byte_search() {
        for name in ["5x4", "7x4", "5x4-full", "7x5-full", "5x3-full", "6x4-full", "8x4-full"] {
            let variant = Variant::named(name).unwrap();
            let bytes = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();
            let two = Plan::new(&variant, Method::Tight).solve_two_bit(&mut |_| {}).unwrap();
            for (k, (b, t)) in bytes.classes.iter().zip(&two.classes).enumerate() {
                assert_eq!(b.stats, t.stats, "{name} class {k}");
                let cells = bytes.class_cells(k);
                for i in 0..b.index.len() {
                    let expected = Cell(cells[i as usize]).remoteness().map(|r| (r.0 % 3) as u8);
                    assert_eq!(
                        two.residue(k, b.index.unrank(i)),
                        expected,
                        "{name} class {k} index {i}"
                    );
                }
            }
        }
    }

    /// The search with the class's symmetries and without gives one table
    /// and one set of statistics, the mirrored class's hardest included.
    #[test]
    fn the_group_changes_nothing_but_the_work() {
        for name in ["7x6", "5x4-full", "5x3-full", "7x5-full", "6x4-full"] {
            let variant = Variant::named(name).unwrap();
            let specs = variant.classes();
            let spec = &specs[0];
            let index = spec.tight_index();
            let partner = specs.get(1).and_then(|other| {
                let mirror = Mirror::left_right(&spec.geometry, &other.geometry)?;
                (mirror.part(spec.start) == other.start).then_some((mirror, other.index))
            });
            let images = partner.as_ref().map(|(m, d)| (m, d));
            let run = |symmetries: &Symmetries| {
                search_by(name, spec, &index, symmetries, images, &mut NoCheckpoints, &mut |_| {}).unwrap()
            };
            let with = run(&Symmetries::of(&spec.geometry, spec.goal));
            let without = run(&Symmetries::trivial(&spec.geometry));
            assert!(with.table == without.table, "{name}");
            assert_eq!(with.layers, without.layers, "{name}");
            assert_eq!(with.hardest, without.hardest, "{name}");
            assert_eq!(with.mirrored_hardest, without.mirrored_hardest, "{name}");
            assert_eq!(with.mirrored_hardest.is_some(), partner.is_some(), "{name}");
        }
    }
}
