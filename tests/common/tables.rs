//! Comparing two solved class tables of the crate (unlike `reference`, this
//! module uses the crate: it checks the crate against itself).

use bishops::solver::Solution;

/// Panics unless class `ka` of `a` and class `kb` of `b` hold the same cells
/// (a mirrored class's built through its mirror) and statistics, naming the
/// first position where they differ.
pub fn assert_same_table(label: &str, (a, ka): (&Solution, usize), (b, kb): (&Solution, usize)) {
    let (cells_a, cells_b) = (a.class_cells(ka), b.class_cells(kb));
    assert_eq!(cells_a.len(), cells_b.len(), "{label}: legal positions");
    if let Some(i) = cells_a.iter().zip(cells_b.iter()).position(|(x, y)| x != y) {
        panic!(
            "{label}: tables differ at tight index {i} (hash {}): {} vs {}",
            a.classes[ka].index.to_hash(i as u64),
            cells_a[i],
            cells_b[i]
        );
    }
    assert_eq!(a.classes[ka].stats, b.classes[kb].stats, "{label}: stats");
}
