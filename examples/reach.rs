//! What a question must read, whatever the layout: a question shows its
//! position's remoteness and every move's, and holds each against all its
//! neighbours, so it reads the values of every position one or two moves
//! away in the class a move changes. This counts, for each position of a
//! file (one position string a line, as `examples/positions.rs` writes
//! them), those neighbour lookups and the distinct blocks (class and white
//! set) they fall in, from the rules alone, with no database:
//!
//! ```text
//! cargo run --release --example positions -- 11x10 uniform 2000 > uniform.txt
//! cargo run --release --example reach -- uniform.txt
//! ```
//!
//! A block a question has not met costs a frame read and decompressed in
//! the `frames` layout, unless a cache holds it.

use std::collections::HashSet;

use bishops::{Class, Position, Square};

/// The block `position`'s part in `class` lies in: its white bishops there.
fn block(position: &Position, class: Class) -> (Class, Vec<Square>) {
    let white = position.white().iter().copied().filter(|&s| Class::of(s) == class);
    (class, white.collect())
}

fn main() {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: reach POSITIONS");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        eprintln!("cannot read {file}: {e}");
        std::process::exit(1);
    });
    let (mut questions, mut blocks, mut lookups) = (0usize, 0usize, 0usize);
    for line in text.lines() {
        let position: Position = line.parse().expect("a position a line");
        let mut met = HashSet::new();
        for &square in position.white().iter().chain(position.black()) {
            met.insert(block(&position, Class::of(square)));
        }
        for (mv, after) in position.moves() {
            let class = Class::of(mv.from);
            met.insert(block(&after, class));
            lookups += 1;
            // The move's value is held against its own neighbours.
            for (next, beyond) in after.moves() {
                if Class::of(next.from) == class {
                    met.insert(block(&beyond, class));
                    lookups += 1;
                }
            }
        }
        questions += 1;
        blocks += met.len();
    }
    let per = |n: usize| n as f64 / questions.max(1) as f64;
    println!(
        "{questions} questions: {:.1} neighbour lookups and {:.1} distinct blocks a question",
        per(lookups),
        per(blocks)
    );
}
