//! Repetition statistics for `reclaimlab compare` and `reclaimlab stats`.
//!
//! Everything here is a pure, deterministic function over `f64` samples. Student's t and the
//! normal distribution come from the `statrs` crate. The definitions follow the spec's "Metrics,
//! defined once" section, with intervals that stay inside their metric's domain:
//!
//! - [`summary`]: mean with a Student-t 95% confidence interval over N seeds;
//!   [`summary_in`] cuts that interval at the edges of the metric's [`Domain`] (a count's mean
//!   is never below 0, a ratio's never above 1).
//! - [`welch_relative_change`]: Welch's two-sample t-test of the difference of means, exactly as
//!   R's `t.test(baseline, other)` (the method of the MGLRU cover letter, seed
//!   `002_8c563b9020eeae99.txt`, appendix), and the 95% CI of the relative change
//!   `mean(other) / mean(baseline) − 1` computed on the log ratio of the means (Welch's t with
//!   the delta method), so it never reaches −100% ([`RelChange`]). "No significance" when that
//!   interval spans 0.
//! - [`jain`]: Jain's fairness index `J = (Σx)² / (n·Σx²)` with a seeded percentile-bootstrap
//!   95% interval, which stays in `[1/n, 1]`, and the coefficient of variation, min/max ratio
//!   and P10/P90, as in the fairness report of seed `000_2272684d5471770c.txt`.

use std::fmt::Write as _;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{Continuous, ContinuousCDF, Normal, StudentsT};

// ---------------------------------------------------------------------------------------------
// Student's t (statrs)
// ---------------------------------------------------------------------------------------------

/// Quantile of Student's t: the `t` with `P(T ≤ t) = p`, for `0 < p < 1` and `df > 0`
/// (fractional df allowed; `df = ∞` is the standard normal). NaN outside that range.
///
/// `statrs` inverts the CDF through the inverse incomplete beta function, which loses accuracy
/// as df grows (at df = 10⁶ its 0.975 quantile is 1.2e-4 too small). Its result is the start of
/// a few Newton steps on `statrs`'s own CDF (accurate to ~1e-11), on the tail nearer to `p`.
fn t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df.is_infinite() {
        return Normal::standard().inverse_cdf(p);
    }
    let Ok(dist) = StudentsT::new(0.0, 1.0, df) else {
        return f64::NAN;
    };
    let mut t = dist.inverse_cdf(p);
    for _ in 0..8 {
        // The residual on the lower or upper tail, whichever is the smaller probability.
        let excess = if p < 0.5 {
            dist.cdf(t) - p
        } else {
            (1.0 - p) - dist.sf(t)
        };
        let step = excess / dist.pdf(t);
        if !step.is_finite() {
            break;
        }
        t -= step;
        if step.abs() <= 1e-15 * t.abs().max(1.0) {
            break;
        }
    }
    t
}

/// Upper tail `P(T > t)` of Student's t with `df > 0` degrees of freedom (`df = ∞`: normal).
fn t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df.is_infinite() {
        return Normal::standard().sf(t);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.sf(t),
        Err(_) => f64::NAN,
    }
}

/// Welch–Satterthwaite degrees of freedom of `a1 + a2`, where `a_i` is the squared standard
/// error of a mean of `n_i` values: `(a1 + a2)² / (a1²/(n1 − 1) + a2²/(n2 − 1))`, computed from
/// the shares `a_i / (a1 + a2)` so that it cannot overflow or underflow. Requires `a1 + a2 > 0`.
fn welch_df(a1: f64, a2: f64, n1: usize, n2: usize) -> f64 {
    let (w1, w2) = (a1 / (a1 + a2), a2 / (a1 + a2));
    1.0 / (w1 * w1 / (n1 as f64 - 1.0) + w2 * w2 / (n2 as f64 - 1.0))
}

// ---------------------------------------------------------------------------------------------
// Summary: mean with a 95% CI
// ---------------------------------------------------------------------------------------------

/// The values a metric can take. A mean lies in the same range, so its confidence interval can
/// be cut at the range's edges without losing coverage (see [`summary_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// Any real number: intervals are not cut.
    Real,
    /// `[0, ∞)`: counts, rates, times, coefficients of variation.
    NonNegative,
    /// `[0, 1]`: hit ratios, Jain's index (a missing index counts as 0 in `compare`).
    Unit,
}

impl Domain {
    /// The closed range `(low, high)`.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Domain::Real => (f64::NEG_INFINITY, f64::INFINITY),
            Domain::NonNegative => (0.0, f64::INFINITY),
            Domain::Unit => (0.0, 1.0),
        }
    }
}

/// Mean of a sample with a Student-t 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1 denominator); 0 when n = 1.
    pub sd: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// True when [`summary_in`] cut the Student-t interval at an edge of the metric's domain.
    pub clipped: bool,
}

/// Arithmetic mean.
pub(crate) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance with the n − 1 denominator (two-pass).
fn variance(xs: &[f64], m: f64) -> f64 {
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() as f64 - 1.0)
}

/// Mean ± `t(0.975, n−1) · sd/√n`, on the whole real line (see [`summary_in`] for a metric
/// with a bounded range).
///
/// Conventions: n = 1 gives `sd = 0` and a CI equal to the mean (no NaN: a single run carries no
/// spread information, the caller decides whether to print the interval); n = 0 gives NaN for
/// mean, sd and CI.
pub fn summary(xs: &[f64]) -> Summary {
    let n = xs.len();
    if n == 0 {
        return Summary {
            n,
            mean: f64::NAN,
            sd: f64::NAN,
            ci95_low: f64::NAN,
            ci95_high: f64::NAN,
            clipped: false,
        };
    }
    let m = mean(xs);
    if n == 1 {
        return Summary {
            n,
            mean: m,
            sd: 0.0,
            ci95_low: m,
            ci95_high: m,
            clipped: false,
        };
    }
    let sd = variance(xs, m).sqrt();
    let half = t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt();
    Summary {
        n,
        mean: m,
        sd,
        ci95_low: m - half,
        ci95_high: m + half,
        clipped: false,
    }
}

/// [`summary`] for a metric whose values lie in `domain`: the Student-t interval intersected
/// with the domain, `clipped` set when that cut anything.
///
/// The true mean of such a metric lies in the domain, so the intersection covers it whenever
/// the t-interval does: the coverage stays at least 95%, and no bound claims an impossible
/// value (a negative count, a hit ratio above 1). A bound on the edge means "the data cannot
/// rule out the edge", typically few seeds with a large spread; `clipped` lets a table mark it.
///
/// A sample with a value outside `domain` (the domain is wrong for it) is returned as
/// [`summary`] gives it, uncut.
pub fn summary_in(xs: &[f64], domain: Domain) -> Summary {
    let mut s = summary(xs);
    let (lo, hi) = domain.bounds();
    if s.n < 2 || xs.iter().any(|&x| !(lo..=hi).contains(&x)) {
        return s;
    }
    if s.ci95_low < lo {
        s.ci95_low = lo;
        s.clipped = true;
    }
    if s.ci95_high > hi {
        s.ci95_high = hi;
        s.clipped = true;
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Welch's t-test and the relative change
// ---------------------------------------------------------------------------------------------

/// The 95% confidence interval of the relative change `mean(other) / mean(baseline) − 1`.
///
/// Method: Welch's t on the log of the ratio of means, with the delta method for its standard
/// error. With `r = m₂/m₁` and `aᵢ = sᵢ² / (nᵢ·mᵢ²)` (the squared coefficient of variation of
/// each mean), `se = √(a₁ + a₂)` is the standard error of `ln r`, the degrees of freedom are
/// Welch–Satterthwaite's on `a₁, a₂`, and the interval is
/// `exp(ln r ∓ t(0.975, df)·se) − 1`. Being an exponential minus 1 it is always above −100%, and
/// it is asymmetric the way a ratio is (halving is −50%, doubling +100%). Unlike seed 002's
/// script, which divided `t.test`'s interval of the difference by the baseline mean as if that
/// mean were known exactly, it counts the baseline mean's own uncertainty: for the seed's data
/// its bounds lie within 0.25 percentage points of the script's (e.g. [38.70, 40.51]% for the
/// script's [38.95, 40.26]%, where the baseline is the noisier sample), with the same verdicts.
///
/// Defined for nonnegative samples with positive means (a ratio-scale quantity). Then each
/// `aᵢ ≤ 1` (a nonnegative sample's variance is at most `n·m²`) and `df ≥ 1`, so
/// `t(0.975, df)·se ≤ 12.71·√2 < 18`: the interval is never wider than a factor `e³⁶`, and its
/// lower bound is at least `r·e⁻¹⁸`. A percentage within 1.4e-14 of −100% is not representable,
/// so a lower bound that would round onto −100% (a ratio below ~1e-16) is rounded up, to the
/// inside of the domain; [`RelChange::ratio_ci95`] keeps the unrounded ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelChange {
    /// `mean(other) / mean(baseline)`.
    pub ratio: f64,
    /// 95% CI of `ratio`, each bound in (0, ∞).
    pub ratio_ci95: (f64, f64),
    /// 95% CI of `(ratio − 1) × 100`, percent; each bound in (−100%, ∞).
    pub pct: (f64, f64),
    /// Standard error of `ln(ratio)` (delta method).
    pub se_log: f64,
    /// Welch–Satterthwaite degrees of freedom (fractional); `n₁ + n₂ − 2` when `se_log = 0`.
    pub df: f64,
    /// `ln(ratio) / se_log`; 0 or ±∞ when `se_log = 0`.
    pub t: f64,
    /// Two-sided p-value of `t` (H₀: equal means); below 0.05 exactly when `pct` excludes 0.
    pub p_two_sided: f64,
}

/// Welch's two-sample t-test of `other` against `baseline`, and the relative change.
///
/// Signs are "other minus baseline": R's `t.test(baseline, other)` prints `x − y`, i.e. the
/// negated `t` and the negated, swapped confidence interval; `df` and the p-value are identical.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub baseline_mean: f64,
    pub other_mean: f64,
    /// `mean(other) − mean(baseline)`.
    pub diff_mean: f64,
    /// 95% CI of `mean(other) − mean(baseline)` (Welch, as R's `t.test`).
    pub ci95: (f64, f64),
    /// Welch–Satterthwaite degrees of freedom of the difference (fractional).
    pub df: f64,
    /// `diff_mean / se`.
    pub t: f64,
    /// Two-sided p-value of the difference test.
    pub p_two_sided: f64,
    /// The relative change with its 95% CI; `None` when it is undefined: a sample with a
    /// negative value, or a mean of 0 (then only the difference `ci95` is meaningful).
    pub rel: Option<RelChange>,
    /// True when the 95% interval excludes "no change": the relative interval [`RelChange::pct`]
    /// when defined, else the difference `ci95`. False ("no significance") when the interval
    /// strictly spans 0, as in the seed's R script
    /// (`(p[1] > 0 && p[2] < 0) || (p[1] < 0 && p[2] > 0)`), and when it collapses onto 0 (both
    /// samples constant and equal).
    pub significant: bool,
}

/// "Excludes 0" with the seed script's convention: an interval strictly spanning 0, or one
/// collapsed onto 0, does not.
fn excludes_zero(lo: f64, hi: f64) -> bool {
    let spans_zero = lo < 0.0 && hi > 0.0;
    let collapsed_at_zero = lo == 0.0 && hi == 0.0;
    !spans_zero && !collapsed_at_zero
}

/// `(e^x − 1) × 100`, rounded up to the largest `f64` above −100% where it would round onto it.
fn pct_of_log_ratio(x: f64) -> f64 {
    (x.exp_m1() * 100.0).max((-100.0_f64).next_up())
}

/// The relative change of [`RelChange`]; `None` unless both samples are nonnegative with
/// positive means. Needs n ≥ 2 finite values per sample (checked by the caller).
fn relative_change(baseline: &[f64], other: &[f64], m1: f64, m2: f64) -> Option<RelChange> {
    if m1 <= 0.0 || m2 <= 0.0 || baseline.iter().chain(other).any(|&x| x < 0.0) {
        return None;
    }
    let (n1, n2) = (baseline.len(), other.len());
    let a1 = variance(baseline, m1) / n1 as f64 / (m1 * m1);
    let a2 = variance(other, m2) / n2 as f64 / (m2 * m2);
    // ln m₂ − ln m₁ rather than ln(m₂/m₁): the ratio itself may overflow.
    let lr = m2.ln() - m1.ln();
    let ratio = lr.exp().max(f64::from_bits(1));
    let se2 = a1 + a2;
    if se2 > 0.0 && se2.is_finite() {
        let se = se2.sqrt();
        let df = welch_df(a1, a2, n1, n2);
        let t = lr / se;
        let p = (2.0 * t_sf(t.abs(), df)).min(1.0);
        let half = t_quantile(0.975, df) * se;
        Some(RelChange {
            ratio,
            ratio_ci95: ((lr - half).exp().max(f64::from_bits(1)), (lr + half).exp()),
            pct: (pct_of_log_ratio(lr - half), pct_of_log_ratio(lr + half)),
            se_log: se,
            df,
            t,
            p_two_sided: p,
        })
    } else {
        let (t, p) = if lr == 0.0 {
            (0.0, 1.0)
        } else {
            (lr.signum() * f64::INFINITY, 0.0)
        };
        let pct = pct_of_log_ratio(lr);
        Some(RelChange {
            ratio,
            ratio_ci95: (ratio, ratio),
            pct: (pct, pct),
            se_log: 0.0,
            df: (n1 + n2 - 2) as f64,
            t,
            p_two_sided: p,
        })
    }
}

/// Welch's t-test exactly as R's `t.test(baseline, other)` (default: two-sided, unequal
/// variances, 95%), with the relative change of [`RelChange`].
///
/// Returns `None` when either sample has fewer than 2 values or contains a non-finite value
/// (R refuses with "not enough observations"). If both samples have zero variance the test is
/// degenerate: `se = 0`, the CI collapses to the difference, `df = n1 + n2 − 2`, `t` is 0 or
/// ±∞ and `p` is 1 or 0 (the same for the relative change).
///
/// Seed 002's script printed `t.test`'s difference interval divided by the baseline mean,
/// `ci95 × 100 / baseline_mean`; that linear interval can fall below −100% when the spread is
/// large, which is why [`Welch::rel`] is computed on the log ratio instead.
pub fn welch_relative_change(baseline: &[f64], other: &[f64]) -> Option<Welch> {
    let (n1, n2) = (baseline.len(), other.len());
    if n1 < 2 || n2 < 2 || baseline.iter().chain(other).any(|x| !x.is_finite()) {
        return None;
    }
    let (m1, m2) = (mean(baseline), mean(other));
    let (v1, v2) = (variance(baseline, m1), variance(other, m2));
    let (s1, s2) = (v1 / n1 as f64, v2 / n2 as f64);
    let se2 = s1 + s2;
    let se = se2.sqrt();
    let diff = m2 - m1;
    let (df, t, p, ci95) = if se2 > 0.0 {
        let df = welch_df(s1, s2, n1, n2);
        let t = diff / se;
        let p = (2.0 * t_sf(t.abs(), df)).min(1.0);
        let half = t_quantile(0.975, df) * se;
        (df, t, p, (diff - half, diff + half))
    } else {
        let df = (n1 + n2 - 2) as f64;
        let (t, p) = if diff == 0.0 {
            (0.0, 1.0)
        } else {
            (diff.signum() * f64::INFINITY, 0.0)
        };
        (df, t, p, (diff, diff))
    };
    let rel = relative_change(baseline, other, m1, m2);
    let significant = match &rel {
        Some(r) => excludes_zero(r.pct.0, r.pct.1),
        None => excludes_zero(ci95.0, ci95.1),
    };
    Some(Welch {
        baseline_mean: m1,
        other_mean: m2,
        diff_mean: diff,
        ci95,
        df,
        t,
        p_two_sided: p,
        rel,
        significant,
    })
}

/// A percentage with a sign and 2 decimals, or as many more as it takes for a value above −100%
/// not to print as −100.00% (a relative change's lower bound can come arbitrarily close to
/// −100% without reaching it).
pub fn fmt_pct(x: f64) -> String {
    let mut digits = 2;
    loop {
        let s = format!("{x:+.digits$}");
        if x <= -100.0 || digits >= 16 || s.parse::<f64>().is_ok_and(|v| v > -100.0) {
            return format!("{s}%");
        }
        digits += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Fairness
// ---------------------------------------------------------------------------------------------

/// Fairness of a set of per-worker or per-memcg totals.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fairness {
    pub n: usize,
    /// Jain's index `(Σx)² / (n·Σx²)`, in `[1/n, 1]`.
    pub jain: f64,
    /// 95% percentile-bootstrap interval of Jain's index ([`jain_bootstrap_ci95`]), inside
    /// `[1/n, 1]`.
    pub jain_ci95: (f64, f64),
    /// Coefficient of variation: sample sd (n − 1 denominator) / mean; 0 when n = 1.
    pub cov: f64,
    /// `min / max`.
    pub min_max_ratio: f64,
    pub p10: f64,
    pub p90: f64,
}

/// The p-th percentile as printed by seed 000's fairness report: the sorted sample's element at
/// index `min(floor(p/100 · n), n − 1)` (0-based, no interpolation). This reproduces the seed's
/// P10/P25/P50/P75/P90 for both of its 64-client runs.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let n = sorted.len();
    let idx = ((p / 100.0 * n as f64).floor().max(0.0) as usize).min(n - 1);
    sorted[idx]
}

/// Jain's index from `Σx` and `Σx²` of `n` nonnegative values: 1 when all are 0 (as
/// [`jain`]), and never above 1 (Cauchy–Schwarz; `min` only removes rounding).
fn jain_index(sum: f64, sum_sq: f64, n: usize) -> f64 {
    if sum_sq == 0.0 {
        1.0
    } else {
        (sum * sum / (n as f64 * sum_sq)).min(1.0)
    }
}

/// Bootstrap resamples behind [`Fairness::jain_ci95`].
pub const JAIN_BOOTSTRAP_RESAMPLES: usize = 2000;

/// The fixed seed of that bootstrap, so the interval is the same on every run and machine.
pub const JAIN_BOOTSTRAP_SEED: u64 = 0x4a41_494e_5f42_4f4f; // "JAIN_BOO"

/// 95% percentile-bootstrap interval of Jain's index of nonnegative, finite `xs` (n ≥ 1).
///
/// [`JAIN_BOOTSTRAP_RESAMPLES`] resamples of n values drawn with replacement by a ChaCha8
/// generator seeded with [`JAIN_BOOTSTRAP_SEED`] (index = the high 64 bits of
/// `next_u64() × n`, which depends on nothing but the generator's stream); the bounds are the
/// sorted resample indices at positions `⌊0.025·B⌋` and `⌈0.975·B⌉ − 1`. Every resample's index
/// lies in `[1/n, 1]` (an all-zero resample counts as 1, as in [`jain`]), so the interval does
/// too, whatever the data: the index's domain `(0, 1]` is respected by construction, with no
/// normal approximation at the edge `J = 1` where the index of real workloads sits.
pub fn jain_bootstrap_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    assert!(n > 0, "jain_bootstrap_ci95 of an empty sample");
    let max = xs.iter().copied().fold(0.0_f64, f64::max);
    if max == 0.0 || xs.iter().all(|&x| x == xs[0]) {
        return (1.0, 1.0);
    }
    // Jain's index is scale-free; scaled to max 1 the sums cannot overflow.
    let scaled: Vec<f64> = xs.iter().map(|&x| x / max).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(JAIN_BOOTSTRAP_SEED);
    let mut js: Vec<f64> = (0..JAIN_BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let (mut sum, mut sum_sq) = (0.0, 0.0);
            for _ in 0..n {
                let i = ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize;
                let x = scaled[i];
                sum += x;
                sum_sq += x * x;
            }
            jain_index(sum, sum_sq, n)
        })
        .collect();
    js.sort_by(f64::total_cmp);
    let b = JAIN_BOOTSTRAP_RESAMPLES;
    (js[b * 25 / 1000], js[(b * 975).div_ceil(1000) - 1])
}

/// Jain's index with its bootstrap interval, CoV, min/max ratio and P10/P90 (see
/// [`percentile_sorted`]).
///
/// Returns `None` for an empty sample or one with a negative or non-finite value. All-zero
/// samples count as perfectly fair: `jain = 1`, `cov = 0`, `min_max_ratio = 1`.
pub fn jain(xs: &[f64]) -> Option<Fairness> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite() || *x < 0.0) {
        return None;
    }
    let n = xs.len();
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (min, max) = (sorted[0], sorted[n - 1]);
    let p10 = percentile_sorted(&sorted, 10.0);
    let p90 = percentile_sorted(&sorted, 90.0);
    if max == 0.0 {
        return Some(Fairness {
            n,
            jain: 1.0,
            jain_ci95: (1.0, 1.0),
            cov: 0.0,
            min_max_ratio: 1.0,
            p10,
            p90,
        });
    }
    // Both the index and the CoV are scale-free: computed on x / max, nothing overflows.
    let scaled: Vec<f64> = xs.iter().map(|&x| x / max).collect();
    let sum: f64 = scaled.iter().sum();
    let sum_sq: f64 = scaled.iter().map(|x| x * x).sum();
    let m = sum / n as f64;
    let cov = if n > 1 {
        variance(&scaled, m).sqrt() / m
    } else {
        0.0
    };
    Some(Fairness {
        n,
        jain: jain_index(sum, sum_sq, n),
        jain_ci95: jain_bootstrap_ci95(xs),
        cov,
        min_max_ratio: min / max,
        p10,
        p90,
    })
}

// ---------------------------------------------------------------------------------------------
// `reclaimlab stats` front end
// ---------------------------------------------------------------------------------------------

fn is_missing(tok: &str) -> bool {
    tok.is_empty()
        || tok == "-"
        || tok.eq_ignore_ascii_case("na")
        || tok.eq_ignore_ascii_case("nan")
}

fn split_fields(line: &str) -> Vec<&str> {
    if line.contains(',') {
        line.split(',').map(str::trim).collect()
    } else {
        line.split_whitespace().collect()
    }
}

/// Parses columns of numbers, one row per line.
///
/// - Fields are separated by commas (a line containing a comma is split on commas, fields
///   trimmed) or else by whitespace.
/// - Blank lines and lines starting with `#` are skipped.
/// - The first remaining line is a header if any of its fields is not a number; otherwise the
///   columns are named `col1`, `col2`, ….
/// - Every row must have exactly as many fields as the first line. A missing value may be
///   written as an empty CSV field, `-`, `NA` or `NaN`; it is skipped, so columns may have
///   different lengths (e.g. different numbers of seeds per policy).
/// - Errors name the 1-based line and column, e.g. `line 4, column 2 ("mglru"): "12x" is not a
///   number`.
pub fn parse_columns(text: &str) -> Result<Vec<(String, Vec<f64>)>, String> {
    let mut cols: Vec<(String, Vec<f64>)> = Vec::new();
    let mut width = 0usize;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = split_fields(line);
        if cols.is_empty() {
            width = fields.len();
            let numeric = fields
                .iter()
                .all(|f| is_missing(f) || f.parse::<f64>().is_ok());
            if !numeric {
                for (j, f) in fields.iter().enumerate() {
                    if f.is_empty() {
                        return Err(format!(
                            "line {lineno}, column {}: empty header name",
                            j + 1
                        ));
                    }
                    cols.push((f.to_string(), Vec::new()));
                }
                continue;
            }
            cols = (1..=width)
                .map(|j| (format!("col{j}"), Vec::new()))
                .collect();
        }
        if fields.len() != width {
            return Err(format!(
                "line {lineno}: expected {width} columns, found {}",
                fields.len()
            ));
        }
        for (j, f) in fields.iter().enumerate() {
            if is_missing(f) {
                continue;
            }
            match f.parse::<f64>() {
                Ok(v) if v.is_finite() => cols[j].1.push(v),
                _ => {
                    return Err(format!(
                        "line {lineno}, column {} ({:?}): {:?} is not a finite number",
                        j + 1,
                        cols[j].0,
                        f
                    ))
                }
            }
        }
    }
    if cols.is_empty() {
        return Err("no data: expected at least one line of numbers".to_string());
    }
    Ok(cols)
}

/// Formats a number with about 6 significant digits.
fn num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a != 0.0 && !(1e-3..1e9).contains(&a) {
        return format!("{x:.4e}");
    }
    let digits = if a == 0.0 {
        0
    } else {
        (5 - a.log10().floor() as i32).clamp(0, 8) as usize
    };
    format!("{x:.digits$}")
}

fn pval(p: f64) -> String {
    if p < 2.2e-16 {
        "< 2.2e-16".to_string()
    } else if p < 1e-4 {
        format!("= {p:.3e}")
    } else {
        format!("= {p:.4}")
    }
}

/// The `reclaimlab stats` report: for each column n / mean / 95% CI (cut at the edges of
/// `domain`, see [`summary_in`]); Jain's index with its bootstrap interval, CoV, min/max ratio
/// and P10–P90; and each later column's relative change against the first column (the log-ratio
/// interval of [`RelChange`], or "no significance").
pub fn stats_report(columns: &[(String, Vec<f64>)], domain: Domain) -> String {
    let mut out = String::new();
    if columns.is_empty() {
        out.push_str("no columns\n");
        return out;
    }
    let w = columns
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);

    match domain {
        Domain::Real => out.push_str("MEAN (95% CI, Student t)\n"),
        Domain::NonNegative => {
            out.push_str("MEAN (95% CI, Student t, cut at 0: values are nonnegative)\n")
        }
        Domain::Unit => out.push_str("MEAN (95% CI, Student t, cut to [0, 1]: values are in it)\n"),
    }
    let _ = writeln!(
        out,
        "  {:<w$}  {:>5}  {:>14}  {:>14}  {:>31}",
        "column", "n", "mean", "sd", "95% CI"
    );
    for (name, xs) in columns {
        let s = summary_in(xs, domain);
        let ci = if s.n >= 2 {
            format!("[{}, {}]", num(s.ci95_low), num(s.ci95_high))
        } else {
            "n/a (n < 2)".to_string()
        };
        let _ = writeln!(
            out,
            "  {:<w$}  {:>5}  {:>14}  {:>14}  {:>31}{}",
            name,
            s.n,
            num(s.mean),
            if s.n >= 2 { num(s.sd) } else { "-".to_string() },
            ci,
            if s.clipped { "  (cut at the edge)" } else { "" }
        );
    }

    out.push_str(
        "\nFAIRNESS (Jain = (sum x)^2 / (n * sum x^2), 95% CI: percentile bootstrap; \
         P10/P90 = sorted[floor(p*n)])\n",
    );
    let _ = writeln!(
        out,
        "  {:<w$}  {:>9}  {:>20}  {:>8}  {:>8}  {:>14}  {:>14}",
        "column", "Jain", "95% CI", "CoV", "min/max", "P10", "P90"
    );
    for (name, xs) in columns {
        match jain(xs) {
            Some(f) => {
                let _ = writeln!(
                    out,
                    "  {:<w$}  {:>9.6}  {:>20}  {:>8.4}  {:>8.4}  {:>14}  {:>14}",
                    name,
                    f.jain,
                    format!("[{:.6}, {:.6}]", f.jain_ci95.0, f.jain_ci95.1),
                    f.cov,
                    f.min_max_ratio,
                    num(f.p10),
                    num(f.p90)
                );
            }
            None => {
                let why = if xs.is_empty() {
                    "n/a (no values)"
                } else {
                    "n/a (negative values)"
                };
                let _ = writeln!(out, "  {name:<w$}  {why}");
            }
        }
    }

    if columns.len() >= 2 {
        let (base_name, base) = &columns[0];
        let _ = writeln!(
            out,
            "\nRELATIVE CHANGE vs {base_name} (95% CI of mean(x) / mean({base_name}) - 1: \
             Welch's t on the log ratio of the means)"
        );
        for (name, xs) in &columns[1..] {
            let line = match welch_relative_change(base, xs) {
                None => "n/a (each column needs at least 2 values)".to_string(),
                Some(wt) => match wt.rel {
                    None => {
                        let why = if base.iter().chain(xs).any(|&x| x < 0.0) {
                            "negative values".to_string()
                        } else if wt.baseline_mean <= 0.0 {
                            format!("mean({base_name}) = 0")
                        } else {
                            "mean = 0".to_string()
                        };
                        format!(
                            "n/a ({why}); difference CI [{}, {}]{}  \
                             (Welch's t-test: t = {:.4}, df = {:.3}, p-value {})",
                            num(wt.ci95.0),
                            num(wt.ci95.1),
                            if wt.significant {
                                ""
                            } else {
                                ", no significance"
                            },
                            wt.t,
                            wt.df,
                            pval(wt.p_two_sided)
                        )
                    }
                    Some(r) => {
                        let detail = format!(
                            "ratio {}; t = {:.4}, df = {:.3}, p-value {}",
                            num(r.ratio),
                            r.t,
                            r.df,
                            pval(r.p_two_sided)
                        );
                        let ci = format!("[{}, {}]", fmt_pct(r.pct.0), fmt_pct(r.pct.1));
                        if wt.significant {
                            format!("{ci}  ({detail})")
                        } else {
                            format!("no significance  (CI {ci}; {detail})")
                        }
                    }
                },
            };
            let _ = writeln!(out, "  {name:<w$}  {line}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Asserts `got` rounds to the R-printed value (`printed`, with `sig` significant digits).
    fn assert_sig(got: f64, printed: f64, sig: i32, what: &str) {
        let scale = 10f64.powi(printed.abs().log10().floor() as i32 - (sig - 1));
        assert!(
            (got - printed).abs() <= 0.5 * scale * 1.0001,
            "{what}: got {got}, R printed {printed} ({sig} significant digits)"
        );
    }

    // Seed 002 appendix, raw_data_fio.r: 10 runs per cell, array(v, dim = c(10, 3, 2, 2)) is
    // [run, dist (random, zipf, gaussian), concurr (40, 80 procs), kern (baseline, patched)].
    const BASE_40_RANDOM: [f64; 10] = [
        8467.89, 8428.34, 8383.32, 8253.12, 8464.65, 8307.42, 8424.78, 8434.44, 8474.88, 8468.26,
    ];
    const BASE_40_ZIPF: [f64; 10] = [
        14570.44, 14598.03, 14550.74, 14640.29, 14591.4, 14573.35, 14503.18, 14613.39, 14598.61,
        14522.27,
    ];
    const BASE_80_RANDOM: [f64; 10] = [
        8427.51, 8267.23, 8437.48, 8432.37, 8441.4, 8454.26, 8413.13, 8412.44, 8444.36, 8444.32,
    ];
    const BASE_80_GAUSS: [f64; 10] = [
        11666.29, 11624.72, 11454.82, 11482.36, 11462.24, 11379.46, 11691.5, 11471.19, 11402.08,
        11494.13,
    ];
    const PATCHED_40_RANDOM: [f64; 10] = [
        11706.69, 11778.1, 11774.07, 11750.07, 11744.97, 11766.65, 11727.79, 11708.41, 11745.3,
        11716.45,
    ];
    const PATCHED_40_ZIPF: [f64; 10] = [
        15498.31, 14647.94, 15423.35, 15467.32, 15467.05, 15342.49, 15511.34, 15414.06, 15401.1,
        15431.57,
    ];
    const PATCHED_80_RANDOM: [f64; 10] = [
        12568.51, 11772.25, 11622.15, 12057.66, 11971.72, 12693.36, 12399.71, 12553.23, 12242.74,
        12793.34,
    ];
    const PATCHED_80_GAUSS: [f64; 10] = [
        14084.86, 13706.34, 14089.42, 14058.4, 14096.74, 14108.06, 14043.41, 14072.15, 14088.44,
        14024.51,
    ];

    /// One `t.test(x, y)` printed in seed 002's appendix. R prints `x − y`, so our `t` and CI
    /// (other − baseline) are the negations; `rel` is the script's `[-p[2], -p[1]]` line.
    struct RTest {
        x: &'static [f64],
        y: &'static [f64],
        t: f64,
        df: f64,
        p: Option<f64>, // None = "< 2.2e-16"
        ci: (f64, f64),
        ci_sig: i32,
        means: (f64, f64),
        rel: Option<(f64, f64)>, // None = "no significance"
    }

    fn check(r: &RTest) {
        let w = welch_relative_change(r.x, r.y).expect("enough data");
        assert_sig(-w.t, r.t, 5, "t");
        assert_sig(w.df, r.df, 5, "df");
        match r.p {
            Some(p) => assert_sig(w.p_two_sided, p, 4, "p-value"),
            None => assert!(w.p_two_sided < 2.2e-16, "p = {}", w.p_two_sided),
        }
        assert_sig(-w.ci95.1, r.ci.0, r.ci_sig, "CI low");
        assert_sig(-w.ci95.0, r.ci.1, r.ci_sig, "CI high");
        assert!(close(w.baseline_mean, r.means.0, 0.0051), "mean x");
        assert!(close(w.other_mean, r.means.1, 0.0051), "mean y");
        // The seed script's line is t.test's interval over the baseline mean: reproduced to
        // its 2 decimals. Ours is the log-ratio interval (`RelChange`): the same decision on
        // significance, and the same bounds to within REL_TOL percentage points.
        let seed_rel = (
            w.ci95.0 * 100.0 / w.baseline_mean,
            w.ci95.1 * 100.0 / w.baseline_mean,
        );
        let rel = w.rel.expect("positive samples");
        match r.rel {
            Some((lo, hi)) => {
                assert!(w.significant);
                assert!(close(seed_rel.0, lo, 0.005), "seed rel lo {}", seed_rel.0);
                assert!(close(seed_rel.1, hi, 0.005), "seed rel hi {}", seed_rel.1);
                assert!(
                    close(rel.pct.0, lo, REL_TOL),
                    "rel lo {} vs {lo}",
                    rel.pct.0
                );
                assert!(
                    close(rel.pct.1, hi, REL_TOL),
                    "rel hi {} vs {hi}",
                    rel.pct.1
                );
            }
            None => {
                assert!(!w.significant);
                assert!(seed_rel.0 < 0.0 && seed_rel.1 > 0.0);
                assert!(rel.pct.0 < 0.0 && rel.pct.1 > 0.0);
            }
        }
        // The log-ratio test's p-value agrees with its interval.
        assert_eq!(rel.p_two_sided < 0.05, w.significant);
    }

    /// How far the log-ratio interval may lie from the seed's linear one (percentage points).
    const REL_TOL: f64 = 0.3;

    #[test]
    fn welch_seed002_concurr1_dist1() {
        // t = -132.15, df = 11.177, p-value < 2.2e-16; CI -3386.514 -3275.766;
        // means 8410.71 11741.85; "concurr1 dist1: [38.95, 40.26]%".
        check(&RTest {
            x: &BASE_40_RANDOM,
            y: &PATCHED_40_RANDOM,
            t: -132.15,
            df: 11.177,
            p: None,
            ci: (-3386.514, -3275.766),
            ci_sig: 7,
            means: (8410.71, 11741.85),
            rel: Some((38.95, 40.26)),
        });
    }

    #[test]
    fn welch_seed002_concurr1_dist2() {
        // t = -9.5917, df = 9.4797, p-value = 3.463e-06; CI -967.8353 -600.7307;
        // means 14576.17 15360.45; "concurr1 dist2: [4.12, 6.64]%".
        check(&RTest {
            x: &BASE_40_ZIPF,
            y: &PATCHED_40_ZIPF,
            t: -9.5917,
            df: 9.4797,
            p: Some(3.463e-06),
            ci: (-967.8353, -600.7307),
            ci_sig: 7,
            means: (14576.17, 15360.45),
            rel: Some((4.12, 6.64)),
        });
    }

    #[test]
    fn welch_seed002_concurr2_dist1() {
        // t = -30.144, df = 9.3334, p-value = 1.281e-10; CI -4137.381 -3562.653;
        // means 8417.45 12267.47; "concurr2 dist1: [42.32, 49.15]%".
        check(&RTest {
            x: &BASE_80_RANDOM,
            y: &PATCHED_80_RANDOM,
            t: -30.144,
            df: 9.3334,
            p: Some(1.281e-10),
            ci: (-4137.381, -3562.653),
            ci_sig: 7,
            means: (8417.45, 12267.47),
            rel: Some((42.32, 49.15)),
        });
    }

    #[test]
    fn welch_seed002_concurr2_dist3() {
        // t = -49.453, df = 17.863, p-value < 2.2e-16; CI -2631.656 -2417.052;
        // means 11512.88 14037.23; "concurr2 dist3: [20.99, 22.86]%".
        check(&RTest {
            x: &BASE_80_GAUSS,
            y: &PATCHED_80_GAUSS,
            t: -49.453,
            df: 17.863,
            p: None,
            ci: (-2631.656, -2417.052),
            ci_sig: 7,
            means: (11512.88, 14037.23),
            rel: Some((20.99, 22.86)),
        });
    }

    #[test]
    fn welch_seed002_kern1_dist1_no_significance() {
        // Low vs high concurrency on the baseline: t = -0.22947, df = 16.403, p-value = 0.8213;
        // CI -68.88155 55.40155; means 8410.71 8417.45; "kern1 dist1: no significance".
        check(&RTest {
            x: &BASE_40_RANDOM,
            y: &BASE_80_RANDOM,
            t: -0.22947,
            df: 16.403,
            p: Some(0.8213),
            ci: (-68.88155, 55.40155),
            ci_sig: 7,
            means: (8410.71, 8417.45),
            rel: None,
        });
    }

    #[test]
    fn welch_seed002_kern2_dist1() {
        // Low vs high concurrency on the patched kernel: t = -4.1443, df = 9.0781,
        // p-value = 0.002459; CI -812.1507 -239.0833; means 11741.85 12267.47;
        // "kern2 dist1: [2.04, 6.92]%".
        check(&RTest {
            x: &PATCHED_40_RANDOM,
            y: &PATCHED_80_RANDOM,
            t: -4.1443,
            df: 9.0781,
            p: Some(0.002459),
            ci: (-812.1507, -239.0833),
            ci_sig: 7,
            means: (11741.85, 12267.47),
            rel: Some((2.04, 6.92)),
        });
    }

    #[test]
    fn welch_is_antisymmetric_in_sign_and_symmetric_in_df() {
        let a = welch_relative_change(&BASE_40_ZIPF, &PATCHED_40_ZIPF).unwrap();
        let b = welch_relative_change(&PATCHED_40_ZIPF, &BASE_40_ZIPF).unwrap();
        assert!(close(a.t, -b.t, 1e-12));
        assert!(close(a.df, b.df, 1e-12));
        assert!(close(a.p_two_sided, b.p_two_sided, 1e-15));
        assert!(close(a.ci95.0, -b.ci95.1, 1e-9));
    }

    #[test]
    fn welch_edge_cases() {
        assert!(welch_relative_change(&[1.0], &[1.0, 2.0]).is_none());
        assert!(welch_relative_change(&[1.0, 2.0], &[]).is_none());
        assert!(welch_relative_change(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
        // Identical constant samples: no significance, no NaN.
        let w = welch_relative_change(&[5.0; 4], &[5.0; 4]).unwrap();
        assert!(!w.significant);
        assert_eq!((w.t, w.p_two_sided, w.ci95), (0.0, 1.0, (0.0, 0.0)));
        let r = w.rel.unwrap();
        assert_eq!(
            (r.pct, r.t, r.p_two_sided, r.df),
            ((0.0, 0.0), 0.0, 1.0, 6.0)
        );
        // Different constant samples: significant, +100%.
        let w = welch_relative_change(&[5.0; 3], &[10.0; 3]).unwrap();
        assert!(w.significant && w.t == f64::INFINITY && w.p_two_sided == 0.0);
        let r = w.rel.unwrap();
        assert!(close(r.pct.0, 100.0, 1e-12) && r.pct.0 == r.pct.1, "{r:?}");
        assert!(r.t == f64::INFINITY && r.p_two_sided == 0.0);
        // Baseline mean 0 (and a negative value): relative change undefined; significance
        // falls back to the difference interval.
        let w = welch_relative_change(&[-1.0, 1.0], &[2.0, 3.0]).unwrap();
        assert!(w.rel.is_none());
        assert_eq!(w.significant, w.ci95.0 > 0.0 || w.ci95.1 < 0.0);
        // A mean of 0 in nonnegative data: undefined too (the ratio is 0 or infinite).
        let w = welch_relative_change(&[0.0, 0.0, 0.0], &[2.0, 3.0, 2.5]).unwrap();
        assert!(w.rel.is_none() && w.significant);
        let w = welch_relative_change(&[2.0, 3.0, 2.5], &[0.0; 3]).unwrap();
        assert!(w.rel.is_none() && w.significant);
        // Positive means but a negative value: a signed quantity, no relative interval.
        let w = welch_relative_change(&[-1.0, 5.0], &[2.0, 3.0]).unwrap();
        assert!(w.rel.is_none());
        // Zeros inside a positive-mean sample are fine.
        let w = welch_relative_change(&[0.0, 4.0, 2.0], &[1.0, 3.0, 2.0]).unwrap();
        assert!(w.rel.is_some() && !w.significant);
        // One constant sample, the other varying: still a finite Welch test (df = n2 − 1),
        // on both scales.
        let w = welch_relative_change(&[5.0; 4], &[4.0, 6.0, 5.0, 7.0]).unwrap();
        assert!(close(w.df, 3.0, 1e-12));
        assert!(close(w.rel.unwrap().df, 3.0, 1e-12));
    }

    #[test]
    fn relative_change_stays_above_minus_100_where_the_linear_one_does_not() {
        // A large spread with n = 2: t.test's interval over the baseline mean reaches far below
        // −100%; the log-ratio interval is wide but stays above it.
        let base = [10.0, 1000.0];
        let other = [1.0, 2.0];
        let w = welch_relative_change(&base, &other).unwrap();
        assert!(w.ci95.0 * 100.0 / w.baseline_mean < -100.0, "{w:?}");
        let r = w.rel.unwrap();
        assert!(r.pct.0 > -100.0 && r.pct.0 < r.pct.1, "{r:?}");
        assert!(!w.significant);
        // Halving and doubling are symmetric on this scale: r and 1/r give mirrored bounds.
        let a = welch_relative_change(&[10.0, 12.0, 11.0], &[20.0, 23.0, 22.0]).unwrap();
        let b = welch_relative_change(&[20.0, 23.0, 22.0], &[10.0, 12.0, 11.0]).unwrap();
        let (ra, rb) = (a.rel.unwrap(), b.rel.unwrap());
        assert!(close(
            1.0 + ra.pct.0 / 100.0,
            1.0 / (1.0 + rb.pct.1 / 100.0),
            1e-12
        ));
        assert!(close(ra.t, -rb.t, 1e-12) && close(ra.df, rb.df, 1e-12));
    }

    #[test]
    fn fmt_pct_never_rounds_onto_minus_100() {
        assert_eq!(fmt_pct(38.9512), "+38.95%");
        assert_eq!(fmt_pct(-4.0), "-4.00%");
        assert_eq!(fmt_pct(-99.9999985), "-99.999999%");
        let near = fmt_pct((-100.0_f64).next_up());
        assert!(
            near.trim_end_matches('%').parse::<f64>().unwrap() > -100.0,
            "{near}"
        );
        assert_eq!(fmt_pct(-100.0), "-100.00%");
        assert_eq!(fmt_pct(f64::INFINITY), "+inf%");
    }

    #[test]
    fn t_quantiles_match_tables() {
        let cases = [
            (1.0, 12.706_204_736),
            (2.0, 4.302_652_730),
            (5.0, 2.570_581_836),
            (10.0, 2.228_138_852),
            (30.0, 2.042_272_456),
            (63.0, 1.998_340_522),
            (1000.0, 1.962_339_081),
        ];
        for (df, want) in cases {
            let got = t_quantile(0.975, df);
            assert!(close(got, want, 1e-7), "df {df}: {got} vs {want}");
            assert!(close(t_quantile(0.025, df), -want, 1e-7));
        }
        let z = 1.959_963_984_540_054;
        assert!(close(t_quantile(0.975, f64::INFINITY), z, 1e-9));
        // Large df converges to the normal quantile from above: t ≈ z + (z³ + z)/(4 df).
        let df = 1e6;
        let want = z + (z.powi(3) + z) / (4.0 * df);
        let got = t_quantile(0.975, df);
        assert!(close(got, want, 1e-8), "df 1e6: {got} vs {want}");
        // Other probabilities, including fractional df (qt(0.995, 2.5) = 7.163728, mpmath;
        // an earlier comment here said 6.2054, which was never checked and is wrong).
        assert!(close(t_quantile(0.995, 1.0), 63.656_741_16, 1e-6));
        assert!(close(t_quantile(0.995, 2.5), 7.163_728_139, 1e-8));
        assert!(close(t_quantile(0.95, 3.0), 2.353_363_435, 1e-7));
        assert!(close(t_quantile(0.9, 1.0), 3.077_683_537, 1e-7));
        assert!(close(t_quantile(0.999, f64::INFINITY), 3.090_232_306, 1e-8));
        assert!(t_quantile(0.5, 7.0).abs() < 1e-15);
        assert!(t_quantile(1.5, 7.0).is_nan());
        assert!(t_quantile(0.975, 0.0).is_nan());
    }

    #[test]
    fn t_quantile_inverts_cdf_for_fractional_df() {
        for &df in &[1.0, 1.5, 2.7, 9.4797, 11.177, 17.863, 123.4, 5e4, 1e6] {
            for &p in &[0.6, 0.9, 0.975, 0.995, 0.9999] {
                let t = t_quantile(p, df);
                // The CDF itself is accurate to ~1e-11 at df ~ 1e5 (ln Γ cancellation), i.e. the
                // quantile to ~1e-10: far inside the 1e-6 requirement.
                let cdf = 1.0 - t_sf(t, df);
                assert!(close(cdf, p, 1e-10), "df {df} p {p}: t {t}, cdf {cdf}");
            }
        }
    }

    #[test]
    fn t_cdf_known_values() {
        let cdf = |t: f64, df: f64| 1.0 - t_sf(t, df);
        // df = 1 is Cauchy: P(T ≤ t) = 1/2 + atan(t)/π.
        for &t in &[-3.0_f64, -0.5, 0.0, 0.7, 12.0] {
            let want = 0.5 + f64::atan(t) / std::f64::consts::PI;
            assert!(close(cdf(t, 1.0), want, 1e-13));
        }
        // df = 2: P(T ≤ t) = 1/2 + t / (2 √(2 + t²)).
        for &t in &[-2.0_f64, 0.3, 4.0] {
            let want = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!(close(cdf(t, 2.0), want, 1e-13));
        }
        // statrs's normal tail (erfc) is accurate to ~1e-12 here, not to the last bit.
        assert!(close(
            t_sf(1.959_963_984_540_054, f64::INFINITY),
            0.025,
            2e-12
        ));
    }

    #[test]
    fn summary_matches_seed000_report() {
        // Seed 000 classical LRU prints "Per-worker mean: 941.0", "stdev: 131.3",
        // "95% CI (mean): [908.2, 973.9]"; MGLRU "1311.3", "70.8", "[1293.6, 1329.0]".
        // Those CIs are mean ± 2.000·sd/√64 (a t-table value for df = 60): the exact
        // qt(0.975, 63) = 1.998341 gives [908.225, 973.837] and [1293.655, 1329.033], within
        // 0.07 of the printout. We check both: the seed's rounding with t = 2, and the exact CI.
        for (xs, mean, sd, lo, hi) in [
            (&LRU_CLIENTS, 941.0, 131.3, 908.2, 973.9),
            (&MGLRU_CLIENTS, 1311.3, 70.8, 1293.6, 1329.0),
        ] {
            let s = summary(xs);
            assert_eq!(s.n, 64);
            assert!(close(s.mean, mean, 0.05), "mean {}", s.mean);
            assert!(close(s.sd, sd, 0.05), "sd {}", s.sd);
            let seed_half = 2.0 * s.sd / 8.0;
            assert!(close(s.mean - seed_half, lo, 0.05), "seed-style low");
            assert!(close(s.mean + seed_half, hi, 0.05), "seed-style high");
            let half = 1.998_340_522 * s.sd / 8.0;
            assert!(close(s.ci95_low, s.mean - half, 1e-6), "{}", s.ci95_low);
            assert!(close(s.ci95_high, s.mean + half, 1e-6), "{}", s.ci95_high);
            assert!(close(s.ci95_low, lo, 0.07) && close(s.ci95_high, hi, 0.07));
        }
    }

    #[test]
    fn summary_edge_cases() {
        let s = summary(&[3.5]);
        assert_eq!(
            (s.n, s.mean, s.sd, s.ci95_low, s.ci95_high),
            (1, 3.5, 0.0, 3.5, 3.5)
        );
        let s = summary(&[]);
        assert_eq!(s.n, 0);
        assert!(s.mean.is_nan());
        let s = summary(&[2.0, 2.0, 2.0]);
        assert_eq!((s.sd, s.ci95_low, s.ci95_high), (0.0, 2.0, 2.0));
        // n = 2: mean ± 12.706 · sd/√2, sd = √2 → ± 12.706.
        let s = summary(&[1.0, 3.0]);
        assert!(close(s.ci95_high - 2.0, 12.706_204_736, 1e-7));
    }

    // Seed 000 (classical LRU vs MGLRU, Chrome & Node.js test), "Raw Result" per-client totals.
    const LRU_CLIENTS: [f64; 64] = [
        984.0, 882.0, 1051.0, 952.0, 921.0, 1173.0, 986.0, 949.0, 1069.0, 857.0, 1049.0, 895.0,
        899.0, 1093.0, 737.0, 678.0, 1039.0, 766.0, 697.0, 804.0, 852.0, 1040.0, 833.0, 1063.0,
        814.0, 1080.0, 1001.0, 988.0, 780.0, 719.0, 1045.0, 873.0, 889.0, 871.0, 869.0, 1051.0,
        1118.0, 762.0, 1112.0, 869.0, 823.0, 1030.0, 965.0, 891.0, 908.0, 963.0, 917.0, 1252.0,
        818.0, 870.0, 925.0, 931.0, 990.0, 1173.0, 837.0, 992.0, 1168.0, 787.0, 799.0, 1034.0,
        855.0, 965.0, 1250.0, 973.0,
    ];
    const MGLRU_CLIENTS: [f64; 64] = [
        1252.0, 1220.0, 1260.0, 1322.0, 1220.0, 1264.0, 1180.0, 1267.0, 1197.0, 1379.0, 1301.0,
        1266.0, 1282.0, 1245.0, 1282.0, 1334.0, 1359.0, 1240.0, 1338.0, 1323.0, 1331.0, 1227.0,
        1240.0, 1418.0, 1205.0, 1375.0, 1412.0, 1451.0, 1356.0, 1367.0, 1196.0, 1409.0, 1392.0,
        1373.0, 1271.0, 1305.0, 1251.0, 1335.0, 1245.0, 1394.0, 1296.0, 1353.0, 1355.0, 1367.0,
        1225.0, 1345.0, 1398.0, 1253.0, 1302.0, 1397.0, 1347.0, 1361.0, 1416.0, 1385.0, 1219.0,
        1304.0, 1306.0, 1170.0, 1344.0, 1295.0, 1292.0, 1466.0, 1278.0, 1368.0,
    ];

    #[test]
    fn jain_matches_seed000_classical_lru() {
        // "Jain's fairness index: 0.981188", "Coeff of variation: 0.1396",
        // "Min/Max ratio: 0.5415", "P10: 780", "P90: 1112".
        assert_eq!(LRU_CLIENTS.iter().sum::<f64>(), 60226.0); // "Total requests: 60226"
        let f = jain(&LRU_CLIENTS).unwrap();
        assert!(close(f.jain, 0.981188, 5e-7), "{}", f.jain);
        assert!(close(f.cov, 0.1396, 5e-5), "{}", f.cov);
        assert!(close(f.min_max_ratio, 0.5415, 5e-5), "{}", f.min_max_ratio);
        assert_eq!((f.p10, f.p90), (780.0, 1112.0));
        let mut s = LRU_CLIENTS.to_vec();
        s.sort_by(f64::total_cmp);
        // "P25: 855", "P50 (median): 931", "P75: 1040".
        assert_eq!(percentile_sorted(&s, 25.0), 855.0);
        assert_eq!(percentile_sorted(&s, 50.0), 931.0);
        assert_eq!(percentile_sorted(&s, 75.0), 1040.0);
    }

    #[test]
    fn jain_matches_seed000_mglru() {
        // "Jain's fairness index: 0.997138", "Coeff of variation: 0.0540",
        // "Min/Max ratio: 0.7981", "P10: 1220", "P90: 1398".
        assert_eq!(MGLRU_CLIENTS.iter().sum::<f64>(), 83926.0);
        let f = jain(&MGLRU_CLIENTS).unwrap();
        assert!(close(f.jain, 0.997138, 5e-7), "{}", f.jain);
        assert!(close(f.cov, 0.0540, 5e-5), "{}", f.cov);
        assert!(close(f.min_max_ratio, 0.7981, 5e-5), "{}", f.min_max_ratio);
        assert_eq!((f.p10, f.p90), (1220.0, 1398.0));
    }

    #[test]
    fn jain_edge_cases() {
        assert!(jain(&[]).is_none());
        assert!(jain(&[1.0, -1.0]).is_none());
        assert!(jain(&[1.0, f64::INFINITY]).is_none());
        let f = jain(&[0.0, 0.0]).unwrap();
        assert_eq!((f.jain, f.cov, f.min_max_ratio), (1.0, 0.0, 1.0));
        let f = jain(&[7.0]).unwrap();
        assert_eq!(
            (f.jain, f.cov, f.min_max_ratio, f.p10, f.p90),
            (1.0, 0.0, 1.0, 7.0, 7.0)
        );
        // One worker gets everything: J = 1/n.
        let f = jain(&[0.0, 0.0, 0.0, 10.0]).unwrap();
        assert!(close(f.jain, 0.25, 1e-15));
        assert_eq!(f.min_max_ratio, 0.0);
        // Equal shares: J = 1.
        assert!(close(jain(&[3.0; 5]).unwrap().jain, 1.0, 1e-15));
        assert_eq!(jain(&[3.0; 5]).unwrap().jain_ci95, (1.0, 1.0));
        assert_eq!(jain(&[7.0]).unwrap().jain_ci95, (1.0, 1.0));
        assert_eq!(jain(&[0.0, 0.0]).unwrap().jain_ci95, (1.0, 1.0));
    }

    #[test]
    fn parse_columns_header_and_separators() {
        let text = "# comment\nlru, mglru\n1, 2\n3,4\n\n5,\n";
        let cols = parse_columns(text).unwrap();
        assert_eq!(cols.len(), 2);
        assert_eq!(cols[0], ("lru".to_string(), vec![1.0, 3.0, 5.0]));
        assert_eq!(cols[1], ("mglru".to_string(), vec![2.0, 4.0]));
        let cols = parse_columns("1 2\t3\n4 NA 6e1\n").unwrap();
        let names: Vec<_> = cols.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["col1", "col2", "col3"]);
        assert_eq!(cols[1].1, vec![2.0]);
        assert_eq!(cols[2].1, vec![3.0, 60.0]);
    }

    #[test]
    fn parse_columns_errors_name_line_and_column() {
        let err = parse_columns("a b\n1 2\n3 x4\n").unwrap_err();
        assert!(err.contains("line 3") && err.contains("column 2") && err.contains("\"b\""));
        assert!(err.contains("x4"), "{err}");
        let err = parse_columns("a b\n1 2 3\n").unwrap_err();
        assert!(
            err.contains("line 2") && err.contains("expected 2"),
            "{err}"
        );
        let err = parse_columns("1,2\n3,inf\n").unwrap_err();
        assert!(err.contains("line 2, column 2"), "{err}");
        assert!(parse_columns("\n# only a comment\n").is_err());
        let err = parse_columns("a,,c\n").unwrap_err();
        assert!(err.contains("line 1, column 2"), "{err}");
    }

    #[test]
    fn report_shows_summary_fairness_and_welch() {
        let cols = vec![
            ("baseline".to_string(), BASE_40_RANDOM.to_vec()),
            ("patched".to_string(), PATCHED_40_RANDOM.to_vec()),
            ("base80".to_string(), BASE_80_RANDOM.to_vec()),
            ("single".to_string(), vec![1.0]),
        ];
        let r = stats_report(&cols, Domain::Real);
        assert!(r.contains("8410.71"), "{r}");
        // The seed printed [38.95, 40.26]% (linear); the log-ratio interval also counts the
        // uncertainty of the baseline mean.
        assert!(r.contains("[+38.70%, +40.51%]"), "{r}");
        assert!(r.contains("p-value < 2.2e-16"), "{r}");
        let base80 = r.lines().rfind(|l| l.contains("base80")).unwrap();
        assert!(base80.contains("no significance"), "{r}");
        let single = r.lines().rfind(|l| l.contains("single")).unwrap();
        assert!(single.contains("n/a"), "{r}");
        assert!(r.contains("Jain"));
        assert!(!r.contains("NaN"), "{r}");
        // Round trip through the parser.
        let text = "lru mglru\n".to_string()
            + &LRU_CLIENTS
                .iter()
                .zip(MGLRU_CLIENTS.iter())
                .map(|(a, b)| format!("{a} {b}\n"))
                .collect::<String>();
        let r = stats_report(&parse_columns(&text).unwrap(), Domain::NonNegative);
        assert!(r.contains("0.981188") && r.contains("0.997138"), "{r}");
        assert!(r.contains("[908.2"), "{r}");
        assert!(!r.contains("cut at the edge"), "{r}");
        // A mean CI that the t-interval would take below 0 is cut, and says so.
        let cols = vec![("few".to_string(), vec![0.0, 0.0, 9.0])];
        let r = stats_report(&cols, Domain::NonNegative);
        assert!(r.contains("[0, ") && r.contains("(cut at the edge)"), "{r}");
        let r = stats_report(&cols, Domain::Real);
        assert!(r.contains("[-") && !r.contains("cut"), "{r}");
        // A relative change with a mean of 0 falls back to the difference.
        let cols = vec![
            ("a".to_string(), vec![3.0, 4.0, 5.0]),
            ("b".to_string(), vec![0.0, 0.0, 0.0]),
        ];
        let r = stats_report(&cols, Domain::NonNegative);
        let b = r.lines().rfind(|l| l.starts_with("  b ")).unwrap();
        assert!(b.contains("n/a (mean = 0); difference CI [-6.4"), "{r}");
    }

    #[test]
    fn summary_in_cuts_at_the_domain_and_keeps_the_rest() {
        // Seed 000's CIs are far from 0: unchanged.
        let s = summary(&LRU_CLIENTS);
        let t = summary_in(&LRU_CLIENTS, Domain::NonNegative);
        assert_eq!(
            (t.ci95_low, t.ci95_high, t.clipped),
            (s.ci95_low, s.ci95_high, false)
        );
        // Few seeds of a rare event: the t-interval goes below 0, the count's mean cannot.
        let xs = [0.0, 0.0, 0.0, 2.0];
        let s = summary(&xs);
        assert!(s.ci95_low < 0.0);
        let t = summary_in(&xs, Domain::NonNegative);
        assert_eq!(
            (t.ci95_low, t.ci95_high, t.clipped),
            (0.0, s.ci95_high, true)
        );
        assert_eq!((t.mean, t.sd), (s.mean, s.sd));
        // A ratio near 1.
        let xs = [0.999, 1.0, 0.98];
        let t = summary_in(&xs, Domain::Unit);
        assert!(t.clipped && t.ci95_high == 1.0 && t.ci95_low > 0.9, "{t:?}");
        // Values outside the domain: uncut.
        let xs = [-1.0, 0.5, 2.0];
        assert_eq!(summary_in(&xs, Domain::NonNegative), summary(&xs));
        assert_eq!(summary_in(&xs, Domain::Real), summary(&xs));
        assert_eq!(summary_in(&[3.0], Domain::Unit), summary(&[3.0]));
    }

    #[test]
    fn jain_bootstrap_interval_is_deterministic_and_in_range() {
        let f = jain(&LRU_CLIENTS).unwrap();
        let (lo, hi) = f.jain_ci95;
        assert!(
            1.0 / 64.0 <= lo && lo < f.jain && f.jain < hi && hi <= 1.0,
            "{f:?}"
        );
        assert_eq!(jain(&LRU_CLIENTS).unwrap().jain_ci95, (lo, hi));
        let g = jain(&MGLRU_CLIENTS).unwrap();
        assert!(g.jain_ci95.0 < g.jain && g.jain < g.jain_ci95.1 && g.jain_ci95.1 <= 1.0);
        // The seed's two kernels do not overlap: MGLRU's clients are the fairer.
        assert!(hi < g.jain_ci95.0, "{f:?} {g:?}");
        // One worker gets everything: resamples give k/4 or 1.
        let f = jain(&[0.0, 0.0, 0.0, 10.0]).unwrap();
        assert_eq!(f.jain_ci95, (0.25, 1.0));
        // Scale-free.
        let scaled: Vec<f64> = LRU_CLIENTS.iter().map(|x| x * 1e250).collect();
        let h = jain(&scaled).unwrap();
        assert!(
            close(h.jain, 0.981188, 5e-7) && h.jain_ci95.1 <= 1.0,
            "{h:?}"
        );
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        /// Nonnegative samples with the awkward cases: zeros, constants, huge spreads, n = 2.
        fn sample() -> impl Strategy<Value = Vec<f64>> {
            prop_oneof![
                prop::collection::vec(0.0..1e6_f64, 2..12),
                prop::collection::vec(prop_oneof![Just(0.0), 1e-9..1e-6_f64, 1e6..1e12_f64], 2..6),
                prop::collection::vec(prop_oneof![Just(0.0), Just(1.0)], 2..8),
                (0.0..1e9_f64).prop_map(|x| vec![x, x, x]),
                (1e-12..1e12_f64, 1e-12..1e12_f64).prop_map(|(a, b)| vec![a, b]),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn relative_change_stays_above_minus_100(base in sample(), other in sample()) {
                let w = welch_relative_change(&base, &other).unwrap();
                let m_pos = mean(&base) > 0.0 && mean(&other) > 0.0;
                prop_assert_eq!(w.rel.is_some(), m_pos);
                if let Some(r) = w.rel {
                    prop_assert!(r.pct.0 > -100.0, "{:?}", r);
                    prop_assert!(r.ratio_ci95.0 > 0.0 && r.ratio_ci95.0 <= r.ratio_ci95.1);
                    prop_assert!(r.pct.0 <= r.pct.1, "{:?}", r);
                    prop_assert!(!r.pct.0.is_nan() && !r.pct.1.is_nan());
                    // The point estimate lies inside, and the interval's verdict is the test's.
                    let point = (r.ratio - 1.0) * 100.0;
                    let tol = 1e-9 * point.abs().max(1.0);
                    prop_assert!(r.pct.0 <= point + tol && point - tol <= r.pct.1, "{:?}", r);
                    prop_assert!(r.df >= 1.0 - 1e-9, "{:?}", r);
                    prop_assert!(!fmt_pct(r.pct.0).starts_with("-100.0"));
                    if r.se_log > 0.0 {
                        prop_assert_eq!(w.significant, r.p_two_sided < 0.05, "{:?}", r);
                    }
                }
            }

            #[test]
            fn jain_interval_stays_in_its_domain(xs in prop::collection::vec(
                prop_oneof![Just(0.0), 0.0..1e3_f64, 1e3..1e15_f64], 1..40)) {
                let f = jain(&xs).unwrap();
                let (lo, hi) = f.jain_ci95;
                let floor = 1.0 / xs.len() as f64 - 1e-12;
                prop_assert!(lo > 0.0 && lo >= floor && lo <= hi && hi <= 1.0, "{:?}", f);
                prop_assert!(f.jain >= floor && f.jain <= 1.0, "{:?}", f);
            }

            #[test]
            fn summary_in_stays_in_its_domain(xs in sample()) {
                let s = summary_in(&xs, Domain::NonNegative);
                prop_assert!(s.ci95_low >= 0.0 && s.ci95_low <= s.mean && s.mean <= s.ci95_high);
                let unit: Vec<f64> = xs.iter().map(|x| x / (1.0 + x)).collect();
                let s = summary_in(&unit, Domain::Unit);
                prop_assert!(s.ci95_low >= 0.0 && s.ci95_high <= 1.0, "{:?}", s);
            }
        }
    }
}
