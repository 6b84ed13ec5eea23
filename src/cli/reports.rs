//! `variants` and `stats`: reports on the known variants and one solved table.
//!
//! The reports themselves are built by the library's [`report`] module,
//! which the web server shares; this module only prints them.

use std::io::Write;
use std::path::Path;

use super::args::StatsArgs;
use super::output::{columns, shown, write_json, write_text};
use crate::board::Class;
use crate::error::Result;
use crate::report;

/// `bishops variants`: every named variant, its sizes and whether it is solved.
pub fn variants(db: &Path, json: bool, out: &mut dyn Write) -> Result<()> {
    let document = report::variants(db)?;
    if json {
        // Written straight from the report: `serde_json::Value` cannot hold
        // the legal positions of 11x10 (3.5 × 10^20, beyond 64 bits).
        return write_json(out, &document);
    }
    let reports = document.variants;
    let header = ["variant", "hash sizes", "legal (board)", "start r", "solved", "start"];
    let mut rows = vec![header.map(str::to_owned).to_vec()];
    for r in &reports {
        let sizes: Vec<String> = r.classes.iter().map(|c| c.hash_size.to_string()).collect();
        let solved = match (&r.problem, r.solved) {
            (Some(_), _) => "damaged",
            (None, true) => "yes",
            (None, false) => "no",
        };
        rows.push(vec![
            r.name.clone(),
            sizes.join(" x "),
            shown(r.legal_positions),
            shown(r.start_remoteness),
            solved.to_owned(),
            r.start.clone(),
        ]);
    }
    let mut text = columns(&rows, &[false, false, true, true, false, false]);
    for r in &reports {
        if let Some(problem) = &r.problem {
            text += &format!("{}: {problem}\n", r.name);
        }
    }
    write_text(out, &text)
}

/// A histogram as two aligned columns, however large its counts.
fn histogram_table<T: ToString>(counts: &[T]) -> String {
    let counts: Vec<String> = counts.iter().map(ToString::to_string).collect();
    let width = counts.iter().map(String::len).max().unwrap_or(0).max("positions".len());
    let mut text = format!("  remoteness  {:>width$}\n", "positions");
    for (r, n) in counts.iter().enumerate() {
        text += &format!("  {r:>10}  {n:>width$}\n");
    }
    text
}

/// `bishops stats`: positions per remoteness and the hardest positions.
pub fn stats(db: &Path, args: StatsArgs, out: &mut dyn Write) -> Result<()> {
    let report = report::stats(db, &args.variant)?;
    if args.json {
        return write_json(out, &report);
    }
    let mut text = format!(
        "variant {} ({})\nstart {}: remoteness {}; largest remoteness {}; {} legal positions of the whole board\n",
        report.variant,
        crate::text::path(&report.path),
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
        text += &histogram_table(&c.histogram);
        if let Some(max) = c.max_remoteness {
            text += &format!("  hardest (remoteness {max}):\n");
            for h in &c.hardest {
                text += &format!("    {}  hash {}\n", h.position, h.hash);
            }
        }
    }
    if report.classes.len() > 1 {
        let b = &report.board;
        text += &format!(
            "\nwhole board: {} legal, {} reachable, {} unreachable\n",
            b.legal, b.reachable, b.unreachable
        );
        text += &histogram_table(&b.histogram);
        if let (Some(max), Some(hardest)) = (b.max_remoteness, &b.hardest) {
            let count = match b.hardest_count {
                1 => "1 position".to_owned(),
                n => format!("{n} positions, such as"),
            };
            text += &format!("  hardest (remoteness {max}): {count}\n    {hardest}\n");
        }
    }
    write_text(out, &text)
}
