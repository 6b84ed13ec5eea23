//! Solved databases: one SQLite file per variant.
//!
//! A database is written whole into a temporary file beside its final name,
//! in one transaction, synced, and renamed into place, so a crash leaves
//! either the old file or the new one, never half of one. (A two-bit
//! table resolved into frames, hours of work on the largest boards, may be
//! written resumably instead: into a partial file committed as it goes,
//! renamed into place when whole and checked.) Writers of one
//! variant in one directory take turns ([`WriteLock`]), and the next writer
//! removes what a killed one left behind.
//!
//! Nothing in a file is believed before it is checked. Opening checks the
//! file's length, format and hash versions, variant and start, a checksum of
//! the whole header (the `meta` table and the `classes` rows), every count,
//! histogram and hardest position for consistency, and that the metadata
//! repeats what the tables say (the start's and the goal's remoteness are
//! looked up). Every block of a table (the positions of one white set) has
//! its own checksum, verified each time it is read, so a lookup checks what
//! it reads at the cost of one block; [`Database::verify`] reads everything
//! and recomputes every count. The schema (see [`SCHEMA`] and `docs/database.md`) is
//! meant to be read by people with `sqlite3` as well as by this program.
//!
//! One file per concern, each importing only the ones above it here:
//!
//! | file | owns |
//! |---|---|
//! | `fault.rs` | why something read is not believed |
//! | `schema.rs` | the format version, the schema, [`Layout`], [`Metadata`], [`ClassRecord`] and their checks |
//! | `checksum.rs` | the block, class and header checksums |
//! | `names.rs` | the files of a database directory and what may stand at their paths |
//! | `lock.rs` | [`WriteLock`] and the sweep of what killed writers left |
//! | `commit.rs` | a long write committed as it goes, so that a stopped one resumes ([`Resumable`]) |
//! | `block.rs` | one block: where its positions are, and the checks of its cells |
//! | `rows.rs`, `blocks.rs`, `residues.rs` | each layout's writing and reading of one block |
//! | `frames.rs` | the frames layout: runs of blocks compressed on their own, written and read back checked |
//! | `stream.rs` | a byte table that arrives in pieces, cut into blocks as it comes |
//! | `write.rs` | writing a whole file atomically, or resumably |
//! | `arena.rs` | the memory of held blocks, in huge pages |
//! | `packed.rs` | a frame's block of exact values held in memory in the bits its spread needs |
//! | `cache.rs` | the checked blocks kept in memory, shared by a file's connections |
//! | `memo.rs` | what a connection worked out lately: the cells it read, by position, so that a question reads each once, and where the white sets it placed lie |
//! | `read.rs` | the open [`Database`] and its lookups |
//! | `open.rs` | opening a file, and every check before it is believed |
//! | `scan.rs` | reading a table whole, and [`Database::verify`] |

mod arena;
mod block;
mod blocks;
mod cache;
mod checksum;
mod commit;
mod confirm;
mod fault;
mod frames;
mod lock;
mod memo;
mod names;
mod open;
mod packed;
mod read;
mod residues;
mod rows;
mod scan;
mod schema;
mod stream;
mod write;

pub use checksum::{Checksum, block_checksum};
pub use commit::Resumable;
pub use confirm::{AUDIT_SAMPLES, CONFIRMED_KEPT, Walks};
pub use frames::{FRAME_POSITIONS, LEVEL};
pub use lock::WriteLock;
pub use names::{check_destination, check_dir, is_database, is_own_name, partial_files, partial_path, path};
pub use read::{BLOCK_CACHE_BYTES, Database, Held};
pub use residues::{code_at, pack, unpack};
pub use schema::{ClassRecord, FORMAT_VERSION, Layout, Metadata, OLDEST_FORMAT_VERSION, ROWS_MAX_LEGAL, SCHEMA};
pub use write::{
    Progress, Vet, WriteEvent, WriteOptions, remove_partial, write, write_streamed, write_two_bit, write_vetted,
    write_with,
};
