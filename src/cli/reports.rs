//! `variants` and `stats`: reports on the known variants and one solved table.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::args::StatsArgs;
use super::output::{shown, write_json, write_text};
use crate::board::Class;
use crate::error::{Error, Result};
use crate::position::Position;
use crate::remoteness::Remoteness;
use crate::storage::Database;
use crate::variant::Variant;

#[derive(Serialize)]
struct ClassSize {
    class: usize,
    squares: usize,
    white: u32,
    black: u32,
    hash_size: u64,
}

#[derive(Serialize)]
struct VariantReport {
    name: String,
    description: String,
    board: String,
    start: String,
    goal: String,
    classes: Vec<ClassSize>,
    solved: bool,
    /// Why a database is there but not trusted.
    problem: Option<String>,
    legal_positions: Option<u128>,
    start_remoteness: Option<Remoteness>,
}

/// `bishops variants`: every named variant, its sizes and whether it is solved.
pub fn variants(db: &Path, json: bool, out: &mut dyn Write) -> Result<()> {
    let mut reports = Vec::new();
    for variant in Variant::builtin()? {
        let opened = Database::open(db, &variant);
        let (solved, problem) = match &opened {
            Ok(_) => (true, None),
            Err(Error::NotSolved { .. }) => (false, None),
            Err(Error::DbPath(e)) => return Err(Error::DbPath(e.clone())),
            Err(e) => (false, Some(e.to_string())),
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
    if json {
        return write_json(out, &serde_json::json!({ "variants": reports }));
    }
    let mut text = format!(
        "{:<10} {:<28} {:>16} {:>8} {:<7} {}\n",
        "variant", "hash sizes", "legal", "start r", "solved", "start"
    );
    for r in &reports {
        let sizes: Vec<String> = r.classes.iter().map(|c| c.hash_size.to_string()).collect();
        text += &format!(
            "{:<10} {:<28} {:>16} {:>8} {:<7} {}\n",
            r.name,
            sizes.join(" x "),
            shown(r.legal_positions),
            shown(r.start_remoteness),
            match (&r.problem, r.solved) {
                (Some(_), _) => "damaged",
                (None, true) => "yes",
                (None, false) => "no",
            },
            r.start
        );
    }
    if reports.iter().any(|r| r.problem.is_some()) {
        text += "damaged: the database is there but cannot be trusted; run `bishops solve NAME --force`\n";
    }
    write_text(out, &text)
}

#[derive(Serialize)]
struct Hardest {
    position: String,
    hash: u64,
}

#[derive(Serialize)]
struct ClassReport {
    class: usize,
    squares: usize,
    white: u32,
    black: u32,
    hash_size: u64,
    legal: u64,
    reachable: u64,
    unreachable: u64,
    max_remoteness: Option<Remoteness>,
    /// `histogram[r]`: positions of remoteness `r`.
    histogram: Vec<u64>,
    hardest: Vec<Hardest>,
}

#[derive(Serialize)]
struct StatsReport {
    variant: String,
    path: PathBuf,
    start: String,
    start_remoteness: Option<Remoteness>,
    max_remoteness: Option<Remoteness>,
    legal_positions: Option<u128>,
    solve_seconds: Option<f64>,
    classes: Vec<ClassReport>,
}

/// `bishops stats`: positions per remoteness and the hardest positions.
pub fn stats(db: &Path, args: StatsArgs, out: &mut dyn Write) -> Result<()> {
    let variant = Variant::named(&args.variant)?;
    let database = Database::open(db, &variant)?;
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
    let report = StatsReport {
        variant: variant.name().to_owned(),
        path: database.path().to_path_buf(),
        start: variant.start().to_string(),
        start_remoteness: database.metadata().start_remoteness,
        max_remoteness: database.metadata().max_remoteness,
        legal_positions: database.metadata().legal_positions,
        solve_seconds: database.metadata().solve_seconds,
        classes,
    };
    if args.json {
        return write_json(out, &report);
    }
    let mut text = format!(
        "variant {} ({})\nstart {}: remoteness {}; largest remoteness {}; {} legal positions\n",
        report.variant,
        report.path.display(),
        report.start,
        shown(report.start_remoteness),
        shown(report.max_remoteness),
        shown(report.legal_positions),
    );
    for c in &report.classes {
        text += &format!(
            "\nclass {} ({} squares, {} white + {} black, R = {}): {} legal, {} reachable, {} unreachable\n",
            Class::from_index(c.class).map_or("?", |k| k.name()),
            c.squares,
            c.white,
            c.black,
            c.hash_size,
            c.legal,
            c.reachable,
            c.unreachable
        );
        text += "  remoteness  positions\n";
        for (r, n) in c.histogram.iter().enumerate() {
            text += &format!("  {r:>10}  {n:>9}\n");
        }
        if let Some(max) = c.max_remoteness {
            text += &format!("  hardest (remoteness {max}):\n");
            for h in &c.hardest {
                text += &format!("    {}  hash {}\n", h.position, h.hash);
            }
        }
    }
    write_text(out, &text)
}
