//! The exact sizes of the standard boards past 64 squares a class, counted
//! with the tight index in 128-bit words, and what a solve of each would
//! need by each method:
//!
//! ```text
//! cargo run --release --example sizes                # 12x10 (a check), 13x10, 14x10, 17x8, 18x8, 13x12
//! cargo run --release --example sizes -- 17x8 18x8   # some of them
//! ```
//!
//! For each class of the standard start (white on row `a`, black on the
//! last row): its squares and bishops, its white sets (the blocks of the
//! tight index), its legal positions, and the moves per legal position over
//! a sample drawn uniformly from them. Then the memory and disk of the byte
//! and two-bit searches by the formulas of `Plan` (one byte or two bits a
//! position, 24 bytes of index a white set in 128-bit words, two
//! checkpoints beside the database), for the class searched: on an even
//! number of columns the a2 class is the a1 class's mirror image, as on
//! 11x10 and 12x10, and is not searched.

use std::time::Instant;

use bishops::index::{DenseIndex, splitmix};
use bishops::tight::legal_count;
use bishops::{Board, Class, Geometry, OrbitIndex, Part, Symmetries, TightIndex};

const BOARDS: [&str; 6] = ["12x10", "13x10", "14x10", "17x8", "18x8", "13x12"];

/// Draws legal positions uniformly (a uniform public hash, kept when
/// legal) until `want` are found, and returns the mean number of moves.
fn moves_per_position(geo: &Geometry<u128>, white: u32, black: u32, want: u64) -> f64 {
    let dense: DenseIndex<u128> = DenseIndex::in_words(geo.len() as u32, white, black);
    let mut state = 0x5eed ^ dense.len();
    let (mut found, mut moves) = (0u64, 0u64);
    while found < want {
        let part: Part<u128> = dense.unrank(splitmix(&mut state) % dense.len());
        if part.is_legal(geo) {
            found += 1;
            part.for_each_move(geo, |_, _, _, _| moves += 1);
        }
    }
    moves as f64 / found as f64
}

fn gib(bytes: f64) -> String {
    format!("{:.1} GiB", bytes / f64::from(1u32 << 30))
}

fn main() {
    let asked: Vec<String> = std::env::args().skip(1).collect();
    let boards: Vec<&str> = if asked.is_empty() {
        BOARDS.to_vec()
    } else {
        asked.iter().map(String::as_str).collect()
    };
    for name in boards {
        let Some((rows, cols)) = name
            .split_once('x')
            .and_then(|(r, c)| Some((r.parse().ok()?, c.parse().ok()?)))
        else {
            eprintln!("usage: sizes [RxC…]");
            std::process::exit(2);
        };
        let board = Board::new(rows, cols).unwrap_or_else(|e| panic!("{e}"));
        let mut searched = None;
        for class in Class::ALL {
            let geo: Geometry<u128> = Geometry::in_words(board, class);
            let white = geo.row(0).count();
            let black = geo.row(board.rows() - 1).count();
            let started = Instant::now();
            let (whites, legal) = legal_count(&geo, white, black);
            let counted = started.elapsed().as_secs_f64();
            let dense = DenseIndex::size(geo.len() as u32, white, black).expect("a 128-bit hash");
            let mpp = moves_per_position(&geo, white, black, 20_000);
            println!(
                "{name} class {}: {} squares, {white} + {black} bishops, R = {dense}, white sets {whites}, legal {legal}, \
                 moves per position {mpp:.1} (20,000 sampled); counted in {counted:.1} s",
                class.name(),
                geo.len(),
            );
            let goal = Part {
                white: geo.row(board.rows() - 1),
                black: geo.row(0),
            };
            let group = Symmetries::of(&geo, goal);
            let tight = TightIndex::new(&geo, white, black);
            match OrbitIndex::new(tight, &group) {
                Some(orbits) => println!(
                    "{name} class {}: orbits under {}: {} ({:.4} of the legal positions), {} of two-bit table",
                    class.name(),
                    group.names().join(", "),
                    orbits.len(),
                    orbits.len() as f64 / legal as f64,
                    gib(orbits.len() as f64 / 4.0),
                ),
                None => println!(
                    "{name} class {}: no orbit index (symmetries: {})",
                    class.name(),
                    group.names().join(", ")
                ),
            }
            searched.get_or_insert((whites, legal, mpp));
        }
        let (whites, legal, mpp) = searched.expect("a class");
        let (whites, legal) = (whites as f64, legal as f64);
        let index = 24.0 * whites;
        let byte_memory = legal + legal / 8.0 + 2.0 * whites + index;
        let two_bit_memory = legal / 4.0 + 2.0 * whites + index;
        println!(
            "{name}: class a1 searched{}; byte search {} of memory, {} of disk with two checkpoints; \
             two-bit search {} of memory, {} of disk; work {:.3e} moves",
            if cols % 2 == 0 {
                ", a2 its mirror image"
            } else {
                " (and a2)"
            },
            gib(byte_memory),
            gib(3.0 * legal),
            gib(two_bit_memory),
            gib(3.0 * legal / 4.0),
            legal * mpp,
        );
    }
}
