//! Damaging databases on purpose, as a person with `sqlite3` or a failing
//! disk would, for the robustness and fuzz tests.

// Each test file uses some of these helpers.
#![allow(dead_code)]

use std::path::Path;

use bishops::storage::Checksum;
use rusqlite::Connection;
use rusqlite::types::ValueRef;

/// The checksum of `bytes` as docs/database.md defines every checksum of a
/// file (XXH3-64): the library's own, so that the hash has one definition.
/// What is hashed, in what order, the tests gather themselves.
pub fn checksum(bytes: impl IntoIterator<Item = u8>) -> Checksum {
    Checksum::of(&bytes.into_iter().collect::<Vec<u8>>())
}

/// Rewrites `meta.header_checksum` for the header as it now is, gathering
/// the bytes docs/database.md says it covers without the program's code, so
/// a test can make an edit that the header checksum no longer sees and
/// check that the other checks still do.
pub fn reseal(conn: &Connection) {
    try_reseal(conn).unwrap();
}

/// [`reseal`], failing when SQLite cannot read the header any more.
pub fn try_reseal(conn: &Connection) -> rusqlite::Result<()> {
    let mut bytes = Vec::new();
    for sql in [
        "SELECT key, value FROM meta WHERE key <> 'header_checksum' ORDER BY key",
        "SELECT * FROM classes ORDER BY class",
    ] {
        let mut st = conn.prepare(sql)?;
        let columns = st.column_count();
        let mut rows = st.query([])?;
        while let Some(row) = rows.next()? {
            for i in 0..columns {
                let text = match row.get_ref(i)? {
                    ValueRef::Null => "NULL".to_owned(),
                    ValueRef::Integer(v) => v.to_string(),
                    ValueRef::Real(v) => v.to_string(),
                    ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
                };
                bytes.extend_from_slice(text.as_bytes());
                bytes.push(0);
            }
        }
    }
    let sum = checksum(bytes).hex();
    conn.execute("UPDATE meta SET value = ?1 WHERE key = 'header_checksum'", [sum])?;
    Ok(())
}

/// Opens a database file for editing.
pub fn edit(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

/// Runs `sql` on the database at `path`, then reseals its header when
/// `reseal_header`; returns the rows changed.
pub fn sql(path: &Path, sql: &str, reseal_header: bool) -> usize {
    let conn = edit(path);
    let changed = conn.execute(sql, []).unwrap();
    if reseal_header {
        reseal(&conn);
    }
    changed
}
