//! Reports on the known variants and on one solved table: what
//! `bishops variants` and `bishops stats` print and what the web server's
//! `/api/variants` and `/api/stats/{variant}` answer, built once here so the
//! two front ends cannot drift apart.
//!
//! # Examples
//!
//! ```
//! use bishops::{Position, Tablebase, report};
//!
//! # let dir = std::env::temp_dir().join(format!("bishops-doc-report-{}", std::process::id()));
//! let before = report::variants(&dir).unwrap();
//! assert_eq!(before.variants[0].name, "5x4");
//! assert!(!before.variants[0].solved);
//!
//! let start: Position = "5_4_a1-a3_e1-e3".parse().unwrap();
//! Tablebase::new(&dir).table(&start, None).unwrap(); // solves 5x4
//! let stats = report::stats(&dir, "5x4").unwrap();
//! assert_eq!(stats.classes[0].legal, 100);
//! assert_eq!(stats.start_remoteness.unwrap().0, 18);
//! let histogram = &stats.classes[0].histogram; // remoteness 0 to 19, the largest
//! assert_eq!((histogram.len(), histogram.iter().sum::<u64>()), (20, 100));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::position::Position;
use crate::remoteness::Remoteness;
use crate::storage::Database;
use crate::variant::{Variant, Width, by_width};

/// The size of one colour class of a variant.
#[derive(Clone, Debug, Serialize)]
pub struct ClassSize {
    /// The class: 0 for the class of `a1`, 1 for the other.
    pub class: usize,
    /// The class's name: `a1` or `a2`, the square that names it.
    pub class_name: &'static str,
    /// Its squares on the board.
    pub squares: usize,
    /// White bishops in it.
    pub white: u32,
    /// Black bishops in it.
    pub black: u32,
    /// The size of its public hash, R(n, w, b): past 64 bits on a board
    /// of the user's with many bishops a class.
    pub hash_size: u128,
    /// The symmetries of its puzzle besides the identity, found from the
    /// rules ([`Symmetries`](crate::Symmetries)), such as `top-bottom,
    /// colours exchanged`: the searches expand one position of each orbit.
    pub symmetries: Vec<String>,
}

/// One named variant: its sizes, and whether a trusted database holds it.
#[derive(Clone, Debug, Serialize)]
pub struct VariantReport {
    /// The name, as `--variant` takes it.
    pub name: String,
    /// One line on what it is.
    pub description: String,
    /// The board, `RxC`.
    pub board: String,
    /// The start position.
    pub start: String,
    /// The goal: the start with the colours swapped.
    pub goal: String,
    /// Each colour class the variant uses.
    pub classes: Vec<ClassSize>,
    /// Whether a database exists and is trusted.
    pub solved: bool,
    /// Why a database is there but not trusted.
    pub problem: Option<String>,
    /// Legal positions in all, when solved.
    pub legal_positions: Option<u128>,
    /// The start's remoteness, when solved.
    pub start_remoteness: Option<Remoteness>,
}

/// Every named variant, in the order of `variants/`: [`variants`].
#[derive(Clone, Debug, Serialize)]
pub struct VariantsReport {
    /// One report per variant.
    pub variants: Vec<VariantReport>,
}

/// Every named variant (built in, then the user's), its sizes and whether `dir` holds a trusted database
/// of it, then every standard variant (`RxC-a1`, …) with a database file in
/// `dir`. Nothing is solved or written. A database that cannot be used (a
/// damaged file, a directory or a pipe where the file belongs) is listed
/// with its problem, in words without paths ([`Error::public_message`]),
/// and does not keep the others from being listed.
///
/// # Errors
///
/// [`Error::Variant`] when a file of `variants/` cannot be read;
/// [`Error::DbPath`] when `dir` itself is not a directory.
pub fn variants(dir: &Path) -> Result<VariantsReport> {
    crate::storage::check_dir(dir)?;
    let mut reports = Vec::new();
    let named = Variant::builtin()?.iter().chain(Variant::user());
    for variant in named.chain(&standard_solved(dir)?) {
        let opened = by_width!(variant, W => Database::<W>::open_in(dir, variant).map(|d| d.metadata().clone()));
        let (solved, problem) = match &opened {
            Ok(_) => (true, None),
            // Not solved, or past what a table numbers: nothing damaged.
            Err(Error::NotSolved { .. }) => (false, None),
            Err(_) if variant.tables_fit().is_err() => (false, None),
            Err(e) => (false, Some(e.public_message())),
        };
        let meta = opened.as_ref().ok();
        reports.push(VariantReport {
            name: variant.name().to_owned(),
            description: variant.description().to_owned(),
            board: variant.board().to_string(),
            start: variant.start().to_string(),
            goal: variant.goal().to_string(),
            classes: by_width!(variant, W => class_sizes::<W>(variant)),
            solved,
            problem,
            legal_positions: meta.and_then(|m| m.legal_positions),
            start_remoteness: meta.and_then(|m| m.start_remoteness),
        });
    }
    Ok(VariantsReport { variants: reports })
}

/// The size of each class of `variant`, whose classes are in words `W`.
fn class_sizes<W: Width>(variant: &Variant) -> Vec<ClassSize> {
    (variant.specs::<W>().iter())
        .map(|s| ClassSize {
            class: s.class.index(),
            class_name: s.class.name(),
            squares: s.geometry.len(),
            white: s.counts().0,
            black: s.counts().1,
            hash_size: s.index.len128(),
            symmetries: crate::symmetry::Symmetries::of(&s.geometry, s.goal).names(),
        })
        .collect()
}

/// The standard variants (`RxC-a1`, `RxC-a2`, `RxC-full`) that have a
/// database file in `dir`, by name: those are listed after the named ones
/// (built in and the user's), solved or with their problem. A file whose
/// name is not a standard variant's own spelling is not one of them.
fn standard_solved(dir: &Path) -> Result<Vec<Variant>> {
    let builtin: Vec<&Variant> = Variant::builtin()?.iter().chain(Variant::user()).collect();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".sqlite").map(str::to_owned))
        .filter(|name| !builtin.iter().any(|v| v.name() == name))
        .filter(|name| Variant::named(name).is_ok_and(|v| v.name() == name))
        .collect();
    names.sort_by_key(|name| {
        let v = Variant::named(name).expect("named above");
        (v.board().rows(), v.board().cols(), name.clone())
    });
    Ok(names.iter().filter_map(|name| Variant::named(name).ok()).collect())
}

/// One of the hardest positions of a class.
#[derive(Clone, Debug, Serialize)]
pub struct Hardest {
    /// The position, with only this class's bishops.
    pub position: String,
    /// Its public class hash.
    pub hash: u64,
}

/// The solved table of one colour class.
#[derive(Clone, Debug, Serialize)]
pub struct ClassReport {
    /// The class: 0 for the class of `a1`, 1 for the other.
    pub class: usize,
    /// The class's name: `a1` or `a2`, the square that names it.
    pub class_name: &'static str,
    /// Its squares on the board.
    pub squares: usize,
    /// White bishops in it.
    pub white: u32,
    /// Black bishops in it.
    pub black: u32,
    /// The size of its public hash, R(n, w, b).
    pub hash_size: u64,
    /// Legal positions.
    pub legal: u64,
    /// Legal positions that can reach the goal.
    pub reachable: u64,
    /// Legal positions that cannot.
    pub unreachable: u64,
    /// The largest remoteness.
    pub max_remoteness: Option<Remoteness>,
    /// `histogram[r]`: positions of remoteness `r`.
    pub histogram: Vec<u64>,
    /// Positions of the largest remoteness (as many as the database keeps).
    pub hardest: Vec<Hardest>,
}

/// Positions per remoteness and the hardest positions of a solved variant:
/// [`stats`].
#[derive(Clone, Debug, Serialize)]
pub struct StatsReport {
    /// The variant's name.
    pub variant: String,
    /// The database file: for the command line's text, not in the JSON
    /// document (which a server hands to clients).
    #[serde(skip)]
    pub path: PathBuf,
    /// The start position.
    pub start: String,
    /// The start's remoteness.
    pub start_remoteness: Option<Remoteness>,
    /// The largest remoteness of the whole variant.
    pub max_remoteness: Option<Remoteness>,
    /// Legal positions in all.
    pub legal_positions: Option<u128>,
    /// How long the solve took.
    pub solve_seconds: Option<f64>,
    /// One report per colour class.
    pub classes: Vec<ClassReport>,
    /// The whole board: every class's part of a position together.
    pub board: BoardReport,
}

/// The remoteness of whole-board positions: a position's remoteness is the
/// sum of its class parts', so the whole board's histogram is the
/// convolution of the class histograms ([`convolve`]). Counts pass 2^64 on
/// boards from 11x10 on, so they are 128-bit (exact in the JSON document,
/// whose readers should parse them as big integers).
#[derive(Clone, Debug, Serialize)]
pub struct BoardReport {
    /// Legal whole-board positions: the product of the classes' legal counts.
    pub legal: u128,
    /// Those that reach the goal: every class part does.
    pub reachable: u128,
    /// Those that do not.
    pub unreachable: u128,
    /// The largest remoteness of a whole-board position.
    pub max_remoteness: Option<Remoteness>,
    /// `histogram[r]`: whole-board positions of remoteness `r`.
    pub histogram: Vec<u128>,
    /// Whole-board positions of the largest remoteness.
    pub hardest_count: u128,
    /// One of them: the first hardest part of each class together.
    pub hardest: Option<String>,
}

/// The histogram of sums: `out[r]` counts the ways to pick one entry of each
/// histogram whose indices add up to `r`.
///
/// ```
/// use bishops::report::convolve;
///
/// // Two classes of 1 + 2 + 1 positions at remoteness 0, 1, 2.
/// assert_eq!(convolve(&[vec![1, 2, 1], vec![1, 2, 1]]), [1, 4, 6, 4, 1]);
/// assert_eq!(convolve(&[vec![3, 5]]), [3, 5]);
/// ```
pub fn convolve(histograms: &[Vec<u64>]) -> Vec<u128> {
    let mut out = vec![1u128];
    for histogram in histograms {
        if histogram.is_empty() {
            return Vec::new();
        }
        let mut next = vec![0u128; out.len() + histogram.len() - 1];
        for (i, &a) in out.iter().enumerate() {
            for (j, &b) in histogram.iter().enumerate() {
                // At most (2^64)^2 a term over 2 classes: no overflow.
                next[i + j] += a * u128::from(b);
            }
        }
        out = next;
    }
    out
}

impl BoardReport {
    /// The whole board of `classes` of `variant`.
    fn of<W: Width>(variant: &Variant, classes: &[ClassReport]) -> BoardReport {
        let histogram = convolve(&classes.iter().map(|c| c.histogram.clone()).collect::<Vec<_>>());
        let legal = classes.iter().map(|c| u128::from(c.legal)).product();
        let reachable = classes.iter().map(|c| u128::from(c.reachable)).product();
        let hardest = classes
            .iter()
            .zip(variant.specs::<W>())
            .map(|(c, spec)| c.hardest.first().map(|h| (&spec.geometry, spec.index.unrank(h.hash))))
            .collect::<Option<Vec<_>>>()
            .map(|parts| {
                let parts: Vec<_> = parts.iter().map(|(g, p)| (*g, *p)).collect();
                Position::from_parts(variant.board(), &parts).to_string()
            });
        BoardReport {
            legal,
            reachable,
            unreachable: legal - reachable,
            max_remoteness: histogram.len().checked_sub(1).map(|r| Remoteness(r as u16)),
            hardest_count: histogram.last().copied().unwrap_or(0),
            histogram,
            hardest,
        }
    }
}

/// Positions per remoteness and the hardest positions of the variant named
/// `name`, read from its database in `dir`. Nothing is solved or written.
///
/// # Errors
///
/// [`Error::UnknownVariant`] for a name no variant has; [`Error::NotSolved`]
/// when the database is missing; [`Error::Corrupt`] when it is not trusted.
pub fn stats(dir: &Path, name: &str) -> Result<StatsReport> {
    let variant = Variant::named(name)?;
    by_width!(variant, W => stats_in::<W>(dir, &variant))
}

/// [`stats`] of `variant`, whose classes are in words `W`.
fn stats_in<W: Width>(dir: &Path, variant: &Variant) -> Result<StatsReport> {
    let database = Database::<W>::open_in(dir, variant)?;
    let classes = variant
        .specs::<W>()
        .iter()
        .zip(database.classes())
        .map(|(spec, record)| {
            let stats = &record.stats;
            ClassReport {
                class: record.class,
                class_name: crate::board::Class::from_index(record.class).map_or("?", crate::board::Class::name),
                squares: spec.geometry.len(),
                white: spec.counts().0,
                black: spec.counts().1,
                hash_size: record.hash_size,
                legal: stats.legal,
                reachable: stats.reachable,
                unreachable: stats.legal - stats.reachable,
                max_remoteness: stats.max_remoteness(),
                histogram: stats.histogram.clone(),
                hardest: stats
                    .hardest
                    .iter()
                    .map(|&hash| Hardest {
                        position: Position::from_parts(variant.board(), &[(&spec.geometry, spec.index.unrank(hash))])
                            .to_string(),
                        hash,
                    })
                    .collect(),
            }
        })
        .collect::<Vec<ClassReport>>();
    let meta = database.metadata();
    Ok(StatsReport {
        board: BoardReport::of::<W>(variant, &classes),
        variant: variant.name().to_owned(),
        path: database.path().to_path_buf(),
        start: variant.start().to_string(),
        start_remoteness: meta.start_remoteness,
        max_remoteness: meta.max_remoteness,
        legal_positions: meta.legal_positions,
        solve_seconds: meta.solve_seconds,
        classes,
    })
}
