//! A coder of the puzzle's own for a solved class's exact remoteness: how
//! small it makes a class, and what decoding costs, against the zstd
//! frames the `frames` layout stores (`examples/coding.rs`).
//!
//! ```text
//! cargo run --release --example model -- DB VARIANT [CLASS] [POSITIONS] [RUN]
//! ```
//!
//! Reads whole blocks of class `CLASS` (default 0) of the database of
//! `VARIANT` in `DB`, at most `POSITIONS` from the class's middle
//! (default: all). It codes each block on its own, or each run of `RUN`
//! positions of a block on its own (a lookup then decodes at most a run),
//! with a binary range coder whose probabilities are fixed for the class:
//! counted in a first pass, they would be stored once a class (45
//! decisions, 90 bytes).
//!
//! The model: moves can be undone, so the values of two neighbours differ
//! by at most one, and a position unreachable from the goal has only such
//! neighbours. Each value is coded against the values of its neighbours by
//! a black move that come earlier in its run (they keep the white set, so
//! they are in the block, and the decoder has them already):
//!
//! - none: against the value before it in the run (the same, one more,
//!   one less, unreachable, or else eight raw bits);
//! - some, the fewest moves among them `low` and the most `high`: nothing
//!   when one is unreachable (so is it) or `high - low` is 2 (it is
//!   `low + 1`); else whether it is `low + 1`, and when the spread is 0,
//!   whether it is `low` (else `low - 1`). Each decision's probability is
//!   kept by the spread, how many such neighbours there are (1 to 4 or
//!   more) and whether the value before it in the run is `low + 1`.
//!
//! Decoding a run generates the black moves of each of its positions,
//! which is the cost a lookup would pay where zstd decodes a frame. Prints
//! the bits a position (a stream a block or a run, and a stream a frame of
//! at least 16,384 positions), the time to code and to decode a block or a
//! run, ranking each neighbour by the library's `rank_within` and by tables
//! as the search's kernel does. It checks that both rankings give every
//! position the same context (fewest, most, how many) and the same
//! streams, and that every stream decodes to what was coded.

use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use bishops::index::{binomial, colex_rank, rank_within};
use bishops::storage::Database;
use bishops::tight::TightIndex;
use bishops::{Bitboard, Geometry, Variant};

/// The value of a position no move sequence brings to the goal.
const UNREACHABLE: u8 = 254;

/// Probabilities are this many bits.
const BITS: u32 = 15;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: model DB VARIANT [CLASS] [POSITIONS] [RUN]");
        std::process::exit(2);
    }
    let variant = Variant::named(&args[1]).expect("a named variant");
    let k: usize = args.get(2).map_or(0, |s| s.parse().expect("a class number"));
    let limit: u64 = args.get(3).map_or(u64::MAX, |s| s.parse().expect("a count"));
    let run: usize = args.get(4).map_or(usize::MAX, |s| s.parse().expect("a run length"));
    assert!(run > 0, "a run holds a position at least");
    let db: Database = Database::open(Path::new(&args[0]), &variant).expect("an open database");
    let spec = &variant.specs::<u64>()[k];
    let geo = &spec.geometry;
    let tight = TightIndex::new(geo, spec.start.white.count(), spec.start.black.count());
    let legal = db.classes()[k].stats.legal;
    let skip = legal.saturating_sub(limit) / 2;

    // Whole blocks from the middle of the class.
    let mut blocks: Vec<Block> = Vec::new();
    let mut kept = 0u64;
    let mut i = 0u64;
    db.for_each_row(k, |_, part, cell| {
        if i >= skip && kept < limit {
            let r = colex_rank(part.white);
            if blocks.last().is_none_or(|b| b.white != part.white) {
                // A block is kept from its first position.
                if tight.block(r).start >= skip {
                    blocks.push(Block::new(part.white, tight.safe(r)));
                }
            }
            if let Some(b) = blocks.last_mut()
                && b.white == part.white
            {
                assert_eq!(
                    rank_within(part.black, b.safe),
                    b.blacks.len() as u64,
                    "rows come in the block's order"
                );
                b.blacks.push(part.black);
                b.cells.push(cell.0);
                kept += 1;
            }
        }
        i += 1;
        Ok(())
    })
    .expect("a readable class");
    // The last block may be cut short by the limit.
    if let Some(b) = blocks.last()
        && b.blacks.len() != tight.block(colex_rank(b.white)).count()
    {
        blocks.pop();
    }
    let n: usize = blocks.iter().map(|b| b.cells.len()).sum();
    println!(
        "{} class {k}: {n} positions of {legal} in {} whole blocks",
        args[1],
        blocks.len()
    );

    // Each block cut into runs of `run` positions, each coded on its own.
    let runs: Vec<(&Block, Range<usize>)> = blocks
        .iter()
        .flat_map(|b| {
            (0..b.cells.len())
                .step_by(run)
                .map(move |s| (b, s..b.cells.len().min(s.saturating_add(run))))
        })
        .collect();

    // Pass 1: the probabilities.
    let mut counts = Counts(vec![[0u64; 2]; CONTEXTS]);
    for (b, range) in &runs {
        code_run(geo, Ranks::Library, b, range.clone(), &mut counts);
        // Both rankings give every position the same context.
        for i in range.clone() {
            let by = |ranks| near(geo, ranks, b, &b.cells, range.start, i);
            assert_eq!(by(Ranks::Library), by(Ranks::Tables), "the same context by tables");
        }
    }
    let probs: Vec<u32> = counts
        .0
        .iter()
        .map(|&[zero, one]| {
            let p = (zero as f64 + 0.5) / ((zero + one) as f64 + 1.0);
            ((p * f64::from(1 << BITS)).round() as u32).clamp(1, (1 << BITS) - 1)
        })
        .collect();
    let model_bytes = 2 * probs.len();

    // Pass 2: a stream a run.
    let what = if run == usize::MAX {
        "block".to_string()
    } else {
        format!("run of {run}")
    };
    let code = |ranks| {
        let t = Instant::now();
        let streams: Vec<Vec<u8>> = runs
            .iter()
            .map(|(b, range)| {
                let mut enc = Encoder::new(&probs);
                code_run(geo, ranks, b, range.clone(), &mut enc);
                enc.finish()
            })
            .collect();
        (streams, t.elapsed().as_secs_f64())
    };
    let (streams, write) = code(Ranks::Library);
    let (by_tables, write_tables) = code(Ranks::Tables);
    assert!(by_tables == streams, "the same streams by tables");
    let bytes: usize = streams.iter().map(Vec::len).sum();
    println!(
        "a stream a {what}: {:.3} bits a position ({bytes} bytes, and the model's {model_bytes}), written in {write:.1} s ({write_tables:.1} s ranking by tables)",
        (bytes + model_bytes) as f64 * 8.0 / n as f64
    );
    println!(
        "with a 4-byte offset a {what} to find its stream: {:.3} bits a position",
        (bytes + model_bytes + 4 * streams.len()) as f64 * 8.0 / n as f64
    );

    // Pass 3: decode every run, timed, and compare.
    for (ranks, how) in [
        (Ranks::Library, "the library's ranks"),
        (Ranks::Tables, "ranks by tables"),
    ] {
        let t = Instant::now();
        let mut cells = Vec::new();
        for ((b, range), stream) in runs.iter().zip(&streams) {
            let mut dec = Decoder::new(&probs, stream);
            cells.clear();
            cells.resize(b.cells.len(), 0);
            decode_run(geo, ranks, b, range.clone(), &mut cells, &mut dec);
            assert_eq!(
                cells[range.clone()],
                b.cells[range.clone()],
                "a run decodes to what was coded"
            );
        }
        let read = t.elapsed().as_secs_f64();
        println!(
            "decoding by {how}: {:.1} us a {what} on average ({:.0} positions), {:.0} ns a position",
            read * 1e6 / runs.len() as f64,
            n as f64 / runs.len() as f64,
            read * 1e9 / n as f64
        );
    }

    // Streams over frames of at least 16,384 positions of whole runs.
    let mut frame_bytes = 0;
    let mut frames = 0;
    let mut at = 0;
    while at < runs.len() {
        let mut enc = Encoder::new(&probs);
        let mut len = 0;
        while at < runs.len() && len < 1 << 14 {
            let (b, range) = &runs[at];
            code_run(geo, Ranks::Tables, b, range.clone(), &mut enc);
            len += range.len();
            at += 1;
        }
        frame_bytes += enc.finish().len();
        frames += 1;
    }
    println!(
        "a stream a frame of at least 16384 positions: {:.3} bits a position ({frames} frames)",
        (frame_bytes + model_bytes) as f64 * 8.0 / n as f64
    );
    let total: f64 = counts.0.iter().map(|c| (c[0] + c[1]) as f64).sum();
    println!("decisions coded: {:.3} a position", total / n as f64);
}

/// One white set's positions, in the block's order, and their values.
struct Block {
    white: Bitboard<u64>,
    safe: Bitboard<u64>,
    /// How many safe cells lie below each cell (for the safe cells).
    at: [u8; 64],
    blacks: Vec<Bitboard<u64>>,
    cells: Vec<u8>,
}

impl Block {
    fn new(white: Bitboard<u64>, safe: Bitboard<u64>) -> Block {
        let mut at = [0; 64];
        for (k, cell) in safe.iter().enumerate() {
            at[usize::from(cell)] = k as u8;
        }
        Block {
            white,
            safe,
            at,
            blacks: Vec::new(),
            cells: Vec::new(),
        }
    }
}

/// How a neighbour's place in its block is found: by the library's
/// `rank_within`, or by tables as the search's kernel ranks a black move
/// (the cells that stay summed once for each bishop that leaves, then one
/// term for the cell it lands on).
#[derive(Clone, Copy)]
enum Ranks {
    Library,
    Tables,
}

/// How many decisions have a probability of their own.
const CONTEXTS: usize = RAW + 8;
/// Decisions against the value before (no neighbour earlier): same, one
/// more, one less, unreachable; after an unreachable one: unreachable.
const BEFORE: usize = 0;
/// Against earlier neighbours: spread (0 or 1) x neighbours (1 to 4) x
/// whether the value before is `low + 1`, two decisions each.
const NEAR: usize = 5;
/// Eight raw bits, one decision each.
const RAW: usize = NEAR + 2 * 4 * 2 * 2;

/// A binary coder: encodes `bit` (`Some`) or decodes one (`None`) under
/// decision `ctx`'s probability, and returns it.
trait Decide {
    fn bit(&mut self, ctx: usize, bit: Option<bool>) -> bool;
}

/// Pass 1: counts each decision's outcomes.
struct Counts(Vec<[u64; 2]>);

impl Decide for Counts {
    fn bit(&mut self, ctx: usize, bit: Option<bool>) -> bool {
        let bit = bit.expect("counting codes known values");
        self.0[ctx][usize::from(bit)] += 1;
        bit
    }
}

/// A range coder after LZMA's: 32-bit range, carries through a cached
/// byte, probabilities of a zero in [`BITS`] bits.
struct Encoder<'a> {
    probs: &'a [u32],
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
}

impl<'a> Encoder<'a> {
    fn new(probs: &'a [u32]) -> Encoder<'a> {
        Encoder {
            probs,
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out: Vec::new(),
        }
    }

    fn shift_low(&mut self) {
        if (self.low as u32) < 0xff00_0000 || self.low >> 32 != 0 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            loop {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xff;
                self.cache_size -= 1;
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.cache_size += 1;
        self.low = (self.low & 0x00ff_ffff) << 8;
    }

    /// The stream, its first byte (always 0) left out.
    fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out.remove(0);
        self.out
    }
}

impl Decide for Encoder<'_> {
    fn bit(&mut self, ctx: usize, bit: Option<bool>) -> bool {
        let bit = bit.expect("encoding codes known values");
        let bound = (self.range >> BITS) * self.probs[ctx];
        if bit {
            self.low += u64::from(bound);
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.shift_low();
        }
        bit
    }
}

/// [`Encoder`]'s inverse.
struct Decoder<'a> {
    probs: &'a [u32],
    code: u32,
    range: u32,
    input: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    fn new(probs: &'a [u32], input: &'a [u8]) -> Decoder<'a> {
        let mut dec = Decoder {
            probs,
            code: 0,
            range: u32::MAX,
            input,
            at: 0,
        };
        for _ in 0..4 {
            dec.code = dec.code << 8 | u32::from(dec.next());
        }
        dec
    }

    fn next(&mut self) -> u8 {
        let byte = self.input.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }
}

impl Decide for Decoder<'_> {
    fn bit(&mut self, ctx: usize, _: Option<bool>) -> bool {
        let bound = (self.range >> BITS) * self.probs[ctx];
        let bit = self.code >= bound;
        if bit {
            self.code -= bound;
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.code = self.code << 8 | u32::from(self.next());
        }
        bit
    }
}

/// Codes the values of the positions `run` of `block` in order through
/// `coder`, each against what comes before it in the run.
fn code_run(geo: &Geometry<u64>, ranks: Ranks, block: &Block, run: Range<usize>, coder: &mut impl Decide) {
    let start = run.start;
    for i in run {
        let before = (i > start).then(|| block.cells[i - 1]);
        let v = value(
            coder,
            near(geo, ranks, block, &block.cells, start, i),
            before,
            Some(block.cells[i]),
        );
        debug_assert_eq!(v, block.cells[i]);
    }
}

/// Decodes the values of the positions `run` of `block` into `cells`
/// through `coder`: [`code_run`]'s inverse.
fn decode_run(
    geo: &Geometry<u64>,
    ranks: Ranks,
    block: &Block,
    run: Range<usize>,
    cells: &mut [u8],
    coder: &mut impl Decide,
) {
    let start = run.start;
    for i in run {
        let before = (i > start).then(|| cells[i - 1]);
        cells[i] = value(coder, near(geo, ranks, block, cells, start, i), before, None);
    }
}

/// The fewest and most moves among the neighbours by a black move of
/// position `i` of `block` that come before it from position `start` on,
/// and how many there are.
fn near(geo: &Geometry<u64>, ranks: Ranks, block: &Block, cells: &[u8], start: usize, i: usize) -> (u8, u8, usize) {
    if let Ranks::Tables = ranks {
        return near_by_tables(geo, block, cells, start, i);
    }
    let black = block.blacks[i];
    let occupied = block.white | black;
    let empty = block.safe & !black;
    let (mut low, mut high, mut count) = (u8::MAX, 0, 0);
    for from in black {
        let rest = black.without(from);
        for to in geo.attacks(from, occupied) & empty {
            let j = rank_within(rest.with(to), block.safe) as usize;
            if (start..i).contains(&j) {
                low = low.min(cells[j]);
                high = high.max(cells[j]);
                count += 1;
            }
        }
    }
    (low, high, count)
}

/// C(n, k), from the library's table.
fn choose(n: usize, k: usize) -> u64 {
    binomial(n as u32, k as u32)
}

/// [`near`] by tables.
fn near_by_tables(geo: &Geometry<u64>, block: &Block, cells: &[u8], start: usize, i: usize) -> (u8, u8, usize) {
    let black = block.blacks[i];
    let occupied = block.white | black;
    let empty = block.safe & !black;
    let (mut low, mut high, mut count) = (u8::MAX, 0, 0);
    let mut list = [u8::MAX; 9];
    let mut at = [0usize; 9];
    let m = black.count() as usize;
    for (k, cell) in black.iter().enumerate() {
        list[k] = cell;
        at[k] = usize::from(block.at[usize::from(cell)]);
    }
    for k in 0..m {
        // The places of the cells that stay, lowest first.
        let p = |j: usize| if j < k { at[j] } else { at[j + 1] };
        // `stay[b]`: their part of the rank when `b` of them lie below the
        // cell the bishop lands on.
        let mut stay = [0u64; 9];
        let mut sum: u64 = (0..m - 1).map(|j| choose(p(j), j + 2)).sum();
        stay[0] = sum;
        for (b, slot) in stay.iter_mut().enumerate().take(m).skip(1) {
            sum = sum - choose(p(b - 1), b + 1) + choose(p(b - 1), b);
            *slot = sum;
        }
        let from = list[k];
        for to in geo.attacks(from, occupied) & empty {
            let below = list[..m].iter().filter(|&&c| c < to).count() - usize::from(from < to);
            let j = (stay[below] + choose(usize::from(block.at[usize::from(to)]), below + 1)) as usize;
            if (start..i).contains(&j) {
                low = low.min(cells[j]);
                high = high.max(cells[j]);
                count += 1;
            }
        }
    }
    (low, high, count)
}

/// Codes (or decodes, `v` `None`) one value given its earlier neighbours
/// `(low, high, count)` and the value `before` it in its block.
fn value(coder: &mut impl Decide, (low, high, count): (u8, u8, usize), before: Option<u8>, v: Option<u8>) -> u8 {
    if count == 0 {
        let Some(p) = before else {
            return raw(coder, v);
        };
        if p == UNREACHABLE {
            if coder.bit(BEFORE + 4, v.map(|v| v == UNREACHABLE)) {
                return UNREACHABLE;
            }
            return raw(coder, v);
        }
        let guesses = [Some(p), p.checked_add(1), p.checked_sub(1), Some(UNREACHABLE)];
        for (d, guess) in guesses.into_iter().enumerate() {
            if let Some(g) = guess
                && coder.bit(BEFORE + d, v.map(|v| v == g))
            {
                return g;
            }
        }
        return raw(coder, v);
    }
    if low == UNREACHABLE {
        return UNREACHABLE;
    }
    let spread = high - low;
    if spread == 2 {
        return low + 1;
    }
    let after = usize::from(before == Some(low + 1));
    let ctx = NEAR + 2 * ((usize::from(spread) * 4 + count.min(4) - 1) * 2 + after);
    if coder.bit(ctx, v.map(|v| v == low + 1)) {
        return low + 1;
    }
    if spread == 1 || coder.bit(ctx + 1, v.map(|v| v == low)) {
        return low;
    }
    low - 1
}

/// Eight raw bits, high first.
fn raw(coder: &mut impl Decide, v: Option<u8>) -> u8 {
    (0..8).fold(0u8, |acc, b| {
        acc << 1 | u8::from(coder.bit(RAW + b, v.map(|v| v >> (7 - b) & 1 == 1)))
    })
}
