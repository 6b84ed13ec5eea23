//! What a database file holds: the format version, the SQL schema, the
//! layouts of the tables, and the two records read whole when a file is
//! opened, the `meta` table ([`Metadata`]) and the `classes` rows
//! ([`ClassRecord`]), each checked for form and consistency as it is read.

use rusqlite::{Connection, OptionalExtension};

use super::fault::{Checked, Fault};
use crate::bitboard::Word;
use crate::remoteness::{Cell, Remoteness};
use crate::solver::{ClassStats, HARDEST, Solution};
use crate::text::clip;
use crate::variant::{ClassSpec, Variant};

/// The version of the database layout; a file of another version is refused
/// (and `solve` rebuilds it). Version 2 added the per-block checksums and
/// the header checksum; version 3 stores a mirrored class as a reference to
/// class 0, without rows or blocks of its own, and adds the `residues`
/// layout of the two-bit search; version 4 gives a mirrored class its
/// source's checksum in every layout, since every read of it is a checked
/// read of the source (version 3 checksummed its derived cells, which cost
/// more than the rest of writing 11x8); version 5 computes every checksum
/// with XXH3-64 instead of a hand-written FNV-1a 64, over the same bytes;
/// version 6 adds the `frames` layout, the exact remoteness compressed.
pub const FORMAT_VERSION: u32 = 6;

/// The oldest format version still read: version 6 only added a layout, so
/// a file of version 5 is read as it was written.
pub const OLDEST_FORMAT_VERSION: u32 = 5;

/// The tables of a database.
pub const SCHEMA: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE classes (
    class          INTEGER PRIMARY KEY, -- 0: squares of a1 (row + column even), 1: of a2
    squares        INTEGER NOT NULL,    -- n, squares in the class
    white          INTEGER NOT NULL,    -- w, white bishops in the class
    black          INTEGER NOT NULL,    -- b, black bishops in the class
    hash_size      INTEGER NOT NULL,    -- R(n, w, b)
    start_hash     INTEGER NOT NULL,
    goal_hash      INTEGER NOT NULL,
    legal          INTEGER NOT NULL,    -- legal positions
    reachable      INTEGER NOT NULL,    -- legal positions that reach the goal
    max_remoteness INTEGER,             -- NULL when none does
    histogram      TEXT NOT NULL,       -- JSON array: positions per remoteness
    hardest        TEXT NOT NULL,       -- JSON array: hashes of the hardest positions
    mirrored       INTEGER NOT NULL,    -- 1: the left-right mirror image of class 0, with no rows or
                                        -- blocks of its own: look up the mirrored position in class 0
    checksum       TEXT NOT NULL        -- XXH3-64 of the remoteness bytes in hash order, hex;
                                        -- residues layout: of the block checksums in white order;
                                        -- a mirrored class: its source's
);
CREATE TABLE positions (
    class      INTEGER NOT NULL,
    hash       INTEGER NOT NULL,        -- the public hash of the class part
    remoteness INTEGER,                 -- NULL: legal but unreachable
    PRIMARY KEY (class, hash)
) WITHOUT ROWID;
CREATE TABLE row_checksums (
    class    INTEGER NOT NULL,
    white    INTEGER NOT NULL,          -- colex rank of a white set: hash / C(n - w, b)
    checksum INTEGER NOT NULL,          -- block checksum of its rows' remoteness bytes
    PRIMARY KEY (class, white)
) WITHOUT ROWID;
CREATE TABLE blocks (
    class    INTEGER NOT NULL,
    white    INTEGER NOT NULL,          -- colex rank of the white set: hash / C(n - w, b)
    data     BLOB NOT NULL,             -- a byte per legal black set beside it, in colex order
                                        -- among the safe cells: remoteness, or 254 unreachable;
                                        -- residues layout: 2 bits per black set, 4 a byte from
                                        -- the low bits: remoteness mod 3, or 3 unreachable
    checksum INTEGER NOT NULL,          -- block checksum of data
    PRIMARY KEY (class, white)
);
CREATE TABLE frames (
    class       INTEGER NOT NULL,
    first_white INTEGER NOT NULL,       -- colex rank of its first white set: 0, or the one after the
    last_white  INTEGER NOT NULL,       -- last white set of the frame before; frames tile the class
    data        BLOB NOT NULL,          -- zstd frame of the cells of its blocks in white order, a byte per
                                        -- position as in blocks
    checksum    INTEGER NOT NULL,       -- block checksum (class, first_white) of the decompressed cells
    PRIMARY KEY (class, first_white)
);
";

/// How a database holds its tables: `meta.layout`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A row of `positions` per legal position: easy to read with `sqlite3`.
    Rows,
    /// A row of `blocks` per white set, a byte per position: about one byte
    /// per legal position on disk, for large boards.
    Blocks,
    /// A row of `blocks` per white set, two bits per position holding the
    /// remoteness mod 3, as the two-bit search leaves it
    /// ([`search::two_bit_with`](crate::solver::search::two_bit_with)): a quarter of a byte per legal
    /// position, for boards too large for a byte. Exact remoteness is found
    /// by descending to the goal through neighbours one less mod 3.
    Residues,
    /// A row of `frames` per run of blocks, the exact remoteness of each
    /// position (a byte, as in [`Layout::Blocks`]) compressed with zstd,
    /// each frame on its own: under a bit a position on the large boards,
    /// and a lookup decompresses one frame. The default beyond rows.
    Frames,
}

impl Layout {
    /// The layout for `solution`: rows while every class has at most
    /// [`ROWS_MAX_LEGAL`] legal positions, frames beyond.
    pub fn for_solution<W: Word>(solution: &Solution<Vec<u8>, W>) -> Layout {
        Layout::for_legal(solution.classes.iter().map(|c| c.stats.legal))
    }

    /// The layout of byte tables whose classes have `legal` positions each:
    /// rows while every class has at most [`ROWS_MAX_LEGAL`], else frames.
    pub fn for_legal(mut legal: impl Iterator<Item = u64>) -> Layout {
        if legal.all(|n| n <= ROWS_MAX_LEGAL) {
            Layout::Rows
        } else {
            Layout::Frames
        }
    }

    /// The name the file gives it in `meta.layout`.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Rows => "rows",
            Layout::Blocks => "blocks",
            Layout::Residues => "residues",
            Layout::Frames => "frames",
        }
    }

    /// The layout a file names `name`, if any.
    pub(super) fn from_name(name: &str) -> Option<Layout> {
        [Layout::Rows, Layout::Blocks, Layout::Residues, Layout::Frames]
            .into_iter()
            .find(|l| l.name() == name)
    }
}

/// The most legal positions per class stored as one row each.
pub const ROWS_MAX_LEGAL: u64 = 1_000_000;

/// What a database says of one class, checked when it was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassRecord {
    /// The class number (0: a1's class, 1: a2's).
    pub class: usize,
    /// R(n, w, b).
    pub hash_size: u64,
    /// The counts and hardest positions.
    pub stats: ClassStats,
    /// The checksum of the class's whole table, as written.
    pub checksum: String,
}

/// The `meta` table of a database, read and checked once when it is opened:
/// what the file says of itself and of the whole variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// The variant's name.
    pub variant: String,
    /// How the tables are held.
    pub layout: Layout,
    /// The variant's start, as a position string.
    pub start: String,
    /// Legal positions of the whole variant: the product over its classes.
    pub legal_positions: Option<u128>,
    /// Legal positions of the whole variant that reach the goal.
    pub reachable_positions: Option<u128>,
    /// The largest remoteness of any whole position; `None` when no
    /// position reaches the goal.
    pub max_remoteness: Option<Remoteness>,
    /// The remoteness of the start; `None` when unreachable.
    pub start_remoteness: Option<Remoteness>,
    /// The version of `bishops` that wrote the file.
    pub program_version: Option<String>,
    /// Seconds the solve took, indices included.
    pub solve_seconds: Option<f64>,
    /// When the file was written, in seconds since 1970.
    pub created_unix: Option<u64>,
}

impl Metadata {
    /// Reads the metadata of a file of `variant` whose header (variant,
    /// start, versions, header checksum) was checked and whose tables are
    /// held as `layout`: every figure must be absent or well formed, and what
    /// the file says of its own making must be there.
    pub(super) fn read(conn: &Connection, variant: &Variant, layout: Layout) -> Checked<Metadata> {
        let meta = MetaTable(conn);
        Ok(Metadata {
            variant: variant.name().to_owned(),
            layout,
            start: variant.start().to_string(),
            legal_positions: meta.parsed("legal_positions", |v| v.parse().ok())?,
            reachable_positions: meta.parsed("reachable_positions", |v| v.parse().ok())?,
            max_remoteness: meta.parsed("max_remoteness", |v| v.parse::<u16>().ok().map(Remoteness))?,
            start_remoteness: meta.parsed("start_remoteness", |v| v.parse::<u16>().ok().map(Remoteness))?,
            // What the file says of its own making cannot be checked against
            // the tables, only for form: it must be there and well formed.
            program_version: Some(meta.required("program_version", |v| Some(v.to_owned()))?),
            solve_seconds: Some(meta.required("solve_seconds", |v| {
                v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0)
            })?),
            created_unix: Some(meta.required("created_unix", |v| v.parse::<u64>().ok())?),
        })
    }
}

/// The `meta` table of an open file, read a key at a time.
struct MetaTable<'a>(&'a Connection);

impl MetaTable<'_> {
    /// The value of `key`; `None` when it is missing or empty.
    fn text(&self, key: &str) -> Checked<Option<String>> {
        Ok(read_meta(self.0, key)?.filter(|v| !v.is_empty()))
    }

    /// The value of `key` read by `parse`; `None` when it is missing or
    /// empty, a fault when `parse` cannot read it.
    fn parsed<T>(&self, key: &str, parse: impl Fn(&str) -> Option<T>) -> Checked<Option<T>> {
        self.text(key)?
            .map(|v| parse(&v).ok_or_else(|| unreadable(key, &v)))
            .transpose()
    }

    /// As [`parsed`](Self::parsed), a fault when it is missing or empty too.
    fn required<T>(&self, key: &str, parse: impl Fn(&str) -> Option<T>) -> Checked<T> {
        self.parsed(key, parse)?.ok_or_else(|| unreadable(key, ""))
    }
}

/// The fault of a metadata entry that cannot be read.
fn unreadable(key: &str, value: &str) -> Fault {
    Fault::Wrong(format!("has an unreadable {key} `{}` in its metadata", clip(value, 20)))
}

/// The value of `key` in the `meta` table; `None` when there is none.
pub(super) fn read_meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
}

/// A class row as stored, before it is checked.
pub(super) struct RawClass {
    pub(super) class: i64,
    squares: i64,
    white: i64,
    black: i64,
    hash_size: i64,
    start_hash: i64,
    goal_hash: i64,
    legal: i64,
    reachable: i64,
    max_remoteness: Option<i64>,
    histogram: String,
    hardest: String,
    pub(super) mirrored: i64,
    checksum: String,
}

/// Every row of the `classes` table, in class order, unchecked.
pub(super) fn read_classes(conn: &Connection) -> rusqlite::Result<Vec<RawClass>> {
    let mut st = conn.prepare(
        "SELECT class, squares, white, black, hash_size, start_hash, goal_hash, legal, reachable,
                max_remoteness, histogram, hardest, mirrored, checksum FROM classes ORDER BY class",
    )?;
    st.query_map([], |r| {
        Ok(RawClass {
            class: r.get(0)?,
            squares: r.get(1)?,
            white: r.get(2)?,
            black: r.get(3)?,
            hash_size: r.get(4)?,
            start_hash: r.get(5)?,
            goal_hash: r.get(6)?,
            legal: r.get(7)?,
            reachable: r.get(8)?,
            max_remoteness: r.get(9)?,
            histogram: r.get(10)?,
            hardest: r.get(11)?,
            mirrored: r.get(12)?,
            checksum: r.get(13)?,
        })
    })?
    .collect()
}

/// Checks a class row against the variant's class `spec` and against
/// itself, and returns what it says; the error says what is wrong.
pub(super) fn check_class<W: Word>(
    spec: &ClassSpec<W>,
    raw: &RawClass,
    start: u64,
    goal: u64,
) -> std::result::Result<ClassRecord, RecordFault> {
    check_shape(spec, raw, start, goal)?;
    let hash_size = spec.index.len();
    let count = |field: &'static str, value: i64, low: u64, high: u64| {
        u64::try_from(value)
            .ok()
            .filter(|v| (low..=high).contains(v))
            .ok_or(RecordFault::OutOfRange {
                field,
                value,
                low,
                high,
            })
    };
    let legal = count("legal", raw.legal, 1, hash_size)?;
    let reachable = count("reachable", raw.reachable, 1, legal)?;
    let histogram = check_histogram(raw, reachable)?;
    let hardest = check_hardest(raw, &histogram, hash_size)?;
    if !(0..=1).contains(&raw.mirrored) {
        return Err(RecordFault::Mirrored(raw.mirrored));
    }
    if raw.checksum.len() != 16 || !raw.checksum.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RecordFault::Checksum);
    }
    Ok(ClassRecord {
        class: spec.class.index(),
        hash_size,
        stats: ClassStats {
            legal,
            reachable,
            histogram,
            hardest,
        },
        checksum: raw.checksum.clone(),
    })
}

/// Checks that a class row describes the variant's class `spec`: its
/// squares, bishops, hash size, start and goal.
fn check_shape<W: Word>(
    spec: &ClassSpec<W>,
    raw: &RawClass,
    start: u64,
    goal: u64,
) -> std::result::Result<(), RecordFault> {
    let (white, black) = spec.counts();
    let expected = [
        ("squares", raw.squares, spec.geometry.len() as i64),
        ("white", raw.white, i64::from(white)),
        ("black", raw.black, i64::from(black)),
        ("hash_size", raw.hash_size, spec.index.len() as i64),
        ("start_hash", raw.start_hash, start as i64),
        ("goal_hash", raw.goal_hash, goal as i64),
    ];
    for (field, stored, variant) in expected {
        if stored != variant {
            return Err(RecordFault::Differs { field, stored, variant });
        }
    }
    Ok(())
}

/// A JSON list of numbers in a class row.
fn list(field: &'static str, text: &str) -> std::result::Result<Vec<u64>, RecordFault> {
    serde_json::from_str::<Vec<u64>>(text).map_err(|_| RecordFault::NotCounts(field))
}

/// The histogram of a class row, checked: one goal, a position at every
/// remoteness up to the largest, `reachable` in all, and the largest
/// remoteness stored beside it.
fn check_histogram(raw: &RawClass, reachable: u64) -> std::result::Result<Vec<u64>, RecordFault> {
    let histogram = list("histogram", &raw.histogram)?;
    if histogram.is_empty() || histogram.len() > usize::from(Cell::MAX_REMOTENESS) + 1 {
        return Err(RecordFault::HistogramLength(histogram.len()));
    }
    if histogram[0] != 1 || histogram.contains(&0) {
        return Err(RecordFault::HistogramGap);
    }
    if histogram.iter().try_fold(0u64, |s, &n| s.checked_add(n)) != Some(reachable) {
        return Err(RecordFault::HistogramSum { reachable });
    }
    let max = histogram.len() as i64 - 1;
    if raw.max_remoteness != Some(max) {
        return Err(RecordFault::MaxRemoteness { max });
    }
    Ok(histogram)
}

/// The hardest positions of a class row, checked: as many as the
/// histogram's last layer has (at most [`HARDEST`]), in order, in range.
fn check_hardest(raw: &RawClass, histogram: &[u64], hash_size: u64) -> std::result::Result<Vec<u64>, RecordFault> {
    let hardest = list("hardest", &raw.hardest)?;
    let top = histogram[histogram.len() - 1];
    if hardest.len() as u64 != top.min(HARDEST as u64) {
        return Err(RecordFault::HardestCount(hardest.len()));
    }
    if hardest.windows(2).any(|w| w[0] >= w[1]) || hardest.iter().any(|&h| h >= hash_size) {
        return Err(RecordFault::HardestOrder);
    }
    Ok(hardest)
}

/// What is wrong with a class's record (its row of `classes`): the
/// opening names the file and the class, then says this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RecordFault {
    /// A field that the variant fixes (squares, bishops, hash size, start,
    /// goal) has another value.
    Differs {
        /// The column.
        field: &'static str,
        /// What the row holds.
        stored: i64,
        /// What the variant has.
        variant: i64,
    },
    /// A count is out of its range.
    OutOfRange {
        /// The column.
        field: &'static str,
        /// What the row holds.
        value: i64,
        /// The least it may be.
        low: u64,
        /// The most it may be.
        high: u64,
    },
    /// A column that holds a JSON list of counts does not.
    NotCounts(&'static str),
    /// The histogram has this many entries: none, or more remotenesses
    /// than a cell holds.
    HistogramLength(usize),
    /// The histogram has no single goal, or a remoteness without positions
    /// below its largest.
    HistogramGap,
    /// The histogram does not add up to the reachable positions.
    HistogramSum {
        /// The row's reachable count.
        reachable: u64,
    },
    /// The largest remoteness stored is not the histogram's.
    MaxRemoteness {
        /// The histogram's largest.
        max: i64,
    },
    /// The row lists this many hardest positions, not as many as its last
    /// layer holds.
    HardestCount(usize),
    /// The hardest positions are out of order or out of range.
    HardestOrder,
    /// The mirrored flag is neither 0 nor 1.
    Mirrored(i64),
    /// The class checksum is not 16 hex digits.
    Checksum,
    /// The class is mirrored from the named class, but its counts differ.
    MirrorCounts(String),
    /// The class is marked mirrored, but the variant's class is not the
    /// mirror image of class a1.
    NotAMirror,
}

impl std::fmt::Display for RecordFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordFault::Differs { field, stored, variant } => {
                write!(f, "{field} is {stored}, the variant has {variant}")
            }
            RecordFault::OutOfRange {
                field,
                value,
                low,
                high,
            } => {
                write!(f, "{field} is {value}, not between {low} and {high}")
            }
            RecordFault::NotCounts(field) => write!(f, "{field} is not a list of counts"),
            RecordFault::HistogramLength(n) => write!(f, "the histogram has {n} entries"),
            RecordFault::HistogramGap => {
                f.write_str("the histogram does not have one goal and a position at every remoteness up to the largest")
            }
            RecordFault::HistogramSum { reachable } => {
                write!(f, "the histogram does not add up to {reachable} reachable positions")
            }
            RecordFault::MaxRemoteness { max } => write!(f, "max_remoteness is not {max}, the histogram's largest"),
            RecordFault::HardestCount(n) => write!(f, "it lists {n} hardest positions"),
            RecordFault::HardestOrder => f.write_str("its hardest positions are out of order or out of range"),
            RecordFault::Mirrored(v) => write!(f, "mirrored is {v}"),
            RecordFault::Checksum => f.write_str("its checksum is not 16 hex digits"),
            RecordFault::MirrorCounts(source) => {
                write!(f, "it is mirrored from class {source}, but its counts differ")
            }
            RecordFault::NotAMirror => f.write_str("it is marked mirrored, but it is not the mirror image of class a1"),
        }
    }
}
