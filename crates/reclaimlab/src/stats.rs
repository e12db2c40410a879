//! Repetition statistics for `reclaimlab compare` and `reclaimlab stats`.
//!
//! Everything here is a pure function over `f64` samples. Student's t and the normal
//! distribution come from the `statrs` crate.
//! The definitions follow the spec's "Metrics, defined once" section:
//!
//! - [`summary`]: mean with a Student-t 95% confidence interval over N seeds.
//! - [`welch_relative_change`]: Welch's two-sample t-test, reported as a 95% CI of the relative
//!   change `(other − baseline) / mean(baseline) × 100`, "no significance" when the interval
//!   spans 0. This is the method of the MGLRU cover letter (seed `002_8c563b9020eeae99.txt`,
//!   appendix): R's `t.test(baseline, other)` with its default Welch–Satterthwaite df and
//!   `p <- r$conf.int * 100 / r$estimate[1]`, printed negated (`[-p[2], -p[1]]`).
//! - [`jain`]: Jain's fairness index `J = (Σx)² / (n·Σx²)` with the coefficient of variation,
//!   min/max ratio and P10/P90, as in the fairness report of seed `000_2272684d5471770c.txt`.

use std::fmt::Write as _;

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

// ---------------------------------------------------------------------------------------------
// Summary: mean with a 95% CI
// ---------------------------------------------------------------------------------------------

/// Mean of a sample with a Student-t 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1 denominator); 0 when n = 1.
    pub sd: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance with the n − 1 denominator (two-pass).
fn variance(xs: &[f64], m: f64) -> f64 {
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() as f64 - 1.0)
}

/// Mean ± `t(0.975, n−1) · sd/√n`.
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
    }
}

// ---------------------------------------------------------------------------------------------
// Welch's t-test as a relative change
// ---------------------------------------------------------------------------------------------

/// Welch's two-sample t-test of `other` against `baseline`.
///
/// Signs are "other minus baseline": R's `t.test(baseline, other)` prints `x − y`, i.e. the
/// negated `t` and the negated, swapped confidence interval; `df` and the p-value are identical.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub baseline_mean: f64,
    pub other_mean: f64,
    /// `mean(other) − mean(baseline)`.
    pub diff_mean: f64,
    /// 95% CI of `mean(other) − mean(baseline)`.
    pub ci95: (f64, f64),
    /// `ci95 / mean(baseline) × 100` (percent); NaN when the baseline mean is 0.
    pub rel_pct: (f64, f64),
    /// Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// `diff_mean / se`.
    pub t: f64,
    pub p_two_sided: f64,
    /// False ("no significance") when the 95% CI strictly spans 0, as in the seed's R script
    /// (`(p[1] > 0 && p[2] < 0) || (p[1] < 0 && p[2] > 0)`). Also false when both samples have
    /// zero variance and equal means.
    pub significant: bool,
}

/// Welch's t-test exactly as R's `t.test(baseline, other)` (default: two-sided, unequal
/// variances, 95%), with the CI expressed relative to the baseline mean as in seed 002.
///
/// Returns `None` when either sample has fewer than 2 values or contains a non-finite value
/// (R refuses with "not enough observations"). If both samples have zero variance the test is
/// degenerate: `se = 0`, the CI collapses to the difference, `df = n1 + n2 − 2`, `t` is 0 or
/// ±∞ and `p` is 1 or 0.
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
        let df = se2 * se2 / (s1 * s1 / (n1 as f64 - 1.0) + s2 * s2 / (n2 as f64 - 1.0));
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
    let rel_pct = if m1 != 0.0 {
        (ci95.0 * 100.0 / m1, ci95.1 * 100.0 / m1)
    } else {
        (f64::NAN, f64::NAN)
    };
    let spans_zero = ci95.0 < 0.0 && ci95.1 > 0.0;
    let collapsed_at_zero = ci95.0 == 0.0 && ci95.1 == 0.0;
    let significant = !spans_zero && !collapsed_at_zero;
    Some(Welch {
        baseline_mean: m1,
        other_mean: m2,
        diff_mean: diff,
        ci95,
        rel_pct,
        df,
        t,
        p_two_sided: p,
        significant,
    })
}

// ---------------------------------------------------------------------------------------------
// Fairness
// ---------------------------------------------------------------------------------------------

/// Fairness of a set of per-worker or per-memcg totals.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Fairness {
    pub n: usize,
    /// Jain's index `(Σx)² / (n·Σx²)`, in `[1/n, 1]`.
    pub jain: f64,
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

/// Jain's index with CoV, min/max ratio and P10/P90 (see [`percentile_sorted`]).
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
            cov: 0.0,
            min_max_ratio: 1.0,
            p10,
            p90,
        });
    }
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    let m = sum / n as f64;
    let cov = if n > 1 {
        variance(xs, m).sqrt() / m
    } else {
        0.0
    };
    Some(Fairness {
        n,
        jain: sum * sum / (n as f64 * sum_sq),
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

/// The `reclaimlab stats` report: for each column n / mean / 95% CI; Jain's index with CoV,
/// min/max ratio and P10–P90; and each later column's Welch relative change against the first
/// column (or "no significance").
pub fn stats_report(columns: &[(String, Vec<f64>)]) -> String {
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

    out.push_str("MEAN (95% CI, Student t)\n");
    let _ = writeln!(
        out,
        "  {:<w$}  {:>5}  {:>14}  {:>14}  {:>31}",
        "column", "n", "mean", "sd", "95% CI"
    );
    for (name, xs) in columns {
        let s = summary(xs);
        let ci = if s.n >= 2 {
            format!("[{}, {}]", num(s.ci95_low), num(s.ci95_high))
        } else {
            "n/a (n < 2)".to_string()
        };
        let _ = writeln!(
            out,
            "  {:<w$}  {:>5}  {:>14}  {:>14}  {:>31}",
            name,
            s.n,
            num(s.mean),
            if s.n >= 2 { num(s.sd) } else { "-".to_string() },
            ci
        );
    }

    out.push_str("\nFAIRNESS (Jain = (sum x)^2 / (n * sum x^2); P10/P90 = sorted[floor(p*n)])\n");
    let _ = writeln!(
        out,
        "  {:<w$}  {:>9}  {:>8}  {:>8}  {:>14}  {:>14}",
        "column", "Jain", "CoV", "min/max", "P10", "P90"
    );
    for (name, xs) in columns {
        match jain(xs) {
            Some(f) => {
                let _ = writeln!(
                    out,
                    "  {:<w$}  {:>9.6}  {:>8.4}  {:>8.4}  {:>14}  {:>14}",
                    name,
                    f.jain,
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
            "\nRELATIVE CHANGE vs {base_name} (Welch's t-test, 95% CI of (x - {base_name}) / mean({base_name}))"
        );
        for (name, xs) in &columns[1..] {
            let line = match welch_relative_change(base, xs) {
                None => "n/a (each column needs at least 2 values)".to_string(),
                Some(wt) if !wt.rel_pct.0.is_finite() => format!(
                    "n/a (baseline mean is 0); difference CI [{}, {}]",
                    num(wt.ci95.0),
                    num(wt.ci95.1)
                ),
                Some(wt) => {
                    let detail = format!(
                        "t = {:.4}, df = {:.3}, p-value {}",
                        wt.t,
                        wt.df,
                        pval(wt.p_two_sided)
                    );
                    if wt.significant {
                        format!("[{:+.2}%, {:+.2}%]  ({detail})", wt.rel_pct.0, wt.rel_pct.1)
                    } else {
                        format!(
                            "no significance  (CI [{:+.2}%, {:+.2}%]; {detail})",
                            wt.rel_pct.0, wt.rel_pct.1
                        )
                    }
                }
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
        match r.rel {
            Some((lo, hi)) => {
                assert!(w.significant);
                assert!(close(w.rel_pct.0, lo, 0.005), "rel lo {}", w.rel_pct.0);
                assert!(close(w.rel_pct.1, hi, 0.005), "rel hi {}", w.rel_pct.1);
            }
            None => assert!(!w.significant),
        }
    }

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
        assert_eq!(w.rel_pct, (0.0, 0.0));
        // Different constant samples: significant, +100%.
        let w = welch_relative_change(&[5.0; 3], &[10.0; 3]).unwrap();
        assert!(w.significant && w.t == f64::INFINITY && w.p_two_sided == 0.0);
        assert_eq!(w.rel_pct, (100.0, 100.0));
        // Baseline mean 0: relative change undefined.
        let w = welch_relative_change(&[-1.0, 1.0], &[2.0, 3.0]).unwrap();
        assert!(w.rel_pct.0.is_nan() && w.rel_pct.1.is_nan());
        // One constant sample, the other varying: still a finite Welch test (df = n2 − 1).
        let w = welch_relative_change(&[5.0; 4], &[4.0, 6.0, 5.0, 7.0]).unwrap();
        assert!(close(w.df, 3.0, 1e-12));
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
        let r = stats_report(&cols);
        assert!(r.contains("8410.71"), "{r}");
        assert!(r.contains("[+38.95%, +40.26%]"), "{r}");
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
        let r = stats_report(&parse_columns(&text).unwrap());
        assert!(r.contains("0.981188") && r.contains("0.997138"), "{r}");
        assert!(r.contains("[908.2"), "{r}");
    }
}
