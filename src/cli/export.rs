//! `export`: a whole solved table, streamed as CSV or JSON lines.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::args::{ExportArgs, Format};
use super::output::{progress_bar, stdout_error};
use crate::error::{Error, Result};
use crate::position::Position;
use crate::remoteness::Remoteness;
use crate::storage::Database;
use crate::variant::Variant;

/// `bishops export`: checks the whole database first, then streams it to
/// stdout or, atomically, to a file.
pub fn export(db: &Path, args: ExportArgs, out: &mut dyn Write) -> Result<()> {
    let variant = Variant::named(&args.variant)?;
    let database = Database::open(db, &variant)?;
    // Checked before the first row goes out: a stream cannot be taken back.
    database.verify()?;
    match &args.output {
        None => {
            let mut w = io::BufWriter::new(out);
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
                    let mut w = io::BufWriter::new(file);
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

/// One exported row.
#[derive(Serialize)]
struct Row<'a> {
    position: &'a str,
    hash: u64,
    remoteness: Option<Remoteness>,
    class: usize,
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
        let class = spec.class.index();
        database.for_each_row(k, |hash, part, cell| {
            let position = Position::from_parts(variant.board(), &[(&spec.geometry, part)]).to_string();
            let remoteness = cell.remoteness();
            match format {
                Format::Csv => writeln!(
                    w,
                    "{position},{hash},{},{class}",
                    remoteness.map_or(String::new(), |r| r.to_string())
                ),
                Format::Jsonl => {
                    let row = Row {
                        position: &position,
                        hash,
                        remoteness,
                        class,
                    };
                    serde_json::to_writer(&mut *w, &row)
                        .map_err(io::Error::from)
                        .and_then(|()| writeln!(w))
                }
            }
            .map_err(io_err)?;
            bar.inc(1);
            Ok(())
        })?;
    }
    bar.finish_and_clear();
    Ok(())
}
