//! Solved databases: one SQLite file per variant.
//!
//! A database is written whole into a temporary file beside its final name,
//! in one transaction, synced, and renamed into place, so a crash leaves
//! either the old file or the new one, never half of one. Opening checks that
//! the file is complete and of this program's format before anything in it is
//! believed. The schema (see `SCHEMA` and the README) is meant to be read by
//! people with `sqlite3` as well as by this program.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::error::{Error, Result};
use crate::index::{colex_rank, colex_unrank, rank_within};
use crate::remoteness::{Cell, Remoteness};
use crate::rules::{Part, safe_cells};
use crate::solver::{ClassStats, Solution};
use crate::tight::Subsets;
use crate::variant::ClassSpec;
use crate::variant::Variant;

/// The version of the database layout; a file of another version is refused.
pub const FORMAT_VERSION: u32 = 1;

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
    mirrored       INTEGER NOT NULL,    -- 1: derived from the other class by the left-right mirror
    checksum       TEXT NOT NULL        -- FNV-1a 64 of the remoteness bytes in hash order, hex
);
CREATE TABLE positions (
    class      INTEGER NOT NULL,
    hash       INTEGER NOT NULL,        -- the public hash of the class part
    remoteness INTEGER,                 -- NULL: legal but unreachable
    PRIMARY KEY (class, hash)
) WITHOUT ROWID;
CREATE TABLE blocks (
    class INTEGER NOT NULL,
    white INTEGER NOT NULL,             -- colex rank of the white set: hash / C(n - w, b)
    data  BLOB NOT NULL,                -- a byte per legal black set beside it, in colex order
                                        -- among the safe cells: remoteness, or 254 unreachable
    PRIMARY KEY (class, white)
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
}

impl Layout {
    /// The layout for `solution`: rows while every class has at most
    /// [`ROWS_MAX_LEGAL`] legal positions, blocks beyond.
    pub fn for_solution(solution: &Solution) -> Layout {
        if solution.classes.iter().all(|c| c.stats.legal <= ROWS_MAX_LEGAL) {
            Layout::Rows
        } else {
            Layout::Blocks
        }
    }

    fn name(self) -> &'static str {
        match self {
            Layout::Rows => "rows",
            Layout::Blocks => "blocks",
        }
    }
}

/// The most legal positions per class stored as one row each.
pub const ROWS_MAX_LEGAL: u64 = 1_000_000;

/// Where the database of `variant` lives in `dir`.
pub fn path(dir: &Path, variant: &str) -> PathBuf {
    dir.join(format!("{variant}.sqlite"))
}

/// A running FNV-1a 64 checksum of a class's cells in hash order (which is
/// tight-index order): cheap, and enough to tell a damaged or edited table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Checksum(u64);

impl Default for Checksum {
    fn default() -> Checksum {
        Checksum(0xcbf2_9ce4_8422_2325)
    }
}

impl Checksum {
    /// Adds cells.
    pub fn add(&mut self, cells: &[u8]) {
        for &byte in cells {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The checksum as 16 hex digits.
    pub fn hex(self) -> String {
        format!("{:016x}", self.0)
    }
}

/// Writes the database of `variant` into `dir`, atomically, and returns its
/// path.
///
/// # Errors
///
/// When the directory cannot be made or the file cannot be written; no file
/// of the final name is touched then.
pub fn write(dir: &Path, variant: &Variant, solution: &Solution) -> Result<PathBuf> {
    write_with(dir, variant, solution, Layout::for_solution(solution))
}

/// [`write()`] with a chosen layout.
///
/// # Errors
///
/// As [`write()`].
pub fn write_with(dir: &Path, variant: &Variant, solution: &Solution, layout: Layout) -> Result<PathBuf> {
    fs::create_dir_all(dir).map_err(|e| Error::Io(dir.to_path_buf(), e))?;
    let dest = path(dir, variant.name());
    let tmp = dir.join(format!(".{}.sqlite.tmp-{}", variant.name(), std::process::id()));
    let result = write_file(&tmp, variant, solution, layout).and_then(|()| {
        fs::rename(&tmp, &dest).map_err(|e| Error::Io(dest.clone(), e))?;
        // Make the rename itself durable.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| dest)
}

fn write_file(tmp: &Path, variant: &Variant, solution: &Solution, layout: Layout) -> Result<()> {
    let _ = fs::remove_file(tmp);
    let sql = |e| Error::Sqlite(tmp.to_path_buf(), e);
    let mut conn = Connection::open(tmp).map_err(sql)?;
    // The file is private until renamed, so no journal is needed.
    // Large pages keep the blobs of big boards off overflow chains.
    conn.execute_batch("PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
        .map_err(sql)?;
    let tx = conn.transaction().map_err(sql)?;
    tx.execute_batch(SCHEMA).map_err(sql)?;
    let starts = variant.class_hashes(variant.start());
    let goals = variant.class_hashes(&variant.goal());
    let mut start_remoteness = Some(Remoteness(0));
    let (mut legal, mut reachable, mut max) = (1u128, 1u128, Some(Remoteness(0)));
    {
        let mut row = tx
            .prepare("INSERT INTO positions (class, hash, remoteness) VALUES (?1, ?2, ?3)")
            .map_err(sql)?;
        let mut block_row = tx
            .prepare("INSERT INTO blocks (class, white, data) VALUES (?1, ?2, ?3)")
            .map_err(sql)?;
        let mut class_row = tx
            .prepare("INSERT INTO classes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)")
            .map_err(sql)?;
        for (k, (spec, table)) in variant.classes().iter().zip(&solution.classes).enumerate() {
            let class = spec.class.index() as i64;
            let mut checksum = Checksum::default();
            checksum.add(&table.cells);
            let index = &table.index;
            for r in 0..index.white_sets() {
                let block = index.block(r);
                let cells = &table.cells[block.start as usize..block.end as usize];
                if cells.is_empty() {
                    continue;
                }
                match layout {
                    Layout::Blocks => {
                        block_row.execute(params![class, r as i64, cells]).map_err(sql)?;
                    }
                    Layout::Rows => {
                        let white = colex_unrank(r, index.white());
                        for (black, &byte) in Subsets::new(index.safe(r), index.black()).zip(cells) {
                            let hash = spec.index.rank(Part { white, black });
                            row.execute(params![class, hash as i64, Cell(byte).remoteness().map(|r| r.0)])
                                .map_err(sql)?;
                        }
                    }
                }
            }
            let stats = &table.stats;
            let (white, black) = spec.counts();
            class_row
                .execute(params![
                    class,
                    spec.geometry.len() as i64,
                    white,
                    black,
                    spec.index.len() as i64,
                    starts[k] as i64,
                    goals[k] as i64,
                    stats.legal as i64,
                    stats.reachable as i64,
                    stats.max_remoteness().map(|r| r.0),
                    serde_json::to_string(&stats.histogram).expect("numbers serialize"),
                    serde_json::to_string(&stats.hardest).expect("numbers serialize"),
                    table.mirrored,
                    checksum.hex(),
                ])
                .map_err(sql)?;
            start_remoteness = sum(start_remoteness, table.cell(starts[k]).remoteness());
            max = sum(max, stats.max_remoteness());
            legal *= u128::from(stats.legal);
            reachable *= u128::from(stats.reachable);
        }
    }
    let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let meta: Vec<(&str, String)> = vec![
        ("format", "bishops".into()),
        ("layout", layout.name().into()),
        ("format_version", FORMAT_VERSION.to_string()),
        ("variant", variant.name().into()),
        ("description", variant.description().into()),
        ("board", variant.board().to_string()),
        ("start", variant.start().to_string()),
        ("goal", variant.goal().to_string()),
        ("hash_scheme", crate::index::HASH_SCHEME.into()),
        ("hash_version", crate::index::HASH_VERSION.to_string()),
        ("legal_positions", legal.to_string()),
        ("reachable_positions", reachable.to_string()),
        ("max_remoteness", max.map_or(String::new(), |r| r.to_string())),
        (
            "start_remoteness",
            start_remoteness.map_or(String::new(), |r| r.to_string()),
        ),
        ("program_version", env!("CARGO_PKG_VERSION").into()),
        ("solve_seconds", format!("{:.6}", solution.elapsed.as_secs_f64())),
        ("created_unix", created.to_string()),
    ];
    for (key, value) in meta {
        tx.execute("INSERT INTO meta VALUES (?1, ?2)", params![key, value])
            .map_err(sql)?;
    }
    tx.commit().map_err(sql)?;
    conn.close().map_err(|(_, e)| sql(e))?;
    fs::File::open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::Io(tmp.to_path_buf(), e))
}

fn sum(a: Option<Remoteness>, b: Option<Remoteness>) -> Option<Remoteness> {
    Some(a? + b?)
}

/// What a database says of one class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassRecord {
    /// The class number (0: a1's class, 1: a2's).
    pub class: usize,
    /// R(n, w, b).
    pub hash_size: u64,
    /// The counts and hardest positions.
    pub stats: ClassStats,
    /// The checksum of the class's rows, as written.
    pub checksum: String,
}

/// The `meta` table of a database, read once when it is opened: what the
/// file says of itself and of the whole variant.
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
    /// position reaches the goal or the value is absent.
    pub max_remoteness: Option<Remoteness>,
    /// The remoteness of the start; `None` when unreachable or absent.
    pub start_remoteness: Option<Remoteness>,
    /// The version of `bishops` that wrote the file.
    pub program_version: Option<String>,
    /// Seconds the solve took, indices included.
    pub solve_seconds: Option<f64>,
    /// When the file was written, in seconds since 1970.
    pub created_unix: Option<u64>,
}

/// An open, checked database of one variant.
pub struct Database {
    conn: Connection,
    path: PathBuf,
    metadata: Metadata,
    specs: Vec<ClassSpec>,
    classes: Vec<ClassRecord>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("path", &self.path).finish()
    }
}

impl Database {
    /// Opens the database of `variant` in `dir` and checks that it can be
    /// trusted: complete, of this format and hash version, and of this
    /// variant's start.
    ///
    /// # Errors
    ///
    /// [`Error::NotSolved`] when there is no file, [`Error::Corrupt`] when
    /// there is one that cannot be trusted.
    pub fn open(dir: &Path, variant: &Variant) -> Result<Database> {
        let path = path(dir, variant.name());
        let corrupt = |problem: String| Error::Corrupt {
            path: path.clone(),
            problem,
            variant: variant.name().to_owned(),
        };
        let len = match fs::metadata(&path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotSolved {
                    variant: variant.name().to_owned(),
                    path,
                });
            }
            Err(e) => return Err(Error::Io(path, e)),
        };
        let sqlite = |e: rusqlite::Error| corrupt(format!("cannot be read ({e})"));
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite)?;
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0)).map_err(sqlite)?;
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).map_err(sqlite)?;
        let expected = (pages * page_size) as u64;
        if expected != len || len == 0 {
            return Err(corrupt(format!(
                "is truncated or padded: {len} bytes, its header says {expected}"
            )));
        }
        let meta = |key: &str| read_meta(&conn, key).map_err(sqlite);
        if meta("format")?.as_deref() != Some("bishops") {
            return Err(corrupt("is not a bishops database".into()));
        }
        let version = meta("format_version")?.unwrap_or_default();
        if version != FORMAT_VERSION.to_string() {
            return Err(corrupt(format!(
                "is of format version {version}, this program reads version {FORMAT_VERSION}"
            )));
        }
        let hash_version = meta("hash_version")?.unwrap_or_default();
        if hash_version != crate::index::HASH_VERSION.to_string() {
            return Err(corrupt(format!(
                "uses hash version {hash_version}, this program uses version {}",
                crate::index::HASH_VERSION
            )));
        }
        if meta("variant")?.as_deref() != Some(variant.name())
            || meta("start")?.as_deref() != Some(&variant.start().to_string())
        {
            return Err(corrupt(format!(
                "is not of variant {} with start {}",
                variant.name(),
                variant.start()
            )));
        }
        let layout = match meta("layout")?.as_deref() {
            Some("rows") => Layout::Rows,
            Some("blocks") => Layout::Blocks,
            other => return Err(corrupt(format!("has an unknown layout {other:?}"))),
        };
        let classes = read_classes(&conn).map_err(sqlite)?;
        let expected: Vec<(usize, u64)> = variant
            .classes()
            .iter()
            .map(|s| (s.class.index(), s.index.len()))
            .collect();
        let found: Vec<(usize, u64)> = classes.iter().map(|c| (c.class, c.hash_size)).collect();
        if expected != found {
            return Err(corrupt(format!("has classes {found:?}, the variant has {expected:?}")));
        }
        let number = |key: &str| -> Result<Option<String>> { Ok(meta(key)?.filter(|v| !v.is_empty())) };
        let parse = |key: &str, value: &str| corrupt(format!("has an unreadable {key} `{value}` in its metadata"));
        let remoteness = |key: &str| -> Result<Option<Remoteness>> {
            number(key)?
                .map(|v| v.parse::<u16>().map(Remoteness).map_err(|_| parse(key, &v)))
                .transpose()
        };
        let count = |key: &str| -> Result<Option<u128>> {
            number(key)?.map(|v| v.parse().map_err(|_| parse(key, &v))).transpose()
        };
        let metadata = Metadata {
            variant: variant.name().to_owned(),
            layout,
            start: variant.start().to_string(),
            legal_positions: count("legal_positions")?,
            reachable_positions: count("reachable_positions")?,
            max_remoteness: remoteness("max_remoteness")?,
            start_remoteness: remoteness("start_remoteness")?,
            program_version: meta("program_version")?,
            solve_seconds: number("solve_seconds")?.and_then(|v| v.parse().ok()),
            created_unix: number("created_unix")?.and_then(|v| v.parse().ok()),
        };
        Ok(Database {
            conn,
            path,
            metadata,
            specs: variant.classes().to_vec(),
            classes,
        })
    }

    /// What the file says of itself, read when it was opened.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Per class: counts, histogram, hardest positions.
    pub fn classes(&self) -> &[ClassRecord] {
        &self.classes
    }

    fn read_error(&self, e: rusqlite::Error) -> Error {
        self.corrupt(format!("cannot be read ({e})"))
    }

    /// The cell of `hash` in the `k`-th class of the variant: one indexed
    /// read. A hash that is not stored is [`Cell::ILLEGAL`].
    ///
    /// # Errors
    ///
    /// When the file cannot be read.
    pub fn cell(&self, k: usize, hash: u64) -> Result<Cell> {
        let class = self.classes[k].class as i64;
        let byte: Option<Option<u16>> = match self.metadata.layout {
            Layout::Rows => self
                .conn
                .prepare_cached("SELECT remoteness FROM positions WHERE class = ?1 AND hash = ?2")
                .and_then(|mut st| st.query_row(params![class, hash as i64], |r| r.get(0)).optional()),
            Layout::Blocks => {
                let spec = &self.specs[k];
                let part = spec.index.unrank(hash);
                let safe = safe_cells(&spec.geometry, part.white);
                if !part.black.is_subset(safe) {
                    return Ok(Cell::ILLEGAL);
                }
                let at = rank_within(part.black, safe) as i64 + 1;
                self.conn
                    .prepare_cached("SELECT substr(data, ?3, 1) FROM blocks WHERE class = ?1 AND white = ?2")
                    .and_then(|mut st| {
                        st.query_row(params![class, colex_rank(part.white) as i64, at], |r| {
                            let byte: Vec<u8> = r.get(0)?;
                            Ok(byte.first().map(|&b| u16::from(b)))
                        })
                        .optional()
                    })
                    .map(|b| b.map(|b| b.filter(|&b| b != u16::from(Cell::UNREACHABLE.0))))
            }
        }
        .map_err(|e| self.read_error(e))?;
        Ok(match byte {
            None => Cell::ILLEGAL,
            Some(None) => Cell::UNREACHABLE,
            Some(Some(r)) if r <= u16::from(Cell::MAX_REMOTENESS) => Cell(r as u8),
            Some(Some(r)) => {
                return Err(self.read_error(rusqlite::Error::IntegralValueOutOfRange(2, i64::from(r))));
            }
        })
    }

    /// The remoteness of the legal class part `hash` of the `k`-th class,
    /// `None` when it cannot reach the goal.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the part is not in the table: it was checked
    /// legal, so the table is wrong.
    pub fn remoteness_of(&self, k: usize, hash: u64) -> Result<Option<Remoteness>> {
        let cell = self.cell(k, hash)?;
        if !cell.is_legal() {
            return Err(self.corrupt(format!(
                "has no entry for the legal hash {hash} of class {}",
                self.classes[k].class
            )));
        }
        Ok(cell.remoteness())
    }

    /// The remoteness of a position given by its class hashes, `None` when it
    /// cannot reach the goal.
    ///
    /// # Errors
    ///
    /// As [`Database::remoteness_of`].
    pub fn remoteness(&self, hashes: &[u64]) -> Result<Option<Remoteness>> {
        let mut total = Some(Remoteness(0));
        for (k, &hash) in hashes.iter().enumerate() {
            total = sum(total, self.remoteness_of(k, hash)?);
        }
        Ok(total)
    }

    /// Calls `f(hash, part, cell)` for every legal position of the `k`-th
    /// class in hash order, reading the table as a stream, then checks what
    /// was read against the stored checksum.
    ///
    /// # Errors
    ///
    /// What `f` returns, or [`Error::Corrupt`] when the table is damaged.
    pub fn for_each_row(&self, k: usize, mut f: impl FnMut(u64, Part, Cell) -> Result<()>) -> Result<()> {
        let class = self.classes[k].class as i64;
        let spec = &self.specs[k];
        let read = |e| self.read_error(e);
        let mut checksum = Checksum::default();
        match self.metadata.layout {
            Layout::Rows => {
                let mut st = self
                    .conn
                    .prepare("SELECT hash, remoteness FROM positions WHERE class = ?1 ORDER BY hash")
                    .map_err(read)?;
                let mut rows = st.query([class]).map_err(read)?;
                while let Some(row) = rows.next().map_err(read)? {
                    let hash = row.get::<_, i64>(0).map_err(read)? as u64;
                    let cell = row
                        .get::<_, Option<u8>>(1)
                        .map_err(read)?
                        .map_or(Cell::UNREACHABLE, Cell);
                    checksum.add(&[cell.0]);
                    f(hash, spec.index.unrank(hash), cell)?;
                }
            }
            Layout::Blocks => {
                let mut st = self
                    .conn
                    .prepare("SELECT white, data FROM blocks WHERE class = ?1 ORDER BY white")
                    .map_err(read)?;
                let mut rows = st.query([class]).map_err(read)?;
                let (white_count, black_count) = spec.counts();
                while let Some(row) = rows.next().map_err(read)? {
                    let white = colex_unrank(row.get::<_, i64>(0).map_err(read)? as u64, white_count);
                    let data: Vec<u8> = row.get(1).map_err(read)?;
                    let safe = safe_cells(&spec.geometry, white);
                    if data.len() as u64 != crate::index::binomial(safe.count(), black_count) {
                        return Err(self.corrupt(format!("has a block of the wrong length in class {class}")));
                    }
                    checksum.add(&data);
                    for (black, &byte) in Subsets::new(safe, black_count).zip(&data) {
                        let part = Part { white, black };
                        f(spec.index.rank(part), part, Cell(byte))?;
                    }
                }
            }
        }
        if checksum.hex() != self.classes[k].checksum {
            return Err(self.corrupt(format!("fails its checksum for class {class}")));
        }
        Ok(())
    }

    /// Reads every class's table and checks it against its stored checksum:
    /// a full read, so done before trusting a file for a whole export or
    /// before `solve` keeps it, not on every lookup.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when a table is damaged.
    pub fn verify(&self) -> Result<()> {
        let read = |e| self.read_error(e);
        for record in &self.classes {
            let class = record.class as i64;
            let mut checksum = Checksum::default();
            let sql = match self.metadata.layout {
                Layout::Rows => "SELECT coalesce(remoteness, 254) FROM positions WHERE class = ?1 ORDER BY hash",
                Layout::Blocks => "SELECT data FROM blocks WHERE class = ?1 ORDER BY white",
            };
            let mut st = self.conn.prepare(sql).map_err(read)?;
            let mut rows = st.query([class]).map_err(read)?;
            let mut count = 0u64;
            while let Some(row) = rows.next().map_err(read)? {
                let bytes: Vec<u8> = match self.metadata.layout {
                    Layout::Rows => vec![row.get::<_, u8>(0).map_err(read)?],
                    Layout::Blocks => row.get(0).map_err(read)?,
                };
                count += bytes.len() as u64;
                checksum.add(&bytes);
            }
            if checksum.hex() != record.checksum || count != record.stats.legal {
                return Err(self.corrupt(format!("fails its checksum for class {class}")));
            }
        }
        Ok(())
    }

    /// The error for this file when `problem` is found in it.
    pub fn corrupt(&self, problem: String) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            problem,
            variant: self.metadata.variant.clone(),
        }
    }
}

fn read_meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
}

fn read_classes(conn: &Connection) -> rusqlite::Result<Vec<ClassRecord>> {
    let mut st = conn.prepare(
        "SELECT class, hash_size, legal, reachable, histogram, hardest, checksum FROM classes ORDER BY class",
    )?;
    let json = |i: usize, text: String| {
        serde_json::from_str::<Vec<u64>>(&text)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
    };
    st.query_map([], |r| {
        Ok(ClassRecord {
            class: r.get::<_, i64>(0)? as usize,
            hash_size: r.get::<_, i64>(1)? as u64,
            stats: ClassStats {
                legal: r.get::<_, i64>(2)? as u64,
                reachable: r.get::<_, i64>(3)? as u64,
                histogram: json(4, r.get(4)?)?,
                hardest: json(5, r.get(5)?)?,
            },
            checksum: r.get(6)?,
        })
    })?
    .collect()
}
