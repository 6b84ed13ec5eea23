//! `export --format parquet`: the solved table as Apache Parquet, for the
//! tools analysts already use (DuckDB, pandas, Polars, Spark).
//!
//! One row per stored class position, as the CSV has, in typed columns:
//!
//! | column | Parquet type | what |
//! |---|---|---|
//! | `class` | string | the colour class, by name: `a1` or `a2` |
//! | `hash` | int64 | the position's class hash (see the database format) |
//! | `remoteness` | int32 (unsigned 16-bit), nullable | moves to the goal; null when unreachable |
//! | `white`, `black` | list of strings | the squares of the class's bishops, in board order (`a1`, `c3`) |
//! | `position` (with `--with-position`) | string | the class part as a position string |
//!
//! so that a query filters on squares directly (`list_contains(white,
//! 'a1')` in DuckDB). Row groups hold [`ROW_GROUP`] rows; every column is
//! compressed with Zstandard at level [`ZSTD_LEVEL`], `hash` (ascending in
//! a class) delta-encoded and the rest dictionary-encoded. The file's
//! key-value metadata names the variant, its board and start, and the hash
//! scheme. The rows are written as they are read, a row group at a time:
//! memory stays at one row group whatever the size of the table.

use std::io::Write;
use std::sync::Arc;

use indicatif::ProgressBar;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

use crate::bitboard::{Bitboard, Word};
use crate::error::{Error, Result};
use crate::position::Position;
use crate::remoteness::Cell;
use crate::rules::Part;
use crate::storage::Database;
use crate::variant::{ClassSpec, Variant, Width};

/// Rows per row group: about 10 MB of compressed columns, few enough
/// groups for 11x8's 353 million rows (337 of them).
pub const ROW_GROUP: usize = 1 << 20;

/// The Zstandard level of every column: fast to write, and the columns
/// compress well at any level (a row of 11x8 takes about 4 bytes).
pub const ZSTD_LEVEL: i32 = 1;

/// The Parquet schema of an export, with or without the `position` column.
fn schema(with_position: bool) -> String {
    let list = |name: &str| {
        format!("required group {name} (LIST) {{ repeated group list {{ required binary element (STRING); }} }}")
    };
    format!(
        "message bishops {{ required binary class (STRING); required int64 hash; \
         optional int32 remoteness (INTEGER(16, false)); {} {} {} }}",
        list("white"),
        list("black"),
        if with_position {
            "required binary position (STRING);"
        } else {
            ""
        }
    )
}

/// The columns of one row group, filled row by row.
#[derive(Default)]
struct Group {
    class: Vec<ByteArray>,
    hash: Vec<i64>,
    remoteness: Vec<i32>,
    /// 1 where the row has a remoteness, 0 where it is null.
    defined: Vec<i16>,
    white: Squares,
    black: Squares,
    position: Vec<ByteArray>,
}

/// A list column: the values, with the repetition level of each (0 starts
/// a row's list, 1 goes on with it).
#[derive(Default)]
struct Squares {
    names: Vec<ByteArray>,
    repeated: Vec<i16>,
}

impl Squares {
    fn push<W: Word>(&mut self, set: Bitboard<W>, names: &[ByteArray]) {
        for (k, cell) in set.iter().enumerate() {
            self.names.push(names[usize::from(cell)].clone());
            self.repeated.push(i16::from(k > 0));
        }
    }
}

/// Writes the whole table of `database` (the variant `variant`) to `w` as
/// Parquet, telling `bar` of the rows as they go.
///
/// # Errors
///
/// What reading the database runs into; [`Error::Io`] when the output
/// cannot be written.
pub fn write<W: Width>(
    variant: &Variant,
    database: &Database<W>,
    w: &mut (dyn Write + Send),
    with_position: bool,
    bar: &ProgressBar,
) -> Result<()> {
    let fail = |e: parquet::errors::ParquetError| Error::Io("output".into(), std::io::Error::other(e.to_string()));
    let schema = Arc::new(parse_message_type(&schema(with_position)).map_err(fail)?);
    let mut file = SerializedFileWriter::new(w, schema, Arc::new(properties(variant))).map_err(fail)?;
    for (k, spec) in variant.specs::<W>().iter().enumerate() {
        let names = square_names(spec);
        let mut group = Group::default();
        database.for_each_row(k, |hash, part, cell| {
            add_row(&mut group, spec, (hash, part, cell), &names, with_position);
            if group.class.len() == ROW_GROUP {
                bar.inc(ROW_GROUP as u64);
                write_group(&mut file, std::mem::take(&mut group)).map_err(fail)?;
            }
            Ok(())
        })?;
        if !group.class.is_empty() {
            bar.inc(group.class.len() as u64);
            write_group(&mut file, group).map_err(fail)?;
        }
    }
    file.close().map_err(fail)?;
    Ok(())
}

/// The writer's settings: Zstandard everywhere, `hash` delta-encoded, row
/// groups of [`ROW_GROUP`], and what the file holds in its metadata.
fn properties(variant: &Variant) -> WriterProperties {
    let note = |key: &str, value: String| KeyValue::new(key.to_owned(), value);
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(ZSTD_LEVEL).expect("a valid level"),
        ))
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_column_dictionary_enabled(ColumnPath::from("hash"), false)
        .set_column_encoding(ColumnPath::from("hash"), Encoding::DELTA_BINARY_PACKED)
        .set_created_by(format!("bishops {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![
            note("bishops.variant", variant.name().to_owned()),
            note("bishops.board", variant.board().to_string()),
            note("bishops.start", variant.start().to_string()),
            note("bishops.hash_scheme", crate::index::HASH_SCHEME.to_owned()),
        ]))
        .build()
}

/// The name of every cell of the class `spec`, as a Parquet string.
fn square_names<W: Word>(spec: &ClassSpec<W>) -> Vec<ByteArray> {
    (0..spec.geometry.len())
        .map(|c| ByteArray::from(spec.geometry.square(c as u8).to_string().as_str()))
        .collect()
}

/// Adds the row of one class position to `group`.
fn add_row<W: Word>(
    group: &mut Group,
    spec: &ClassSpec<W>,
    (hash, part, cell): (u64, Part<W>, Cell),
    names: &[ByteArray],
    with_position: bool,
) {
    group.class.push(ByteArray::from(spec.class.name()));
    group.hash.push(hash as i64);
    match cell.remoteness() {
        Some(r) => {
            group.remoteness.push(i32::from(r.0));
            group.defined.push(1);
        }
        None => group.defined.push(0),
    }
    group.white.push(part.white, names);
    group.black.push(part.black, names);
    if with_position {
        let geo = &spec.geometry;
        let position = Position::from_parts(geo.board(), &[(geo, part)]).to_string();
        group.position.push(ByteArray::from(position.as_str()));
    }
}

/// Writes `group` as one row group, its columns in schema order.
fn write_group<O: Write + Send>(file: &mut SerializedFileWriter<O>, group: Group) -> parquet::errors::Result<()> {
    let mut rows = file.next_row_group()?;
    let mut column = 0;
    while let Some(mut writer) = rows.next_column()? {
        match column {
            0 => writer.typed::<ByteArrayType>().write_batch(&group.class, None, None)?,
            1 => writer.typed::<Int64Type>().write_batch(&group.hash, None, None)?,
            2 => writer
                .typed::<Int32Type>()
                .write_batch(&group.remoteness, Some(&group.defined), None)?,
            3 | 4 => {
                let squares = if column == 3 { &group.white } else { &group.black };
                // Every element is present: definition level 1 throughout.
                let defined = vec![1i16; squares.names.len()];
                writer
                    .typed::<ByteArrayType>()
                    .write_batch(&squares.names, Some(&defined), Some(&squares.repeated))?
            }
            _ => writer
                .typed::<ByteArrayType>()
                .write_batch(&group.position, None, None)?,
        };
        writer.close()?;
        column += 1;
    }
    rows.close()?;
    Ok(())
}
