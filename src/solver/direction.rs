//! Push or pull: how a search layer is found, and how every tight search
//! (byte or two-bit, one process or many workers) chooses between them from
//! what each has cost so far ([`Rates`]).

/// How a search layer was found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the layer's positions to their unreached neighbours.
    Push,
    /// From unreached positions to a neighbour in the layer.
    Pull,
}

impl Direction {
    /// Its name in reports: `push` or `pull`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Push => "push",
            Direction::Pull => "pull",
        }
    }
}

/// Until either kind of layer has been timed, a pull is taken to cost this
/// many times less per unseen position than a push per position expanded.
const PULL_RATIO: f64 = 2.0;

/// The measured rates of the latest push and pull layers, which choose the
/// direction of the next layer; `None` until a layer of that kind has run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    /// Seconds per position the latest push scanned (coded with the
    /// layer's residue, in the blocks it visited).
    pub push: Option<f64>,
    /// Seconds per unseen position in the latest pull.
    pub pull: Option<f64>,
}

impl Rates {
    /// Whether a layer should pull: the pull costs `unseen` positions at
    /// the pull rate, the push `push_work()` positions at the push rate,
    /// which is at least `frontier` and at most `residue`, so `push_work`
    /// is asked only when those bounds do not decide.
    pub(super) fn pull(&self, frontier: u64, residue: u64, unseen: u64, push_work: impl FnOnce() -> u64) -> bool {
        let (push, pull) = match (self.push, self.pull) {
            (Some(p), Some(q)) => (p, q),
            (Some(p), None) => (p, p / PULL_RATIO),
            (None, Some(q)) => (q * PULL_RATIO, q),
            (None, None) => (PULL_RATIO, 1.0),
        };
        let pull_cost = unseen as f64 * pull;
        if pull_cost <= frontier as f64 * push {
            return true;
        }
        if pull_cost >= residue as f64 * push {
            return false;
        }
        pull_cost < push_work() as f64 * push
    }

    /// Notes that a layer of the kind `pull` took `took` for `positions`:
    /// the unseen positions of a pull, the positions a push expanded.
    pub(super) fn note(&mut self, pull: bool, took: std::time::Duration, positions: u64) {
        // A rate of zero would make that direction look free.
        let rate = took.as_secs_f64().max(1e-9) / positions.max(1) as f64;
        if pull {
            self.pull = Some(rate);
        } else {
            self.push = Some(rate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_direction_follows_the_measured_costs() {
        let never = || -> u64 { panic!("the bounds decide") };
        // Nothing timed: pull when the unseen are fewer than twice the push.
        let none = Rates::default();
        assert!(!none.pull(1, 1, 1000, never));
        assert!(none.pull(600, 5000, 1000, never));
        assert!(none.pull(100, 5000, 1000, || 600));
        assert!(!none.pull(100, 5000, 1000, || 400));
        // Timed: a pull at a tenth of the push's cost per position.
        let timed = Rates {
            push: Some(1.0),
            pull: Some(0.1),
        };
        assert!(timed.pull(100, 5000, 1000, never));
        assert!(!timed.pull(1, 50, 1000, never));
        assert!(timed.pull(10, 5000, 10_000, || 2000));
        assert!(!timed.pull(10, 5000, 10_000, || 500));
    }
}
