//! How long a search has left, from what its layers have cost so far: the
//! estimate `solve` shows with its progress, fed the search's layer events
//! (the search itself never reads it).
//!
//! The positions found are a poor clock: the first layers find few
//! positions and cost little, the middle ones most of the time, and the
//! last pull layers find few positions again while each scans every
//! position not yet reached. [`Remaining`] models the work instead:
//!
//! - a *push* layer costs a time per position it expands (the layer
//!   before it); the estimate plays the search forward from the latest
//!   push, each layer growing by the latest growth, until the frontier is
//!   half of what is left (where the searches switch to pulling), and
//!   prices what is left then as pulls that each halve it, at half the
//!   push's cost per position;
//! - a *pull* layer costs a time per position not yet reached; the next
//!   ones are taken to shrink what is left as the latest did, so what is
//!   left costs its count times the rate, over one minus that ratio.
//!
//! Only layers timed in this process count: a resumed search's saved
//! layers carry no time. On the recorded 11x10 solve (tested below) the
//! estimate stays within a factor of 1.5 of the truth from the first layer
//! past a percent of the positions (layer 9: 44 min for 33; layer 16: 6.0
//! min for 5.0; layer 20: 5.7 s for 5.7), where the former estimate (the
//! positions left at the rate of positions found so far) said 25 min for 33
//! at layer 9 and "0 min" through the last six layers.

use crate::solver::Direction;

/// The state of a search as [`Remaining`] needs it: the latest layer
/// timed, and the one before it.
#[derive(Clone, Copy, Debug, Default)]
struct Timed {
    /// Positions of the layer before the latest (what a push expanded).
    before: u64,
    /// Positions of the latest layer.
    found: u64,
    /// Positions reached, the latest layer included.
    total: u64,
    /// Seconds the latest layer took.
    seconds: f64,
    /// How it was found.
    direction: Option<Direction>,
}

/// An estimate of the time a search of `legal` positions has left, fed
/// every layer as it ends ([`layer`](Self::layer)).
///
/// # Examples
///
/// ```
/// use bishops::solver::Direction;
/// use bishops::estimate::Remaining;
///
/// let mut left = Remaining::new(1_000);
/// left.layer(1, 1, 0.0, None); // the goal
/// assert_eq!(left.seconds(), None);
/// left.layer(10, 11, 1.0, Some(Direction::Push));
/// left.layer(100, 111, 10.0, Some(Direction::Push));
/// assert!(left.seconds().unwrap() > 10.0);
/// ```
#[derive(Clone, Debug)]
pub struct Remaining {
    legal: u64,
    /// Positions of the latest layer, timed or not.
    last_found: u64,
    latest: Option<Timed>,
}

impl Remaining {
    /// The estimate of a search of `legal` positions, before any layer.
    pub fn new(legal: u64) -> Remaining {
        Remaining {
            legal,
            last_found: 0,
            latest: None,
        }
    }

    /// Takes a layer that found `found` positions, `total` in all so far,
    /// in `seconds`, by `direction` (`None`: the goal's layer, or one a
    /// resumed search reports again, which tells nothing of the time).
    pub fn layer(&mut self, found: u64, total: u64, seconds: f64, direction: Option<Direction>) {
        if direction.is_some() {
            self.latest = Some(Timed {
                before: self.last_found,
                found,
                total,
                seconds,
                direction,
            });
        }
        self.last_found = found;
    }

    /// The seconds left, once a layer of either kind has been timed.
    pub fn seconds(&self) -> Option<f64> {
        let t = self.latest?;
        let unseen = self.legal.saturating_sub(t.total) as f64;
        match t.direction? {
            Direction::Pull => {
                let scanned = unseen + t.found as f64;
                let rate = t.seconds / scanned.max(1.0);
                let shrink = (unseen / scanned.max(1.0)).min(0.99);
                Some(rate * unseen / (1.0 - shrink))
            }
            Direction::Push => {
                let rate = t.seconds / (t.before.max(1) as f64);
                let growth = t.found as f64 / t.before.max(1) as f64;
                let (mut frontier, mut left, mut seconds) = (t.found as f64, unseen, 0.0);
                // Pushes while the frontier is under half of what is left
                // (and it still finds something); then pulls that halve it.
                while 2.0 * frontier <= left && frontier >= 1.0 {
                    seconds += rate * frontier;
                    frontier = (frontier * growth).min(left);
                    left -= frontier;
                }
                Some(seconds + rate * left)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 11x10 solve of 2026-11-24 (one class of 18,669,000,622
    /// positions): each layer's positions, seconds and direction.
    const SOLVE_11X10: [(u64, f64, Option<Direction>); 25] = {
        use Direction::{Pull, Push};
        [
            (1, 1.8, None),
            (40, 0.18, Some(Push)),
            (820, 0.08, Some(Push)),
            (11_160, 0.09, Some(Push)),
            (110_986, 0.12, Some(Push)),
            (840_501, 0.21, Some(Push)),
            (4_937_354, 0.66, Some(Push)),
            (22_786_456, 2.07, Some(Push)),
            (83_826_115, 5.96, Some(Push)),
            (249_742_076, 18.34, Some(Push)),
            (609_839_372, 46.19, Some(Push)),
            (1_226_448_055, 97.52, Some(Push)),
            (2_038_130_545, 169.60, Some(Push)),
            (2_806_334_528, 268.23, Some(Push)),
            (3_203_524_684, 375.24, Some(Push)),
            (3_041_988_242, 437.85, Some(Push)),
            (2_397_317_875, 289.72, Some(Pull)),
            (1_566_371_295, 162.27, Some(Pull)),
            (845_558_898, 85.65, Some(Pull)),
            (378_403_247, 34.26, Some(Pull)),
            (139_091_270, 14.68, Some(Pull)),
            (44_020_160, 4.5, Some(Pull)),
            (9_475_827, 0.9, Some(Pull)),
            (241_111, 0.2, Some(Pull)),
            (4, 0.1, Some(Pull)),
        ]
    };

    #[test]
    fn the_recorded_11x10_solve_is_estimated_within_half_again_from_a_percent_on() {
        let legal = 18_669_000_622;
        let mut left = Remaining::new(legal);
        let (mut total, mut spent) = (0, 0.0);
        let whole: f64 = SOLVE_11X10.iter().map(|l| l.1).sum();
        for (depth, &(found, seconds, direction)) in SOLVE_11X10.iter().enumerate() {
            total += found;
            spent += seconds;
            left.layer(found, total, seconds, direction);
            let truth = whole - spent;
            let estimate = left.seconds();
            if depth == 0 {
                assert_eq!(estimate, None);
                continue;
            }
            let estimate = estimate.unwrap();
            // From the first layer past a percent of the positions, which
            // is when a log shows an estimate.
            if (9..=21).contains(&depth) {
                assert!(
                    estimate >= truth / 1.5 && estimate <= truth * 1.5,
                    "layer {depth}: estimated {estimate:.0} s, {truth:.0} s left"
                );
            }
            // The tail is told in seconds, not as nothing.
            if (19..=21).contains(&depth) {
                assert!(estimate > 0.5 && estimate < 60.0, "layer {depth}: {estimate:.1} s");
            }
        }
    }

    /// A resumed search's saved layers carry no time: no estimate until a
    /// layer is timed again, and then from that layer alone.
    #[test]
    fn saved_layers_tell_nothing_of_the_time() {
        let mut left = Remaining::new(18_669_000_622);
        let mut total = 0;
        for &(found, _, _) in &SOLVE_11X10[..13] {
            total += found;
            left.layer(found, total, 0.0, None);
        }
        assert_eq!(left.seconds(), None);
        let (found, seconds, direction) = SOLVE_11X10[13];
        left.layer(found, total + found, seconds, direction);
        assert!(left.seconds().unwrap() > 600.0, "{:?}", left.seconds());
    }
}
