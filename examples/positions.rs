//! Positions of a named variant to load a server with, one position
//! string a line:
//!
//! ```text
//! cargo run --release --example positions -- 11x10 walk 2000 > walk.txt
//! cargo run --release --example positions -- 11x10 uniform 5000 > uniform.txt
//! ```
//!
//! `walk`: the positions of a random walk of that many moves from the
//! start, each move drawn among the legal ones (what a player meets).
//! `uniform`: that many positions drawn uniformly from all legal ones (an
//! analyst's load): each class's part a uniform public hash, kept when
//! legal. Both are seeded, so a run is repeatable.

use bishops::index::{DenseIndex, splitmix};
use bishops::{Part, Position, Variant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(kind), Some(count)) = (args.first(), args.get(1), args.get(2).and_then(|n| n.parse().ok()))
    else {
        eprintln!("usage: positions VARIANT walk|uniform COUNT");
        std::process::exit(2);
    };
    let count: usize = count;
    let variant = Variant::named(name).expect("a named variant");
    let mut state = 0x5eed_2026u64;
    match kind.as_str() {
        "walk" => {
            let mut position = variant.start().clone();
            for _ in 0..count {
                let mut moves = position.moves();
                let pick = (splitmix(&mut state) % moves.len() as u64) as usize;
                position = moves.swap_remove(pick).1;
                println!("{position}");
            }
        }
        "uniform" => {
            let specs = variant.classes();
            let indices: Vec<DenseIndex> = specs.iter().map(|s| s.index).collect();
            for _ in 0..count {
                let parts: Vec<_> = specs
                    .iter()
                    .zip(&indices)
                    .map(|(spec, index)| {
                        loop {
                            let part: Part = index.unrank(splitmix(&mut state) % index.len());
                            if part.is_legal(&spec.geometry) {
                                break (&spec.geometry, part);
                            }
                        }
                    })
                    .collect();
                println!("{}", Position::from_parts(variant.board(), &parts));
            }
        }
        _ => {
            eprintln!("usage: positions VARIANT walk|uniform COUNT");
            std::process::exit(2);
        }
    }
}
