//! Checkpoints of a long search, so that a killed `solve` resumes instead of
//! starting over.
//!
//! The tight search ([`search::bytes`](crate::solver::search::bytes)) keeps its whole
//! state in its table: at a layer boundary, the table, the depth and the
//! count of each layer are enough to go on. [`Checkpointer`] saves them at a
//! layer boundary once [`CheckpointOptions::interval`] has passed since the
//! last save (or the search began), into `.VARIANT.CLASS.checkpoint` in the
//! database directory, one file per searched class: a class derived by
//! mirror symmetry is never saved, and a finished class is saved (marked
//! done) when the interval has passed, so that a resume after it does not
//! search it again. A checkpoint is written whole into
//! `.VARIANT.CLASS.checkpoint.tmp-PID`, synced and renamed over the last
//! one, so a write that is killed leaves the previous checkpoint usable.
//!
//! The file: the line `bishops checkpoint`, one line of JSON ([`Header`]:
//! format, variant, start, class, method, table length, the count of each
//! layer, whether the search is over, a checksum of the table and when it
//! was written), the line `xxh3 ` and the [`seal`] of the header line (its
//! XXH3-64), then the table, one byte per legal position in tight-index
//! order. A checkpoint is trusted only when its format is this program's,
//! the header's seal holds, every header field matches the solve, the file
//! has the right length, the table's checksum holds and the table holds
//! exactly the layer counts the header gives; otherwise it is reported and
//! ignored, and the search starts over. The seal and the checksum find
//! damage, not forgery: a checkpoint edited with its checksums recomputed
//! passes them, and then the solve's own check of its table, by the rules,
//! before anything is written ([`Database::audit`](crate::storage::Database::audit)), is what stands
//! between it and a database.
//!
//! The two-bit search ([`search::two_bit`](crate::solver::search::two_bit)) checkpoints the
//! same way into the same file name, with the header's method `two-bit`:
//! the payload is its table (2 bits per legal position, 32 to a
//! word) and its summary (a byte per block, 8 to a word, the last word
//! padded with zeros), as little-endian 64-bit words, and the header also
//! carries the newest layer's hardest candidates and the remoteness of the
//! watched positions (the start's), once reached ([`TwoBitHeader`]); a
//! resumed search measures its rates of work afresh. The checksum
//! ([`word_checksum`]) covers the table, the summary and the hardest
//! candidates. Besides the header, its length
//! and the checksum, a resume checks that the table holds exactly the
//! counted layers (per residue mod 3, padding unseen), that the summary
//! flags every block holding an unseen position and blocks holding at least
//! the newest layer's count with its residue, and that the hardest
//! candidates are as many as the newest layer allows, in order, with its
//! residue, in flagged blocks ([`check_two_bit`]). The method field keeps
//! either search from taking the other's checkpoint.
//!
//! The workers of a partitioned search (the ranks of an MPI job) each save
//! their own share of a class, in files of their own
//! ([`Checkpointer::for_rank`], [`rank_path`]).
//!
//! The dense search (`--method dense`) neither saves nor resumes.

mod rank_files;
mod refusal;
mod share;

pub use rank_files::{ShareHeader, rank_path};
pub use refusal::{Payload, Refusal};

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

use crate::board::Class;
use crate::cleanup::{Pending, is_abandoned};
use crate::error::{Error, Result};
use crate::files::{self, Links, OpenError};
use crate::remoteness::Cell;
use crate::solver::mod3::{CURRENT, NEXT, UNSEEN_LEFT, code_words, count_codes};
use crate::solver::{HARDEST, LayerHardest, Resume, Save};
use crate::tight::TightIndex;
use crate::variant::Variant;

/// The first line of a checkpoint file.
const MAGIC: &[u8] = b"bishops checkpoint\n";

/// The version of the file format of both searches' checkpoints: 4 since
/// the payload's checksum is XXH3-64 ([`checksum`], [`word_checksum`]), as
/// the database's is, where format 3 used a hand-written FNV-1a 64; 3
/// since the header line is sealed by a checksum of its own ([`seal`]).
/// Before, the tight search wrote format 1 and the two-bit search format 2
/// (format 1 of the two-bit search kept a bit per position besides the
/// table). A checkpoint of another format is refused, and the search
/// starts over.
const FORMAT: u32 = 4;

/// The start of the line after the header: the header's seal.
const SEAL: &str = "xxh3 ";

/// The seal of a header line (its JSON, without the newline): XXH3-64 of
/// its bytes, 16 hex digits. The header holds the payload's checksum, so a
/// header whose seal holds and a payload whose checksum holds put every
/// byte a resume uses under a checksum. A checksum finds damage, not
/// forgery: what a resume takes is checked against the rules besides
/// ([`check_two_bit`], and the solve's check of its table before it is
/// written).
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
    /// Discard any checkpoint and search from the start.
    pub restart: bool,
}

impl Default for CheckpointOptions {
    fn default() -> CheckpointOptions {
        CheckpointOptions {
            interval: DEFAULT_INTERVAL,
            stop_after: None,
            restart: false,
        }
    }
}

impl CheckpointOptions {
    /// The options `solve` uses: the default interval unless
    /// `BISHOPS_CHECKPOINT_SECONDS` gives one, and the test hook
    /// `BISHOPS_STOP_AFTER_LAYER` (`N`, or `CLASS:N` such as `a2:5`).
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when either variable is not as described.
    pub fn from_env(restart: bool) -> Result<CheckpointOptions> {
        let bad = |name: &str, v: &str| Error::Usage(format!("{name}={v} is not a whole number"));
        let seconds = match std::env::var("BISHOPS_CHECKPOINT_SECONDS") {
            Ok(v) => Duration::from_secs(v.trim().parse().map_err(|_| bad("BISHOPS_CHECKPOINT_SECONDS", &v))?),
            Err(_) => DEFAULT_INTERVAL,
        };
        let stop_after = match std::env::var("BISHOPS_STOP_AFTER_LAYER") {
            Ok(v) => {
                let (class, layer) = match v.trim().split_once(':') {
                    Some((class, layer)) => {
                        let class = (0..2)
                            .filter_map(Class::from_index)
                            .find(|c| c.name() == class)
                            .ok_or_else(|| bad("BISHOPS_STOP_AFTER_LAYER", &v))?;
                        (Some(class), layer)
                    }
                    None => (None, v.trim()),
                };
                Some((class, layer.parse().map_err(|_| bad("BISHOPS_STOP_AFTER_LAYER", &v))?))
            }
            Err(_) => None,
        };
        Ok(CheckpointOptions {
            interval: seconds,
            stop_after,
            restart,
        })
    }
}

/// The checkpoint of class `class` of `variant` in `dir`.
pub fn path(dir: &Path, variant: &str, class: Class) -> PathBuf {
    dir.join(format!(".{variant}.{}.checkpoint", class.name()))
}

/// Whether `name` is a name this module gives a file of a database
/// directory: a checkpoint or the temporary file of one.
///
/// ```
/// use bishops::checkpoint::is_own_name;
/// assert!(is_own_name(".9x8.a1.checkpoint") && is_own_name(".9x8.a2.checkpoint.tmp-7"));
/// assert!(!is_own_name("9x8.checkpoint.csv"));
/// ```
pub fn is_own_name(name: &str) -> bool {
    name.starts_with('.') && (name.ends_with(".checkpoint") || name.contains(".checkpoint.tmp-"))
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
    variant
        .classes()
        .iter()
        .try_for_each(|spec| check_file(&path(dir, variant.name(), spec.class)))
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

/// Removes every checkpoint of `variant` in `dir`, and the temporary files
/// of checkpoint writes that were killed; returns the checkpoints removed.
/// The caller should hold the variant's
/// [`WriteLock`](crate::storage::WriteLock).
pub fn remove(dir: &Path, variant: &Variant) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for spec in variant.classes() {
        let file = path(dir, variant.name(), spec.class);
        if fs::remove_file(&file).is_ok() {
            removed.push(file);
        }
    }
    for (file, _) in rank_files::rank_files(dir, variant) {
        if fs::remove_file(&file).is_ok() {
            removed.push(file);
        }
    }
    remove_temporary(dir, variant);
    removed
}

/// Removes the temporary files that killed checkpoint writes of `variant`
/// left: only those whose process is gone ([`is_abandoned`]).
fn remove_temporary(dir: &Path, variant: &Variant) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ours = |s: &crate::variant::ClassSpec| {
            let class = format!(".{}.{}.", variant.name(), s.class.name());
            name.strip_prefix(&class).is_some_and(|rest| {
                rest.starts_with("checkpoint.tmp-") || (rest.starts_with("rank-") && rest.contains(".checkpoint.tmp-"))
            })
        };
        if variant.classes().iter().any(ours) && is_abandoned(name) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The JSON line of a checkpoint file.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Header {
    /// The file format: 3, the same for both methods.
    pub format: u32,
    /// The variant's name.
    pub variant: String,
    /// The variant's start position.
    pub start: String,
    /// The class number.
    pub class: usize,
    /// The search that wrote it: `tight` or `two-bit`.
    pub method: String,
    /// The class's legal positions: cells in a `tight` table, positions in
    /// a `two-bit` one.
    pub length: u64,
    /// `found[d]`: positions at remoteness `d`, for every complete layer.
    pub found: Vec<u64>,
    /// Whether the class's search is over.
    pub done: bool,
    /// [`checksum`] of the table (`tight`) or [`word_checksum`] of the
    /// payload (`two-bit`), 16 hex digits.
    pub checksum: String,
    /// When it was written, in seconds since 1970.
    pub written: u64,
    /// What else a two-bit search needs to go on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub two_bit: Option<TwoBitHeader>,
    /// For one worker's share of a partitioned search: which share, and its
    /// own count of each layer. `length` then counts the share's cells and
    /// `found` the whole class's layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<ShareHeader>,
}

/// The part of a two-bit checkpoint's header that only the two-bit search
/// has.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone, Default)]
pub struct TwoBitHeader {
    /// The tight indices of up to [`HARDEST`] positions of the newest
    /// layer, lowest first.
    pub hardest: Vec<u64>,
    /// When a class mirrors the searched one: the public hashes in it of
    /// the images of up to [`HARDEST`] positions of the newest layer,
    /// lowest first.
    pub mirrored_hardest: Option<Vec<u64>>,
    /// For each watched position (the start's in the class, say): its
    /// remoteness where the saving worker owns it and has reached it.
    #[serde(default)]
    pub watched: Option<Vec<Option<u64>>>,
}

impl TwoBitHeader {
    fn of(hardest: &LayerHardest, watched: &[Option<u64>]) -> TwoBitHeader {
        TwoBitHeader {
            hardest: hardest.own.clone(),
            mirrored_hardest: hardest.mirrored.clone(),
            watched: Some(watched.to_vec()),
        }
    }
}

/// Bytes a checksum hashes in one piece, on one core.
const PIECE: usize = 1 << 20;

/// Words in a [`PIECE`].
const PIECE_WORDS: usize = PIECE / 8;

/// A checksum of a table that runs on every core: XXH3-64 (the
/// database's hash) of each MiB, then XXH3-64 of those sums and the
/// length, as little-endian words.
pub fn checksum(cells: &[u8]) -> u64 {
    let sums: Vec<u64> = cells.par_chunks(PIECE).map(xxh3_64).collect();
    combine(sums.into_iter().chain([cells.len() as u64]))
}

/// XXH3-64 of `words` as little-endian bytes: how the sums of the pieces
/// become one checksum.
fn combine(words: impl Iterator<Item = u64>) -> u64 {
    let mut hasher = Xxh3Default::new();
    for word in words {
        hasher.update(&word.to_le_bytes());
    }
    hasher.digest()
}

/// XXH3-64 of each MiB of `words` (read by `load`) as little-endian
/// bytes: the sums [`word_checksum`] combines.
fn word_sums<T: Sync>(words: &[T], load: impl Fn(&T) -> u64 + Sync) -> Vec<u64> {
    words
        .par_chunks(PIECE_WORDS)
        .map(|chunk| {
            let bytes: Vec<u8> = chunk.iter().flat_map(|w| load(w).to_le_bytes()).collect();
            xxh3_64(&bytes)
        })
        .collect()
}

/// A checksum of the payload of a two-bit checkpoint, the words of each
/// part in turn, that runs on every core: XXH3-64 of each MiB of each
/// part, then XXH3-64 of those sums and the length of each part in words.
pub fn word_checksum(parts: &[&[u64]]) -> u64 {
    let mut sums = Vec::new();
    for part in parts {
        sums.extend(word_sums(part, |&w| w));
    }
    combine(sums.into_iter().chain(parts.iter().map(|p| p.len() as u64)))
}

/// The code of a position no layer has reached.
const UNSEEN_CODE: u8 = 3;

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

/// The checksum of a two-bit checkpoint: [`word_checksum`] of the table,
/// the summary words and the hardest candidates (the mirrored ones, and
/// whether there are any), from the table's sums (`code_sums`, as
/// [`word_sums`] gives them, over `code_words` words).
fn two_bit_checksum(code_sums: Vec<u64>, code_words: usize, summary: &[u64], hardest: &LayerHardest) -> u64 {
    let mirrored = hardest.mirrored.as_deref().unwrap_or(&[]);
    let flag = [u64::from(hardest.mirrored.is_some())];
    let rest: [&[u64]; 4] = [summary, &hardest.own, mirrored, &flag];
    let mut sums = code_sums;
    for part in rest {
        sums.extend(word_sums(part, |&w| w));
    }
    let lengths = [code_words as u64]
        .into_iter()
        .chain(rest.iter().map(|p| p.len() as u64));
    combine(sums.into_iter().chain(lengths))
}

/// Checks that the state of a two-bit search of the class of `index` at a
/// layer boundary (`found`, `done`, `codes`, `summary`, `hardest`, as in
/// [`TwoBitShareResume`](crate::solver::TwoBitShareResume) of the one
/// worker) is consistent: the right number of words and summary
/// bytes; the padding codes beyond the legal positions unseen; per residue
/// mod 3, as many positions as the layers of that residue count; summary
/// bytes with only the [`CURRENT`] and [`UNSEEN_LEFT`] bits, the latter on
/// every block that holds an unseen position, the former on blocks that
/// hold at least the newest layer's count of its residue; and the hardest
/// candidates, as many as the newest layer allows ([`HARDEST`] at most),
/// strictly increasing, the own ones legal indices with the newest residue
/// in [`CURRENT`] blocks. `done` says whether the search is over; it
/// changes nothing checked here, as the newest layer is then the last.
///
/// # Errors
///
/// What is wrong, to follow the name of the file.
pub fn check_two_bit(
    found: &[u64],
    done: bool,
    index: &TightIndex,
    codes: &[u64],
    summary: &[u8],
    hardest: &LayerHardest,
) -> std::result::Result<(), Refusal> {
    let _ = done;
    let legal = index.len();
    if codes.len() as u64 != code_words(legal) || summary.len() as u64 != index.white_sets() {
        return Err(Refusal::Inconsistent(format!(
            "has {} code words and {} summary bytes, not {} and {}",
            codes.len(),
            summary.len(),
            code_words(legal),
            index.white_sets()
        )));
    }
    if found.first() != Some(&1) || found.contains(&0) {
        return Err(Refusal::inconsistent("counts an empty layer or more than one goal"));
    }
    check_codes(index, 0..index.white_sets(), 0..legal, codes, summary, found, hardest)
}

/// The checks a two-bit search's state at a layer boundary shares, whole
/// ([`check_two_bit`]) or a worker's share of it: `codes` holds two bits a
/// position of `range`, the positions of the blocks `blocks` of `index`,
/// from `range.start`; `summary` a byte a block; `own` counts the layers'
/// positions in `range`. The padding codes past `range` are unseen; per
/// residue mod 3, as many positions as the layers of that residue count;
/// the summary bytes have only the [`CURRENT`] and [`UNSEEN_LEFT`] bits,
/// the latter on every block that holds an unseen position, the former on
/// blocks that hold at least the newest layer's count of its residue; the
/// hardest candidates are as many as the newest layer allows ([`HARDEST`]
/// at most), strictly increasing, the own ones in `range` with the newest
/// residue in [`CURRENT`] blocks. Else says what is wrong.
pub(super) fn check_codes(
    index: &TightIndex,
    blocks: Range<u64>,
    range: Range<u64>,
    codes: &[u64],
    summary: &[u8],
    own: &[u64],
    hardest: &LayerHardest,
) -> std::result::Result<(), Refusal> {
    let len = range.end - range.start;
    let total = match own.iter().try_fold(0u64, |a, &b| a.checked_add(b)) {
        Some(total) if total <= len => total,
        _ => return Err(Refusal::Inconsistent(format!("counts more positions than its {len}"))),
    };
    if !len.is_multiple_of(32)
        && let Some(&last) = codes.last()
        && last | (u64::MAX >> (64 - 2 * (len % 32))) != u64::MAX
    {
        return Err(Refusal::inconsistent("has reached positions beyond its own"));
    }
    let mut want = [0u64; 4];
    for (d, &n) in own.iter().enumerate() {
        want[d % 3] += n;
    }
    want[3] = 32 * codes.len() as u64 - total;
    if code_counts(codes) != want {
        return Err(Refusal::inconsistent("holds other layers than its header counts"));
    }
    if summary.iter().any(|&s| s & !(CURRENT | UNSEEN_LEFT) != 0) {
        return Err(Refusal::inconsistent("has a summary byte with unknown bits"));
    }
    let newest = ((own.len().max(1) - 1) % 3) as u8;
    let load = |&w: &u64| w;
    let code = |i: u64| (codes[((i - range.start) / 32) as usize] >> (2 * ((i - range.start) % 32))) as u8 & 3;
    let (unflagged, in_current) = (0..(blocks.end - blocks.start) as usize)
        .into_par_iter()
        .with_min_len(1 << 10)
        .map(|k| {
            let block = index.block(blocks.start + k as u64);
            let block = block.start - range.start..block.end - range.start;
            let flags = summary[k];
            let unseen = flags & UNSEEN_LEFT == 0 && count_codes(codes, load, block.clone(), UNSEEN_CODE) > 0;
            let current = if flags & CURRENT != 0 {
                count_codes(codes, load, block, newest)
            } else {
                0
            };
            (u64::from(unseen), current)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if unflagged > 0 {
        return Err(Refusal::Inconsistent(format!(
            "has {unflagged} blocks with unseen positions not flagged so"
        )));
    }
    let layer = *own.last().ok_or(Refusal::inconsistent("counts no layer"))?;
    if in_current < layer {
        return Err(Refusal::Inconsistent(format!(
            "flags blocks that hold {in_current} positions of the newest residue, fewer than its {layer} of the newest layer"
        )));
    }
    let expected = (layer as usize).min(HARDEST);
    let increasing = |v: &[u64]| v.windows(2).all(|w| w[0] < w[1]);
    if hardest.own.len() != expected || !increasing(&hardest.own) {
        return Err(Refusal::Inconsistent(format!(
            "keeps {} hardest positions, not {expected} in order",
            hardest.own.len()
        )));
    }
    for &i in &hardest.own {
        if !range.contains(&i)
            || code(i) != newest
            || summary[(index.block_of(i) - blocks.start) as usize] & CURRENT == 0
        {
            return Err(Refusal::Inconsistent(format!(
                "keeps position {i} as one of the hardest, not of the newest layer"
            )));
        }
    }
    if let Some(mirrored) = &hardest.mirrored
        && (mirrored.len() != expected || !increasing(mirrored))
    {
        return Err(Refusal::Inconsistent(format!(
            "keeps {} hardest mirror images, not {expected} in order",
            mirrored.len()
        )));
    }
    Ok(())
}

/// How many codes of the words `codes` are each residue, 0 to 2, and
/// unseen, padding included.
fn code_counts(codes: &[u64]) -> [u64; 4] {
    // Positions per code: residues 0 to 2, then unseen (the rest of each
    // word: fewer popcounts, which the default x86-64 target does in
    // software).
    const M: u64 = 0x5555_5555_5555_5555;
    codes
        .par_iter()
        .with_min_len(1 << 12)
        .fold(
            || [0u64; 4],
            |mut n, &w| {
                let (lo, hi) = (w & M, w >> 1 & M);
                let masks = [!hi & !lo & M, !hi & lo, hi & !lo & M];
                let mut seen = 0;
                for (count, m) in n.iter_mut().zip(masks) {
                    let c = u64::from(m.count_ones());
                    *count += c;
                    seen += c;
                }
                n[3] += 32 - seen;
                n
            },
        )
        .reduce(
            || [0u64; 4],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// Checks the header of a two-bit checkpoint whose payload is `payload`
/// bytes long against a table of `codes` words and a summary of `blocks`
/// blocks, and against whether a class mirrors the searched one
/// (`mirrored`): the hardest candidates it keeps, and the rest of what only
/// a two-bit checkpoint's header has. Returns the hardest candidates and
/// the watched positions' remoteness.
fn two_bit_header(
    header: &Header,
    payload: u64,
    codes: u64,
    blocks: u64,
    mirrored: bool,
) -> std::result::Result<(LayerHardest, Vec<Option<u64>>), Refusal> {
    let words = codes + summary_words(blocks);
    if payload != 8 * words {
        return Err(Refusal::Length {
            bytes: payload,
            want: Payload::Words(words),
        });
    }
    if header.found.is_empty() || header.found.len() > usize::from(u16::MAX) + 1 {
        return Err(Refusal::Inconsistent(format!("has {} layers", header.found.len())));
    }
    let Some(extra) = &header.two_bit else {
        return Err(Refusal::inconsistent("has no hardest positions in its header"));
    };
    if extra.mirrored_hardest.is_some() != mirrored {
        return Err(Refusal::Inconsistent(format!(
            "{} the hardest positions of a mirrored class",
            if mirrored { "lacks" } else { "has" }
        )));
    }
    let Some(watched) = extra.watched.clone() else {
        return Err(Refusal::inconsistent(
            "has no watched positions in its header, as two-bit checkpoints before this version had not",
        ));
    };
    let hardest = LayerHardest {
        own: extra.hardest.clone(),
        mirrored: extra.mirrored_hardest.clone(),
    };
    Ok((hardest, watched))
}

/// Reads the payload of a two-bit checkpoint from `reader`: `codes` words
/// of codes, then the summary of `blocks` blocks; checks it against
/// `checksum` (with the `hardest` candidates of its header) and that the
/// summary's padding is zero.
fn read_two_bit_payload(
    reader: &mut impl Read,
    codes: u64,
    blocks: u64,
    hardest: &LayerHardest,
    checksum: &str,
) -> std::result::Result<(Vec<u64>, Vec<u8>), Refusal> {
    let codes = read_words(reader, codes as usize)?;
    let packed = read_words(reader, summary_words(blocks) as usize)?;
    let sum = two_bit_checksum(word_sums(&codes, |&w| w), codes.len(), &packed, hardest);
    if format!("{sum:016x}") != checksum {
        return Err(Refusal::Checksum);
    }
    let mut summary: Vec<u8> = packed.iter().flat_map(|w| w.to_le_bytes()).collect();
    if summary.drain(blocks as usize..).any(|b| b != 0) {
        return Err(Refusal::inconsistent("has summary padding that is not zero"));
    }
    Ok((codes, summary))
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

/// Writes `words`, which no thread writes meanwhile, as little-endian
/// words to `out`, through a buffer of a MiB.
fn write_words(out: &mut impl Write, words: &[AtomicU64]) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(8 * PIECE_WORDS);
    for chunk in words.chunks(PIECE_WORDS) {
        buffer.clear();
        buffer.extend(chunk.iter().flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes()));
        out.write_all(&buffer)?;
    }
    Ok(())
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
        let header: Header = serde_json::from_slice(&line).map_err(Refusal::UnreadableHeader)?;
        let expect = |field: &'static str, found: String, want: String| {
            if found == want {
                Ok(())
            } else {
                Err(Refusal::OtherSolve { field, found, want })
            }
        };
        // The format first, as an older file has no seal; then the seal,
        // before any other field is believed.
        if header.format != FORMAT {
            return Err(Refusal::Format {
                found: header.format,
                want: FORMAT,
            });
        }
        let header_line = line.strip_suffix(b"\n").unwrap_or(&line);
        let mut sealed = Vec::new();
        (&mut reader).take(64).read_until(b'\n', &mut sealed)?;
        if sealed != format!("{SEAL}{}\n", seal(header_line)).as_bytes() {
            return Err(Refusal::HeaderChecksum);
        }
        expect("method", header.method.clone(), method.to_owned())?;
        expect("variant", header.variant.clone(), self.variant.name().to_owned())?;
        expect("start", header.start.clone(), self.start.clone())?;
        expect("class", Class::name_of(header.class), class.name().to_owned())?;
        expect("legal positions", header.length.to_string(), legal.to_string())?;
        self.check_share(&header)?;
        Ok((header, (MAGIC.len() + line.len() + sealed.len()) as u64, size, reader))
    }

    /// Reads and checks the checkpoint of `class`: its header, its table,
    /// or what is wrong with it.
    fn read(&self, file: &Path, class: Class, legal: u64) -> std::result::Result<(Header, Vec<u8>), Refusal> {
        let (header, head, size, mut reader) = self.open(file, class, legal, "tight")?;
        if size != head + legal {
            return Err(Refusal::Length {
                bytes: size,
                want: Payload::Cells(legal),
            });
        }
        if header.found.is_empty() || header.found.len() > usize::from(Cell::MAX_REMOTENESS) + 1 {
            return Err(Refusal::Inconsistent(format!("has {} layers", header.found.len())));
        }
        let mut cells = vec![0u8; legal as usize];
        reader.read_exact(&mut cells)?;
        if format!("{:016x}", checksum(&cells)) != header.checksum {
            return Err(Refusal::Checksum);
        }
        // The table must hold exactly the layers the header counts (a
        // share's own counts: the whole class's are checked by the workers
        // together).
        let counted = header.share.as_ref().map_or(&header.found, |s| &s.found);
        let histogram = cells
            .par_chunks(1 << 20)
            .fold(
                || [0u64; 256],
                |mut h, chunk| {
                    for &c in chunk {
                        h[usize::from(c)] += 1;
                    }
                    h
                },
            )
            .reduce(
                || [0u64; 256],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let layers = header.found.len();
        let unseen = usize::from(Cell::UNREACHABLE.0);
        let consistent = counted.len() == layers
            && histogram[..layers] == counted[..]
            && histogram[layers..]
                .iter()
                .enumerate()
                .all(|(i, &n)| n == 0 || i + layers == unseen);
        if !consistent {
            return Err(Refusal::inconsistent("holds other layers than its header counts"));
        }
        Ok((header, cells))
    }

    /// A header for a checkpoint of `class` by `method`.
    fn header(&self, class: Class, method: &str, length: u64, found: &[u64], done: bool, checksum: u64) -> Header {
        Header {
            format: FORMAT,
            variant: self.variant.name().to_owned(),
            start: self.start.clone(),
            class: class.index(),
            method: method.to_owned(),
            length,
            found: found.to_vec(),
            done,
            checksum: format!("{checksum:016x}"),
            written: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            two_bit: None,
            share: None,
        }
    }

    /// Writes the checkpoint of `class` atomically: the magic line,
    /// `header`, then the `payload` bytes that `body` writes.
    fn save(
        &mut self,
        class: Class,
        header: &Header,
        payload: u64,
        body: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
    ) -> Result<PathBuf> {
        let began = Instant::now();
        let file = self.file(class);
        let name = file.file_name().expect("a checkpoint file name").to_string_lossy();
        let tmp = self.dir.join(format!("{name}.tmp-{}", std::process::id()));
        let json = serde_json::to_vec(header).expect("a header serialises");
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&json);
        head.extend_from_slice(format!("\n{SEAL}{}\n", seal(&json)).as_bytes());
        check_file(&file)?;
        let _pending = Pending::register(&tmp);
        let result = (|| {
            fs::create_dir_all(&self.dir)?;
            let mut out = files::open_regular(
                &tmp,
                fs::OpenOptions::new().write(true).create(true).truncate(true),
                Links::Refuse,
            )
            .map_err(|e| match e {
                OpenError::NotRegular(kind) => std::io::Error::other(format!("{} is {kind}", crate::text::path(&tmp))),
                OpenError::Io(e) => e,
            })?;
            out.write_all(&head)?;
            body(&mut out)?;
            out.sync_all()?;
            drop(out);
            fs::rename(&tmp, &file)?;
            // Make the rename itself durable.
            files::sync_dir(&self.dir);
            Ok(())
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(Error::Io(file, e));
        }
        self.written.0 += 1;
        self.written.1 += began.elapsed().as_secs_f64();
        self.written.2 += head.len() as u64 + payload;
        Ok(file)
    }

    /// Writes a tight checkpoint of `class` atomically: `cells`, after
    /// `found` layers (the whole class's), over or not, and for one
    /// worker's share, `share`.
    fn write_cells(
        &mut self,
        class: Class,
        cells: &[u8],
        found: &[u64],
        done: bool,
        share: Option<ShareHeader>,
    ) -> Result<PathBuf> {
        let mut header = self.header(class, "tight", cells.len() as u64, found, done, checksum(cells));
        header.share = share;
        self.save(class, &header, cells.len() as u64, |out| out.write_all(cells))
    }

    /// Writes a two-bit checkpoint of `class` atomically: `header` with
    /// the checksum of the payload, then the payload, `codes` straight
    /// from their words and the `summary` bytes packed, which no thread
    /// writes meanwhile; `hardest` is what the header keeps of the
    /// hardest candidates.
    fn write_two_bit_words(
        &mut self,
        class: Class,
        mut header: Header,
        codes: &[AtomicU64],
        summary: &[AtomicU8],
        hardest: &LayerHardest,
    ) -> Result<PathBuf> {
        debug_assert!(summary.iter().all(|s| s.load(Ordering::Relaxed) & NEXT == 0));
        let summary = pack_summary(summary.iter().map(|s| s.load(Ordering::Relaxed)), summary.len() as u64);
        let checksum = two_bit_checksum(
            word_sums(codes, |w| w.load(Ordering::Relaxed)),
            codes.len(),
            &summary,
            hardest,
        );
        header.checksum = format!("{checksum:016x}");
        let payload = 8 * (codes.len() + summary.len()) as u64;
        self.save(class, &header, payload, |out| {
            write_words(out, codes)?;
            let bytes: Vec<u8> = summary.iter().flat_map(|w| w.to_le_bytes()).collect();
            out.write_all(&bytes)
        })
    }

    /// Tells the user of a resume from `file`, whose header is `header`.
    fn note_resume(&mut self, file: &Path, class: Class, header: &Header) {
        let age = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
            .saturating_sub(header.written);
        let layer = header.found.len() - 1;
        (self.note)(&format!(
            "resuming {} class {} from the checkpoint {} at layer {layer}{}, written {age} s ago",
            self.variant.name(),
            class.name(),
            crate::text::path(file),
            if header.done {
                " (the class's search is over)"
            } else {
                ""
            },
        ));
    }

    /// Tells the user that the checkpoint `file` is ignored for `problem`.
    fn note_ignored(&mut self, file: &Path, class: Class, problem: &Refusal) {
        (self.note)(&format!(
            "checkpoint {} {problem}; ignoring it and searching class {} from the start",
            crate::text::path(file),
            class.name()
        ));
    }

    /// Whether to save at the boundary of `class` where `found` counts the
    /// complete layers: when the interval has passed since the last save
    /// (which this then counts from) or the test hook asks, and then stop.
    fn decide(&mut self, class: Class, found: &[u64], done: bool) -> Save {
        let depth = u16::try_from(found.len().saturating_sub(1)).unwrap_or(u16::MAX);
        let stop = !done
            && self
                .options
                .stop_after
                .is_some_and(|(c, layer)| layer == depth && c.is_none_or(|c| c == class));
        if stop {
            self.last = Instant::now();
            Save::AndStop
        } else if self.last.elapsed() >= self.options.interval {
            self.last = Instant::now();
            Save::Yes
        } else {
            Save::No
        }
    }

    /// The error of a stop that the test hook asked for after the layers
    /// `found` counts, once `holder` holds the search.
    fn stop_error(&self, class: Class, found: &[u64], holder: &str) -> Error {
        Error::Stopped(format!(
            "stopped after layer {} of {} class {}, as BISHOPS_STOP_AFTER_LAYER asks; {holder} holds the search",
            found.len().saturating_sub(1),
            self.variant.name(),
            class.name(),
        ))
    }

    /// The checkpoint of `class` to look at for a resume, if any.
    fn existing(&self, class: Class) -> Option<PathBuf> {
        if self.options.restart {
            return None;
        }
        let file = self.file(class);
        file.exists().then_some(file)
    }

    /// What a resume of `class` from `file` takes from what reading it
    /// gave, telling the user of the resume or of why it is ignored.
    fn resumed(
        &mut self,
        file: &Path,
        class: Class,
        read: std::result::Result<(Header, Vec<u8>), Refusal>,
    ) -> Option<Resume> {
        match read {
            Ok((header, cells)) => {
                self.note_resume(file, class, &header);
                Some(Resume {
                    found: header.found,
                    done: header.done,
                    cells,
                })
            }
            Err(problem) => {
                self.note_ignored(file, class, &problem);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::{ShareBoundary, ShareCheckpoints, TwoBitShareBoundary, TwoBitShareResume, search};
    use crate::tight::TightIndex;

    /// Keeps a copy of the state at every two-bit boundary.
    #[derive(Default)]
    struct Recorder(Vec<TwoBitShareResume>);

    impl ShareCheckpoints for Recorder {
        fn resume_share(&mut self, _: Class, _: Range<u64>) -> Option<Resume> {
            None
        }

        fn due(&mut self, _: Class, _: &[u64], _: bool) -> Save {
            Save::Yes
        }

        fn save_share(&mut self, _: ShareBoundary<'_>) -> Result<()> {
            Ok(())
        }

        fn note(&mut self, _: &str) {}

        fn save_two_bit_share(&mut self, b: TwoBitShareBoundary<'_>) -> Result<()> {
            self.0.push(b.to_resume());
            Ok(())
        }
    }

    /// The boundaries of the two-bit search of class 0 of `name`, and its
    /// tight index.
    fn boundaries(name: &str) -> (Vec<TwoBitShareResume>, TightIndex) {
        let variant = Variant::named(name).unwrap();
        let spec = &variant.classes()[0];
        let index = spec.tight_index();
        let mut recorder = Recorder::default();
        search::two_bit_with(name, spec, &index, None, &mut recorder, &mut |_| {}).unwrap();
        (recorder.0, index)
    }

    #[test]
    fn every_two_bit_boundary_is_consistent() {
        for name in ["5x4", "7x4", "7x5-full", "6x4-full"] {
            let (all, index) = boundaries(name);
            assert!(all.len() > 3, "{name}");
            assert!(all.last().unwrap().done && all[..all.len() - 1].iter().all(|b| !b.done));
            for b in &all {
                if let Err(refusal) = check_two_bit(&b.found, b.done, &index, &b.codes, &b.summary, &b.hardest) {
                    panic!("{name} at {} layers: {refusal}", b.found.len());
                }
                // The summary flags the blocks of the newest layer, and no
                // block of a layer a push would not need.
                assert!(b.summary.iter().any(|&s| s & CURRENT != 0));
            }
            // The last boundary keeps the hardest positions of the last layer.
            let last = all.last().unwrap();
            assert_eq!(
                last.hardest.own.len(),
                (*last.found.last().unwrap() as usize).min(HARDEST)
            );
        }
    }

    #[test]
    fn inconsistent_two_bit_states_are_refused() {
        let (all, index) = boundaries("7x4");
        let legal = index.len();
        let b = &all[all.len() / 2];
        let check = |found: &[u64], codes: &[u64], summary: &[u8], hardest: &LayerHardest| {
            check_two_bit(found, b.done, &index, codes, summary, hardest)
        };
        assert!(check(&b.found, &b.codes, &b.summary, &b.hardest).is_ok());
        // A layer more or less, a count off by one, no layers.
        assert!(check(&b.found[..b.found.len() - 1], &b.codes, &b.summary, &b.hardest).is_err());
        let mut found = b.found.clone();
        *found.last_mut().unwrap() += 1;
        assert!(check(&found, &b.codes, &b.summary, &b.hardest).is_err());
        assert!(check(&[], &b.codes, &b.summary, &b.hardest).is_err());
        // A reached position forgotten.
        let code = |codes: &[u64], i: u64| codes[(i / 32) as usize] >> (2 * (i % 32)) & 3;
        let mut codes = b.codes.clone();
        let i = (0..legal).find(|&i| code(&codes, i) != 3).unwrap();
        codes[(i / 32) as usize] |= 3 << (2 * (i % 32));
        assert!(check(&b.found, &codes, &b.summary, &b.hardest).is_err());
        // A block with unseen positions not flagged so; a summary bit unknown.
        let r = (0..index.white_sets())
            .find(|&r| index.block(r).any(|i| code(&b.codes, i) == 3))
            .unwrap();
        let mut summary = b.summary.clone();
        summary[r as usize] &= !UNSEEN_LEFT;
        assert!(check(&b.found, &b.codes, &summary, &b.hardest).is_err());
        let mut summary = b.summary.clone();
        summary[0] |= NEXT;
        assert!(check(&b.found, &b.codes, &summary, &b.hardest).is_err());
        // No block flagged as holding the newest layer.
        let summary: Vec<u8> = b.summary.iter().map(|s| s & !CURRENT).collect();
        assert!(check(&b.found, &b.codes, &summary, &b.hardest).is_err());
        // Hardest candidates missing, out of order, or not of the newest layer.
        let mut hardest = b.hardest.clone();
        hardest.own.pop();
        assert!(check(&b.found, &b.codes, &b.summary, &hardest).is_err());
        let mut hardest = b.hardest.clone();
        hardest.own.swap(0, 1);
        assert!(check(&b.found, &b.codes, &b.summary, &hardest).is_err());
        let newest = ((b.found.len() - 1) % 3) as u64;
        let mut hardest = b.hardest.clone();
        hardest.own[0] = (0..legal).find(|&i| code(&b.codes, i) != newest).unwrap();
        hardest.own.sort_unstable();
        assert!(check(&b.found, &b.codes, &b.summary, &hardest).is_err());
        // Padding that is not unseen, and the wrong number of words or bytes.
        if !legal.is_multiple_of(32) {
            let mut codes = b.codes.clone();
            *codes.last_mut().unwrap() &= !(3 << 62);
            assert!(check(&b.found, &codes, &b.summary, &b.hardest).is_err());
        }
        assert!(check(&b.found, &b.codes[1..], &b.summary, &b.hardest).is_err());
        assert!(check(&b.found, &b.codes, &b.summary[1..], &b.hardest).is_err());
    }

    #[test]
    fn word_checksum_sees_every_word_and_the_split() {
        let words: Vec<u64> = (0..300_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let sum = word_checksum(&[&words[..1000], &words[1000..]]);
        let mut other = words.clone();
        other[250_000] ^= 1 << 17;
        assert_ne!(sum, word_checksum(&[&other[..1000], &other[1000..]]));
        assert_ne!(sum, word_checksum(&[&words[..999], &words[999..]]));
        // The two-bit checksum is the word checksum of its parts.
        let hardest = LayerHardest {
            own: vec![3, 9],
            mirrored: Some(vec![1]),
        };
        let summary = pack_summary([1u8, 4, 5].into_iter(), 3);
        assert_eq!(summary, [0x05_04_01]);
        assert_eq!(
            two_bit_checksum(word_sums(&words, |&w| w), words.len(), &summary, &hardest),
            word_checksum(&[&words, &summary, &[3, 9], &[1], &[1]])
        );
    }
}
