//! fio's block scatter and its Zipf generator, as fio 3.28 (seed 002's) has them.
//!
//! fio's skewed distributions draw a value (a Zipf rank, a Gaussian sum) and scatter it over
//! the file's `nranges` blocks with a multiplicative hash, `__hash_u64(v) % nranges`
//! (`v * GOLDEN_RATIO_64` modulo 2^64, then modulo the range; hash.h, lib/zipf.c `zipf_next`,
//! lib/gauss.c `gauss_next`). Unless `nranges` is a power of two that is not one-to-one: two
//! values can land on one block, which then gets both their accesses, and other blocks are
//! never read. For seed 002's 10 GiB files of 4 KiB blocks (2,621,440 blocks) 23.5% of the
//! blocks are never read and 23.5% get two values: the values `v` and `v + 0.4 × nranges` for
//! 39% of the `v` below `0.6 × nranges`. With `normal:40` that pairs two busy values, so the
//! accesses are far more concentrated than the distribution alone would make them.
//!
//! [`FioHashFold`] reproduces that folding exactly at any range and carries it to a scaled
//! range: which values collide follows from fio's arithmetic alone (below), so the distances
//! are found at the seed's `nranges` and applied at the same relative distance over the
//! scaled range, and whether a scaled value collides is decided by fio's hash of the seed's
//! value it stands for (`v × nranges / pages`). When the scaled distance is a whole number
//! (`j × pages / m`; at every power-of-two scale of the seed's files) the scaled classes are
//! exactly fio's classes of those seed values.
//!
//! Why only those pairs: with `x(v) = v × G mod 2^64`, `x(v) ≡ x(u) (mod nranges)` needs
//! `2^k | x(v) − x(u)` where `nranges = m × 2^k` (m odd), and since G is odd that needs
//! `2^k | v − u`. So collisions are only at distances `d_j = j × 2^k`, `0 < j < m`. With
//! `D_j = d_j × G mod 2^64`, `x(v + d_j)` is `x(v) + D_j` (or that less 2^64 when it wraps), so
//! `v` and `v + d_j` collide when `D_j ≡ 0 (mod nranges)` and the sum does not wrap, or when
//! `D_j − 2^64 ≡ 0` and it does.

/// fio's `GOLDEN_RATIO_64` (hash.h), the multiplier of `__hash_u64`.
pub const FIO_GOLDEN_RATIO_64: u64 = 0x61C8864680B583EB;

/// The largest odd part of `nranges` whose collision distances are searched (one 128-bit
/// product per candidate at construction). Larger odd parts (a file of over 16M blocks whose
/// block count has an odd factor that large) are treated as collision-free.
pub const FIO_FOLD_MAX_ODD: u64 = 1 << 24;

/// fio's `ZIPF_MAX_GEN`: `zipf_update` sums the normalising constant over at most this many
/// ranks.
pub const FIO_ZIPF_MAX_GEN: u64 = 10_000_000;

/// One collision distance of fio's hash, carried to the scaled range.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Collision {
    /// The distance between two colliding values, scaled (`j × pages / m`).
    delta: u64,
    /// `D_j`: what the distance adds to a value's hash.
    add: u64,
    /// They collide when the sum wraps (else when it does not).
    on_wrap: bool,
}

impl Collision {
    /// Whether the seed's value `v` shares its block with `v + d_j` (whether `x(v) + D_j`
    /// wraps as this distance needs).
    fn pairs(&self, v: u64) -> bool {
        let x = v.wrapping_mul(FIO_GOLDEN_RATIO_64);
        x.overflowing_add(self.add).1 == self.on_wrap
    }
}

/// fio's `__hash_u64(v) % nranges` as a folding of `[0, pages)` onto itself: each value goes
/// to the smallest value that shares its block. At `pages == nranges` the classes are fio's
/// exactly (tested against the hash); at a scaled `pages` they keep fio's distances relative
/// to the range and the share of values that collide.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FioHashFold {
    collisions: Vec<Collision>,
    pages: u64,
    nranges: u64,
}

impl FioHashFold {
    /// The folding of fio's hash over `nranges` blocks, applied to `pages` values.
    pub fn new(pages: u64, nranges: u64) -> FioHashFold {
        if pages < 2 || nranges < 2 {
            return FioHashFold::default();
        }
        let k = nranges.trailing_zeros();
        let m = nranges >> k;
        if m > FIO_FOLD_MAX_ODD {
            return FioHashFold::default();
        }
        let n = nranges as u128;
        // 2^64 mod nranges: D_j − 2^64 ≡ 0 when D_j leaves this remainder. It is not 0, as
        // nranges is not a power of two here (m > 1 whenever the loop runs), so at most one
        // of the two conditions holds for each distance.
        let wrap_rem = (1u128 << 64) % n;
        let mut collisions = Vec::new();
        for j in 1..m {
            let add = ((j as u128) << k).wrapping_mul(FIO_GOLDEN_RATIO_64 as u128) as u64;
            let rem = add as u128 % n;
            let on_wrap = match rem {
                0 => false,
                r if r == wrap_rem => true,
                _ => continue,
            };
            let delta = (j as u128 * pages as u128 + m as u128 / 2) / m as u128;
            if delta == 0 || delta >= pages as u128 {
                continue;
            }
            collisions.push(Collision {
                delta: delta as u64,
                add,
                on_wrap,
            });
        }
        FioHashFold {
            collisions,
            pages,
            nranges,
        }
    }

    /// The seed's value a scaled value stands for.
    #[inline]
    fn seed_value(&self, v: u64) -> u64 {
        (v as u128 * self.nranges as u128 / self.pages as u128) as u64
    }

    /// The block value `v` reads: the smallest value of its class.
    #[inline]
    pub fn block(&self, mut v: u64) -> u64 {
        'down: loop {
            for c in &self.collisions {
                if v >= c.delta && c.pairs(self.seed_value(v - c.delta)) {
                    v -= c.delta;
                    continue 'down;
                }
            }
            return v;
        }
    }

    /// Whether the folding merges any values.
    pub fn folds(&self) -> bool {
        !self.collisions.is_empty()
    }
}

/// fio's Zipf generator (lib/zipf.c `zipf_init`, `zipf_next`: Gray et al.'s method, with the
/// normalising constant summed over at most [`FIO_ZIPF_MAX_GEN`] ranks), giving 0-based ranks
/// in `[0, pages)`. fio's exponent must lie in (0, 1) for the method (`alpha = 1 / (1 − θ)`).
#[derive(Clone, Debug, PartialEq)]
pub struct FioZipf {
    pages: u64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
}

impl FioZipf {
    /// `zipf_init` over `pages` ranks.
    pub fn new(pages: u64, theta: f64) -> FioZipf {
        let zetan: f64 = (0..pages.min(FIO_ZIPF_MAX_GEN))
            .map(|i| (1.0 / (i + 1) as f64).powf(theta))
            .sum();
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        let n = pages as f64;
        FioZipf {
            pages,
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / n).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    /// `zipf_next` before its hash, for a uniform `u` in [0, 1]: the 0-based rank.
    pub fn rank(&self, u: f64) -> u64 {
        let rand_z = u * self.zetan;
        let val = if rand_z < 1.0 {
            1
        } else if rand_z < 1.0 + 0.5f64.powf(self.theta) {
            2
        } else {
            1 + (self.pages as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
        };
        (val - 1).min(self.pages - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's own block of value `v` over `n` blocks.
    fn fio_block(v: u64, n: u64) -> u64 {
        v.wrapping_mul(FIO_GOLDEN_RATIO_64) % n
    }

    /// The smallest value of each value's block, straight from fio's hash.
    fn fio_classes(n: u64) -> Vec<u64> {
        let mut first = std::collections::BTreeMap::new();
        (0..n)
            .map(|v| *first.entry(fio_block(v, n)).or_insert(v))
            .collect()
    }

    #[test]
    fn at_the_hashed_range_the_folding_is_fios_hash() {
        // Powers of two (one-to-one), the seed's odd part 5 at several powers, odd ranges
        // with one or two distances, and one with three distances (chains of three values).
        for n in [4096, 5120, 10240, 327_680, 12_345, 100_003, 30_030] {
            let fold = FioHashFold::new(n, n);
            let ours: Vec<u64> = (0..n).map(|v| fold.block(v)).collect();
            assert_eq!(ours, fio_classes(n), "nranges {n}");
        }
        assert!(!FioHashFold::new(4096, 4096).folds());
    }

    /// Seed 002's 10 GiB files: 23.5% of the blocks are never read, at the seed's size and
    /// scaled down to fio-pmem's default (1/512) and beyond, the pairs 0.4 of the range apart.
    #[test]
    fn the_seeds_files_lose_a_quarter_of_their_blocks_at_any_scale() {
        let seed_blocks = 2_621_440;
        let fold = FioHashFold::new(seed_blocks, seed_blocks);
        let unread = |fold: &FioHashFold, n: u64| {
            (0..n).filter(|&v| fold.block(v) != v).count() as f64 / n as f64
        };
        assert!((unread(&fold, seed_blocks) - 0.2353).abs() < 0.0005);
        for pages in [2560, 5120, 20_480] {
            let fold = FioHashFold::new(pages, seed_blocks);
            let share = unread(&fold, pages);
            assert!((share - 0.2353).abs() < 0.02, "{pages} pages: {share}");
            // Every merged value sits 0.4 of the range above its block.
            for v in 0..pages {
                let b = fold.block(v);
                assert!(b == v || v - b == pages * 2 / 5, "{pages}: {v} -> {b}");
            }
        }
        // At a power-of-two scale the scaled classes are fio's classes of the seed's values
        // the scaled ones stand for (every 512th at 1/512).
        let fold = FioHashFold::new(5120, seed_blocks);
        let mut first = std::collections::BTreeMap::new();
        for v in 0..5120u64 {
            let b = *first.entry(fio_block(v * 512, seed_blocks)).or_insert(v);
            assert_eq!(fold.block(v), b, "{v}");
        }
        // Without scaling, a 5,120-block file would fold differently (16%): the seed's
        // range, not the scaled one, decides.
        let own = FioHashFold::new(5120, 5120);
        assert!((unread(&own, 5120) - 0.1596).abs() < 0.001);
    }

    #[test]
    fn ranges_too_odd_to_search_and_tiny_ranges_do_not_fold() {
        assert!(!FioHashFold::new(1000, u64::MAX).folds());
        assert!(!FioHashFold::new(1, 5120).folds());
        assert_eq!(FioHashFold::new(1000, u64::MAX).block(999), 999);
    }

    /// fio's Zipf: rank 0 takes `1 / zetan` of the draws, rank 1 `0.5^θ / zetan`, and the
    /// ranks stay in range at both ends of `u`.
    #[test]
    fn fio_zipf_gives_its_head_ranks_their_shares() {
        let z = FioZipf::new(5120, 0.8);
        let draws = 100_000;
        let mut count = [0u64; 2];
        for i in 0..draws {
            let r = z.rank((i as f64 + 0.5) / draws as f64);
            assert!(r < 5120);
            if r < 2 {
                count[r as usize] += 1;
            }
        }
        let expect0 = draws as f64 / z.zetan;
        let expect1 = expect0 * 0.5f64.powf(0.8);
        assert!(
            (count[0] as f64 - expect0).abs() <= 1.0,
            "{count:?} {expect0}"
        );
        assert!(
            (count[1] as f64 - expect1).abs() <= 1.0,
            "{count:?} {expect1}"
        );
        assert!(z.rank(1.0) < 5120);
        assert_eq!(z.rank(0.0), 0);
    }
}
