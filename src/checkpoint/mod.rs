//! Checkpoints of a long search, so that a killed `solve` resumes instead of
//! starting over.
//!
//! A search's whole state at a layer boundary is a [`Snapshot`] of each
//! worker's share; a resumed search measures its rates of work afresh.
//! [`Checkpointer`] saves it at a layer boundary once
//! [`CheckpointOptions::interval`] has passed since the last save (or the
//! search began), into `.VARIANT.CLASS.checkpoint` in the database
//! directory, one file per searched class: a class derived by mirror
//! symmetry is never saved, and a finished class is saved (marked done)
//! when the interval has passed, so that a resume after it does not search
//! it again. A checkpoint is written whole into
//! `.VARIANT.CLASS.checkpoint.tmp-PID`, synced and renamed over the last
//! one, so a write that is killed leaves the previous checkpoint usable.
//!
//! The file, the same for both tables: the line `bishops checkpoint`, one
//! line of JSON ([`Header`]), the line `xxh3 ` and the [`seal`] of the
//! header line, then the payload: the table (a byte a position; or 2 bits
//! a position, 32 to a little-endian word) and the summary (a byte a
//! block, 8 to a word, the last word padded with zeros). The header's
//! checksum ([`payload_checksum`]) covers the table, the summary and the
//! hardest candidates.
//!
//! A save first checks the state it is given as far as it can without
//! reading the table (the hardest candidates as many as the newest layer
//! allows, in order): a state no resume would take stops the search, and
//! the checkpoint before it stays.
//!
//! A checkpoint is trusted only when its format is this program's, the
//! header's seal holds, every header field matches the solve, the payload
//! has the right length and its checksum holds, and what it holds is a
//! state a search can be in ([`check`]). Otherwise it is reported and
//! ignored, and the search starts over. The method field keeps either
//! search from taking the other's checkpoint. The seal and the checksum
//! find damage, not forgery: a checkpoint edited with its checksums
//! recomputed passes them, and then the solve's own check of its table, by
//! the rules, before anything is written
//! ([`Database::audit`](crate::storage::Database::audit)), is what stands
//! between it and a database.
//!
//! The workers of a partitioned search (the ranks of an MPI job) each save
//! their own share of a class, in files of their own
//! ([`Checkpointer::for_rank`], [`rank_path`]).
//!
//! The dense search (`--method dense`) neither saves nor resumes.

mod rank_files;
mod refusal;
mod share;

pub use rank_files::{ShareHeader, aside_path, rank_path};
pub use refusal::Refusal;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::board::Class;
use crate::cleanup::is_abandoned;
use crate::error::{Error, Result};
use crate::files::{self, Links, OpenError};
use crate::mod3::{code_words, count_codes};
use crate::solver::contents::{self, Said, ShareCodes};
use crate::solver::{Coding, LayerHardest, SEAL_WORDS, Seal, Sealed, Snapshot, Stored, StoredRef, Wanted};
use crate::storage::Resumable;
use crate::variant::Variant;

/// The first line of a checkpoint file.
const MAGIC: &[u8] = b"bishops checkpoint\n";

/// The file format of both tables' checkpoints. 5: one snapshot for both
/// (format 4 kept a byte table's cells alone); 4: the payload's checksum
/// is XXH3-64 ([`payload_checksum`]), as the database's (3: a hand-written
/// FNV-1a 64); 3: the header line is sealed ([`seal`]); before, the tight
/// search wrote 1 and the two-bit search 2 (its 1 kept a bit a position
/// besides the table). A checkpoint of another format is refused.
const FORMAT: u32 = 5;

/// The start of the line after the header: the header's seal.
const SEAL: &str = "xxh3 ";

/// The seal of a header line (its JSON, without the newline): XXH3-64 of
/// its bytes, 16 hex digits. The header holds the payload's checksum, so
/// the two put every byte a resume uses under a checksum, which finds
/// damage, not forgery (see the module doc).
#[doc(hidden)]
pub fn seal(header: &[u8]) -> String {
    format!("{:016x}", xxh3_64(header))
}

/// Seals again the header of the checkpoint `bytes` after an edit: a tool
/// for tests that forge a checkpoint to see what the checks past the
/// checksums catch.
///
/// # Panics
///
/// When `bytes` is not a checkpoint with a sealed header.
#[doc(hidden)]
pub fn reseal(bytes: &mut [u8]) {
    let start = MAGIC.len();
    let end = start + bytes[start..].iter().position(|&b| b == b'\n').expect("a header line");
    let sealed = seal(&bytes[start..end]);
    let at = end + 1 + SEAL.len();
    assert_eq!(&bytes[end + 1..at], SEAL.as_bytes(), "a sealed checkpoint");
    bytes[at..at + 16].copy_from_slice(sealed.as_bytes());
}

/// The default time between checkpoints.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(600);

/// When a solve saves checkpoints.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CheckpointOptions {
    /// Search time between checkpoints (0: after every layer).
    pub interval: Duration,
    /// A test hook: save a checkpoint after this layer (of this class, or
    /// of the first class to reach it) and stop with [`Error::Stopped`].
    pub stop_after: Option<(Option<Class>, u16)>,
    /// A test hook: stop a fold of a table onto its orbits after this
    /// many steps of it, its record written, with [`Error::Stopped`].
    pub stop_fold_after: Option<u64>,
    /// A test hook: words of a fold's output between two of its records
    /// (`None`: [`FOLD_STEP_WORDS`](crate::mod3::fold::FOLD_STEP_WORDS)).
    pub fold_step_words: Option<u64>,
    /// How the write of a two-bit table into frames that follows the
    /// search commits, so that a write stopped goes on from its last
    /// commit (test hooks: commits more often, a stop after a few).
    pub write: Resumable,
    /// Discard any checkpoint and search from the start.
    pub restart: bool,
}

impl Default for CheckpointOptions {
    fn default() -> CheckpointOptions {
        CheckpointOptions {
            interval: DEFAULT_INTERVAL,
            stop_after: None,
            stop_fold_after: None,
            fold_step_words: None,
            write: Resumable::DEFAULT,
            restart: false,
        }
    }
}

/// The checkpoint of class `class` of `variant` in `dir`.
pub fn path(dir: &Path, variant: &str, class: Class) -> PathBuf {
    dir.join(format!(".{variant}.{}.checkpoint", class.name()))
}

/// The files a two-bit table on disk of class `class` of `variant` keeps
/// in `dir` while its checkpoints do: its codes, the side file of the
/// lowest positions of the layer being found, and when it is folded onto
/// its orbits the orbits' file, the fold's record and a record being
/// written.
pub fn table_files(dir: &Path, variant: &str, class: Class) -> [PathBuf; 5] {
    let codes = format!(".{variant}.{}.codes", class.name());
    let (orbits, record) = crate::solver::fold::fold_files(dir, variant, class);
    let mut writing = record.clone().into_os_string();
    writing.push(".new");
    [
        dir.join(&codes),
        dir.join(format!("{codes}.lowest")),
        orbits,
        record,
        writing.into(),
    ]
}

/// Whether `name` is a name this module gives a file of a database
/// directory: a checkpoint, the temporary file of one, or a worker's share
/// written aside.
///
/// ```
/// use bishops::checkpoint::is_own_name;
/// assert!(is_own_name(".9x8.a1.checkpoint") && is_own_name(".9x8.a2.checkpoint.tmp-7"));
/// assert!(is_own_name(".9x8.a1.rank-1-of-3.checkpoint.aside"));
/// assert!(is_own_name(".9x8.a1.codes.tmp-7"), "a two-bit table on disk");
/// assert!(is_own_name(".9x8.a1.images-0.tmp-7"), "its spooled images");
/// assert!(is_own_name(".9x8.a1.codes") && is_own_name(".9x8.a1.codes.lowest"), "one kept with checkpoints");
/// assert!(is_own_name(".11x10.a1.orbits") && is_own_name(".11x10.a1.orbits.fold"), "a table folded");
/// assert!(!is_own_name("9x8.checkpoint.csv"));
/// ```
pub fn is_own_name(name: &str) -> bool {
    name.starts_with('.')
        && (name.ends_with(".checkpoint")
            || name.ends_with(".checkpoint.aside")
            || name.contains(".checkpoint.tmp-")
            || name.contains(".codes.tmp-")
            || name.ends_with(".codes")
            || name.ends_with(".codes.lowest")
            || name.ends_with(".orbits")
            || name.ends_with(".orbits.fold")
            || name.ends_with(".orbits.fold.new")
            || (name.contains(".images-") && name.contains(".tmp-")))
}

/// Whether `file` is a checkpoint of any variant: a regular file whose
/// first line is `bishops checkpoint` ([`files::open_regular`]).
pub fn is_checkpoint(file: &Path) -> bool {
    let Ok(mut opened) = files::open_regular(file, fs::OpenOptions::new().read(true), Links::Follow) else {
        return false;
    };
    let mut magic = vec![0u8; MAGIC.len()];
    opened.read_exact(&mut magic).is_ok() && magic == MAGIC
}

/// Refuses to solve `variant` into `dir` when a checkpoint path of it holds
/// anything but a regular file: a checkpoint is read from there and
/// replaced there, and neither is done to a FIFO, a device, a socket, a
/// directory or a symbolic link.
///
/// # Errors
///
/// [`Error::DbPath`] naming the path and what it is.
pub fn check_files(dir: &Path, variant: &Variant) -> Result<()> {
    variant.class_list().into_iter().try_for_each(|class| {
        check_file(&path(dir, variant.name(), class))?;
        table_files(dir, variant.name(), class)
            .iter()
            .try_for_each(|file| check_file(file))
    })
}

/// Refuses a checkpoint path that holds anything but a regular file.
fn check_file(file: &Path) -> Result<()> {
    match fs::symlink_metadata(file).map(|m| files::Kind::of(&m)) {
        Ok(files::Kind::Regular) | Err(_) => Ok(()),
        Ok(kind) => Err(Error::DbPath(format!(
            "`{}` is {kind}, not a checkpoint: move it away",
            crate::text::path(file)
        ))),
    }
}

/// Removes every checkpoint of `variant` in `dir`, the files of its tables
/// on disk that they kept, the partial file of a resumable write of its
/// database from them, and the temporary files of checkpoint writes that
/// were killed; returns the checkpoints removed.
/// The caller should hold the variant's
/// [`WriteLock`](crate::storage::WriteLock).
pub fn remove(dir: &Path, variant: &Variant) -> Vec<PathBuf> {
    let wholes = variant
        .class_list()
        .into_iter()
        .map(|class| path(dir, variant.name(), class));
    let shares = rank_files::rank_files(dir, variant).into_iter().map(|(file, _)| file);
    let removed = wholes
        .chain(shares)
        .filter(|file| fs::remove_file(file).is_ok())
        .collect();
    for class in variant.class_list() {
        for file in table_files(dir, variant.name(), class) {
            let _ = fs::remove_file(file);
        }
    }
    // What a resumable write of the database from the tables left.
    crate::storage::remove_partial(dir, variant.name());
    remove_temporary(dir, variant);
    removed
}

/// Removes the temporary files that killed checkpoint writes and searches
/// of `variant` left (checkpoints being written, two-bit tables on disk
/// and their spooled images):
/// only those whose process is gone ([`is_abandoned`]). The caller should
/// hold the variant's [`WriteLock`](crate::storage::WriteLock).
pub fn remove_temporary(dir: &Path, variant: &Variant) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ours = |c: Class| {
            let class = format!(".{}.{}.", variant.name(), c.name());
            name.strip_prefix(&class).is_some_and(|rest| {
                rest.starts_with("checkpoint.tmp-")
                    || rest.starts_with("codes.tmp-")
                    || (rest.starts_with("images-") && rest.contains(".tmp-"))
                    || (rest.starts_with("rank-") && rest.contains(".checkpoint.tmp-"))
            })
        };
        if variant.class_list().into_iter().any(ours) && is_abandoned(name) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The JSON line of a checkpoint file.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Header {
    /// The file format, the same for both tables.
    pub format: u32,
    /// The variant's name.
    pub variant: String,
    /// The variant's start position.
    pub start: String,
    /// The holes of the variant's board, joined by `-` as a position joins
    /// squares; absent when it has none (as in files of before holes).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub holes: String,
    /// The class number.
    pub class: usize,
    /// The search that wrote it, which says how its table keeps a
    /// position ([`Coding::method`]): `tight` or `two-bit`.
    pub method: String,
    /// The positions of its share (the class's legal positions, for a
    /// whole class).
    pub length: u64,
    /// As [`Snapshot::found`].
    pub found: Vec<u64>,
    /// Whether the class's search is over.
    pub done: bool,
    /// The payload's checksum ([`payload_checksum`]), 16 hex digits.
    pub checksum: String,
    /// When it was written, in seconds since 1970.
    pub written: u64,
    /// As [`LayerHardest::own`], of the newest layer.
    pub hardest: Vec<u64>,
    /// As [`LayerHardest::mirrored`], of the newest layer.
    pub mirrored_hardest: Option<Vec<u64>>,
    /// For each watched position (the start's in the class, say): its
    /// remoteness where the saving worker owns it and has reached it.
    pub watched: Vec<Option<u64>>,
    /// For a table kept on disk in its own file: positions a segment. The
    /// payload then holds each segment's seal in place of the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disk: Option<u64>,
    /// For one worker's share of a partitioned search: which share, and its
    /// own count of each layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<ShareHeader>,
}

/// The one field read before the rest (see `open`).
#[derive(Deserialize)]
struct FormatOnly {
    format: u32,
}

/// Bytes a checksum hashes in one piece, on one core.
const PIECE: usize = 1 << 20;

const PIECE_WORDS: usize = PIECE / 8;

/// XXH3-64 of each MiB of `words` (read by `load`) as little-endian
/// bytes, on every core.
fn word_sums<T: Sync>(words: &[T], load: impl Fn(&T) -> u64 + Sync) -> Vec<u64> {
    words
        .par_chunks(PIECE_WORDS)
        .map(|chunk| {
            let bytes: Vec<u8> = chunk.iter().flat_map(|w| load(w).to_le_bytes()).collect();
            xxh3_64(&bytes)
        })
        .collect()
}

/// XXH3-64 of each MiB of `bytes`, on every core: the same sums as
/// [`word_sums`] of the words those bytes are.
fn byte_sums(bytes: &[u8]) -> Vec<u64> {
    bytes.par_chunks(PIECE).map(xxh3_64).collect()
}

/// The checksum of a checkpoint's payload, which runs on every core:
/// XXH3-64 of the XXH3-64 of each MiB of each part (the table, from its
/// sums `table`; the summary words; the hardest candidates, the mirrored
/// ones and whether there are any), then of each part's length.
///
/// ```
/// use bishops::checkpoint::payload_checksum;
/// use bishops::solver::LayerHardest;
/// let hardest = LayerHardest { own: vec![3, 9], mirrored: None };
/// let sum = payload_checksum((vec![1, 2], 16), &[5], &hardest);
/// assert_ne!(sum, payload_checksum((vec![1, 2], 16), &[4], &hardest));
/// assert_ne!(sum, payload_checksum((vec![2, 1], 16), &[5], &hardest));
/// ```
pub fn payload_checksum(table: (Vec<u64>, u64), summary: &[u64], hardest: &LayerHardest) -> u64 {
    let mirrored = hardest.mirrored.as_deref().unwrap_or(&[]);
    let flag = [u64::from(hardest.mirrored.is_some())];
    let rest: [&[u64]; 4] = [summary, &hardest.own, mirrored, &flag];
    let (mut sums, table_bytes) = table;
    for part in rest {
        sums.extend(word_sums(part, |&w| w));
    }
    let lengths = [table_bytes].into_iter().chain(rest.iter().map(|p| p.len() as u64));
    let bytes: Vec<u8> = sums.into_iter().chain(lengths).flat_map(u64::to_le_bytes).collect();
    xxh3_64(&bytes)
}

/// Words of the summary of `blocks` blocks, 8 bytes to a word.
pub fn summary_words(blocks: u64) -> u64 {
    blocks.div_ceil(8)
}

/// The summary bytes packed into little-endian words, the last padded with
/// zeros.
fn pack_summary(summary: impl Iterator<Item = u8>, blocks: u64) -> Vec<u64> {
    let mut words = vec![0u64; summary_words(blocks) as usize];
    for (i, byte) in summary.enumerate() {
        words[i / 8] |= u64::from(byte) << (8 * (i % 8));
    }
    words
}

/// Bytes of a table of `coding` for `len` positions, as the payload holds
/// it.
fn table_bytes(coding: Coding, len: u64) -> u64 {
    match coding {
        Coding::Bytes => len,
        Coding::TwoBit => 8 * code_words(len),
    }
}

/// Checks that `state`, a worker's share at a layer boundary as a
/// checkpoint holds it, is consistent on its own as the share `wanted`
/// asks, whatever its table's coding: a table of its coding and length and
/// a summary byte for each block; at least the goal's layer and at most
/// as many layers as the coding counts, none empty; a count of its own for
/// each of the class's layers, none above the class's; per code, as many
/// positions as its own layers of that code count, padding unseen; and,
/// for a table in memory, the summary, hardest candidates and watched
/// positions against its codes ([`contents::check`]). Those of a table on
/// disk ([`Stored::Sealed`]) are checked as the search reads its file
/// back. That the shares' counts add up to the class's is for the workers
/// to check together.
///
/// # Errors
///
/// What is wrong, to follow the name of the file.
pub fn check(state: &Snapshot, wanted: &Wanted<'_>) -> std::result::Result<(), Refusal> {
    check_counts(state, wanted)?;
    let said = Said {
        found: &state.found,
        own: &state.own,
        summary: &state.summary,
        hardest: &state.hardest,
        watched: &state.watched,
    };
    let coding = state.table.coding();
    let in_memory = |table| contents::check(&said, wanted, |d| coding.code(d), &InMemory { table, coding });
    match &state.table {
        Stored::Sealed(_) => Ok(()),
        table => in_memory(table).map_err(Refusal::Inconsistent),
    }
}

/// A table in memory as [`contents::check`] reads it.
struct InMemory<'a> {
    table: &'a Stored,
    coding: Coding,
}

impl ShareCodes for InMemory<'_> {
    fn block(&self, _: usize, cells: Range<u64>, newest: u8) -> (bool, u64) {
        let unseen = count(self.table, cells.clone(), self.coding.unseen()) > 0;
        (unseen, count(self.table, cells, newest))
    }

    fn code(&self, k: u64) -> u8 {
        self.table.code(k).expect("a table in memory")
    }

    fn was_unseen(&self, k: u64) -> bool {
        self.code(k) == self.coding.unseen()
    }
}

/// The part of [`check`] that counts: sizes, coding, layers and codes.
fn check_counts(state: &Snapshot, wanted: &Wanted<'_>) -> std::result::Result<(), Refusal> {
    let (found, own, table, summary) = (&state.found, &state.own, &state.table, &state.summary);
    let (range, coding) = (&wanted.range, table.coding());
    let len = range.end - range.start;
    let blocks = wanted.blocks.end - wanted.blocks.start;
    // Bytes, and positions with the padding.
    let (stored, positions) = match table {
        Stored::Bytes(cells) => (cells.len() as u64, cells.len() as u64),
        Stored::TwoBit(words) => (8 * words.len() as u64, 32 * words.len() as u64),
        Stored::Sealed(sealed) => {
            let want = sealed_segments(len, sealed.segment_positions);
            if Some(sealed.segment_positions) != wanted.on_disk || Some(sealed.seals.len() as u64) != want {
                return Err(Refusal::Inconsistent(format!(
                    "seals {} segments of {} positions, not a table on disk of {len} positions in segments of {:?}",
                    sealed.seals.len(),
                    sealed.segment_positions,
                    wanted.on_disk
                )));
            }
            (table_bytes(coding, len), sealed.counts().iter().sum())
        }
    };
    if coding != wanted.coding || stored != table_bytes(coding, len) || summary.len() as u64 != blocks {
        return Err(Refusal::Inconsistent(format!(
            "has a {} table of {stored} bytes and {} summary bytes, not {} and {blocks}",
            coding.method(),
            summary.len(),
            table_bytes(wanted.coding, len),
        )));
    }
    if found.first() != Some(&1) || found.contains(&0) || found.len() > coding.most_layers() {
        return Err(Refusal::inconsistent(
            "counts an empty layer, more than one goal or more layers than its table holds",
        ));
    }
    // A share counts at most the class's positions of each layer; a
    // whole class, exactly them.
    let whole = len == wanted.index.len();
    if own.len() != found.len() || own.iter().zip(found).any(|(o, f)| o > f || (whole && o != f)) {
        return Err(Refusal::inconsistent("counts other layers of its own than the class's"));
    }
    let total = match own.iter().try_fold(0u64, |a, &b| a.checked_add(b)) {
        Some(total) if total <= len => total,
        _ => return Err(Refusal::Inconsistent(format!("counts more positions than its {len}"))),
    };
    if let Stored::TwoBit(words) = table
        && !len.is_multiple_of(32)
        && let Some(&last) = words.last()
        && last | (u64::MAX >> (64 - 2 * (len % 32))) != u64::MAX
    {
        return Err(Refusal::inconsistent("has reached positions beyond its own"));
    }
    let mut want = vec![0u64; 256];
    for (d, &n) in own.iter().enumerate() {
        want[usize::from(coding.code(d as u64))] += n;
    }
    want[usize::from(coding.unseen())] = positions - total;
    if histogram(table) != want {
        return Err(Refusal::inconsistent("holds other layers than its header counts"));
    }
    Ok(())
}

/// How many segments of `segment_positions` a table on disk of `len`
/// positions has (`None` for segments of no whole word).
fn sealed_segments(len: u64, segment_positions: u64) -> Option<u64> {
    let words = segment_positions / 32;
    (words > 0 && segment_positions.is_multiple_of(32)).then(|| code_words(len).div_ceil(words))
}

/// How many positions of `table` hold each code, padding included.
fn histogram(table: &Stored) -> Vec<u64> {
    let add = |mut a: Vec<u64>, b: Vec<u64>| {
        a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        a
    };
    match table {
        Stored::Bytes(cells) => cells
            .par_chunks(PIECE)
            .fold(
                || vec![0u64; 256],
                |mut h, chunk| {
                    chunk.iter().for_each(|&c| h[usize::from(c)] += 1);
                    h
                },
            )
            .reduce(|| vec![0u64; 256], add),
        Stored::Sealed(sealed) => {
            let mut counts = vec![0u64; 256];
            counts[..4].copy_from_slice(&sealed.counts());
            counts
        }
        Stored::TwoBit(words) => {
            // Positions per code: residues 0 to 2, then unseen (the rest
            // of each word: fewer popcounts, which the default x86-64
            // target does in software).
            const M: u64 = 0x5555_5555_5555_5555;
            words
                .par_iter()
                .with_min_len(1 << 12)
                .fold(
                    || vec![0u64; 256],
                    |mut n, &w| {
                        let (lo, hi) = (w & M, w >> 1 & M);
                        let seen = [!hi & !lo & M, !hi & lo, hi & !lo & M].map(|m| u64::from(m.count_ones()));
                        n.iter_mut().zip(seen).for_each(|(count, c)| *count += c);
                        n[3] += 32 - seen.iter().sum::<u64>();
                        n
                    },
                )
                .reduce(|| vec![0u64; 256], add)
        }
    }
}

/// How many of the positions `range` (from the table's first) of `table`
/// hold `code`.
fn count(table: &Stored, range: Range<u64>, code: u8) -> u64 {
    match table {
        Stored::Bytes(cells) => cells[range.start as usize..range.end as usize]
            .iter()
            .filter(|&&c| c == code)
            .count() as u64,
        Stored::TwoBit(words) => count_codes(words, |&w| w, range, code),
        Stored::Sealed(_) => unreachable!("a table on disk is counted by its seals"),
    }
}

/// Reads `n` little-endian words from `reader` into a vector of exactly
/// that many, through a buffer of a MiB.
fn read_words(reader: &mut impl Read, n: usize) -> std::io::Result<Vec<u64>> {
    let mut words = vec![0u64; n];
    let mut buffer = vec![0u8; 8 * PIECE_WORDS];
    for chunk in words.chunks_mut(PIECE_WORDS) {
        let bytes = &mut buffer[..8 * chunk.len()];
        reader.read_exact(bytes)?;
        for (w, b) in chunk.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
    }
    Ok(words)
}

/// Writes `table` as the payload holds it to `out`, two-bit words through
/// a buffer of a MiB.
fn write_table(out: &mut impl Write, table: StoredRef<'_>) -> std::io::Result<()> {
    let words = match table {
        StoredRef::Bytes(cells) => return out.write_all(cells),
        StoredRef::TwoBit(words) => words,
        StoredRef::Sealed(sealed) => {
            let bytes: Vec<u8> = sealed_words(sealed).flat_map(u64::to_le_bytes).collect();
            return out.write_all(&bytes);
        }
    };
    let mut buffer = Vec::with_capacity(8 * PIECE_WORDS);
    for chunk in words.chunks(PIECE_WORDS) {
        buffer.clear();
        buffer.extend(chunk.iter().flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes()));
        out.write_all(&buffer)?;
    }
    Ok(())
}

/// The words a checkpoint keeps of a table on disk: each seal's.
fn sealed_words(sealed: &Sealed) -> impl Iterator<Item = u64> + '_ {
    sealed.seals.iter().flat_map(Seal::to_words)
}

/// The table on disk of segments of `segment_positions` whose seals are
/// `words` ([`sealed_words`]).
fn sealed_of(words: &[u64], segment_positions: u64) -> Sealed {
    let seals = words
        .chunks_exact(SEAL_WORDS)
        .map(|w| Seal::from_words(w.try_into().expect("a seal's words")))
        .collect();
    Sealed {
        segment_positions,
        seals,
    }
}

/// The holes of `variant`'s board as [`Header::holes`] names them.
fn holes(variant: &Variant) -> String {
    variant
        .board()
        .holes()
        .map(|sq| sq.to_string())
        .collect::<Vec<_>>()
        .join("-")
}

/// Saves and finds the checkpoints of one solve: the
/// [`ShareCheckpoints`](crate::solver::ShareCheckpoints) a [`Plan::solve_with`](crate::solver::Plan::solve_with)
/// or [`Plan::solve_two_bit_with`](crate::solver::Plan::solve_two_bit_with)
/// is given.
pub struct Checkpointer<'a> {
    dir: PathBuf,
    variant: &'a Variant,
    start: String,
    options: CheckpointOptions,
    /// The last save, or the start of the solve.
    last: Instant,
    note: &'a mut dyn FnMut(&str),
    /// Checkpoints written, and the seconds and bytes they took.
    pub written: (u32, f64, u64),
    /// For a worker of a partitioned search: its number and how many there
    /// are. It then saves and reads only its own share ([`share`]).
    share: Option<(usize, usize)>,
    /// A share written beside its checkpoint and not yet in its place
    /// ([`ShareCheckpoints::commit`](crate::solver::ShareCheckpoints::commit)):
    /// the file written, the checkpoint it replaces, and its removal should
    /// the process be interrupted first (none for a worker's share, which
    /// is kept: see [`share`]).
    aside: Option<(PathBuf, PathBuf, Option<crate::cleanup::Pending>)>,
    /// Whether this worker offered its share written aside to resume from
    /// ([`ShareCheckpoints::resume_aside`](crate::solver::ShareCheckpoints::resume_aside)).
    offered_aside: bool,
    /// Why the checkpoint of a search on disk was refused, held for the
    /// error that stops the search rather than start it over
    /// ([`ShareCheckpoints::start_over`](crate::solver::ShareCheckpoints::start_over)).
    refused: Option<String>,
}

impl<'a> Checkpointer<'a> {
    /// Checkpoints for solving `variant` into `dir`, telling `note` of what
    /// a user should know (a resume, a checkpoint ignored or discarded).
    /// With `options.restart`, removes every checkpoint of the variant first.
    /// The caller should hold the variant's
    /// [`WriteLock`](crate::storage::WriteLock).
    pub fn new(
        dir: &Path,
        variant: &'a Variant,
        options: CheckpointOptions,
        note: &'a mut dyn FnMut(&str),
    ) -> Checkpointer<'a> {
        remove_temporary(dir, variant);
        if options.restart {
            for file in remove(dir, variant) {
                note(&format!(
                    "--restart: removed the checkpoint {}",
                    crate::text::path(&file)
                ));
            }
        }
        Checkpointer {
            dir: dir.to_path_buf(),
            variant,
            start: variant.start().to_string(),
            options,
            last: Instant::now(),
            note,
            written: (0, 0.0, 0),
            share: None,
            aside: None,
            offered_aside: false,
            refused: None,
        }
    }

    /// The table's file of a search of `class` on disk, when the
    /// checkpoint of `class` is there to seal it: a search that must not
    /// start over unasked. Never a worker's of a partitioned search, which
    /// keeps no table on disk.
    fn seals_on_disk(&self, class: Class) -> Option<PathBuf> {
        let [codes, ..] = table_files(&self.dir, self.variant.name(), class);
        (self.share.is_none() && self.file(class).is_file() && codes.is_file()).then_some(codes)
    }

    /// Tells the user that a checkpoint of `class` was refused, `why`, and
    /// `then` what the search does; or holds `why` when the checkpoint
    /// seals a search on disk, which is not started over unasked.
    fn refuse(&mut self, class: Class, why: String, then: &str) {
        match self.seals_on_disk(class) {
            Some(_) => self.refused = Some(why),
            None => (self.note)(&format!("{why}; {then}")),
        }
    }

    /// Whether `snapshot` is a state a resume would take back, as far as
    /// it can be told without reading its table: a layer count of its own
    /// for each of the class's, none above the class's and each the
    /// class's when the checkpoint is a whole class's, and the hardest
    /// candidates of its newest layer as many as it allows and in order.
    /// A save that fails this stops the search with the checkpoint before it in place, which a
    /// resume still takes (a table on disk then goes on from the layer
    /// after it), rather than replace it by one every resume refuses.
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`], naming what is wrong.
    fn savable(&self, snapshot: &crate::solver::SnapshotRef<'_>) -> Result<()> {
        let (found, own) = (snapshot.found, snapshot.own);
        // A worker counts a share of each layer; one process, all of it.
        let whole = self.share.is_none();
        let miscounted = own.iter().zip(found).position(|(o, f)| o > f || (whole && o != f));
        let why = match (own.last(), miscounted) {
            (Some(_), Some(d)) if own.len() == found.len() => Some(format!(
                "counts {} positions of its own in layer {d}, of the class's {}",
                own[d], found[d]
            )),
            (Some(&layer), None) if own.len() == found.len() => {
                crate::solver::contents::hardest_in_order(snapshot.hardest, layer, snapshot.hardest.mirrored.is_some())
                    .err()
            }
            _ => Some(format!("counts {} layers of its own, not {}", own.len(), found.len())),
        };
        match why {
            None => Ok(()),
            Some(why) => Err(Error::Mismatch(format!(
                "the search of {} class {} after layer {} {why}: a bishops fault; its checkpoint is not saved, and the one before it is kept",
                self.variant.name(),
                snapshot.class.name(),
                found.len().saturating_sub(1)
            ))),
        }
    }

    /// The file of this solve's checkpoint of `class`: its own, or its
    /// share's for a worker of a partitioned search.
    fn file(&self, class: Class) -> PathBuf {
        match self.share {
            Some((rank, ranks)) => rank_path(&self.dir, self.variant.name(), class, rank, ranks),
            None => path(&self.dir, self.variant.name(), class),
        }
    }

    /// Opens the checkpoint `file` of `class` and checks its magic line and
    /// header against the solve and `method`: the header, its length with
    /// the magic line, the file's size and a reader at the payload.
    fn open(
        &self,
        file: &Path,
        class: Class,
        legal: u64,
        method: &str,
    ) -> std::result::Result<(Header, u64, u64, BufReader<fs::File>), Refusal> {
        let opened =
            files::open_regular(file, fs::OpenOptions::new().read(true), Links::Refuse).map_err(|e| match e {
                OpenError::NotRegular(kind) => Refusal::NotRegular(kind),
                OpenError::Io(e) => Refusal::Unreadable(e),
            })?;
        let size = opened.metadata()?.len();
        let mut reader = BufReader::new(opened);
        let mut magic = vec![0u8; MAGIC.len()];
        reader.read_exact(&mut magic).map_err(|_| Refusal::NotACheckpoint)?;
        if magic != MAGIC {
            return Err(Refusal::NotACheckpoint);
        }
        let mut line = Vec::new();
        (&mut reader).take(1 << 20).read_until(b'\n', &mut line)?;
        // The format first, as a file of another format has other fields
        // (and before format 3, no seal); then the seal, before any other
        // field is believed.
        let format = serde_json::from_slice::<FormatOnly>(&line)
            .map_err(Refusal::UnreadableHeader)?
            .format;
        if format != FORMAT {
            return Err(Refusal::Format {
                found: format,
                want: FORMAT,
            });
        }
        let header: Header = serde_json::from_slice(&line).map_err(Refusal::UnreadableHeader)?;
        let expect = |field: &'static str, found: String, want: String| {
            if found == want {
                Ok(())
            } else {
                Err(Refusal::OtherSolve { field, found, want })
            }
        };
        let header_line = line.strip_suffix(b"\n").unwrap_or(&line);
        let mut sealed = Vec::new();
        (&mut reader).take(64).read_until(b'\n', &mut sealed)?;
        if sealed != format!("{SEAL}{}\n", seal(header_line)).as_bytes() {
            return Err(Refusal::HeaderChecksum);
        }
        expect("method", header.method.clone(), method.to_owned())?;
        expect("variant", header.variant.clone(), self.variant.name().to_owned())?;
        expect("start", header.start.clone(), self.start.clone())?;
        expect("holes", header.holes.clone(), holes(self.variant))?;
        expect("class", Class::name_of(header.class), class.name().to_owned())?;
        // A share of this worker's search, or no share at all.
        match (self.share, header.share.as_ref().map(|s| (s.rank, s.ranks))) {
            (None, Some(_)) => return Err(Refusal::WorkerShare),
            (Some(_), None) => return Err(Refusal::NotAShare),
            (Some(want), Some(found)) if found != want => return Err(Refusal::OtherRank { found, want }),
            _ => {}
        }
        expect("legal positions", header.length.to_string(), legal.to_string())?;
        Ok((header, (MAGIC.len() + line.len() + sealed.len()) as u64, size, reader))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::summary::{CURRENT, NEXT, UNSEEN_LEFT};
    use crate::solver::{Save, ShareCheckpoints, SnapshotRef, search};
    use crate::tight::TightIndex;

    /// Keeps a copy of the state at every boundary.
    #[derive(Default)]
    struct Recorder(Vec<Snapshot>);

    impl ShareCheckpoints for Recorder {
        fn resume(&mut self, _: &Wanted<'_>) -> Option<Snapshot> {
            None
        }

        fn due(&mut self, _: Class, _: &[u64], _: bool) -> Save {
            Save::Yes
        }

        fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
            self.0.push(snapshot.to_owned());
            Ok(())
        }

        fn note(&mut self, _: &str) {}
    }

    /// The boundaries of the search of class 0 of `name` into a table of
    /// `coding`, and its tight index.
    fn boundaries(name: &str, coding: Coding) -> (Vec<Snapshot>, TightIndex) {
        let variant = Variant::named(name).unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let mut recorder = Recorder::default();
        match coding {
            Coding::Bytes => drop(search::bytes_with(name, spec, &index, &mut recorder, &mut |_| {}).unwrap()),
            Coding::TwoBit => drop(search::two_bit_with(name, spec, &index, None, &mut recorder, &mut |_| {}).unwrap()),
        }
        (recorder.0, index)
    }

    /// The whole class of `index`, as a search in one process asks for it.
    pub(super) fn whole(index: &TightIndex, coding: Coding) -> Wanted<'_> {
        Wanted {
            class: Class::from_index(0).unwrap(),
            index: index.blocks(),
            coding,
            blocks: 0..index.white_sets(),
            range: 0..index.len(),
            mirrored: false,
            watch: &[],
            on_disk: None,
        }
    }

    #[test]
    fn every_boundary_is_consistent() {
        for coding in [Coding::Bytes, Coding::TwoBit] {
            for name in ["5x4", "7x4", "7x5-full", "6x4-full"] {
                let (all, index) = boundaries(name, coding);
                assert!(all.len() > 3, "{name}");
                assert!(all.last().unwrap().done && all[..all.len() - 1].iter().all(|b| !b.done));
                // Of a whole class, `check` asks for blocks flagged with the
                // newest layer and as many hardest candidates as it allows.
                for b in &all {
                    if let Err(refusal) = check(b, &whole(&index, coding)) {
                        panic!("{name} {coding:?} at {} layers: {refusal}", b.found.len());
                    }
                }
            }
        }
    }

    #[test]
    fn inconsistent_states_are_refused() {
        for coding in [Coding::Bytes, Coding::TwoBit] {
            let (all, index) = boundaries("7x4", coding);
            let wanted = whole(&index, coding);
            let legal = index.len();
            let b = &all[all.len() / 2];
            let refused = |edit: &dyn Fn(&mut Snapshot)| {
                let mut state = b.clone();
                edit(&mut state);
                check(&state, &wanted).is_err()
            };
            assert!(check(b, &wanted).is_ok(), "{coding:?}");
            let unseen = coding.unseen();
            let set = |table: &mut Stored, i: u64, code: u8| match table {
                Stored::Bytes(cells) => cells[i as usize] = code,
                Stored::TwoBit(words) => {
                    let (w, at) = ((i / 32) as usize, 2 * (i % 32));
                    words[w] = words[w] & !(3 << at) | u64::from(code) << at;
                }
                Stored::Sealed(_) => unreachable!("a table in memory"),
            };
            let newest = coding.code(b.found.len() as u64 - 1);
            type Edit<'e> = &'e dyn Fn(&mut Snapshot);
            let cases: [(&str, Edit); 14] = [
                ("a layer less", &|s| {
                    s.found.pop();
                    s.own.pop();
                }),
                ("a count off by one", &|s| *s.found.last_mut().unwrap() += 1),
                ("an own count off by one", &|s| *s.own.last_mut().unwrap() += 1),
                ("no layers", &|s| {
                    s.found.clear();
                    s.own.clear();
                }),
                ("a reached position forgotten", &|s| {
                    let i = (0..legal).find(|&i| s.table.code(i) != Some(unseen)).unwrap();
                    set(&mut s.table, i, unseen);
                }),
                ("an unseen block not flagged", &|s| {
                    let r = (0..index.white_sets())
                        .find(|&r| index.block(r).any(|i| s.table.code(i) == Some(unseen)))
                        .unwrap();
                    s.summary[r as usize] &= !UNSEEN_LEFT;
                }),
                ("an unknown summary bit", &|s| s.summary[0] |= NEXT),
                ("no block of the newest layer", &|s| {
                    s.summary.iter_mut().for_each(|f| *f &= !CURRENT)
                }),
                ("a hardest candidate missing", &|s| {
                    s.hardest.own.pop();
                }),
                ("hardest candidates out of order", &|s| s.hardest.own.swap(0, 1)),
                ("a hardest candidate of another layer", &|s| {
                    s.hardest.own[0] = (0..legal).find(|&i| s.table.code(i) != Some(newest)).unwrap();
                    s.hardest.own.sort_unstable();
                }),
                ("mirrored candidates not asked for", &|s| {
                    s.hardest.mirrored = Some(Vec::new())
                }),
                ("a summary byte missing", &|s| {
                    s.summary.pop();
                }),
                ("a table of the other coding", &|s| {
                    s.table = match &s.table {
                        Stored::Bytes(_) => Stored::TwoBit(vec![u64::MAX; code_words(legal) as usize]),
                        Stored::TwoBit(_) | Stored::Sealed(_) => Stored::Bytes(vec![unseen; legal as usize]),
                    }
                }),
            ];
            for (what, edit) in cases {
                assert!(refused(edit), "{coding:?}: {what}");
            }
            if coding == Coding::TwoBit && !legal.is_multiple_of(32) {
                assert!(
                    refused(&|s| set(&mut s.table, 32 * code_words(legal) - 1, 0)),
                    "padding reached"
                );
            }
        }
    }

    #[test]
    fn the_payload_checksum_sees_every_word_and_the_split() {
        let words: Vec<u64> = (0..300_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let hardest = LayerHardest {
            own: vec![3, 9],
            mirrored: Some(vec![1]),
        };
        let summary = pack_summary([1u8, 4, 5].into_iter(), 3);
        assert_eq!(summary, [0x05_04_01]);
        let sum = |words: &[u64], summary: &[u64], hardest: &LayerHardest| {
            payload_checksum((word_sums(words, |&w| w), 8 * words.len() as u64), summary, hardest)
        };
        let base = sum(&words, &summary, &hardest);
        let mut other = words.clone();
        other[250_000] ^= 1 << 17;
        assert_ne!(base, sum(&other, &summary, &hardest));
        assert_ne!(base, sum(&words, &[0x05_04_00], &hardest));
        assert_ne!(base, sum(&words, &summary, &LayerHardest::default()));
        // A table of bytes sums as the words those bytes are.
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(byte_sums(&bytes), word_sums(&words, |&w| w));
    }
}
