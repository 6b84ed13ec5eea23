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
//! set): [`CURRENT`], the block holds a position of layer `d`; [`NEXT`], a
//! position of layer `d + 1` has been written into it (set by whoever
//! writes one, and turned into `CURRENT` between layers); [`UNSEEN_LEFT`],
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
//! position of the latest layer of each kind ([`Rates`]): a pull costs its
//! rate times the unseen positions, a push its rate times the positions
//! coded `d mod 3` in the `CURRENT` blocks (older layers included). That
//! count needs a pass over the `CURRENT` blocks, so it is made only when the
//! bounds do not settle it already (at least the layer itself, at most
//! every position coded `d mod 3`). Until a kind has been timed, a pull is
//! taken to cost half a push per position (the byte search's rule,
//! frontier × 2 > unreached).
//!
//! # The hardest positions
//!
//! The code of a position no longer tells the last layer from older ones
//! with its residue, so the hardest positions ([`HARDEST`] of the last
//! layer, lowest public hash first) are kept as the search goes: every
//! position is written once, by one thread, and each thread keeps the
//! lowest tight indices it wrote in the layer (tight-index order is
//! public-hash order); when a class is the mirror image of the searched one
//! ([`Mirror`]), each thread also keeps the lowest public hashes of the
//! mirror images, in that class, of the positions it wrote, ranking an image
//! only when a cheap lower bound (from its white set's highest cell) says
//! it could be among them. When a layer finds nothing, the lists of the
//! layer before are the answer ([`LayerHardest`]).
//!
//! # Checkpoints
//!
//! At a layer boundary the search's whole state is the table, the summary,
//! the count of each layer, the newest layer's [`LayerHardest`] and the
//! measured [`Rates`]: [`search_with`] hands them to a [`Checkpoints`] after
//! every layer ([`TwoBitBoundary`]) and can start from a saved one
//! ([`TwoBitResume`](super::TwoBitResume)).
//!
//! # Memory
//!
//! 2 bits per legal position of the class, a summary byte and a
//! canonical-block flag per white set, and the tight index tables: 14.95 GiB
//! of table for a class of 12x10. When the two classes are mirror images
//! only one is searched and the other is answered through the mirror
//! ([`Residues::Mirrored`]), so no second table is ever built.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::bitboard::Bitboard;
use crate::board::Class;
use crate::error::Result;
use crate::index::{DenseIndex, binomial, colex_rank};
use crate::rules::Part;
use crate::symmetry::{BlockTest, Mirror, Symmetries};
use crate::tight::{TightIndex, prefetch};
use crate::variant::ClassSpec;

use super::boundary::{Checkpoints, LayerHardest, NoCheckpoints, TwoBitBoundary};
use super::direction::{Direction, Rates};
use super::exact::{Descent, DescentError};
use super::images::{Batch, canonical_blocks, set_images};
#[cfg(target_arch = "x86_64")]
use super::isa::Bmi2;
use super::isa::{Best, Isa, Tables};
use super::kernel::{Block, Kernel, Via};
use super::layer::each_block;
use super::layer::{Event, goal_index, report_saved, too_deep};
use super::mod3::{Codes, Mod3Table, PER_WORD, UNSEEN, code_words, count_codes};
use super::stats::{ClassStats, HARDEST};

/// Summary bit: the block holds a position of the layer being expanded.
pub const CURRENT: u8 = 1;

/// Summary bit: a position of the layer being found has been written into
/// the block; between layers it becomes [`CURRENT`]. Never set at a layer
/// boundary.
pub const NEXT: u8 = 2;

/// Summary bit: the block may hold a position no layer has reached.
pub const UNSEEN_LEFT: u8 = 4;

/// Where the residues of one class come from.
#[derive(Clone, Debug)]
pub enum Residues {
    /// The class was searched: its own table, in tight-index order.
    Searched(Mod3Table),
    /// The class mirrors class `from`: the residue of a position is that of
    /// its image under `mirror` there.
    Mirrored {
        /// The class (its place in [`TwoBitSolution::classes`]) searched instead.
        from: usize,
        /// Carries this class's cells onto those of `from`.
        mirror: Mirror,
    },
}

/// One class solved by the two-bit search.
#[derive(Clone, Debug)]
pub struct TwoBitClass {
    /// The class.
    pub class: Class,
    /// The public hash of the class.
    pub dense: DenseIndex,
    /// The tight index of the class; a searched table follows its order.
    pub index: TightIndex,
    /// The residues.
    pub residues: Residues,
    /// Exact counts and hardest positions, as the byte search gives them.
    pub stats: ClassStats,
}

/// A variant solved by the two-bit search.
#[derive(Clone, Debug)]
pub struct TwoBitSolution {
    /// One per class of the variant, in class order.
    pub classes: Vec<TwoBitClass>,
    /// Time spent solving, building the indices included.
    pub elapsed: Duration,
}

impl TwoBitSolution {
    /// The remoteness mod 3 of `part` in class `k`, `None` when it is
    /// unreachable or illegal.
    pub fn residue(&self, k: usize, part: Part) -> Option<u8> {
        let class = &self.classes[k];
        match &class.residues {
            Residues::Searched(table) => table.get(class.index.rank(part)?),
            Residues::Mirrored { from, mirror } => self.residue(*from, mirror.part(part)),
        }
    }

    /// The exact remoteness and a best move of `part`, a legal position of
    /// class `k`, whose spec is `spec`: see [`exact::descend`](super::exact::descend). `None` when it is
    /// unreachable.
    pub fn descend(&self, k: usize, spec: &ClassSpec, part: Part) -> Result<Option<Descent>, DescentError> {
        let max = self.classes[k].stats.max_remoteness().map_or(0, |r| r.0);
        super::exact::descend(&spec.geometry, spec.goal, part, max, |p| self.residue(k, p))
    }
}

/// How many positions a push of the layer coded `here` scans in the blocks
/// `blocks` of `index`: those coded `here` in the blocks flagged
/// [`CURRENT`] that may hold a canonical position. `summary` and
/// `canonical` hold the blocks from the first of `blocks`, `codes` the
/// positions from `base`.
pub(super) fn push_work(
    index: &TightIndex,
    blocks: std::ops::Range<u64>,
    codes: &[AtomicU64],
    base: u64,
    summary: &[AtomicU8],
    canonical: &[bool],
    here: u8,
) -> u64 {
    (0..(blocks.end - blocks.start) as usize)
        .into_par_iter()
        .with_min_len(1 << 10)
        .filter(|&k| summary[k].load(Ordering::Relaxed) & CURRENT != 0 && canonical[k])
        .map(|k| {
            let block = index.block(blocks.start + k as u64);
            count_codes(
                codes,
                |w| w.load(Ordering::Relaxed),
                block.start - base..block.end - base,
                here,
            )
        })
        .sum()
}

/// The lowest values offered, at most [`HARDEST`] of them, lowest first.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lowest {
    values: [u64; HARDEST],
    len: usize,
}

impl Lowest {
    /// Whether `value` would join the list.
    #[inline]
    pub(super) fn admits(&self, value: u64) -> bool {
        self.len < HARDEST || value < self.values[HARDEST - 1]
    }

    /// Adds `value` if it is among the lowest, dropping the highest when
    /// the list is full.
    #[inline]
    pub(super) fn offer(&mut self, value: u64) {
        if !self.admits(value) {
            return;
        }
        if self.len < HARDEST {
            self.len += 1;
        }
        let mut k = self.len - 1;
        while k > 0 && self.values[k - 1] > value {
            self.values[k] = self.values[k - 1];
            k -= 1;
        }
        self.values[k] = value;
    }

    pub(super) fn merge(mut self, other: &Lowest) -> Lowest {
        for &v in other.as_slice() {
            self.offer(v);
        }
        self
    }

    pub(super) fn as_slice(&self) -> &[u64] {
        &self.values[..self.len]
    }
}

/// What [`search`] finds: the table, each layer's size and the hardest
/// positions.
#[derive(Debug)]
pub struct Searched {
    /// The residues, in `index` order.
    pub table: Mod3Table,
    /// `layers[d]`: positions at remoteness `d`.
    pub layers: Vec<u64>,
    /// The tight indices of up to [`HARDEST`] positions of the last layer,
    /// lowest first.
    pub hardest: Vec<u64>,
    /// When the search was asked for them: the public hashes of the mirror
    /// images of up to [`HARDEST`] positions of the last layer, in the
    /// mirroring class, lowest first.
    pub mirrored_hardest: Option<Vec<u64>>,
}

impl Searched {
    /// Exact statistics of the searched class, whose tight index is
    /// `index`: the histogram from the layer sizes, the hardest positions
    /// from the last layer.
    pub fn stats(&self, index: &TightIndex) -> ClassStats {
        let hardest = self.hardest.iter().map(|&i| index.to_hash(i)).collect();
        self.stats_with(index, hardest)
    }

    /// Exact statistics of the class that mirrors the searched one, whose
    /// tight index is `index`, when the search kept its hardest positions.
    pub fn mirrored_stats(&self, index: &TightIndex) -> Option<ClassStats> {
        let hardest = self.mirrored_hardest.clone()?;
        Some(self.stats_with(index, hardest))
    }

    fn stats_with(&self, index: &TightIndex, hardest: Vec<u64>) -> ClassStats {
        let reachable = self.layers.iter().sum();
        ClassStats {
            legal: index.len(),
            reachable,
            histogram: if reachable == 0 {
                Vec::new()
            } else {
                self.layers.clone()
            },
            hardest,
        }
    }
}

/// Searches one class by two bits per position on the current rayon pool,
/// telling `observe` of each layer.
///
/// # Errors
///
/// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness would not fit
/// a [`Remoteness`](crate::Remoteness).
pub fn search(name: &str, spec: &ClassSpec, index: &TightIndex, observe: &mut dyn FnMut(Event)) -> Result<Searched> {
    search_with(name, spec, index, None, &mut NoCheckpoints, observe)
}

/// As [`search`], resuming from `checkpoints` when it has a saved state for
/// the class ([`Checkpoints::resume_two_bit`]) and telling it of every layer
/// boundary ([`Checkpoints::two_bit_layer`]). A resumed search reports its
/// saved layers again, in order, before the new ones.
///
/// `mirrored`, when a class is the mirror image of this one: the map from
/// this class's cells to that class's and that class's public hash; the
/// search then keeps that class's hardest positions as well
/// ([`Searched::mirrored_hardest`]).
///
/// # Errors
///
/// As [`search`], and whatever `checkpoints` fails with.
pub fn search_with(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    mirrored: Option<(&Mirror, &DenseIndex)>,
    checkpoints: &mut dyn Checkpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<Searched> {
    let symmetries = Symmetries::of(&spec.geometry, spec.goal);
    search_by(name, spec, index, &symmetries, mirrored, checkpoints, observe)
}

/// As [`search_with`], expanding one position of each orbit of
/// `symmetries`, which must be symmetries of the class.
fn search_by(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    symmetries: &Symmetries,
    mirrored: Option<(&Mirror, &DenseIndex)>,
    checkpoints: &mut dyn Checkpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<Searched> {
    let legal = index.len();
    let mirror = mirrored.map(|(mirror, dense)| MirrorHashes::new(mirror, dense, spec));
    let Begun {
        codes,
        mut summary,
        mut layers,
        done,
        mut hardest,
        mut rates,
    } = begin(spec, index, mirror.as_ref(), checkpoints);
    let mut total = report_saved(spec.class, &layers, legal, observe);
    if !done {
        let canonical = canonical_blocks(symmetries, index);
        loop {
            let depth = layers.len() as u64 - 1;
            let state = State {
                kernel: Kernel::new(&spec.geometry, index),
                isa: Best::detect(),
                index,
                symmetries,
                canonical: &canonical,
                codes: &codes,
                summary: &summary,
                mirror,
            };
            let here = (depth % 3) as u8;
            let unseen = legal - total;
            let residue: u64 = layers.iter().skip(usize::from(here)).step_by(3).sum();
            let frontier = *layers.last().expect("at least the goal's layer");
            let pull = rates.pull(frontier, residue, unseen, || state.current_work(here));
            let began = Instant::now();
            let layer = state.layer(depth, pull);
            rates.note(pull, began.elapsed(), if pull { unseen } else { layer.work });
            if layer.found == 0 {
                break;
            }
            let depth = u16::try_from(depth + 1).map_err(|_| too_deep(name, u16::MAX))?;
            total += layer.found;
            layers.push(layer.found);
            hardest = LayerHardest {
                own: layer.own.as_slice().to_vec(),
                mirrored: mirror.map(|_| layer.mirrored.as_slice().to_vec()),
            };
            next_layer(&mut summary);
            observe(Event::Layer {
                class: spec.class,
                depth,
                found: layer.found,
                total,
                legal,
                direction: Some(if pull { Direction::Pull } else { Direction::Push }),
            });
            checkpoints.two_bit_layer(TwoBitBoundary {
                class: spec.class,
                legal,
                found: &layers,
                done: false,
                codes: &codes,
                summary: &summary,
                hardest: &hardest,
                rates,
            })?;
        }
        checkpoints.two_bit_layer(TwoBitBoundary {
            class: spec.class,
            legal,
            found: &layers,
            done: true,
            codes: &codes,
            summary: &summary,
            hardest: &hardest,
            rates,
        })?;
    }
    // Reuses the allocation: AtomicU64 and u64 have one layout.
    Ok(Searched {
        table: Mod3Table::from_words(codes.into_iter().map(AtomicU64::into_inner).collect(), legal),
        layers,
        hardest: hardest.own,
        mirrored_hardest: hardest.mirrored,
    })
}

/// Where a two-bit search of a class starts ([`begin`]).
struct Begun {
    codes: Vec<AtomicU64>,
    summary: Vec<AtomicU8>,
    layers: Vec<u64>,
    /// Whether the search was over.
    done: bool,
    hardest: LayerHardest,
    rates: Rates,
}

/// Where the two-bit search of `spec` starts: the state `checkpoints`
/// saved, when it fits the class (and carries the hardest positions'
/// images in the class `mirror` hashes, if any), taken in place; else the
/// goal alone at layer 0.
fn begin(
    spec: &ClassSpec,
    index: &TightIndex,
    mirror: Option<&MirrorHashes<'_>>,
    checkpoints: &mut dyn Checkpoints,
) -> Begun {
    let (legal, white_sets) = (index.len(), index.white_sets());
    let resumed = checkpoints
        .resume_two_bit(spec.class, index, mirror.is_some())
        .filter(|saved| {
            saved.codes.len() as u64 == code_words(legal)
                && saved.summary.len() as u64 == white_sets
                && !saved.found.is_empty()
                && saved.hardest.mirrored.is_some() == mirror.is_some()
        });
    if let Some(saved) = resumed {
        // In place: the atomics have the layout of the plain integers, so
        // neither collect allocates.
        return Begun {
            codes: saved.codes.into_iter().map(AtomicU64::new).collect(),
            summary: saved.summary.into_iter().map(AtomicU8::new).collect(),
            layers: saved.found,
            done: saved.done,
            hardest: saved.hardest,
            rates: saved.rates,
        };
    }
    let codes: Vec<AtomicU64> = (0..code_words(legal))
        .into_par_iter()
        .map(|_| AtomicU64::new(u64::MAX))
        .collect();
    let summary: Vec<AtomicU8> = (0..white_sets)
        .into_par_iter()
        .map(|r| AtomicU8::new(if index.block(r).is_empty() { 0 } else { UNSEEN_LEFT }))
        .collect();
    let goal = goal_index(spec, index);
    let shift = 2 * (goal % PER_WORD);
    codes[(goal / PER_WORD) as usize].fetch_and(!(3 << shift), Ordering::Relaxed);
    summary[crate::index::colex_rank(spec.goal.white) as usize].fetch_or(CURRENT, Ordering::Relaxed);
    Begun {
        codes,
        summary,
        layers: vec![1u64],
        done: false,
        hardest: LayerHardest {
            own: vec![goal],
            mirrored: mirror.map(|m| vec![m.hash(spec.goal)]),
        },
        rates: Rates::default(),
    }
}

/// Between layers: every block that a position of the new layer was
/// written into holds the current layer now, and no other.
pub(super) fn next_layer(summary: &mut [AtomicU8]) {
    summary.par_iter_mut().with_min_len(1 << 12).for_each(|s| {
        let s = s.get_mut();
        *s = *s & UNSEEN_LEFT | if *s & NEXT != 0 { CURRENT } else { 0 };
    });
}

/// The public hashes of the mirror images of positions, in the class that
/// mirrors the searched one.
#[derive(Clone, Copy)]
pub(super) struct MirrorHashes<'a> {
    /// From the searched class's cells to the mirroring class's.
    mirror: &'a Mirror,
    /// The mirroring class's public hash.
    dense: &'a DenseIndex,
    /// Black placements per white set in the public hash: C(n − w, b).
    per_white: u64,
}

impl<'a> MirrorHashes<'a> {
    pub(super) fn new(mirror: &'a Mirror, dense: &'a DenseIndex, spec: &ClassSpec) -> MirrorHashes<'a> {
        let (white, black) = spec.counts();
        MirrorHashes {
            mirror,
            dense,
            per_white: binomial(spec.geometry.len() as u32 - white, black),
        }
    }

    /// The public hash of the image of `part`.
    pub(super) fn hash(&self, part: Part) -> u64 {
        self.dense.rank(self.mirror.part(part))
    }

    /// A lower bound of the hash of the image of any position with white
    /// set `white`: the part of the hash the image's white set gives (its
    /// black set adds less than C(n − w, b)). Almost every position a layer
    /// finds has a white set whose image ranks above the hardest found so
    /// far, and is passed over without a whole hash.
    #[inline]
    pub(super) fn lower_bound(&self, white: Bitboard) -> u64 {
        colex_rank(self.mirror.cells(white)) * self.per_white
    }
}

/// What one thread's share of a layer found.
#[derive(Clone, Copy, Debug, Default)]
struct Found {
    /// Positions written into the new layer.
    found: u64,
    /// Positions a push scanned: coded with the layer's residue.
    work: u64,
    /// The lowest tight indices written.
    own: Lowest,
    /// The lowest public hashes of their mirror images.
    mirrored: Lowest,
}

impl Found {
    fn merge(self, other: Found) -> Found {
        Found {
            found: self.found + other.found,
            work: self.work + other.work,
            own: self.own.merge(&other.own),
            mirrored: self.mirrored.merge(&other.mirrored),
        }
    }
}

/// One layer's shared view of the search.
struct State<'a> {
    kernel: Kernel<'a>,
    /// The instruction sets the per-block work may use.
    isa: Best,
    index: &'a TightIndex,
    symmetries: &'a Symmetries,
    /// Whether each block may hold a canonical position.
    canonical: &'a [bool],
    /// The table: 2 bits per position, as in [`Mod3Table`].
    codes: &'a [AtomicU64],
    /// The summary byte of each block.
    summary: &'a [AtomicU8],
    mirror: Option<MirrorHashes<'a>>,
}

impl State<'_> {
    /// Layer `depth + 1`, by a pull or a push, its blocks shared by the
    /// threads of the rayon pool.
    fn layer(&self, depth: u64, pull: bool) -> Found {
        // A push visits the blocks holding the layer, a pull those that may
        // hold an unseen position.
        let flag = if pull { UNSEEN_LEFT } else { CURRENT };
        each_block(
            0..self.index.white_sets(),
            |r| self.canonical[r as usize] && self.summary[r as usize].load(Ordering::Relaxed) & flag != 0,
            Found::default,
            |r, block, found| {
                if pull {
                    self.pull_block(r, depth, block, found);
                } else {
                    self.push_block(r, depth, block, found);
                }
            },
            Found::merge,
        )
    }

    /// The table as [`Codes`] from position 0.
    #[inline]
    fn codes(&self) -> Codes<'_> {
        Codes::new(self.codes, 0)
    }

    /// The code of position `i`.
    #[inline]
    fn code(&self, i: u64) -> u8 {
        self.codes().code(i)
    }

    /// [`Codes::write`].
    #[inline]
    fn write(&self, i: u64, residue: u8) -> bool {
        self.codes().write(i, residue)
    }

    /// Notes that this thread wrote position `i` (block `r`, placement
    /// `part`) into the new layer: counts it, flags its block [`NEXT`] and
    /// offers it to the hardest candidates.
    #[inline]
    fn found(&self, found: &mut Found, i: u64, r: u64, part: Part) {
        found.found += 1;
        let summary = &self.summary[r as usize];
        if summary.load(Ordering::Relaxed) & NEXT == 0 {
            summary.fetch_or(NEXT, Ordering::Relaxed);
        }
        found.own.offer(i);
        if let Some(mirror) = &self.mirror
            && found.mirrored.admits(mirror.lower_bound(part.white))
        {
            found.mirrored.offer(mirror.hash(part));
        }
    }

    /// Writes the images in `batch` into layer `next` (residue), those that
    /// are unseen, and empties it.
    #[inline(always)]
    fn write_images(&self, batch: &mut Batch, next: u8, found: &mut Found) {
        set_images(
            self.index,
            batch,
            #[inline(always)]
            |i| prefetch(&self.codes[(i / PER_WORD) as usize]),
            #[inline(always)]
            |i, r, image| {
                if self.write(i, next) {
                    self.found(found, i, r, image);
                }
                0
            },
        );
    }

    /// [`Codes::scan`] of block `r`.
    #[inline(always)]
    fn scan(&self, r: u64, safe: Bitboard, want: u8, f: impl FnMut(u64, Bitboard)) {
        self.codes().scan(self.index, r, safe, want, f);
    }

    /// The canonical test of block `r`'s positions; `None` when it holds none.
    #[inline]
    fn block_test(&self, r: u64) -> Option<BlockTest<'_>> {
        self.symmetries
            .block_test(crate::index::colex_unrank(r, self.index.white()))
    }

    /// What a push of layer `depth` would scan: the positions coded `here`
    /// in the [`CURRENT`] blocks that may hold a canonical position.
    fn current_work(&self, here: u8) -> u64 {
        push_work(
            self.index,
            0..self.index.white_sets(),
            self.codes,
            0,
            self.summary,
            self.canonical,
            here,
        )
    }

    /// Pushes layer `depth` out of block `r`, when it holds a position of
    /// the layer: every canonical position coded `depth mod 3` (the layer,
    /// and older layers that share its residue) writes `depth + 1` into its
    /// unseen neighbours and their images.
    fn push_block(&self, r: u64, depth: u64, block: &mut Block, found: &mut Found) {
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.isa.bmi2 {
            // SAFETY: a `Bmi2` exists only where the processor has it.
            return unsafe { self.push_block_bmi2(isa, r, depth, block, found) };
        }
        self.push_block_in(Tables, r, depth, block, found);
    }

    /// [`push_block`](Self::push_block) compiled for BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn push_block_bmi2(&self, isa: Bmi2, r: u64, depth: u64, block: &mut Block, found: &mut Found) {
        self.push_block_in(isa, r, depth, block, found);
    }

    /// [`push_block`](Self::push_block) for `isa`.
    #[inline(always)]
    fn push_block_in<I: Isa>(&self, isa: I, r: u64, depth: u64, block: &mut Block, found: &mut Found) {
        let (here, next) = ((depth % 3) as u8, ((depth + 1) % 3) as u8);
        let Some(test) = self.block_test(r) else {
            return;
        };
        self.kernel.block_in(
            isa,
            r,
            block,
            #[inline(always)]
            |_| true,
        );
        // The canonical positions coded `here`, then their neighbours move
        // by move ([`Kernel::each_neighbour_part_in`]).
        let mut blacks = std::mem::take(&mut block.blacks);
        blacks.clear();
        self.scan(
            r,
            block.safe,
            here,
            #[inline(always)]
            |_, black| {
                found.work += 1;
                if test.is_canonical(black) {
                    blacks.push(black);
                }
            },
        );
        let mut batch = Batch::default();
        self.kernel.each_neighbour_part_in(
            isa,
            block,
            &blacks,
            #[inline(always)]
            |j, after, via| {
                if self.code(j) == UNSEEN && self.write(j, next) {
                    // A black move stays in the block; a white move leads
                    // to the block of its white set.
                    let t = match via {
                        Via::Black => r,
                        Via::White(k) => block.white_target(k).0,
                    };
                    self.found(found, j, t, after);
                    if batch.push(self.symmetries, after) {
                        self.write_images(&mut batch, next, found);
                    }
                }
            },
        );
        block.blacks = blacks;
        self.write_images(&mut batch, next, found);
    }

    /// Pulls layer `depth + 1` into block `r`: every unseen canonical
    /// position with a neighbour coded `depth mod 3` joins it, with its
    /// images. Only this call writes the block's canonical positions, and
    /// the images of the positions it finds are written only by it.
    ///
    /// Moves into blocks that hold no position of layer `depth` are not
    /// tried, and a block that none of its moves reaches is skipped. When
    /// the block has no unseen position left it loses [`UNSEEN_LEFT`].
    fn pull_block(&self, r: u64, depth: u64, block: &mut Block, found: &mut Found) {
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.isa.bmi2 {
            // SAFETY: a `Bmi2` exists only where the processor has it.
            return unsafe { self.pull_block_bmi2(isa, r, depth, block, found) };
        }
        self.pull_block_in(Tables, r, depth, block, found);
    }

    /// [`pull_block`](Self::pull_block) compiled for BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn pull_block_bmi2(&self, isa: Bmi2, r: u64, depth: u64, block: &mut Block, found: &mut Found) {
        self.pull_block_in(isa, r, depth, block, found);
    }

    /// [`pull_block`](Self::pull_block) for `isa`.
    #[inline(always)]
    fn pull_block_in<I: Isa>(&self, isa: I, r: u64, depth: u64, block: &mut Block, found: &mut Found) {
        let (here, next) = ((depth % 3) as u8, ((depth + 1) % 3) as u8);
        let Some(test) = self.block_test(r) else {
            return;
        };
        let current = |t: u64| self.summary[t as usize].load(Ordering::Relaxed) & CURRENT != 0;
        self.kernel.block_in(isa, r, block, current);
        block.black_moves = current(r);
        if !block.black_moves && block.white_moves() == 0 {
            return;
        }
        let block = &*block;
        let mut batch = Batch::default();
        let mut left = 0u64;
        self.scan(
            r,
            block.safe,
            UNSEEN,
            #[inline(always)]
            |i, black| {
                left += 1;
                if !test.is_canonical(black) {
                    return;
                }
                if self.kernel.neighbours_in(
                    isa,
                    block,
                    black,
                    #[inline(always)]
                    |j| self.code(j) == here,
                ) {
                    let unseen = self.write(i, next);
                    debug_assert!(unseen, "only this pull writes a canonical position");
                    left -= 1;
                    let part = Part {
                        white: block.white,
                        black,
                    };
                    self.found(found, i, r, part);
                    if batch.push(self.symmetries, part) {
                        self.write_images(&mut batch, next, found);
                    }
                }
            },
        );
        self.write_images(&mut batch, next, found);
        if left == 0 {
            self.summary[r as usize].fetch_and(!UNSEEN_LEFT, Ordering::Relaxed);
        }
    }
}

/// Solves every class of a planned variant by the two-bit search, resuming
/// from and saving to `checkpoints`; see
/// [`Plan::solve_two_bit_with`](super::Plan::solve_two_bit_with).
pub(super) fn solve_classes(
    name: &str,
    specs: &[ClassSpec],
    indices: Vec<TightIndex>,
    mirrors: &[Option<(usize, Mirror)>],
    checkpoints: &mut dyn Checkpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<Vec<TwoBitClass>> {
    let mut stats: Vec<Option<ClassStats>> = vec![None; specs.len()];
    let mut residues: Vec<Option<Residues>> = vec![None; specs.len()];
    for (k, spec) in specs.iter().enumerate() {
        observe(Event::Counted {
            class: spec.class,
            legal: indices[k].len(),
        });
        if let Some((j, mirror)) = &mirrors[k] {
            observe(Event::Mirrored {
                class: spec.class,
                from: specs[*j].class,
            });
            residues[k] = Some(Residues::Mirrored {
                from: *j,
                mirror: mirror.clone(),
            });
            continue;
        }
        // A class mirroring this one takes its hardest positions from the
        // images of this one's last layer, which the search keeps. A
        // variant has two classes, so there is at most one.
        let partner = mirrors
            .iter()
            .position(|later| matches!(later, Some((j, _)) if *j == k));
        let back = partner.map(|m| {
            Mirror::left_right(&spec.geometry, &specs[m].geometry).expect("the mirror of a mirror image is one")
        });
        let images = back.as_ref().zip(partner.map(|m| &specs[m].index));
        let searched = search_with(name, spec, &indices[k], images, checkpoints, observe)?;
        stats[k] = Some(searched.stats(&indices[k]));
        if let Some(m) = partner {
            stats[m] = searched.mirrored_stats(&indices[m]);
        }
        residues[k] = Some(Residues::Searched(searched.table));
    }
    Ok(specs
        .iter()
        .zip(indices)
        .zip(stats.into_iter().zip(residues))
        .map(|((spec, index), (stats, residues))| TwoBitClass {
            class: spec.class,
            dense: spec.index,
            index,
            residues: residues.expect("every class searched or mirrored"),
            stats: stats.expect("every class has stats"),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoteness::Cell;
    use crate::solver::{Method, Plan};
    use crate::variant::Variant;

    #[test]
    fn mod3_table_packs_four_positions_a_byte() {
        for len in [0u64, 1, 3, 4, 31, 32, 33, 64, 100] {
            let mut table = Mod3Table::new(len);
            assert_eq!(table.len(), len);
            assert_eq!(table.byte_len(), len.div_ceil(4));
            assert!((0..len).all(|i| table.get(i).is_none()));
            for i in 0..len {
                table.set(i, (i % 5 != 4).then_some((i % 7 % 3) as u8));
            }
            for i in 0..len {
                assert_eq!(table.get(i), (i % 5 != 4).then_some((i % 7 % 3) as u8), "{len} {i}");
            }
            let bytes = table.to_bytes();
            assert_eq!(bytes.len() as u64, table.byte_len());
            for i in 0..len {
                let code = bytes[(i / 4) as usize] >> (2 * (i % 4)) & 3;
                assert_eq!(code, table.get(i).unwrap_or(3));
            }
            assert_eq!(Mod3Table::from_bytes(&bytes, len).as_ref(), Some(&table));
            assert_eq!(Mod3Table::from_bytes(&bytes, len + 4), None);
            let counts = table.counts();
            assert_eq!(counts.iter().sum::<u64>(), len);
            assert_eq!(counts[3], (0..len).filter(|i| i % 5 == 4).count() as u64);
        }
        // Any range packs as the codes one by one would.
        let mut table = Mod3Table::new(200);
        for i in 0..200 {
            table.set(i, (i % 7 != 3).then_some((i * i % 3) as u8));
        }
        for (start, end) in [(0, 0), (0, 1), (3, 9), (31, 97), (64, 128), (130, 200), (199, 200)] {
            let codes = (start..end).map(|i| table.get(i).unwrap_or(3)).collect::<Vec<u8>>();
            let mut expected = vec![0xffu8; codes.len().div_ceil(4)];
            for (j, c) in codes.iter().enumerate() {
                expected[j / 4] &= !(3 << (2 * (j % 4)));
                expected[j / 4] |= c << (2 * (j % 4));
            }
            assert_eq!(table.pack_range(start..end), expected, "{start}..{end}");
        }
        // Padding reads as unreachable whatever it holds.
        let table = Mod3Table::from_bytes(&[0b0000_0001], 1).unwrap();
        assert_eq!(table.get(0), Some(1));
        assert_eq!(table.counts(), [0, 1, 0, 0]);
    }

    #[test]
    fn from_cells_keeps_remoteness_mod_3() {
        let table = Mod3Table::from_cells(&[0, 1, 2, 3, 38, Cell::UNREACHABLE.0]);
        let got: Vec<Option<u8>> = (0..6).map(|i| table.get(i)).collect();
        assert_eq!(got, [Some(0), Some(1), Some(2), Some(0), Some(2), None]);
    }

    #[test]
    fn descent_gives_the_exact_remoteness_and_a_best_move() {
        let variant = Variant::named("7x4").unwrap();
        let spec = &variant.classes()[0];
        let solved = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();
        let class = &solved.classes[0];
        let cells = class.own_cells().unwrap();
        let exact = |p: Part| cells[class.index.rank(p).unwrap() as usize];
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

    #[test]
    fn codes_are_matched_and_counted_a_word_at_a_time() {
        let mut table = Mod3Table::new(300);
        for i in 0..300 {
            table.set(i, (i % 7 != 3).then_some((i * i % 3) as u8));
        }
        let codes: Vec<AtomicU64> = table.words().iter().map(|&w| AtomicU64::new(w)).collect();
        let summary: Vec<AtomicU8> = Vec::new();
        let geo = crate::board::Geometry::new(crate::board::Board::new(5, 4).unwrap(), Class::Even);
        let index = TightIndex::new(&geo, 2, 2);
        let symmetries = Symmetries::trivial(&geo);
        let state = State {
            kernel: Kernel::new(&geo, &index),
            isa: Best::detect(),
            index: &index,
            symmetries: &symmetries,
            canonical: &[],
            codes: &codes,
            summary: &summary,
            mirror: None,
        };
        let code = |i: u64| table.get(i).unwrap_or(UNSEEN);
        for want in 0..4u8 {
            for (start, len) in [
                (0, 1),
                (0, 64),
                (3, 64),
                (31, 33),
                (32, 64),
                (60, 5),
                (200, 64),
                (236, 64),
                (299, 1),
            ] {
                let expected = (0..len).fold(0u64, |m, k| m | u64::from(code(start + k as u64) == want) << k);
                assert_eq!(
                    state.codes().matching(start, len, want),
                    expected,
                    "{start} {len} {want}"
                );
                // A share of the table from its third word on reads alike.
                if start >= 2 * PER_WORD {
                    let share = Codes::new(&codes[2..], 2 * PER_WORD);
                    assert_eq!(share.matching(start, len, want), expected, "{start} {len} {want}");
                }
            }
            for (start, end) in [(0, 0), (0, 300), (5, 6), (31, 33), (32, 64), (100, 299)] {
                let expected = (start..end).filter(|&i| code(i) == want).count() as u64;
                assert_eq!(count_codes(table.words(), |&w| w, start..end, want), expected);
            }
        }
    }

    #[test]
    fn lowest_keeps_the_lowest_ten() {
        let mut lowest = Lowest::default();
        for v in [50u64, 3, 99, 7, 7_000, 1, 42, 8, 13, 21, 34, 2, 5, 1_000_000] {
            lowest.offer(v);
        }
        assert_eq!(lowest.as_slice(), [1, 2, 3, 5, 7, 8, 13, 21, 34, 42]);
        let mut other = Lowest::default();
        for v in [0, 4, 100] {
            other.offer(v);
        }
        assert_eq!(lowest.merge(&other).as_slice(), [0, 1, 2, 3, 4, 5, 7, 8, 13, 21]);
        assert!(!lowest.admits(42) && lowest.admits(41));
    }

    #[test]
    fn the_direction_follows_the_measured_costs() {
        let never = || -> u64 { panic!("the bounds decide") };
        // Nothing timed: pull when the unseen are fewer than twice the push.
        let none = Rates::default();
        assert!(!none.pull(1, 1, 1000, never));
        assert!(none.pull(600, 5000, 1000, never));
        assert!(none.pull(100, 5000, 1000, || 600));
        assert!(!none.pull(100, 5000, 1000, || 400));
        // Timed: a pull at a tenth of the push's cost per position.
        let timed = Rates {
            push: Some(1.0),
            pull: Some(0.1),
        };
        assert!(timed.pull(100, 5000, 1000, never));
        assert!(!timed.pull(1, 50, 1000, never));
        assert!(timed.pull(10, 5000, 10_000, || 2000));
        assert!(!timed.pull(10, 5000, 10_000, || 500));
    }
}
