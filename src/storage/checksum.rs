//! The checksums of a database file: of a block (the positions of one
//! white set), of a class's whole table, and of the header (the `meta`
//! table and the `classes` rows). Each is XXH3-64 (seed 0, the `xxh3_64`
//! of the `xxhash-rust` crate and of the reference xxHash library) of bytes
//! that `docs/database.md` lists, so that a reader without this program can
//! check a file.

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

/// A checksum: XXH3-64 of some bytes, written as 16 hex digits in the
/// header and as a signed 64-bit integer beside a block.
///
/// ```
/// use bishops::storage::Checksum;
/// assert_eq!(Checksum::of(b"").hex(), "2d06800538d394c2");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Checksum(u64);

impl Checksum {
    /// The checksum of `bytes`.
    pub fn of(bytes: &[u8]) -> Checksum {
        Checksum(xxh3_64(bytes))
    }

    /// The checksum as 16 hex digits.
    pub fn hex(self) -> String {
        format!("{:016x}", self.0)
    }

    /// The checksum as SQLite stores an integer: the same 64 bits, signed.
    pub fn signed(self) -> i64 {
        self.0 as i64
    }
}

/// A checksum built up over pieces, as they come: at any point, the
/// [`Checksum`] of all of them one after the other.
#[derive(Clone, Default)]
pub(super) struct RunningChecksum(Xxh3Default);

impl RunningChecksum {
    /// Adds `bytes` after what was added before.
    pub(super) fn add(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The checksum of everything added so far.
    pub(super) fn checksum(&self) -> Checksum {
        Checksum(self.0.digest())
    }
}

/// The checksum of one block: of the class number (one byte), the white
/// set's colex rank (eight bytes, little-endian) and the block's cells, so
/// that a block moved to another white set fails too.
///
/// ```
/// let a = bishops::storage::block_checksum(0, 3, &[1, 2, 254]);
/// assert_ne!(a, bishops::storage::block_checksum(0, 4, &[1, 2, 254]));
/// assert_ne!(a, bishops::storage::block_checksum(0, 3, &[1, 2, 253]));
/// assert_eq!(a, bishops::storage::Checksum::of(&[0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 2, 254]));
/// ```
pub fn block_checksum(class: usize, white: u64, cells: &[u8]) -> Checksum {
    let mut checksum = RunningChecksum::default();
    checksum.add(&[class as u8]);
    checksum.add(&white.to_le_bytes());
    checksum.add(cells);
    checksum.checksum()
}

/// The checksum of a file's header: of every `meta` entry but
/// `header_checksum` (in key order, key and value each followed by a 0 byte)
/// and then every `classes` row (in class order, each column as text
/// followed by a 0 byte, NULL as `NULL`).
pub(super) fn header_checksum(conn: &Connection) -> rusqlite::Result<String> {
    let mut checksum = RunningChecksum::default();
    let mut add = |value: ValueRef<'_>| {
        let text = match value {
            ValueRef::Null => "NULL".to_owned(),
            ValueRef::Integer(i) => i.to_string(),
            ValueRef::Real(r) => r.to_string(),
            ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        };
        checksum.add(text.as_bytes());
        checksum.add(&[0]);
    };
    for sql in [
        "SELECT key, value FROM meta WHERE key <> 'header_checksum' ORDER BY key",
        "SELECT * FROM classes ORDER BY class",
    ] {
        let mut st = conn.prepare(sql)?;
        let columns = st.column_count();
        let mut rows = st.query([])?;
        while let Some(row) = rows.next()? {
            for i in 0..columns {
                add(row.get_ref(i)?);
            }
        }
    }
    Ok(checksum.checksum().hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checksum_built_in_pieces_is_that_of_the_whole() {
        // Pieces across XXH3's short, medium and long inputs and its
        // 256-byte internal buffer.
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for len in [0, 1, 3, 16, 17, 128, 129, 240, 241, 256, 1024, 4999, 5000] {
            for cut in [0, 1.min(len), len / 3, len / 2, len] {
                let mut running = RunningChecksum::default();
                running.add(&bytes[..cut]);
                running.add(&bytes[cut..len]);
                assert_eq!(running.checksum(), Checksum::of(&bytes[..len]), "{len} cut at {cut}");
            }
        }
    }

    #[test]
    fn the_checksum_is_xxh3_64() {
        // As the xxHash reference library's `XXH3_64bits` gives them.
        assert_eq!(Checksum::of(b"").hex(), "2d06800538d394c2");
        assert_eq!(Checksum::of(b"abc").hex(), "78af5f94892f3950");
        assert_eq!(block_checksum(0, 3, &[1, 2, 254]).hex(), "71c2e2742892ee6d");
    }
}
