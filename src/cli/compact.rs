//! `bishops compact`: a database of residues rewritten as frames of exact
//! values ([`pipeline::compact`](crate::pipeline::compact)).

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::args::CompactArgs;
use super::output::{write_json, write_text};
use crate::error::Result;
use crate::pipeline::{self, Compacted};
use crate::variant::Variant;

/// One variant's line of `compact --json`.
#[derive(Serialize)]
struct Row {
    variant: String,
    path: String,
    /// Whether the file was rewritten (it held residues).
    rewritten: bool,
    /// Its layout before.
    was: &'static str,
    /// Its layout now.
    layout: &'static str,
    bytes_before: u64,
    bytes_after: u64,
    seconds: f64,
    /// Positions the check of the new file looked at.
    audited: u64,
}

/// Rewrites each variant's database that holds residues, one after the
/// other; the first that fails stops the rest (those before it stay
/// rewritten).
///
/// # Errors
///
/// As [`pipeline::compact`], and an unknown variant name before any file
/// is touched.
pub fn compact(db: &Path, args: CompactArgs, out: &mut dyn Write) -> Result<()> {
    let variants = (args.variants.iter())
        .map(|name| Variant::named(name))
        .collect::<Result<Vec<_>>>()?;
    let mut rows = Vec::with_capacity(variants.len());
    for variant in &variants {
        let done = pipeline::compact(db, variant)?;
        if !args.json {
            write_text(out, &line(variant, &done))?;
        }
        rows.push(row(variant, done));
    }
    if args.json {
        return write_json(out, &serde_json::json!({ "variants": rows }));
    }
    Ok(())
}

/// What was done with one variant's database, in a line.
fn line(variant: &Variant, done: &Compacted) -> String {
    let path = crate::text::path(&done.path);
    let (before, after) = done.bytes;
    if done.was != crate::storage::Layout::Residues {
        return format!(
            "{}: {path} is in the {} layout already; left as it is\n",
            variant.name(),
            done.was.name()
        );
    }
    format!(
        "{}: {path} rewritten from residues ({before} bytes) to frames ({after} bytes, {:.2} of the size) in {:.1} s; {} positions checked\n",
        variant.name(),
        after as f64 / before.max(1) as f64,
        done.seconds,
        done.audited
    )
}

fn row(variant: &Variant, done: Compacted) -> Row {
    let rewritten = done.was == crate::storage::Layout::Residues;
    Row {
        variant: variant.name().to_owned(),
        path: crate::text::path(&done.path),
        rewritten,
        was: done.was.name(),
        layout: if rewritten {
            crate::storage::Layout::Frames.name()
        } else {
            done.was.name()
        },
        bytes_before: done.bytes.0,
        bytes_after: done.bytes.1,
        seconds: done.seconds,
        audited: done.audited,
    }
}
