//! A class's table kept at one entry an orbit: [`fold`] keeps the entry of
//! each orbit's canonical position in the order of the [`OrbitIndex`], and
//! [`Folded`] answers for every position of the class from it, so that the
//! exact values and the database are worked out from half the table.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use xxhash_rust::xxh3::xxh3_64;

use rayon::prelude::*;

use super::file::Mod3File;
use super::{Mod3Table, PER_WORD, Residues, UNSEEN, code_words};
use crate::bitboard::{Bitboard, Word};
use crate::error::{Error, Result};
use crate::index::{binomial, colex_rank, colex_unrank, rank_within};
use crate::orbits::{OrbitIndex, subsets_below};

/// The most bishops of one colour a fold walks: a standard start's five,
/// with room to spare.
const MAX_BISHOPS: usize = 16;

/// The `b` places, lowest first, of the combination of colex rank `rank`.
fn places(rank: u64, b: usize) -> [u32; MAX_BISHOPS] {
    let mut at = [0u32; MAX_BISHOPS];
    for (k, cell) in colex_unrank::<u128>(rank, b as u32).iter().enumerate() {
        at[k] = u32::from(cell);
    }
    at
}

/// Moves `at`, the places of a combination among `n`, lowest first, to
/// its colex successor: the lowest place that can move up does, and those
/// below it start over at the bottom. `false` after the last.
fn colex_next(at: &mut [u32], n: u32) -> bool {
    let b = at.len();
    let mut k = 0;
    while k < b && at[k] + 1 == if k + 1 < b { at[k + 1] } else { n } {
        k += 1;
    }
    if k == b {
        return false;
    }
    at[k] += 1;
    for (j, a) in at[..k].iter_mut().enumerate() {
        *a = j as u32;
    }
    true
}

/// The codes of the orbits of block `r`, in the orbit index's order, read
/// from `table`, the class's table in the tight index's order: for each
/// canonical position of the block, its code.
///
/// The images `C = g(B)` of the canonical black sets are the subsets of
/// `g(safe)` from rank `skip` on, walked in colex order a successor at a
/// time; each gives `B = g(C)` and its rank among the subsets of `safe`,
/// from the places in `safe` of the cells of `C`'s image.
fn block_codes<R: Residues + ?Sized, W: Word>(table: &R, orbits: &OrbitIndex<W>, r: u64) -> Vec<u8> {
    let tight = orbits.tight();
    let (block, wanted) = (tight.block(r), orbits.block(r));
    if wanted.is_empty() {
        return Vec::new();
    }
    let first = block.start / PER_WORD;
    let words = table.words(first..block.end.div_ceil(PER_WORD));
    let code = |i: u64| {
        let at = i - first * PER_WORD;
        (words[(at / PER_WORD) as usize] >> (2 * (at % PER_WORD))) as u8 & 3
    };
    let (symmetry, safe) = (orbits.symmetry(), tight.safe(r));
    let mapped = orbits.mapped_safe(r);
    // place[k]: where the image of the k-th cell of `mapped` stands among
    // the cells of `safe`.
    let place: Vec<u32> = mapped
        .iter()
        .map(|cell| (safe & Bitboard::below(symmetry.cell(cell))).count())
        .collect();
    let b = tight.black() as usize;
    assert!(b <= MAX_BISHOPS, "{b} bishops of a colour");
    let total = binomial(mapped.count(), b as u32);
    let skip = total - (wanted.end - wanted.start);
    // The combination of rank `skip` among the cells of `mapped`, as places.
    let mut at = places(skip, b);
    let n = place.len() as u32;
    let mut codes = Vec::with_capacity((wanted.end - wanted.start) as usize);
    for _ in skip..total {
        let mut own = [0u32; MAX_BISHOPS];
        for k in 0..b {
            own[k] = place[at[k] as usize];
        }
        own[..b].sort_unstable();
        let rank: u64 = own[..b]
            .iter()
            .enumerate()
            .map(|(k, &p)| binomial(p, k as u32 + 1))
            .sum();
        codes.push(code(block.start + rank));
        if !colex_next(&mut at[..b], n) {
            break;
        }
    }
    debug_assert_eq!(codes.len() as u64, wanted.end - wanted.start);
    codes
}

/// Blocks folded at once: enough to keep both cores busy, few enough that
/// their codes are a small share of the table.
const BATCH: u64 = 4096;

/// The table of `table`'s orbits: entry `o` holds the code of the canonical
/// position of orbit `o` of `orbits` (`table` holds the class in the order
/// of `orbits.tight()`). The codes of the other positions are their
/// images', which the search set with them.
///
/// # Panics
///
/// When `table` does not hold one code per position of the tight index.
pub fn fold<R: Residues + ?Sized, W: Word>(table: &R, orbits: &OrbitIndex<W>) -> Mod3Table {
    let tight = orbits.tight();
    assert_eq!(table.len(), tight.len(), "a code per position");
    let mut folded = Mod3Table::new(orbits.len());
    let mut next = 0u64;
    let blocks = tight.white_sets();
    for start in (0..blocks).step_by(BATCH as usize) {
        let end = (start + BATCH).min(blocks);
        let codes: Vec<Vec<u8>> = (start as usize..end as usize)
            .into_par_iter()
            .map(|r| block_codes(table, orbits, r as u64))
            .collect();
        for code in codes.into_iter().flatten() {
            folded.set(next, (code != UNSEEN).then_some(code));
            next += 1;
        }
    }
    debug_assert_eq!(next, orbits.len());
    folded
}

/// Where a fold of a table's file into the file of its orbits stands
/// ([`fold_file`]): written before the fold starts and again at every
/// step, so that a fold that stops goes on from its last step, whatever of
/// the table's file it has given back to the file system. It keeps the
/// seals of the table's file, which is read without its checkpoint from
/// then on, and a note of the caller's (what the search found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldProgress {
    /// Blocks of the orbit index whose codes the orbits' file holds.
    blocks: u64,
    /// Segments of the table's file given back to the file system.
    released: u64,
    /// The seal (XXH3-64) of each whole segment of the orbits' file.
    seals: Vec<u64>,
    /// Words of the orbits' file past its whole segments, and the XXH3-64
    /// of their bytes.
    partial: (u64, u64),
    /// The codes past the last whole word, in the word they are filling.
    tail: u64,
    /// The seal of each segment of the table's file (`None`: never
    /// written).
    source: Vec<Option<u64>>,
    /// The caller's note.
    note: Vec<u8>,
}

/// The first bytes of a fold's record.
const PROGRESS_MAGIC: &[u8; 16] = b"bishops fold 2\n\0";

/// The longest note a fold's record keeps.
pub const MAX_NOTE: usize = 64 << 10;

/// Words of a record's head: blocks, released, seals, the partial
/// segment's words and hash, tail, source seals, note bytes.
const HEAD_WORDS: usize = 8;

impl FoldProgress {
    /// The record of a fold of `source` that has not started, with `note`.
    ///
    /// # Panics
    ///
    /// When the note is longer than [`MAX_NOTE`].
    pub fn start(source: &Mod3File, note: Vec<u8>) -> FoldProgress {
        assert!(note.len() <= MAX_NOTE, "a note of {} bytes", note.len());
        FoldProgress {
            blocks: 0,
            released: 0,
            seals: Vec::new(),
            partial: (0, xxh3_64(&[])),
            tail: u64::MAX,
            source: source.seals().0.to_vec(),
            note,
        }
    }

    /// The segments of the table's file that were given back: what the
    /// table's file is opened without (`Mod3File::open_released`).
    pub fn released(&self) -> u64 {
        self.released
    }

    /// The seals of the table's file's segments, as the search left them.
    pub fn source_seals(&self) -> &[Option<u64>] {
        &self.source
    }

    /// The caller's note.
    pub fn note(&self) -> &[u8] {
        &self.note
    }

    /// Whether every block is folded.
    pub fn is_done<W: Word>(&self, orbits: &OrbitIndex<W>) -> bool {
        self.blocks == orbits.tight().white_sets()
    }

    /// Whether nothing is folded yet.
    fn is_fresh(&self) -> bool {
        self.blocks == 0 && self.seals.is_empty() && self.partial.0 == 0
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = PROGRESS_MAGIC.to_vec();
        let head = [
            self.blocks,
            self.released,
            self.seals.len() as u64,
            self.partial.0,
            self.partial.1,
            self.tail,
            self.source.len() as u64,
            self.note.len() as u64,
        ];
        let source = self
            .source
            .iter()
            .flat_map(|s| [u64::from(s.is_some()), s.unwrap_or(0)]);
        for word in head.into_iter().chain(self.seals.iter().copied()).chain(source) {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        bytes.extend_from_slice(&self.note);
        bytes.resize(bytes.len().next_multiple_of(8), 0);
        let check = xxh3_64(&bytes);
        bytes.extend_from_slice(&check.to_le_bytes());
        bytes
    }

    /// The record at `path` of a fold by `orbits` into segments of
    /// `segment_words`: `None` when there is none, refused when it is not
    /// one such a fold could have written.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be read or is not such a record.
    pub fn read<W: Word>(path: &Path, orbits: &OrbitIndex<W>, segment_words: usize) -> Result<Option<FoldProgress>> {
        let refused = |why: String| Error::Io(path.to_path_buf(), std::io::Error::new(ErrorKind::InvalidData, why));
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::Io(path.to_path_buf(), e)),
        };
        let tight = orbits.tight();
        let segments = code_words(orbits.len()).div_ceil(segment_words as u64);
        let sources = code_words(tight.len()).div_ceil(segment_words as u64);
        // Bounded before it is read: the head, a seal a segment of each
        // file, the note, the check.
        let most = (PROGRESS_MAGIC.len() + 8 * (HEAD_WORDS + 1) + MAX_NOTE) as u64 + 8 * (segments + 2 * sources);
        let mut bytes = Vec::new();
        file.take(most + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::Io(path.to_path_buf(), e))?;
        if bytes.len() as u64 > most
            || bytes.len() < PROGRESS_MAGIC.len() + 8 * (HEAD_WORDS + 1)
            || !bytes.len().is_multiple_of(8)
        {
            return Err(refused(format!("a fold's record of {} bytes is not one", bytes.len())));
        }
        let (body, check) = bytes.split_at(bytes.len() - 8);
        if !body.starts_with(PROGRESS_MAGIC) || xxh3_64(body).to_le_bytes() != check {
            return Err(refused(
                "is not a fold's record, or was changed after it was written".into(),
            ));
        }
        let body = &body[PROGRESS_MAGIC.len()..];
        let word = |k: usize| u64::from_le_bytes(body[8 * k..8 * k + 8].try_into().expect("8 bytes"));
        let head: Vec<u64> = (0..HEAD_WORDS).map(word).collect();
        let [blocks, released, seals, partial_words, partial_hash, tail, source, note] = head[..] else {
            unreachable!("the length was checked")
        };
        if seals > segments || source != sources || note > MAX_NOTE as u64 {
            return Err(refused("is a fold's record of another table".into()));
        }
        let (seals, source, note) = (seals as usize, source as usize, note as usize);
        let at = HEAD_WORDS + seals + 2 * source;
        if body.len() != (8 * at + note).next_multiple_of(8) {
            return Err(refused(format!("a fold's record of {} bytes is not one", bytes.len())));
        }
        let progress = FoldProgress {
            blocks,
            released,
            seals: (HEAD_WORDS..HEAD_WORDS + seals).map(word).collect(),
            partial: (partial_words, partial_hash),
            tail,
            source: (0..source)
                .map(|k| {
                    let at = HEAD_WORDS + seals + 2 * k;
                    (word(at) != 0).then(|| word(at + 1))
                })
                .collect(),
            note: body[8 * at..8 * at + note].to_vec(),
        };
        // What the numbers must say of each other, for this index.
        let (codes, first) = folded_before(orbits, blocks.min(tight.white_sets()));
        let fits = blocks <= tight.white_sets()
            && partial_words < segment_words as u64
            && codes / PER_WORD == seals as u64 * segment_words as u64 + partial_words
            && released * segment_words as u64 * PER_WORD <= first;
        if !fits {
            return Err(refused("is a fold's record of another table".into()));
        }
        Ok(Some(progress))
    }

    /// Writes the record to `path` in one step: a new file, synced, then
    /// renamed over the last one.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be written.
    pub fn write(&self, path: &Path) -> Result<()> {
        let io = |e| Error::Io(path.to_path_buf(), e);
        let mut fresh = path.as_os_str().to_owned();
        fresh.push(".new");
        let fresh = std::path::PathBuf::from(fresh);
        let mut file = File::create(&fresh).map_err(io)?;
        file.write_all(&self.to_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&fresh, path).map_err(io)?;
        crate::files::sync_dir(path.parent().unwrap_or(Path::new(".")));
        Ok(())
    }
}

/// The codes a fold has written and the first position of the table it
/// has yet to read, once it has folded `blocks` blocks.
fn folded_before<W: Word>(orbits: &OrbitIndex<W>, blocks: u64) -> (u64, u64) {
    let tight = orbits.tight();
    if blocks == tight.white_sets() {
        (orbits.len(), tight.len())
    } else {
        (orbits.block(blocks).start, tight.block(blocks).start)
    }
}

/// The orbits' file as a fold writes it: whole segments sealed as they
/// fill, the one filling kept in memory.
struct Writer<'a> {
    file: &'a File,
    path: &'a Path,
    segment_words: usize,
    seals: Vec<u64>,
    segment: Vec<u64>,
    tail: u64,
    /// Codes in `tail`.
    filled: u32,
}

impl Writer<'_> {
    fn push(&mut self, code: u8) -> Result<()> {
        let shift = 2 * self.filled;
        self.tail = self.tail & !(3 << shift) | u64::from(code) << shift;
        self.filled += 1;
        if u64::from(self.filled) == PER_WORD {
            self.segment.push(self.tail);
            (self.tail, self.filled) = (u64::MAX, 0);
            if self.segment.len() == self.segment_words {
                let bytes = self.flush()?;
                self.seals.push(xxh3_64(&bytes));
                self.segment.clear();
            }
        }
        Ok(())
    }

    /// Writes the segment filling, as far as it is filled; its bytes.
    fn flush(&self) -> Result<Vec<u8>> {
        let bytes: Vec<u8> = self.segment.iter().flat_map(|w| w.to_le_bytes()).collect();
        let at = 8 * (self.seals.len() * self.segment_words) as u64;
        self.file
            .write_all_at(&bytes, at)
            .map_err(|e| Error::Io(self.path.to_path_buf(), e))?;
        Ok(bytes)
    }
}

/// Output words between two records of a fold: 256 MiB.
pub const FOLD_STEP_WORDS: u64 = 1 << 25;

/// Folds the class table in `source` (in the order of `orbits.tight()`)
/// into the file `out` of its orbits, in segments of `segment_words`, and
/// returns that file opened as a [`Mod3File`] holding at most `max_bytes`
/// in memory.
///
/// The fold goes on from `progress`: [`FoldProgress::start`], written to
/// `record` before anything is given back, or the record of a fold of the
/// same files that stopped, whose source was opened without the segments
/// it released. It goes block by block. After each `step_words` words of
/// output it syncs what it wrote, records where it stands at `record` and
/// then gives the table's segments it will not read again back to the file
/// system (`Mod3File::release`): the two files together never take much
/// more disk than the table did. `stop` is asked at each record whether to
/// stop there (a test's interruption), and the fold then fails with
/// [`Error::Stopped`].
///
/// # Errors
///
/// [`Error::Io`] when a file cannot be read, written or punched, or the
/// source or the orbits' file is not what was written; [`Error::Stopped`].
#[allow(clippy::too_many_arguments)]
pub fn fold_file<W: Word>(
    source: &Mod3File,
    orbits: &OrbitIndex<W>,
    (out, record): (&Path, &Path),
    segment_words: usize,
    step_words: u64,
    progress: FoldProgress,
    max_bytes: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Result<Mod3File> {
    let tight = orbits.tight();
    assert_eq!(source.len(), tight.len(), "a code per position");
    let io = |e| Error::Io(out.to_path_buf(), e);
    let fresh = progress.is_fresh();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(fresh)
        .truncate(fresh)
        .open(out)
        .map_err(io)?;
    // The segment filling is read back and checked against the record.
    let mut bytes = vec![0u8; 8 * progress.partial.0 as usize];
    let at = 8 * (progress.seals.len() * segment_words) as u64;
    file.read_exact_at(&mut bytes, at).map_err(io)?;
    if xxh3_64(&bytes) != progress.partial.1 {
        return Err(Error::Io(
            out.to_path_buf(),
            std::io::Error::new(
                ErrorKind::InvalidData,
                format!(
                    "bytes {at} to {} are not what the fold wrote before it stopped",
                    at + bytes.len() as u64
                ),
            ),
        ));
    }
    let mut writer = Writer {
        file: &file,
        path: out,
        segment_words,
        seals: progress.seals,
        segment: bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect(),
        tail: progress.tail,
        filled: (folded_before(orbits, progress.blocks).0 % PER_WORD) as u32,
    };
    let (source_seals, note) = (progress.source, progress.note);
    let (mut next, mut released) = (progress.blocks, progress.released);
    // A hole the last run recorded but did not punch.
    source.release(released * segment_words as u64)?;
    let blocks = tight.white_sets();
    let mut since = 0u64;
    while next < blocks {
        // At most BATCH blocks, fewer when they fill a step.
        let (mut low, mut high) = (next + 1, (next + BATCH).min(blocks));
        let goal = folded_before(orbits, next).0 + step_words * PER_WORD;
        while low < high {
            let mid = low + (high - low) / 2;
            if folded_before(orbits, mid).0 >= goal {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        let end = low;
        let codes: Vec<Vec<u8>> = (next as usize..end as usize)
            .into_par_iter()
            .map(|r| block_codes(source, orbits, r as u64))
            .collect();
        source.fault()?;
        for code in codes.iter().flatten() {
            writer.push(*code)?;
        }
        since += codes.iter().map(|c| c.len() as u64).sum::<u64>() / PER_WORD;
        next = end;
        if since >= step_words || next == blocks {
            since = 0;
            let bytes = writer.flush()?;
            file.sync_data().map_err(io)?;
            // Whole segments of the table below the next block's words
            // are read no more.
            let free = folded_before(orbits, next).1 / PER_WORD / segment_words as u64;
            let progress = FoldProgress {
                blocks: next,
                released: free,
                seals: writer.seals.clone(),
                partial: (writer.segment.len() as u64, xxh3_64(&bytes)),
                tail: writer.tail,
                source: source_seals.clone(),
                note: note.clone(),
            };
            progress.write(record)?;
            source.release(free * segment_words as u64)?;
            released = free;
            if stop(next) {
                return Err(Error::Stopped(format!(
                    "the fold stopped after {next} blocks of {blocks}"
                )));
            }
        }
    }
    debug_assert!(released <= code_words(tight.len()).div_ceil(segment_words as u64));
    // The last word and the last segment, whole or not.
    if writer.filled > 0 {
        writer.segment.push(writer.tail);
        (writer.tail, writer.filled) = (u64::MAX, 0);
    }
    let mut seals: Vec<Option<u64>> = writer.seals.iter().copied().map(Some).collect();
    if !writer.segment.is_empty() {
        seals.push(Some(xxh3_64(&writer.flush()?)));
    }
    file.set_len(8 * code_words(orbits.len())).map_err(io)?;
    file.sync_data().map_err(io)?;
    drop(writer);
    Mod3File::open(
        (file, out.to_path_buf()),
        orbits.len(),
        segment_words,
        &seals,
        max_bytes,
        None,
    )
}

/// A class's table answered from the table of its orbits ([`fold`]): the
/// code of a position is its orbit's.
///
/// # Examples
///
/// ```
/// use bishops::mod3::Residues;
/// use bishops::mod3::fold::{Folded, fold};
/// use bishops::mod3::Mod3Table;
/// use bishops::{Board, Class, Geometry, OrbitIndex, Part, Symmetries, TightIndex};
///
/// let geo = Geometry::new(Board::new(5, 4).unwrap(), Class::Even);
/// let goal = Part { white: geo.row(4), black: geo.row(0) };
/// let tight = TightIndex::new(&geo, 2, 2);
/// let group = Symmetries::of(&geo, goal);
/// let orbits = OrbitIndex::new(tight.clone(), &group).unwrap();
/// // A table whose code is a function of the orbit, as a search's is.
/// let mut table = Mod3Table::new(tight.len());
/// for i in 0..tight.len() {
///     table.set(i, Some((orbits.of_tight(i) % 3) as u8));
/// }
/// let half = fold(&table, &orbits);
/// assert_eq!(half.len(), orbits.len());
/// let folded = Folded::new(orbits.clone(), half);
/// assert!((0..tight.len()).all(|i| Residues::get(&folded, i) == table.get(i)));
/// ```
#[derive(Debug)]
pub struct Folded<R, W: Word = u64> {
    orbits: OrbitIndex<W>,
    table: R,
    /// The most positions a band unfolds ([`with_bands`](Self::with_bands)),
    /// 0 for none, and the band unfolded last.
    bands: (u64, RwLock<Option<Band>>),
}

/// A run of whole blocks of a folded table unfolded into memory: positions
/// `start..end` of the tight index, their codes in `words` from word
/// `start / 32` on (atomic, so that the next band is unfolded into the same
/// memory by many threads at once).
#[derive(Debug)]
struct Band {
    start: u64,
    end: u64,
    words: Vec<AtomicU64>,
}

impl Band {
    /// Whether it holds every position of `words` (words of the whole
    /// table, of a table of `len` positions).
    fn serves(&self, words: &Range<u64>, len: u64) -> bool {
        words.start * PER_WORD >= self.start && (words.end * PER_WORD).min(len) <= self.end
    }

    /// Words `words` of the table, which it [`serves`](Self::serves).
    fn words(&self, words: Range<u64>) -> Vec<u64> {
        let first = self.start / PER_WORD;
        self.words[(words.start - first) as usize..(words.end - first) as usize]
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect()
    }

    /// The code of position `i`, which it holds.
    fn code(&self, i: u64) -> u8 {
        let at = i - self.start / PER_WORD * PER_WORD;
        (self.words[(at / PER_WORD) as usize].load(Ordering::Relaxed) >> (2 * (at % PER_WORD))) as u8 & 3
    }
}

impl<R: Residues, W: Word> Folded<R, W> {
    /// The class of `orbits`, answered from `table`, the table of its
    /// orbits.
    ///
    /// # Panics
    ///
    /// When `table` does not hold one code per orbit.
    pub fn new(orbits: OrbitIndex<W>, table: R) -> Folded<R, W> {
        assert_eq!(table.len(), orbits.len(), "a code per orbit");
        Folded {
            orbits,
            table,
            bands: (0, RwLock::new(None)),
        }
    }

    /// The same table, which unfolds a band of at most `bytes` of codes
    /// (four positions a byte) into memory when a run of positions it does
    /// not hold is [prepared](Residues::prepare) for reading.
    ///
    /// Half the positions of a block are not canonical: each one's code is
    /// its image's, in another block, one lookup of the table of orbits
    /// each, anywhere in it. Read that way, a table of orbits larger than
    /// its cache reads a page from the disk for a few positions (11x8
    /// folded at `--max-memory 20` read its table of orbits 380 times over
    /// to write its database). A band is unfolded instead by reading the
    /// table of orbits in order: the canonical positions of its blocks from
    /// their own rows, and the others from the rows of their images, which
    /// in each row form one run (the images' white sets grow along a row,
    /// and a band's white sets are a range of them). A table written in
    /// order then reads the table of orbits about once for each band
    /// before it, and a position no band holds is looked up as before.
    pub fn with_bands(mut self, bytes: u64) -> Folded<R, W> {
        self.bands.0 = bytes.saturating_mul(4);
        self
    }

    /// Unfolds the band that begins with the block of position
    /// `positions.start` and holds `positions` and as many blocks after as
    /// fit, unless the band held already holds them (or no band can).
    fn unfold_band(&self, positions: Range<u64>) {
        let (most, held) = (self.bands.0, &self.bands.1);
        let len = self.len();
        let words = positions.start / PER_WORD..positions.end.div_ceil(PER_WORD).min(len.div_ceil(PER_WORD));
        let read = held.read().unwrap_or_else(|e| e.into_inner());
        if most == 0 || positions.is_empty() || read.as_ref().is_some_and(|band| band.serves(&words, len)) {
            return;
        }
        drop(read);
        // The next band is made in the memory of the one held: never two.
        let spare = held
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map_or_else(Vec::new, |band| band.words);
        let tight = self.orbits.tight();
        // Where block `r` begins, the table's end after the last.
        let begins = |r: u64| {
            if r < tight.white_sets() {
                tight.block(r).start
            } else {
                len
            }
        };
        let first = tight.block_of(words.start * PER_WORD);
        let start = begins(first);
        // Whole blocks, as many as fit, so that it ends past the run.
        let (mut low, mut high) = (first + 1, tight.white_sets());
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            if begins(mid) - start <= most {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        let end_block = low;
        let end = begins(end_block);
        let band = Band {
            start,
            end,
            words: self.unfold(first..end_block, spare),
        };
        let fits = band.serves(&words, len);
        *held.write().unwrap_or_else(|e| e.into_inner()) = fits.then_some(band);
    }

    /// The codes of the positions of blocks `blocks`, as words from word
    /// `start / 32` of their first position on, unfolded from the rows of
    /// the table of orbits: those of the blocks for their canonical
    /// positions, and every row before them for the run of its orbits whose
    /// images lie in the blocks. Made in `spare`'s memory.
    fn unfold(&self, blocks: Range<u64>, mut spare: Vec<AtomicU64>) -> Vec<AtomicU64> {
        let (orbits, tight) = (&self.orbits, self.orbits.tight());
        let b = tight.black() as usize;
        assert!(b <= MAX_BISHOPS, "{b} bishops of a colour");
        let start = tight.block(blocks.start).start;
        let end = if blocks.end == tight.white_sets() {
            tight.len()
        } else {
            tight.block(blocks.end).start
        };
        let first = start / PER_WORD;
        let n = (end.div_ceil(PER_WORD) - first) as usize;
        spare.truncate(n);
        for word in &mut spare {
            *word.get_mut() = u64::MAX;
        }
        spare.resize_with(n, || AtomicU64::new(u64::MAX));
        let out = spare;
        let set = |i: u64, code: u8| {
            if (start..end).contains(&i) {
                let at = i - first * PER_WORD;
                let shift = 2 * (at % PER_WORD);
                // Every code starts as 3 (unseen): clearing bits sets it.
                out[(at / PER_WORD) as usize].fetch_and(!(3 << shift) | u64::from(code) << shift, Ordering::Relaxed);
            }
        };
        let symmetry = orbits.symmetry();
        let lowest = colex_unrank::<W>(blocks.start, tight.black());
        let above = (blocks.end < tight.white_sets()).then(|| colex_unrank::<W>(blocks.end, tight.black()));
        (0..blocks.end as usize)
            .into_par_iter()
            .with_min_len(256)
            .for_each(|x| {
                let x = x as u64;
                let row = orbits.block(x);
                let count = row.end - row.start;
                let mapped = orbits.mapped_safe(x);
                let white = colex_unrank::<W>(x, tight.white());
                let skip = subsets_below(white, mapped);
                // The run of the row whose images' white sets lie in the blocks.
                let images = (
                    subsets_below(lowest, mapped).saturating_sub(skip).min(count),
                    above.map_or(count, |a| subsets_below(a, mapped).saturating_sub(skip).min(count)),
                );
                let own = blocks.contains(&x);
                let (from, to) = if own { (0, count) } else { images };
                if from >= to {
                    return;
                }
                let cells: Vec<Bitboard<W>> = mapped.iter().map(Bitboard::single).collect();
                let back: Vec<Bitboard<W>> = mapped.iter().map(|c| Bitboard::single(symmetry.cell(c))).collect();
                let (safe, image_of_white) = (tight.safe(x), symmetry.cells(white));
                let (o0, o1) = (row.start + from, row.start + to);
                let w0 = o0 / PER_WORD;
                let words = self.table.words(w0..o1.div_ceil(PER_WORD));
                let mut at = places(from + skip, b);
                for k in from..to {
                    let o = row.start + k - w0 * PER_WORD;
                    let code = (words[(o / PER_WORD) as usize] >> (2 * (o % PER_WORD))) as u8 & 3;
                    if own {
                        // The canonical position (white, g(image)).
                        let black = at[..b].iter().fold(Bitboard::EMPTY, |s, &p| s | back[p as usize]);
                        set(tight.block(x).start + rank_within(black, safe), code);
                    }
                    if (images.0..images.1).contains(&k) {
                        // Its image (image, g(white)), unless it is its own.
                        let image = at[..b].iter().fold(Bitboard::EMPTY, |s, &p| s | cells[p as usize]);
                        if image != white {
                            let r = colex_rank(image);
                            set(tight.block(r).start + rank_within(image_of_white, tight.safe(r)), code);
                        }
                    }
                    if !colex_next(&mut at[..b], cells.len() as u32) {
                        break;
                    }
                }
            });
        out
    }

    /// The table of the orbits.
    pub fn orbits_table(&self) -> &R {
        &self.table
    }

    /// The codes of positions `range`, all of block `r`, each given to
    /// `set` with its position, walking the block's black sets in colex
    /// order a successor at a time.
    fn block_into(&self, r: u64, range: Range<u64>, set: &mut dyn FnMut(u64, u8)) {
        let (orbits, tight) = (&self.orbits, self.orbits.tight());
        let block = tight.block(r);
        let b = tight.black() as usize;
        assert!(b <= MAX_BISHOPS, "{b} bishops of a colour");
        let white = colex_unrank::<W>(r, tight.white());
        let symmetry = orbits.symmetry();
        // The image of each safe cell, as a set.
        let images: Vec<Bitboard<W>> = tight
            .safe(r)
            .iter()
            .map(|cell| Bitboard::single(symmetry.cell(cell)))
            .collect();
        let n = images.len() as u32;
        // The codes of the orbits whose canonical position is in this block.
        let own = orbits.block(r);
        let first = own.start / PER_WORD;
        let words = self.table.words(first..own.end.div_ceil(PER_WORD).max(first));
        let mut at = places(range.start - block.start, b);
        for i in range {
            let image = at[..b].iter().fold(Bitboard::EMPTY, |s, &k| s | images[k as usize]);
            let code = if image.0 >= white.0 {
                let o = orbits.in_block(r, white, image) - first * PER_WORD;
                (words[(o / PER_WORD) as usize] >> (2 * (o % PER_WORD))) as u8 & 3
            } else {
                // The image is canonical: white set `image`, black set
                // whose image is `white`.
                let o = orbits.in_block(colex_rank(image), image, white);
                self.table.get(o).unwrap_or(UNSEEN)
            };
            set(i, code);
            if !colex_next(&mut at[..b], n) {
                break;
            }
        }
    }
}

impl<R: Residues, W: Word> Residues for Folded<R, W> {
    fn len(&self) -> u64 {
        self.orbits.tight().len()
    }

    fn get(&self, i: u64) -> Option<u8> {
        assert!(i < self.len(), "position {i} of a table of {}", self.len());
        if self.bands.0 > 0
            && let Some(band) = &*self.bands.1.read().unwrap_or_else(|e| e.into_inner())
            && (band.start..band.end).contains(&i)
        {
            let code = band.code(i);
            return (code != UNSEEN).then_some(code);
        }
        self.table.get(self.orbits.of_tight(i))
    }

    /// Block by block: the positions of a block whose canonical position
    /// is their own read from one run of the fold's words, the others from
    /// their images' blocks.
    fn words(&self, words: Range<u64>) -> Cow<'_, [u64]> {
        let len = self.len();
        assert!(
            words.end <= len.div_ceil(PER_WORD),
            "words {words:?} of a table of {len}"
        );
        if self.bands.0 > 0
            && let Some(band) = &*self.bands.1.read().unwrap_or_else(|e| e.into_inner())
            && band.serves(&words, len)
        {
            return Cow::Owned(band.words(words));
        }
        let mut out = vec![u64::MAX; (words.end - words.start) as usize];
        let (first, end) = (words.start * PER_WORD, (words.end * PER_WORD).min(len));
        let tight = self.orbits.tight();
        let (mut i, mut r) = (first, if first < end { tight.block_of(first) } else { 0 });
        while i < end {
            let to = tight.block(r).end.min(end);
            if i < to {
                self.block_into(r, i..to, &mut |j, code| {
                    let at = j - first;
                    let word = &mut out[(at / PER_WORD) as usize];
                    let shift = 2 * (at % PER_WORD);
                    *word = *word & !(3 << shift) | u64::from(code) << shift;
                });
                i = to;
            }
            r += 1;
        }
        Cow::Owned(out)
    }

    fn prepare(&self, positions: Range<u64>) {
        self.unfold_band(positions);
    }

    fn fault(&self) -> crate::error::Result<()> {
        self.table.fault()
    }
}

/// A class's table that a search on disk left in files: whole, or folded
/// onto its orbits ([`fold_file`]). What exact values and databases are
/// worked out from, either way.
#[derive(Debug)]
// One a class, for the time of a write: their sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum FileTable<W: Word = u64> {
    /// The table's file, a code a position.
    Whole(Mod3File),
    /// The file of its orbits, a code an orbit.
    Folded(Folded<Mod3File, W>),
}

impl<W: Word> FileTable<W> {
    /// Pages read from the files since they were opened.
    pub fn pages_read(&self) -> u64 {
        match self {
            FileTable::Whole(file) => file.pages_read(),
            FileTable::Folded(folded) => folded.orbits_table().pages_read(),
        }
    }

    /// Whether it is folded onto its orbits.
    pub fn is_folded(&self) -> bool {
        matches!(self, FileTable::Folded(_))
    }
}

impl<W: Word> Residues for FileTable<W> {
    fn len(&self) -> u64 {
        match self {
            FileTable::Whole(file) => file.len(),
            FileTable::Folded(folded) => folded.len(),
        }
    }

    fn get(&self, i: u64) -> Option<u8> {
        match self {
            FileTable::Whole(file) => file.get(i),
            FileTable::Folded(folded) => folded.get(i),
        }
    }

    fn words(&self, words: Range<u64>) -> Cow<'_, [u64]> {
        match self {
            FileTable::Whole(file) => file.words(words),
            FileTable::Folded(folded) => folded.words(words),
        }
    }

    fn prepare(&self, positions: Range<u64>) {
        if let FileTable::Folded(folded) = self {
            folded.prepare(positions);
        }
    }

    fn fault(&self) -> Result<()> {
        match self {
            FileTable::Whole(file) => file.fault(),
            FileTable::Folded(folded) => folded.fault(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::{ClassTable, Method, Plan};
    use crate::symmetry::Symmetries;
    use crate::variant::Variant;

    /// The two-bit search's table of a class whose symmetry exchanges the
    /// colours, folded and answered back: every position's code and every
    /// word are the full table's, and so is the packing of any range.
    #[test]
    fn a_folded_search_table_answers_as_the_whole_one() {
        for name in ["7x6", "9x6"] {
            let variant = Variant::named(name).unwrap();
            let spec = &variant.classes()[0];
            let group = Symmetries::of(&spec.geometry, spec.goal);
            let solution = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
            let class = &solution.classes[0];
            let (tight, table) = (&class.index, class.own().expect("the a1 class is searched"));
            let orbits = OrbitIndex::new(tight.clone(), &group).expect("one symmetry, colours exchanged");
            let half = fold(table, &orbits);
            assert_eq!(half.len(), orbits.len());
            assert!(
                half.len() < tight.len() * 51 / 100,
                "{name}: {} of {}",
                half.len(),
                tight.len()
            );
            let folded = Folded::new(orbits, half);
            for i in 0..tight.len() {
                assert_eq!(Residues::get(&folded, i), table.get(i), "{name} position {i}");
            }
            let words = table.len().div_ceil(PER_WORD);
            assert_eq!(&*folded.words(0..words), &*Residues::words(table, 0..words));
            let mid = tight.len() / 3;
            assert_eq!(folded.pack_range(mid..mid + 77), table.pack_range(mid..mid + 77));
            // Runs of words that start and end inside blocks.
            for (start, n) in [(1, 1), (7, 3), (words / 2, 40), (words - 5, 5), (words / 3 + 1, 1)] {
                assert_eq!(
                    &*folded.words(start..start + n),
                    &*Residues::words(table, start..start + n),
                    "{name} words {start}.."
                );
            }
        }
    }

    /// A folded table that unfolds bands answers as the whole table: each
    /// band holds exactly the whole table's codes over its blocks, every
    /// run of a window prepared is answered from the band, and a position
    /// outside it as before. Bands of a fifth of the table, a seventh, and
    /// of less than a window (none is then held).
    #[test]
    fn a_folded_table_unfolded_a_band_at_a_time_answers_as_the_whole_one() {
        for name in ["7x6", "9x6"] {
            let variant = Variant::named(name).unwrap();
            let spec = &variant.classes()[0];
            let group = Symmetries::of(&spec.geometry, spec.goal);
            let solution = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
            let class = &solution.classes[0];
            let (tight, table) = (&class.index, class.own().expect("the a1 class is searched"));
            let orbits = OrbitIndex::new(tight.clone(), &group).expect("one symmetry, colours exchanged");
            let half = fold(table, &orbits);
            let len = tight.len();
            for parts in [5, 7, len / 64] {
                let folded = Folded::new(orbits.clone(), half.clone()).with_bands(len / 4 / parts);
                let mut starts = Vec::new();
                let mut r = 0;
                while r < tight.white_sets() {
                    // Windows of a few blocks, in order.
                    let end = (r + 37).min(tight.white_sets());
                    let last = if end < tight.white_sets() {
                        tight.block(end).start
                    } else {
                        len
                    };
                    let positions = tight.block(r).start..last;
                    folded.prepare(positions.clone());
                    let held = folded.bands.1.read().unwrap();
                    if let Some(band) = &*held {
                        let words = band.start / PER_WORD..band.end.div_ceil(PER_WORD);
                        let whole = Residues::words(table, words.clone());
                        // The first and last words may hold positions of other blocks.
                        let inner = 1..words.end - words.start - 1;
                        if inner.start < inner.end {
                            let first = band.start / PER_WORD;
                            assert_eq!(
                                band.words(first + inner.start..first + inner.end),
                                &whole[inner.start as usize..inner.end as usize],
                                "{name}: the band of {}..{}",
                                band.start,
                                band.end
                            );
                        }
                        let run =
                            positions.start / PER_WORD..positions.end.div_ceil(PER_WORD).min(len.div_ceil(PER_WORD));
                        assert!(
                            band.serves(&run, len),
                            "{name}: the window {positions:?} is in the band"
                        );
                        if starts.last() != Some(&band.start) {
                            starts.push(band.start);
                        }
                    }
                    drop(held);
                    for b in r..end {
                        let block = tight.block(b);
                        let words = block.start / PER_WORD..block.end.div_ceil(PER_WORD);
                        assert_eq!(
                            &*folded.words(words.clone()),
                            &*Residues::words(table, words),
                            "{name} block {b}"
                        );
                    }
                    for i in positions.clone().step_by(13).chain([0, len / 2, len - 1]) {
                        assert_eq!(Residues::get(&folded, i), table.get(i), "{name} position {i}");
                    }
                    r = end;
                }
                let bands = starts.len() as u64;
                if parts == len / 64 {
                    assert_eq!(bands, 0, "{name}: bands smaller than a window are not held");
                } else {
                    assert!(
                        (parts - 1..=2 * parts).contains(&bands),
                        "{name}: {bands} bands of a {parts}th"
                    );
                }
            }
        }
    }

    /// The successor walks every combination in colex order, each at the
    /// places of its rank, and stops after the last.
    #[test]
    fn the_colex_successor_walks_the_ranks_in_order() {
        for (n, b) in [(6u32, 1usize), (9, 3), (12, 5), (5, 5)] {
            let mut at = places(0, b);
            let total = binomial(n, b as u32);
            for rank in 0..total {
                assert_eq!(at, places(rank, b), "{n} choose {b}, rank {rank}");
                assert_eq!(colex_next(&mut at[..b], n), rank + 1 < total);
            }
        }
    }

    /// A directory of this test's own, removed when it is dropped.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("bishops-fold-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Segments of 512 words (4 KiB); a record every 600 words.
    const SEGMENT: usize = 512;
    const STEP: u64 = 600;

    /// 9x6's searched table and its orbit index.
    fn nine_by_six() -> (Mod3Table, OrbitIndex) {
        let variant = Variant::named("9x6").unwrap();
        let spec = &variant.classes()[0];
        let group = Symmetries::of(&spec.geometry, spec.goal);
        let mut solution = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
        let class = solution.classes.swap_remove(0);
        let orbits = OrbitIndex::new(class.index, &group).unwrap();
        let ClassTable::Own(table) = class.table else {
            panic!("the a1 class is searched")
        };
        (table, orbits)
    }

    /// `table` written to `dir/codes` in sealed segments, opened as the
    /// search leaves it, without the first `released` segments.
    fn source(table: &Mod3Table, dir: &Path, released: u64, write: bool) -> Mod3File {
        let path = dir.join("codes");
        let bytes: Vec<u8> = table.words().iter().flat_map(|w| w.to_le_bytes()).collect();
        if write {
            std::fs::write(&path, &bytes).unwrap();
        }
        let seals: Vec<Option<u64>> = bytes.chunks(8 * SEGMENT).map(|c| Some(xxh3_64(c))).collect();
        let file = OpenOptions::new().read(true).write(true).open(&path).unwrap();
        Mod3File::open_released(
            (file, path),
            table.len(),
            SEGMENT,
            (&seals, released as usize),
            1 << 16,
            None,
        )
        .unwrap()
    }

    /// Disk blocks a file takes, in 512-byte units.
    fn allocated(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().blocks()
    }

    #[test]
    fn a_table_folded_from_its_file_is_the_fold_in_memory_and_gives_the_file_back() {
        let dir = Scratch::new("whole");
        let (table, orbits) = nine_by_six();
        let want = fold(&table, &orbits);
        let src = source(&table, &dir.0, 0, true);
        let before = allocated(&dir.0.join("codes"));
        let (out, record) = (dir.0.join("orbits"), dir.0.join("orbits.fold"));
        let folded = fold_file(
            &src,
            &orbits,
            (&out, &record),
            SEGMENT,
            STEP,
            FoldProgress::start(&src, b"what the search found".to_vec()),
            1 << 16,
            &mut |_| false,
        )
        .unwrap();
        assert_eq!(folded.load().unwrap(), want);
        // The table's file was given back as the fold went, all but its
        // last segment, and what was given back is never answered.
        let after = allocated(&dir.0.join("codes"));
        assert!(
            after * 512 <= 8 * SEGMENT as u64 + 4096 && before > 8 * after,
            "{before} then {after} blocks"
        );
        assert_eq!(Residues::get(&src, 0), None);
        let e = src.fault().unwrap_err().to_string();
        assert!(e.contains("given back to the file system"), "{e}");
        let done = FoldProgress::read(&record, &orbits, SEGMENT).unwrap().unwrap();
        assert!(done.is_done(&orbits));
        assert_eq!(done.note(), b"what the search found");
        assert_eq!(done.source_seals(), src.seals().0);
    }

    /// A fold stopped after each of its records goes on from it, with
    /// the table's file opened without what it gave back, to the same
    /// orbits' file; a record or an orbits' file changed meanwhile is
    /// refused.
    #[test]
    fn a_fold_stopped_at_any_record_resumes_to_the_same_file() {
        let (table, orbits) = nine_by_six();
        let want = fold(&table, &orbits);
        let steps = code_words(orbits.len()).div_ceil(STEP);
        assert!(steps >= 6, "{steps} records");
        for at in [1, 2, steps / 2, steps - 1] {
            let dir = Scratch::new(&format!("stop{at}"));
            let (out, record) = (dir.0.join("orbits"), dir.0.join("orbits.fold"));
            let src = source(&table, &dir.0, 0, true);
            let mut n = 0;
            let e = fold_file(
                &src,
                &orbits,
                (&out, &record),
                SEGMENT,
                STEP,
                FoldProgress::start(&src, Vec::new()),
                1 << 16,
                &mut |_| {
                    n += 1;
                    n == at
                },
            )
            .unwrap_err();
            assert!(matches!(e, Error::Stopped(_)), "{e}");
            drop(src);
            let progress = FoldProgress::read(&record, &orbits, SEGMENT).unwrap().unwrap();
            assert!(progress.released() > 0 || at == 1);
            let src = source(&table, &dir.0, progress.released(), false);
            let folded = fold_file(
                &src,
                &orbits,
                (&out, &record),
                SEGMENT,
                STEP,
                progress,
                1 << 16,
                &mut |_| false,
            )
            .unwrap();
            assert_eq!(folded.load().unwrap(), want, "stopped at record {at}");
        }
        // Changed records and files.
        let dir = Scratch::new("changed");
        let (out, record) = (dir.0.join("orbits"), dir.0.join("orbits.fold"));
        let src = source(&table, &dir.0, 0, true);
        let mut n = 0;
        let _ = fold_file(
            &src,
            &orbits,
            (&out, &record),
            SEGMENT,
            STEP,
            FoldProgress::start(&src, Vec::new()),
            1 << 16,
            &mut |_| {
                n += 1;
                n == 3
            },
        );
        let bytes = std::fs::read(&record).unwrap();
        let mut changed = bytes.clone();
        changed[20] ^= 1;
        std::fs::write(&record, &changed).unwrap();
        let e = FoldProgress::read(&record, &orbits, SEGMENT).unwrap_err().to_string();
        assert!(e.contains("changed after it was written"), "{e}");
        std::fs::write(&record, [&bytes[..], &[0u8; 8]].concat()).unwrap();
        assert!(FoldProgress::read(&record, &orbits, SEGMENT).is_err());
        std::fs::write(&record, &bytes).unwrap();
        let progress = FoldProgress::read(&record, &orbits, SEGMENT).unwrap().unwrap();
        let at = 8 * (progress.seals.len() * SEGMENT) as u64;
        let file = OpenOptions::new().write(true).open(&out).unwrap();
        file.write_all_at(&[0x55], at).unwrap();
        let src = source(&table, &dir.0, progress.released(), false);
        let e = fold_file(
            &src,
            &orbits,
            (&out, &record),
            SEGMENT,
            STEP,
            progress,
            1 << 16,
            &mut |_| false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("not what the fold wrote"), "{e}");
    }
}
