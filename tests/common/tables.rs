//! Comparing two solved class tables of the crate (unlike `reference`, this
//! module uses the crate: it checks the crate against itself).

use bishops::solver::ClassSolution;

/// Panics unless `a` and `b` hold the same cells and statistics, naming the
/// first position where they differ.
pub fn assert_same_table(label: &str, a: &ClassSolution, b: &ClassSolution) {
    assert_eq!(a.cells.len(), b.cells.len(), "{label}: legal positions");
    if let Some(i) = a.cells.iter().zip(&b.cells).position(|(x, y)| x != y) {
        panic!(
            "{label}: tables differ at tight index {i} (hash {}): {} vs {}",
            a.index.to_hash(i as u64),
            a.cells[i],
            b.cells[i]
        );
    }
    assert_eq!(a.stats, b.stats, "{label}: stats");
}
