//! Checkpoints of a long search, so that a killed `solve` resumes instead of
//! starting over.
//!
//! The tight search ([`parallel`](crate::solver::parallel)) keeps its whole
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
//! was written), then the table, one byte per legal position in tight-index
//! order. A checkpoint is trusted only when every header field matches the
//! solve, the file has the right length, the checksum holds and the table
//! holds exactly the layer counts the header gives; otherwise it is
//! reported and ignored.
//!
//! The two-bit search ([`twobit`](crate::solver::twobit)) checkpoints the
//! same way into the same file name, with the header's method `two-bit`:
//! its table (2 bits per legal position, 32 to a word) and its expanded bits
//! (64 to a word) are the payload, as little-endian 64-bit words, codes then
//! expanded bits, and the checksum ([`word_checksum`]) covers both. Besides
//! the header, its length and the checksum, a resume checks that the table
//! holds exactly the counted layers (per residue mod 3, padding unseen) and
//! that the expanded bits mark exactly the layers that the search has
//! expanded at that boundary ([`expanded_layers`]) and no unreached
//! position ([`check_two_bit`]). The method field keeps either search from
//! taking the other's checkpoint.
//!
//! The dense search (`--method dense`) neither saves nor resumes.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::board::Class;
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::files::{self, Links, OpenError};
use crate::remoteness::Cell;
use crate::solver::parallel::{Boundary, Checkpoints, Resume};
use crate::solver::twobit::{TwoBitBoundary, TwoBitResume, code_words, expanded_layers, expanded_words};
use crate::variant::Variant;

/// The first line of a checkpoint file.
const MAGIC: &[u8] = b"bishops checkpoint\n";

/// The version of the file format.
const FORMAT: u32 = 1;

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
            file.display()
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
    remove_temporary(dir, variant);
    removed
}

/// Removes the temporary files that killed checkpoint writes of `variant` left.
fn remove_temporary(dir: &Path, variant: &Variant) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if variant
            .classes()
            .iter()
            .any(|s| name.starts_with(&format!(".{}.{}.checkpoint.tmp-", variant.name(), s.class.name())))
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The JSON line of a checkpoint file.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Header {
    /// [`FORMAT`].
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
}

/// A checksum of a table that runs on every core: FNV-1a 64 over the
/// little-endian 64-bit words of each MiB (a last short word padded with
/// zeros), then FNV-1a 64 over those sums.
pub fn checksum(cells: &[u8]) -> u64 {
    const BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let fnv = |words: &mut dyn Iterator<Item = u64>| words.fold(BASIS, |h, w| (h ^ w).wrapping_mul(PRIME));
    let sums: Vec<u64> = cells
        .par_chunks(1 << 20)
        .map(|chunk| {
            let mut words = chunk.chunks(8).map(|w| {
                let mut word = [0u8; 8];
                word[..w.len()].copy_from_slice(w);
                u64::from_le_bytes(word)
            });
            fnv(&mut words)
        })
        .collect();
    fnv(&mut sums.into_iter().chain([cells.len() as u64]))
}

/// FNV-1a 64 of a sequence of words.
fn fnv(words: impl Iterator<Item = u64>) -> u64 {
    const BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    words.fold(BASIS, |h, w| (h ^ w).wrapping_mul(PRIME))
}

/// Words per MiB.
const MIB_WORDS: usize = 1 << 17;

/// The sums of [`word_checksum`] over each MiB of `words`, read by `load`.
fn word_sums<T: Sync>(words: &[T], load: impl Fn(&T) -> u64 + Sync) -> Vec<u64> {
    words
        .par_chunks(MIB_WORDS)
        .map(|chunk| fnv(chunk.iter().map(&load)))
        .collect()
}

/// A checksum of the payload of a two-bit checkpoint, the words of each
/// part in turn, that runs on every core: FNV-1a 64 over the words of each
/// MiB of each part, then FNV-1a 64 over those sums and the length of each
/// part in words.
pub fn word_checksum(parts: &[&[u64]]) -> u64 {
    let mut sums = Vec::new();
    for part in parts {
        sums.extend(word_sums(part, |&w| w));
    }
    fnv(sums.into_iter().chain(parts.iter().map(|p| p.len() as u64)))
}

/// [`word_checksum`] of words that no thread writes meanwhile.
fn atomic_checksum(parts: &[&[AtomicU64]]) -> u64 {
    let mut sums = Vec::new();
    for part in parts {
        sums.extend(word_sums(part, |w| w.load(Ordering::Relaxed)));
    }
    fnv(sums.into_iter().chain(parts.iter().map(|p| p.len() as u64)))
}

/// Spreads the 32 bits of `x` to the even bits of a word: bit `i` to `2i`.
fn spread(x: u32) -> u64 {
    let mut x = u64::from(x);
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & 0x5555_5555_5555_5555
}

/// Checks that the state of a two-bit search of `legal` positions at a
/// layer boundary (`found`, `done`, `codes`, `expanded`, as in
/// [`TwoBitResume`]) is consistent: the right number of words; the padding
/// codes beyond `legal` unseen; per residue mod 3, as many positions as the
/// layers of that residue count; and the expanded bits set on exactly the
/// layers [`expanded_layers`] gives, per residue, and on no unseen position.
///
/// # Errors
///
/// What is wrong, to follow the name of the file.
pub fn check_two_bit(
    found: &[u64],
    done: bool,
    legal: u64,
    codes: &[u64],
    expanded: &[u64],
) -> std::result::Result<(), String> {
    if codes.len() as u64 != code_words(legal) || expanded.len() as u64 != expanded_words(legal) {
        return Err(format!(
            "has {} code and {} expanded words, not {} and {}",
            codes.len(),
            expanded.len(),
            code_words(legal),
            expanded_words(legal)
        ));
    }
    if found.first() != Some(&1) || found.contains(&0) {
        return Err("counts an empty layer or more than one goal".into());
    }
    match found.iter().try_fold(0u64, |a, &b| a.checked_add(b)) {
        Some(total) if total <= legal => {}
        _ => return Err(format!("counts more positions than the {legal} legal ones")),
    }
    if !legal.is_multiple_of(32)
        && let Some(&last) = codes.last()
        && last | (u64::MAX >> (64 - 2 * (legal % 32))) != u64::MAX
    {
        return Err("has reached positions beyond the legal ones".into());
    }
    // [codes with residue r, expanded positions with residue r], r = 3: unseen.
    const M: u64 = 0x5555_5555_5555_5555;
    let counted = expanded
        .par_iter()
        .enumerate()
        .with_min_len(1 << 12)
        .fold(
            || [[0u64; 4]; 2],
            |mut n, (w, &e)| {
                for half in 0..2 {
                    let c = codes.get(2 * w + half).copied().unwrap_or(u64::MAX);
                    let s = spread((e >> (32 * half)) as u32);
                    let (lo, hi) = (c & M, c >> 1 & M);
                    // Unseen positions are the rest of the 32, and none
                    // may be expanded: fewer popcounts, which the default
                    // x86-64 target does in software.
                    let masks = [!hi & !lo & M, !hi & lo, hi & !lo & M];
                    let mut seen = 0;
                    for (r, m) in masks.into_iter().enumerate() {
                        let count = u64::from(m.count_ones());
                        seen += count;
                        n[0][r] += count;
                        n[1][r] += u64::from((m & s).count_ones());
                    }
                    n[0][3] += 32 - seen;
                    n[1][3] += u64::from(hi & lo & s != 0);
                }
                n
            },
        )
        .reduce(
            || [[0u64; 4]; 2],
            |mut a, b| {
                for (x, y) in a.iter_mut().flatten().zip(b.iter().flatten()) {
                    *x += y;
                }
                a
            },
        );
    let expanded_upto = expanded_layers(found.len(), done);
    let mut want = [[0u64; 4]; 2];
    for (d, &n) in found.iter().enumerate() {
        want[0][d % 3] += n;
        if d < expanded_upto {
            want[1][d % 3] += n;
        }
    }
    want[0][3] = 64 * expanded.len() as u64 - want[0][..3].iter().sum::<u64>();
    if counted[0] != want[0] {
        return Err("holds other layers than its header counts".into());
    }
    if counted[1] != want[1] {
        return Err(format!(
            "has other positions expanded than layers 0 to {} of {}",
            expanded_upto as i64 - 1,
            found.len()
        ));
    }
    Ok(())
}

/// Reads `n` little-endian words from `reader` into a vector of exactly
/// that many, through a buffer of a MiB.
fn read_words(reader: &mut impl Read, n: usize) -> std::io::Result<Vec<u64>> {
    let mut words = vec![0u64; n];
    let mut buffer = vec![0u8; 8 * MIB_WORDS];
    for chunk in words.chunks_mut(MIB_WORDS) {
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
    let mut buffer = Vec::with_capacity(8 * MIB_WORDS);
    for chunk in words.chunks(MIB_WORDS) {
        buffer.clear();
        buffer.extend(chunk.iter().flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes()));
        out.write_all(&buffer)?;
    }
    Ok(())
}

/// Saves and finds the checkpoints of one solve: the
/// [`Checkpoints`] a [`Plan::solve_with`](crate::solver::Plan::solve_with)
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
                note(&format!("--restart: removed the checkpoint {}", file.display()));
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
    ) -> std::result::Result<(Header, u64, u64, BufReader<fs::File>), String> {
        let io = |e: std::io::Error| format!("cannot be read ({e})");
        let opened =
            files::open_regular(file, fs::OpenOptions::new().read(true), Links::Refuse).map_err(|e| match e {
                OpenError::NotRegular(kind) => format!("is {kind}, not a checkpoint"),
                OpenError::Io(e) => io(e),
            })?;
        let size = opened.metadata().map_err(io)?.len();
        let mut reader = BufReader::new(opened);
        let mut magic = vec![0u8; MAGIC.len()];
        reader
            .read_exact(&mut magic)
            .map_err(|_| "is not a checkpoint".to_owned())?;
        if magic != MAGIC {
            return Err("is not a checkpoint".into());
        }
        let mut line = Vec::new();
        (&mut reader).take(1 << 20).read_until(b'\n', &mut line).map_err(io)?;
        let header: Header = serde_json::from_slice(&line).map_err(|e| format!("has an unreadable header ({e})"))?;
        let expect = |what: &str, found: String, want: String| {
            if found == want {
                Ok(())
            } else {
                Err(format!("is for {what} {found}, not {want}"))
            }
        };
        expect("format", header.format.to_string(), FORMAT.to_string())?;
        expect("variant", header.variant.clone(), self.variant.name().to_owned())?;
        expect("start", header.start.clone(), self.start.clone())?;
        expect("class", header.class.to_string(), class.index().to_string())?;
        expect("method", header.method.clone(), method.to_owned())?;
        expect("legal positions", header.length.to_string(), legal.to_string())?;
        Ok((header, (MAGIC.len() + line.len()) as u64, size, reader))
    }

    /// Reads and checks the checkpoint of `class`: its header, its table,
    /// or what is wrong with it.
    fn read(&self, file: &Path, class: Class, legal: u64) -> std::result::Result<(Header, Vec<u8>), String> {
        let io = |e: std::io::Error| format!("cannot be read ({e})");
        let (header, head, size, mut reader) = self.open(file, class, legal, "tight")?;
        if size != head + legal {
            return Err(format!("is {size} bytes long, not the header and {legal} cells"));
        }
        if header.found.is_empty() || header.found.len() > usize::from(Cell::MAX_REMOTENESS) + 1 {
            return Err(format!("has {} layers", header.found.len()));
        }
        let mut cells = vec![0u8; legal as usize];
        reader.read_exact(&mut cells).map_err(io)?;
        if format!("{:016x}", checksum(&cells)) != header.checksum {
            return Err("fails its checksum".into());
        }
        // The table must hold exactly the layers the header counts.
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
        let consistent = histogram[..layers] == header.found[..]
            && histogram[layers..]
                .iter()
                .enumerate()
                .all(|(i, &n)| n == 0 || i + layers == unseen);
        if !consistent {
            return Err("holds other layers than its header counts".into());
        }
        Ok((header, cells))
    }

    /// Reads and checks the two-bit checkpoint of `class`: its header, its
    /// codes and expanded words, or what is wrong with it.
    fn read_two_bit(
        &self,
        file: &Path,
        class: Class,
        legal: u64,
    ) -> std::result::Result<(Header, Vec<u64>, Vec<u64>), String> {
        let io = |e: std::io::Error| format!("cannot be read ({e})");
        let (header, head, size, mut reader) = self.open(file, class, legal, "two-bit")?;
        let (codes, expanded) = (code_words(legal), expanded_words(legal));
        if size != head + 8 * (codes + expanded) {
            return Err(format!(
                "is {size} bytes long, not the header and {} words",
                codes + expanded
            ));
        }
        if header.found.is_empty() || header.found.len() > usize::from(u16::MAX) + 1 {
            return Err(format!("has {} layers", header.found.len()));
        }
        let codes = read_words(&mut reader, codes as usize).map_err(io)?;
        let expanded = read_words(&mut reader, expanded as usize).map_err(io)?;
        if format!("{:016x}", word_checksum(&[&codes, &expanded])) != header.checksum {
            return Err("fails its checksum".into());
        }
        check_two_bit(&header.found, header.done, legal, &codes, &expanded)?;
        Ok((header, codes, expanded))
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
        let file = path(&self.dir, self.variant.name(), class);
        let tmp = self.dir.join(format!(
            ".{}.{}.checkpoint.tmp-{}",
            self.variant.name(),
            class.name(),
            std::process::id()
        ));
        let mut head = MAGIC.to_vec();
        serde_json::to_writer(&mut head, header).expect("a header serialises");
        head.push(b'\n');
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
                OpenError::NotRegular(kind) => std::io::Error::other(format!("{} is {kind}", tmp.display())),
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

    /// Writes the checkpoint of `boundary` atomically.
    fn write(&mut self, boundary: &Boundary<'_>) -> Result<PathBuf> {
        // SAFETY: AtomicU8 has the same size, alignment and bit validity as
        // u8, and at a layer boundary no thread writes the table, so reading
        // it as plain bytes while this borrow lives is sound.
        let cells: &[u8] =
            unsafe { std::slice::from_raw_parts(boundary.cells.as_ptr().cast::<u8>(), boundary.cells.len()) };
        let header = self.header(
            boundary.class,
            "tight",
            cells.len() as u64,
            boundary.found,
            boundary.done,
            checksum(cells),
        );
        self.save(boundary.class, &header, cells.len() as u64, |out| out.write_all(cells))
    }

    /// Writes the two-bit checkpoint of `boundary` atomically, straight from
    /// its words.
    fn write_two_bit(&mut self, boundary: &TwoBitBoundary<'_>) -> Result<PathBuf> {
        let header = self.header(
            boundary.class,
            "two-bit",
            boundary.legal,
            boundary.found,
            boundary.done,
            atomic_checksum(&[boundary.codes, boundary.expanded]),
        );
        let payload = 8 * (boundary.codes.len() + boundary.expanded.len()) as u64;
        self.save(boundary.class, &header, payload, |out| {
            write_words(out, boundary.codes)?;
            write_words(out, boundary.expanded)
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
            file.display(),
            if header.done {
                " (the class's search is over)"
            } else {
                ""
            },
        ));
    }

    /// Tells the user that the checkpoint `file` is ignored for `problem`.
    fn note_ignored(&mut self, file: &Path, class: Class, problem: &str) {
        (self.note)(&format!(
            "checkpoint {} {problem}; ignoring it and searching class {} from the start",
            file.display(),
            class.name()
        ));
    }

    /// At the boundary of `class` where `found` counts the complete layers:
    /// saves by `write` when the interval has passed or the test hook asks,
    /// and then stops for the hook.
    fn boundary(
        &mut self,
        class: Class,
        found: &[u64],
        done: bool,
        write: impl FnOnce(&mut Self) -> Result<PathBuf>,
    ) -> Result<()> {
        let depth = u16::try_from(found.len().saturating_sub(1)).unwrap_or(u16::MAX);
        let stop = !done
            && self
                .options
                .stop_after
                .is_some_and(|(c, layer)| layer == depth && c.is_none_or(|c| c == class));
        if stop || self.last.elapsed() >= self.options.interval {
            let file = write(self)?;
            self.last = Instant::now();
            if stop {
                return Err(Error::Stopped(format!(
                    "stopped after layer {depth} of {} class {}, as BISHOPS_STOP_AFTER_LAYER asks; the checkpoint {} holds the search",
                    self.variant.name(),
                    class.name(),
                    file.display()
                )));
            }
        }
        Ok(())
    }

    /// The checkpoint of `class` to look at for a resume, if any.
    fn existing(&self, class: Class) -> Option<PathBuf> {
        if self.options.restart {
            return None;
        }
        let file = path(&self.dir, self.variant.name(), class);
        file.exists().then_some(file)
    }
}

impl Checkpoints for Checkpointer<'_> {
    fn resume(&mut self, class: Class, legal: u64) -> Option<Resume> {
        let file = self.existing(class)?;
        match self.read(&file, class, legal) {
            Ok((header, cells)) => {
                self.note_resume(&file, class, &header);
                Some(Resume {
                    found: header.found,
                    done: header.done,
                    cells,
                })
            }
            Err(problem) => {
                self.note_ignored(&file, class, &problem);
                None
            }
        }
    }

    fn layer(&mut self, boundary: Boundary<'_>) -> Result<()> {
        self.boundary(boundary.class, boundary.found, boundary.done, |me| me.write(&boundary))
    }

    fn resume_two_bit(&mut self, class: Class, legal: u64) -> Option<TwoBitResume> {
        let file = self.existing(class)?;
        match self.read_two_bit(&file, class, legal) {
            Ok((header, codes, expanded)) => {
                self.note_resume(&file, class, &header);
                Some(TwoBitResume {
                    found: header.found,
                    done: header.done,
                    codes,
                    expanded,
                })
            }
            Err(problem) => {
                self.note_ignored(&file, class, &problem);
                None
            }
        }
    }

    fn two_bit_layer(&mut self, boundary: TwoBitBoundary<'_>) -> Result<()> {
        self.boundary(boundary.class, boundary.found, boundary.done, |me| {
            me.write_two_bit(&boundary)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::twobit;
    use crate::tight::TightIndex;

    /// Keeps a copy of the state at every two-bit boundary.
    #[derive(Default)]
    struct Recorder(Vec<TwoBitResume>);

    impl Checkpoints for Recorder {
        fn resume(&mut self, _: Class, _: u64) -> Option<Resume> {
            None
        }

        fn layer(&mut self, _: Boundary<'_>) -> Result<()> {
            Ok(())
        }

        fn two_bit_layer(&mut self, b: TwoBitBoundary<'_>) -> Result<()> {
            let load = |w: &[AtomicU64]| w.iter().map(|w| w.load(Ordering::Relaxed)).collect();
            self.0.push(TwoBitResume {
                found: b.found.to_vec(),
                done: b.done,
                codes: load(b.codes),
                expanded: load(b.expanded),
            });
            Ok(())
        }
    }

    /// The boundaries of the two-bit search of class 0 of `name`, and its
    /// legal positions.
    fn boundaries(name: &str) -> (Vec<TwoBitResume>, u64) {
        let variant = Variant::named(name).unwrap();
        let spec = &variant.classes()[0];
        let index = TightIndex::new(&spec.geometry, spec.counts().0, spec.counts().1);
        let mut recorder = Recorder::default();
        twobit::search_with(name, spec, &index, &mut recorder, &mut |_| {}).unwrap();
        (recorder.0, index.len())
    }

    #[test]
    fn every_two_bit_boundary_is_consistent() {
        for name in ["5x4", "7x4", "7x5-full"] {
            let (all, legal) = boundaries(name);
            assert!(all.len() > 3, "{name}");
            assert!(all.last().unwrap().done && all[..all.len() - 1].iter().all(|b| !b.done));
            for b in &all {
                // The invariant in numbers: the expanded bits count exactly
                // the layers expanded_layers gives.
                let set: u64 = b.expanded.iter().map(|w| u64::from(w.count_ones())).sum();
                let want: u64 = b.found[..expanded_layers(b.found.len(), b.done)].iter().sum();
                assert_eq!(set, want, "{name} at {} layers", b.found.len());
                assert_eq!(
                    check_two_bit(&b.found, b.done, legal, &b.codes, &b.expanded),
                    Ok(()),
                    "{name} at {} layers",
                    b.found.len()
                );
            }
        }
    }

    #[test]
    fn inconsistent_two_bit_states_are_refused() {
        let (all, legal) = boundaries("7x4");
        let b = &all[all.len() / 2];
        let check = |found: &[u64], done: bool, codes: &[u64], expanded: &[u64]| {
            check_two_bit(found, done, legal, codes, expanded)
        };
        assert_eq!(check(&b.found, b.done, &b.codes, &b.expanded), Ok(()));
        // The same state claimed finished has a layer too few expanded.
        assert!(check(&b.found, true, &b.codes, &b.expanded).is_err());
        // A layer more or less, a count off by one.
        assert!(check(&b.found[..b.found.len() - 1], b.done, &b.codes, &b.expanded).is_err());
        let mut found = b.found.clone();
        *found.last_mut().unwrap() += 1;
        assert!(check(&found, b.done, &b.codes, &b.expanded).is_err());
        assert!(check(&[], false, &b.codes, &b.expanded).is_err());
        // A reached position forgotten; an unreached one expanded.
        let mut codes = b.codes.clone();
        let i = (0..legal)
            .find(|&i| codes[(i / 32) as usize] >> (2 * (i % 32)) & 3 != 3)
            .unwrap();
        codes[(i / 32) as usize] |= 3 << (2 * (i % 32));
        assert!(check(&b.found, b.done, &codes, &b.expanded).is_err());
        let mut expanded = b.expanded.clone();
        let j = (0..legal)
            .find(|&i| b.codes[(i / 32) as usize] >> (2 * (i % 32)) & 3 == 3)
            .unwrap();
        expanded[(j / 64) as usize] |= 1 << (j % 64);
        assert!(check(&b.found, b.done, &b.codes, &expanded).is_err());
        // A frontier position marked expanded.
        let mut expanded = b.expanded.clone();
        let last = ((b.found.len() - 1) % 3) as u64;
        let k = (0..legal)
            .find(|&i| {
                b.codes[(i / 32) as usize] >> (2 * (i % 32)) & 3 == last
                    && b.expanded[(i / 64) as usize] >> (i % 64) & 1 == 0
            })
            .unwrap();
        expanded[(k / 64) as usize] |= 1 << (k % 64);
        assert!(check(&b.found, b.done, &b.codes, &expanded).is_err());
        // Padding that is not unseen, and the wrong number of words.
        if !legal.is_multiple_of(32) {
            let mut codes = b.codes.clone();
            *codes.last_mut().unwrap() &= !(3 << 62);
            assert!(check(&b.found, b.done, &codes, &b.expanded).is_err());
        }
        assert!(check(&b.found, b.done, &b.codes[1..], &b.expanded).is_err());
        assert!(check(&b.found, b.done, &b.codes, &[]).is_err());
    }

    #[test]
    fn word_checksum_sees_every_word_and_the_split() {
        let words: Vec<u64> = (0..300_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let sum = word_checksum(&[&words[..1000], &words[1000..]]);
        let mut other = words.clone();
        other[250_000] ^= 1 << 17;
        assert_ne!(sum, word_checksum(&[&other[..1000], &other[1000..]]));
        assert_ne!(sum, word_checksum(&[&words[..999], &words[999..]]));
        let atomics: Vec<AtomicU64> = words.iter().map(|&w| AtomicU64::new(w)).collect();
        assert_eq!(sum, atomic_checksum(&[&atomics[..1000], &atomics[1000..]]));
        assert_eq!(spread(0b1011), 0b0100_0101);
        assert_eq!(spread(u32::MAX), 0x5555_5555_5555_5555);
    }
}
