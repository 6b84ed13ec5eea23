//! The two-bit table kept on disk ([`DiskTable`]): for a class whose table
//! is larger than the memory the search may use.
//!
//! The codes live in a file, cut into *segments* of equal size, and at
//! most a given number of segments are in memory at once. The search keeps
//! the same addresses as for a table in memory: the whole table is a
//! reserved range of address space, of which only the resident segments
//! hold pages, so the word-at-a-time code of [`Codes`] reads and writes it
//! unchanged.
//!
//! What is resident is the search's choice, not the kernel's: a black move
//! stays in its block and a white move leads to a block one white move
//! away, so the blocks are worked in *windows* of consecutive blocks whose
//! *scope* (their own segments and those of every block a white move out
//! of them leads to) fits in memory ([`Windows`]). Before a window, the
//! table makes its scope resident ([`DiskTable::reside`]), writing back
//! the segments it changed that leave and reading those that come in, in
//! ascending order. A position outside the resident segments is still read
//! or written correctly, by loading its segment on demand, but a search
//! worked in windows never asks for one inside a layer: the tests count
//! the loads on demand ([`DiskStats::demand`]).
//!
//! A segment never written is all unseen, and is read from no file. A
//! segment read back is checked against the XXH3-64 of what was written:
//! a file changed under the search stops it with an error, never an answer.
//! A table larger than the memory available moves its segments between
//! the disk and its memory directly, past the page cache ([`Direct`]),
//! which could not keep them until they are read again.
//!
//! The search expands one position of each orbit, as in memory, and a
//! position's images lie anywhere in the table: those outside the window
//! are *spooled*, appended to a file for each *bucket* of nearly as many
//! consecutive segments as may be resident at once, and claimed at the
//! layer's end, a bucket at a time with its segments resident
//! ([`DiskTable::unspool_images`]), as images another worker sent are, in
//! sorted runs that the rest of the memory holds ([`Sorting`]). A
//! batch of images goes to its bucket's file sorted and delta-coded
//! ([`spool`](super::spool)), about two bytes an image. The spool holds
//! at most a budget ([`OnDisk::spool_budget`], an eighth of the table)
//! and what one part of a window adds to it: past the budget the search
//! claims the images inside the layer, between two parts of a window,
//! as it would at the layer's end ([`DiskStats::drains`]).
//!
//! The files are `.VARIANT.CLASS.codes.tmp-PID` (the codes) and
//! `.VARIANT.CLASS.images-B.tmp-PID` (bucket `B`'s spool) in the directory
//! given: they are removed when the table is dropped, on SIGINT, SIGTERM or
//! SIGHUP (they are registered with [`cleanup`](crate::cleanup)), and, when
//! a process was killed outright, by the next solve of the variant once
//! that process is gone ([`is_abandoned`](crate::cleanup::is_abandoned)).

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use xxhash_rust::xxh3::xxh3_64;

use super::codes::CodeTable;
use super::seal::Seal;
use super::spool::{Bucket, Frame};
use super::{Carried, Claim, Table};
use crate::bitboard::{Bitboard, Word};
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::mod3::file::Mod3File;
use crate::mod3::{Codes, PER_WORD, UNSEEN, code_words, count_codes};
use crate::solver::boundary::{Coding, Stored, StoredRef};
use crate::solver::boundary::{Sealed, Wanted};
use crate::solver::contents::{self, Gathered, Said};
use crate::solver::hardest::Lowest;
use crate::solver::stats::HARDEST;
use crate::tight::{TightIndex, prefetch};

/// Where a search keeps a table that does not fit in the memory it may
/// use, and how much of it may be in memory at once.
///
/// ```
/// use bishops::solver::OnDisk;
///
/// let disk = OnDisk { dir: "db".into(), max_bytes: 32 << 20, kept: false };
/// // 32 KiB segments, a thousand of them in memory at once.
/// assert_eq!((disk.segment_bytes(), disk.max_segments()), (32 << 10, 1024));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnDisk {
    /// The directory of the table's file, which the search removes when it
    /// ends.
    pub dir: PathBuf,
    /// The most bytes of table in memory at once.
    pub max_bytes: u64,
    /// Whether the search saves checkpoints: its table's file then
    /// outlives it (`.VARIANT.CLASS.codes`), and a checkpoint keeps the
    /// seal of each segment, not a copy ([`Sealed`]).
    pub kept: bool,
}

/// Spooled positions read back at once.
const SPOOL_RUN: usize = 1 << 16;

/// The smallest and largest segment, in bytes.
const SEGMENT_BYTES: Range<u64> = 1 << 12..1 << 24;

impl OnDisk {
    /// Bytes a segment: about a thousandth of the memory given, a power of
    /// two between 4 KiB (a page) and 16 MiB, so that a window holds many segments
    /// and a segment is read in one long run.
    pub fn segment_bytes(&self) -> u64 {
        (self.max_bytes / 1024)
            .clamp(SEGMENT_BYTES.start, SEGMENT_BYTES.end)
            .next_power_of_two()
            .min(SEGMENT_BYTES.end)
    }

    /// How many segments may be in memory at once.
    pub fn max_segments(&self) -> usize {
        (self.max_bytes / self.segment_bytes()) as usize
    }

    /// Bytes of spooled images a table of `table_bytes` on disk holds
    /// before its search claims them inside the layer: an eighth of the
    /// table, at least a page. The disk a solve announces counts it.
    ///
    /// ```
    /// use bishops::solver::OnDisk;
    ///
    /// // 13x10's table of 47,836 MiB spools at most 5,979.5 MiB at once.
    /// assert_eq!(OnDisk::spool_budget(47_836 << 20), 47_836 << 17);
    /// assert_eq!(OnDisk::spool_budget(1000), 4096);
    /// ```
    pub fn spool_budget(table_bytes: u64) -> u64 {
        (table_bytes / 8).max(SEGMENT_BYTES.start)
    }
}

/// What a two-bit table on disk read and wrote during its search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Segments read from the file.
    pub reads: u64,
    /// Segments written to it.
    pub writes: u64,
    /// Bytes read and written.
    pub bytes: u64,
    /// Segments loaded because a position outside the resident ones was
    /// asked for.
    pub demand: u64,
    /// Segments that came in on the pages of segments that left, not on
    /// fresh pages (moved by `mremap`, see `DiskTable::hand_over`).
    pub moved: u64,
    /// Nanoseconds spent reading and writing, segments and spooled
    /// images.
    pub waited_ns: u64,
    /// Images of found positions spooled to disk until their segments were
    /// resident.
    pub spooled: u64,
    /// Bytes they took in the spool's files, written and read back once.
    pub spool_bytes: u64,
    /// The most bytes the spool's files held at once: at most its budget
    /// ([`OnDisk::spool_budget`]) and what one part of a window spooled.
    pub spool_peak: u64,
    /// Times the spool was claimed at or past its budget, most of them
    /// inside a layer: each makes the segments with images resident, and
    /// the window's segments again after them.
    pub drains: u64,
    /// Marks of how far a layer had gone.
    pub marks: u64,
    /// Nanoseconds the marks took writing back and syncing (the writes
    /// are in [`waited_ns`](Self::waited_ns) too).
    pub marked_ns: u64,
}

impl DiskStats {
    /// What was read and written since `before`, a reading of the same
    /// table: one layer's traffic. The spool's peak stays the whole
    /// search's.
    pub fn since(&self, before: &DiskStats) -> DiskStats {
        DiskStats {
            reads: self.reads - before.reads,
            writes: self.writes - before.writes,
            bytes: self.bytes - before.bytes,
            demand: self.demand - before.demand,
            moved: self.moved - before.moved,
            waited_ns: self.waited_ns - before.waited_ns,
            spooled: self.spooled - before.spooled,
            spool_bytes: self.spool_bytes - before.spool_bytes,
            spool_peak: self.spool_peak,
            drains: self.drains - before.drains,
            marks: self.marks - before.marks,
            marked_ns: self.marked_ns - before.marked_ns,
        }
    }
}

/// A reserved range of address space, zero until written, whose pages are
/// given back to the system when [`release`](Reserved::release)d.
///
/// It starts on a boundary of [`HUGE_PAGE`], and for segments of a huge
/// page or more asks the system for huge pages (`MADV_HUGEPAGE`, a hint):
/// a segment then comes and goes in whole huge pages, each faulted in and
/// given back at once where 4 KiB pages took 512 faults (11x10 at
/// `--max-memory 3072`, 4 MiB segments, stopped after layer 9: 0.73 times
/// the processor time, its kernel time 30 s against 70). A smaller
/// segment would split the huge page it shares as it leaves.
struct Reserved {
    /// The first byte of the range, on a huge page's boundary.
    ptr: *mut libc::c_void,
    bytes: usize,
    /// The mapping as made, a huge page longer than the range, to unmap.
    mapped: (*mut libc::c_void, usize),
}

/// The size of a huge page of the processors this runs on.
const HUGE_PAGE: usize = 2 << 20;

// SAFETY: the range is plain memory, read and written through atomics.
unsafe impl Send for Reserved {}
// SAFETY: as above.
unsafe impl Sync for Reserved {}

impl Reserved {
    /// `bytes` of address space; in huge pages, when asked, if the system
    /// has them.
    fn new(bytes: usize, huge: bool) -> Result<Reserved> {
        let bytes = bytes.max(1);
        let len = bytes + HUGE_PAGE;
        // SAFETY: an anonymous private mapping, asking for no address.
        let mapped = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            return Err(Error::TooLarge(format!(
                "cannot reserve {bytes} bytes of address space for a table on disk: {}",
                std::io::Error::last_os_error()
            )));
        }
        let skip = (mapped as usize).next_multiple_of(HUGE_PAGE) - mapped as usize;
        // SAFETY: `skip` is under a huge page, and the mapping a huge page
        // longer than the range.
        let ptr = unsafe { (mapped as *mut u8).add(skip) } as *mut libc::c_void;
        if huge {
            // SAFETY: advice on the range just mapped; without huge pages
            // the system refuses it, and the range works as it is.
            unsafe { libc::madvise(ptr, bytes, libc::MADV_HUGEPAGE) };
        }
        Ok(Reserved {
            ptr,
            bytes,
            mapped: (mapped, len),
        })
    }

    fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is `bytes` long, page aligned, zero filled and
        // lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr as *const AtomicU64, self.bytes / 8) }
    }

    /// The bytes of words `words`, to read a segment into while no thread
    /// touches them.
    ///
    /// # Safety
    ///
    /// No other reference to these words may be used while the slice is.
    #[allow(clippy::mut_from_ref)]
    unsafe fn bytes_mut(&self, words: Range<usize>) -> &mut [u8] {
        debug_assert!(words.end * 8 <= self.bytes);
        // SAFETY: in range, and the caller keeps every other user out.
        unsafe { std::slice::from_raw_parts_mut((self.ptr as *mut u8).add(words.start * 8), words.len() * 8) }
    }

    /// Moves the pages of words `from` to words `to`, ranges of whole
    /// pages of the same length that no thread uses: `to` then holds what
    /// `from` held, and `from` reads as zero and costs no memory, with no
    /// page given back to the system or taken from it. Whether it could
    /// (Linux 5.7 and later, within the system's count of mappings); if
    /// not, nothing moved.
    ///
    /// A segment that comes in takes the pages of one that leaves, where
    /// giving them back and faulting fresh ones in had the system zero
    /// every page again. Under a hypervisor that takes back the memory a
    /// guest frees, as this machine's does, a fresh page is also one the
    /// host must find and zero first: 13x10's search spent three quarters
    /// of its processor time zeroing pages (perf, 2026-12-01), and faulting
    /// 2 GiB freed five seconds before ran at 0.9 to 1.2 GB/s against
    /// 8.5 GB/s for memory freed just before.
    fn move_pages(&self, from: Range<usize>, to: Range<usize>) -> bool {
        let page = 4096;
        let (at, len, into) = (from.start * 8, from.len() * 8, to.start * 8);
        if len == 0 || len != to.len() * 8 || at % page != 0 || into % page != 0 || len % page != 0 {
            return false;
        }
        debug_assert!(at + len <= self.bytes && into + len <= self.bytes);
        // SAFETY: two ranges of whole pages inside the mapping, which no
        // thread reads or writes meanwhile; the range left behind stays
        // mapped (`MREMAP_DONTUNMAP`) and reads as zero, as if released.
        let moved = unsafe {
            libc::mremap(
                (self.ptr as *mut u8).add(at) as *mut libc::c_void,
                len,
                len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED | libc::MREMAP_DONTUNMAP,
                (self.ptr as *mut u8).add(into) as *mut libc::c_void,
            )
        };
        moved != libc::MAP_FAILED
    }

    /// Gives the pages of words `words` back to the system: they read as
    /// zero again, and cost no memory until written.
    fn release(&self, words: Range<usize>) {
        let page = 4096;
        let (start, end) = ((words.start * 8).div_ceil(page) * page, (words.end * 8) / page * page);
        if start < end {
            // SAFETY: a whole number of pages inside the mapping; nothing
            // reads them until they are filled again.
            unsafe {
                libc::madvise(
                    (self.ptr as *mut u8).add(start) as *mut libc::c_void,
                    end - start,
                    libc::MADV_DONTNEED,
                );
            }
        }
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munmap(self.mapped.0, self.mapped.1);
        }
    }
}

/// A class's two-bit table on disk, searched by one worker in windows
/// (see the [module](self)).
pub(in crate::solver) struct DiskTable {
    base: u64,
    len: u64,
    memory: Reserved,
    /// Words a segment, a power of two.
    segment_words: usize,
    /// Its logarithm, so that finding a position's segment, on every
    /// access, is a shift.
    segment_shift: u32,
    max_segments: usize,
    /// Segments a bucket of the spool, and positions a sorted run of it.
    sorting: Sorting,
    resident: Vec<AtomicBool>,
    dirty: Vec<AtomicBool>,
    /// Whether a segment has been written to the file (else it is all
    /// unseen).
    stored: Vec<AtomicBool>,
    /// Each segment's seal as last written (its exact checksum is what it
    /// must hold when read back), or of all unseen when never written.
    seals: Mutex<Vec<Seal>>,
    /// Whether the file outlives the table: the table of a search that
    /// saves checkpoints.
    persistent: bool,
    /// The seals of the last layer boundary, which a checkpoint keeps.
    sealed: Sealed,
    /// The checksum of those seals, which ties the side file of lowest
    /// positions to them.
    generation: u64,
    /// The lowest positions the layer being found wrote, and their
    /// mirror images' lowest hashes: of a kept table, recorded in its side
    /// file before any segment is written back.
    lowest: Mutex<LayerLowest>,
    /// The side file of a kept table (`.VARIANT.CLASS.codes.lowest`).
    side: Option<(File, PathBuf)>,
    /// What the layer the search was stopped inside had written, once
    /// reopened ([`Table::take_carried`]).
    carried: Option<Carried>,
    /// How many marks of the layer's progress the side file has had
    /// ([`mark`](DiskTable::mark)), which names the slot of the next,
    /// and the time they took.
    marks: AtomicU64,
    marked_ns: AtomicU64,
    file: File,
    /// The same file opened for direct I/O ([`Direct`]), through which
    /// whole segments are read and written when the page cache cannot
    /// hold the table.
    direct: Option<Direct>,
    path: PathBuf,
    /// Held while a segment is loaded on demand.
    loading: Mutex<()>,
    /// The first load on demand that failed.
    failed: Mutex<Option<Error>>,
    /// The thread reading the next window's segments into the page
    /// cache, if one was started ([`read_ahead`](DiskTable::read_ahead)).
    ahead: Mutex<Option<ReadAhead>>,
    /// The file's registration for removal if the process is interrupted.
    pending: Option<Pending>,
    /// Images of positions found whose segments were not resident, kept
    /// until the layer's end ([`spool`](Table::spool)).
    spool: Vec<Mutex<Bucket>>,
    /// Whether segment `s` has images in the spool: only those are read
    /// in to take them.
    spooled_in: Vec<AtomicBool>,
    reads: AtomicU64,
    writes: AtomicU64,
    bytes: AtomicU64,
    demand: AtomicU64,
    /// Segments that came in on the pages of ones that left.
    moves: AtomicU64,
    waited_ns: AtomicU64,
    spooled: AtomicU64,
    spool_bytes: AtomicU64,
    /// Bytes in the spool's files now, and the most they held.
    spool_held: AtomicU64,
    spool_peak: AtomicU64,
    /// Bytes the spool may hold ([`OnDisk::spool_budget`]), and times it
    /// was claimed past them.
    spool_budget: u64,
    drains: AtomicU64,
}

/// The least bytes of segments a thread reads or writes at a time when
/// segments move ([`DiskTable::reside`]): smaller tasks cost more to hand
/// out than they save (11x8 at 8 MiB, segments of 8 KiB a task, spent
/// twice as long reading and writing as on one thread). The unit tests
/// hand out every segment alone, so that their small tables move
/// segments on every thread.
const PARALLEL_BYTES: usize = if cfg!(test) { 1 } else { 4 << 20 };

/// The most threads that move segments past the page cache at once
/// ([`DiskTable::reside`], [`Direct`]): more than the cores, as a thread
/// mostly waits on the disk. Direct reads of 16 MiB at random places in a
/// file here, beside 13x10's search, went at 1.11-1.31 GB/s on one
/// thread, 1.20-1.26 on two, 1.23-1.47 on four and 1.61-1.81 on eight
/// (2026-11-30, three rounds).
const IO_THREADS: usize = 8;

/// The least bytes the next window must read for it to be read ahead
/// ([`DiskTable::read_ahead`]): less is read as soon as asked for, and
/// is likely in the page cache already. The unit tests read every next
/// window ahead, so that their searches start and stop the thread.
const READ_AHEAD_BYTES: u64 = if cfg!(test) { 1 } else { 64 << 20 };

/// A thread that asks the system to read ranges of a file into its page
/// cache, one after another, until it is told to stop.
struct ReadAhead {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl ReadAhead {
    /// Starts reading `ranges` (offset, length in bytes) of `file`, or
    /// `None` when no thread can be started.
    fn start(file: File, ranges: Vec<(u64, u64)>) -> Option<ReadAhead> {
        use std::os::fd::AsRawFd;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("read-ahead".into())
            .spawn(move || {
                for (at, len) in ranges {
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    let (Ok(at), Ok(len)) = (libc::off_t::try_from(at), libc::off_t::try_from(len)) else {
                        break;
                    };
                    // SAFETY: advice on an open descriptor of our own; it
                    // reads into the page cache and changes nothing.
                    if unsafe { libc::posix_fadvise(file.as_raw_fd(), at, len, libc::POSIX_FADV_WILLNEED) } != 0 {
                        break;
                    }
                }
            })
            .ok()?;
        Some(ReadAhead { stop, thread })
    }

    /// Tells the thread to stop and waits for it.
    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }

    /// Waits for the thread to have asked for every range.
    #[cfg(test)]
    fn finish(self) {
        let _ = self.thread.join();
    }
}

/// The bytes of a direct read or write, its offset in the file and the
/// address of its memory are multiples of this: the largest logical block
/// a disk has, and the page, which a segment's memory starts on.
const DIRECT_ALIGN: u64 = 4096;

/// A descriptor of a table's file opened with `O_DIRECT`: its reads and
/// writes of whole segments go between the disk and the table's memory,
/// not through the page cache.
///
/// A table larger than the memory left for the page cache is read about
/// five times a layer and written about twice (13x10's: some 300 GB of
/// each a layer), and nothing read is read again before the cache has
/// dropped it: `/proc/PID/io` of 13x10's search counted as many bytes
/// read from the disk as were asked for. Through the cache, each byte is
/// then also copied by the kernel, and each page of the cache found,
/// filled, and taken back by the kernel's reclaim. Segments are only read
/// and written this way when the table is larger than the memory
/// available: a smaller table's file stays in the cache from one read to
/// the next, which only the cache can give.
struct Direct(File);

impl Direct {
    /// What `BISHOPS_DIRECT_IO` asks: `1` direct, `0` through the page
    /// cache (to measure one against the other), unset or empty the
    /// choice of [`open_if_needed`](Self::open_if_needed). Read before
    /// any file of the table is made.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when it is set to anything else.
    fn asked() -> Result<Option<bool>> {
        match std::env::var("BISHOPS_DIRECT_IO").as_deref().map(str::trim) {
            Ok("1") => Ok(Some(true)),
            Ok("0") => Ok(Some(false)),
            Ok("") | Err(_) => Ok(None),
            Ok(v) => Err(Error::Usage(format!("BISHOPS_DIRECT_IO={v} is not 0 or 1"))),
        }
    }

    /// A direct descriptor of the table file at `path`, of `bytes`, when
    /// `asked` says so, or else when the memory available cannot hold the
    /// file; none where the file system has no direct I/O.
    fn open_if_needed(path: &Path, bytes: u64, asked: Option<bool>) -> Option<Direct> {
        let wanted =
            asked.unwrap_or_else(|| crate::system::available_memory().is_some_and(|available| bytes > available));
        wanted.then(|| Direct::open(path).ok()).flatten()
    }

    /// The file at `path` opened for direct reads and writes; refused
    /// where the file system has no direct I/O (a tmpfs).
    fn open(path: &Path) -> std::io::Result<Direct> {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map(Direct)
    }

    /// Whether `bytes` at offset `at` may be read or written directly:
    /// every segment but a table's last, whose length is what is left.
    fn fits(at: u64, bytes: &[u8]) -> bool {
        at.is_multiple_of(DIRECT_ALIGN)
            && (bytes.len() as u64).is_multiple_of(DIRECT_ALIGN)
            && (bytes.as_ptr() as u64).is_multiple_of(DIRECT_ALIGN)
    }
}

/// The offset in its table of bucket `b`'s first position: a bucket is
/// `bucket_segments` segments of `segment_words` words.
fn bucket_offset(b: usize, bucket_segments: usize, segment_words: usize) -> u64 {
    (b * bucket_segments * segment_words) as u64 * PER_WORD
}

/// How the memory of a table on disk is shared while its spool is
/// claimed: a bucket's segments resident, and beside them the spooled
/// positions of a *run*, sorted before they are claimed.
///
/// A bucket's file holds its frames in the order they were spooled, each
/// sorted but spanning the whole bucket, so claimed as they come a claim
/// lands anywhere in many GiB of table: each is a miss of the processor's
/// caches and of its page tables, and so is finding the position's block
/// and white set. Sorted, a run of claims walks the table, the blocks'
/// offsets and their flags upwards, a few claims to a block. The run takes
/// a thirty-second of the memory (and never less than [`SPOOL_RUN`]
/// positions), which the buckets give up: with 16 MiB segments, 30 of
/// 983, for runs of 63 million positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sorting {
    /// Segments a bucket.
    bucket_segments: usize,
    /// Positions a run.
    run: usize,
}

impl Sorting {
    /// The sharing for `max_segments` segments of `segment_words` words
    /// in memory.
    fn of(max_segments: usize, segment_words: usize) -> Sorting {
        let given = max_segments / SORT_SHARE;
        Sorting {
            bucket_segments: max_segments - given,
            // A word of memory holds one spooled position.
            run: (given * segment_words).max(SPOOL_RUN),
        }
    }
}

/// The share of a table's memory, 1 in this many, that holds a sorted run
/// of its spool while it is claimed ([`Sorting`]).
const SORT_SHARE: usize = 32;

/// A new file at `path` for reading and writing, registered for removal
/// if the process is interrupted; refused if anything is there.
fn new_file(path: &Path) -> Result<(File, Pending)> {
    let pending = Pending::register(path);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::Io(path.to_path_buf(), e))?;
    Ok((file, pending))
}

impl DiskTable {
    /// A table of `len` positions from `base`, none reached, kept in a new
    /// file of `disk`'s directory named after `label` (`.VARIANT.CLASS`).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be made, [`Error::TooLarge`] when
    /// the memory given holds no segment or the address space cannot be
    /// reserved.
    pub(in crate::solver) fn create(base: u64, len: u64, disk: &OnDisk, label: &str) -> Result<DiskTable> {
        let direct = Direct::asked()?;
        let path = disk.dir.join(format!("{label}.codes.tmp-{}", std::process::id()));
        let (file, pending) = new_file(&path)?;
        DiskTable::build(base, len, disk, label, (file, path, Some(pending)), direct)
    }

    /// As [`create`](Self::create), a table whose file outlives it, for a
    /// search that saves checkpoints: `.VARIANT.CLASS.codes`, a file of an
    /// earlier search there replaced (the name is this program's own).
    ///
    /// # Errors
    ///
    /// As [`create`](Self::create).
    pub(in crate::solver) fn create_kept(base: u64, len: u64, disk: &OnDisk, label: &str) -> Result<DiskTable> {
        let direct = Direct::asked()?;
        let path = kept_path(disk, label);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != ErrorKind::NotFound => return Err(Error::Io(path, e)),
            _ => {}
        }
        let (file, pending) = new_file(&path)?;
        // Kept on an interruption: a checkpoint may seal it.
        drop(pending);
        let mut table = DiskTable::build(base, len, disk, label, (file, path, None), direct)?;
        table.persistent = true;
        table.side = Some(side_file(disk, label, true)?);
        crate::files::sync_dir(&disk.dir);
        Ok(table)
    }

    /// The table of `len` positions from `base` whose kept file a
    /// checkpoint sealed as `seals` after the layer before the one coded
    /// `next`: every segment read back and checked, either as sealed or as
    /// that layer left it when the search was stopped inside it
    /// ([`Seal::written_by`]). Returns the table, how many positions that
    /// layer had written, and the segments it had written into.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read, is not of the table's
    /// size, or a segment is neither (the file was changed otherwise).
    pub(in crate::solver) fn reopen(
        base: u64,
        len: u64,
        disk: &OnDisk,
        label: &str,
        seals: &[Seal],
        next: u8,
        visit: &mut dyn FnMut(u64, &[u64], bool),
    ) -> Result<(DiskTable, u64, Vec<usize>)> {
        let direct = Direct::asked()?;
        let path = kept_path(disk, label);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::Io(path.clone(), e))?;
        let mut table = DiskTable::build(base, len, disk, label, (file, path.clone(), None), direct)?;
        table.persistent = true;
        table.side = Some(side_file(disk, label, false)?);
        let damaged = |what: String| Error::Io(path.clone(), std::io::Error::new(ErrorKind::InvalidData, what));
        let segments = table.resident.len();
        if seals.len() != segments {
            return Err(damaged(format!(
                "a checkpoint seals {} segments of a table of {segments}",
                seals.len()
            )));
        }
        let size = table.file.metadata().map_err(|e| Error::Io(path.clone(), e))?.len();
        let (mut wrote, mut changed) = (0, Vec::new());
        let mut now = Vec::with_capacity(segments);
        for (s, sealed) in seals.iter().enumerate() {
            let words = table.words_of(s);
            let at = (s * table.segment_words * 8) as u64;
            let mut bytes = vec![u8::MAX; 8 * words.len()];
            // A segment past the file's end was never written: all unseen.
            if at < size {
                table
                    .file
                    .read_exact_at(&mut bytes, at)
                    .map_err(|e| Error::Io(path.clone(), e))?;
            }
            let seal = Seal::of(&bytes);
            // Of all unseen: as the table was built.
            let unseen = *table
                .seals
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .get(s)
                .expect("a seal a segment");
            // A hole in the file reads as zeros: a segment sealed unseen
            // and never written since.
            let (seal, stored) = if seal != *sealed && *sealed == unseen && bytes.iter().all(|&b| b == 0) {
                bytes.fill(u8::MAX);
                (unseen, false)
            } else {
                (seal, at < size)
            };
            let Some(k) = sealed.written_by(&seal, next) else {
                return Err(damaged(format!(
                    "segment {s} (bytes {at} to {}) is neither as its checkpoint sealed it nor as the next layer would leave it: the disk or another program changed it",
                    at + bytes.len() as u64
                )));
            };
            if k > 0 {
                wrote += k;
                changed.push(s);
            }
            let words: Vec<u64> = words_of_bytes(&bytes).collect();
            visit((s * table.segment_words) as u64 * PER_WORD, &words, k > 0);
            table.stored[s].store(stored, Ordering::Relaxed);
            now.push(seal);
        }
        *table.seals.get_mut().unwrap_or_else(|e| e.into_inner()) = now;
        Ok((table, wrote, changed))
    }

    /// At a layer boundary: writes back every segment that changed,
    /// keeping it resident, syncs the file, and returns every segment's
    /// seal, what a checkpoint of the table keeps.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be written or synced, and a
    /// failure kept from before.
    pub(in crate::solver) fn seal_all(&self) -> Result<Vec<Seal>> {
        self.check()?;
        self.write_back_resident()?;
        self.file.sync_data().map_err(|e| Error::Io(self.path.clone(), e))?;
        Ok(self.seals.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    /// The table of `len` positions from `base` in the codes file `codes`
    /// (its file, its path, and its registration for removal when it is
    /// temporary), none reached, with its spool's files.
    fn build(
        base: u64,
        len: u64,
        disk: &OnDisk,
        label: &str,
        codes: (File, PathBuf, Option<Pending>),
        direct: Option<bool>,
    ) -> Result<DiskTable> {
        let (file, path, pending) = codes;
        let segment_words = (disk.segment_bytes() / 8) as usize;
        debug_assert!(segment_words.is_power_of_two());
        let max_segments = disk.max_segments();
        if max_segments == 0 {
            return Err(Error::TooLarge(format!(
                "a table on disk needs at least {} bytes of memory, {} were given",
                disk.segment_bytes(),
                disk.max_bytes
            )));
        }
        let words = code_words(len) as usize;
        let segments = words.div_ceil(segment_words);
        // Every segment but the last is of one size: their seals of all
        // unseen are one.
        let unseen_of = |words: usize| Seal::of(&vec![u8::MAX; 8 * words]);
        let whole = unseen_of(segment_words);
        let mut unseen = vec![whole; segments];
        if let Some(last) = unseen.last_mut() {
            *last = unseen_of(words - (segments - 1) * segment_words);
        }
        let flags = || (0..segments).map(|_| AtomicBool::new(false)).collect::<Vec<_>>();
        let sorting = Sorting::of(max_segments, segment_words);
        let bucket_segments = sorting.bucket_segments;
        let spool = (0..segments.div_ceil(bucket_segments))
            .map(|b| {
                let path = disk.dir.join(format!("{label}.images-{b}.tmp-{}", std::process::id()));
                let (file, pending) = new_file(&path)?;
                let first = bucket_offset(b, bucket_segments, segment_words);
                let last = bucket_offset(b + 1, bucket_segments, segment_words).min(len);
                Ok(Mutex::new(Bucket::new(file, path, base + first..base + last, pending)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DiskTable {
            base,
            len,
            memory: Reserved::new(segments * segment_words * 8, segment_words * 8 >= HUGE_PAGE)?,
            segment_words,
            segment_shift: segment_words.trailing_zeros(),
            max_segments,
            sorting,
            resident: flags(),
            dirty: flags(),
            stored: flags(),
            sealed: Sealed {
                segment_positions: disk.segment_bytes() / 8 * PER_WORD,
                seals: Vec::new(),
            },
            generation: 0,
            lowest: Mutex::new(LayerLowest::default()),
            side: None,
            carried: None,
            marks: AtomicU64::new(0),
            marked_ns: AtomicU64::new(0),
            seals: Mutex::new(unseen),
            persistent: false,
            direct: Direct::open_if_needed(&path, words as u64 * 8, direct),
            file,
            path,
            loading: Mutex::new(()),
            failed: Mutex::new(None),
            ahead: Mutex::new(None),
            pending,
            spool,
            spooled_in: flags(),
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            demand: AtomicU64::new(0),
            moves: AtomicU64::new(0),
            waited_ns: AtomicU64::new(0),
            spooled: AtomicU64::new(0),
            spool_bytes: AtomicU64::new(0),
            spool_held: AtomicU64::new(0),
            spool_peak: AtomicU64::new(0),
            spool_budget: OnDisk::spool_budget(words as u64 * 8),
            drains: AtomicU64::new(0),
        })
    }

    /// Positions a segment.
    pub(in crate::solver) fn segment_positions(&self) -> u64 {
        self.segment_words as u64 * PER_WORD
    }

    /// What it has read and written so far.
    pub(in crate::solver) fn stats(&self) -> DiskStats {
        DiskStats {
            reads: self.reads.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            demand: self.demand.load(Ordering::Relaxed),
            moved: self.moves.load(Ordering::Relaxed),
            waited_ns: self.waited_ns.load(Ordering::Relaxed),
            spooled: self.spooled.load(Ordering::Relaxed),
            spool_bytes: self.spool_bytes.load(Ordering::Relaxed),
            spool_peak: self.spool_peak.load(Ordering::Relaxed),
            drains: self.drains.load(Ordering::Relaxed),
            marks: self.marks.load(Ordering::Relaxed),
            marked_ns: self.marked_ns.load(Ordering::Relaxed),
        }
    }

    #[inline(always)]
    fn codes(&self) -> Codes<'_> {
        Codes::new(self.memory.words(), self.base)
    }

    /// The segment of position `i`.
    #[inline(always)]
    fn segment_of(&self, i: u64) -> usize {
        (((i - self.base) / PER_WORD) >> self.segment_shift) as usize
    }

    /// The words of segment `s`.
    fn words_of(&self, s: usize) -> Range<usize> {
        let start = s * self.segment_words;
        start..(start + self.segment_words).min(code_words(self.len) as usize)
    }

    /// Makes sure the segment of position `i` is resident.
    #[inline(always)]
    fn present(&self, i: u64) {
        let s = self.segment_of(i);
        if !self.resident[s].load(Ordering::Acquire) {
            self.load_on_demand(s);
        }
    }

    /// Makes sure the segments of positions `cells` are resident.
    #[inline(always)]
    fn present_range(&self, cells: Range<u64>) {
        if cells.is_empty() {
            return;
        }
        for s in self.segment_of(cells.start)..=self.segment_of(cells.end - 1) {
            if !self.resident[s].load(Ordering::Acquire) {
                self.load_on_demand(s);
            }
        }
    }

    #[cold]
    fn load_on_demand(&self, s: usize) {
        let _held = self.loading.lock().unwrap_or_else(|e| e.into_inner());
        if self.resident[s].load(Ordering::Acquire) {
            return;
        }
        self.demand.fetch_add(1, Ordering::Relaxed);
        // No thread reads a segment that is not resident, so its words are
        // ours until it is marked so. A read that fails leaves them wrong:
        // the error is kept, and the search ends with it at the next window
        // or when it is done, before anything is written from them.
        let started = Instant::now();
        if let Err(e) = self.fill(s) {
            self.failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
        }
        self.waited(started);
        self.resident[s].store(true, Ordering::Release);
    }

    /// Reads segment `s` into memory: from the file, or all unseen.
    fn fill(&self, s: usize) -> Result<()> {
        let words = self.words_of(s);
        // SAFETY: segment `s` is not resident, so no thread reads its words.
        let bytes = unsafe { self.memory.bytes_mut(words) };
        if self.stored[s].load(Ordering::Relaxed) {
            self.read_segment(s, bytes)?;
            self.count_io(&self.reads, bytes.len());
        } else {
            bytes.fill(u8::MAX);
        }
        Ok(())
    }

    /// The descriptor a segment's `bytes` at offset `at` are read or
    /// written through: the direct one where they may be ([`Direct`]),
    /// else the file's own.
    fn through(&self, at: u64, bytes: &[u8]) -> &File {
        match &self.direct {
            Some(direct) if Direct::fits(at, bytes) => &direct.0,
            _ => &self.file,
        }
    }

    /// Reads segment `s` from the file into `bytes`, its length, and
    /// checks that it is what was written there.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the read fails or the bytes are not those
    /// written: the file was changed under the search.
    fn read_segment(&self, s: usize, bytes: &mut [u8]) -> Result<()> {
        let at = (s * self.segment_words * 8) as u64;
        self.through(at, bytes)
            .read_exact_at(bytes, at)
            .map_err(|e| Error::Io(self.path.clone(), e))?;
        if xxh3_64(bytes) != self.seals.lock().unwrap_or_else(|e| e.into_inner())[s].exact {
            return Err(Error::Io(
                self.path.clone(),
                std::io::Error::new(
                    ErrorKind::InvalidData,
                    format!(
                        "segment {s} (bytes {at} to {}) read back other than it was written: the disk or another program changed it, so the search stops",
                        at + bytes.len() as u64
                    ),
                ),
            ));
        }
        Ok(())
    }

    /// Writes resident segment `s` back if it changed, and seals it.
    fn write_back(&self, s: usize) -> Result<()> {
        let words = self.words_of(s);
        if self.dirty[s].swap(false, Ordering::Relaxed) {
            // SAFETY: no thread is in the table while segments move, and
            // each segment is written back by one thread.
            let bytes = unsafe { self.memory.bytes_mut(words.clone()) };
            let seal = if self.persistent {
                // What a resume inside this layer needs that the segment
                // does not say, on disk before the segment is.
                self.write_lowest()?;
                Seal::of(bytes)
            } else {
                Seal::exact_of(bytes)
            };
            // A stop between the record and the segment: the record names
            // positions the file does not hold.
            #[cfg(test)]
            tests::failing_write(&self.path)?;
            self.seals.lock().unwrap_or_else(|e| e.into_inner())[s] = seal;
            let at = (s * self.segment_words * 8) as u64;
            self.through(at, bytes)
                .write_all_at(bytes, at)
                .map_err(|e| Error::Io(self.path.clone(), e))?;
            self.count_io(&self.writes, bytes.len());
            self.stored[s].store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Records the lowest positions of the layer being found in the side
    /// file, if they changed since it last did, and syncs it: in the slot
    /// the last record is not in, so that one whole record is always
    /// there.
    fn write_lowest(&self) -> Result<()> {
        let Some((file, path)) = &self.side else {
            return Ok(());
        };
        let mut lowest = self.lowest.lock().unwrap_or_else(|e| e.into_inner());
        if !lowest.changed {
            return Ok(());
        }
        lowest.seq += 1;
        let words = lowest.slot(self.generation);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let at = (lowest.seq % 2) * 8 * SLOT_WORDS as u64;
        file.write_all_at(&bytes, at)
            .and_then(|()| file.sync_data())
            .map_err(|e| Error::Io(path.clone(), e))?;
        lowest.changed = false;
        Ok(())
    }

    /// Marks that layer `layer`'s blocks below `through` are worked whole
    /// ([`Table::mark`]): writes back every changed segment (the record of
    /// the layer's lowest positions first), syncs the file, then records
    /// the segments' seals as written ([`Marked`]) and the mark in the
    /// side file and syncs it, so that a mark on disk vouches for every
    /// write before it. The search claims the spool before it marks, so
    /// every position in the file then has its images there too, but
    /// those of `owed`: a resume completes the orbits only in the
    /// segments changed since, and in those `owed` touches. Returns
    /// whether it marked: not for a table that does not outlive its
    /// search.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be written or synced.
    fn mark(&self, layer: u64, through: u64, owed: &[Range<u64>]) -> Result<bool> {
        let Some((side, side_path)) = self.side.as_ref().filter(|_| self.persistent) else {
            return Ok(false);
        };
        self.check()?;
        let started = Instant::now();
        self.write_back_resident()?;
        self.write_lowest()?;
        self.file.sync_data().map_err(|e| Error::Io(self.path.clone(), e))?;
        let exact: Vec<u64> = self
            .seals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|seal| seal.exact)
            .collect();
        let mut owing = vec![false; exact.len()];
        for cells in owed.iter().filter(|c| !c.is_empty()) {
            (self.segment_of(cells.start)..=self.segment_of(cells.end - 1)).for_each(|s| owing[s] = true);
        }
        let record = Marked::record(self.generation, layer, through, &exact, &owing);
        side.write_all_at(&le_bytes(&record), Marked::AT)
            .and_then(|()| side.sync_data())
            .map_err(|e| Error::Io(side_path.clone(), e))?;
        let words = Progress::record(self.generation, layer, through);
        let slot = self.marks.fetch_add(1, Ordering::Relaxed) % 2;
        side.write_all_at(&le_bytes(&words), Progress::at(slot))
            .and_then(|()| side.sync_data())
            .map_err(|e| Error::Io(side_path.clone(), e))?;
        self.marked_ns
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(true)
    }

    /// Seals the table at a layer boundary for a checkpoint
    /// ([`seal_all`](Self::seal_all)) and starts the next layer's record
    /// of its lowest positions.
    fn seal_boundary(&mut self) -> Result<()> {
        let seals = self.seal_all()?;
        self.generation = generation_of(&seals);
        let lowest = self.lowest.get_mut().unwrap_or_else(|e| e.into_inner());
        *lowest = LayerLowest {
            seq: lowest.seq,
            ..LayerLowest::default()
        };
        self.sealed.seals = seals;
        Ok(())
    }

    /// [`Table::reopen`] for this table: the file read back against
    /// `sealed` and checked against `said` as it is read.
    fn reopen_checked(
        base: u64,
        len: u64,
        sealed: &Sealed,
        (disk, label): (&OnDisk, &str),
        said: &Said<'_>,
        wanted: &Wanted<'_>,
    ) -> std::result::Result<DiskTable, String> {
        let layers = said.found.len() as u64;
        let (newest, next) = (Self::code(layers - 1), Self::code(layers));
        let generation = generation_of(&sealed.seals);
        let side = read_lowest(&side_path(disk, label), generation);
        let also: Vec<u64> = side.as_ref().map_or(Vec::new(), |(_, own, _)| own.clone());
        let mut gathered = Gathered::new(wanted, said, newest, next, &also);
        let cannot = |e: Error| format!("cannot be resumed: {e}");
        let (mut table, wrote, changed) = DiskTable::reopen(
            base,
            len,
            disk,
            label,
            &sealed.seals,
            next,
            &mut |first, words, changed| {
                gathered.segment(first, words, changed);
            },
        )
        .map_err(cannot)?;
        if gathered.reached_beyond() {
            return Err("is refused: its table's file holds positions beyond the table".into());
        }
        contents::check(said, wanted, Self::code, &gathered).map_err(|why| format!("is refused: it {why}"))?;
        table.generation = generation;
        if wrote > 0 {
            let Some((seq, own, mirrored)) = side else {
                return Err(format!(
                    "cannot be resumed: the layer after it wrote {wrote} positions but left no record of the lowest of them"
                ));
            };
            // The lowest positions recorded that the file holds in the
            // layer; those it does not, the layer finds again.
            let lowest = own
                .into_iter()
                .filter(|&i| {
                    gathered
                        .asked(i - base)
                        .is_some_and(|(code, changed)| changed && code == next)
                })
                .collect();
            let segment = table.segment_positions();
            let cells = |s: &usize| base + *s as u64 * segment..(base + (*s as u64 + 1) * segment).min(base + len);
            let through = Progress::read(&side_path(disk, label), generation, layers).unwrap_or(0);
            // The segments whose orbits may lack an image: all it changed,
            // unless the mark recorded the segments as it left them.
            let now = table.seals.get_mut().unwrap_or_else(|e| e.into_inner());
            let marked = (through > 0)
                .then(|| Marked::read(&side_path(disk, label), generation, layers, through, now.len()))
                .flatten();
            let incomplete = changed
                .iter()
                .filter(|&&s| {
                    marked
                        .as_ref()
                        .is_none_or(|(exact, owed)| owed[s] || exact[s] != now[s].exact)
                })
                .map(cells)
                .collect();
            table.carried = Some(Carried {
                count: wrote,
                lowest,
                mirrored,
                changed: changed.iter().map(cells).collect(),
                incomplete,
                through,
            });
            // The next record is of this layer, found again, into the
            // slot the newest is not in.
            let lowest = table.lowest.get_mut().unwrap_or_else(|e| e.into_inner());
            lowest.seq = seq;
            let carried = table.carried.as_ref().expect("just set");
            carried.lowest.iter().for_each(|&i| lowest.own.offer(i));
            carried.mirrored.iter().for_each(|&h| lowest.mirrored.offer(h));
        }
        table.sealed.seals = sealed.seals.clone();
        Ok(table)
    }

    fn count_io(&self, count: &AtomicU64, bytes: usize) {
        count.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts the time since `started` as time the search waited on the
    /// disk.
    fn waited(&self, started: Instant) {
        self.waited_ns
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Calls `io` on each of `segments` (a read or a write of one segment
    /// each), at least [`PARALLEL_BYTES`] of segments to a task, and counts
    /// the time until all are done as time waited on the disk. The
    /// segments' bytes are apart, so their reads and writes go to the disk
    /// side by side. Past the page cache ([`Direct`]) they go on up to
    /// [`IO_THREADS`] threads of their own: while one thread checks or
    /// seals a segment on a core, the others wait on the disk. Through
    /// the cache a move is mostly the kernel's copy, on a core, and they go
    /// on the pool's threads, one a core (eight threads there cost 11x8 on
    /// disk 1.115 times the wall). The first error is returned, and the
    /// tasks not yet started then are not.
    fn on_every_thread(&self, segments: &[usize], io: impl Fn(usize) -> Result<()> + Sync) -> Result<()> {
        if segments.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let per_task = (PARALLEL_BYTES / (self.segment_words * 8)).max(1);
        let done = match self.direct {
            Some(_) => on_threads(segments.chunks(per_task).collect(), IO_THREADS, io),
            None => segments.par_iter().with_min_len(per_task).try_for_each(|&s| io(s)),
        };
        self.waited(started);
        done
    }

    /// Writes back every resident segment that changed, on the threads of
    /// [`on_every_thread`](Self::on_every_thread).
    fn write_back_resident(&self) -> Result<()> {
        self.on_every_thread(&self.resident_segments(), |s| self.write_back(s))
    }

    /// The segments now resident, in order.
    fn resident_segments(&self) -> Vec<usize> {
        (0..self.resident.len())
            .filter(|&s| self.resident[s].load(Ordering::Relaxed))
            .collect()
    }

    /// Makes exactly the segments `scope` (ascending) resident: writes back
    /// and releases the others, then reads those missing. No thread may be
    /// in the table meanwhile.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read or written.
    pub(in crate::solver) fn reside(&self, scope: &[u32]) -> Result<()> {
        self.check()?;
        self.stop_reading_ahead();
        let mut wanted = vec![false; self.resident.len()];
        scope.iter().for_each(|&s| wanted[s as usize] = true);
        let mut leaving = self.resident_segments();
        leaving.retain(|&s| !wanted[s]);
        self.on_every_thread(&leaving, |s| self.write_back(s))?;
        let coming: Vec<usize> = scope
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| !self.resident[s].load(Ordering::Relaxed))
            .collect();
        self.hand_over(&leaving, &coming);
        self.on_every_thread(&coming, |s| {
            self.fill(s)?;
            self.resident[s].store(true, Ordering::Release);
            Ok(())
        })
    }

    /// Makes segments `leaving`, written back, not resident, and gives
    /// their pages to segments `coming` as far as they go
    /// ([`Reserved::move_pages`]), so that a window's segments come in
    /// without the system zeroing fresh pages for them; the pages of the
    /// rest go back to the system. No thread may be in the table
    /// meanwhile.
    fn hand_over(&self, leaving: &[usize], coming: &[usize]) {
        let whole = |s: &usize| self.words_of(*s).len() == self.segment_words;
        let mut given = vec![false; self.resident.len()];
        let takers = coming.iter().filter(|s| whole(s));
        for (&giver, &taker) in leaving.iter().filter(|s| whole(s)).zip(takers) {
            if !self.memory.move_pages(self.words_of(giver), self.words_of(taker)) {
                break;
            }
            given[giver] = true;
            self.moves.fetch_add(1, Ordering::Relaxed);
        }
        for &s in leaving {
            self.resident[s].store(false, Ordering::Release);
            if !given[s] {
                self.memory.release(self.words_of(s));
            }
        }
    }

    /// Starts a thread that asks the system to read into its page cache
    /// the segments of `scope` that [`reside`](Self::reside) would read
    /// now (stored, not resident), in order, as many as half the memory
    /// available holds; the thread before it is stopped first. The search
    /// works the window meanwhile, and the next `reside` finds them read.
    /// Only a hint: what cannot be started is not.
    fn read_ahead(&self, scope: &[u32]) {
        self.stop_reading_ahead();
        // Direct reads do not look in the page cache.
        if self.direct.is_some() {
            return;
        }
        let Some(mut budget) = crate::system::available_memory().map(|bytes| bytes / 2) else {
            return;
        };
        let mut ranges = Vec::new();
        for s in scope.iter().map(|&s| s as usize) {
            if self.resident[s].load(Ordering::Relaxed) || !self.stored[s].load(Ordering::Relaxed) {
                continue;
            }
            let words = self.words_of(s);
            let len = (words.len() * 8) as u64;
            let Some(left) = budget.checked_sub(len) else {
                break;
            };
            budget = left;
            ranges.push(((words.start * 8) as u64, len));
        }
        // A few segments are read as soon as asked for.
        if ranges.iter().map(|&(_, len)| len).sum::<u64>() < READ_AHEAD_BYTES {
            return;
        }
        if let Ok(file) = self.file.try_clone() {
            *self.ahead.lock().unwrap_or_else(|e| e.into_inner()) = ReadAhead::start(file, ranges);
        }
    }

    /// Stops the thread of [`read_ahead`](Self::read_ahead), if one runs,
    /// and waits for it: at most the read of a segment.
    fn stop_reading_ahead(&self) {
        if let Some(ahead) = self.ahead.lock().unwrap_or_else(|e| e.into_inner()).take() {
            ahead.stop();
        }
    }

    /// Appends positions `images` to the files of their buckets, a frame
    /// a bucket ([`Bucket::append`]). A write that fails is kept, as a
    /// failed load on demand is.
    fn spool_images(&self, images: impl Iterator<Item = u64>) {
        let mut by_bucket: Vec<Vec<u64>> = vec![Vec::new(); self.spool.len()];
        for i in images {
            let s = self.segment_of(i);
            by_bucket[s / self.sorting.bucket_segments].push(i);
            if !self.spooled_in[s].load(Ordering::Relaxed) {
                self.spooled_in[s].store(true, Ordering::Relaxed);
            }
        }
        for (b, (bucket, mut batch)) in self.spool.iter().zip(by_bucket).enumerate() {
            if batch.is_empty() {
                continue;
            }
            let images = batch.len() as u64;
            // Sorted and coded before the lock, and not timed as I/O.
            let frame = Frame::of(
                &mut batch,
                self.base + bucket_offset(b, self.sorting.bucket_segments, self.segment_words),
            );
            let started = Instant::now();
            let mut bucket = bucket.lock().unwrap_or_else(|e| e.into_inner());
            match bucket.append(&frame) {
                Ok(bytes) => {
                    self.spool_bytes.fetch_add(bytes, Ordering::Relaxed);
                    self.spool_held.fetch_add(bytes, Ordering::Relaxed);
                }
                Err(e) => {
                    let e = Error::Io(bucket.path.clone(), e);
                    self.failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                }
            }
            self.spooled.fetch_add(images, Ordering::Relaxed);
            self.waited_ns
                .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
    }

    /// Calls `take` with the spooled positions, bucket after bucket, the
    /// bucket's segments that have any resident, a run at a time, each
    /// sorted and without repeats ([`Sorting`]); then empties the spool.
    /// No thread may be in the table meanwhile.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when a file cannot be read or written or a spool file
    /// does not hold what was written, and a spool write that failed
    /// before.
    fn unspool_images(&self, take: &mut dyn FnMut(&[u64])) -> Result<()> {
        self.check()?;
        let held = self.spool_held.swap(0, Ordering::Relaxed);
        self.spool_peak.fetch_max(held, Ordering::Relaxed);
        if held >= self.spool_budget {
            self.drains.fetch_add(1, Ordering::Relaxed);
        }
        let Sorting { bucket_segments, run } = self.sorting;
        for (b, bucket) in self.spool.iter().enumerate() {
            let mut bucket = bucket.lock().unwrap_or_else(|e| e.into_inner());
            if bucket.is_empty() {
                continue;
            }
            let first = b * bucket_segments;
            let scope: Vec<u32> = (first..(first + bucket_segments).min(self.resident.len()))
                .filter(|&s| self.spooled_in[s].swap(false, Ordering::Relaxed))
                .map(|s| s as u32)
                .collect();
            self.reside(&scope)?;
            // A frame holds a part of a window's images, a few thousand:
            // they are gathered into a run, which is sorted and handed on
            // whole, to be claimed on every thread. The run never grows
            // past the memory it was given.
            let mut held = Vec::with_capacity(run);
            let hand_on = |held: &mut Vec<u64>, take: &mut dyn FnMut(&[u64])| {
                held.par_sort_unstable();
                held.dedup();
                take(held);
                held.clear();
            };
            let (_, reading) = bucket
                .drain(run, &mut |positions| {
                    if held.len() + positions.len() > run {
                        hand_on(&mut held, take);
                    }
                    held.extend_from_slice(positions);
                })
                .map_err(|e| Error::Io(bucket.path.clone(), e))?;
            if !held.is_empty() {
                hand_on(&mut held, take);
            }
            self.waited_ns.fetch_add(reading.as_nanos() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The error of a load on demand that failed, if one did.
    fn check(&self) -> Result<()> {
        match self.failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Calls `io` on each segment of `tasks` on up to `threads` threads of
/// their own, each taking the next task as it finishes one: the first
/// error is returned, and the tasks not yet started then are not.
fn on_threads(tasks: Vec<&[usize]>, threads: usize, io: impl Fn(usize) -> Result<()> + Sync) -> Result<()> {
    let (next, failed) = (AtomicUsize::new(0), Mutex::new(None));
    let work = || {
        while let Some(task) = tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
            if let Err(e) = task.iter().try_for_each(|&s| io(s)) {
                failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                next.store(tasks.len(), Ordering::Relaxed);
            }
        }
    };
    match tasks.len().min(threads) {
        1 => work(),
        threads => std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        }),
    }
    failed
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .map_or(Ok(()), Err)
}

/// The kept codes file of the table named after `label`, in `disk`'s
/// directory (as `checkpoint::table_files` names it, to remove it).
pub(in crate::solver) fn kept_path(disk: &OnDisk, label: &str) -> PathBuf {
    disk.dir.join(format!("{label}.codes"))
}

/// The side file of a kept table: the lowest positions of the layer being
/// found ([`LayerLowest`]).
fn side_path(disk: &OnDisk, label: &str) -> PathBuf {
    disk.dir.join(format!("{label}.codes.lowest"))
}

/// The side file of the kept table named after `label`: made anew, or
/// opened as it is to go on.
fn side_file(disk: &OnDisk, label: &str, new: bool) -> Result<(File, PathBuf)> {
    let path = side_path(disk, label);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(new)
        .open(&path)
        .map_err(|e| Error::Io(path.clone(), e))?;
    Ok((file, path))
}

/// Words of a record in the side file: the generation it is of, its
/// sequence number, the count and [`HARDEST`] slots of the lowest
/// positions, the same of the mirror images' hashes, and the XXH3-64 of
/// the rest.
const SLOT_WORDS: usize = 5 + 2 * HARDEST;

/// The lowest positions the layer being found has written into a kept
/// table, and the lowest hashes of their mirror images, as far as the
/// search told it ([`Table::hardest`]).
#[derive(Default)]
struct LayerLowest {
    own: Lowest,
    mirrored: Lowest,
    /// Whether they changed since the side file last recorded them.
    changed: bool,
    /// How many records the side file has had.
    seq: u64,
}

impl LayerLowest {
    /// Its record in the side file, of the boundary `generation`.
    fn slot(&self, generation: u64) -> [u64; SLOT_WORDS] {
        let mut words = [0u64; SLOT_WORDS];
        words[0] = generation;
        words[1] = self.seq;
        for (at, lowest) in [(2, &self.own), (3 + HARDEST, &self.mirrored)] {
            words[at] = lowest.as_slice().len() as u64;
            words[at + 1..at + 1 + lowest.as_slice().len()].copy_from_slice(lowest.as_slice());
        }
        words[SLOT_WORDS - 1] = xxh3_64(&le_bytes(&words[..SLOT_WORDS - 1]));
        words
    }
}

/// The sequence number, lowest positions and mirror hashes of the newest
/// whole record in the side file at `path` of the boundary `generation`,
/// if it holds one.
fn read_lowest(path: &Path, generation: u64) -> Option<(u64, Vec<u64>, Vec<u64>)> {
    let mut bytes = vec![0u8; 2 * 8 * SLOT_WORDS];
    let file = File::open(path).ok()?;
    file.read_exact_at(&mut bytes, 0).ok()?;
    let words: Vec<u64> = words_of_bytes(&bytes).collect();
    let record = |w: &[u64]| -> Option<(u64, Vec<u64>, Vec<u64>)> {
        if w[0] != generation || w[SLOT_WORDS - 1] != xxh3_64(&le_bytes(&w[..SLOT_WORDS - 1])) {
            return None;
        }
        let list = |at: usize| {
            let n = usize::try_from(w[at]).ok().filter(|&n| n <= HARDEST)?;
            let list = w[at + 1..at + 1 + n].to_vec();
            list.windows(2).all(|p| p[0] < p[1]).then_some(list)
        };
        Some((w[1], list(2)?, list(3 + HARDEST)?))
    };
    words.chunks_exact(SLOT_WORDS).filter_map(record).max_by_key(|r| r.0)
}

/// The side file's record of how far the layer being found has gone
/// ([`DiskTable::mark`]), after the two records of its lowest positions:
/// two slots, written in turn, each of the boundary's generation, the
/// layer, the block below which that layer is worked whole, and the
/// XXH3-64 of the three, so that a torn write leaves the other slot.
/// A side file written before there were marks has none, and a search
/// resumed from it works the whole layer again.
struct Progress;

impl Progress {
    const WORDS: usize = 4;

    /// Where slot `slot` starts in the side file.
    const fn at(slot: u64) -> u64 {
        (2 * SLOT_WORDS as u64 + slot * Self::WORDS as u64) * 8
    }

    fn record(generation: u64, layer: u64, through: u64) -> [u64; Self::WORDS] {
        let mut words = [generation, layer, through, 0];
        words[3] = xxh3_64(&le_bytes(&words[..3]));
        words
    }

    /// The furthest mark of layer `layer` after the boundary `generation`
    /// in the side file at `path`, if it holds one whole. Within a layer
    /// the marks only grow, so the other slot holds an earlier one.
    /// Each slot is read on its own: after one mark, the file ends with
    /// the first.
    fn read(path: &Path, generation: u64, layer: u64) -> Option<u64> {
        let file = File::open(path).ok()?;
        (0..2)
            .filter_map(|slot| {
                let mut bytes = [0u8; 8 * Self::WORDS];
                file.read_exact_at(&mut bytes, Self::at(slot)).ok()?;
                let words: Vec<u64> = words_of_bytes(&bytes).collect();
                (*words == Self::record(generation, layer, words[2])).then_some(words[2])
            })
            .max()
    }
}

/// What a mark records of the table's segments as it left them in the
/// file, after the marks' slots in the side file: the mark's boundary
/// (generation), layer and white set, then the exact checksum of each
/// segment, a bit for each segment whose orbits the mark still owed, and
/// the XXH3-64 of all that. A resume completes the orbits only of the
/// segments changed since ([`Carried::incomplete`]); a record torn, or of
/// another mark than the newest whole one, is none, and every segment the
/// layer changed is completed.
struct Marked;

impl Marked {
    /// Where the record starts in the side file.
    const AT: u64 = Progress::at(2);

    /// Words before the seals.
    const HEAD: usize = 4;

    fn words(segments: usize) -> usize {
        Self::HEAD + segments + segments.div_ceil(64) + 1
    }

    fn record(generation: u64, layer: u64, through: u64, exact: &[u64], owed: &[bool]) -> Vec<u64> {
        let mut words = vec![generation, layer, through, exact.len() as u64];
        words.extend_from_slice(exact);
        words.extend(owed.chunks(64).map(|bits| {
            bits.iter()
                .enumerate()
                .fold(0u64, |w, (k, &owes)| w | u64::from(owes) << k)
        }));
        words.push(xxh3_64(&le_bytes(&words)));
        words
    }

    /// The seals and debts of the mark of layer `layer` below `through`
    /// after the boundary `generation`, for a table of `segments`
    /// segments, if the side file at `path` holds its whole record. Its
    /// length is the table's, not the file's to say.
    fn read(path: &Path, generation: u64, layer: u64, through: u64, segments: usize) -> Option<(Vec<u64>, Vec<bool>)> {
        let file = File::open(path).ok()?;
        let mut bytes = vec![0u8; 8 * Self::words(segments)];
        file.read_exact_at(&mut bytes, Self::AT).ok()?;
        let words: Vec<u64> = words_of_bytes(&bytes).collect();
        let exact = &words[Self::HEAD..Self::HEAD + segments];
        let bits = &words[Self::HEAD + segments..words.len() - 1];
        let owed: Vec<bool> = (0..segments).map(|s| bits[s / 64] >> (s % 64) & 1 == 1).collect();
        (words == Self::record(generation, layer, through, exact, &owed)).then(|| (exact.to_vec(), owed))
    }
}

/// The little-endian bytes of `words`.
fn le_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The checksum of a boundary's seals, which names the boundary.
fn generation_of(seals: &[Seal]) -> u64 {
    let words: Vec<u64> = seals.iter().flat_map(Seal::to_words).collect();
    xxh3_64(&le_bytes(&words))
}

/// The little-endian words `bytes` hold.
fn words_of_bytes(bytes: &[u8]) -> impl ExactSizeIterator<Item = u64> + Clone + '_ {
    bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("chunks of 8 bytes")))
}

impl Drop for DiskTable {
    fn drop(&mut self) {
        self.stop_reading_ahead();
        let spool = self
            .spool
            .iter_mut()
            .map(|b| b.get_mut().unwrap_or_else(|e| e.into_inner()).path.clone());
        let codes = (!self.persistent).then(|| self.path.clone());
        for path in codes.into_iter().chain(spool) {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => crate::text::say!("bishops: cannot remove {}: {e}", path.display()),
            }
        }
    }
}

impl Table for DiskTable {
    /// The codes, and what reading and writing them took; or what the disk
    /// failed with.
    type Done = Result<(Mod3File, DiskStats)>;

    // The codes are those of the two-bit table in memory.
    const DEEPEST: u16 = CodeTable::DEEPEST;
    const UNSEEN: u8 = CodeTable::UNSEEN;
    const BITS: u64 = CodeTable::BITS;
    const CODING: Coding = CodeTable::CODING;

    #[inline(always)]
    fn code(depth: u64) -> u8 {
        CodeTable::code(depth)
    }

    fn scan_bound(found: &[u64]) -> u64 {
        CodeTable::scan_bound(found)
    }

    fn fresh(base: u64, len: u64, disk: Option<&OnDisk>, label: &str) -> Result<Option<DiskTable>> {
        let disk = disk.ok_or_else(|| Error::Usage("a table on disk needs a directory and a memory cap".into()))?;
        match disk.kept {
            true => DiskTable::create_kept(base, len, disk, label).map(Some),
            false => DiskTable::create(base, len, disk, label).map(Some),
        }
    }

    fn unseen(_: u64, _: u64) -> DiskTable {
        unreachable!("a table on disk is made by DiskTable::create, in its directory")
    }

    fn from_words(_: u64, _: u64, _: Vec<u64>) -> DiskTable {
        unreachable!("a table on disk is searched by one worker, whose range never moves")
    }

    fn into_words(self) -> Vec<u64> {
        unreachable!("a table on disk is searched by one worker, whose range never moves")
    }

    /// The table left in its file: every segment that changed written
    /// back, and the memory of the search given back; what is read of it
    /// from then on is checked against what was written.
    fn finish(mut self) -> Result<(Mod3File, DiskStats)> {
        assert_eq!(self.base, 0, "a table on disk is a whole class");
        self.check()?;
        self.write_back_resident()?;
        let stats = self.stats();
        let seals = self.seals.get_mut().unwrap_or_else(|e| e.into_inner());
        let seals: Vec<_> = seals
            .iter()
            .zip(&self.stored)
            .map(|(seal, stored)| stored.load(Ordering::Relaxed).then_some(seal.exact))
            .collect();
        // The file is the new table's from here, and so is the removal of
        // a file made for the search alone; dropping this one removes the
        // spool and leaves the file.
        let file = self.file.try_clone().map_err(|e| Error::Io(self.path.clone(), e))?;
        let pending = self.pending.take();
        self.persistent = true;
        let max_bytes = (self.max_segments * self.segment_words * 8) as u64;
        let codes = Mod3File::open(
            (file, self.path.clone()),
            self.len,
            self.segment_words,
            &seals,
            max_bytes,
            pending,
        )?;
        Ok((codes, stats))
    }

    #[inline(always)]
    fn scan<W: Word>(
        &self,
        index: &TightIndex<W>,
        r: u64,
        safe: Bitboard<W>,
        want: u8,
        f: impl FnMut(u64, Bitboard<W>),
    ) {
        self.present_range(index.block(r));
        self.codes().scan(index, r, safe, want, f);
    }

    fn count(&self, cells: Range<u64>, want: u8) -> u64 {
        self.present_range(cells.clone());
        let load = |w: &AtomicU64| w.load(Ordering::Relaxed);
        count_codes(
            self.memory.words(),
            load,
            cells.start - self.base..cells.end - self.base,
            want,
        )
    }

    #[inline(always)]
    fn matching(&self, start: u64, len: usize, want: u8) -> u64 {
        self.present_range(start..start + len as u64);
        self.codes().matching(start, len, want)
    }

    #[inline(always)]
    fn at(&self, i: u64, here: u8) -> bool {
        self.present(i);
        self.codes().code(i) == here
    }

    /// Between layers: from memory when its segment is resident, else
    /// from the segment read through the file and checked, without making
    /// it resident (a watched position is asked after every layer). A
    /// read that fails is kept, as a failed load on demand is.
    fn reached(&self, i: u64) -> bool {
        let s = self.segment_of(i);
        if self.resident[s].load(Ordering::Acquire) {
            return self.codes().code(i) != UNSEEN;
        }
        if !self.stored[s].load(Ordering::Relaxed) {
            return false;
        }
        let words = self.words_of(s);
        let mut bytes = vec![0u8; 8 * words.len()];
        let k = i - self.base;
        let at = 8 * (k / PER_WORD) as usize - 8 * words.start;
        match self.read_segment(s, &mut bytes) {
            Ok(()) => {
                let word = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
                (word >> (2 * (k % PER_WORD))) & 3 != u64::from(UNSEEN)
            }
            Err(e) => {
                self.failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                false
            }
        }
    }

    #[inline(always)]
    fn claim(&self, i: u64, next: u8, claim: Claim) -> bool {
        self.present(i);
        let codes = self.codes();
        let wrote = match claim {
            Claim::Reached | Claim::Sent => codes.code(i) == UNSEEN && codes.write(i, next),
            Claim::Unseen => codes.write(i, next),
        };
        if wrote {
            let dirty = &self.dirty[self.segment_of(i)];
            if !dirty.load(Ordering::Relaxed) {
                dirty.store(true, Ordering::Relaxed);
            }
        }
        wrote
    }

    #[inline(always)]
    fn prefetch(&self, i: u64, _: Claim) {
        if self.resident[self.segment_of(i)].load(Ordering::Relaxed) {
            prefetch(self.codes().word(i));
        }
    }

    fn begin_layer(&mut self, _: u8, _: bool) {}

    fn end_layer(&mut self, _: u8, _: bool) {}

    /// Its seals at the last boundary ([`seal`](Table::seal)): a table on
    /// disk is not saved by copy.
    fn stored(&self) -> StoredRef<'_> {
        StoredRef::Sealed(&self.sealed)
    }

    fn from_stored(_: u64, _: u64, _: Stored) -> Option<DiskTable> {
        None
    }

    fn segments(&self) -> Option<(u64, usize, usize)> {
        Some((self.segment_positions(), self.resident.len(), self.max_segments))
    }

    fn kept_in(disk: &OnDisk) -> Option<u64> {
        disk.kept.then(|| disk.segment_bytes() / 8 * PER_WORD)
    }

    fn kept(&self) -> bool {
        self.persistent
    }

    fn seal(&mut self) -> Result<()> {
        self.seal_boundary()
    }

    fn hardest(&self, i: Option<u64>, mirrored: Option<u64>) {
        if !self.persistent {
            return;
        }
        let mut lowest = self.lowest.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = i.filter(|&i| lowest.own.admits(i)) {
            lowest.own.offer(i);
            lowest.changed = true;
        }
        if let Some(h) = mirrored.filter(|&h| lowest.mirrored.admits(h)) {
            lowest.mirrored.offer(h);
            lowest.changed = true;
        }
    }

    fn reopen(
        base: u64,
        len: u64,
        sealed: &Sealed,
        at: (&OnDisk, &str),
        said: &Said<'_>,
        wanted: &Wanted<'_>,
    ) -> std::result::Result<DiskTable, String> {
        DiskTable::reopen_checked(base, len, sealed, at, said, wanted)
    }

    fn take_carried(&mut self) -> Option<Carried> {
        self.carried.take()
    }

    fn carried(&self) -> Option<&Carried> {
        self.carried.as_ref()
    }

    fn mark(&self, layer: u64, through: u64, owed: &[Range<u64>]) -> Result<bool> {
        DiskTable::mark(self, layer, through, owed)
    }

    fn reside(&self, scope: &[u32]) -> Result<()> {
        DiskTable::reside(self, scope)
    }

    fn read_ahead(&self, scope: &[u32]) {
        DiskTable::read_ahead(self, scope);
    }

    #[inline(always)]
    fn resident(&self, i: u64) -> bool {
        self.resident[self.segment_of(i)].load(Ordering::Acquire)
    }

    fn spool(&self, images: impl Iterator<Item = u64>) {
        self.spool_images(images);
    }

    fn disk_stats(&self) -> Option<DiskStats> {
        Some(self.stats())
    }

    fn spool_full(&self) -> bool {
        self.spool_held.load(Ordering::Relaxed) >= self.spool_budget
    }

    fn unspool(&self, take: &mut dyn FnMut(&[u64])) -> Result<()> {
        self.unspool_images(take)
    }
}

/// The windows a search of a table on disk works its blocks in: runs of
/// consecutive blocks, and for each the segments it reads and writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(in crate::solver) struct Windows {
    /// `cuts[k]..cuts[k + 1]`: the blocks of window `k`.
    pub(in crate::solver) cuts: Vec<u64>,
    /// `scopes[k]`: the segments of window `k`, ascending.
    pub(in crate::solver) scopes: Vec<Vec<u32>>,
}

impl Windows {
    /// Cuts `blocks` into windows of at most `max` segments of
    /// `segment_positions` positions each, greedily in block order, where
    /// `scope(r, f)` calls `f` with the positions block `r` reads or
    /// writes (its own, and those of the blocks its white moves reach).
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] when one block's scope alone is more than `max`
    /// segments.
    pub(in crate::solver) fn cut(
        blocks: Range<u64>,
        segments: usize,
        segment_positions: u64,
        max: usize,
        scope: impl Fn(u64, &mut dyn FnMut(Range<u64>)),
    ) -> Result<Windows> {
        let mut windows = Windows {
            cuts: vec![blocks.start],
            scopes: Vec::new(),
        };
        // `mark[s] == epoch`: segment `s` is in the window being cut.
        let (mut mark, mut epoch) = (vec![0u32; segments], 1u32);
        let (mut current, mut mine): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for r in blocks.clone() {
            mine.clear();
            scope(r, &mut |cells| {
                if !cells.is_empty() {
                    mine.extend(
                        (cells.start / segment_positions) as u32..=((cells.end - 1) / segment_positions) as u32,
                    );
                }
            });
            mine.sort_unstable();
            mine.dedup();
            if mine.len() > max {
                // A segment holds four positions a byte.
                let bytes = |segments: usize| crate::system::human_bytes(segments as u64 * segment_positions / 4);
                return Err(Error::TooLarge(format!(
                    "a table on disk needs at least {} in memory here (white set {r} and those one white move away span {} segments), and the memory left for it holds {}: raise --max-memory",
                    bytes(mine.len()),
                    mine.len(),
                    bytes(max)
                )));
            }
            let new = mine.iter().filter(|&&s| mark[s as usize] != epoch).count();
            if current.len() + new > max {
                windows.cuts.push(r);
                current.sort_unstable();
                windows.scopes.push(std::mem::take(&mut current));
                epoch += 1;
            }
            for &s in &mine {
                if mark[s as usize] != epoch {
                    mark[s as usize] = epoch;
                    current.push(s);
                }
            }
        }
        if windows.scopes.len() + 1 == windows.cuts.len() {
            windows.cuts.push(blocks.end);
            current.sort_unstable();
            windows.scopes.push(current);
        }
        Ok(windows)
    }

    /// The blocks of each window.
    pub(in crate::solver) fn blocks(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.cuts.windows(2).map(|c| c[0]..c[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::search::{Asked, board, in_memory_asked, on_disk_asked};

    /// Which 4 KiB pages of `file`'s first `len` bytes are in the page
    /// cache.
    fn cached_pages(file: &File, len: usize) -> Vec<bool> {
        use std::os::fd::AsRawFd;
        // SAFETY: a read-only shared mapping of an open file, unmapped
        // below, only asked which of its pages are resident.
        unsafe {
            let at = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(at, libc::MAP_FAILED);
            let mut pages = vec![0u8; len.div_ceil(4096)];
            assert_eq!(libc::mincore(at, len, pages.as_mut_ptr()), 0);
            libc::munmap(at, len);
            pages.iter().map(|p| p & 1 == 1).collect()
        }
    }

    /// What a read ahead asks for is in the page cache once it is done,
    /// and what it was not asked for is not: the ranges are bytes of the
    /// file. (Where the file system keeps every page cached, as a tmpfs
    /// does, nothing can be told, and the test says so.)
    #[test]
    fn a_read_ahead_brings_its_ranges_into_the_page_cache() {
        use std::os::fd::AsRawFd;
        let path = std::env::temp_dir().join(format!("bishops-read-ahead-{}", std::process::id()));
        let len = 4 << 20;
        std::fs::write(&path, vec![7u8; len]).unwrap();
        let file = File::open(&path).unwrap();
        file.sync_all().unwrap();
        // SAFETY: advice on an open descriptor; it only drops clean pages.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if cached_pages(&file, len).iter().any(|&p| p) {
            std::fs::remove_file(&path).unwrap();
            eprintln!(
                "the page cache of {} cannot be emptied here: nothing to tell",
                path.display()
            );
            return;
        }
        let ranges = vec![(1 << 20, 1 << 20), (3 << 20, 512 << 10)];
        ReadAhead::start(file.try_clone().unwrap(), ranges).unwrap().finish();
        // The reads were asked for, not waited for.
        let started = Instant::now();
        let cached = loop {
            let cached = cached_pages(&file, len);
            if cached[256..512].iter().all(|&p| p) && cached[768..896].iter().all(|&p| p) {
                break cached;
            }
            assert!(started.elapsed().as_secs() < 30, "the ranges were never read");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        std::fs::remove_file(&path).unwrap();
        let outside = cached[..256].iter().chain(&cached[512..768]).filter(|&&p| p).count();
        // The system's own read-ahead may take a little past a range.
        assert!(outside < 64, "{outside} pages outside the ranges");
    }

    /// A directory whose tables' segment writes fail once this many more
    /// have been made: a test's way to stop a search inside a layer.
    static FAIL_WRITES: Mutex<Option<(PathBuf, u64)>> = Mutex::new(None);

    /// Fails a write into the file at `path` as [`FAIL_WRITES`] says.
    pub(super) fn failing_write(path: &Path) -> Result<()> {
        let mut fail = FAIL_WRITES.lock().unwrap_or_else(|e| e.into_inner());
        match fail.as_mut() {
            Some((dir, left)) if path.parent() == Some(dir.as_path()) => {
                if *left == 0 {
                    *fail = None;
                    return Err(Error::Io(
                        path.to_path_buf(),
                        std::io::Error::other("a write that fails, on purpose"),
                    ));
                }
                *left -= 1;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    #[test]
    fn a_search_stopped_between_two_writes_of_a_layer_resumes_it() {
        use crate::checkpoint::{CheckpointOptions, Checkpointer};
        use crate::solver::{Method, Plan};
        let variant = crate::Variant::named("9x8").unwrap();
        let memory = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
        let options = CheckpointOptions {
            interval: std::time::Duration::ZERO,
            ..CheckpointOptions::default()
        };
        let mut marked = false;
        // Stopped early, in the middle and late in the search.
        for writes in [700, 9_000, 30_000] {
            let (dir, disk) = disk_in(&format!("inside-{writes}"), 1 << 20, true);
            let plan = || Plan::new(&variant, Method::TwoBit).on_disk(disk.clone());
            let mut notes = Vec::new();
            let mut note = |text: &str| notes.push(text.to_owned());
            *FAIL_WRITES.lock().unwrap() = Some((dir.clone(), writes));
            let mut checkpoints = Checkpointer::new(&dir, &variant, options, &mut note);
            let stopped = plan().solve_on_disk_with(&mut checkpoints, &mut |_| {});
            assert!(
                stopped.is_err_and(|e| e.to_string().contains("a write that fails, on purpose")),
                "{writes}"
            );
            // Stopped again a few layers on, so that the checkpoint saved
            // after the resumed layer is read back.
            *FAIL_WRITES.lock().unwrap() = Some((dir.clone(), 4_000));
            let again = plan().solve_on_disk_with(&mut checkpoints, &mut |_| {});
            assert!(again.is_err(), "{writes}: the search ended before the second stop");
            let (disk, _) = plan().solve_on_disk_with(&mut checkpoints, &mut |_| {}).unwrap();
            drop(checkpoints);
            let kept = "the layer after the checkpoint of class a1 had written ";
            assert!(notes.iter().any(|n| n.starts_with(kept)), "{writes}: {notes:?}");
            // Marked after every window, at this interval: unless stopped
            // in the layer's first window, the resumed layer works only
            // the blocks after the last mark.
            marked |= notes
                .iter()
                .any(|n| n.starts_with(kept) && n.contains("were worked whole"));
            // A resume goes on from the last mark the stopped search told of.
            let resumed = notes.iter().position(|n| n.starts_with(kept)).unwrap();
            let below = |n: &str| {
                n.split(" below ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .map(str::to_owned)
            };
            if let Some(r) = below(&notes[resumed]) {
                let told = notes[..resumed]
                    .iter()
                    .rev()
                    .find(|n| n.contains("are worked whole, marked on disk"));
                assert_eq!(told.and_then(|n| below(n)), Some(r), "{writes}: {notes:?}");
            }
            assert!(!notes.iter().any(|n| n.contains("starts over")), "{writes}: {notes:?}");
            for (d, m) in disk.classes.iter().zip(&memory.classes) {
                assert_eq!(d.stats, m.stats, "{writes}: class {:?}", m.class);
                let d = d.own().map(|file| file.load().unwrap());
                assert_eq!(d.as_ref(), m.own(), "{writes}: class {:?}", m.class);
            }
            crate::checkpoint::remove(&dir, &variant);
            std::fs::remove_dir(&dir).unwrap();
        }
        assert!(marked, "no resume went on from a mark inside its layer");
    }

    /// A side file's marks read back: after one mark the file ends with
    /// its first slot (13x10's first resume from a mark read none, having
    /// asked for both slots at once); the furthest whole mark of the
    /// layer and boundary asked wins; a torn, stale or foreign one counts
    /// for nothing.
    #[test]
    fn the_furthest_whole_mark_of_the_layer_is_read_back() {
        let dir = std::env::temp_dir().join(format!("bishops-marks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("side");
        let lowest = vec![0u8; 2 * 8 * SLOT_WORDS];
        let slot = |generation, layer, through| le_bytes(&Progress::record(generation, layer, through));
        let read = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            Progress::read(&path, 7, 10)
        };
        assert_eq!(read(&lowest), None, "a side file from before marks");
        let one = [lowest.clone(), slot(7, 10, 300)].concat();
        assert_eq!(read(&one), Some(300), "one mark, the file ending with it");
        let two = [one.clone(), slot(7, 10, 500)].concat();
        assert_eq!(read(&two), Some(500));
        let mut torn = two.clone();
        *torn.last_mut().unwrap() ^= 1;
        assert_eq!(read(&torn), Some(300), "a torn slot leaves the other");
        assert_eq!(
            read(&[one.clone(), slot(7, 11, 900)].concat()),
            Some(300),
            "another layer"
        );
        assert_eq!(read(&[one, slot(8, 10, 900)].concat()), Some(300), "another boundary");
        assert_eq!(read(&[lowest, slot(6, 10, 300)].concat()), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A mark's record of its segments read back: their seals and debts
    /// when it is the mark asked for and whole; nothing when torn, cut
    /// short, or of another boundary, layer or white set.
    #[test]
    fn a_marks_record_of_its_segments_is_read_back_only_whole_and_its_own() {
        let dir = std::env::temp_dir().join(format!("bishops-marked-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("side");
        let exact: Vec<u64> = (0..70u64).map(|s| s.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let owed: Vec<bool> = (0..70).map(|s| s % 3 == 0 || s == 69).collect();
        let record = le_bytes(&Marked::record(7, 10, 300, &exact, &owed));
        let read = |bytes: &[u8], (generation, layer, through, segments)| {
            let file = [vec![0u8; Marked::AT as usize], bytes.to_vec()].concat();
            std::fs::write(&path, file).unwrap();
            Marked::read(&path, generation, layer, through, segments)
        };
        assert_eq!(read(&record, (7, 10, 300, 70)), Some((exact.clone(), owed)));
        for other in [(8, 10, 300, 70), (7, 11, 300, 70), (7, 10, 299, 70), (7, 10, 300, 69)] {
            assert_eq!(read(&record, other), None, "{other:?}");
        }
        for at in [0, 8 * 4 + 5, record.len() - 9, record.len() - 1] {
            let mut torn = record.clone();
            torn[at] ^= 1;
            assert_eq!(read(&torn, (7, 10, 300, 70)), None, "byte {at}");
        }
        assert_eq!(read(&record[..record.len() - 1], (7, 10, 300, 70)), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Class 0 of `name` on disk with `max_bytes` of memory, against the
    /// search in memory: the same codes, layers, hardest positions (and
    /// those of the mirrored class) and watched remoteness; no segment
    /// loaded on demand inside a layer; and no file left.
    fn same_on_disk(name: &str, max_bytes: u64) -> DiskStats {
        let (variant, index, back, watch) = board(name);
        let specs = variant.classes();
        let spec = &specs[0];
        let mirrored = back.as_ref().zip(specs.get(1)).map(|(m, other)| (m, &other.index));
        let asked = Asked {
            mirrored,
            watch: &watch,
        };
        let memory = in_memory_asked(name, spec, &index, asked).unwrap();
        let (dir, disk) = disk_in(&format!("{name}-{max_bytes}"), max_bytes, false);
        let share = on_disk_asked(name, spec, &index, &disk, asked).unwrap();
        let (table, stats) = share.table.unwrap();
        let what = format!("{name} at {max_bytes} bytes");
        assert_eq!(table.load().unwrap(), memory.table, "{what}");
        assert_eq!(share.layers, memory.layers, "{what}");
        assert_eq!(share.hardest, memory.hardest, "{what}");
        assert_eq!(share.mirrored_hardest, memory.mirrored_hardest, "{what}");
        assert_eq!(share.watched, memory.watched, "{what}");
        // The goal's segment at the start, and no other.
        assert!(stats.demand <= 1, "{what}: {} segments loaded on demand", stats.demand);
        // The spool within its budget and a part of a window.
        let budget = OnDisk::spool_budget(code_words(memory.table.len()) * 8);
        assert!(stats.spool_peak < 2 * budget, "{what}: {stats:?}, budget {budget}");
        // The spool is gone with the search, the table's file with the
        // table it left.
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "{what}: the spool's files are removed"
        );
        drop(table);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "the table's file is removed"
        );
        std::fs::remove_dir(&dir).unwrap();
        stats
    }

    #[test]
    fn a_table_on_disk_holds_what_one_in_memory_does() {
        for name in ["5x4", "7x4", "7x6", "5x3-full"] {
            // Whole in memory: one window, never read back, nothing
            // spooled; written once, at the end, for the table it leaves.
            let stats = same_on_disk(name, 1 << 30);
            assert_eq!((stats.reads, stats.spooled), (0, 0), "{name}: {stats:?}");
        }
        // 9x6's class is about 96 KiB of codes: below that it is worked in
        // windows, read and written many times over, and the images of
        // what a window finds (its class has a symmetry) are spooled; at
        // 48 and 56 KiB more of them in a layer than the spool's budget
        // (about 8.7 KiB), so that they are claimed inside the layer too.
        for kib in [48, 56, 64] {
            let stats = same_on_disk("9x6", kib << 10);
            assert!(stats.writes > 0 && stats.reads > 0, "{kib} KiB: {stats:?}");
            assert!(stats.spooled > 0, "{kib} KiB: {stats:?}");
            // Segments that come take the pages of those that leave. (At
            // 64 KiB, 16 of its 17 segments, the one that comes or leaves
            // is mostly the last, shorter one, which takes none.)
            assert_eq!(stats.moved > 0, kib < 64, "{kib} KiB: {stats:?}");
            assert_eq!(stats.drains > 0, kib < 64, "{kib} KiB: {stats:?}");
        }
        // A group of four, whose class fits one segment.
        same_on_disk("7x5-full", 4 << 10);
    }

    /// Pages move whole from one range of a table's memory to another,
    /// in huge pages and small: the range they leave reads as zero, and
    /// what they held is where they went, over pages that were there.
    /// Ranges of unequal lengths, or not of whole pages, do not move.
    #[test]
    fn a_segment_that_comes_takes_the_pages_of_one_that_leaves() {
        for (unit, huge) in [(4096 / 8, false), (HUGE_PAGE / 8, true)] {
            let reserved = Reserved::new(8 * unit * 8, huge).unwrap();
            let words = reserved.words();
            let value = |k: usize| k as u64 * 0x9e37_79b9 + 1;
            words[..2 * unit]
                .iter()
                .enumerate()
                .for_each(|(k, w)| w.store(value(k), Ordering::Relaxed));
            // Pages already at the place taken are given back.
            words[5 * unit].store(7, Ordering::Relaxed);
            assert!(reserved.move_pages(0..2 * unit, 4 * unit..6 * unit), "{unit} words");
            for k in 0..2 * unit {
                assert_eq!(words[k].load(Ordering::Relaxed), 0, "{unit} words, left at {k}");
                assert_eq!(
                    words[4 * unit + k].load(Ordering::Relaxed),
                    value(k),
                    "{unit} words, at {k}"
                );
            }
            // And back, on to the place they left.
            assert!(reserved.move_pages(4 * unit..6 * unit, 0..2 * unit));
            assert_eq!(words[2 * unit - 1].load(Ordering::Relaxed), value(2 * unit - 1));
            assert_eq!(words[5 * unit].load(Ordering::Relaxed), 0);
            assert!(!reserved.move_pages(0..unit, 4 * unit..6 * unit), "lengths differ");
            assert!(
                !reserved.move_pages(0..unit - 1, 4 * unit..5 * unit - 1),
                "part of a page"
            );
            assert!(!reserved.move_pages(1..unit + 1, 4 * unit..5 * unit), "not on a page");
            assert_eq!(words[1].load(Ordering::Relaxed), value(1), "nothing moved");
        }
    }

    /// The VmFlags of the mapping of `/proc/self/smaps` that holds `at`.
    fn vm_flags(at: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((start, end)) = range.split_once('-')
                && let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16))
            {
                inside = (start..end).contains(&at);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return flags.trim().to_owned();
            }
        }
        panic!("no mapping holds {at:#x}")
    }

    /// A table's memory starts on a huge page's boundary and is advised
    /// to be held in huge pages. (Where the system has none, `never`, the
    /// advice is refused, and the test says so.)
    #[test]
    fn a_tables_memory_asks_for_huge_pages() {
        let reserved = Reserved::new(3 * HUGE_PAGE + 5, true).unwrap();
        let at = reserved.ptr as usize;
        assert_eq!(at % HUGE_PAGE, 0);
        let never = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .map_or(true, |mode| mode.contains("[never]"));
        let advised = |at: usize| vm_flags(at).split(' ').any(|f| f == "hg");
        if never {
            eprintln!("this system has no transparent huge pages: nothing to tell");
        } else {
            assert!(advised(at), "{}", vm_flags(at));
        }
        // Memory for smaller segments is not advised.
        let small = Reserved::new(HUGE_PAGE, false).unwrap();
        assert!(!advised(small.ptr as usize), "{}", vm_flags(small.ptr as usize));
        // The whole range reads and writes.
        let words = reserved.words();
        words[0].store(1, Ordering::Relaxed);
        words[words.len() - 1].store(2, Ordering::Relaxed);
        reserved.release(0..words.len());
        assert_eq!(words[0].load(Ordering::Relaxed), 0, "released");
    }

    /// The spool is claimed in runs, each sorted, without repeats, in one
    /// bucket and no longer than its memory holds, which together are
    /// every position spooled; the buckets give the runs their memory.
    #[test]
    fn the_spool_is_claimed_in_sorted_runs_that_its_memory_holds() {
        // 13x10's cap: 983 segments of 16 MiB, 30 of them for a run.
        let sorting = Sorting::of(983, 2 << 20);
        assert_eq!(sorting.bucket_segments, 953);
        assert_eq!(sorting.run as u64 * 8, 30 << 24);
        // Too few segments to give one up: runs of the least length.
        assert_eq!(
            Sorting::of(2, 512),
            Sorting {
                bucket_segments: 2,
                run: SPOOL_RUN
            }
        );
        // 40 segments of 4 KiB in memory, one for runs (of the least
        // length); 100 in the table, so three buckets.
        let (dir, disk) = disk_in("runs", 40 << 12, false);
        let len = 100 * 16_384;
        let table = DiskTable::create(7, len, &disk, ".test.a1").unwrap();
        assert_eq!((table.sorting.bucket_segments, table.spool.len()), (39, 3));
        // Batches of spooled positions, with repeats inside them and
        // between them: more than a run's worth in a bucket.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut spooled = std::collections::BTreeSet::new();
        for _ in 0..20 {
            let batch: Vec<u64> = (0..20_000)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    7 + state % len
                })
                .collect();
            spooled.extend(batch.iter().copied());
            table.spool_images(batch.into_iter());
        }
        let mut runs = Vec::new();
        table.unspool_images(&mut |run| runs.push(run.to_vec())).unwrap();
        let bucket = |i: u64| table.segment_of(i) / table.sorting.bucket_segments;
        assert!(runs.len() > 1, "{} runs", runs.len());
        for run in &runs {
            assert!(!run.is_empty() && run.len() <= SPOOL_RUN, "{} positions", run.len());
            assert!(run.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
            assert_eq!(bucket(run[0]), bucket(run[run.len() - 1]), "one bucket");
        }
        let claimed: std::collections::BTreeSet<u64> = runs.iter().flatten().copied().collect();
        assert_eq!(claimed, spooled);
        // Emptied.
        let mut again = 0;
        table.unspool_images(&mut |run| again += run.len()).unwrap();
        assert_eq!(again, 0);
        drop(table);
        std::fs::remove_dir(&dir).unwrap();
    }

    /// A new directory for a test's table, named after `what`, and where
    /// to keep a table there with `max_bytes` in memory.
    fn disk_in(what: &str, max_bytes: u64, kept: bool) -> (PathBuf, OnDisk) {
        let dir = std::env::temp_dir().join(format!("bishops-disk-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let disk = OnDisk {
            dir: dir.clone(),
            max_bytes,
            kept,
        };
        (dir, disk)
    }

    /// [`disk_in`] with segments of 4 KiB (16,384 positions), two of them
    /// in memory.
    fn small_segments(what: &str) -> (PathBuf, OnDisk) {
        disk_in(what, 8 << 10, false)
    }

    /// `table` reading and writing its whole segments directly, or, where
    /// `dir`'s file system has no direct I/O, none: the table is then
    /// dropped, `dir` removed, and the test says it can tell nothing more.
    fn made_direct(mut table: DiskTable, dir: &Path) -> Option<DiskTable> {
        match Direct::open(&table.path) {
            Ok(direct) => {
                table.direct = Some(direct);
                Some(table)
            }
            Err(e) => {
                drop(table);
                std::fs::remove_dir_all(dir).unwrap();
                eprintln!("no direct I/O in {}: {e}; nothing more to tell", dir.display());
                None
            }
        }
    }

    /// How many of `table`'s segment moves were under way at once at
    /// most, each waiting until [`IO_THREADS`] are (or a second has passed).
    fn most_moves_at_once(table: &DiskTable) -> usize {
        let segments: Vec<usize> = (0..64).collect();
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let deadline = Instant::now() + std::time::Duration::from_secs(1);
        table
            .on_every_thread(&segments, |_| {
                most.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                while most.load(Ordering::SeqCst) < IO_THREADS && Instant::now() < deadline {
                    std::thread::yield_now();
                }
                now.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            })
            .unwrap();
        most.into_inner()
    }

    /// Segments of a table past the page cache move on [`IO_THREADS`]
    /// threads at once, whatever the cores, and the first error stops the
    /// moves not yet started; through the cache, on the pool's threads.
    #[test]
    fn segments_past_the_cache_move_on_more_threads_than_cores() {
        let (dir, disk) = small_segments("threads");
        let table = DiskTable::create(0, 64 * 16_384, &disk, ".test.a1").unwrap();
        assert!(most_moves_at_once(&table) <= rayon::current_num_threads());
        let Some(table) = made_direct(table, &dir) else {
            return;
        };
        assert_eq!(most_moves_at_once(&table), IO_THREADS);
        let segments: Vec<usize> = (0..64).collect();
        let tried = AtomicUsize::new(0);
        let failed = table.on_every_thread(&segments, |s| {
            tried.fetch_add(1, Ordering::SeqCst);
            if s == 0 {
                return Err(Error::Usage("the first segment fails".into()));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(())
        });
        assert!(matches!(failed, Err(Error::Usage(e)) if e == "the first segment fails"));
        assert!(
            tried.into_inner() < segments.len(),
            "every move was tried after the first failed"
        );
        drop(table);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_segment_changed_on_disk_is_refused_when_read_back() {
        let (dir, disk) = small_segments("changed");
        let positions = 16_384;
        let table = DiskTable::create(0, 3 * positions, &disk, ".test.a1").unwrap();
        table.reside(&[0]).unwrap();
        assert!(table.claim(5, 1, Claim::Reached));
        // Written back as segment 0 leaves, and read back unchanged.
        table.reside(&[1]).unwrap();
        assert!(table.reached(5) && !table.reached(6));
        table.reside(&[0]).unwrap();
        assert!(table.at(5, 1));
        table.reside(&[1]).unwrap();
        // One code changed in the file: every way of reading it refuses.
        let file = std::fs::OpenOptions::new().write(true).open(&table.path).unwrap();
        file.write_all_at(&[0xf0], 100).unwrap();
        let refused = |e: Error| {
            let e = e.to_string();
            assert!(
                e.contains("segment 0 (bytes 0 to 4096) read back other than it was written"),
                "{e}"
            );
        };
        assert!(!table.reached(5));
        refused(table.check().unwrap_err());
        refused(table.reside(&[0]).unwrap_err());
        // And so does the table the search would leave in the file.
        let e = table.finish().unwrap_err().to_string();
        assert!(
            e.contains("segment 0 (bytes 0 to 4096) read back other than the search wrote it"),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the files are removed");
        std::fs::remove_dir(&dir).unwrap();
    }

    /// A table larger than the cache moves whole segments past it: what
    /// it wrote back and read again is what it held, none of it is left
    /// in the page cache, and a change in the file is still refused. The
    /// table's last segment, shorter than a block of the disk, goes
    /// through the cache. (Where the file system has no direct I/O, as a
    /// tmpfs has none, nothing can be told, and the test says so.)
    #[test]
    fn segments_of_a_table_larger_than_the_cache_bypass_it() {
        // Three segments and a last one of 8 bytes.
        let (dir, disk) = small_segments("direct");
        let positions = 16_384;
        let table = DiskTable::create(0, 3 * positions + 32, &disk, ".test.a1").unwrap();
        let Some(table) = made_direct(table, &dir) else {
            return;
        };
        table.reside(&[0, 3]).unwrap();
        assert!(table.claim(5, 1, Claim::Reached));
        assert!(table.claim(3 * positions + 7, 2, Claim::Reached));
        table.reside(&[1, 2]).unwrap();
        assert!(table.claim(positions + 9, 1, Claim::Reached));
        table.reside(&[0, 3]).unwrap();
        assert!(table.at(5, 1) && table.at(3 * positions + 7, 2) && !table.reached(6));
        table.reside(&[1, 2]).unwrap();
        let cached = cached_pages(&table.file, 3 * 4096 + 8);
        assert_eq!(&cached[..3], &[false; 3], "whole segments bypass the cache");
        assert!(cached[3], "the last, short one goes through it");
        // One code changed in the file, through the cache: refused.
        let file = std::fs::OpenOptions::new().write(true).open(&table.path).unwrap();
        file.write_all_at(&[0xf0], 100).unwrap();
        let e = table.reside(&[0, 3]).unwrap_err().to_string();
        assert!(
            e.contains("segment 0 (bytes 0 to 4096) read back other than it was written"),
            "{e}"
        );
        drop(table);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_kept_table_sealed_at_a_boundary_reopens_with_the_next_layers_writes() {
        let (dir, disk) = small_segments("kept");
        let (positions, label) = (16_384, ".test.a1");
        let len = 3 * positions;
        let table = DiskTable::create_kept(0, len, &disk, label).unwrap();
        table.reside(&[0, 1]).unwrap();
        assert!(table.claim(5, 0, Claim::Reached) && table.claim(positions + 9, 0, Claim::Reached));
        let seals = table.seal_all().unwrap();
        // The next layer (code 1) writes into segments 0 and 1; segment 0
        // leaves and is written back, and then the search is killed with
        // segment 1's write in memory only.
        for i in [6, 7, positions + 10] {
            assert!(table.claim(i, 1, Claim::Reached));
        }
        table.reside(&[1, 2]).unwrap();
        drop(table);
        let file = dir.join(format!("{label}.codes"));
        assert!(file.is_file(), "a kept table's file outlives it");
        let (table, wrote, changed) = DiskTable::reopen(0, len, &disk, label, &seals, 1, &mut |_, _, _| {}).unwrap();
        assert_eq!((wrote, changed), (2, vec![0]));
        assert!(table.at(5, 0) && table.at(6, 1) && table.at(7, 1) && table.at(positions + 9, 0));
        assert!(!table.reached(positions + 10), "the write never written back is lost");
        drop(table);
        // Taken for another layer's writes, or changed otherwise: refused.
        let refused = |e: Error| {
            let e = e.to_string();
            assert!(
                e.contains("segment 0 (bytes 0 to 4096) is neither as its checkpoint sealed it"),
                "{e}"
            );
        };
        refused(
            DiskTable::reopen(0, len, &disk, label, &seals, 2, &mut |_, _, _| {})
                .map(|_| ())
                .unwrap_err(),
        );
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[1] ^= 0b1100; // position 5: code 0 to 3
        std::fs::write(&file, &bytes).unwrap();
        refused(
            DiskTable::reopen(0, len, &disk, label, &seals, 1, &mut |_, _, _| {})
                .map(|_| ())
                .unwrap_err(),
        );
        std::fs::remove_file(&file).unwrap();
        std::fs::remove_file(dir.join(format!("{label}.codes.lowest"))).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no other file left");
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn windows_cover_the_blocks_in_order_within_the_memory() {
        let scopes = |r: u64, f: &mut dyn FnMut(Range<u64>)| {
            f(r * 10..r * 10 + 10);
            f((r * 37 % 100) * 10..(r * 37 % 100) * 10 + 5);
        };
        let windows = Windows::cut(0..100, 100, 20, 8, scopes).unwrap();
        assert_eq!(windows.cuts.first(), Some(&0));
        assert_eq!(windows.cuts.last(), Some(&100));
        assert!(windows.cuts.windows(2).all(|c| c[0] < c[1]));
        for (blocks, scope) in windows.blocks().zip(&windows.scopes) {
            assert!(scope.len() <= 8 && scope.windows(2).all(|s| s[0] < s[1]));
            for r in blocks {
                scopes(r, &mut |cells| {
                    for s in cells.start / 20..=(cells.end - 1) / 20 {
                        assert!(scope.contains(&(s as u32)), "block {r}, segment {s}");
                    }
                });
            }
        }
        let refused = Windows::cut(0..100, 100, 1, 8, scopes).unwrap_err().to_string();
        assert!(
            refused.contains("span 10 segments") && refused.contains("raise --max-memory"),
            "{refused}"
        );
    }
}
