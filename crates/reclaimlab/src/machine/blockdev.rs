//! Block devices: a fixed latency per request, a bandwidth, and `queue_depth` requests in
//! service at once (an M/D/c-like queue). Reads are waited for; writes complete asynchronously.

use super::config::DeviceProfile;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Debug)]
pub struct BlockDev {
    pub profile: DeviceProfile,
    /// When each of the queue's slots is free again (min-heap).
    slots: BinaryHeap<Reverse<u64>>,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Total time requests waited for a free queue slot.
    pub queue_wait_ns: u64,
}

impl BlockDev {
    pub fn new(profile: DeviceProfile) -> Self {
        let slots = (0..profile.queue_depth).map(|_| Reverse(0)).collect();
        BlockDev {
            profile,
            slots,
            reads: 0,
            writes: 0,
            bytes_read: 0,
            bytes_written: 0,
            queue_wait_ns: 0,
        }
    }

    /// `submit_bio`: a request issued at `now`; returns its completion time.
    pub fn submit(&mut self, now: u64, bytes: u64, write: bool) -> u64 {
        let Reverse(free_at) = self.slots.pop().unwrap_or(Reverse(0));
        let start = now.max(free_at);
        self.queue_wait_ns += start - now;
        let latency = if write {
            self.profile.write_latency_ns
        } else {
            self.profile.read_latency_ns
        };
        let transfer =
            (bytes as u128 * 1_000_000_000 / self.profile.bandwidth_bytes_per_s as u128) as u64;
        let done = start + latency + transfer;
        self.slots.push(Reverse(done));
        if write {
            self.writes += 1;
            self.bytes_written += bytes;
        } else {
            self.reads += 1;
            self.bytes_read += bytes;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_depth_limits_parallelism() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 1000, 1000, 4_096_000_000_000, 2));
        // Two requests run in parallel, the third waits for the first slot.
        assert_eq!(d.submit(0, 4096, false), 1001);
        assert_eq!(d.submit(0, 4096, false), 1001);
        assert_eq!(d.submit(0, 4096, false), 2002);
        assert_eq!(d.queue_wait_ns, 1001);
    }

    #[test]
    fn bandwidth_adds_transfer_time() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 0, 0, 4096 * 1000, 1));
        assert_eq!(d.submit(0, 4096, true), 1_000_000);
    }
}
