//! A two-bit table kept in a file ([`Mod3File`]): what a search on disk
//! leaves, read back a page at a time, so that its exact values and its
//! database are worked out in no more memory than the search had.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::ErrorKind;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use xxhash_rust::xxh3::xxh3_64;

use super::{Mod3Table, PER_WORD, Residues, UNSEEN, code_words};
use crate::cleanup::Pending;
use crate::error::{Error, Result};

/// Words a page: 4 KiB, what a lookup far from the others reads.
const PAGE_WORDS: usize = 512;

/// Locks the cache is cut into, so that threads asking for different
/// pages seldom wait for each other.
const SHARDS: usize = 16;

/// A class's remoteness mod 3 in a file, 32 codes a little-endian word as
/// [`Mod3Table`] packs them.
///
/// The search wrote the file in segments and sealed each with the XXH3-64
/// of its bytes. Opening it reads the whole file once, in order, checks
/// every segment against its seal and keeps the XXH3-64 of each 4 KiB
/// *page*; from then on a page is read when a position in it is asked for,
/// checked against its hash, and kept while the cache has room, at most
/// about the memory given. A lookup far from the others (the descent of an
/// exact value walks anywhere in the table) costs one page, not a segment.
/// A segment that was never written is all unreachable, and read from
/// nothing.
///
/// A page that cannot be read, or is not what was written, answers
/// unreachable for its positions and is kept as the table's
/// [`fault`](Residues::fault): whatever is worked out from the table is to
/// be checked against it before it is used.
///
/// The solver makes one when a search on disk ends
/// ([`Plan::solve_on_disk`](crate::solver::Plan::solve_on_disk)); a file
/// it made for the search alone is removed when the table is dropped.
pub struct Mod3File {
    file: File,
    path: PathBuf,
    len: u64,
    /// The XXH3-64 of each page as written; `None`: never written, all
    /// unreachable.
    pages: Vec<Option<u64>>,
    /// The seal of each segment it was opened with, and the segment's words.
    seals: (Vec<Option<u64>>, usize),
    shards: Vec<Mutex<Shard>>,
    /// Pages each shard may hold.
    per_shard: usize,
    failed: Mutex<Option<Error>>,
    reads: AtomicU64,
    /// Words below this were given back to the file system
    /// ([`release`](Self::release)): a fold has read them for the last
    /// time, and a read of them is a fault.
    released: AtomicU64,
    /// The file's registration for removal, when it was made for the
    /// search alone: then the table removes it when dropped.
    pending: Option<Pending>,
}

/// The hash of a page number in a shard's map: a multiply, not SipHash
/// (the numbers are the file's own, and a lookup is on every read).
#[derive(Default)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// One lock's share of the cache: the pages it holds, oldest first in
/// `order`.
#[derive(Default)]
struct Shard {
    held: HashMap<usize, Arc<[u64]>, BuildHasherDefault<PageHasher>>,
    order: VecDeque<usize>,
}

impl Drop for Mod3File {
    fn drop(&mut self) {
        if self.pending.is_some() {
            match std::fs::remove_file(&self.path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => crate::text::say!("bishops: cannot remove {}: {e}", self.path.display()),
            }
        }
    }
}

impl fmt::Debug for Mod3File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mod3File")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// The error of a read of `path` at `at` that is not what was written.
fn changed(path: &std::path::Path, what: &str, at: u64, len: usize) -> Error {
    Error::Io(
        path.to_path_buf(),
        std::io::Error::new(
            ErrorKind::InvalidData,
            format!(
                "{what} (bytes {at} to {}) read back other than the search wrote it: the disk or another program changed it, so nothing is written from it",
                at + len as u64
            ),
        ),
    )
}

impl Mod3File {
    /// The table of `len` positions in `file` (at `path`), written in
    /// segments of `segment_words` words whose bytes hash to `seals`
    /// (`None`: never written), keeping at most about `max_bytes` of it in
    /// memory; `pending` removes the file when the table is dropped. The
    /// file is read through once and checked.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read or a segment is not what
    /// was written.
    ///
    /// # Panics
    ///
    /// When `segment_words` is not a whole number of pages or `seals` does
    /// not count the segments of `len` positions.
    pub(crate) fn open(
        file: (File, PathBuf),
        len: u64,
        segment_words: usize,
        seals: &[Option<u64>],
        max_bytes: u64,
        pending: Option<Pending>,
    ) -> Result<Mod3File> {
        Mod3File::open_released(file, len, segment_words, (seals, 0), max_bytes, pending)
    }

    /// As [`open`](Self::open), for a file whose first `released`
    /// segments a fold gave back to the file system: they are neither
    /// read nor checked, and a position in them is never answered.
    pub(crate) fn open_released(
        (file, path): (File, PathBuf),
        len: u64,
        segment_words: usize,
        (seals, released): (&[Option<u64>], usize),
        max_bytes: u64,
        pending: Option<Pending>,
    ) -> Result<Mod3File> {
        assert!(
            segment_words.is_multiple_of(PAGE_WORDS),
            "{segment_words} words a segment"
        );
        let words = code_words(len) as usize;
        assert_eq!(seals.len(), words.div_ceil(segment_words), "a seal a segment");
        let held = (max_bytes / (8 * PAGE_WORDS as u64)).max(1) as usize;
        // Made first, so that a file that fails its check and is the
        // table's to remove is removed.
        let mut table = Mod3File {
            file,
            path,
            len,
            pages: Vec::with_capacity(words.div_ceil(PAGE_WORDS)),
            seals: (seals.to_vec(), segment_words),
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            per_shard: held.div_ceil(SHARDS),
            failed: Mutex::new(None),
            reads: AtomicU64::new(0),
            released: AtomicU64::new(((released * segment_words).min(words)) as u64),
            pending,
        };
        let mut bytes = Vec::new();
        for (s, seal) in seals.iter().enumerate() {
            let first = s * segment_words;
            let end = (first + segment_words).min(words);
            let Some(seal) = seal.filter(|_| s >= released) else {
                table.pages.extend((first..end).step_by(PAGE_WORDS).map(|_| None));
                continue;
            };
            bytes.resize(8 * (end - first), 0);
            let at = 8 * first as u64;
            table
                .file
                .read_exact_at(&mut bytes, at)
                .map_err(|e| Error::Io(table.path.clone(), e))?;
            if xxh3_64(&bytes) != seal {
                return Err(changed(&table.path, &format!("segment {s}"), at, bytes.len()));
            }
            table
                .pages
                .extend(bytes.chunks(8 * PAGE_WORDS).map(|page| Some(xxh3_64(page))));
        }
        Ok(table)
    }

    /// Gives the whole pages below word `words` back to the file system
    /// (a hole punched in the file), for a fold that has read them for
    /// the last time: the disk the table takes shrinks as its fold grows.
    /// A later read of them is a fault, never an answer.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file system cannot punch the hole.
    pub(crate) fn release(&self, words: u64) -> Result<()> {
        let end = words / PAGE_WORDS as u64 * PAGE_WORDS as u64;
        // From the start each time: a hole punched again costs nothing,
        // and one a stopped fold recorded but did not punch is punched.
        crate::files::punch_hole(&self.file, 0..8 * end).map_err(|e| Error::Io(self.path.clone(), e))?;
        self.released.fetch_max(end, Ordering::Relaxed);
        Ok(())
    }

    /// The table with a cache of at most about `max_bytes`, what it held
    /// let go: for a fold, which reads each page once, in order.
    pub(crate) fn with_cache(mut self, max_bytes: u64) -> Mod3File {
        let held = (max_bytes / (8 * PAGE_WORDS as u64)).max(1) as usize;
        self.per_shard = held.div_ceil(SHARDS);
        for shard in &mut self.shards {
            *shard.get_mut().unwrap_or_else(|e| e.into_inner()) = Shard::default();
        }
        self
    }

    /// The seal (XXH3-64) of each segment the file was opened with
    /// (`None`: never written), and the words a segment.
    pub fn seals(&self) -> (&[Option<u64>], usize) {
        (&self.seals.0, self.seals.1)
    }

    /// Pages read from the file since it was opened.
    pub fn pages_read(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// The whole table, read into memory: for a table that fits, and the
    /// tests.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when a page cannot be read or is not what was
    /// written.
    pub fn load(&self) -> Result<Mod3Table> {
        let words = self.words(0..code_words(self.len)).into_owned();
        self.fault()?;
        Ok(Mod3Table::from_words(words, self.len))
    }

    /// The words of page `p`.
    fn words_of(&self, p: usize) -> Range<usize> {
        let start = p * PAGE_WORDS;
        start..(start + PAGE_WORDS).min(code_words(self.len) as usize)
    }

    /// Word `w` of the table: from its page in the cache, read under the
    /// shard's lock with no count of the page taken, or as [`page`](Self::page) reads it.
    fn word(&self, w: usize) -> u64 {
        let p = w / PAGE_WORDS;
        if let Some(held) = self.shards[p % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .held
            .get(&p)
        {
            return held[w % PAGE_WORDS];
        }
        self.page(p)[w % PAGE_WORDS]
    }

    /// Page `p`, from the cache or read and checked; all unreachable when
    /// it cannot be (the failure kept).
    fn page(&self, p: usize) -> Arc<[u64]> {
        let shard = &self.shards[p % SHARDS];
        if let Some(held) = shard.lock().unwrap_or_else(|e| e.into_inner()).held.get(&p) {
            return held.clone();
        }
        // Read without the lock: another thread may read it too, and the
        // first to come back keeps it.
        let read = match self.read(p) {
            Ok(words) => words,
            Err(e) => {
                self.failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                return vec![u64::MAX; self.words_of(p).len()].into();
            }
        };
        let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(held) = shard.held.get(&p) {
            return held.clone();
        }
        if shard.order.len() >= self.per_shard
            && let Some(oldest) = shard.order.pop_front()
        {
            shard.held.remove(&oldest);
        }
        shard.order.push_back(p);
        shard.held.insert(p, read.clone());
        read
    }

    /// Reads page `p` from the file and checks it against its hash.
    fn read(&self, p: usize) -> Result<Arc<[u64]>> {
        let words = self.words_of(p);
        if (words.start as u64) < self.released.load(Ordering::Relaxed) {
            return Err(Error::Io(
                self.path.clone(),
                std::io::Error::other(format!(
                    "page {p} was given back to the file system by a fold and cannot be read"
                )),
            ));
        }
        let Some(hash) = self.pages[p] else {
            return Ok(vec![u64::MAX; words.len()].into());
        };
        let mut bytes = [0u8; 8 * PAGE_WORDS];
        let bytes = &mut bytes[..8 * words.len()];
        let at = 8 * words.start as u64;
        self.file
            .read_exact_at(bytes, at)
            .map_err(|e| Error::Io(self.path.clone(), e))?;
        self.reads.fetch_add(1, Ordering::Relaxed);
        if xxh3_64(bytes) != hash {
            return Err(changed(&self.path, &format!("page {p}"), at, bytes.len()));
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("chunks of 8 bytes")))
            .collect())
    }
}

impl Residues for Mod3File {
    fn len(&self) -> u64 {
        self.len
    }

    fn get(&self, i: u64) -> Option<u8> {
        assert!(i < self.len, "position {i} of a table of {}", self.len);
        let word = self.word((i / PER_WORD) as usize);
        let code = (word >> (2 * (i % PER_WORD))) as u8 & 3;
        (code != UNSEEN).then_some(code)
    }

    fn words(&self, words: Range<u64>) -> Cow<'_, [u64]> {
        assert!(
            words.end <= code_words(self.len),
            "words {words:?} of a table of {} positions",
            self.len
        );
        let mut out = Vec::with_capacity((words.end - words.start) as usize);
        let mut w = words.start as usize;
        while w < words.end as usize {
            let p = w / PAGE_WORDS;
            let page = self.page(p);
            let first = p * PAGE_WORDS;
            let end = (words.end as usize).min(first + page.len());
            out.extend_from_slice(&page[w - first..end - first]);
            w = end;
        }
        Cow::Owned(out)
    }

    fn fault(&self) -> Result<()> {
        match self.failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of this test's own, emptied when it is dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("bishops-mod3-file-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A file of `table`'s words in segments of `segment_words`, sealed as
    /// written, and the seals.
    fn written(table: &Mod3Table, segment_words: usize, dir: &std::path::Path) -> (File, PathBuf, Vec<Option<u64>>) {
        let path = dir.join("codes");
        let bytes: Vec<u8> = table.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&path, &bytes).unwrap();
        let seals = bytes.chunks(8 * segment_words).map(|c| Some(xxh3_64(c))).collect();
        (File::open(&path).unwrap(), path, seals)
    }

    fn table(len: u64) -> Mod3Table {
        let mut table = Mod3Table::new(len);
        for i in 0..len {
            table.set(i, (i % 7 != 3).then_some((i * i % 3) as u8));
        }
        table
    }

    #[test]
    fn a_table_in_a_file_answers_as_in_memory_with_little_of_it_held() {
        let dir = Scratch::new("answers");
        let want = table(1_000_000);
        // Segments of two pages, 62 pages in all; 8 KiB held at most, a
        // page a shard.
        let (file, path, seals) = written(&want, 1024, dir.path());
        let file = Mod3File::open((file, path), want.len(), 1024, &seals, 8 << 10, None).unwrap();
        for i in (0..want.len()).rev().step_by(997) {
            assert_eq!(Residues::get(&file, i), want.get(i), "position {i}");
        }
        for range in [0..0, 0..1, 5..133, 999_990..1_000_000, 127..128, 16_000..50_001] {
            assert_eq!(Residues::pack_range(&file, range.clone()), want.pack_range(range));
        }
        assert!(file.shards.iter().map(|s| s.lock().unwrap().held.len()).sum::<usize>() <= SHARDS);
        assert_eq!(file.load().unwrap(), want);
        assert!(file.pages_read() > 62, "read again as they left: {}", file.pages_read());
        file.fault().unwrap();
    }

    #[test]
    fn a_page_changed_on_disk_is_refused_not_answered() {
        let dir = Scratch::new("changed");
        let want = table(100_000);
        let (file, path, seals) = written(&want, 512, dir.path());
        let file = Mod3File::open((file, path.clone()), want.len(), 512, &seals, 1 << 20, None).unwrap();
        // Byte 4096 · 3 + 200 is in page 3, changed after the file was
        // opened and checked.
        let at = 3 * 4096 + 200;
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[at] ^= 0b0100;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(Residues::get(&file, 4 * at as u64), None);
        let e = file.fault().unwrap_err().to_string();
        assert!(
            e.contains("page 3 (bytes 12288 to 16384)") && e.contains("changed it"),
            "{e}"
        );
        assert_eq!(Residues::get(&file, 0), want.get(0));
        assert!(file.load().is_err());
        // Changed before it is opened: refused whole.
        let e = Mod3File::open(
            (File::open(&path).unwrap(), path),
            want.len(),
            512,
            &seals,
            1 << 20,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("segment 3 (bytes 12288 to 16384)"), "{e}");
    }

    #[test]
    fn a_segment_never_written_is_unreachable_and_read_from_nothing() {
        let dir = Scratch::new("unwritten");
        let path = dir.path().join("codes");
        std::fs::write(&path, []).unwrap();
        let file = Mod3File::open(
            (File::open(&path).unwrap(), path),
            20_000,
            512,
            &[None, None],
            1 << 10,
            None,
        )
        .unwrap();
        assert!((0..20_000).all(|i| Residues::get(&file, i).is_none()));
        assert_eq!(file.pages_read(), 0);
        file.fault().unwrap();
    }
}
