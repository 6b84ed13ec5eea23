//! Measures what solving a board would take before trying: the exact number
//! of legal positions per class (by building the tight index), the memory
//! of its tables, and the average number of moves per position (from a
//! deterministic sample), which scales the search time measured on a board
//! that was solved.
//!
//! ```sh
//! cargo run --release --example estimate -- 11x8 11x10-full
//! ```

use std::time::Instant;

use bishops::index::colex_unrank;
use bishops::tight::Subsets;
use bishops::{Part, Variant};

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        eprintln!("usage: estimate VARIANT...");
        std::process::exit(2);
    }
    for name in names {
        let variant = match Variant::named(&name) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        let spec = &variant.classes()[0];
        let (w, b) = spec.counts();
        let started = Instant::now();
        let index = spec.tight_index();
        let built = started.elapsed();
        // Average moves per legal position over every 997th white set.
        let (mut positions, mut moves) = (0u64, 0u64);
        for r in (0..index.white_sets()).step_by(997) {
            let white = colex_unrank(r, w);
            for black in Subsets::new(index.safe(r), b) {
                positions += 1;
                Part { white, black }.for_each_move(&spec.geometry, |_, _, _, _| moves += 1);
            }
        }
        println!(
            "{name}: class a1 has {} squares, {w}+{b} bishops, {} white sets, {} legal positions \
             (index built in {:.2} s, tables {} MiB); {:.2} moves per position over {positions} sampled",
            spec.geometry.len(),
            index.white_sets(),
            index.len(),
            built.as_secs_f64(),
            index.table_bytes() >> 20,
            moves as f64 / positions.max(1) as f64,
        );
    }
}
