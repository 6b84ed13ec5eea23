//! The spool of a table on disk: positions a layer found where their
//! segments were not resident, kept in a file for each *bucket* of
//! segments until the layer's end ([`Bucket`]).
//!
//! A batch of positions is written as one *frame*: sorted, repeats
//! dropped, and coded as LEB128 varints (seven bits a byte, the high bit
//! set on every byte but a number's last): the count, the first position's
//! offset from the bucket's first position, then the gap from each
//! position to the next. A batch of the search holds thousands of
//! positions a bucket, so a gap takes two bytes or so where the position
//! itself took eight.
//!
//! ```text
//! frame = count first gap{count - 1}      every number a varint, gap ≥ 1
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cleanup::Pending;

/// A file of spooled positions, all in `range`: those of one bucket's
/// segments.
pub(super) struct Bucket {
    pub(super) file: File,
    pub(super) path: PathBuf,
    /// The positions it may hold.
    range: Range<u64>,
    /// Positions in the file.
    positions: u64,
    /// Bytes in the file.
    bytes: u64,
    _pending: Pending,
}

/// Appends `value` to `out` as a varint.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The frame of `positions`, sorted, without repeats and all at least
/// `first`.
fn frame(positions: &[u64], first: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(3 * positions.len() + 20);
    put_varint(&mut out, positions.len() as u64);
    let mut last = first;
    for (k, &i) in positions.iter().enumerate() {
        debug_assert!(k == 0 || i > last);
        put_varint(&mut out, i - last);
        last = i;
    }
    out
}

impl Bucket {
    /// An empty bucket for positions `range`, in the new file `file` at
    /// `path` (registered for removal by `pending`).
    pub(super) fn new(file: File, path: PathBuf, range: Range<u64>, pending: Pending) -> Bucket {
        Bucket {
            file,
            path,
            range,
            positions: 0,
            bytes: 0,
            _pending: pending,
        }
    }

    /// Whether it holds no position.
    pub(super) fn is_empty(&self) -> bool {
        self.positions == 0
    }

    /// Appends positions `batch`, all of its range, as one frame: the
    /// bytes written, or what the write failed with.
    pub(super) fn append(&mut self, batch: &mut Vec<u64>) -> io::Result<u64> {
        batch.sort_unstable();
        batch.dedup();
        debug_assert!(batch.iter().all(|i| self.range.contains(i)));
        if batch.is_empty() {
            return Ok(0);
        }
        let bytes = frame(batch, self.range.start);
        self.file.write_all_at(&bytes, self.bytes)?;
        self.bytes += bytes.len() as u64;
        self.positions += batch.len() as u64;
        Ok(bytes.len() as u64)
    }

    /// Calls `take` with its positions, at most `run` at a time, then
    /// empties it: the bytes read and the time reading them took. A file
    /// that does not decode to the positions written, all in the bucket's
    /// range, is an error.
    pub(super) fn drain(&mut self, run: usize, take: &mut dyn FnMut(&[u64])) -> io::Result<(u64, Duration)> {
        let bad = |what: &str| io::Error::new(ErrorKind::InvalidData, format!("a spool file {what}"));
        (&self.file).seek(SeekFrom::Start(0))?;
        let mut reader = BufReader::with_capacity(1 << 20, (&self.file).take(self.bytes));
        let mut decoder = Decoder::new(self.range.clone());
        let mut positions = Vec::with_capacity(run);
        let mut taken = 0;
        let mut reading = Duration::ZERO;
        loop {
            let started = Instant::now();
            let chunk = reader.fill_buf()?;
            reading += started.elapsed();
            if chunk.is_empty() {
                break;
            }
            for &byte in chunk {
                if let Some(i) = decoder.byte(byte).map_err(bad)? {
                    positions.push(i);
                    if positions.len() == run {
                        take(&positions);
                        taken += positions.len() as u64;
                        positions.clear();
                    }
                }
            }
            let used = chunk.len();
            reader.consume(used);
        }
        if !decoder.at_frame_end() {
            return Err(bad("ends inside a frame"));
        }
        take(&positions);
        taken += positions.len() as u64;
        if taken != self.positions {
            return Err(bad(&format!(
                "held {taken} positions, not the {} written",
                self.positions
            )));
        }
        let read = self.bytes;
        self.file.set_len(0)?;
        (self.positions, self.bytes) = (0, 0);
        Ok((read, reading))
    }
}

/// Decodes frames a byte at a time.
struct Decoder {
    range: Range<u64>,
    /// The varint being read, and how many bits of it have come.
    value: u64,
    shift: u32,
    /// Positions left in the frame; `None` between frames.
    left: Option<u64>,
    /// The frame's last position so far; `None` before its first.
    last: Option<u64>,
}

impl Decoder {
    fn new(range: Range<u64>) -> Decoder {
        Decoder {
            range,
            value: 0,
            shift: 0,
            left: None,
            last: None,
        }
    }

    /// Takes `byte`: the position it ends, if it ends one; or what is
    /// wrong.
    fn byte(&mut self, byte: u8) -> Result<Option<u64>, &'static str> {
        let bits = u64::from(byte & 0x7f);
        if self.shift > 63 || (self.shift == 63 && bits > 1) {
            return Err("holds a number past 64 bits");
        }
        self.value |= bits << self.shift;
        if byte & 0x80 != 0 {
            self.shift += 7;
            return Ok(None);
        }
        let value = std::mem::take(&mut self.value);
        self.shift = 0;
        let Some(left) = self.left else {
            if value == 0 {
                return Err("holds an empty frame");
            }
            (self.left, self.last) = (Some(value), None);
            return Ok(None);
        };
        let position = match self.last {
            None => self.range.start.checked_add(value),
            Some(_) if value == 0 => return Err("holds a position twice"),
            Some(last) => last.checked_add(value),
        };
        let position = position
            .filter(|i| self.range.contains(i))
            .ok_or("holds a position outside its bucket")?;
        self.last = Some(position);
        self.left = (left > 1).then_some(left - 1);
        Ok(Some(position))
    }

    /// Whether it is between frames.
    fn at_frame_end(&self) -> bool {
        self.left.is_none() && self.shift == 0
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A bucket of `range` in a new file of the temporary directory.
    fn bucket(name: &str, range: Range<u64>) -> Bucket {
        let path = std::env::temp_dir().join(format!("bishops-spool-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let pending = Pending::register(&path);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        Bucket::new(file, path, range, pending)
    }

    /// Everything `bucket` holds, in runs of `run`, and the bytes read.
    fn drained(bucket: &mut Bucket, run: usize) -> io::Result<(Vec<u64>, u64)> {
        let mut got = Vec::new();
        let (bytes, _) = bucket.drain(run, &mut |positions| {
            assert!(positions.len() <= run);
            got.extend_from_slice(positions);
        })?;
        Ok((got, bytes))
    }

    fn remove(path: &Path) {
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn frames_give_back_each_batch_sorted_and_without_repeats() {
        let range = 1_000..(1 << 40);
        let mut b = bucket("frames", range.clone());
        // The ends of the range, gaps of every varint length, repeats.
        let batches: Vec<Vec<u64>> = vec![
            vec![range.start, range.end - 1, 1_127, 1_128, 1_128, 1_000 + (1 << 21)],
            vec![5_000],
            (0..10_000).map(|k| 2_000_000 + k * k * 7 % 100_003).collect(),
        ];
        let mut want = Vec::new();
        let mut written = 0;
        for batch in &batches {
            let mut sorted = batch.clone();
            sorted.sort_unstable();
            sorted.dedup();
            want.extend_from_slice(&sorted);
            written += b.append(&mut batch.clone()).unwrap();
        }
        assert!(
            written < 3 * want.len() as u64,
            "{written} bytes for {} positions",
            want.len()
        );
        for run in [1, 7, 1 << 16] {
            // Drained, the bucket is empty: fill it again for each run.
            if b.is_empty() {
                batches.iter().for_each(|batch| {
                    b.append(&mut batch.clone()).unwrap();
                });
            }
            let (got, bytes) = drained(&mut b, run).unwrap();
            assert_eq!(got, want, "runs of {run}");
            assert_eq!(bytes, written);
            assert!(b.is_empty());
            assert_eq!(std::fs::metadata(&b.path).unwrap().len(), 0, "emptied");
        }
        assert_eq!(drained(&mut b, 4).unwrap(), (vec![], 0), "an empty bucket");
        remove(&b.path);
    }

    #[test]
    fn a_spool_file_that_does_not_decode_is_refused() {
        let range = 100..200;
        let damaged = |name: &str, edit: &dyn Fn(&mut Vec<u8>)| {
            let mut b = bucket(name, range.clone());
            b.append(&mut vec![100, 150, 199]).unwrap();
            let mut bytes = std::fs::read(&b.path).unwrap();
            edit(&mut bytes);
            std::fs::write(&b.path, &bytes).unwrap();
            b.bytes = bytes.len() as u64;
            let refused = drained(&mut b, 2).unwrap_err().to_string();
            remove(&b.path);
            refused
        };
        // count 3, first 0, gaps 50 and 49
        assert!(damaged("past", &|f| f[3] = 50).contains("outside its bucket"));
        assert!(damaged("twice", &|f| f[2] = 0).contains("a position twice"));
        assert!(damaged("cut", &|f| f.truncate(3)).contains("ends inside a frame"));
        assert!(damaged("empty", &|f| f.splice(0..0, [0]).for_each(drop)).contains("an empty frame"));
        assert!(damaged("varint", &|f| f.extend([0xff; 10])).contains("past 64 bits"));
        assert!(damaged("short", &|f| f[0] = 4).contains("ends inside a frame"));
        assert!(damaged("more", &|f| f.extend([1, 0])).contains("not the 3 written"));
    }
}
