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
use crate::variant::Variant;

/// The size of one colour class of a variant.
#[derive(Clone, Debug, Serialize)]
pub struct ClassSize {
    /// The class: 0 for the class of `a1`, 1 for the other.
    pub class: usize,
    /// Its squares on the board.
    pub squares: usize,
    /// White bishops in it.
    pub white: u32,
    /// Black bishops in it.
    pub black: u32,
    /// The size of its public hash, R(n, w, b).
    pub hash_size: u64,
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

/// Every named variant, its sizes and whether `dir` holds a trusted database
/// of it. Nothing is solved or written. A database that cannot be used (a
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
    for variant in Variant::builtin()? {
        let opened = Database::open(dir, &variant);
        let (solved, problem) = match &opened {
            Ok(_) => (true, None),
            Err(Error::NotSolved { .. }) => (false, None),
            Err(e) => (false, Some(e.public_message())),
        };
        let meta = opened.as_ref().ok().map(Database::metadata);
        reports.push(VariantReport {
            name: variant.name().to_owned(),
            description: variant.description().to_owned(),
            board: variant.board().to_string(),
            start: variant.start().to_string(),
            goal: variant.goal().to_string(),
            classes: variant
                .classes()
                .iter()
                .map(|s| ClassSize {
                    class: s.class.index(),
                    squares: s.geometry.len(),
                    white: s.counts().0,
                    black: s.counts().1,
                    hash_size: s.index.len(),
                })
                .collect(),
            solved,
            problem,
            legal_positions: meta.and_then(|m| m.legal_positions),
            start_remoteness: meta.and_then(|m| m.start_remoteness),
        });
    }
    Ok(VariantsReport { variants: reports })
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
    let database = Database::open(dir, &variant)?;
    let classes = variant
        .classes()
        .iter()
        .zip(database.classes())
        .map(|(spec, record)| {
            let stats = &record.stats;
            ClassReport {
                class: record.class,
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
        .collect();
    let meta = database.metadata();
    Ok(StatsReport {
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
