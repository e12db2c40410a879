//! Bisecting an ordered list of changes for the one that moves a metric, as `git bisect`
//! does over commits, with a statistical verdict per step (issue 15).
//!
//! State `k` is the good end with the first `k` changes applied: state 0 is the good end and
//! state `n` the bad end. Each tested state gets samples of the metric (one per seed) and a
//! verdict from Welch's test against both ends ([`classify`]): like the good end and unlike the
//! bad one is good, the other way round is bad. A state unlike both ends whose mean lies within
//! a tenth of the ends' distance from one of them ([`NEAR_END_FRACTION`]) takes that end's
//! verdict: with many seeds, a later change that moves the metric by 0.2% of a 200% step makes
//! the states after the step differ from the bad end too, and they are still bad. Anything else
//! (like both ends, or unlike both: a state half-way between them, or beyond an end) is a skip,
//! handled as `git bisect skip` is: the search
//! goes on among the states not yet ruled out, and if skips keep it from narrowing the range to
//! one change, it ends with the range ("no single culprit").

use crate::stats::{mean, welch_relative_change, Welch};

/// A step's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Good,
    Bad,
    Skip,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Bad => "bad",
            Verdict::Skip => "skip",
        }
    }
}

/// One tested state.
#[derive(Clone, Debug)]
pub struct Step {
    /// Changes applied: the first `k` of the list.
    pub k: usize,
    pub samples: Vec<f64>,
    pub verdict: Verdict,
    /// Welch's test of this state against the good end and against the bad end.
    pub vs_good: Option<Welch>,
    pub vs_bad: Option<Welch>,
}

/// Where the search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Change `index` (0-based) is the first whose state is bad.
    Culprit(usize),
    /// The first bad state lies among changes `first..=last` (0-based): skips (states like
    /// neither end, or like both) kept the search from narrowing it to one change.
    Range { first: usize, last: usize },
}

/// The outcome of [`bisect`].
#[derive(Clone, Debug)]
pub struct Outcome {
    pub found: Found,
    /// Every tested state, in the order tested.
    pub steps: Vec<Step>,
    /// The last state known good and the first known bad (0 and `n` at the ends).
    pub last_good: usize,
    pub first_bad: usize,
}

/// True when Welch's 95% interval of `other` against `base` excludes "no change" (for samples
/// constant in both, when they differ).
pub fn differs(base: &[f64], other: &[f64]) -> bool {
    welch_relative_change(base, other).is_some_and(|w| w.significant)
}

/// How near an end, as a fraction of the distance between the ends' means, a state unlike
/// both ends must lie to take that end's verdict.
pub const NEAR_END_FRACTION: f64 = 0.1;

/// The verdict of a state with samples `x` between the good and the bad end.
pub fn classify(good: &[f64], bad: &[f64], x: &[f64]) -> Verdict {
    match (differs(good, x), differs(bad, x)) {
        (false, true) => Verdict::Good,
        (true, false) => Verdict::Bad,
        (true, true) => nearest_end(good, bad, x),
        (false, false) => Verdict::Skip,
    }
}

/// A state unlike both ends: the verdict of the end its mean lies within
/// [`NEAR_END_FRACTION`] of the ends' distance from, else a skip.
fn nearest_end(good: &[f64], bad: &[f64], x: &[f64]) -> Verdict {
    let gap = mean(bad) - mean(good);
    if gap == 0.0 || !gap.is_finite() {
        return Verdict::Skip;
    }
    // Where x lies on the way from good (0) to bad (1).
    let t = (mean(x) - mean(good)) / gap;
    if t.abs() <= NEAR_END_FRACTION {
        Verdict::Good
    } else if (t - 1.0).abs() <= NEAR_END_FRACTION {
        Verdict::Bad
    } else {
        Verdict::Skip
    }
}

/// The next state to test in `(last_good, first_bad)`: the untested one nearest the middle
/// (the lower on a tie), as `git bisect` picks the midpoint and, around skipped commits, the
/// nearest one.
fn next_state(last_good: usize, first_bad: usize, skipped: &[usize]) -> Option<usize> {
    let mid = (last_good + first_bad) / 2;
    (last_good + 1..first_bad)
        .filter(|k| !skipped.contains(k))
        .min_by_key(|&k| (k.abs_diff(mid), k))
}

/// Bisects `n` ordered changes between a good end (samples `good`) and a bad end (`bad`),
/// running `eval(k)` for the samples of state `k` (the good end with the first `k` changes).
/// The ends must differ ([`differs`]); `n` must be at least 1.
pub fn bisect<E>(n: usize, good: &[f64], bad: &[f64], mut eval: E) -> Result<Outcome, String>
where
    E: FnMut(usize) -> Result<Vec<f64>, String>,
{
    if n == 0 {
        return Err("nothing to bisect: the good and the bad end have the same changes".into());
    }
    if !differs(good, bad) {
        return Err(
            "the metric does not differ between the good and the bad end (Welch 95%): nothing to bisect"
                .into(),
        );
    }
    let (mut last_good, mut first_bad) = (0, n);
    let mut skipped = Vec::new();
    let mut steps = Vec::new();
    while let Some(k) = next_state(last_good, first_bad, &skipped) {
        let samples = eval(k)?;
        let verdict = classify(good, bad, &samples);
        match verdict {
            Verdict::Good => last_good = k,
            Verdict::Bad => first_bad = k,
            Verdict::Skip => skipped.push(k),
        }
        steps.push(Step {
            k,
            vs_good: welch_relative_change(good, &samples),
            vs_bad: welch_relative_change(bad, &samples),
            samples,
            verdict,
        });
    }
    let found = if first_bad - last_good == 1 {
        Found::Culprit(last_good)
    } else {
        Found::Range {
            first: last_good,
            last: first_bad - 1,
        }
    };
    Ok(Outcome {
        found,
        steps,
        last_good,
        first_bad,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six samples around `level` with a small spread (a seeded metric).
    fn around(level: f64) -> Vec<f64> {
        [-0.5, 0.3, -0.1, 0.4, -0.2, 0.1]
            .iter()
            .map(|d| level + d)
            .collect()
    }

    /// The metric of state `k` when change `i` adds `moves[i]`.
    fn staircase(moves: &[f64]) -> impl Fn(usize) -> Result<Vec<f64>, String> + '_ {
        move |k| Ok(around(100.0 + moves[..k].iter().sum::<f64>()))
    }

    #[test]
    fn finds_the_one_change_among_decoys() {
        for culprit in 0..9 {
            let mut moves = vec![0.0; 9];
            moves[culprit] = 20.0;
            let mut tested = 0;
            let eval = staircase(&moves);
            let out = bisect(9, &around(100.0), &around(120.0), |k| {
                tested += 1;
                eval(k)
            })
            .unwrap();
            assert_eq!(out.found, Found::Culprit(culprit), "{out:?}");
            // log2(9) rounded up, no skips.
            assert!(tested <= 4, "{tested} steps");
        }
    }

    #[test]
    fn two_half_moves_give_no_single_culprit() {
        let moves = [0.0, 10.0, 0.0, 0.0, 10.0, 0.0];
        let out = bisect(6, &around(100.0), &around(120.0), staircase(&moves)).unwrap();
        assert_eq!(out.found, Found::Range { first: 1, last: 4 }, "{out:?}");
        assert!(out.steps.iter().any(|s| s.verdict == Verdict::Skip));
    }

    #[test]
    fn a_change_that_moves_it_all_the_way_after_a_small_one_is_found() {
        // A decoy moving the metric by 1% of the gap is still "like good".
        let moves = [0.0, 0.2, 0.0, 19.8, 0.0];
        let out = bisect(5, &around(100.0), &around(120.0), staircase(&moves)).unwrap();
        assert_eq!(out.found, Found::Culprit(3), "{out:?}");
    }

    #[test]
    fn deterministic_metrics_are_compared_exactly() {
        // OOM kills: 1 in every run before change 2, 0 from it on.
        let eval = |k: usize| Ok(vec![if k > 2 { 0.0 } else { 1.0 }; 6]);
        let out = bisect(4, &[1.0; 6], &[0.0; 6], eval).unwrap();
        assert_eq!(out.found, Found::Culprit(2));
        assert_eq!(classify(&[1.0; 6], &[0.0; 6], &[1.0; 6]), Verdict::Good);
        assert_eq!(classify(&[1.0; 6], &[0.0; 6], &[0.5; 6]), Verdict::Skip);
    }

    /// A state unlike both ends, but within a tenth of the ends' distance from one of them,
    /// takes that end's verdict; half-way, or beyond an end, it is a skip.
    #[test]
    fn a_state_near_one_end_takes_its_verdict_even_when_unlike_both() {
        let (good, bad) = ([0.0; 6], [100.0; 6]);
        assert_eq!(classify(&good, &bad, &[99.5; 6]), Verdict::Bad);
        assert_eq!(classify(&good, &bad, &[91.0; 6]), Verdict::Bad);
        assert_eq!(classify(&good, &bad, &[89.0; 6]), Verdict::Skip);
        assert_eq!(classify(&good, &bad, &[-5.0; 6]), Verdict::Good);
        assert_eq!(classify(&good, &bad, &[50.0; 6]), Verdict::Skip);
        assert_eq!(classify(&good, &bad, &[150.0; 6]), Verdict::Skip);
        // The same with noise: 200,610 against a bad end of 200,962 and a good one of 63,937
        // (file-anon-mix-mini's refaults, 6.1 to 6.12) is bad.
        let noisy = |m: f64| [m - 50.0, m + 50.0, m - 30.0, m + 30.0, m, m];
        assert_eq!(
            classify(&noisy(63_937.0), &noisy(200_962.0), &noisy(200_610.0)),
            Verdict::Bad
        );
        // A bisect over such states names the change that makes the step.
        let eval = |k: usize| {
            Ok(noisy(if k >= 3 {
                200_610.0 + k as f64
            } else {
                63_937.0
            })
            .to_vec())
        };
        let out = bisect(6, &noisy(63_937.0), &noisy(200_962.0), eval).unwrap();
        assert_eq!(out.found, Found::Culprit(2));
    }

    #[test]
    fn ends_that_do_not_differ_are_refused() {
        let err = bisect(3, &around(100.0), &around(100.0), |_| Ok(vec![])).unwrap_err();
        assert!(err.contains("does not differ"), "{err}");
        assert!(bisect(0, &around(1.0), &around(2.0), |_| Ok(vec![])).is_err());
    }

    #[test]
    fn the_next_state_avoids_skips_and_stays_inside() {
        assert_eq!(next_state(0, 8, &[]), Some(4));
        assert_eq!(next_state(0, 8, &[4]), Some(3));
        assert_eq!(next_state(0, 8, &[4, 3]), Some(5));
        assert_eq!(next_state(3, 4, &[]), None);
        assert_eq!(next_state(0, 3, &[1, 2]), None);
    }
}
