//! Access-pattern generators: seeded, deterministic, infinite streams of page indexes for
//! micro-scenarios.
//!
//! A [`Pattern`] is a plain description (cheap to clone, compare and serialise); calling
//! [`Pattern::iter`] with a `u64` seed gives a [`PatternIter`] that owns its own
//! `ChaCha8Rng` (seeded with `seed_from_u64`), so the same pattern and seed always give the
//! same stream, independent of any other generator. Per draw nothing is allocated.
//!
//! Indexes are relative: they lie in `[0, footprint())` and the caller adds its own offset
//! and decides whether they address anon memory or a file.
//!
//! Check [`Pattern::validate`] before iterating. Iterating an invalid pattern never panics:
//! its iterator is simply empty.

use crate::hash::splitmix64;
use crate::workload::fio_hash::{FioHashFold, FioZipf};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal, Zipf};
use serde::{Deserialize, Serialize};

/// The shape of one access stream over `footprint()` pages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pattern {
    /// `0, 1, …, pages-1`, then again from 0: a sequential scan, repeated.
    Sequential { pages: u64 },
    /// Independent uniform draws from `[0, pages)`.
    Uniform { pages: u64 },
    /// Zipf popularity over `pages` pages: rank `k` (1 = most popular) is drawn with
    /// probability ∝ `1 / k^s`. `s = 0` is uniform; `s = 0.99` is YCSB's `zipfian` constant.
    ///
    /// Ranks are mapped to page indexes by a fixed pseudo-random permutation of
    /// `[0, pages)` (a keyed Feistel network with cycle-walking), so hot pages are scattered
    /// over the range instead of packed at its start, as in YCSB's scrambled zipfian. The
    /// permutation depends only on `pages`, *not* on the iterator seed: every thread, round
    /// and seed drawing from the same Zipf pattern agrees on which pages are hot (as clients
    /// of one database do), and only the draws differ. See [`Pattern::zipf_page`].
    Zipf { pages: u64, s: f64 },
    /// Same stream as [`Pattern::Sequential`]; kept separately so scenarios can name a
    /// "loop" (a working set cycled over) apart from a "scan".
    Loop { pages: u64 },
    /// A uniform hot set `[0, hot)` interrupted by one-off scans: after every `scan_every`
    /// hot accesses come `scan_len` accesses to pages taken in order from
    /// `[hot, hot + scan)`, continuing where the previous scan stopped, so scan pages are
    /// never seen twice until the whole scan region has been used; then the cursor wraps to
    /// `hot` and the region is scanned again. `scan_len = 0` means no scans at all.
    HotScan {
        hot: u64,
        scan: u64,
        scan_every: u64,
        scan_len: u64,
    },
    /// A Gaussian around the middle of `[0, pages)`: mean `(pages - 1) / 2`, standard
    /// deviation `sigma_pct`% of `pages`, rounded to the nearest page and clamped to
    /// `[0, pages - 1]`. Clamping piles the tails onto the two end pages: with
    /// `sigma_pct = 40` each end page gets about 10.6% of all accesses.
    ///
    /// Not fio's `random_distribution=normal`, whose percentage is not a standard deviation:
    /// that is [`Pattern::FioNormal`]. Here `sigma_pct` is a true standard deviation and the
    /// hot region is contiguous around the middle.
    Normal { pages: u64, sigma_pct: f64 },
    /// fio's `random_distribution=normal:DEV` over `pages` blocks, as fio 3.20 and later draw
    /// it (lib/gauss.c `gauss_next`, axboe/fio; 3.20 made DEV a percentage of the range; seed
    /// 002 ran fio-3.28):
    /// the mean of 12 uniform draws over `[0, pages]` rounded up (Irwin–Hall, sd ≈
    /// `pages / 12`, centred), plus a uniform jitter of `ceil(pages × dev_pct / 100)` values
    /// (at most `pages / 2`) centred on 0 and halved until the sum falls inside the range.
    /// With `dev_pct = 40` about half the blocks get nearly all the accesses.
    ///
    /// fio then scatters the value with a multiplicative hash modulo the range
    /// (`__hash_u64(sum) % nranges`), which merges values unless the range is a power of two:
    /// at seed 002's 10 GiB files (2,621,440 blocks) 23.5% of the blocks are never read and
    /// as many get two values' accesses ([`crate::workload::fio_hash`]). `nranges` is the
    /// block count fio hashed over (the seed's file, when `pages` scales it down; `None`: fio
    /// over `pages`); the folding is carried to `pages` by [`FioHashFold`], then the blocks
    /// are scattered by the same fixed permutation as [`Pattern::Zipf`].
    FioNormal {
        pages: u64,
        dev_pct: u32,
        #[serde(default)]
        nranges: Option<u64>,
    },
    /// fio's `random_distribution=zipf:THETA` over `pages` blocks (lib/zipf.c: Gray et al.'s
    /// generator, [`FioZipf`]), its ranks folded as fio's hash folds them at `nranges` blocks
    /// (see [`Pattern::FioNormal`]) and scattered by the fixed permutation. `theta` must lie
    /// in (0, 1), where fio's method is defined.
    FioZipf {
        pages: u64,
        theta: f64,
        #[serde(default)]
        nranges: Option<u64>,
    },
    /// Whole blocks of `block_pages` consecutive pages: each draw of `of` picks a block
    /// (an index in `[0, of.footprint())`), whose pages are then yielded in order, before
    /// the next block is drawn. Models I/O or objects larger than a page: a 32 KiB
    /// WiredTiger leaf, a 512 MiB server buffer touched page by page, an fio `bs`.
    Blocks { of: Box<Pattern>, block_pages: u64 },
    /// sysbench 1.0's default `--rand-type=special` over `[0, pages)`, with its default
    /// `--rand-spec-pct=1`, `--rand-spec-res=75`, `--rand-spec-iter=12` (sb_rand_special in
    /// akopytov/sysbench src/sb_rand.c, tag 1.0.20; 1.1 made `uniform` the default): 75% of
    /// the draws are uniform over a band of 0.75% of the range just past its middle (the
    /// `[0.25, 1)` part of `(pct% of the range + 1)`, placed at `range/2 - range*pct/200`), the
    /// other 25% are the mean of 12 uniform draws over the range (sd = range / 12, centred).
    /// Hot pages are contiguous, as the rows sysbench picks are consecutive primary keys.
    Special { pages: u64 },
    /// `tables` equal tables of `of.footprint()` pages laid out one after the other: each draw
    /// picks a table uniformly (sysbench's `get_table_num`), then an index within it from
    /// `of`.
    Tables { tables: u64, of: Box<Pattern> },
    /// YCSB's `zipfian` request distribution (`ScrambledZipfianGenerator`, which CoreWorkload
    /// uses for `requestdistribution=zipfian`) over `records` records stored in insertion
    /// order over `pages` indexes (record `r` on index `r * pages / records`), as a database
    /// loaded by YCSB stores them: a rank is drawn from Zipf(0.99) over YCSB's fixed 10^10
    /// items by Gray et al.'s method (`ZipfianGenerator.nextLong`), then hashed to a record
    /// (`fnvhash64(rank) % records`). Popular records are scattered, and since 29% of the
    /// draws fall on ranks beyond the first 2·10^7, a page holding many records is far less
    /// skewed than a Zipf over pages: see [`ScrambledZipfian`].
    YcsbZipfian { records: u64, pages: u64 },
}

impl Pattern {
    /// Check the parameters: every page count positive, `s` and `sigma_pct` finite and
    /// `>= 0`, for HotScan `hot > 0`, `scan_every > 0`, `scan_len <= scan` and
    /// `hot + scan` representable.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Pattern::Sequential { pages }
            | Pattern::Uniform { pages }
            | Pattern::Loop { pages }
            | Pattern::Special { pages } => positive("pages", pages),
            Pattern::Zipf { pages, s } => {
                positive("pages", pages)?;
                non_negative_finite("zipf s", s)
            }
            Pattern::Normal { pages, sigma_pct } => {
                positive("pages", pages)?;
                non_negative_finite("normal sigma_pct", sigma_pct)
            }
            Pattern::FioNormal {
                pages,
                dev_pct,
                nranges,
            } => {
                positive("pages", pages)?;
                positive("fio_normal nranges", nranges.unwrap_or(pages))?;
                if dev_pct > 100 {
                    return Err(format!("fio_normal dev_pct {dev_pct} is over 100"));
                }
                Ok(())
            }
            Pattern::FioZipf {
                pages,
                theta,
                nranges,
            } => {
                positive("pages", pages)?;
                positive("fio_zipf nranges", nranges.unwrap_or(pages))?;
                if theta.is_finite() && theta > 0.0 && theta < 1.0 {
                    Ok(())
                } else {
                    Err(format!(
                        "fio_zipf theta must lie in (0, 1), where fio's generator is defined, got {theta}"
                    ))
                }
            }
            Pattern::HotScan {
                hot,
                scan,
                scan_every,
                scan_len,
            } => validate_hot_scan(hot, scan, scan_every, scan_len),
            Pattern::Blocks {
                ref of,
                block_pages,
            } => validate_copies(of, "blocks", "block_pages", block_pages),
            Pattern::Tables { tables, ref of } => validate_copies(of, "tables", "tables", tables),
            Pattern::YcsbZipfian { records, pages } => {
                positive("ycsb_zipfian records", records)?;
                positive("ycsb_zipfian pages", pages)?;
                if pages > records {
                    return Err(format!(
                        "ycsb_zipfian: {pages} pages for {records} records leaves pages empty"
                    ));
                }
                Ok(())
            }
        }
    }

    /// The size of the index range the pattern draws from: every index is `< footprint()`.
    /// For HotScan that is `hot + scan` (just `hot` when `scan_len = 0`).
    pub fn footprint(&self) -> u64 {
        match *self {
            Pattern::Sequential { pages }
            | Pattern::Uniform { pages }
            | Pattern::Zipf { pages, .. }
            | Pattern::Loop { pages }
            | Pattern::Special { pages }
            | Pattern::YcsbZipfian { pages, .. }
            | Pattern::Normal { pages, .. }
            | Pattern::FioNormal { pages, .. }
            | Pattern::FioZipf { pages, .. } => pages,
            Pattern::HotScan {
                hot,
                scan,
                scan_len,
                ..
            } => {
                if scan_len == 0 {
                    hot
                } else {
                    hot.saturating_add(scan)
                }
            }
            Pattern::Blocks {
                ref of,
                block_pages,
            } => of.footprint().saturating_mul(block_pages),
            Pattern::Tables { tables, ref of } => of.footprint().saturating_mul(tables),
        }
    }

    /// The stream of this pattern for `seed`. If [`Self::validate`] fails the iterator is
    /// empty (it yields `None` at once) rather than panicking.
    pub fn iter(&self, seed: u64) -> PatternIter {
        let gen = if self.validate().is_ok() {
            Gen::new(self)
        } else {
            Gen::Invalid
        };
        PatternIter {
            rng: ChaCha8Rng::seed_from_u64(seed),
            gen,
        }
    }

    /// [`Self::iter`], but reporting invalid parameters instead of giving an empty stream.
    pub fn try_iter(&self, seed: u64) -> Result<PatternIter, String> {
        self.validate()?;
        Ok(self.iter(seed))
    }

    /// For a valid Zipf pattern, the page index of the `rank`-th most popular page
    /// (`1..=pages`); `None` for other patterns or ranks out of range.
    pub fn zipf_page(&self, rank: u64) -> Option<u64> {
        match *self {
            Pattern::Zipf { pages, .. }
                if self.validate().is_ok() && (1..=pages).contains(&rank) =>
            {
                Some(Permutation::new(pages).apply(rank - 1))
            }
            _ => None,
        }
    }
}

fn positive(what: &str, v: u64) -> Result<(), String> {
    if v == 0 {
        Err(format!("{what} must be > 0"))
    } else {
        Ok(())
    }
}

fn non_negative_finite(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{what} must be finite and >= 0, got {v}"))
    }
}

/// A pattern made of `n` copies of `of` (Blocks, Tables): `of` valid, `n > 0`, and the
/// footprint `n * of.footprint()` representable.
fn validate_copies(of: &Pattern, kind: &str, field: &str, n: u64) -> Result<(), String> {
    of.validate()?;
    positive(&format!("{kind} {field}"), n)?;
    of.footprint()
        .checked_mul(n)
        .map(|_| ())
        .ok_or_else(|| format!("{kind}: footprint overflows"))
}

fn validate_hot_scan(hot: u64, scan: u64, scan_every: u64, scan_len: u64) -> Result<(), String> {
    positive("hot_scan hot", hot)?;
    positive("hot_scan scan_every", scan_every)?;
    if scan_len > scan {
        return Err(format!(
            "hot_scan scan_len {scan_len} exceeds the scan region of {scan} pages"
        ));
    }
    hot.checked_add(scan)
        .map(|_| ())
        .ok_or_else(|| "hot_scan hot + scan overflows".to_string())
}

/// An infinite, deterministic stream of page indexes (empty for an invalid pattern).
#[derive(Clone, Debug)]
pub struct PatternIter {
    rng: ChaCha8Rng,
    gen: Gen,
}

impl Iterator for PatternIter {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        self.gen.next(&mut self.rng)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.gen {
            Gen::Invalid => (0, Some(0)),
            _ => (usize::MAX, None),
        }
    }
}

impl std::iter::FusedIterator for PatternIter {}

/// Per-pattern generator state.
#[derive(Clone, Debug)]
enum Gen {
    /// Sequential and Loop: the next index.
    Cyclic {
        pages: u64,
        next: u64,
    },
    Uniform {
        pages: u64,
    },
    Zipf {
        pages: u64,
        dist: Zipf<f64>,
        perm: Permutation,
    },
    HotScan(HotScanState),
    Normal {
        pages: u64,
        mean: f64,
        sd: f64,
    },
    FioNormal {
        pages: u64,
        /// The jitter's width (`gs->stddev`).
        width: u64,
        scatter: FioScatter,
    },
    FioZipf {
        zipf: FioZipf,
        scatter: FioScatter,
    },
    Blocks {
        of: Box<Gen>,
        block_pages: u64,
        /// First page of the current block and pages of it still to yield.
        base: u64,
        left: u64,
    },
    Special {
        pages: u64,
    },
    Tables {
        tables: u64,
        per_table: u64,
        of: Box<Gen>,
    },
    YcsbZipfian {
        records: u64,
        pages: u64,
        ranks: ScrambledZipfian,
    },
    /// The pattern failed validation.
    Invalid,
}

impl Gen {
    /// State for a validated pattern.
    fn new(p: &Pattern) -> Gen {
        match *p {
            Pattern::Sequential { pages } | Pattern::Loop { pages } => {
                Gen::Cyclic { pages, next: 0 }
            }
            Pattern::Uniform { pages } => Gen::Uniform { pages },
            Pattern::Zipf { pages, s } => match Zipf::new(pages as f64, s) {
                Ok(dist) => Gen::Zipf {
                    pages,
                    dist,
                    perm: Permutation::new(pages),
                },
                Err(_) => Gen::Invalid,
            },
            Pattern::HotScan {
                hot,
                scan,
                scan_every,
                scan_len,
            } => Gen::HotScan(HotScanState::new(hot, scan, scan_every, scan_len)),
            Pattern::Normal { pages, sigma_pct } => Gen::Normal {
                pages,
                mean: (pages - 1) as f64 / 2.0,
                sd: sigma_pct / 100.0 * pages as f64,
            },
            Pattern::FioNormal {
                pages,
                dev_pct,
                nranges,
            } => Gen::FioNormal {
                pages,
                width: fio_gauss_width(pages, dev_pct),
                scatter: FioScatter::new(pages, nranges),
            },
            Pattern::FioZipf {
                pages,
                theta,
                nranges,
            } => Gen::FioZipf {
                zipf: FioZipf::new(pages, theta),
                scatter: FioScatter::new(pages, nranges),
            },
            Pattern::Blocks {
                ref of,
                block_pages,
            } => Gen::Blocks {
                of: Box::new(Gen::new(of)),
                block_pages,
                base: 0,
                left: 0,
            },
            Pattern::Special { pages } => Gen::Special { pages },
            Pattern::Tables { tables, ref of } => Gen::Tables {
                tables,
                per_table: of.footprint(),
                of: Box::new(Gen::new(of)),
            },
            Pattern::YcsbZipfian { records, pages } => Gen::YcsbZipfian {
                records,
                pages,
                ranks: ScrambledZipfian::new(),
            },
        }
    }

    fn next(&mut self, rng: &mut ChaCha8Rng) -> Option<u64> {
        Some(match self {
            Gen::Cyclic { pages, next } => {
                let i = *next;
                *next = if i + 1 == *pages { 0 } else { i + 1 };
                i
            }
            Gen::Uniform { pages } => rng.random_range(0..*pages),
            Gen::Zipf { pages, dist, perm } => {
                let rank = (dist.sample(rng) as u64).clamp(1, *pages);
                perm.apply(rank - 1)
            }
            Gen::HotScan(st) => st.next(rng),
            Gen::Normal { pages, mean, sd } => normal_page(rng, *pages, *mean, *sd),
            Gen::FioNormal {
                pages,
                width,
                scatter,
            } => scatter.apply(fio_gauss_value(rng, *pages, *width)),
            Gen::FioZipf { zipf, scatter } => scatter.apply(zipf.rank(rng.random::<f64>())),
            Gen::Blocks {
                of,
                block_pages,
                base,
                left,
            } => {
                if *left == 0 {
                    *base = of.next(rng)? * *block_pages;
                    *left = *block_pages;
                }
                *left -= 1;
                *base + (*block_pages - 1 - *left)
            }
            Gen::Special { pages } => sysbench_special(rng, *pages),
            Gen::Tables {
                tables,
                per_table,
                of,
            } => rng.random_range(0..*tables) * *per_table + of.next(rng)?,
            Gen::YcsbZipfian {
                records,
                pages,
                ranks,
            } => {
                let record = ranks.record(rng.random(), *records);
                (record as u128 * *pages as u128 / *records as u128) as u64
            }
            Gen::Invalid => return None,
        })
    }
}

/// YCSB's `ScrambledZipfianGenerator.ITEM_COUNT`: ranks are drawn over 10^10 items whatever
/// the record count, so which records are popular does not depend on it.
const YCSB_ITEM_COUNT: f64 = 1e10;
/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`.
const YCSB_ZIPFIAN_CONSTANT: f64 = 0.99;
/// YCSB's `ScrambledZipfianGenerator.ZETAN`: zeta(10^10, 0.99), precomputed there.
const YCSB_ZETAN: f64 = 26.469_028_201_783_02;

/// YCSB's scrambled zipfian: the rank by Gray et al.'s approximation ("Quickly generating
/// billion-record synthetic databases", SIGMOD 1994, as `ZipfianGenerator.nextLong` computes
/// it: rank 0 for `u·zetan < 1`, rank 1 below `1 + 0.5^theta`, otherwise
/// `n·(eta·u − eta + 1)^alpha`), then `fnvhash64(rank) % records`
/// (`ScrambledZipfianGenerator.nextValue`). Holds the method's constants, computed once as
/// `ZipfianGenerator`'s constructor does.
#[derive(Clone, Copy, Debug)]
pub struct ScrambledZipfian {
    /// zeta(2, theta) = 1 + 0.5^theta.
    zeta2: f64,
    /// 1 / (1 - theta).
    alpha: f64,
    /// (1 - (2/n)^(1-theta)) / (1 - zeta2/zetan).
    eta: f64,
}

impl Default for ScrambledZipfian {
    fn default() -> Self {
        Self::new()
    }
}

impl ScrambledZipfian {
    pub fn new() -> Self {
        let theta = YCSB_ZIPFIAN_CONSTANT;
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        ScrambledZipfian {
            zeta2,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / YCSB_ITEM_COUNT).powf(1.0 - theta)) / (1.0 - zeta2 / YCSB_ZETAN),
        }
    }

    /// The record of one draw over `records` records, from a uniform `u` in [0, 1).
    pub fn record(&self, u: f64, records: u64) -> u64 {
        ycsb_fnvhash64(self.rank(u)) % records
    }

    /// The rank (0 = most popular) over YCSB's 10^10 items, from a uniform `u` in [0, 1).
    pub fn rank(&self, u: f64) -> u64 {
        let uz = u * YCSB_ZETAN;
        if uz < 1.0 {
            0
        } else if uz < self.zeta2 {
            1
        } else {
            (YCSB_ITEM_COUNT * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
        }
    }
}

/// YCSB's `Utils.fnvhash64`: 64-bit FNV-1a over the value's 8 bytes, least significant
/// first, made non-negative (Java's `Math.abs` of the signed result).
pub fn ycsb_fnvhash64(v: u64) -> u64 {
    const OFFSET_BASIS: u64 = 0xCBF2_9CE4_8422_2325;
    const PRIME: u64 = 1_099_511_628_211;
    let h = v
        .to_le_bytes()
        .iter()
        .fold(OFFSET_BASIS, |h, &b| (h ^ b as u64).wrapping_mul(PRIME));
    (h as i64).unsigned_abs()
}

/// sysbench's `--rand-spec-iter`, `--rand-spec-pct` and `--rand-spec-res` defaults (1.0.20).
const SB_RAND_SPEC_ITER: u32 = 12;
const SB_RAND_SPEC_PCT: f64 = 1.0;
const SB_RAND_SPEC_RES: f64 = 75.0;

/// One draw of sysbench's `special` distribution over `[0, pages)` (`sb_rand_special` with
/// `a = 0`, `b = pages - 1`): see [`Pattern::Special`].
fn sysbench_special(rng: &mut ChaCha8Rng, pages: u64) -> u64 {
    let t = (pages - 1) as f64;
    let rnd: f64 = rng.random();
    let v = if rnd * t * 100.0 / (100.0 - SB_RAND_SPEC_RES) < t {
        // The Gaussian share: the mean of SB_RAND_SPEC_ITER uniform draws.
        let sum: f64 = (0..SB_RAND_SPEC_ITER).map(|_| rng.random::<f64>()).sum();
        sum * t / SB_RAND_SPEC_ITER as f64
    } else {
        // The special share: rnd (in [res-complement, 1)) over pct% of the range plus one,
        // shifted to the middle.
        let band = t * SB_RAND_SPEC_PCT / 100.0;
        rnd * (band + 1.0) + t / 2.0 - t * SB_RAND_SPEC_PCT / 200.0
    };
    (v as u64).min(pages - 1)
}

/// fio's scatter of a skewed draw over the blocks (`__hash_u64(v) % nranges`): the values
/// fio's hash would merge at `nranges` blocks folded together ([`FioHashFold`]; `None`: fio
/// over `pages`), then spread by the fixed permutation of [`Pattern::Zipf`].
#[derive(Clone, Debug)]
struct FioScatter {
    fold: FioHashFold,
    perm: Permutation,
}

impl FioScatter {
    fn new(pages: u64, nranges: Option<u64>) -> FioScatter {
        FioScatter {
            fold: FioHashFold::new(pages, nranges.unwrap_or(pages)),
            perm: Permutation::new(pages),
        }
    }

    /// The page value `v` reads.
    fn apply(&self, v: u64) -> u64 {
        self.perm.apply(self.fold.block(v))
    }
}

/// How many draws fio's `gauss_next` averages (`GAUSS_ITERS`).
const FIO_GAUSS_ITERS: u64 = 12;

/// The width of fio's normal jitter (`gauss_init`'s `gs->stddev`): `dev_pct`% of the range,
/// rounded up, at most half of it; 0 without a deviation. Computed wide, so that any range a
/// scenario file may give is valid.
fn fio_gauss_width(pages: u64, dev_pct: u32) -> u64 {
    if dev_pct == 0 {
        return 0;
    }
    let width = (pages as u128 * dev_pct as u128).div_ceil(100);
    (width as u64).min(pages / 2)
}

/// One value of fio's normal distribution over `pages` blocks with a jitter `width` wide
/// (`gauss_next` before its hash): the rounded-up mean of 12 uniform draws over
/// `[0, pages]`, the jitter halved until the sum stays in `[0, pages)`. The sum and the
/// jitter are computed in 128 bits (fio's 64-bit sum cannot overflow its 32-bit draws; here a
/// range may be as large as a `u64`).
fn fio_gauss_value(rng: &mut ChaCha8Rng, pages: u64, width: u64) -> u64 {
    let sum: u128 = (0..FIO_GAUSS_ITERS)
        .map(|_| rng.random_range(0..=pages) as u128)
        .sum();
    let mut at = sum.div_ceil(FIO_GAUSS_ITERS as u128) as i128;
    if width > 0 {
        // `gauss_dev`: a uniform offset in [0, width) less half the width, truncated.
        let mut dev = (width as f64 * rng.random::<f64>()) as i128 - (width / 2) as i128;
        // fio adds in unsigned arithmetic: a sum below 0 wraps and is too big, like one at
        // or past the end. A mean at the very end (every draw `pages`) with no jitter left
        // would loop forever in fio; here it stops, and the end is clamped below.
        while dev != 0 && (at + dev < 0 || at + dev >= pages as i128) {
            dev /= 2;
        }
        at += dev;
    }
    (at as u64).min(pages - 1)
}

/// One Gaussian draw rounded and clamped to `[0, pages - 1]`.
fn normal_page(rng: &mut ChaCha8Rng, pages: u64, mean: f64, sd: f64) -> u64 {
    let z: f64 = StandardNormal.sample(rng);
    let last = pages - 1;
    let v = (mean + sd * z).round();
    if v <= 0.0 {
        0
    } else {
        (v as u64).min(last)
    }
}

/// HotScan's position in its hot/scan cycle.
#[derive(Clone, Debug)]
struct HotScanState {
    hot: u64,
    scan: u64,
    scan_every: u64,
    scan_len: u64,
    /// Hot accesses since the last scan.
    hot_done: u64,
    /// Scan accesses still due in the current scan.
    scan_left: u64,
    /// Next scan page, as an offset into the scan region.
    cursor: u64,
}

impl HotScanState {
    fn new(hot: u64, scan: u64, scan_every: u64, scan_len: u64) -> Self {
        HotScanState {
            hot,
            scan,
            scan_every,
            scan_len,
            hot_done: 0,
            scan_left: 0,
            cursor: 0,
        }
    }

    fn next(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        if self.scan_left > 0 {
            self.scan_left -= 1;
            let page = self.hot + self.cursor;
            self.cursor = if self.cursor + 1 == self.scan {
                0
            } else {
                self.cursor + 1
            };
            return page;
        }
        self.hot_done += 1;
        if self.hot_done == self.scan_every {
            self.hot_done = 0;
            self.scan_left = self.scan_len;
        }
        rng.random_range(0..self.hot)
    }
}

/// A fixed pseudo-random permutation of `[0, n)`: a balanced Feistel network over the
/// smallest `2^(2h) >= n`, with cycle-walking (re-apply until the value lands below `n`;
/// since the domain is under `4n`, fewer than 4 rounds trips are expected). Bijective by
/// construction, stateless, allocation-free, so it scales to any `n`.
#[derive(Clone, Copy, Debug)]
struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; FEISTEL_ROUNDS],
}

const FEISTEL_ROUNDS: usize = 4;

/// Fixed key material of the Zipf rank permutation (any constant would do; changing it moves
/// every hot page).
const PERMUTATION_SALT: u64 = 0x7265_636c_6169_6d5a; // "reclaimZ"

impl Permutation {
    fn new(n: u64) -> Self {
        let bits = if n <= 1 {
            0
        } else {
            64 - (n - 1).leading_zeros()
        };
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0u64; FEISTEL_ROUNDS];
        let mut k = splitmix64(PERMUTATION_SALT ^ n);
        for key in keys.iter_mut() {
            k = splitmix64(k);
            *key = k;
        }
        Permutation {
            n,
            half_bits,
            mask: (1u64 << half_bits) - 1,
            keys,
        }
    }

    /// The image of `x < n`.
    fn apply(&self, x: u64) -> u64 {
        let mut y = self.feistel(x);
        while y >= self.n {
            y = self.feistel(y);
        }
        y
    }

    fn feistel(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask);
        for &k in &self.keys {
            let t = l ^ (splitmix64(r ^ k) & self.mask);
            l = r;
            r = t;
        }
        (l << self.half_bits) | r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_kinds() -> Vec<Pattern> {
        vec![
            Pattern::Sequential { pages: 1000 },
            Pattern::Uniform { pages: 1000 },
            Pattern::Zipf {
                pages: 1000,
                s: 0.99,
            },
            Pattern::Loop { pages: 1000 },
            Pattern::FioNormal {
                pages: 1000,
                dev_pct: 40,
                nranges: None,
            },
            Pattern::FioNormal {
                pages: 1000,
                dev_pct: 40,
                nranges: Some(2_621_440),
            },
            Pattern::FioZipf {
                pages: 1000,
                theta: 0.8,
                nranges: Some(2_621_440),
            },
            Pattern::HotScan {
                hot: 100,
                scan: 900,
                scan_every: 50,
                scan_len: 30,
            },
            Pattern::Normal {
                pages: 1000,
                sigma_pct: 40.0,
            },
            Pattern::Blocks {
                of: Box::new(Pattern::Uniform { pages: 125 }),
                block_pages: 8,
            },
            Pattern::Special { pages: 1000 },
            Pattern::Tables {
                tables: 4,
                of: Box::new(Pattern::Special { pages: 250 }),
            },
            Pattern::YcsbZipfian {
                records: 30_000,
                pages: 1000,
            },
        ]
    }

    /// Gray's method over 10^10 items with theta 0.99: rank 0 has 1/zetan = 3.78% of the draws,
    /// and the ranks below 2·10^7 (the seed's record count) have 71.6% by the method's own
    /// formula (71.3% for the exact Zipf: H(2·10^7, 0.99) / zetan).
    #[test]
    fn ycsb_zipfian_ranks_follow_grays_zipf_over_ten_billion_items() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 400_000;
        let gen = ScrambledZipfian::new();
        let ranks: Vec<u64> = (0..n).map(|_| gen.rank(rng.random())).collect();
        let share =
            |f: &dyn Fn(u64) -> bool| ranks.iter().filter(|&&r| f(r)).count() as f64 / n as f64;
        let top = share(&|r| r == 0);
        assert!((top - 1.0 / YCSB_ZETAN).abs() < 0.002, "rank 0 share {top}");
        let head = share(&|r| r < 20_000_000);
        assert!((head - 0.716).abs() < 0.005, "ranks below 2e7: {head}");
        assert!(ranks.iter().all(|&r| (r as f64) < YCSB_ITEM_COUNT));
    }

    /// FNV-1a over the 8 little-endian bytes: the values of 0 and 1 as computed independently
    /// (0xa8c7f832281a39c5 and 0x89cd31291d2aefa4, both negative as Java longs: their absolute
    /// values).
    #[test]
    fn ycsb_fnvhash64_is_fnv1a_over_the_bytes_made_non_negative() {
        assert_eq!(
            ycsb_fnvhash64(0),
            (0xa8c7_f832_281a_39c5u64 as i64).unsigned_abs()
        );
        assert_eq!(ycsb_fnvhash64(0), 6_284_781_860_667_377_211);
        assert_eq!(ycsb_fnvhash64(1), 8_517_097_267_634_966_620);
    }

    /// A page holding 30 records of a scrambled zipfian is much less skewed than a page of a
    /// Zipf over pages: the 1% most-drawn pages get about a fifth of the draws (H(100)/zetan
    /// plus their share of the scattered tail) against about half (H(100)/H(10^4)).
    #[test]
    fn ycsb_pages_of_many_records_are_far_flatter_than_a_zipf_over_pages() {
        let pages = 10_000u64;
        let top_1pct_share = |p: &Pattern| {
            let mut hits = vec![0u64; pages as usize];
            let draws = 500_000;
            for x in take(p, 5, draws) {
                hits[x as usize] += 1;
            }
            hits.sort_unstable_by(|a, b| b.cmp(a));
            hits[..(pages / 100) as usize].iter().sum::<u64>() as f64 / draws as f64
        };
        let ycsb = top_1pct_share(&Pattern::YcsbZipfian {
            records: 300_000,
            pages,
        });
        let zipf = top_1pct_share(&Pattern::Zipf { pages, s: 0.99 });
        assert!((0.18..0.30).contains(&ycsb), "ycsb top 1%: {ycsb}");
        assert!(zipf > 0.45, "zipf top 1%: {zipf}");
    }

    #[test]
    fn ycsb_zipfian_refuses_more_pages_than_records() {
        let e = Pattern::YcsbZipfian {
            records: 10,
            pages: 11,
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("11 pages for 10 records"), "{e}");
    }

    /// sysbench's defaults: 75% of draws in the band `[t/2 - t/200 + (t/100 + 1)/4,
    /// t/2 - t/200 + t/100 + 1)`, the rest a Gaussian of sd t/12 (Irwin–Hall of 12) centred.
    #[test]
    fn special_puts_three_quarters_in_a_band_past_the_middle() {
        let pages = 200_001u64;
        let t = (pages - 1) as f64;
        let lo = (t / 2.0 - t / 200.0 + (t / 100.0 + 1.0) / 4.0) as u64; // 99_500
        let hi = (t / 2.0 - t / 200.0 + t / 100.0 + 1.0) as u64; // 101_001
        let v = take(&Pattern::Special { pages }, 3, 400_000);
        let in_band: Vec<u64> = v
            .iter()
            .copied()
            .filter(|&x| (lo..hi).contains(&x))
            .collect();
        // 75% plus the Gaussian's mass in the band (1501 pages at its peak: 25% x 0.036).
        let share = in_band.len() as f64 / v.len() as f64;
        assert!((0.755..0.765).contains(&share), "{share}");
        // Uniform within the band: its two halves take equal shares.
        let mid = (lo + hi) / 2;
        let low_half = in_band.iter().filter(|&&x| x < mid).count() as f64;
        assert!((low_half / in_band.len() as f64 - 0.5).abs() < 0.01);
        // The rest: centred, sd t/12 (within 3%), nothing beyond 6 sd (the Irwin-Hall bound).
        let rest: Vec<f64> = v
            .iter()
            .filter(|&&x| !(lo..hi).contains(&x))
            .map(|&x| x as f64)
            .collect();
        let mean = rest.iter().sum::<f64>() / rest.len() as f64;
        let sd = (rest.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / rest.len() as f64).sqrt();
        assert!((mean / (t / 2.0) - 1.0).abs() < 0.01, "{mean}");
        assert!((sd / (t / 12.0) - 1.0).abs() < 0.03, "{sd}");
        assert!(v.iter().all(|&x| x < pages));
    }

    #[test]
    fn tables_pick_a_table_uniformly_then_draw_inside_it() {
        let p = Pattern::Tables {
            tables: 4,
            of: Box::new(Pattern::Special { pages: 1000 }),
        };
        assert_eq!(p.footprint(), 4000);
        let v = take(&p, 9, 40_000);
        for table in 0..4 {
            let mine: Vec<u64> = v
                .iter()
                .filter(|&&x| x / 1000 == table)
                .map(|&x| x % 1000)
                .collect();
            let share = mine.len() as f64 / v.len() as f64;
            assert!((share - 0.25).abs() < 0.01, "table {table}: {share}");
            // Each table has its own hot band, at the same place within it.
            let hot = mine.iter().filter(|&&x| (497..508).contains(&x)).count() as f64;
            assert!(hot / mine.len() as f64 > 0.74, "table {table}");
        }
        for bad in [
            Pattern::Tables {
                tables: 0,
                of: Box::new(Pattern::Uniform { pages: 10 }),
            },
            Pattern::Tables {
                tables: u64::MAX / 2,
                of: Box::new(Pattern::Uniform { pages: 10 }),
            },
            Pattern::Special { pages: 0 },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
            assert_eq!(bad.iter(1).next(), None);
        }
    }

    #[test]
    fn blocks_yield_whole_blocks_in_order() {
        let p = Pattern::Blocks {
            of: Box::new(Pattern::Uniform { pages: 16 }),
            block_pages: 4,
        };
        assert_eq!(p.footprint(), 64);
        let v = take(&p, 7, 400);
        for chunk in v.chunks(4) {
            assert_eq!(chunk[0] % 4, 0, "{chunk:?}");
            for (i, &x) in chunk.iter().enumerate() {
                assert_eq!(x, chunk[0] + i as u64);
            }
        }
        // Blocks are drawn at random: more than one block start appears.
        let starts: std::collections::BTreeSet<u64> = v.chunks(4).map(|c| c[0]).collect();
        assert!(starts.len() > 8, "{starts:?}");
        let bad = Pattern::Blocks {
            of: Box::new(Pattern::Uniform { pages: 16 }),
            block_pages: 0,
        };
        assert!(bad.validate().is_err());
        assert_eq!(bad.iter(1).next(), None);
        let overflow = Pattern::Blocks {
            of: Box::new(Pattern::Uniform {
                pages: u64::MAX / 2,
            }),
            block_pages: 4,
        };
        assert!(overflow.validate().is_err());
    }

    fn take(p: &Pattern, seed: u64, n: usize) -> Vec<u64> {
        p.iter(seed).take(n).collect()
    }

    #[test]
    fn deterministic_per_seed() {
        for p in all_kinds() {
            let a = take(&p, 42, 10_000);
            assert_eq!(a.len(), 10_000);
            assert_eq!(a, take(&p, 42, 10_000), "{p:?}: same seed must repeat");
            let random = !matches!(p, Pattern::Sequential { .. } | Pattern::Loop { .. });
            if random {
                assert_ne!(a, take(&p, 43, 10_000), "{p:?}: seeds must differ");
            }
        }
    }

    #[test]
    fn every_index_is_in_the_footprint() {
        for p in all_kinds() {
            let fp = p.footprint();
            assert!(p.iter(7).take(50_000).all(|i| i < fp), "{p:?}");
        }
        let tiny = [
            Pattern::Uniform { pages: 1 },
            Pattern::Zipf { pages: 1, s: 2.0 },
            Pattern::Normal {
                pages: 1,
                sigma_pct: 50.0,
            },
            Pattern::Sequential { pages: 1 },
        ];
        for p in tiny {
            assert!(p.iter(1).take(100).all(|i| i == 0), "{p:?}");
        }
    }

    #[test]
    fn serde_roundtrip() {
        for p in all_kinds() {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Pattern>(&json).unwrap(), p, "{json}");
        }
        let p: Pattern = serde_json::from_str(r#"{"kind":"zipf","pages":10,"s":0.5}"#).unwrap();
        assert_eq!(p, Pattern::Zipf { pages: 10, s: 0.5 });
    }

    #[test]
    fn sequential_and_loop_wrap() {
        for p in [Pattern::Sequential { pages: 3 }, Pattern::Loop { pages: 3 }] {
            assert_eq!(take(&p, 9, 8), [0, 1, 2, 0, 1, 2, 0, 1]);
        }
    }

    #[test]
    fn uniform_covers_range_evenly() {
        let mut counts = [0u32; 10];
        for i in (Pattern::Uniform { pages: 10 }).iter(3).take(100_000) {
            counts[i as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_400..10_600).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn invalid_parameters_are_rejected_and_iter_does_not_panic() {
        let bad = [
            Pattern::Sequential { pages: 0 },
            Pattern::Uniform { pages: 0 },
            Pattern::Loop { pages: 0 },
            Pattern::Zipf { pages: 0, s: 1.0 },
            Pattern::Zipf { pages: 10, s: -0.5 },
            Pattern::Zipf {
                pages: 10,
                s: f64::NAN,
            },
            Pattern::Zipf {
                pages: 10,
                s: f64::INFINITY,
            },
            Pattern::Normal {
                pages: 0,
                sigma_pct: 1.0,
            },
            Pattern::Normal {
                pages: 10,
                sigma_pct: f64::NAN,
            },
            Pattern::Normal {
                pages: 10,
                sigma_pct: -1.0,
            },
            Pattern::FioNormal {
                pages: 0,
                dev_pct: 40,
                nranges: None,
            },
            Pattern::FioNormal {
                pages: 10,
                dev_pct: 101,
                nranges: None,
            },
            Pattern::FioNormal {
                pages: 10,
                dev_pct: 40,
                nranges: Some(0),
            },
            Pattern::FioZipf {
                pages: 10,
                theta: 1.0,
                nranges: None,
            },
            Pattern::FioZipf {
                pages: 10,
                theta: f64::NAN,
                nranges: None,
            },
            Pattern::FioZipf {
                pages: 0,
                theta: 0.8,
                nranges: None,
            },
            Pattern::HotScan {
                hot: 0,
                scan: 10,
                scan_every: 1,
                scan_len: 1,
            },
            Pattern::HotScan {
                hot: 1,
                scan: 10,
                scan_every: 0,
                scan_len: 1,
            },
            Pattern::HotScan {
                hot: 1,
                scan: 10,
                scan_every: 1,
                scan_len: 11,
            },
            Pattern::HotScan {
                hot: u64::MAX,
                scan: 1,
                scan_every: 1,
                scan_len: 1,
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?} must be rejected");
            assert!(p.try_iter(0).is_err());
            assert_eq!(p.iter(0).next(), None, "{p:?}");
        }
        for p in all_kinds() {
            assert!(p.validate().is_ok(), "{p:?}");
            assert!(p.try_iter(0).is_ok());
        }
        assert!(Pattern::Zipf { pages: 10, s: 0.0 }.validate().is_ok());
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 5, 16, 17, 1000, 4097] {
            let perm = Permutation::new(n);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = perm.apply(x);
                assert!(y < n && !seen[y as usize], "n {n}: {x} -> {y}");
                seen[y as usize] = true;
            }
        }
        // Scattered: the ten hottest of a million pages are not packed together.
        let p = Pattern::Zipf {
            pages: 1 << 20,
            s: 0.99,
        };
        let hot: Vec<u64> = (1..=10).map(|r| p.zipf_page(r).unwrap()).collect();
        assert!(
            hot.iter().max().unwrap() - hot.iter().min().unwrap() > 1000,
            "{hot:?}"
        );
        assert_eq!(p.zipf_page(0), None);
        assert_eq!(p.zipf_page((1 << 20) + 1), None);
        assert_eq!(Pattern::Uniform { pages: 5 }.zipf_page(1), None);
    }

    /// Accesses to the pages of ranks 1 and 2 over `n` draws.
    fn rank12_counts(pages: u64, s: f64, n: usize) -> (f64, f64) {
        let p = Pattern::Zipf { pages, s };
        let (p1, p2) = (p.zipf_page(1).unwrap(), p.zipf_page(2).unwrap());
        let (mut c1, mut c2) = (0u64, 0u64);
        for i in p.iter(11).take(n) {
            c1 += u64::from(i == p1);
            c2 += u64::from(i == p2);
        }
        (c1 as f64, c2 as f64)
    }

    #[test]
    fn zipf_rank1_vs_rank2_is_2_pow_s() {
        for s in [0.5, 0.99, 1.0, 1.5] {
            let (c1, c2) = rank12_counts(1000, s, 1_000_000);
            let ratio = c1 / c2;
            let want = 2f64.powf(s);
            assert!(
                (ratio / want - 1.0).abs() < 0.03,
                "s {s}: ratio {ratio} want {want}"
            );
        }
    }

    #[test]
    fn zipf_rank1_share_matches_harmonic_number() {
        // P(rank 1) = 1 / H(n, s); for n = 1000, s = 0.99, H ≈ 7.52.
        let (pages, s, n) = (1000u64, 0.99, 1_000_000);
        let h: f64 = (1..=pages).map(|k| (k as f64).powf(-s)).sum();
        let (c1, _) = rank12_counts(pages, s, n);
        let share = c1 / n as f64;
        assert!(
            (share * h - 1.0).abs() < 0.02,
            "share {share} want {}",
            1.0 / h
        );
    }

    #[test]
    fn zipf_s0_is_uniform() {
        let (c1, c2) = rank12_counts(10, 0.0, 200_000);
        assert!((c1 / 20_000.0 - 1.0).abs() < 0.05 && (c2 / 20_000.0 - 1.0).abs() < 0.05);
    }

    #[test]
    fn hot_scan_cadence_and_fresh_scan_pages() {
        let (hot, scan, every, len) = (50u64, 10_000u64, 20u64, 7u64);
        let p = Pattern::HotScan {
            hot,
            scan,
            scan_every: every,
            scan_len: len,
        };
        let period = (every + len) as usize;
        let rounds = (scan / len) as usize; // scans that fit before the region wraps
        let v = take(&p, 5, period * rounds);
        let mut expect_scan = hot;
        for (i, &x) in v.iter().enumerate() {
            if i % period < every as usize {
                assert!(x < hot, "access {i} should be hot, got {x}");
            } else {
                assert_eq!(
                    x, expect_scan,
                    "access {i}: scans go in order, never repeating"
                );
                expect_scan += 1;
            }
        }
        assert_eq!(expect_scan, hot + len * rounds as u64);
    }

    #[test]
    fn hot_scan_wraps_after_region_is_used() {
        let p = Pattern::HotScan {
            hot: 1,
            scan: 5,
            scan_every: 1,
            scan_len: 3,
        };
        // hot, 3 scan pages, hot, 3 more (wrapping after page 5)...
        assert_eq!(take(&p, 0, 12), [0, 1, 2, 3, 0, 4, 5, 1, 0, 2, 3, 4]);
        let none = Pattern::HotScan {
            hot: 4,
            scan: 0,
            scan_every: 2,
            scan_len: 0,
        };
        assert!(none.iter(0).take(1000).all(|i| i < 4));
        assert_eq!(none.footprint(), 4);
    }

    fn mean_sd(v: &[u64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        (mean, var.sqrt())
    }

    #[test]
    fn normal_mean_and_sd() {
        let p = Pattern::Normal {
            pages: 10_000,
            sigma_pct: 10.0,
        };
        let (mean, sd) = mean_sd(&take(&p, 17, 200_000));
        assert!((mean - 4999.5).abs() < 15.0, "mean {mean}");
        assert!((sd / 1000.0 - 1.0).abs() < 0.01, "sd {sd}");
    }

    /// fio 3.20+'s jitter is `dev`% of the range, rounded up, at most half of it (before
    /// 3.20 it was `range × 100 / dev`).
    #[test]
    fn fio_normal_jitter_is_dev_percent_of_the_range_at_most_half() {
        assert_eq!(fio_gauss_width(10_000, 40), 4_000);
        assert_eq!(fio_gauss_width(10_000, 100), 5_000);
        assert_eq!(fio_gauss_width(10_000, 0), 0);
        assert_eq!(fio_gauss_width(7, 40), 3);
    }

    /// The share of draws the most popular `frac` of `pages` blocks get.
    fn top_share(p: &Pattern, pages: u64, frac: f64, draws: usize) -> f64 {
        let mut hits = vec![0u64; pages as usize];
        for i in take(p, 3, draws) {
            hits[i as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = hits[..(pages as f64 * frac) as usize].iter().sum();
        top as f64 / draws as f64
    }

    /// fio's `normal:40` puts 93% of the draws on the busiest half of the blocks and 59% on
    /// the busiest quarter (an independent simulation of `gauss_next` before its hash, 400k
    /// draws over 10,000 blocks); without a deviation (`normal`, the bare Irwin-Hall mean),
    /// 87% on the busiest quarter. The hash is one-to-one here: fio hashed over a power of
    /// two.
    #[test]
    fn fio_normal_concentrates_as_fios_gauss_next_does() {
        let pages = 10_000;
        let nranges = Some(1 << 20);
        let p40 = Pattern::FioNormal {
            pages,
            dev_pct: 40,
            nranges,
        };
        let half = top_share(&p40, pages, 0.5, 400_000);
        let quarter = top_share(&p40, pages, 0.25, 400_000);
        assert!((0.91..0.95).contains(&half), "{half}");
        assert!((0.56..0.62).contains(&quarter), "{quarter}");
        let p0 = Pattern::FioNormal {
            pages,
            dev_pct: 0,
            nranges,
        };
        let quarter0 = top_share(&p0, pages, 0.25, 400_000);
        assert!((0.85..0.89).contains(&quarter0), "{quarter0}");
        // Every draw is a block of the range, with the smallest ranges too.
        for pages in [1, 2, 3, 7] {
            let p = Pattern::FioNormal {
                pages,
                dev_pct: 40,
                nranges: None,
            };
            assert!(take(&p, 1, 1_000).iter().all(|&i| i < pages));
        }
        // The largest ranges a scenario file may give draw the same shape, without overflow:
        // the busiest half of the values (before the permutation) lies in the middle half.
        for pages in [u64::MAX / 2, u64::MAX] {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let width = fio_gauss_width(pages, 40);
            let middle = (0..1_000)
                .map(|_| fio_gauss_value(&mut rng, pages, width))
                .filter(|&v| v > pages / 4 && v < pages / 4 * 3)
                .count();
            assert!(middle > 800, "{pages}: {middle} of 1000 in the middle half");
        }
    }

    /// Hashed over seed 002's 10 GiB files (2,621,440 blocks), fio's skewed draws fold two
    /// values onto one block for 23.5% of the blocks and never read as many: at fio-pmem's
    /// default scale (5,120 blocks) the busiest 46.6% of the blocks (the seed's page cache)
    /// get 96% of `normal:40`'s draws (90% unhashed; an independent calculation from fio's
    /// hash at the seed's size gives 96.1% and 90.3%), and more of `zipf:0.8`'s too.
    #[test]
    fn fio_draws_hashed_over_the_seeds_files_fold_onto_fewer_blocks() {
        let pages = 5120;
        let seed = Some(2_621_440);
        let flat = Some(1 << 22);
        let normal = |nranges| Pattern::FioNormal {
            pages,
            dev_pct: 40,
            nranges,
        };
        let zipf = |nranges| Pattern::FioZipf {
            pages,
            theta: 0.8,
            nranges,
        };
        let (hashed, plain) = (
            top_share(&normal(seed), pages, 0.466, 400_000),
            top_share(&normal(flat), pages, 0.466, 400_000),
        );
        assert!((0.95..0.97).contains(&hashed), "{hashed}");
        assert!((0.89..0.915).contains(&plain), "{plain}");
        let (hashed, plain) = (
            top_share(&zipf(seed), pages, 0.466, 400_000),
            top_share(&zipf(flat), pages, 0.466, 400_000),
        );
        assert!(hashed > plain + 0.04, "{hashed} {plain}");
        // The blocks never read: the folded ones besides the tails' rarely drawn ones.
        let unread = |p: &Pattern| {
            let mut hit = vec![false; pages as usize];
            for i in take(p, 5, 400_000) {
                hit[i as usize] = true;
            }
            hit.iter().filter(|&&h| !h).count() as f64 / pages as f64
        };
        let (hashed, plain) = (unread(&normal(seed)), unread(&normal(flat)));
        assert!((0.15..0.25).contains(&(hashed - plain)), "{hashed} {plain}");
    }

    #[test]
    fn normal_clamps_tails_to_end_pages() {
        let p = Pattern::Normal {
            pages: 1000,
            sigma_pct: 40.0,
        };
        let v = take(&p, 23, 200_000);
        let share = |page| v.iter().filter(|&&x| x == page).count() as f64 / v.len() as f64;
        // P(z < -499.5/400) = Φ(-1.249) ≈ 0.106, for both end pages.
        for end in [0, 999] {
            assert!(
                (share(end) - 0.106).abs() < 0.005,
                "page {end}: {}",
                share(end)
            );
        }
        let sd0 = Pattern::Normal {
            pages: 101,
            sigma_pct: 0.0,
        };
        assert!(sd0.iter(1).take(100).all(|i| i == 50));
    }
}
