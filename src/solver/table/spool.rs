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
//! itself took eight. Before the varints go their length and their
//! XXH3-64, and a frame's positions are claimed only once the whole frame
//! is read and checked: a spool file changed under the search is an
//! error, never a wrong claim.
//!
//! ```text
//! frame   = length checksum payload   length: u32, checksum: u64, little-endian
//! payload = count first gap{count - 1}   every number a varint, gap ≥ 1
//! ```

use std::fs::File;
use std::io::{self, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::xxh3_64;

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

/// A batch of positions coded as one frame, to be appended to its
/// bucket's file: made before the bucket is locked.
pub(super) struct Frame {
    bytes: Vec<u8>,
    positions: u64,
    /// The first position of the bucket it is for.
    first: u64,
}

impl Frame {
    /// The frame of `batch`, positions of the bucket whose first position
    /// is `first`; `batch` is left sorted and without repeats.
    pub(super) fn of(batch: &mut Vec<u64>, first: u64) -> Frame {
        batch.sort_unstable();
        batch.dedup();
        let bytes = if batch.is_empty() {
            Vec::new()
        } else {
            frame(batch, first)
        };
        Frame {
            bytes,
            positions: batch.len() as u64,
            first,
        }
    }
}

/// The frame of `positions`, sorted, without repeats and all at least
/// `first`.
fn frame(positions: &[u64], first: u64) -> Vec<u8> {
    let mut payload = Vec::with_capacity(3 * positions.len() + 20);
    put_varint(&mut payload, positions.len() as u64);
    let mut last = first;
    for (k, &i) in positions.iter().enumerate() {
        debug_assert!(k == 0 || i > last);
        put_varint(&mut payload, i - last);
        last = i;
    }
    let mut out = Vec::with_capacity(HEAD + payload.len());
    out.extend_from_slice(&u32::try_from(payload.len()).expect("a frame under 4 GiB").to_le_bytes());
    out.extend_from_slice(&xxh3_64(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Bytes before a frame's payload: its length and checksum.
const HEAD: usize = 12;

/// The varint at `bytes[*at..]`, moving `at` past it.
fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, &'static str> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let &byte = bytes.get(*at).ok_or("holds a frame whose numbers run past it")?;
        *at += 1;
        let bits = u64::from(byte & 0x7f);
        if shift == 63 && bits > 1 {
            break;
        }
        value |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("holds a number past 64 bits")
}

/// The positions of the frame `payload` of a bucket of `range`, appended
/// to `out`; or what is wrong with it.
fn decode(payload: &[u8], range: &Range<u64>, out: &mut Vec<u64>) -> Result<(), &'static str> {
    let mut at = 0;
    let count = varint(payload, &mut at)?;
    if count == 0 {
        return Err("holds an empty frame");
    }
    let mut last = None;
    for _ in 0..count {
        let gap = varint(payload, &mut at)?;
        let position = match last {
            None => range.start.checked_add(gap),
            Some(_) if gap == 0 => return Err("holds a position twice"),
            Some(last) => u64::checked_add(last, gap),
        };
        let position = position
            .filter(|i| range.contains(i))
            .ok_or("holds a position outside its bucket")?;
        out.push(position);
        last = Some(position);
    }
    if at != payload.len() {
        return Err("holds a frame longer than its positions");
    }
    Ok(())
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

    /// Appends `frame`, made for this bucket ([`Frame::of`]): the bytes
    /// written, or what the write failed with.
    pub(super) fn append(&mut self, frame: &Frame) -> io::Result<u64> {
        debug_assert_eq!(frame.first, self.range.start);
        if frame.positions == 0 {
            return Ok(0);
        }
        self.file.write_all_at(&frame.bytes, self.bytes)?;
        self.bytes += frame.bytes.len() as u64;
        self.positions += frame.positions;
        Ok(frame.bytes.len() as u64)
    }

    /// Calls `take` with its positions, at most `run` at a time, then
    /// empties it: the bytes read and the time reading them took. A file
    /// that does not decode to the positions written, all in the bucket's
    /// range, is an error.
    pub(super) fn drain(&mut self, run: usize, take: &mut dyn FnMut(&[u64])) -> io::Result<(u64, Duration)> {
        let bad = |what: &str| io::Error::new(ErrorKind::InvalidData, format!("a spool file {what}"));
        let mut reader = BufReader::with_capacity(1 << 20, &self.file);
        reader.seek(SeekFrom::Start(0))?;
        let (mut at, mut taken, mut reading) = (0u64, 0u64, Duration::ZERO);
        let (mut payload, mut positions) = (Vec::new(), Vec::new());
        while at < self.bytes {
            let started = Instant::now();
            // The file holds `left` more bytes as written; a frame's length
            // is trusted only as far as that.
            let left = self.bytes - at;
            let mut head = [0u8; HEAD];
            if left < HEAD as u64 {
                return Err(bad("ends inside a frame"));
            }
            reader.read_exact(&mut head)?;
            let length = u64::from(u32::from_le_bytes(head[..4].try_into().expect("4 bytes")));
            if length > left - HEAD as u64 {
                return Err(bad("ends inside a frame"));
            }
            payload.resize(length as usize, 0);
            reader.read_exact(&mut payload)?;
            reading += started.elapsed();
            if xxh3_64(&payload) != u64::from_le_bytes(head[4..].try_into().expect("8 bytes")) {
                return Err(bad(&format!("fails its checksum at byte {at}")));
            }
            positions.clear();
            decode(&payload, &self.range, &mut positions).map_err(bad)?;
            // Checked whole: its positions may be claimed.
            positions.chunks(run).for_each(&mut *take);
            taken += positions.len() as u64;
            at += HEAD as u64 + length;
        }
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
            written += b.append(&Frame::of(&mut batch.clone(), b.range.start)).unwrap();
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
                    b.append(&Frame::of(&mut batch.clone(), b.range.start)).unwrap();
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
    fn a_spool_file_changed_or_cut_is_refused_before_any_claim() {
        let range = 100..200;
        // The frame of 100, 150 and 199: length, checksum, then count 3,
        // first 0, gaps 50 and 49.
        let damaged = |name: &str, edit: &dyn Fn(&mut Vec<u8>)| {
            let mut b = bucket(name, range.clone());
            b.append(&Frame::of(&mut vec![100, 150, 199], b.range.start)).unwrap();
            let mut bytes = std::fs::read(&b.path).unwrap();
            assert_eq!(&bytes[HEAD..], [3, 0, 50, 49]);
            edit(&mut bytes);
            std::fs::write(&b.path, &bytes).unwrap();
            b.bytes = bytes.len() as u64;
            let mut claimed = 0;
            let refused = b.drain(2, &mut |p| claimed += p.len()).unwrap_err().to_string();
            remove(&b.path);
            // A frame that fails gives nothing to claim; only a count that
            // falls short of the positions written is found after the
            // frames that hold, each checked whole.
            let whole = if name == "count" { 2 } else { 0 };
            assert_eq!(claimed, whole, "{name}: {refused}");
            refused
        };
        // The payload `payload` under a checksum that holds: what the
        // checks past the checksum catch.
        let forged = |payload: &[u8]| {
            let payload = payload.to_vec();
            move |f: &mut Vec<u8>| {
                f.truncate(0);
                f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
                f.extend_from_slice(&xxh3_64(&payload).to_le_bytes());
                f.extend_from_slice(&payload);
            }
        };
        let checksum = "fails its checksum at byte 0";
        assert!(damaged("flip", &|f| f[HEAD + 2] ^= 1).contains(checksum));
        assert!(damaged("cut", &|f| f.truncate(HEAD + 2)).contains("ends inside a frame"));
        assert!(damaged("head", &|f| f.truncate(5)).contains("ends inside a frame"));
        assert!(damaged("long", &|f| f[0] = 9).contains("ends inside a frame"));
        assert!(damaged("past", &forged(&[3, 0, 50, 50])).contains("outside its bucket"));
        assert!(damaged("twice", &forged(&[3, 0, 0, 49])).contains("a position twice"));
        assert!(damaged("empty", &forged(&[0])).contains("an empty frame"));
        assert!(
            damaged(
                "varint",
                &forged(&[1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])
            )
            .contains("past 64 bits")
        );
        assert!(damaged("short", &forged(&[4, 0, 50, 49])).contains("run past it"));
        assert!(damaged("more", &forged(&[2, 0, 50, 49])).contains("longer than its positions"));
        assert!(damaged("count", &forged(&[2, 0, 50])).contains("not the 3 written"));
    }
}
