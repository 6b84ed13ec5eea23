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
//! Only the tight search checkpoints: the dense search (`--method dense`) and
//! the two-bit search neither save nor resume.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::board::Class;
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::remoteness::Cell;
use crate::solver::parallel::{Boundary, Checkpoints, Resume};
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
    /// The search that wrote it: `tight`.
    pub method: String,
    /// Cells in the table: the class's legal positions.
    pub length: u64,
    /// `found[d]`: positions at remoteness `d`, for every complete layer.
    pub found: Vec<u64>,
    /// Whether the class's search is over.
    pub done: bool,
    /// [`checksum`] of the table, 16 hex digits.
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

/// Saves and finds the checkpoints of one solve: the
/// [`Checkpoints`] a [`Plan::solve_with`](crate::solver::Plan::solve_with)
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

    /// Reads and checks the checkpoint of `class`: its header, its table,
    /// or what is wrong with it.
    fn read(&self, file: &Path, class: Class, legal: u64) -> std::result::Result<(Header, Vec<u8>), String> {
        let io = |e: std::io::Error| format!("cannot be read ({e})");
        let size = fs::metadata(file).map_err(io)?.len();
        let mut reader = BufReader::new(fs::File::open(file).map_err(io)?);
        let mut magic = vec![0u8; MAGIC.len()];
        reader
            .read_exact(&mut magic)
            .map_err(|_| "is not a checkpoint".to_owned())?;
        if magic != MAGIC {
            return Err("is not a checkpoint".into());
        }
        let mut line = Vec::new();
        (&mut reader).take(1 << 16).read_until(b'\n', &mut line).map_err(io)?;
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
        expect("method", header.method.clone(), "tight".to_owned())?;
        expect("legal positions", header.length.to_string(), legal.to_string())?;
        if size != (MAGIC.len() + line.len()) as u64 + legal {
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

    /// Writes the checkpoint of `boundary` atomically.
    fn write(&mut self, boundary: &Boundary<'_>) -> Result<PathBuf> {
        let began = Instant::now();
        let file = path(&self.dir, self.variant.name(), boundary.class);
        let tmp = self.dir.join(format!(
            ".{}.{}.checkpoint.tmp-{}",
            self.variant.name(),
            boundary.class.name(),
            std::process::id()
        ));
        // SAFETY: AtomicU8 has the same size, alignment and bit validity as
        // u8, and at a layer boundary no thread writes the table, so reading
        // it as plain bytes while this borrow lives is sound.
        let cells: &[u8] =
            unsafe { std::slice::from_raw_parts(boundary.cells.as_ptr().cast::<u8>(), boundary.cells.len()) };
        let header = Header {
            format: FORMAT,
            variant: self.variant.name().to_owned(),
            start: self.start.clone(),
            class: boundary.class.index(),
            method: "tight".to_owned(),
            length: cells.len() as u64,
            found: boundary.found.to_vec(),
            done: boundary.done,
            checksum: format!("{:016x}", checksum(cells)),
            written: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        };
        let mut head = MAGIC.to_vec();
        serde_json::to_writer(&mut head, &header).expect("a header serialises");
        head.push(b'\n');
        let _pending = Pending::register(&tmp);
        let result = (|| {
            fs::create_dir_all(&self.dir)?;
            let mut out = fs::File::create(&tmp)?;
            out.write_all(&head)?;
            out.write_all(cells)?;
            out.sync_all()?;
            drop(out);
            fs::rename(&tmp, &file)?;
            // Make the rename itself durable.
            if let Ok(d) = fs::File::open(&self.dir) {
                let _ = d.sync_all();
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(Error::Io(file, e));
        }
        self.written.0 += 1;
        self.written.1 += began.elapsed().as_secs_f64();
        self.written.2 += (head.len() + cells.len()) as u64;
        Ok(file)
    }
}

impl Checkpoints for Checkpointer<'_> {
    fn resume(&mut self, class: Class, legal: u64) -> Option<Resume> {
        if self.options.restart {
            return None;
        }
        let file = path(&self.dir, self.variant.name(), class);
        if !file.exists() {
            return None;
        }
        match self.read(&file, class, legal) {
            Ok((header, cells)) => {
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
                Some(Resume {
                    found: header.found,
                    done: header.done,
                    cells,
                })
            }
            Err(problem) => {
                (self.note)(&format!(
                    "checkpoint {} {problem}; ignoring it and searching class {} from the start",
                    file.display(),
                    class.name()
                ));
                None
            }
        }
    }

    fn layer(&mut self, boundary: Boundary<'_>) -> Result<()> {
        let depth = boundary.found.len() as u16 - 1;
        let stop = !boundary.done
            && self
                .options
                .stop_after
                .is_some_and(|(class, layer)| layer == depth && class.is_none_or(|c| c == boundary.class));
        if stop || self.last.elapsed() >= self.options.interval {
            let file = self.write(&boundary)?;
            self.last = Instant::now();
            if stop {
                return Err(Error::Stopped(format!(
                    "stopped after layer {depth} of {} class {}, as BISHOPS_STOP_AFTER_LAYER asks; the checkpoint {} holds the search",
                    self.variant.name(),
                    boundary.class.name(),
                    file.display()
                )));
            }
        }
        Ok(())
    }
}
