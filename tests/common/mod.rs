#![allow(dead_code)]

pub mod reference;
pub mod scratch;
pub mod stops;
pub mod tables;

use std::path::PathBuf;
use std::process::Output;

use bishops::Variant;
use bishops::solver::{self, Solution};
pub use scratch::Scratch;

/// `<target tmp>/<prefix>-<name>-<process id>`, removed when it exists: a
/// scratch directory of one test process, not yet created, and removed
/// again once the test has passed ([`Scratch`]).
pub fn scratch(prefix: &str, name: &str) -> Scratch {
    Scratch::fresh(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{name}-{}", std::process::id())))
}

/// `output` of a command that must have succeeded (`what` names it), or
/// a failed test that shows its status and standard error.
pub fn succeeded(output: Output, what: &str) -> Output {
    assert!(
        output.status.success(),
        "{what}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The variant `name`, solved in memory by the default search.
pub fn solved(name: &str) -> (Variant, Solution) {
    let variant = Variant::named(name).unwrap();
    let solution = solver::solve(&variant, &mut |_| {}).unwrap();
    (variant, solution)
}
