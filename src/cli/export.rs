//! `export`: a whole solved table, streamed as CSV or JSON lines.
//!
//! With `-o PATH` the destination is decided before a row is computed, and
//! nothing the program did not make is ever replaced:
//!
//! | at PATH (links followed) | what happens |
//! |---|---|
//! | nothing | a new file, written beside it and put in place only if nothing appeared meanwhile |
//! | a FIFO, a character device, a socket | the rows are written through it; it stays what it was |
//! | a block device | refused: a stream would overwrite the disk |
//! | a database, a checkpoint, a file of the database directory that is not an export | refused, even with `--force` |
//! | any other regular file | refused, or with `--force` replaced atomically (a link's target, the link kept) |
//! | a directory, a link to nothing | refused |
//! | nothing, in a directory that is not there, is a file or cannot be written | refused |
//!
//! Every refusal is bad input (exit status 2) and names PATH as given, never
//! the temporary file beside it; a failure while the rows are written (a
//! full disk) names PATH too.

use std::fs::{self, Metadata};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::args::{ExportArgs, Format};
use super::output::{progress_bar, stdout_error};
use super::parquet;
use crate::bitboard::{Bitboard, Word};
use crate::checkpoint;
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::files::{self, Kind};
use crate::remoteness::Cell;
use crate::rules::Part;
use crate::storage::{self, Database};
use crate::text;
use crate::variant::{ClassSpec, Variant, Width, by_width};

/// `bishops export`: checks the whole database first, then streams it to
/// stdout or to `-o PATH` (see the module for what PATH may be).
pub fn export(db: &Path, args: ExportArgs, out: &mut dyn Write) -> Result<()> {
    let variant = Variant::named(&args.variant)?;
    let text = match (args.format, &args.output) {
        (Format::Csv, _) => Some(Text::Csv),
        (Format::Jsonl, _) => Some(Text::Jsonl),
        (Format::Parquet, Some(_)) => None,
        (Format::Parquet, None) => {
            return Err(Error::Usage(
                "Parquet is written to a file, not to stdout: give -o FILE".into(),
            ));
        }
    };
    if args.with_position && args.format != Format::Parquet {
        return Err(Error::Usage(
            "--with-position is for --format parquet; CSV and JSON lines always carry the position".into(),
        ));
    }
    let destination = args
        .output
        .as_deref()
        .map(|path| destination(path, db, args.force))
        .transpose()?;
    by_width!(variant, W => export_in::<W>(&variant, Database::open_in(db, &variant)?, text, args.with_position, destination, out))
}

/// [`export`] of `variant`, whose classes are in words `W`, from
/// `database` to `destination` (stdout when none).
fn export_in<W: Width>(
    variant: &Variant,
    database: Database<W>,
    text: Option<Text>,
    with_position: bool,
    destination: Option<Destination>,
    out: &mut dyn Write,
) -> Result<()> {
    // Checked before the first row goes out: a stream cannot be taken back.
    database.verify()?;
    let rows = |w: &mut (dyn Write + Send)| match text {
        Some(text) => export_rows(variant, &database, text, w),
        None => export_parquet(variant, &database, with_position, w),
    };
    match destination {
        None => {
            let mut w = io::BufWriter::with_capacity(1 << 20, out);
            export_rows(variant, &database, text.expect("Parquet is refused without -o"), &mut w)
                .map_err(naming(Path::new("stdout")))?;
            w.flush().map_err(stdout_error)
        }
        Some(Destination::New(path)) => write_beside(&path, &path, None, rows, |tmp| {
            files::rename_no_replace(tmp, &path).map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => Error::Io(
                    path.clone(),
                    io::Error::new(
                        e.kind(),
                        "it appeared while the export was written, and is left as it is",
                    ),
                ),
                _ => Error::Io(path.clone(), e),
            })
        }),
        Some(Destination::Replace { given, target, before }) => {
            write_beside(&given, &target, Some(before.permissions()), rows, |tmp| {
                // Looked at again: only the file that --force was given for is replaced.
                let same = fs::symlink_metadata(&target)
                    .is_ok_and(|now| now.is_file() && (now.dev(), now.ino()) == (before.dev(), before.ino()));
                if !same {
                    return Err(Error::Io(
                        given.clone(),
                        io::Error::other("it changed while the export was written, and is left as it is"),
                    ));
                }
                fs::rename(tmp, &target).map_err(|e| Error::Io(given.clone(), e))
            })
        }
        Some(Destination::Through(path, kind)) => {
            let sink = open_through(&path, kind)?;
            let mut w = io::BufWriter::with_capacity(1 << 20, sink);
            rows(&mut w).map_err(naming(&path))?;
            w.flush().map_err(|e| Error::Io(path.clone(), e))
        }
    }
}

/// Where `export -o PATH` writes.
#[derive(Debug)]
enum Destination {
    /// Nothing is at the path: a new file.
    New(PathBuf),
    /// A regular file that `--force` replaces.
    Replace {
        /// The path as given, for messages.
        given: PathBuf,
        /// The file itself, any link followed.
        target: PathBuf,
        /// What it was when the export began.
        before: Metadata,
    },
    /// A FIFO, a character device or a socket: written through, never
    /// replaced. (A block device is refused.)
    Through(PathBuf, Kind),
}

/// Decides where `-o path` writes, or refuses it (see the module), before
/// a row is computed: `db` is the database directory, `force` whether
/// `--force` was given.
fn destination(path: &Path, db: &Path, force: bool) -> Result<Destination> {
    let refuse = |what: &str| Error::Usage(format!("`{}` {what}", text::path(path)));
    // `out/` names a directory, though its last part is `out`.
    if path.file_name().is_none() || path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(refuse("is not a file name: give -o the name of a file"));
    }
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                return Err(refuse(
                    "is a symbolic link to nothing: remove it, or export to another file",
                ));
            }
            // Its directory must be there to be written in.
            match fs::metadata(directory(path)) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(cannot_write(path, io::Error::from_raw_os_error(libc::ENOTDIR))),
                Err(e) => return Err(cannot_write(path, e)),
            }
            if is_database_directory(directory(path), db)
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| storage::is_own_name(n) || checkpoint::is_own_name(n))
            {
                return Err(refuse(
                    "is the name of a file of the database directory: export to another file",
                ));
            }
            return Ok(Destination::New(path.to_path_buf()));
        }
        Err(e) => return Err(cannot_write(path, e)),
    };
    match Kind::of(&meta) {
        Kind::Directory => Err(refuse("is a directory: give -o the name of a file")),
        Kind::Regular => {
            if let Some(what) = own_file(path, &meta, db) {
                return Err(refuse(&format!(
                    "is {what}: export to another file (--force never replaces it)"
                )));
            }
            if !force {
                return Err(refuse("exists: pass --force to replace it, or export to another file"));
            }
            let target = fs::canonicalize(path).map_err(|e| cannot_write(path, e))?;
            Ok(Destination::Replace {
                given: path.to_path_buf(),
                target,
                before: meta,
            })
        }
        // A disk is not a stream's place: writing through it would
        // destroy what is on it.
        Kind::BlockDevice => Err(refuse(
            "is a block device (a disk): export to a file, a pipe or a character device",
        )),
        kind => Ok(Destination::Through(path.to_path_buf(), kind)),
    }
}

/// The directory `path` is in: its parent, or `.` for a bare name.
fn directory(path: &Path) -> &Path {
    directory_or_dot(path.parent().unwrap_or(Path::new("")))
}

/// The error for `e`, met looking at the path given to `-o` or creating a
/// file at it or beside it: bad input naming `path` as given when the path
/// cannot be written at all (its directory is not there or is a file, no
/// permission, a read-only file system, a name too long, a loop of links);
/// otherwise the system failing, still naming `path`.
fn cannot_write(path: &Path, e: io::Error) -> Error {
    let shown = text::path(path);
    match e.raw_os_error() {
        Some(libc::ENOENT) if !directory(path).is_dir() => Error::Usage(format!(
            "`{shown}` cannot be written: its directory `{}` does not exist: create it, or export elsewhere",
            text::path(directory(path))
        )),
        Some(libc::ENOTDIR) => {
            // The part of the path that is there and is not a directory.
            let file = path
                .ancestors()
                .skip(1)
                .map(directory_or_dot)
                .find(|a| fs::metadata(a).is_ok_and(|m| !m.is_dir()));
            match file {
                Some(file) => Error::Usage(format!(
                    "`{shown}` cannot be written: `{}` is not a directory: export into a directory",
                    text::path(file)
                )),
                None => Error::Usage(format!("`{shown}` cannot be written ({e}): export into a directory")),
            }
        }
        Some(libc::EACCES | libc::EPERM | libc::EROFS | libc::ENAMETOOLONG | libc::ELOOP) => Error::Usage(format!(
            "`{shown}` cannot be written ({e}): export to a directory you can write"
        )),
        _ => Error::Io(path.to_path_buf(), e),
    }
}

/// `dir`, or `.` when it is empty (the parent of a bare name).
fn directory_or_dot(dir: &Path) -> &Path {
    if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }
}

/// `e` naming `name` where it names the writer only as `output`, as the
/// row writers ([`export_rows`], [`parquet::write`]) do.
fn naming(name: &Path) -> impl Fn(Error) -> Error + '_ {
    move |e| match e {
        Error::Io(path, e) if path == Path::new("output") => Error::Io(name.to_path_buf(), e),
        e => e,
    }
}

/// Whether the directory `dir` is the database directory `db`.
fn is_database_directory(dir: &Path, db: &Path) -> bool {
    match (fs::metadata(dir), fs::metadata(db)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// What of this program's the regular file at `path` (whose metadata is
/// `meta`) is, if anything: a database, a checkpoint, or a file of the
/// database directory `db` (the same file under any name) that is not an
/// export. An export this program wrote there (CSV, JSON lines or Parquet,
/// under a name that is not one of the database directory's own) is not
/// the program's to keep: `--force` may replace it.
fn own_file(path: &Path, meta: &Metadata, db: &Path) -> Option<String> {
    if storage::is_database(path) {
        return Some("a bishops database".into());
    }
    if checkpoint::is_checkpoint(path) {
        return Some("a bishops checkpoint".into());
    }
    let same =
        |entry: &fs::DirEntry| fs::metadata(entry.path()).is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()));
    let names: Vec<String> = fs::read_dir(db)
        .ok()?
        .flatten()
        .filter(|entry| same(entry))
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    let own_name = |n: &String| storage::is_own_name(n) || checkpoint::is_own_name(n);
    let in_directory = !names.is_empty();
    let replaceable = !names.iter().any(own_name) && is_export(path);
    (in_directory && !replaceable).then(|| format!("a file of the database directory `{}`", text::path(db)))
}

/// Whether the regular file at `path` is recognisably an export this
/// program wrote: a CSV file whose first line is the export's header, JSON
/// lines whose first line is an export row, or a Parquet file whose footer
/// carries the export's `bishops.hash_scheme` metadata.
fn is_export(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = files::open_regular(path, fs::OpenOptions::new().read(true), files::Links::Follow) else {
        return false;
    };
    let mut head = [0u8; 512];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => return false,
        }
    }
    let head = &head[..got];
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    if head.starts_with(b"position,hash,remoteness,class\n") {
        return true;
    }
    if first.starts_with(b"{\"position\":\"") && first.ends_with(b"}") && head.len() > first.len() {
        // `…,"class":0,"class_name":"a1"}`, or `…,"class":0}` as exports
        // before class names wrote them.
        return std::str::from_utf8(first).is_ok_and(|line| {
            let line = line.strip_suffix('}').unwrap_or_default();
            let line = (line.strip_suffix(",\"class_name\":\"a1\""))
                .or_else(|| line.strip_suffix(",\"class_name\":\"a2\""))
                .unwrap_or(line);
            line.rsplit_once(",\"class\":")
                .is_some_and(|(_, class)| class.parse::<u8>().is_ok())
        });
    }
    if !head.starts_with(b"PAR1") {
        return false;
    }
    // The footer: its metadata, its 4-byte length, then `PAR1` again.
    let mut tail = [0u8; 8];
    let Ok(end) = file.seek(SeekFrom::End(-8)) else {
        return false;
    };
    if file.read_exact(&mut tail).is_err() || &tail[4..] != b"PAR1" {
        return false;
    }
    let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer > end.min(1 << 24) || file.seek(SeekFrom::Start(end - footer)).is_err() {
        return false;
    }
    let mut meta = vec![0u8; footer as usize];
    file.read_exact(&mut meta).is_ok() && meta.windows(19).any(|w| w == b"bishops.hash_scheme")
}

/// Writes the rows into a new temporary file beside `target` (created
/// afresh, never over anything), with the permissions `mode` if given,
/// syncs it, and puts it in place with `place`. On any failure the
/// temporary file is removed and `target` is left as it was. Errors name
/// `given`, the path given to `-o` (which leads to `target`), never the
/// temporary file.
fn write_beside(
    given: &Path,
    target: &Path,
    mode: Option<fs::Permissions>,
    rows: impl FnOnce(&mut (dyn Write + Send)) -> Result<()>,
    place: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let mut name = std::ffi::OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(format!(".tmp-{}", std::process::id()));
    let tmp = target.with_file_name(name);
    let failed = |e| Error::Io(given.to_path_buf(), e);
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => Error::Usage(format!(
                "`{}` cannot be written: `{}` is in the way of the file written beside it: move it away",
                text::path(given),
                text::path(&tmp)
            )),
            _ => cannot_write(given, e),
        })?;
    let _pending = Pending::register(&tmp);
    let result = (|| {
        if let Some(mode) = mode {
            file.set_permissions(mode).map_err(failed)?;
        }
        let mut w = io::BufWriter::with_capacity(1 << 20, file);
        rows(&mut w).map_err(naming(given))?;
        let file = w.into_inner().map_err(|e| failed(e.into_error()))?;
        file.sync_all().map_err(failed)?;
        drop(file);
        place(&tmp)?;
        files::sync_dir(target.parent().unwrap_or(Path::new(".")));
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Opens the FIFO, device or socket at `path` to write the rows through
/// it: without creating or truncating anything. A FIFO waits for a reader,
/// as `cat > FIFO` does.
fn open_through(path: &Path, kind: Kind) -> Result<Box<dyn Write + Send>> {
    let io = |e| Error::Io(path.to_path_buf(), e);
    if kind == Kind::Socket {
        return Ok(Box::new(
            std::os::unix::net::UnixStream::connect(path).map_err(|e| cannot_write(path, e))?,
        ));
    }
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| cannot_write(path, e))?;
    // Looked at again: a regular file put there meanwhile is not written into.
    if file.metadata().map_err(io)?.is_file() {
        return Err(Error::Usage(format!(
            "`{}` became a regular file: export again to decide what to do with it",
            text::path(path)
        )));
    }
    Ok(Box::new(file))
}

/// The text formats of `export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

/// Formats the rows of one class fast: square names are spelled once per
/// cell, and the white half of the position once per white set, since rows
/// come grouped by white set.
struct RowFormat<W: Word> {
    format: Text,
    /// `R_C_`.
    board: Vec<u8>,
    /// The name of each cell's square.
    names: Vec<Vec<u8>>,
    /// `,NAME\n` for CSV, `,"class":NUMBER,"class_name":"NAME"}\n` for JSON
    /// lines: the class's name (`a1`), and in JSON its number beside it.
    tail: Vec<u8>,
    /// The white set of `head`, and `head`: everything before the black squares.
    white: Option<Bitboard<W>>,
    head: Vec<u8>,
    row: Vec<u8>,
}

impl<W: Word> RowFormat<W> {
    fn new(variant: &Variant, spec: &ClassSpec<W>, format: Text) -> RowFormat<W> {
        let geo = &spec.geometry;
        let (class, name) = (spec.class.index(), spec.class.name());
        RowFormat {
            format,
            board: format!("{}_{}_", variant.board().rows(), variant.board().cols()).into_bytes(),
            names: (0..geo.len() as u8)
                .map(|c| geo.square(c).to_string().into_bytes())
                .collect(),
            tail: match format {
                Text::Csv => format!(",{name}\n"),
                Text::Jsonl => format!(",\"class\":{class},\"class_name\":\"{name}\"}}\n"),
            }
            .into_bytes(),
            white: None,
            head: Vec::new(),
            row: Vec::with_capacity(128),
        }
    }

    fn squares(&self, set: Bitboard<W>, out: &mut Vec<u8>) {
        for (i, cell) in set.into_iter().enumerate() {
            if i > 0 {
                out.push(b'-');
            }
            out.extend_from_slice(&self.names[usize::from(cell)]);
        }
    }

    /// The bytes of one row.
    fn row(&mut self, hash: u64, part: Part<W>, cell: Cell) -> &[u8] {
        if self.white != Some(part.white) {
            let mut head = std::mem::take(&mut self.head);
            head.clear();
            if self.format == Text::Jsonl {
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
            Text::Csv => {
                row.push(b',');
                decimal(hash, &mut row);
                row.push(b',');
                if let Some(r) = cell.remoteness() {
                    decimal(u64::from(r.0), &mut row);
                }
            }
            Text::Jsonl => {
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

/// Streams every stored position of every class as Parquet
/// ([`parquet::write`]), with a progress bar.
fn export_parquet<W: Width>(
    variant: &Variant,
    database: &Database<W>,
    with_position: bool,
    w: &mut (dyn Write + Send),
) -> Result<()> {
    let total = database.classes().iter().map(|c| c.stats.legal).sum();
    let bar = progress_bar(Some(total));
    bar.set_message(format!("export {}", variant.name()));
    parquet::write(variant, database, w, with_position, &bar)?;
    bar.finish_and_clear();
    Ok(())
}

/// Streams every stored position of every class, in class then hash order.
/// For a variant with both classes each row is one class's part, named by
/// its class hash; a whole position's remoteness is the sum of its parts'.
fn export_rows<W: Width>(variant: &Variant, database: &Database<W>, format: Text, w: &mut dyn Write) -> Result<()> {
    let total = database.classes().iter().map(|c| c.stats.legal).sum();
    let bar = progress_bar(Some(total));
    bar.set_message(format!("export {}", variant.name()));
    let io_err = |e: io::Error| Error::Io(PathBuf::from("output"), e);
    if format == Text::Csv {
        writeln!(w, "position,hash,remoteness,class").map_err(io_err)?;
    }
    for (k, spec) in variant.specs::<W>().iter().enumerate() {
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
                let mut csv = RowFormat::new(&variant, spec, Text::Csv);
                let mut jsonl = RowFormat::new(&variant, spec, Text::Jsonl);
                for hash in (0..spec.index.len()).step_by(7) {
                    let part = spec.index.unrank(hash);
                    let position = Position::from_parts(variant.board(), &[(&spec.geometry, part)]);
                    let (class, name) = (spec.class.index(), spec.class.name());
                    let row = String::from_utf8(csv.row(hash, part, Cell(12)).to_vec()).unwrap();
                    assert_eq!(row, format!("{position},{hash},12,{name}\n"));
                    let row = String::from_utf8(csv.row(hash, part, Cell::UNREACHABLE).to_vec()).unwrap();
                    assert_eq!(row, format!("{position},{hash},,{name}\n"));
                    let row = String::from_utf8(jsonl.row(hash, part, Cell::UNREACHABLE).to_vec()).unwrap();
                    let value: serde_json::Value = serde_json::from_str(&row).unwrap();
                    assert_eq!(
                        value,
                        serde_json::json!({"position": position.to_string(), "hash": hash, "remoteness": null, "class": class, "class_name": name})
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
