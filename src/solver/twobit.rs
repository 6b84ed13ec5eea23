//! The two-bit search: remoteness mod 3 in 2 bits per legal position, for
//! boards whose byte table does not fit in memory (Korf, "Minimizing Disk
//! I/O in Two-Bit Breadth-First Search", AAAI 2008).
//!
//! The table holds, per position, a [code](Mod3Table::get): unseen, or the
//! remoteness mod 3. That is enough to run the search and to answer exact
//! queries afterwards, because the state graph is undirected:
//!
//! - the neighbours of a position at remoteness `k` are at `k − 1`, `k` or
//!   `k + 1`, and those three differ mod 3, so a neighbour whose residue is
//!   one less mod 3 is exactly one move closer ([`exact::descend`](super::exact::descend));
//! - while layer `d` is expanded, a position not reached yet has no
//!   neighbour at any depth below `d`, so one whose neighbour has residue
//!   `d mod 3` is at `d + 1` (the *pull* direction).
//!
//! Pushing from layer `d` needs the layer itself, and residue `d mod 3` also
//! marks layers `d − 3`, `d − 6`, …; one more bit per position, *expanded*,
//! tells them apart. At the start of layer `d` the bits of layer `d − 1` are
//! set, so `expanded` holds exactly the layers below `d` and the frontier is
//! "residue `d mod 3`, not expanded". After the last layer `D` the positions
//! with residue `D mod 3` that are not expanded are exactly layer `D`: the
//! hardest positions. Per-layer counts give the exact histogram.
//!
//! The table, the expanded bits and the count of each layer are the
//! search's whole state at a layer boundary: [`search_with`] hands them to a
//! [`Checkpoints`] after every layer ([`TwoBitBoundary`]) and can start from
//! a saved one ([`TwoBitResume`]). At the boundary after layer `d + 1` was
//! found the expanded bits hold layers `0` to `d − 1`; once the search is
//! over, every layer but the last ([`expanded_layers`]).
//!
//! The search needs 3 bits per legal position (2 for the table, 1 for
//! `expanded`) plus the tight index tables. When the two classes are mirror
//! images only one is searched and the other is answered through the mirror
//! ([`Residues::Mirrored`]), so no second table is ever built.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rayon::prelude::*;

use crate::board::Class;
use crate::error::Result;
use crate::index::DenseIndex;
use crate::remoteness::Cell;
use crate::rules::Part;
use crate::symmetry::Mirror;
use crate::tight::{Subsets, TightIndex};
use crate::variant::ClassSpec;

use super::exact::{Descent, DescentError};
use super::kernel::{Block, Kernel};
use super::parallel::{Checkpoints, NoCheckpoints};
use super::{ClassStats, Event, HARDEST, goal_index};

/// The code of a position no layer has reached: left so, it is unreachable.
const UNSEEN: u8 = 3;

/// Positions per 64-bit word of a [`Mod3Table`].
const PER_WORD: u64 = 32;

/// A layer pulls instead of pushing when its frontier times this is more
/// than the positions not reached yet, as in the byte search.
const PULL_RATIO: u64 = 2;

/// A packed table of remoteness mod 3: 2 bits per position, 4 positions per
/// byte. Position `i` is bits `2·(i mod 4)` and up of byte `i / 4`; code 3
/// means unreachable (and pads the last byte), 0 to 2 the remoteness mod 3.
///
/// # Examples
///
/// ```
/// use bishops::solver::twobit::Mod3Table;
///
/// let mut table = Mod3Table::new(5);
/// assert_eq!(table.get(4), None);
/// table.set(4, Some(38 % 3));
/// table.set(0, Some(0));
/// assert_eq!(table.get(4), Some(2));
/// assert_eq!(table.to_bytes(), [0b1111_1100, 0b1111_1110]);
/// assert_eq!(Mod3Table::from_bytes(&table.to_bytes(), 5), Some(table));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mod3Table {
    /// Position `i` is bits `2·(i mod 32)` of word `i / 32`, which is the
    /// byte layout above when the words are read little-endian.
    words: Vec<u64>,
    len: u64,
}

impl Mod3Table {
    /// A table of `len` positions, all unreachable.
    pub fn new(len: u64) -> Mod3Table {
        Mod3Table {
            words: vec![u64::MAX; len.div_ceil(PER_WORD) as usize],
            len,
        }
    }

    /// The table of a byte table (one [`Cell`] per position): each
    /// remoteness mod 3, unreachable where the cell is.
    pub fn from_cells(cells: &[u8]) -> Mod3Table {
        let mut table = Mod3Table::new(cells.len() as u64);
        for (i, &c) in cells.iter().enumerate() {
            table.set(i as u64, Cell(c).remoteness().map(|r| (r.0 % 3) as u8));
        }
        table
    }

    /// Positions in the table.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the table holds no position.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The remoteness mod 3 of position `i`, `None` when it is unreachable.
    ///
    /// # Panics
    ///
    /// When `i` is not below [`len`](Self::len).
    #[inline]
    pub fn get(&self, i: u64) -> Option<u8> {
        assert!(i < self.len, "position {i} of a table of {}", self.len);
        let code = (self.words[(i / PER_WORD) as usize] >> (2 * (i % PER_WORD))) as u8 & 3;
        (code != UNSEEN).then_some(code)
    }

    /// Sets the remoteness mod 3 of position `i` (`None`: unreachable).
    ///
    /// # Panics
    ///
    /// When `i` is not below [`len`](Self::len).
    pub fn set(&mut self, i: u64, residue: Option<u8>) {
        assert!(i < self.len, "position {i} of a table of {}", self.len);
        let code = residue.map_or(UNSEEN, |r| r % 3);
        let shift = 2 * (i % PER_WORD);
        let word = &mut self.words[(i / PER_WORD) as usize];
        *word = *word & !(3 << shift) | u64::from(code) << shift;
    }

    /// Bytes of the packed form: `len / 4` rounded up.
    pub fn byte_len(&self) -> u64 {
        self.len.div_ceil(4)
    }

    /// The packed bytes, for storage.
    pub fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take(self.byte_len() as usize)
    }

    /// The packed bytes as one vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes().collect()
    }

    /// The codes of positions `range`, packed as [`bytes`](Self::bytes)
    /// packs the whole table (4 a byte from the low bits, the last byte
    /// padded with code 3): a block of the residues layout, cut from the
    /// words eight bits at a time.
    ///
    /// # Panics
    ///
    /// When the range ends beyond [`len`](Self::len).
    ///
    /// ```
    /// use bishops::solver::twobit::Mod3Table;
    ///
    /// let mut table = Mod3Table::new(40);
    /// for i in 0..40 {
    ///     table.set(i, Some((i % 3) as u8));
    /// }
    /// let packed = table.pack_range(33..38);
    /// assert_eq!(packed, [0b00_10_01_00, 0b11_11_11_01]);
    /// ```
    pub fn pack_range(&self, range: std::ops::Range<u64>) -> Vec<u8> {
        assert!(range.end <= self.len, "positions {range:?} of a table of {}", self.len);
        let len = range.end.saturating_sub(range.start);
        let bit = |b: u64| -> u64 {
            // Bits b.. of the table, at least 8 of them, padded with ones.
            let (w, shift) = ((b / 64) as usize, b % 64);
            let word = |w: usize| self.words.get(w).copied().unwrap_or(u64::MAX);
            let high = if shift == 0 { 0 } else { word(w + 1) << (64 - shift) };
            word(w) >> shift | high
        };
        let mut bytes: Vec<u8> = (0..len.div_ceil(4))
            .map(|j| bit(2 * (range.start + 4 * j)) as u8)
            .collect();
        if !len.is_multiple_of(4) {
            let last = bytes.len() - 1;
            bytes[last] |= 0xff << (2 * (len % 4));
        }
        bytes
    }

    /// The table of `len` positions packed in `bytes`, as [`bytes`](Self::bytes)
    /// gives them; `None` when the length does not match.
    pub fn from_bytes(bytes: &[u8], len: u64) -> Option<Mod3Table> {
        if bytes.len() as u64 != len.div_ceil(4) {
            return None;
        }
        let words = bytes
            .chunks(8)
            .map(|chunk| {
                let mut word = [0xffu8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                u64::from_le_bytes(word)
            })
            .collect();
        let mut table = Mod3Table { words, len };
        // Whatever the padding held, it reads as unreachable.
        if !len.is_multiple_of(PER_WORD) {
            let last = table.words.len() - 1;
            table.words[last] |= u64::MAX << (2 * (len % PER_WORD));
        }
        Some(table)
    }

    /// How many positions hold each code: residues 0, 1, 2, then unreachable.
    pub fn counts(&self) -> [u64; 4] {
        let mut counts = [0u64; 4];
        for i in 0..self.len {
            counts[usize::from(self.get(i).unwrap_or(UNSEEN))] += 1;
        }
        counts
    }
}

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

/// What [`search`] finds: the table, and each layer's size.
#[derive(Debug)]
pub struct Searched {
    /// The residues, in `index` order.
    pub table: Mod3Table,
    /// `layers[d]`: positions at remoteness `d`.
    pub layers: Vec<u64>,
    /// The expanded bit of every position: set for all reachable positions
    /// but those of the last layer.
    expanded: Vec<u64>,
}

impl Searched {
    /// Whether position `i` is in the last layer.
    fn in_last_layer(&self, i: u64) -> bool {
        let last = ((self.layers.len() - 1) % 3) as u8;
        self.table.get(i) == Some(last) && self.expanded[(i / 64) as usize] >> (i % 64) & 1 == 0
    }

    /// Exact statistics of the searched class: the histogram from the layer
    /// sizes, the hardest positions from the last layer in index order (which
    /// is public-hash order).
    pub fn stats(&self, index: &TightIndex) -> ClassStats {
        let hardest = (0..index.white_sets() as usize)
            .into_par_iter()
            .with_min_len(64)
            .map(|r| {
                index
                    .block(r as u64)
                    .filter(|&i| self.in_last_layer(i))
                    .take(HARDEST)
                    .collect::<Vec<u64>>()
            })
            .reduce(Vec::new, lowest)
            .into_iter()
            .map(|i| index.to_hash(i))
            .collect();
        self.stats_with(index, hardest)
    }

    /// Exact statistics of a class that mirrors the searched one, whose
    /// tight index is `index` and public hash `dense`; `back` carries the
    /// searched class (tight index `source`) onto it. The histogram is the
    /// same, and the hardest positions are the images of the last layer.
    fn mirrored_stats(&self, source: &TightIndex, back: &Mirror, index: &TightIndex, dense: &DenseIndex) -> ClassStats {
        let hardest = (0..source.white_sets() as usize)
            .into_par_iter()
            .with_min_len(64)
            .map(|r| {
                let range = source.block(r as u64);
                let mut found: Vec<u64> = range
                    .filter(|&i| self.in_last_layer(i))
                    .map(|i| dense.rank(back.part(source.unrank(i))))
                    .collect();
                found.sort_unstable();
                found.truncate(HARDEST);
                found
            })
            .reduce(Vec::new, lowest);
        self.stats_with(index, hardest)
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

/// The [`HARDEST`] lowest of two sorted lists.
fn lowest(a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    let mut all = a;
    all.extend(b);
    all.sort_unstable();
    all.truncate(HARDEST);
    all
}

/// A two-bit search's state at a layer boundary, from which it can go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwoBitResume {
    /// `found[d]`: positions at remoteness `d`, for every complete layer.
    pub found: Vec<u64>,
    /// Whether the search is over (the layer after the last found nothing).
    pub done: bool,
    /// The table, as the words of a [`Mod3Table`]: `legal / 32` rounded up,
    /// padding codes unseen.
    pub codes: Vec<u64>,
    /// The expanded bits, 64 positions per word: `legal / 64` rounded up.
    /// They hold exactly the layers [`expanded_layers`] gives.
    pub expanded: Vec<u64>,
}

/// A two-bit search's state at a layer boundary, as
/// [`Checkpoints::two_bit_layer`] sees it.
#[derive(Debug)]
pub struct TwoBitBoundary<'a> {
    /// The class searched.
    pub class: Class,
    /// The class's legal positions.
    pub legal: u64,
    /// `found[d]`: positions at remoteness `d`, for every complete layer.
    pub found: &'a [u64],
    /// Whether the search is over.
    pub done: bool,
    /// The table, 32 positions per word as in [`Mod3Table`]; no thread
    /// writes it while the boundary is seen.
    pub codes: &'a [AtomicU64],
    /// The expanded bits, 64 positions per word; no thread writes them
    /// while the boundary is seen.
    pub expanded: &'a [AtomicU64],
}

/// How many of the layers counted by `found` (`found.len()`, at least 1)
/// have their expanded bits set at a layer boundary: all but the last two
/// while the search goes on (layer `d` marks layer `d − 1` and finds layer
/// `d + 1`), all but the last once it is over (the last layer, which found
/// nothing, marked the one before).
pub fn expanded_layers(layers: usize, done: bool) -> usize {
    layers.saturating_sub(if done { 1 } else { 2 })
}

/// Words of the table of `legal` positions.
pub fn code_words(legal: u64) -> u64 {
    legal.div_ceil(PER_WORD)
}

/// Words of the expanded bits of `legal` positions.
pub fn expanded_words(legal: u64) -> u64 {
    legal.div_ceil(64)
}

/// Searches one class by two bits per position, plus one bit of working
/// state, on the current rayon pool, telling `observe` of each layer.
///
/// # Errors
///
/// [`Error::TooLarge`](crate::Error::TooLarge) when a remoteness would not fit
/// a [`Remoteness`].
pub fn search(name: &str, spec: &ClassSpec, index: &TightIndex, observe: &mut dyn FnMut(Event)) -> Result<Searched> {
    search_with(name, spec, index, &mut NoCheckpoints, observe)
}

/// As [`search`], resuming from `checkpoints` when it has a saved state for
/// the class ([`Checkpoints::resume_two_bit`]) and telling it of every layer
/// boundary ([`Checkpoints::two_bit_layer`]). A resumed search reports its
/// saved layers again, in order, before the new ones.
///
/// # Errors
///
/// As [`search`], and whatever `checkpoints` fails with.
pub fn search_with(
    name: &str,
    spec: &ClassSpec,
    index: &TightIndex,
    checkpoints: &mut dyn Checkpoints,
    observe: &mut dyn FnMut(Event),
) -> Result<Searched> {
    let legal = index.len();
    let (codes, expanded, mut layers, done) = match checkpoints.resume_two_bit(spec.class, legal) {
        Some(saved)
            if saved.codes.len() as u64 == code_words(legal)
                && saved.expanded.len() as u64 == expanded_words(legal)
                && !saved.found.is_empty() =>
        {
            // In place: AtomicU64 and u64 have one layout, so neither
            // collect allocates.
            let codes: Vec<AtomicU64> = saved.codes.into_iter().map(AtomicU64::new).collect();
            let expanded: Vec<AtomicU64> = saved.expanded.into_iter().map(AtomicU64::new).collect();
            (codes, expanded, saved.found, saved.done)
        }
        _ => {
            let codes: Vec<AtomicU64> = (0..code_words(legal))
                .into_par_iter()
                .map(|_| AtomicU64::new(u64::MAX))
                .collect();
            let expanded: Vec<AtomicU64> = (0..expanded_words(legal))
                .into_par_iter()
                .map(|_| AtomicU64::new(0))
                .collect();
            (codes, expanded, vec![1u64], false)
        }
    };
    let state = State {
        kernel: Kernel::new(&spec.geometry, index),
        index,
        codes: &codes,
        expanded: &expanded,
    };
    if layers.len() == 1 && !done {
        state.write(goal_index(spec, index), 0);
    }
    let mut total = 0;
    for (depth, &found) in layers.iter().enumerate() {
        total += found;
        observe(Event::Layer {
            class: spec.class,
            depth: depth as u16,
            found,
            total,
            legal,
        });
    }
    if !done {
        for depth in layers.len() as u64 - 1.. {
            let frontier = layers[depth as usize];
            let pull = frontier * PULL_RATIO > legal - total;
            let found: u64 = (0..index.white_sets() as usize)
                .into_par_iter()
                .with_min_len(16)
                .map_init(Block::default, |block, r| {
                    state.layer_block(r as u64, depth, pull, block)
                })
                .sum();
            if found == 0 {
                break;
            }
            let depth = u16::try_from(depth + 1).map_err(|_| {
                crate::Error::TooLarge(format!("variant {name}: a remoteness above {} does not fit", u16::MAX))
            })?;
            total += found;
            layers.push(found);
            observe(Event::Layer {
                class: spec.class,
                depth,
                found,
                total,
                legal,
            });
            checkpoints.two_bit_layer(TwoBitBoundary {
                class: spec.class,
                legal,
                found: &layers,
                done: false,
                codes: &codes,
                expanded: &expanded,
            })?;
        }
        checkpoints.two_bit_layer(TwoBitBoundary {
            class: spec.class,
            legal,
            found: &layers,
            done: true,
            codes: &codes,
            expanded: &expanded,
        })?;
    }
    // Both collects reuse their allocation: AtomicU64 and u64 have one layout.
    Ok(Searched {
        table: Mod3Table {
            words: codes.into_iter().map(AtomicU64::into_inner).collect(),
            len: legal,
        },
        layers,
        expanded: expanded.into_iter().map(AtomicU64::into_inner).collect(),
    })
}

/// The shared view of the tables during a search.
struct State<'a> {
    kernel: Kernel<'a>,
    index: &'a TightIndex,
    /// The table: 2 bits per position, as in [`Mod3Table`].
    codes: &'a [AtomicU64],
    /// 1 bit per position: set once the position's layer has been expanded.
    expanded: &'a [AtomicU64],
}

impl State<'_> {
    /// The code of position `i`.
    #[inline]
    fn code(&self, i: u64) -> u8 {
        (self.codes[(i / PER_WORD) as usize].load(Ordering::Relaxed) >> (2 * (i % PER_WORD))) as u8 & 3
    }

    /// Writes residue `residue` into position `i`, which must be unseen or
    /// hold `residue` already; whether it was unseen. Two threads writing
    /// one position write the same residue, and only one sees it unseen.
    #[inline]
    fn write(&self, i: u64, residue: u8) -> bool {
        let shift = 2 * (i % PER_WORD);
        let keep = !(3u64 << shift) | u64::from(residue) << shift;
        let old = self.codes[(i / PER_WORD) as usize].fetch_and(keep, Ordering::Relaxed);
        (old >> shift) & 3 == u64::from(UNSEEN)
    }

    /// Calls `f(i, code, expanded)` for every position `i` of `range`,
    /// reading each word of the tables once.
    #[inline]
    fn scan(&self, range: std::ops::Range<u64>, mut f: impl FnMut(u64, u8, bool)) {
        let (mut code_word, mut expanded_word) = (0, 0);
        for i in range.clone() {
            if i == range.start || i % PER_WORD == 0 {
                code_word = self.codes[(i / PER_WORD) as usize].load(Ordering::Relaxed);
            }
            if i == range.start || i % 64 == 0 {
                expanded_word = self.expanded[(i / 64) as usize].load(Ordering::Relaxed);
            }
            f(
                i,
                (code_word >> (2 * (i % PER_WORD))) as u8 & 3,
                expanded_word >> (i % 64) & 1 != 0,
            );
        }
    }

    /// Runs layer `depth` over block `r`: marks the block's positions of
    /// layer `depth − 1` expanded, then either pushes from its positions of
    /// layer `depth` or pulls into its unseen positions. Returns how many
    /// positions it put in layer `depth + 1`.
    ///
    /// Only this call writes the block's expanded bits, and in a pull layer
    /// its codes; pushes from other blocks only turn unseen positions into
    /// residue `depth + 1`, which neither test below reads.
    fn layer_block(&self, r: u64, depth: u64, pull: bool, block: &mut Block) -> u64 {
        let here = (depth % 3) as u8;
        let next = ((depth + 1) % 3) as u8;
        let before = ((depth + 2) % 3) as u8;
        let range = self.index.block(r);
        // Layer depth − 1 is done: residue `before`, not expanded yet.
        let mut work = false;
        let mut mark = 0u64;
        self.scan(range.clone(), |i, code, expanded| {
            if code == before && !expanded {
                mark |= 1 << (i % 64);
            }
            work |= if pull {
                code == UNSEEN
            } else {
                code == here && !expanded
            };
            if (i + 1) % 64 == 0 || i + 1 == range.end {
                if mark != 0 {
                    self.expanded[(i / 64) as usize].fetch_or(mark, Ordering::Relaxed);
                }
                mark = 0;
            }
        });
        if !work {
            return 0;
        }
        self.kernel.block(r, block);
        let mut subsets = Subsets::new(block.safe, self.index.black());
        let mut found = 0;
        self.scan(range, |i, code, expanded| {
            let black = subsets.next().expect("a black set per position of the block");
            if pull {
                if code == UNSEEN && self.kernel.neighbours(block, black, |j| self.code(j) == here) {
                    self.write(i, next);
                    found += 1;
                }
            } else if code == here && !expanded {
                self.kernel.neighbours(block, black, |j| {
                    if self.code(j) == UNSEEN && self.write(j, next) {
                        found += 1;
                    }
                    false
                });
            }
        });
        found
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
        let searched = search_with(name, spec, &indices[k], checkpoints, observe)?;
        stats[k] = Some(searched.stats(&indices[k]));
        // The classes mirroring this one take their hardest positions from
        // its last layer, which only the expanded bits tell apart.
        for (m, later) in mirrors.iter().enumerate() {
            if matches!(later, Some((j, _)) if *j == k) {
                let back = Mirror::left_right(&spec.geometry, &specs[m].geometry)
                    .expect("the mirror of a mirror image is one");
                stats[m] = Some(searched.mirrored_stats(&indices[k], &back, &indices[m], &specs[m].index));
            }
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
        for name in ["5x4", "7x4", "5x4-full", "7x5-full"] {
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
}
