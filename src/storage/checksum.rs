//! The checksums of a database file: of a block (the positions of one
//! white set), of a class's whole table, and of the header (the `meta`
//! table and the `classes` rows). `docs/database.md` defines each, so
//! that a reader without this program can check a file.

use rusqlite::Connection;
use rusqlite::types::ValueRef;

/// A running FNV-1a 64 checksum of a class's cells in hash order (which is
/// tight-index order): cheap, and enough to tell a damaged or edited table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Checksum(u64);

impl Default for Checksum {
    fn default() -> Checksum {
        Checksum(0xcbf2_9ce4_8422_2325)
    }
}

impl Checksum {
    /// Adds cells.
    pub fn add(&mut self, cells: &[u8]) {
        for &byte in cells {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
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

/// The checksum of one block: FNV-1a 64 of the class number (one byte), the
/// white set's colex rank (eight bytes, little-endian) and the block's cells,
/// so that a block moved to another white set fails too.
///
/// ```
/// let a = bishops::storage::block_checksum(0, 3, &[1, 2, 254]);
/// assert_ne!(a, bishops::storage::block_checksum(0, 4, &[1, 2, 254]));
/// assert_ne!(a, bishops::storage::block_checksum(0, 3, &[1, 2, 253]));
/// ```
pub fn block_checksum(class: usize, white: u64, cells: &[u8]) -> Checksum {
    let mut checksum = Checksum::default();
    checksum.add(&[class as u8]);
    checksum.add(&white.to_le_bytes());
    checksum.add(cells);
    checksum
}

/// The checksum of a file's header: FNV-1a 64 over every `meta` entry but
/// `header_checksum` (in key order, key and value each followed by a 0 byte)
/// and then every `classes` row (in class order, each column as text
/// followed by a 0 byte, NULL as `NULL`).
pub(super) fn header_checksum(conn: &Connection) -> rusqlite::Result<String> {
    let mut checksum = Checksum::default();
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
    Ok(checksum.hex())
}
