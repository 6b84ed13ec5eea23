//! A deliberately simple, obviously-correct reference solver for the
//! "Bishops swap puzzle". It shares no code with the crate and works over
//! plain positions; it is meant as a test oracle (clarity over speed).
//!
//! Rules:
//! - Board of `rows` x `cols`, squares `(row, col)`, 0-based, row 0 at the bottom.
//! - Some squares may be holes: a hole holds no bishop, and a diagonal ends
//!   at it as at the board's edge.
//! - A bishop attacks along its four diagonals up to and including the first
//!   occupied square (occupied by a bishop of either colour).
//! - A placement is legal when no bishop stands on a square attacked by a
//!   bishop of the other colour.
//! - A move slides any bishop diagonally over empty squares to an empty
//!   square; no captures; the resulting placement must be legal.
//! - The goal of a start placement is the start with the colours swapped.
//! - Remoteness = fewest moves to the goal.

use hashbrown::HashMap;
use std::collections::VecDeque;

/// The four diagonal directions as (row delta, col delta).
const DIRECTIONS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// A square as (row, column), 0-based from the bottom left.
pub type Sq = (u8, u8);

/// A placement: sorted white squares, sorted black squares.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Placement {
    pub white: Vec<(u8, u8)>,
    pub black: Vec<(u8, u8)>,
}

impl Placement {
    /// Builds a placement from unsorted square lists (sorts them).
    pub fn new(mut white: Vec<(u8, u8)>, mut black: Vec<(u8, u8)>) -> Self {
        white.sort();
        black.sort();
        Placement { white, black }
    }

    /// The same placement with the colours swapped.
    pub fn swapped(&self) -> Self {
        Placement {
            white: self.black.clone(),
            black: self.white.clone(),
        }
    }
}

/// Colour of whatever stands on a square.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cell {
    Empty,
    White,
    Black,
}

/// Reference solver for a `rows` x `cols` board.
pub struct Reference {
    pub rows: u8,
    pub cols: u8,
    /// Squares cut out of the board.
    pub holes: Vec<(u8, u8)>,
}

impl Reference {
    /// A reference solver for a board with `rows` rows and `cols` columns.
    pub fn new(rows: u8, cols: u8) -> Self {
        Reference {
            rows,
            cols,
            holes: Vec::new(),
        }
    }

    /// A reference solver for a `rows` x `cols` board less the squares `holes`.
    pub fn with_holes(rows: u8, cols: u8, holes: &[(u8, u8)]) -> Self {
        Reference {
            rows,
            cols,
            holes: holes.to_vec(),
        }
    }

    /// The square one step from `sq` in direction `(dr, dc)`, if on the
    /// board and not a hole.
    fn step(&self, sq: (u8, u8), (dr, dc): (i32, i32)) -> Option<(u8, u8)> {
        let r = sq.0 as i32 + dr;
        let c = sq.1 as i32 + dc;
        if r >= 0 && r < self.rows as i32 && c >= 0 && c < self.cols as i32 {
            let next = (r as u8, c as u8);
            (!self.holes.contains(&next)).then_some(next)
        } else {
            None
        }
    }

    /// The squares of colour class `parity` that are not holes.
    pub fn class_squares(&self, parity: u8) -> Vec<(u8, u8)> {
        colour_class(self.rows, self.cols, parity)
            .into_iter()
            .filter(|sq| !self.holes.contains(sq))
            .collect()
    }

    /// A rows x cols grid with every bishop of `p` written in.
    fn grid(&self, p: &Placement) -> Vec<Vec<Cell>> {
        let mut g = vec![vec![Cell::Empty; self.cols as usize]; self.rows as usize];
        for &(r, c) in p.white.iter().chain(&p.black) {
            assert!(!self.holes.contains(&(r, c)), "a bishop on a hole");
        }
        for &(r, c) in &p.white {
            assert!(r < self.rows && c < self.cols, "white square off board");
            assert_eq!(g[r as usize][c as usize], Cell::Empty, "square used twice");
            g[r as usize][c as usize] = Cell::White;
        }
        for &(r, c) in &p.black {
            assert!(r < self.rows && c < self.cols, "black square off board");
            assert_eq!(g[r as usize][c as usize], Cell::Empty, "square used twice");
            g[r as usize][c as usize] = Cell::Black;
        }
        g
    }

    /// True when no bishop stands on a square attacked by a bishop of the other colour.
    pub fn is_legal(&self, p: &Placement) -> bool {
        let g = self.grid(p);
        let bishops = p
            .white
            .iter()
            .map(|&sq| (sq, Cell::White))
            .chain(p.black.iter().map(|&sq| (sq, Cell::Black)));
        for (from, colour) in bishops {
            for dir in DIRECTIONS {
                // Walk the ray until the board edge or the first occupied square.
                let mut cur = from;
                while let Some(next) = self.step(cur, dir) {
                    let cell = g[next.0 as usize][next.1 as usize];
                    if cell != Cell::Empty {
                        if cell != colour {
                            return false;
                        }
                        break;
                    }
                    cur = next;
                }
            }
        }
        true
    }

    /// Every placement reachable in one legal move, each with the move (from, to).
    pub fn moves(&self, p: &Placement) -> Vec<(Sq, Sq, Placement)> {
        let g = self.grid(p);
        let mut out = Vec::new();
        for is_white in [true, false] {
            let own = if is_white { &p.white } else { &p.black };
            for (i, &from) in own.iter().enumerate() {
                for dir in DIRECTIONS {
                    let mut cur = from;
                    while let Some(to) = self.step(cur, dir) {
                        if g[to.0 as usize][to.1 as usize] != Cell::Empty {
                            break;
                        }
                        let mut moved = own.clone();
                        moved[i] = to;
                        moved.sort();
                        let next = if is_white {
                            Placement {
                                white: moved,
                                black: p.black.clone(),
                            }
                        } else {
                            Placement {
                                white: p.white.clone(),
                                black: moved,
                            }
                        };
                        if self.is_legal(&next) {
                            out.push((from, to, next));
                        }
                        cur = to;
                    }
                }
            }
        }
        out
    }

    /// Breadth-first search from `goal` over legal placements using a hashbrown::HashMap<Placement, u32>;
    /// returns remoteness of every placement reachable from the goal (the graph is undirected).
    pub fn solve(&self, goal: &Placement) -> HashMap<Placement, u32> {
        assert!(self.is_legal(goal), "goal placement is illegal");
        let mut dist: HashMap<Placement, u32> = HashMap::new();
        let mut queue = VecDeque::new();
        dist.insert(goal.clone(), 0);
        queue.push_back(goal.clone());
        while let Some(p) = queue.pop_front() {
            let d = dist[&p];
            for (_, _, next) in self.moves(&p) {
                if !dist.contains_key(&next) {
                    dist.insert(next.clone(), d + 1);
                    queue.push_back(next);
                }
            }
        }
        dist
    }

    /// Every legal placement with exactly `white` white and `black` black bishops, all standing on the given
    /// `squares` (a subset of the board, e.g. one colour class); enumerate combinations simply (recursion), check legality with is_legal.
    pub fn legal_placements(&self, squares: &[(u8, u8)], white: usize, black: usize) -> Vec<Placement> {
        let mut squares = squares.to_vec();
        squares.sort();
        squares.dedup();
        let mut out = Vec::new();
        for w in combinations(&squares, white) {
            let rest: Vec<(u8, u8)> = squares.iter().copied().filter(|s| !w.contains(s)).collect();
            for b in combinations(&rest, black) {
                let p = Placement {
                    white: w.clone(),
                    black: b,
                };
                if self.is_legal(&p) {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }
}

/// All `k`-element subsets of `items` (each in the order of `items`).
fn combinations(items: &[(u8, u8)], k: usize) -> Vec<Vec<(u8, u8)>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    if items.len() < k {
        return Vec::new();
    }
    // Either take the first item or skip it.
    let mut out = Vec::new();
    for mut tail in combinations(&items[1..], k - 1) {
        tail.insert(0, items[0]);
        out.push(tail);
    }
    out.extend(combinations(&items[1..], k));
    out
}

/// Every square of a `rows` x `cols` board with `(row + col) % 2 == parity`.
pub fn colour_class(rows: u8, cols: u8, parity: u8) -> Vec<(u8, u8)> {
    let mut out = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            if (r + c) % 2 == parity {
                out.push((r, c));
            }
        }
    }
    out
}
