//! From a variant to a database on disk: plan the memory, search, check the
//! answer against what is known, write.
//!
//! This is the whole of `bishops solve` without its terminal output, so that
//! the command line, the query API (which solves small variants on demand)
//! and tests all run one pipeline.
//!
//! # Examples
//!
//! ```
//! use bishops::Variant;
//! use bishops::pipeline::{SolveOptions, SolvePlan};
//!
//! let dir = std::env::temp_dir().join(format!("bishops-doc-pipeline-{}", std::process::id()));
//! let variant = Variant::named("7x4").unwrap();
//! let plan = SolvePlan::new(&variant, SolveOptions::default()).unwrap();
//! assert_eq!(plan.legal(), vec![972]);
//! let solved = plan.run(&dir, &mut |_| {}).unwrap();
//! assert!(solved.path.ends_with("7x4.sqlite"));
//! assert_eq!(solved.layers.last().unwrap().depth, 12);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, CheckpointOptions, Checkpointer};
use crate::error::{Error, Result};
use crate::index::binomial;
use crate::mod3::Residues;
use crate::mod3::exact::MEMO_BYTES;
use crate::mod3::fold::FileTable;
use crate::remoteness::Remoteness;
use crate::solver::classes::{Cells, Shares, Sink, Summary};
use crate::solver::search::Transport;
use crate::solver::{ClassStats, DiskStats, Event, Method, OnDisk, Plan, ShareCheckpoints, Streamed, Tables};
use crate::storage::{self, Layout};
use crate::system::{available_memory, free_disk, human_bytes};
use crate::variant::by_width;
use crate::variant::{Variant, Width};

/// How a solve runs.
#[derive(Copy, Clone, Debug, Default)]
pub struct SolveOptions {
    /// The search; `None` picks the tight search when its byte tables take
    /// at most half the memory available (or `max_memory`), and the two-bit
    /// search otherwise.
    pub method: Option<Method>,
    /// `None`: rows or blocks by size.
    pub layout: Option<Layout>,
    /// Bytes the solve may use at most, besides what is available.
    pub max_memory: Option<u64>,
    /// Bytes of disk the solve may use at most in its directory, however
    /// much is free there: a table on disk is folded onto its orbits when
    /// that makes it fit (unless `fold` is `Some(false)`), and a solve that
    /// does not fit even so is refused ([`SolvePlan::check_disk`]).
    pub max_disk: Option<u64>,
    /// `None`: no checkpoints. Otherwise the tight and two-bit searches save
    /// checkpoints into the database directory and resume from one
    /// ([`checkpoint`]);
    /// the caller should hold the variant's
    /// [`WriteLock`](crate::storage::WriteLock).
    pub checkpoints: Option<CheckpointOptions>,
    /// Whether a two-bit table on disk is folded onto its orbits before
    /// the database is written from it ([`Plan::solve_on_disk_folded_with`]):
    /// `None` folds when the table and the database would not fit the
    /// disk (or `max_disk`) together, or when a fold was begun; a fold
    /// needs checkpoints and a class whose one symmetry exchanges the
    /// colours.
    pub fold: Option<bool>,
}

/// The bytes of a database file besides its tables: the schema, the
/// metadata and the class records, each table's first page of 64 KiB
/// (measured: 448 KiB before the `frames` table, whose first page and
/// index add 128 KiB), with room to spare.
const SCHEMA_BYTES: u64 = 640 << 10;

/// The bytes a position takes at most in the rows layout: its key and
/// value in SQLite's b-tree, with the pages' slack (measured: 12.3 to 12.6).
const ROW_BYTES: u64 = 16;

/// The bytes a white set's row takes besides its cells: its key, checksum
/// and cell header (measured: about 40).
const BLOCK_ROW_BYTES: u64 = 48;

/// The bytes of a checkpoint's header lines, at most (the hardest
/// positions and a share's counts included).
const CHECKPOINT_HEADER: u64 = 16 << 10;

/// Positions a class from which a database in frames is announced at a
/// bit a position, not a quarter byte.
const LARGE_CLASS: u64 = 10_000_000_000;

/// The least memory a search with its table on disk is given for it:
/// room for a window of a few segments of the smallest size.
const MIN_TABLE_CAP: u64 = 1 << 20;

/// One search layer of a solve.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LayerReport {
    /// The class number (0: a1's class, 1: a2's).
    pub class: usize,
    /// The class's name: `a1` or `a2`.
    #[serde(default)]
    pub class_name: String,
    /// The remoteness of the layer.
    pub depth: u16,
    /// Positions in the layer.
    pub found: u64,
    /// Seconds the layer took.
    pub seconds: f64,
    /// How the search found it: `push` or `pull`; absent for the goal's
    /// layer, for layers a resumed search took from its checkpoint, and for
    /// the dense search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// For a search split between MPI ranks: bytes the ranks sent each
    /// other for the layer (messages and halo, summed over the ranks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchanged_bytes: Option<u64>,
    /// And the most bytes one rank sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub most_exchanged_bytes: Option<u64>,
    /// The longest one rank worked on the layer (expanding, and taking
    /// what the others sent, not waiting for them), in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_rank_seconds: Option<f64>,
    /// How long the ranks worked on it, on average, in seconds: short of
    /// `busiest_rank_seconds` when their shares of the layer were unequal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rank_seconds: Option<f64>,
    /// Positions whose codes changed rank before the layer, when the ranks
    /// re-cut their ranges to share its work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_positions: Option<u64>,
    /// For a search with its table on disk: what it read and wrote for
    /// the layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disk: Option<LayerOnDisk>,
    /// For the layer a search on disk resumed inside, past a mark: the
    /// white set below which the runs before this one had worked it
    /// whole. Its `seconds` are then this run's, for the rest of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_through: Option<u64>,
}

/// What a search with its table on disk read and wrote for one layer,
/// from the last layer's end to this one's (the checkpoint's sync at the
/// last boundary included).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LayerOnDisk {
    /// Segments read from the table's file.
    pub segments_read: u64,
    /// Segments written to it.
    pub segments_written: u64,
    /// Bytes of segments read and written.
    pub bytes: u64,
    /// Seconds spent reading and writing, segments and spooled images.
    pub seconds: f64,
    /// Images spooled until their segments were resident.
    pub images_spooled: u64,
    /// Bytes they took in the spool's files.
    pub spool_bytes: u64,
    /// Times the spool was claimed at or past its budget.
    pub spool_drains: u64,
    /// Times the search marked how far the layer had gone, so that a stop
    /// inside it does not lose that part.
    #[serde(default)]
    pub marks: u64,
    /// Seconds the marks took, writing back and syncing.
    #[serde(default)]
    pub mark_seconds: f64,
    /// Segments that came in on the memory of segments that left, not
    /// on fresh pages the system zeroed.
    #[serde(default)]
    pub segments_moved: u64,
}

impl From<DiskStats> for LayerOnDisk {
    fn from(disk: DiskStats) -> LayerOnDisk {
        LayerOnDisk {
            segments_read: disk.reads,
            segments_written: disk.writes,
            bytes: disk.bytes,
            seconds: disk.waited_ns as f64 / 1e9,
            images_spooled: disk.spooled,
            spool_bytes: disk.spool_bytes,
            spool_drains: disk.drains,
            marks: disk.marks,
            mark_seconds: disk.marked_ns as f64 / 1e9,
            segments_moved: disk.moved,
        }
    }
}

/// What one solve did.
#[derive(Clone, Debug)]
pub struct Solved {
    /// The database written.
    pub path: PathBuf,
    /// Seconds spent searching, building the indices included.
    pub solve_seconds: f64,
    /// Seconds spent writing the database.
    pub write_seconds: f64,
    /// Legal positions per class.
    pub legal: Vec<u64>,
    /// Each search layer (a mirrored class has none); a resumed search
    /// reports its saved layers with the seconds they took now.
    pub layers: Vec<LayerReport>,
    /// Checkpoints written, with the seconds and bytes they took.
    pub checkpoints: (u32, f64, u64),
    /// Positions the solve checked by the rules in its written table
    /// before it took the database's name ([`Database::audit`](storage::Database::audit)), and the
    /// seconds that took (part of `write_seconds`).
    pub audited: (u64, f64),
    /// When the two-bit tables were kept on disk: what that took.
    pub on_disk: Option<TableOnDisk>,
}

/// What a search with its two-bit tables on disk read and wrote, over
/// every class it searched.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TableOnDisk {
    /// Bytes of table it held in memory at most.
    pub memory_bytes: u64,
    /// Bytes a segment.
    pub segment_bytes: u64,
    /// Segments read from the table's file.
    pub segments_read: u64,
    /// Segments written to it.
    pub segments_written: u64,
    /// Bytes of segments read and written.
    pub bytes: u64,
    /// Images of found positions spooled until their segments were
    /// resident.
    pub images_spooled: u64,
    /// Bytes the spool's files took for them, written and read back once
    /// (sorted and delta-coded, about two bytes an image).
    #[serde(default)]
    pub spool_bytes: u64,
    /// The most bytes the spool's files held at once, which the disk must
    /// have room for beside the table: at most the spool's budget
    /// ([`OnDisk::spool_budget`]) and what one part of a window spools.
    #[serde(default)]
    pub spool_peak_bytes: u64,
    /// Times the spool was claimed at or past its budget, most of them
    /// inside a layer.
    #[serde(default)]
    pub spool_drains: u64,
    /// Seconds spent reading and writing, segments and spooled images.
    pub seconds: f64,
    /// Pages of 4 KiB read back from the table's file as the database was
    /// written from it, beside one read of the whole file in order that
    /// checks it: the table never comes into memory whole.
    #[serde(default)]
    pub pages_read_writing: u64,
    /// Whether the table was folded onto its orbits before the database
    /// was written from the fold.
    #[serde(default)]
    pub folded: bool,
    /// Seconds the fold took (this run's part of it, when it resumed).
    #[serde(default)]
    pub fold_seconds: f64,
}

/// A solve whose memory has been checked, ready to run: built by
/// [`SolvePlan::new`], which refuses a variant that does not fit.
#[derive(Debug)]
pub struct SolvePlan<'a> {
    variant: &'a Variant,
    plan: Planned<'a>,
    options: SolveOptions,
    /// When the two-bit tables do not fit under `--max-memory`: the bytes
    /// of table the search may hold in memory, the rest on disk.
    table_cap: Option<u64>,
    /// The bytes of exact values the write of two-bit tables into frames
    /// keeps ([`MEMO_BYTES`] but under a limit): inside the memory the
    /// solve was given, beside its tables.
    write_memo: u64,
}

/// The plan of a solve, in the word its variant's classes need: chosen
/// once, when the solve is planned.
#[derive(Debug)]
enum Planned<'a> {
    Narrow(Plan<'a, u64>),
    Wide(Plan<'a, u128>),
}

/// Runs `$body` with `$p` the [`Plan`] of `$planned`, whatever its word.
macro_rules! on_plan {
    ($planned:expr, $p:ident => $body:expr) => {
        match $planned {
            Planned::Narrow($p) => $body,
            Planned::Wide($p) => $body,
        }
    };
}

impl<'a> SolvePlan<'a> {
    /// Builds the indices of `variant` and checks that the solve fits in
    /// memory.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] when the solve needs more memory than is
    /// available, or than `options.max_memory`, or when no table numbers
    /// the variant's classes ([`Variant::tables_fit`]).
    pub fn new(variant: &'a Variant, options: SolveOptions) -> Result<SolvePlan<'a>> {
        variant.tables_fit()?;
        // The tight index's tables come first: one safe set and offset per white set.
        let index_bytes = by_width!(variant, W => variant
            .specs::<W>()
            .iter()
            .map(|s| binomial(s.geometry.len() as u32, s.counts().0).saturating_mul(8 + size_of::<W>() as u64))
            .fold(0u64, u64::saturating_add));
        // The index tables are built only when they fit in the memory the
        // machine has: then the whole need is known, and a refusal by the
        // cap (--max-memory) names it, not the index tables' part.
        if let Some(free) = available_memory()
            && index_bytes > free
        {
            return Err(Error::TooLarge(format!(
                "variant {} needs more than {} of memory to solve (its index tables alone), only {} is available",
                variant.name(),
                human_bytes(index_bytes),
                human_bytes(free)
            )));
        }
        let available = memory_limit(options.max_memory);
        let method = options.method.unwrap_or_default();
        let mut plan = if variant.is_wide() {
            Planned::Wide(Plan::in_words(variant, method))
        } else {
            Planned::Narrow(Plan::in_words(variant, method))
        };
        // A byte per position while it takes at most half the memory, so
        // that a large solve leaves the machine room to work; else two
        // bits, at about 1.2 times the time (and when neither fits, the
        // refusal names the smaller need).
        if options.method.is_none() && available.is_some_and(|a| on_plan!(&plan, p => p.memory_bytes()) > a / 2) {
            plan = match plan {
                Planned::Narrow(p) => Planned::Narrow(p.with_method(Method::TwoBit)),
                Planned::Wide(p) => Planned::Wide(p.with_method(Method::TwoBit)),
            };
        }
        let (need, method) = on_plan!(&plan, p => (p.memory_bytes(), p.method()));
        if method == Method::TwoBit && matches!(options.layout, Some(Layout::Rows | Layout::Blocks)) {
            return Err(Error::Usage(format!(
                "the {} layout holds a byte a position, which the two-bit search does not keep: ask for frames, or solve by another method",
                options.layout.map_or("", Layout::name)
            )));
        }
        if method != Method::TwoBit && options.layout == Some(Layout::Residues) {
            return Err(Error::Usage(format!(
                "the residues layout holds the two-bit search's codes, and this solve runs the {} search: solve with --method two-bit, or ask for another layout",
                method.name()
            )));
        }
        let tables = on_plan!(&plan, p => p.two_bit_table_bytes());
        let table_cap = table_cap(method, need, tables, available);
        if table_cap.is_none() {
            check_memory(variant, need, method, available, options.max_memory)?;
        }
        let (table_cap, write_memo) = write_memo(need, table_cap, available);
        Ok(SolvePlan {
            variant,
            plan,
            options,
            table_cap,
            write_memo,
        })
    }

    /// Bytes of table the search holds in memory when its tables are on
    /// disk (the cap left them no room); `None` when they are in memory.
    pub fn table_cap(&self) -> Option<u64> {
        self.table_cap
    }

    /// The plan as a solve across ranks ([`run_on`](Self::run_on)) carries
    /// it out: the two-bit search there writes its residues as the ranks'
    /// shares come (no rank holds the whole table to resolve it into
    /// frames), so that is its layout unless one was asked for.
    pub fn across_ranks(mut self) -> Self {
        if self.method() == Method::TwoBit && self.options.layout.is_none() {
            self.options.layout = Some(Layout::Residues);
        }
        self
    }

    /// The search the solve runs.
    pub fn method(&self) -> Method {
        on_plan!(&self.plan, p => p.method())
    }

    /// Bytes of disk the solve needs at most: the database as SQLite
    /// stores it ([`database_bytes`](Self::database_bytes)), and with
    /// checkpoints one per searched class plus a second of the largest (a
    /// new one is written before the old one goes); with its tables on
    /// disk, their files and the spool of the one searched
    /// ([`OnDisk::spool_budget`]).
    pub fn disk_bytes(&self) -> u64 {
        self.disk_need(false)
    }

    /// Whether the solve into `dir` folds its table onto its orbits: asked
    /// for, or left to the solve ([`SolveOptions::fold`]) and begun
    /// already or needed for the disk to suffice.
    pub fn folds(&self, dir: &Path) -> bool {
        if self.options.fold == Some(false) || !self.may_fold() {
            return false;
        }
        if self.options.fold == Some(true) {
            return true;
        }
        let begun = self.fold_record(dir).is_some();
        let whole = self.disk_need(false);
        let short = free_disk(dir).is_some_and(|free| whole > free.saturating_add(self.checkpoint_bytes(dir)));
        let over = self.options.max_disk.is_some_and(|cap| whole > cap);
        begun || short || over
    }

    /// Whether this solve's tables could be folded: kept on disk, with
    /// checkpoints, on a board whose one symmetry exchanges the colours.
    fn may_fold(&self) -> bool {
        self.table_cap.is_some() && self.options.checkpoints.is_some() && on_plan!(&self.plan, p => p.can_fold())
    }

    /// The record of a fold begun in `dir` by an earlier run, if there is one.
    fn fold_record(&self, dir: &Path) -> Option<PathBuf> {
        self.variant
            .class_list()
            .into_iter()
            .map(|class| crate::solver::fold::fold_files(dir, self.variant.name(), class).1)
            .find(|record| record.exists())
    }

    /// Bytes of disk the solve into `dir` needs at most: as
    /// [`disk_bytes`](Self::disk_bytes), or when it folds its table
    /// ([`folds`](Self::folds)) the larger of the search's need (its
    /// table's file, checkpoints and spool) and the write's (the orbits' file, at
    /// most half the table and a position a white set, and the database).
    pub fn disk_bytes_in(&self, dir: &Path) -> u64 {
        self.disk_need(self.folds(dir))
    }

    fn disk_need(&self, fold: bool) -> u64 {
        if let Some(cap) = self.table_cap {
            // Each class's table file, kept until the database is written
            // from them all, and with checkpoints two of its seals (64
            // bytes a segment) and summaries, a new one written before the
            // old one goes.
            let segment = OnDisk {
                dir: PathBuf::new(),
                max_bytes: cap,
                kept: true,
            }
            .segment_bytes();
            let checkpoints = |legal: u64, white_sets: u64| {
                let checkpoint =
                    (legal.div_ceil(32) * 8).div_ceil(segment) * 64 + white_sets.div_ceil(8) * 8 + CHECKPOINT_HEADER;
                if self.options.checkpoints.is_some() {
                    2 * checkpoint
                } else {
                    0
                }
            };
            let files: u64 = self
                .searched()
                .map(|(legal, white_sets)| legal.div_ceil(32) * 8 + checkpoints(legal, white_sets))
                .sum();
            // The spool of the class being searched, gone before the
            // database is written.
            let spool = self
                .searched()
                .map(|(legal, _)| OnDisk::spool_budget(legal.div_ceil(32) * 8))
                .max()
                .unwrap_or(0);
            if fold {
                // A position and its image are one orbit, and a position
                // is its own image at most once a white set.
                let folded: u64 = self
                    .searched()
                    .map(|(legal, white_sets)| {
                        (legal + white_sets).div_ceil(2).div_ceil(32) * 8 + checkpoints(legal, white_sets)
                    })
                    .sum();
                return (files + spool).max(folded + self.database_bytes());
            }
            return files + spool.max(self.database_bytes());
        }
        let checkpoints: Vec<u64> = self
            .searched()
            .map(|(legal, white_sets)| match self.method() {
                // Two bits a position; a checkpoint adds a summary byte per
                // white set, in whole words, and a header.
                Method::TwoBit => legal.div_ceil(32) * 8 + white_sets.div_ceil(8) * 8 + CHECKPOINT_HEADER,
                Method::Tight | Method::Dense => legal + CHECKPOINT_HEADER,
            })
            .collect();
        let database = self.database_bytes();
        if self.options.checkpoints.is_some() {
            database + checkpoints.iter().sum::<u64>() + checkpoints.iter().max().unwrap_or(&0)
        } else {
            database
        }
    }

    /// Bytes the database file will take at most, as SQLite stores it in
    /// the layout the solve writes: its pages of 64 KiB, the schema's few
    /// of them, and per searched class (a mirrored class stores nothing of
    /// its own) a row of about 16 bytes per position in the rows
    /// layout, or in the blocks and residues layouts a byte or two bits
    /// per position and a row per white set, with room for pages not
    /// filled. The file was never larger where it was measured: every
    /// named variant up to 9x8 in each layout (`tests/trust.rs`), 11x8 and
    /// 11x10, and 12x10's recorded size (`docs/figures.md`).
    pub fn database_bytes(&self) -> u64 {
        let layout = match (self.method(), self.options.layout) {
            (_, Some(layout)) => layout,
            // Across ranks the layout was made residues ([`Self::across_ranks`]).
            (Method::TwoBit, None) => Layout::Frames,
            (_, None) => Layout::for_legal(self.legal().into_iter()),
        };
        let tables: u64 = self
            .searched()
            .map(|(legal, white_sets)| match layout {
                Layout::Rows => legal * ROW_BYTES + white_sets * BLOCK_ROW_BYTES,
                Layout::Blocks => legal + white_sets * BLOCK_ROW_BYTES,
                Layout::Residues => legal.div_ceil(4) + white_sets * BLOCK_ROW_BYTES,
                // Compressed: a quarter of a byte a position is more than
                // any table measured took (1.33 bits on 11x8); from ten
                // billion positions a class, a bit a position (0.82 bits
                // on 11x10, 0.72 on 12x10: the larger the board, the fewer).
                Layout::Frames if legal >= LARGE_CLASS => legal.div_ceil(8) + white_sets * BLOCK_ROW_BYTES / 64,
                Layout::Frames => legal.div_ceil(4) + white_sets * BLOCK_ROW_BYTES / 64,
            })
            // Pages are not filled to the last byte, and the b-trees have
            // interior pages: an eighth more (measured: 11x10's residues
            // file is 1.042 times its cells and its white sets' 48 bytes;
            // 12x10's, recorded as 17.7 GB, 1.085 times).
            .map(|bytes| bytes + bytes / 8)
            .sum();
        SCHEMA_BYTES + tables
    }

    /// The legal positions and white sets of each class the solve searches
    /// (not those it derives from a mirror image).
    fn searched(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.legal()
            .into_iter()
            .zip(on_plan!(&self.plan, p => p.white_sets()))
            .enumerate()
            .filter(|&(k, _)| !self.is_mirrored(k))
            .map(|(_, sizes)| sizes)
    }

    /// Refuses a solve into `dir` that would need more disk than the cap
    /// (`--max-disk`), or would not fit in its free disk space and the
    /// space its own checkpoints there hold, which the solve resumes from
    /// and replaces.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] naming what it needs and the cap, or what is free.
    pub fn check_disk(&self, dir: &Path) -> Result<()> {
        let (need, held) = (self.disk_bytes_in(dir), self.checkpoint_bytes(dir));
        if let Some(cap) = self.options.max_disk
            && need > cap
        {
            return Err(Error::TooLarge(format!(
                "variant {} needs about {} of disk in {}, more than the cap of {} (--max-disk){}",
                self.variant.name(),
                human_bytes(need),
                crate::text::path(dir),
                human_bytes(cap),
                if self.folds(dir) {
                    ", even with its table folded onto its orbits".to_string()
                } else if self.options.fold == Some(false) && self.may_fold() {
                    format!(
                        ", and folded onto its orbits it would need about {} (--fold never)",
                        human_bytes(self.disk_need(true))
                    )
                } else {
                    String::new()
                }
            )));
        }
        match free_disk(dir) {
            Some(free) if need > free.saturating_add(held) => Err(Error::TooLarge(format!(
                "variant {} needs about {} of disk in {}, only {} is free{}",
                self.variant.name(),
                human_bytes(need),
                crate::text::path(dir),
                human_bytes(free),
                if held > 0 {
                    format!(" besides the {} its checkpoints hold", human_bytes(held))
                } else {
                    String::new()
                }
            ))),
            _ => Ok(()),
        }
    }

    /// Bytes the checkpoints of this variant's one-process solve hold in
    /// `dir` now, with the files of its tables on disk and their folds:
    /// room for the solve, which resumes from them and writes its own
    /// over them ([`disk_bytes`](Self::disk_bytes) counts those).
    pub fn checkpoint_bytes(&self, dir: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        let name = self.variant.name();
        self.variant
            .class_list()
            .into_iter()
            .flat_map(|class| {
                let files = checkpoint::table_files(dir, name, class);
                std::iter::once(checkpoint::path(dir, name, class)).chain(files)
            })
            .filter_map(|file| std::fs::symlink_metadata(file).ok())
            .filter(std::fs::Metadata::is_file)
            // What the file takes on the disk: a table's file may be sparse,
            // or given back in part by a fold.
            .map(|m| m.len().min(m.blocks() * 512))
            .sum()
    }

    /// Legal positions per class.
    pub fn legal(&self) -> Vec<u64> {
        on_plan!(&self.plan, p => p.legal())
    }

    /// How many classes are derived from a mirror image instead of searched.
    pub fn mirrored(&self) -> usize {
        (0..self.legal().len()).filter(|&k| self.is_mirrored(k)).count()
    }

    /// The peak memory of the search, in bytes: with its tables on disk,
    /// what it holds beside them and the memory given to them.
    pub fn memory_bytes(&self) -> u64 {
        let need = on_plan!(&self.plan, p => p.memory_bytes());
        match self.table_cap {
            Some(cap) => need - on_plan!(&self.plan, p => p.two_bit_table_bytes()) + cap,
            None => need,
        }
    }

    /// One line saying what the solve will do and need, in memory and on
    /// the disk of `dir`.
    pub fn summary(&self, dir: &Path) -> String {
        let legal = self.legal();
        let mirrored = self.mirrored();
        let chosen = if self.options.method.is_none() && self.method() == Method::TwoBit {
            format!(
                ", as a byte per position would need {}, over half the memory",
                human_bytes(on_plan!(&self.plan, p => p.byte_memory_bytes(Method::Tight)))
            )
        } else {
            String::new()
        };
        let on_disk = self.table_cap.map_or(String::new(), |cap| {
            format!(
                ", its table on disk with at most {} of it in memory{}",
                human_bytes(cap),
                if self.folds(dir) {
                    ", folded onto its orbits before the database is written"
                } else {
                    ""
                }
            )
        });
        format!(
            "solving {} ({} search{chosen}{on_disk}, {} thread{}): {} legal positions per class, {} class{}{}; needs about {}{} and {} of disk{}{}",
            self.variant.name(),
            self.method().name(),
            rayon::current_num_threads(),
            if rayon::current_num_threads() == 1 { "" } else { "s" },
            legal.iter().map(u64::to_string).collect::<Vec<_>>().join(" + "),
            legal.len(),
            if legal.len() == 1 { "" } else { "es" },
            if mirrored > 0 { " (one by mirror symmetry)" } else { "" },
            human_bytes(self.memory_bytes()),
            match (self.options.max_memory, available_memory()) {
                // The cap is what the solve may use when it is the lower.
                (Some(cap), a) if a.is_none_or(|a| cap < a) =>
                    format!(" of the {} cap (--max-memory)", human_bytes(cap)),
                (_, Some(a)) => format!(" of {} available", human_bytes(a)),
                (_, None) => String::new(),
            },
            human_bytes(self.disk_bytes_in(dir)),
            match self.options.max_disk {
                Some(cap) => format!(" (within the {} cap, --max-disk)", human_bytes(cap)),
                None => String::new(),
            },
            free_disk(dir).map_or(String::new(), |f| match self.checkpoint_bytes(dir) {
                0 => format!(" of {} free", human_bytes(f)),
                held => format!(
                    " of {} free and {} its checkpoints hold",
                    human_bytes(f),
                    human_bytes(held)
                ),
            })
        )
    }

    /// Searches, checks the answer against the variant's known values, and
    /// writes the database into `dir`, telling `observe` of each step.
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`] when the answer contradicts the known values
    /// (nothing is written then); [`Error::DbPath`], before the search, when
    /// the database path (or a checkpoint path) holds what the write would
    /// destroy: a directory, a symbolic link, a FIFO, a device, a socket
    /// ([`storage::check_destination`]); whatever the search or the write
    /// ran into.
    pub fn run(self, dir: &Path, observe: &mut dyn FnMut(Event)) -> Result<Solved> {
        self.run_with_notes(dir, observe, &mut |_| {})
    }

    /// Refuses, before anything is searched or announced, a solve into
    /// `dir` whose write would have to destroy what it did not make (the
    /// database path or a checkpoint path holding a directory, a symbolic
    /// link, a FIFO, a device, a socket), or could not find room for.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run) before its search.
    pub fn check_files(&self, dir: &Path) -> Result<()> {
        storage::check_dir(dir)?;
        storage::check_destination(dir, self.variant.name())?;
        self.check_disk(dir)?;
        if self.options.checkpoints.is_some() {
            checkpoint::check_files(dir, self.variant)?;
        }
        Ok(())
    }

    /// As [`run`](Self::run), telling `note` what a user should know about
    /// checkpoints: a resume, a checkpoint ignored or discarded. With
    /// checkpoints asked for, a finished solve removes the variant's
    /// checkpoints once its database is written.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); [`Error::Stopped`] when the test hook of
    /// [`CheckpointOptions::stop_after`] stops the search; [`Error::Usage`]
    /// when a fold was begun in `dir` and this solve may not fold
    /// (`--fold never`) nor start over.
    pub fn run_with_notes(
        self,
        dir: &Path,
        observe: &mut dyn FnMut(Event),
        note: &mut dyn FnMut(&str),
    ) -> Result<Solved> {
        self.check_files(dir)?;
        // Refused here, before anything is made, when it names no choice.
        let ranks = crate::solver::ranks_note()?;
        let table_cap = self.table_cap;
        if let Some(cap) = table_cap {
            // Said of the long searches, whose logs are read; a short one's
            // lines stay the same on every processor.
            if let Some(ranks) = ranks {
                note(ranks);
            }
            // What a search on disk killed outright left, once its process is gone.
            checkpoint::remove_temporary(dir, self.variant);
            note(&format!(
                "the two-bit table is kept on disk in {}, at most {} of it in memory{}",
                crate::text::path(dir),
                human_bytes(cap),
                match self.options.checkpoints {
                    Some(_) => "; its checkpoints seal its file at every layer",
                    None => "",
                }
            ));
        }
        let kept = self.options.checkpoints.is_some();
        // A fold begun gave back the table's file below where it stands:
        // the search cannot go on without it, nor start over unasked.
        if self.options.fold == Some(false)
            && self.options.checkpoints.is_some_and(|c| !c.restart)
            && let Some(record) = self.fold_record(dir)
        {
            return Err(Error::Usage(format!(
                "the table of {} was being folded onto its orbits ({}): go on with --fold auto or always, or start over with --restart",
                self.variant.name(),
                crate::text::path(&record)
            )));
        }
        let folds = self.folds(dir);
        if folds {
            note("its table is folded onto its orbits once it is searched, and the database written from the fold");
        }
        let stop_fold_after = self.options.checkpoints.and_then(|c| c.stop_fold_after);
        let fold_step_words = self
            .options
            .checkpoints
            .and_then(|c| c.fold_step_words)
            .unwrap_or(crate::mod3::fold::FOLD_STEP_WORDS);
        let mut steps = 0u64;
        let mut stop_fold = |_: u64| {
            steps += 1;
            stop_fold_after == Some(steps)
        };
        let mut checkpointer = self
            .options
            .checkpoints
            .map(|options| Checkpointer::new(dir, self.variant, options, note));
        let mut no_checkpoints = crate::solver::NoCheckpoints;
        // A write from a search kept in checkpoints is resumable as they are.
        let layout = storage::WriteOptions {
            layout: self.options.layout,
            memo_bytes: self.write_memo,
            resumable: self.options.checkpoints.map(|c| c.write),
        };
        let (variant, legal) = (self.variant, self.legal());
        let mut layers = Vec::new();
        let mut on_disk = None;
        let mut observe_layers = recording(&mut layers, observe);
        let checkpoints: &mut dyn crate::solver::ShareCheckpoints = match checkpointer.as_mut() {
            Some(c) => c,
            None => &mut no_checkpoints,
        };
        let (written, solve_seconds) = on_plan!(self.plan, plan => {
            let plan = match table_cap {
                Some(max_bytes) => plan.on_disk(OnDisk {
                    dir: dir.to_owned(),
                    max_bytes,
                    kept,
                }),
                None => plan,
            };
            let fold = folds.then_some((fold_step_words, &mut stop_fold as &mut dyn FnMut(u64) -> bool));
            solve_and_write(plan, layout, dir, checkpoints, &mut observe_layers, (&mut on_disk, fold))?
        });
        drop(observe_layers);
        if self.options.checkpoints.is_some() {
            // Written, or refused with a wrong answer, which may come from
            // a resumed checkpoint: either way the next solve starts over.
            if written.is_ok() || matches!(written, Err(Error::Mismatch(_))) {
                checkpoint::remove(dir, variant);
            }
        }
        let checkpoints = checkpointer.map_or((0, 0.0, 0), |c| c.written);
        if let Some(disk) = &on_disk {
            note(&format!(
                "the table on disk: {} segments read and {} written, {} in all, {} images spooled ({}, at most {} at once, claimed {} times at its budget), {:.1} s reading and writing; {} pages read back to write the database",
                disk.segments_read,
                disk.segments_written,
                human_bytes(disk.bytes),
                disk.images_spooled,
                human_bytes(disk.spool_bytes),
                human_bytes(disk.spool_peak_bytes),
                disk.spool_drains,
                disk.seconds,
                disk.pages_read_writing
            ));
        }
        let written = written?;
        Ok(Solved {
            on_disk,
            checkpoints,
            path: written.path,
            solve_seconds,
            write_seconds: written.seconds,
            audited: written.audited,
            legal,
            layers,
        })
    }

    /// As [`run`](Self::run), the search split between the workers that
    /// `transport` reaches (the ranks of an MPI job), every one of which
    /// runs this with the same plan ([`Plan::search_shares`]), each keeping
    /// only its share of the tables. Worker 0 checks the database path
    /// before the search; after it, every worker's statistics come to
    /// worker 0, which checks the answer against the known values and
    /// writes the database as the cells come from each worker in turn
    /// ([`Shares::send`](crate::solver::classes::Shares::send)), and returns
    /// what it did; the others return `None`. The tight byte search and the
    /// two-bit search run so.
    ///
    /// With checkpoints asked for, every worker saves its share into `dir`
    /// ([`Checkpointer::for_rank`]) and the search resumes when every
    /// worker can; once worker 0 has written the database, every worker
    /// removes the variant's checkpoints. `note` hears what a user should
    /// know about them.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); [`Error::Usage`] for the dense search, or for
    /// checkpoints saved by a job of another size. An error
    /// on one worker leaves the others waiting in a collective step: the
    /// caller ends the job.
    pub fn run_on<T: Transport + ?Sized>(
        self,
        dir: &Path,
        transport: &mut T,
        observe: &mut dyn FnMut(Event),
        note: &mut dyn FnMut(&str),
    ) -> Result<Option<Solved>> {
        let two_bit = match self.method() {
            Method::Tight => false,
            Method::TwoBit => true,
            other => {
                return Err(Error::Usage(format!(
                    "the {} search does not run across MPI ranks: use --method tight or two-bit",
                    other.name()
                )));
            }
        };
        if two_bit && self.options.layout == Some(Layout::Frames) {
            // Rank 0 writes the residues as the ranks' shares come; none
            // holds the whole table to resolve.
            return Err(Error::Usage(
                "across MPI ranks the two-bit search writes residues, not frames: ask for --layout residues, or leave it out".into(),
            ));
        }
        if let Some(cap) = self.table_cap {
            return Err(Error::Usage(format!(
                "the two-bit tables do not fit the cap of {} (--max-memory) beside the search, and a table on disk is searched in one process, not across ranks: raise the cap, or solve without mpirun",
                human_bytes(self.options.max_memory.unwrap_or(cap))
            )));
        }
        let SolvePlan {
            variant, plan, options, ..
        } = self;
        on_plan!(plan, plan => if two_bit {
            shares_on(variant, options, plan, dir, transport, observe, note, Plan::search_two_bit_shares)
        } else {
            shares_on(variant, options, plan, dir, transport, observe, note, Plan::search_shares)
        })
    }

    /// Whether class `k` will be derived from a mirror image.
    fn is_mirrored(&self, k: usize) -> bool {
        on_plan!(&self.plan, p => p.is_mirrored(k))
    }
}

/// How a fold of a table on disk steps: the words of its output between
/// two records, and whether to stop after a step (a test's hook).
type FoldHook<'a> = (u64, &'a mut dyn FnMut(u64) -> bool);

/// [`SolvePlan::run_with_notes`]'s search by `plan` and its write: the
/// write's result and the seconds the search took.
fn solve_and_write<W: Width>(
    plan: Plan<'_, W>,
    layout: storage::WriteOptions,
    dir: &Path,
    checkpoints: &mut dyn crate::solver::ShareCheckpoints,
    observe: &mut dyn FnMut(Event),
    (on_disk, fold): (&mut Option<TableOnDisk>, Option<FoldHook<'_>>),
) -> Result<(Result<Written>, f64)> {
    let variant = plan.variant();
    let refuse = |problem: String| solved_wrong(variant, &problem);
    fn written<W: Width, R: Residues>(
        found: Tables<'_, W, R>,
        (variant, layout, dir): (&Variant, storage::WriteOptions, &Path),
        refuse: &dyn Fn(String) -> Error,
        observe: &mut dyn FnMut(Event),
    ) -> (Result<Written>, f64) {
        let progress = &mut |told| {
            observe(match told {
                storage::WriteEvent::Writing { class, done, total } => Event::Writing { class, done, total },
                storage::WriteEvent::Resumed { class, from, total } => Event::WriteResumed { class, from, total },
                storage::WriteEvent::Discarded { class, at } => Event::WriteDiscarded { class, at },
            })
        };
        (
            check_and_write(variant, layout, dir, found, (refuse, progress)),
            found.elapsed().as_secs_f64(),
        )
    }
    let to = (variant, layout, dir);
    if let Some(disk) = plan.disk() {
        let mut report = TableOnDisk {
            memory_bytes: disk.max_bytes,
            segment_bytes: disk.segment_bytes(),
            segments_read: 0,
            segments_written: 0,
            bytes: 0,
            images_spooled: 0,
            spool_bytes: 0,
            spool_peak_bytes: 0,
            spool_drains: 0,
            seconds: 0.0,
            pages_read_writing: 0,
            folded: fold.is_some(),
            fold_seconds: 0.0,
        };
        let (two_bit, classes) = match fold {
            Some(stop) => {
                let (two_bit, classes, folding) = plan.solve_on_disk_folded_with(checkpoints, observe, stop)?;
                report.fold_seconds = folding.as_secs_f64();
                (two_bit, classes)
            }
            None => {
                let (two_bit, classes) = plan.solve_on_disk_with(checkpoints, observe)?;
                (two_bit.try_map(|file| Ok::<_, Error>(FileTable::Whole(file)))?, classes)
            }
        };
        for stats in classes {
            report.segments_read += stats.reads;
            report.segments_written += stats.writes;
            report.bytes += stats.bytes;
            report.images_spooled += stats.spooled;
            report.spool_bytes += stats.spool_bytes;
            report.spool_peak_bytes = report.spool_peak_bytes.max(stats.spool_peak);
            report.spool_drains += stats.drains;
            report.seconds += stats.waited_ns as f64 / 1e9;
        }
        // Written from the files, a segment at a time: the table never
        // comes into memory whole.
        let result = written(Tables::TwoBit(&two_bit), to, &refuse, observe);
        report.pages_read_writing = two_bit
            .classes
            .iter()
            .filter_map(|c| c.own())
            .map(|f| f.pages_read())
            .sum();
        *on_disk = Some(report);
        Ok(result)
    } else if plan.method() == Method::TwoBit {
        let two_bit = plan.solve_two_bit_with(checkpoints, observe)?;
        Ok(written(Tables::TwoBit(&two_bit), to, &refuse, observe))
    } else {
        let bytes = plan.solve_with(checkpoints, observe)?;
        Ok(written(Tables::<W>::Bytes(&bytes), to, &refuse, observe))
    }
}

/// [`SolvePlan::run_on`] by the search `search` runs (the byte or the
/// two-bit one, [`Plan::search_two_bit_shares`]): each worker keeps only
/// its share, and worker 0 writes the database (the residues layout for
/// two bits) as the cells come. Checkpoints as for the byte search: every
/// worker saves its share and removes it once the database is written.
#[allow(clippy::too_many_arguments)]
fn shares_on<'a, W: Width, T: Transport + ?Sized, D: Cells>(
    variant: &'a Variant,
    options: SolveOptions,
    plan: Plan<'a, W>,
    dir: &Path,
    transport: &mut T,
    observe: &mut dyn FnMut(Event),
    note: &mut dyn FnMut(&str),
    search: impl FnOnce(Plan<'a, W>, &mut T, &mut dyn ShareCheckpoints, &mut dyn FnMut(Event)) -> Result<Shares<D, W>>,
) -> Result<Option<Solved>> {
    let (layout, legal) = (options.layout, plan.legal());
    let mut checkpointer = rank_checkpointer(variant, options.checkpoints, dir, transport, note)?;
    let mut no_checkpoints = crate::solver::NoCheckpoints;
    let checkpoints: &mut dyn ShareCheckpoints = match checkpointer.as_mut() {
        Some(c) => c,
        None => &mut no_checkpoints,
    };
    let mut layers = Vec::new();
    let shares = search(plan, transport, checkpoints, &mut recording(&mut layers, observe))?;
    let asked = options.checkpoints.is_some();
    let sent = Sent {
        mirrored: shares.mirrored(),
        elapsed: shares.elapsed(),
        residues: D::RESIDUES,
    };
    let summary = shares.summary(&*transport);
    let written = write_shares(
        variant,
        layout,
        dir,
        transport,
        summary,
        &shares.searched(),
        sent,
        &|transport, k, sink| shares.send(transport, k, sink),
    );
    let Some(written) = settle(transport, dir, variant, asked, written)? else {
        return Ok(None);
    };
    Ok(Some(Solved {
        on_disk: None,
        checkpoints: checkpointer.map_or((0, 0.0, 0), |c| c.written),
        path: written.path,
        solve_seconds: shares.elapsed().as_secs_f64(),
        write_seconds: written.seconds,
        audited: written.audited,
        legal,
        layers,
    }))
}

/// What every worker does with what [`write_shares`] gave it: settles the
/// checkpoints by [`spent`] (kept unless the database was written, or a
/// wrong answer refused) and passes worker 0's database and write time on,
/// or its error; `None` on the other workers.
fn settle<T: Transport + ?Sized>(
    transport: &mut T,
    dir: &Path,
    variant: &Variant,
    asked: bool,
    written: Option<Result<Written>>,
) -> Result<Option<Written>> {
    let Some(written) = written else {
        spent(transport, dir, variant, asked, false)?;
        return Ok(None);
    };
    spent(
        transport,
        dir,
        variant,
        asked,
        written.is_ok() || matches!(written, Err(Error::Mismatch(_))),
    )?;
    written.map(Some)
}

/// Once worker 0 has written the database (`written`; or refused a wrong
/// answer, which may come from the checkpoints), every worker's
/// checkpoints are spent: worker 0 says so to all (a collective step), and
/// each removes the checkpoints of `variant` in `dir` when they were
/// `asked` for.
fn spent<T: Transport + ?Sized>(
    transport: &mut T,
    dir: &Path,
    variant: &Variant,
    asked: bool,
    written: bool,
) -> Result<()> {
    let word = if transport.worker() == 0 {
        vec![vec![u8::from(written)]; transport.workers()]
    } else {
        Vec::new()
    };
    if transport.all_to_all(word)?[0] == [1] && asked {
        checkpoint::remove(dir, variant);
    }
    Ok(())
}

/// What a partitioned search tells worker 0's writer besides the summary.
struct Sent {
    /// For each class that mirrors another: that class.
    mirrored: Vec<Option<usize>>,
    /// The time the search took.
    elapsed: std::time::Duration,
    /// Whether the cells sent are two-bit codes.
    residues: bool,
}

/// Sends one searched class's cells from every worker to worker 0, which
/// passes its sink ([`Shares::send`](crate::solver::classes::Shares::send)).
type SendClass<'s, T> = dyn Fn(&mut T, usize, Option<Sink<'_>>) -> Result<()> + 's;

/// What every rank does before its search: rank 0 checks that the
/// database of `variant` can be written into `dir`, and each rank opens its
/// checkpoints there, when `options` asks for them.
fn rank_checkpointer<'n, T: Transport + ?Sized>(
    variant: &'n Variant,
    options: Option<CheckpointOptions>,
    dir: &Path,
    transport: &T,
    note: &'n mut dyn FnMut(&str),
) -> Result<Option<Checkpointer<'n>>> {
    if transport.worker() == 0 {
        storage::check_dir(dir)?;
        storage::check_destination(dir, variant.name())?;
    }
    match options {
        Some(options) => Ok(Some(Checkpointer::for_rank(
            dir,
            variant,
            options,
            note,
            transport.worker(),
            transport.workers(),
        )?)),
        None => Ok(None),
    }
}

/// After a partitioned search: worker 0 (which alone has `summary`)
/// checks the answer and writes the database of `variant` into `dir` as
/// `send` brings it the cells of each `searched` class from every worker
/// in turn; the others send theirs. Worker 0 gets what the write did, the
/// others `None`.
#[allow(clippy::too_many_arguments)]
fn write_shares<T: Transport + ?Sized>(
    variant: &Variant,
    layout: Option<Layout>,
    dir: &Path,
    transport: &mut T,
    summary: Option<Summary>,
    searched: &[usize],
    sent: Sent,
    send: &SendClass<'_, T>,
) -> Option<Result<Written>> {
    let Some(summary) = summary else {
        // The cells of each class go to worker 0, which writes them.
        let result = searched.iter().try_for_each(|&k| send(transport, k, None));
        return result.err().map(Err);
    };
    let mut pipe = |k: usize, sink: Sink<'_>| send(transport, k, Some(sink));
    let streamed = Streamed {
        stats: summary.stats,
        mirrored: sent.mirrored,
        starts: summary.starts,
        elapsed: sent.elapsed,
        residues: sent.residues,
        cells: std::cell::RefCell::new(&mut pipe),
    };
    let refuse = |problem: String| solved_wrong(variant, &problem);
    Some(
        by_width!(variant, W => check_and_write(variant, storage::WriteOptions::whole(layout), dir, Tables::<W>::Streamed(&streamed), (&refuse, &mut |_| {}))),
    )
}

/// What [`compact`] did with one variant's database.
#[derive(Clone, Debug)]
pub struct Compacted {
    /// The database.
    pub path: PathBuf,
    /// The layout it was in: only [`Layout::Residues`] is rewritten.
    pub was: Layout,
    /// Its bytes before, and after (the same when it was not rewritten).
    pub bytes: (u64, u64),
    /// Seconds spent reading the residues, resolving them, writing the
    /// frames and checking the new file.
    pub seconds: f64,
    /// Positions the check of the new file looked at.
    pub audited: u64,
}

/// Rewrites the database of `variant` in `dir` as frames of exact values
/// when it holds residues: what a two-bit solve across MPI ranks writes
/// (no rank holds the whole table to resolve it), or one asked for with
/// `--layout residues`. Frames are smaller (11x10: 1.9 GB against 5.0) and
/// a value in them is one lookup, where a residue is a descent to the goal.
/// Each class's residues are read whole and checked block by block,
/// resolved as a solve's are ([`storage::write_vetted`]), written beside the
/// file and checked as a solve checks its own, then renamed over it: a
/// failure leaves the residues as they were. A database in another layout
/// is left alone.
///
/// # Errors
///
/// [`Error::NotSolved`] without a database; [`Error::Busy`] while another
/// process solves the variant; [`Error::TooLarge`] when the residues do
/// not fit in the memory available; [`Error::Corrupt`] when the residues
/// are damaged or cannot be resolved; what the write ran into.
pub fn compact(dir: &Path, variant: &Variant) -> Result<Compacted> {
    by_width!(variant, W => compact_in::<W>(dir, variant))
}

/// [`compact`], with the classes in words `W`.
fn compact_in<W: Width>(dir: &Path, variant: &Variant) -> Result<Compacted> {
    use crate::solver::{ClassSolution, ClassTable, Solution};
    let name = variant.name();
    let _lock = storage::WriteLock::try_acquire(dir, name)?.ok_or_else(|| Error::solving_elsewhere(name))?;
    let database = storage::Database::<W>::open_in(dir, variant)?;
    let path = database.path().to_path_buf();
    let size = |path: &Path| {
        std::fs::metadata(path)
            .map(|m| m.len())
            .map_err(|e| Error::Io(path.to_path_buf(), e))
    };
    let before = size(&path)?;
    let began = Instant::now();
    if database.layout() != Layout::Residues {
        return Ok(Compacted {
            path,
            was: database.layout(),
            bytes: (before, before),
            seconds: 0.0,
            audited: 0,
        });
    }
    let specs = variant.specs::<W>();
    let own = |k: &usize| database.mirror_of(*k).is_none();
    let table_bytes: u64 = (0..specs.len())
        .filter(own)
        .map(|k| database.classes()[k].stats.legal.div_ceil(4))
        .sum();
    let needed = table_bytes + crate::mod3::exact::MEMO_BYTES;
    if let Some(available) = available_memory()
        && needed > available
    {
        return Err(Error::TooLarge(format!(
            "variant {name}: rewriting its residues as frames needs about {} of memory, and {} is available",
            human_bytes(needed),
            human_bytes(available)
        )));
    }
    let mut classes = Vec::with_capacity(specs.len());
    for (k, spec) in specs.iter().enumerate() {
        let table = match database.mirror_of(k) {
            Some((from, mirror)) => ClassTable::Mirrored {
                from,
                mirror: mirror.clone(),
            },
            None => ClassTable::Own(database.residues(k)?),
        };
        classes.push(ClassSolution {
            class: spec.class,
            dense: spec.index,
            index: spec.tight_index(),
            table,
            stats: database.classes()[k].stats.clone(),
        });
    }
    let solved = std::time::Duration::from_secs_f64(database.metadata().solve_seconds.unwrap_or(0.0));
    drop(database);
    let solution = Solution {
        classes,
        elapsed: solved,
    };
    let refuse = |problem: String| Error::Corrupt {
        path: path.clone(),
        problem,
        variant: name.to_owned(),
    };
    let written = check_and_write(
        variant,
        storage::WriteOptions::whole(Some(Layout::Frames)),
        dir,
        Tables::TwoBit(&solution),
        (&refuse, &mut |_| {}),
    )?;
    Ok(Compacted {
        bytes: (before, size(&written.path)?),
        path: written.path,
        was: Layout::Residues,
        seconds: began.elapsed().as_secs_f64(),
        audited: written.audited.0,
    })
}

/// Checks what `found` says of `variant` against its known answers and
/// writes it into `dir` (in `layout`, or the layout that suits it); returns
/// the file and the seconds the write took.
///
/// # Errors
///
/// [`Error::Mismatch`] when the answer contradicts the known values
/// (nothing is written); what `refuse` makes of a rule the written table
/// breaks where its check looks, or of residues that cannot be resolved
/// (nothing is written either); what the write ran into.
fn check_and_write<W: Width, R: Residues>(
    variant: &Variant,
    layout: storage::WriteOptions,
    dir: &Path,
    found: Tables<'_, W, R>,
    (refuse, progress): (&dyn Fn(String) -> Error, storage::Progress<'_>),
) -> Result<Written> {
    check_known(variant, &answer(found, variant)?)?;
    let writing = Instant::now();
    // A seed of its own each solve: nothing outside the process knows
    // which positions the check will look at.
    let seed = crate::index::clock_seed();
    let audited = std::cell::Cell::new((0, 0.0));
    let vet = |database: &storage::Database<W>| {
        let began = Instant::now();
        let checked = database
            .audit(variant, storage::AUDIT_SAMPLES, seed)
            .map_err(|e| match e {
                Error::Corrupt { problem, .. } => refuse(problem),
                e => e,
            })?;
        audited.set((checked, began.elapsed().as_secs_f64()));
        Ok(())
    };
    // Residues that cannot be resolved to exact values as they are written
    // are refused as a table that fails its check is.
    let path = storage::write_vetted(dir, variant, &found, layout, &vet, progress).map_err(|e| match e {
        Error::Unresolved(problem) => refuse(problem),
        e => e,
    })?;
    Ok(Written {
        path,
        seconds: writing.elapsed().as_secs_f64(),
        audited: audited.get(),
    })
}

/// The refusal of a table a search found that breaks the rules (`problem`
/// says where): nothing is written, and the checkpoints it may have
/// resumed from are spent.
fn solved_wrong(variant: &Variant, problem: &str) -> Error {
    Error::Mismatch(format!(
        "variant {}: the table solved {problem}; nothing written (a checkpoint it resumed from may be forged: the next solve starts over)",
        variant.name()
    ))
}

/// What [`check_and_write`] did.
struct Written {
    /// The database.
    path: PathBuf,
    /// Seconds the write took, its check included.
    seconds: f64,
    /// Positions the check of the written table looked at
    /// ([`Database::audit`](storage::Database::audit)), and its seconds.
    audited: (u64, f64),
}

/// `observe`, recording each search layer and the seconds since the layer
/// before (or since its class was counted) into `layers`.
fn recording<'a>(layers: &'a mut Vec<LayerReport>, observe: &'a mut dyn FnMut(Event)) -> impl FnMut(Event) + 'a {
    let mut last = Instant::now();
    move |event: Event| {
        match event {
            Event::Counted { .. } => last = Instant::now(),
            Event::Layer {
                class,
                depth,
                found,
                direction,
                resumed,
                ..
            } => {
                layers.push(LayerReport {
                    class: class.index(),
                    class_name: class.name().to_owned(),
                    depth,
                    found,
                    seconds: last.elapsed().as_secs_f64(),
                    direction: direction.map(|d| d.name().to_owned()),
                    exchanged_bytes: None,
                    most_exchanged_bytes: None,
                    busiest_rank_seconds: None,
                    mean_rank_seconds: None,
                    moved_positions: None,
                    on_disk: None,
                    resumed_through: resumed.map(|r| r.through),
                });
                last = Instant::now();
            }
            Event::Exchanged {
                class,
                depth,
                bytes,
                most,
                busiest,
                mean_busy,
                moved,
            } => {
                if let Some(layer) = layers
                    .last_mut()
                    .filter(|l| (l.class, l.depth) == (class.index(), depth))
                {
                    layer.exchanged_bytes = Some(bytes);
                    layer.most_exchanged_bytes = Some(most);
                    layer.busiest_rank_seconds = Some(busiest.as_secs_f64());
                    layer.mean_rank_seconds = Some(mean_busy.as_secs_f64());
                    layer.moved_positions = Some(moved);
                }
            }
            Event::OnDisk { class, depth, disk } => {
                if let Some(layer) = layers
                    .last_mut()
                    .filter(|l| (l.class, l.depth) == (class.index(), depth))
                {
                    layer.on_disk = Some(disk.into());
                }
            }
            Event::Mirrored { .. }
            | Event::Writing { .. }
            | Event::WriteResumed { .. }
            | Event::WriteDiscarded { .. } => {}
        }
        observe(event);
    }
}

/// The memory a solve may use: what is available, and at most `limit`.
fn memory_limit(limit: Option<u64>) -> Option<u64> {
    match (available_memory(), limit) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    }
}

/// The bytes of table a search by `method` that needs `need` bytes, its
/// two-bit tables `tables` of them, may hold in memory when the tables go
/// to disk: when it does not fit `limit` (the cap, or the memory available
/// when none is given), the part the limit leaves beside the rest of the
/// need, if that holds a window of the smallest segments. `None`: the
/// tables stay in memory, or cannot be searched at all. The database is
/// written from the tables' files, so nothing later needs them whole in
/// memory.
fn table_cap(method: Method, need: u64, tables: u64, limit: Option<u64>) -> Option<u64> {
    match limit {
        Some(limit) if method == Method::TwoBit && need > limit => {
            let left = limit.saturating_sub(need - tables);
            (left >= MIN_TABLE_CAP).then_some(left)
        }
        _ => None,
    }
}

/// The table cap and the write's memo of exact values, so that the write
/// too stays inside `limit`. A table in memory leaves the memo what the
/// search's `need` leaves of the limit; a table on disk gives an eighth of
/// its cap past the smallest one to the memo. Either is at most
/// [`MEMO_BYTES`] (and at least a few slots).
fn write_memo(need: u64, table_cap: Option<u64>, limit: Option<u64>) -> (Option<u64>, u64) {
    const FEW: u64 = 4 << 10;
    match (table_cap, limit) {
        (Some(cap), _) => {
            let memo = (cap.saturating_sub(MIN_TABLE_CAP) / 8).min(MEMO_BYTES);
            (Some(cap - memo), memo.max(FEW))
        }
        (None, Some(limit)) => (None, limit.saturating_sub(need).clamp(FEW, MEMO_BYTES)),
        (None, None) => (None, MEMO_BYTES),
    }
}

/// Refuses a solve whose whole need (tables, index tables and search, by
/// the method `plan` runs) is more than `limit` bytes: the memory available,
/// or the cap `max_memory` when that is what limits.
fn check_memory(
    variant: &Variant,
    need: u64,
    method: Method,
    limit: Option<u64>,
    max_memory: Option<u64>,
) -> Result<()> {
    match limit {
        Some(limit) if need > limit => {
            let by = if max_memory == Some(limit) {
                format!("more than the cap of {} (--max-memory)", human_bytes(limit))
            } else {
                format!("only {} is available", human_bytes(limit))
            };
            Err(Error::TooLarge(format!(
                "variant {} needs about {} of memory to solve ({} search), {by}",
                variant.name(),
                human_bytes(need),
                method.name(),
            )))
        }
        _ => Ok(()),
    }
}

/// What the tables say of `variant`, to hold against its known answers.
///
/// # Errors
///
/// [`Error::Mismatch`] when a two-bit table fails a descent.
fn answer<W: Width, R: Residues>(tables: Tables<'_, W, R>, variant: &Variant) -> Result<Answer> {
    let classes = variant.class_count();
    let start = (0..classes)
        .map(|k| tables.start(variant, k))
        .collect::<Result<Vec<_>>>()?;
    let stats: Vec<&ClassStats> = (0..classes).map(|k| tables.stats(k)).collect();
    Ok(Answer {
        legal: stats.iter().map(|s| s.legal).collect(),
        max: Remoteness::total(stats.iter().map(|s| s.max_remoteness())),
        start: Remoteness::total(start),
    })
}

/// What a solve found, as the variant file records it.
struct Answer {
    /// Legal positions per class.
    legal: Vec<u64>,
    /// The largest remoteness of a whole position.
    max: Option<Remoteness>,
    /// The start's remoteness.
    start: Option<Remoteness>,
}

/// Checks a solve's answer against the answers the variant file knows.
fn check_known(variant: &Variant, answer: &Answer) -> Result<()> {
    let Some(known) = variant.known() else {
        return Ok(());
    };
    let (legal, start, max) = (&answer.legal, answer.start.map(|r| r.0), answer.max.map(|r| r.0));
    if *legal != known.legal || max != Some(known.max_remoteness) || start != Some(known.start_remoteness) {
        return Err(Error::Mismatch(format!(
            "variant {}: solved {legal:?} legal positions, start {start:?}, largest {max:?}, but {} give {:?}, {}, {}; nothing written",
            variant.name(),
            known.source,
            known.legal,
            known.start_remoteness,
            known.max_remoteness
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    /// The plan line names the cap when `--max-memory` is what the solve
    /// may use, and the memory available otherwise.
    #[test]
    fn two_bit_tables_go_to_disk_exactly_when_they_do_not_fit() {
        let mib = 1 << 20;
        // In memory while the need fits, whatever the method.
        assert_eq!(table_cap(Method::TwoBit, 100 * mib, 80 * mib, Some(100 * mib)), None);
        assert_eq!(table_cap(Method::TwoBit, 100 * mib, 80 * mib, None), None);
        // Over the limit (a cap, or the memory available when none is
        // given, as 13x10's 48 GiB against this machine's 23): the rest
        // of the need first, the table what is left.
        assert_eq!(
            table_cap(Method::TwoBit, 100 * mib, 80 * mib, Some(50 * mib)),
            Some(30 * mib)
        );
        // Not even a window left, or a byte search: no table on disk.
        assert_eq!(table_cap(Method::TwoBit, 100 * mib, 80 * mib, Some(20 * mib)), None);
        assert_eq!(table_cap(Method::Tight, 100 * mib, 0, Some(50 * mib)), None);
    }

    /// The write's memo of exact values stays inside the limit: what the
    /// search leaves of it with the table in memory, an eighth of the cap
    /// past the smallest when the table is on disk, never past the most.
    #[test]
    fn the_writes_memo_is_inside_the_memory_given() {
        let mib = 1 << 20;
        assert_eq!(write_memo(46 * mib, None, Some(64 * mib)), (None, 18 * mib));
        assert_eq!(write_memo(46 * mib, None, Some(20 << 30)), (None, MEMO_BYTES));
        assert_eq!(write_memo(46 * mib, None, None), (None, MEMO_BYTES));
        assert_eq!(
            write_memo(911 * mib, Some(911 * mib), Some(1024 * mib)),
            (Some(797 * mib + mib / 4), 113 * mib + 3 * mib / 4)
        );
        // 13x10 at 20 GiB: the most, and the table keeps the rest.
        let (cap, memo) = write_memo(20 << 30, Some(19 << 30), Some(20 << 30));
        assert_eq!((cap, memo), (Some((19 << 30) - MEMO_BYTES), MEMO_BYTES));
        // The smallest cap is kept whole.
        assert_eq!(
            write_memo(3 * mib, Some(MIN_TABLE_CAP), Some(3 * mib)).0,
            Some(MIN_TABLE_CAP)
        );
    }

    /// A fold's disk is the larger of the search's (the table's file and
    /// its checkpoints) and the write's (the fold, at most half the table
    /// and a position a white set, and the database); without a fold, the
    /// table and the database together. A fold needs checkpoints.
    #[test]
    fn a_fold_needs_the_larger_of_the_search_and_the_write() {
        let variant = Variant::named("9x8").unwrap();
        let dir = std::env::temp_dir();
        let options = |fold, checkpoints: bool| SolveOptions {
            method: Some(Method::TwoBit),
            max_memory: Some(3 << 20),
            checkpoints: checkpoints.then(CheckpointOptions::default),
            fold,
            ..SolveOptions::default()
        };
        let always = SolvePlan::new(&variant, options(Some(true), true)).unwrap();
        assert!(always.table_cap().is_some() && always.folds(&dir));
        let (legal, white_sets) = always.searched().next().unwrap();
        let never = SolvePlan::new(&variant, options(Some(false), true)).unwrap();
        assert!(!never.folds(&dir));
        let (folded, whole) = (always.disk_bytes_in(&dir), never.disk_bytes_in(&dir));
        assert_eq!(whole, always.disk_bytes(), "unfolded, as before");
        let table = legal.div_ceil(32) * 8;
        let fold = (legal + white_sets).div_ceil(2).div_ceil(32) * 8;
        assert!(folded < whole && folded >= table, "{folded} of {whole}");
        assert!(folded >= fold + always.database_bytes(), "{folded}");
        assert!(whole >= table + always.database_bytes(), "{whole}");
        let unchecked = SolvePlan::new(&variant, options(Some(true), false)).unwrap();
        assert!(!unchecked.folds(&dir), "no fold without checkpoints");
    }

    /// A disk cap (`--max-disk`) folds a table on disk when the fold fits
    /// under it and the whole table does not; it refuses a solve that fits
    /// under it neither way, or only folded when folds are refused.
    #[test]
    fn a_disk_cap_folds_the_table_or_refuses_the_solve() {
        let variant = Variant::named("9x8").unwrap();
        let dir = std::env::temp_dir();
        let plan = |fold, max_disk| {
            let options = SolveOptions {
                method: Some(Method::TwoBit),
                max_memory: Some(3 << 20),
                max_disk,
                checkpoints: Some(CheckpointOptions::default()),
                fold,
                ..SolveOptions::default()
            };
            SolvePlan::new(&variant, options).unwrap()
        };
        let (folded, whole) = (
            plan(Some(true), None).disk_bytes_in(&dir),
            plan(Some(false), None).disk_bytes_in(&dir),
        );
        assert!(folded < whole, "{folded} of {whole}");
        let roomy = plan(None, Some(whole));
        assert!(!roomy.folds(&dir), "the whole table fits the cap");
        roomy.check_disk(&dir).unwrap();
        let tight = plan(None, Some(whole - 1));
        assert!(tight.folds(&dir), "only the fold fits the cap");
        assert_eq!(tight.disk_bytes_in(&dir), folded);
        tight.check_disk(&dir).unwrap();
        let line = tight.summary(&dir);
        assert!(
            line.contains("folded onto its orbits") && line.contains(" cap, --max-disk)"),
            "{line}"
        );
        let never = plan(Some(false), Some(whole - 1));
        let refused = never.check_disk(&dir).unwrap_err();
        assert!(matches!(refused, Error::TooLarge(_)), "{refused:?}");
        let refused = refused.to_string();
        assert!(
            refused.contains("(--max-disk), and folded onto its orbits it would need about")
                && refused.ends_with("(--fold never)"),
            "{refused}"
        );
        let refused = plan(None, Some(folded - 1)).check_disk(&dir).unwrap_err().to_string();
        assert!(
            refused.contains("more than the cap of")
                && refused.ends_with("(--max-disk), even with its table folded onto its orbits"),
            "{refused}"
        );
    }

    #[test]
    fn the_plan_line_names_what_limits_the_memory() {
        let variant = Variant::named("7x6").unwrap();
        let dir = std::env::temp_dir();
        let capped = SolveOptions {
            max_memory: Some(100 << 20),
            ..SolveOptions::default()
        };
        let line = SolvePlan::new(&variant, capped).unwrap().summary(&dir);
        assert!(line.contains("of the 100 MiB cap (--max-memory)"), "{line}");
        let free = SolvePlan::new(&variant, SolveOptions::default()).unwrap().summary(&dir);
        assert!(free.contains(" available") && !free.contains("cap"), "{free}");
    }

    /// A variant's own checkpoints count as room for its solve; others'
    /// files and anything not a regular file do not.
    #[test]
    fn checkpoints_held_are_counted() {
        let dir = std::env::temp_dir().join(format!("bishops-held-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let variant = Variant::named("5x4-full").unwrap();
        let plan = SolvePlan::new(&variant, SolveOptions::default()).unwrap();
        assert_eq!(plan.checkpoint_bytes(&dir), 0);
        let [first, second] = [0, 1].map(|k| variant.classes()[k].class);
        std::fs::write(checkpoint::path(&dir, "5x4-full", first), [0u8; 1000]).unwrap();
        std::fs::write(checkpoint::path(&dir, "5x4", first), [0u8; 500]).unwrap();
        // A directory, and then a link to a file, where the second class's
        // checkpoint would be.
        let other = checkpoint::path(&dir, "5x4-full", second);
        std::fs::create_dir(&other).unwrap();
        assert_eq!(plan.checkpoint_bytes(&dir), 1000);
        std::fs::remove_dir(&other).unwrap();
        std::os::unix::fs::symlink(checkpoint::path(&dir, "5x4", first), &other).unwrap();
        assert_eq!(plan.checkpoint_bytes(&dir), 1000);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
