//! Miss-ratio curves in one pass.
//!
//! * Exact LRU curves from stack (reuse) distances (Mattson et al., "Evaluation techniques for
//!   storage hierarchies", IBM Systems Journal 1970): an access whose page was last used
//!   `d - 1` distinct pages ago hits in every LRU cache of at least `d` pages. Distances are
//!   counted with a Fenwick tree over access positions (Bennett & Kruskal 1975, as in
//!   Olken 1981): one mark per page at its latest access; the distance is the number of
//!   marks after the page's previous position. Positions are renumbered (compacted) when they
//!   run out, so memory is proportional to the distinct pages, not the accesses, and each
//!   access costs O(log distinct pages).
//! * SHARDS (Waldspurger et al., "Efficient MRC Construction with SHARDS", FAST 2015),
//!   fixed-rate: only pages whose hash falls below `rate` are tracked, and their distances are
//!   scaled by `1 / rate`.
//!
//! Cold (first) accesses are misses at every size, as libCacheSim and the textbook caches
//! count them.

use crate::access::{PageRef, TraceRecord};
use crate::hash::{splitmix64, MixMap};

/// A page, told apart from every other page of a trace without any folding: anon pages by pid,
/// file pages by file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageKey {
    owner: u64,
    page: u64,
}

impl PageKey {
    pub fn of(record: &TraceRecord) -> Self {
        match record.page {
            PageRef::Anon { page } => PageKey {
                owner: (1 << 63) | u64::from(record.pid),
                page,
            },
            PageRef::File { file, page } => PageKey {
                owner: u64::from(file),
                page,
            },
        }
    }

    fn hash(self) -> u64 {
        splitmix64(self.owner.rotate_left(32) ^ splitmix64(self.page))
    }
}

/// A Fenwick (binary indexed) tree of 0/1 marks.
#[derive(Debug, Default)]
struct Fenwick {
    tree: Vec<u32>,
}

impl Fenwick {
    fn with_len(n: usize) -> Self {
        Fenwick { tree: vec![0; n] }
    }

    fn len(&self) -> usize {
        self.tree.len()
    }

    fn add(&mut self, i: usize, delta: i32) {
        let mut i = i + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] = self.tree[i - 1].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Marks at positions `0..=i`.
    fn prefix(&self, i: usize) -> u64 {
        let mut i = i + 1;
        let mut sum = 0u64;
        while i > 0 {
            sum += u64::from(self.tree[i - 1]);
            i &= i - 1;
        }
        sum
    }
}

/// Stack distances of a stream of pages.
#[derive(Debug, Default)]
pub struct StackDistances {
    /// `hist[d - 1]`: accesses at stack distance `d`.
    hist: Vec<u64>,
    /// First accesses.
    cold: u64,
    accesses: u64,
    /// Each tracked page's latest position.
    last: MixMap<PageKey, u32>,
    marks: Fenwick,
    /// The next position.
    next: usize,
}

impl StackDistances {
    pub fn new() -> Self {
        StackDistances {
            marks: Fenwick::with_len(1024),
            ..Default::default()
        }
    }

    /// Takes one access into account.
    pub fn access(&mut self, key: PageKey) {
        self.accesses += 1;
        if self.next == self.marks.len() {
            self.compact();
        }
        let now = self.next;
        self.next += 1;
        match self.last.insert(key, now as u32) {
            None => self.cold += 1,
            Some(prev) => {
                let prev = prev as usize;
                // Pages used since: marks after `prev` (the page itself is at `prev`).
                let d = self.marks.prefix(now - 1) - self.marks.prefix(prev) + 1;
                let d = d as usize;
                if self.hist.len() < d {
                    self.hist.resize(d, 0);
                }
                self.hist[d - 1] += 1;
                self.marks.add(prev, -1);
            }
        }
        self.marks.add(now, 1);
    }

    /// Renumbers the marks `0..pages` in order, in a tree twice that size.
    fn compact(&mut self) {
        let mut order: Vec<(u32, PageKey)> = self.last.iter().map(|(k, &p)| (p, *k)).collect();
        order.sort_unstable_by_key(|&(p, _)| p);
        let len = (2 * order.len()).max(1024);
        self.marks = Fenwick::with_len(len);
        for (i, (_, key)) in order.into_iter().enumerate() {
            self.last.insert(key, i as u32);
            self.marks.add(i, 1);
        }
        self.next = self.last.len();
    }

    pub fn accesses(&self) -> u64 {
        self.accesses
    }

    /// Distinct pages seen.
    pub fn distinct(&self) -> u64 {
        self.cold
    }

    /// Misses of an LRU cache of `pages` pages: cold misses plus accesses at a stack distance
    /// above `pages`.
    pub fn misses(&self, pages: u64) -> u64 {
        let hits: u64 = self.hist.iter().take(pages as usize).sum();
        self.accesses - hits
    }

    /// Misses at every size of `sizes` (ascending or not), in one walk of the histogram.
    pub fn curve(&self, sizes: &[u64]) -> Vec<u64> {
        let mut cumulative = Vec::with_capacity(self.hist.len() + 1);
        let mut sum = 0;
        cumulative.push(0);
        for &h in &self.hist {
            sum += h;
            cumulative.push(sum);
        }
        sizes
            .iter()
            .map(|&s| self.accesses - cumulative[(s as usize).min(self.hist.len())])
            .collect()
    }
}

/// SHARDS, fixed rate: stack distances of the pages whose hash is below `rate`, scaled.
#[derive(Debug)]
pub struct Shards {
    rate: f64,
    threshold: u64,
    sampled: StackDistances,
    accesses: u64,
}

/// SHARDS' modulus `P` (the paper uses 2^24).
const SHARDS_MODULUS: u64 = 1 << 24;

impl Shards {
    /// `rate` in (0, 1].
    pub fn new(rate: f64) -> Result<Self, String> {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(format!("sample rate {rate} is not in (0, 1]"));
        }
        Ok(Shards {
            rate,
            threshold: (rate * SHARDS_MODULUS as f64).round().max(1.0) as u64,
            sampled: StackDistances::new(),
            accesses: 0,
        })
    }

    pub fn access(&mut self, key: PageKey) {
        self.accesses += 1;
        if key.hash() % SHARDS_MODULUS < self.threshold {
            self.sampled.access(key);
        }
    }

    /// Estimated misses at every size: the sampled misses at the size scaled by the rate,
    /// divided by the rate. This is SHARDS-adj: the difference between the expected
    /// (`accesses × rate`) and the actual sampled accesses counts as hits at the smallest
    /// distance, which corrects for hot pages sampled more or less often than their share.
    pub fn curve(&self, sizes: &[u64]) -> Vec<u64> {
        let rate = self.threshold as f64 / SHARDS_MODULUS as f64;
        let scaled: Vec<u64> = sizes
            .iter()
            .map(|&s| (s as f64 * rate).floor() as u64)
            .collect();
        self.sampled
            .curve(&scaled)
            .into_iter()
            .map(|m| ((m as f64 / rate).round() as u64).min(self.accesses))
            .collect()
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The distinct pages, estimated from the sampled ones.
    pub fn distinct_estimate(&self) -> u64 {
        let rate = self.threshold as f64 / SHARDS_MODULUS as f64;
        (self.sampled.distinct() as f64 / rate).round() as u64
    }

    pub fn accesses(&self) -> u64 {
        self.accesses
    }
}

/// `points` sizes evenly spaced from `max / points` to `max`.
pub fn even_sizes(max: u64, points: u64) -> Vec<u64> {
    let points = points.max(1);
    let mut sizes: Vec<u64> = (1..=points).map(|i| (max * i / points).max(1)).collect();
    sizes.dedup();
    sizes
}

/// Mean and largest absolute difference of two curves' miss ratios.
pub fn curve_error(exact: &[u64], estimate: &[u64], accesses: u64) -> (f64, f64) {
    let n = accesses.max(1) as f64;
    let errors: Vec<f64> = exact
        .iter()
        .zip(estimate)
        .map(|(&a, &b)| (a as f64 - b as f64).abs() / n)
        .collect();
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    let max = errors.iter().copied().fold(0.0, f64::max);
    (mean, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{Op, Via};
    use crate::textbook::{TextbookCache, TextbookKind};
    use proptest::prelude::*;

    fn file_key(page: u64) -> PageKey {
        PageKey::of(&TraceRecord {
            time_ns: 0,
            pid: 1,
            memcg: 0,
            page: PageRef::File { file: 0, page },
            op: Op::Read,
            via: Via::Fd,
            req: 1,
        })
    }

    fn distances(pages: &[u64]) -> StackDistances {
        let mut s = StackDistances::new();
        for &p in pages {
            s.access(file_key(p));
        }
        s
    }

    #[test]
    fn hand_computed_distances() {
        // a b c a b b d a: a at distance 3, b 3, b 1, a 3.
        let s = distances(&[0, 1, 2, 0, 1, 1, 3, 0]);
        assert_eq!(s.hist, vec![1, 0, 3]);
        assert_eq!((s.cold, s.accesses()), (4, 8));
        assert_eq!(s.curve(&[0, 1, 2, 3, 4]), vec![8, 7, 7, 4, 4]);
        assert_eq!(s.misses(3), 4);
    }

    #[test]
    fn compaction_keeps_distances() {
        // Far more accesses than the first tree's 1024 positions.
        let pages: Vec<u64> = (0..20_000u64).map(|i| (i * 7919) % 300).collect();
        let s = distances(&pages);
        assert_eq!(s.distinct(), 300);
        // A cyclic pattern over 300 pages: every reuse is at distance 300.
        assert_eq!(s.hist.len(), 300);
        assert_eq!(s.hist[299], 20_000 - 300);
    }

    proptest! {
        /// The curve is what the textbook LRU cache misses, at every size.
        #[test]
        fn exact_curve_is_textbook_lru(
            pages in prop::collection::vec(0u64..64, 1..3000),
            sizes in prop::collection::vec(1u64..80, 1..6),
        ) {
            let s = distances(&pages);
            let curve = s.curve(&sizes);
            for (i, &size) in sizes.iter().enumerate() {
                let mut cache = TextbookCache::new(TextbookKind::Lru, size as usize);
                for &p in &pages {
                    cache.access(p, false);
                }
                prop_assert_eq!(curve[i], cache.stats().misses, "size {}", size);
            }
        }
    }

    #[test]
    fn shards_at_rate_one_is_exact() {
        let pages: Vec<u64> = (0..5_000u64).map(|i| splitmix64(i) % 700).collect();
        let exact = distances(&pages);
        let mut shards = Shards::new(1.0).unwrap();
        for &p in &pages {
            shards.access(file_key(p));
        }
        let sizes = even_sizes(700, 20);
        assert_eq!(shards.curve(&sizes), exact.curve(&sizes));
    }

    #[test]
    fn shards_estimates_a_zipf_curve_closely() {
        use rand::SeedableRng;
        use rand_distr::Distribution;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let zipf = rand_distr::Zipf::new(200_000.0, 1.0).unwrap();
        let pages: Vec<u64> = (0..1_000_000)
            .map(|_| zipf.sample(&mut rng) as u64)
            .collect();
        let exact = distances(&pages);
        let mut shards = Shards::new(0.1).unwrap();
        for &p in &pages {
            shards.access(file_key(p));
        }
        let sizes = even_sizes(exact.distinct(), 50);
        let (mean, max) = curve_error(
            &exact.curve(&sizes),
            &shards.curve(&sizes),
            exact.accesses(),
        );
        assert!(mean < 0.005 && max < 0.02, "mean {mean}, max {max}");
    }

    #[test]
    fn bad_rates_are_refused() {
        for r in [0.0, -1.0, 1.5, f64::NAN] {
            assert!(Shards::new(r).is_err(), "{r}");
        }
    }
}
