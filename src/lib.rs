//! `bishops` strongly solves the Bishops swap puzzle of *The 7th Guest* and
//! its larger relatives.
//!
//! White bishops start on the bottom row, black bishops on the top row; the
//! task is to swap them, one move at a time, with no turn order, never leaving
//! a bishop where one of the other colour attacks it. The *remoteness* of a
//! position is the fewest moves still needed.
//!
//! The crate is laid out one idea per module:
//!
//! | module | idea |
//! |---|---|
//! | [`Square`], [`Bitboard`], [`Board`], [`Geometry`] | board geometry: squares, colour classes, cells, rays |
//! | [`Part`], [`rules`] | legality and moves inside one colour class |
//! | [`Position`], [`Move`] | whole-board positions and moves, as strings |
//! | [`Variant`] | a board and a start; named ones live in `variants/` |
//! | [`index`] | the public position hash R(n, w, b), rank and unrank |
//! | [`tight`] | the solver's index over legal positions only |
//! | [`Mirror`], [`Symmetries`] | symmetries: one colour class onto the other, a class onto itself |
//! | [`solver`] | retrograde breadth-first search into remoteness tables |
//! | [`storage`] | SQLite databases of solved variants, checked as they are read |
//! | [`cleanup`] | temporary files removed when the process is interrupted |
//! | [`stop`] | a stop asked for (`SIGUSR1`): the search saves its work, then stops |
//! | [`files`] | opening only regular files, never blocking; renaming without replacing |
//! | [`pipeline`] | solving a variant into its database: memory plan, search, check, write |
//! | [`Tablebase`] ([`tablebase`]) | the query API: probe, best move, line, verify |
//! | [`check`] | proving a stored table correct from the rules alone |
//! | [`Remoteness`], [`Cell`] | what the tables hold |
//! | [`report`] | the `variants` and `stats` reports |
//! | [`server`] | `bishops serve`: the page and the JSON API |
//! | [`cli`] | the `bishops` command line, one module per command |
//!
//! Front ends ask their questions through a [`Tablebase`]; the search alone
//! is [`solver::solve`]:
//!
//! ```
//! use bishops::{Position, Remoteness, Variant, solver};
//!
//! let position: Position = "5_4_a1-b2_e1-e3".parse().unwrap();
//! let variant = Variant::for_position(&position, None).unwrap();
//! let solution = solver::solve(&variant, &mut |_| {}).unwrap();
//! let hash = variant.class_hashes(&position)[0];
//! assert_eq!(solution.cell(0, hash).remoteness(), Some(Remoteness(17)));
//! ```

#![warn(missing_docs)]

mod bitboard;
mod board;
pub mod check;
pub mod checkpoint;
pub mod cleanup;
pub mod cli;
mod error;
pub mod estimate;
pub mod files;
pub mod index;
pub mod mod3;
pub mod orbits;
pub mod pipeline;
mod position;
mod remoteness;
pub mod report;
pub mod rules;
pub mod server;
pub mod solver;
mod square;
pub mod stop;
pub mod storage;
mod symmetry;
pub mod system;
pub mod tablebase;
pub mod text;
pub mod tight;
mod variant;

pub use bitboard::{Bitboard, Cells, Word};
pub use board::{Board, Class, Geometry, MAX_CLASS_SQUARES};
pub use error::{Error, Result};
pub use index::DenseIndex;
pub use orbits::OrbitIndex;
pub use position::{IllegalMove, Move, Position, PositionError, Refusals};
pub use remoteness::{Cell, Remoteness};
pub use rules::{Colour, Part};
pub use square::{MAX_ROWS, Square};
pub use symmetry::{BlockTest, Images, Mirror, Motion, Symmetries, Symmetry};
pub use tablebase::{Line, MoveValue, Probe, Status, Table, Tablebase, Value, Verification};
pub use tight::TightIndex;
pub use variant::{ClassSpec, Known, Variant, Width};
