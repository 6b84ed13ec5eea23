//! `export`: a whole solved table, streamed as CSV or JSON lines.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::args::{ExportArgs, Format};
use super::output::{progress_bar, stdout_error};
use crate::bitboard::Bitboard;
use crate::error::{Error, Result};
use crate::remoteness::Cell;
use crate::rules::Part;
use crate::storage::Database;
use crate::variant::{ClassSpec, Variant};

/// `bishops export`: checks the whole database first, then streams it to
/// stdout or, atomically, to a file.
pub fn export(db: &Path, args: ExportArgs, out: &mut dyn Write) -> Result<()> {
    let variant = Variant::named(&args.variant)?;
    let database = Database::open(db, &variant)?;
    // Checked before the first row goes out: a stream cannot be taken back.
    database.verify()?;
    match &args.output {
        None => {
            let mut w = io::BufWriter::with_capacity(1 << 20, out);
            export_rows(&variant, &database, args.format, &mut w)?;
            w.flush().map_err(stdout_error)
        }
        Some(path) => {
            let file_name = path
                .file_name()
                .ok_or_else(|| Error::Usage(format!("{} is not a file name", path.display())))?;
            let tmp = path.with_file_name(format!(".{}.tmp-{}", file_name.to_string_lossy(), std::process::id()));
            let _pending = crate::cleanup::Pending::register(&tmp);
            let result = fs::File::create(&tmp)
                .map_err(|e| Error::Io(tmp.clone(), e))
                .and_then(|file| {
                    let mut w = io::BufWriter::with_capacity(1 << 20, file);
                    export_rows(&variant, &database, args.format, &mut w)?;
                    let file = w.into_inner().map_err(|e| Error::Io(tmp.clone(), e.into_error()))?;
                    file.sync_all().map_err(|e| Error::Io(tmp.clone(), e))
                })
                .and_then(|()| fs::rename(&tmp, path).map_err(|e| Error::Io(path.clone(), e)));
            if result.is_err() {
                let _ = fs::remove_file(&tmp);
            }
            result
        }
    }
}

/// Formats the rows of one class fast: square names are spelled once per
/// cell, and the white half of the position once per white set, since rows
/// come grouped by white set.
struct RowFormat {
    format: Format,
    /// `R_C_`.
    board: Vec<u8>,
    /// The name of each cell's square.
    names: Vec<Vec<u8>>,
    /// `,CLASS\n` for CSV, `,"class":CLASS}\n` for JSON lines.
    tail: Vec<u8>,
    /// The white set of `head`, and `head`: everything before the black squares.
    white: Option<Bitboard>,
    head: Vec<u8>,
    row: Vec<u8>,
}

impl RowFormat {
    fn new(variant: &Variant, spec: &ClassSpec, format: Format) -> RowFormat {
        let geo = &spec.geometry;
        let class = spec.class.index();
        RowFormat {
            format,
            board: format!("{}_{}_", variant.board().rows(), variant.board().cols()).into_bytes(),
            names: (0..geo.len() as u8)
                .map(|c| geo.square(c).to_string().into_bytes())
                .collect(),
            tail: match format {
                Format::Csv => format!(",{class}\n"),
                Format::Jsonl => format!(",\"class\":{class}}}\n"),
            }
            .into_bytes(),
            white: None,
            head: Vec::new(),
            row: Vec::with_capacity(128),
        }
    }

    fn squares(&self, set: Bitboard, out: &mut Vec<u8>) {
        for (i, cell) in set.into_iter().enumerate() {
            if i > 0 {
                out.push(b'-');
            }
            out.extend_from_slice(&self.names[usize::from(cell)]);
        }
    }

    /// The bytes of one row.
    fn row(&mut self, hash: u64, part: Part, cell: Cell) -> &[u8] {
        if self.white != Some(part.white) {
            let mut head = std::mem::take(&mut self.head);
            head.clear();
            if self.format == Format::Jsonl {
                head.extend_from_slice(b"{\"position\":\"");
            }
            head.extend_from_slice(&self.board);
            self.squares(part.white, &mut head);
            head.push(b'_');
            self.head = head;
            self.white = Some(part.white);
        }
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        row.extend_from_slice(&self.head);
        self.squares(part.black, &mut row);
        match self.format {
            Format::Csv => {
                row.push(b',');
                decimal(hash, &mut row);
                row.push(b',');
                if let Some(r) = cell.remoteness() {
                    decimal(u64::from(r.0), &mut row);
                }
            }
            Format::Jsonl => {
                row.extend_from_slice(b"\",\"hash\":");
                decimal(hash, &mut row);
                row.extend_from_slice(b",\"remoteness\":");
                match cell.remoteness() {
                    Some(r) => decimal(u64::from(r.0), &mut row),
                    None => row.extend_from_slice(b"null"),
                }
            }
        }
        row.extend_from_slice(&self.tail);
        self.row = row;
        &self.row
    }
}

/// Appends `n` in decimal.
fn decimal(mut n: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Streams every stored position of every class, in class then hash order.
/// For a variant with both classes each row is one class's part, named by
/// its class hash; a whole position's remoteness is the sum of its parts'.
fn export_rows(variant: &Variant, database: &Database, format: Format, w: &mut dyn Write) -> Result<()> {
    let total = database.classes().iter().map(|c| c.stats.legal).sum();
    let bar = progress_bar(Some(total));
    bar.set_message(format!("export {}", variant.name()));
    let io_err = |e: io::Error| Error::Io(PathBuf::from("output"), e);
    if format == Format::Csv {
        writeln!(w, "position,hash,remoteness,class").map_err(io_err)?;
    }
    for (k, spec) in variant.classes().iter().enumerate() {
        let mut rows = RowFormat::new(variant, spec, format);
        let mut since = 0u64;
        database.for_each_row(k, |hash, part, cell| {
            w.write_all(rows.row(hash, part, cell)).map_err(io_err)?;
            // The bar is told in batches: a row takes well under a microsecond.
            since += 1;
            if since == 1 << 16 {
                bar.inc(since);
                since = 0;
            }
            Ok(())
        })?;
        bar.inc(since);
    }
    bar.finish_and_clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Position;

    #[test]
    fn rows_spell_what_positions_print() {
        for name in ["7x4", "5x4-full"] {
            let variant = Variant::named(name).unwrap();
            for spec in variant.classes() {
                let mut csv = RowFormat::new(&variant, spec, Format::Csv);
                let mut jsonl = RowFormat::new(&variant, spec, Format::Jsonl);
                for hash in (0..spec.index.len()).step_by(7) {
                    let part = spec.index.unrank(hash);
                    let position = Position::from_parts(variant.board(), &[(&spec.geometry, part)]);
                    let class = spec.class.index();
                    let row = String::from_utf8(csv.row(hash, part, Cell(12)).to_vec()).unwrap();
                    assert_eq!(row, format!("{position},{hash},12,{class}\n"));
                    let row = String::from_utf8(csv.row(hash, part, Cell::UNREACHABLE).to_vec()).unwrap();
                    assert_eq!(row, format!("{position},{hash},,{class}\n"));
                    let row = String::from_utf8(jsonl.row(hash, part, Cell::UNREACHABLE).to_vec()).unwrap();
                    let value: serde_json::Value = serde_json::from_str(&row).unwrap();
                    assert_eq!(
                        value,
                        serde_json::json!({"position": position.to_string(), "hash": hash, "remoteness": null, "class": class})
                    );
                }
            }
        }
        let mut out = Vec::new();
        for n in [0, 7, 10, 1234567890123, u64::MAX] {
            out.clear();
            decimal(n, &mut out);
            assert_eq!(String::from_utf8(out.clone()).unwrap(), n.to_string());
        }
    }
}
