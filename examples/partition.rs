//! Runs the partitioned search ([`bishops::solver::partition`]) of a variant
//! with K workers (threads of this process, each owning its own cells and
//! exchanging `(block, position)` message streams) and prints, per layer,
//! the positions found, the neighbours that cross to another worker, the
//! messages and bytes exchanged, and the time; then checks the answers
//! against the variant file's known values.
//!
//! ```sh
//! cargo run --release --example partition -- 9x8 4
//! cargo run --release --example partition -- 9x8 4 --compare
//! ```
//!
//! `--compare` also runs the search of the whole class by one worker
//! ([`bishops::solver::search::bytes`], what a one-process solve runs)
//! and checks the two tables agree byte for byte, with both times. Only classes that are not mirror images
//! of another are searched (a mirrored class has the same answers).

use std::time::Instant;

use bishops::solver::{mirrors, search};
use bishops::{Cell, Variant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (name, workers, compare) = match args.as_slice() {
        [name, k] => (name, k, false),
        [name, k, flag] if flag == "--compare" => (name, k, true),
        _ => usage(),
    };
    let Ok(workers) = workers.parse::<usize>() else { usage() };
    let variant = Variant::named(name).unwrap_or_else(|e| fail(&e.to_string()));
    let specs = variant.classes();
    let mirrored = mirrors(specs);
    let mut starts = vec![0u16; specs.len()];
    let mut largest = vec![0u16; specs.len()];
    let mut legal = vec![0u64; specs.len()];
    for (k, spec) in specs.iter().enumerate() {
        if let Some((from, _)) = mirrored[k] {
            println!("class {k}: the mirror image of class {from}, not searched");
            (starts[k], largest[k], legal[k]) = (starts[from], largest[from], legal[from]);
            continue;
        }
        let index = spec.tight_index();
        println!(
            "class {k}: {} positions in {} blocks, {workers} workers",
            index.len(),
            index.white_sets()
        );
        println!(
            "{:>5} {:>12} {:>12} {:>8} {:>12} {:>14} {:>14} {:>9}",
            "depth", "found", "expanded", "cross %", "messages", "bytes", "max worker B", "ms"
        );
        let started = Instant::now();
        let run = search::threads(name, spec, &index, workers, &mut |l| {
            println!(
                "{:>5} {:>12} {:>12} {:>8.2} {:>12} {:>14} {:>14} {:>9.1}",
                l.depth,
                l.found,
                l.expanded,
                100.0 * l.crossing as f64 / l.neighbours.max(1) as f64,
                l.messages,
                l.bytes,
                l.max_worker_bytes,
                l.elapsed.as_secs_f64() * 1e3
            );
        })
        .unwrap_or_else(|e| fail(&e.to_string()));
        let seconds = started.elapsed().as_secs_f64();
        let sum = |f: fn(&search::LayerStats) -> u64| run.layers.iter().map(f).sum::<u64>();
        let peak = run.layers.iter().map(|l| l.bytes).max().unwrap_or(0);
        println!(
            "class {k}: {} layers, {seconds:.2} s; neighbours {}, crossing {} ({:.2}%), messages {}, bytes {} total, {} in the largest layer",
            run.found().len(),
            sum(|l| l.neighbours),
            sum(|l| l.crossing),
            100.0 * sum(|l| l.crossing) as f64 / sum(|l| l.neighbours).max(1) as f64,
            sum(|l| l.messages),
            sum(|l| l.bytes),
            peak
        );
        let cells = run.assemble();
        let at = |part| Cell(cells[index.rank(part).expect("a legal start") as usize]);
        starts[k] = at(spec.start).remoteness().map_or(u16::MAX, |r| r.0);
        largest[k] = run.found().len() as u16 - 1;
        legal[k] = index.len();
        if compare {
            let started = Instant::now();
            let expected = search::bytes(name, spec, &index, &mut |_| {}).unwrap_or_else(|e| fail(&e.to_string()));
            let parallel_seconds = started.elapsed().as_secs_f64();
            if cells != expected {
                fail(&format!(
                    "class {k}: the partitioned table differs from search::bytes's"
                ));
            }
            println!(
                "class {k}: search::bytes {parallel_seconds:.2} s, same table byte for byte ({} cells)",
                cells.len()
            );
        }
    }
    let start: u16 = starts.iter().sum();
    let max: u16 = largest.iter().sum();
    println!("{name}: start remoteness {start}, largest {max}, legal {legal:?}");
    if let Some(known) = variant.known() {
        if known.legal != legal || known.start_remoteness != start || known.max_remoteness != max {
            fail(&format!("{name}: disagrees with the known values {known:?}"));
        }
        println!("{name}: agrees with the known values ({})", known.source);
    }
}

fn usage() -> ! {
    fail("usage: partition VARIANT WORKERS [--compare]")
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2)
}
