//! Block devices: a fixed latency per request, `queue_depth` requests in service at once (an
//! M/D/c-like queue), and a bandwidth the requests in service share: a request's data moves
//! after its latency, through one channel per direction (PCIe is full duplex) that carries one
//! transfer at a time. A channel is a timeline of transfers (`LockTimeline`, as the kernel's
//! locks are): work runs in event order but each context has its own clock, so a transfer takes
//! the earliest free stretch of the channel at or after its data is ready, not the end of the
//! last transfer processed. Reads are waited for; writes complete asynchronously.

use super::config::DeviceProfile;
use super::lru_lock::LockTimeline;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Debug)]
pub struct BlockDev {
    pub profile: DeviceProfile,
    /// When each of the queue's slots is free again (min-heap).
    slots: BinaryHeap<Reverse<u64>>,
    /// The transfers of the read and of the write channel.
    channels: [LockTimeline; 2],
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
            channels: Default::default(),
            reads: 0,
            writes: 0,
            bytes_read: 0,
            bytes_written: 0,
            queue_wait_ns: 0,
        }
    }

    /// `submit_bio`: a request issued at `now`; returns its completion time. Transfers that
    /// end by `floor` (`Machine::lock_floor`: no context can submit before it) are forgotten.
    pub fn submit(&mut self, now: u64, bytes: u64, write: bool, floor: u64) -> u64 {
        let Reverse(free_at) = self.slots.pop().unwrap_or(Reverse(0));
        let start = now.max(free_at);
        self.queue_wait_ns += start - now;
        let latency = if write {
            self.profile.write_latency_ns
        } else {
            self.profile.read_latency_ns
        };
        let ready = start + latency;
        let copied = ready + transfer_ns(bytes, self.profile.bandwidth_bytes_per_s);
        let done = match self.profile.shared_bandwidth() {
            None => copied,
            Some(bw) => {
                let hold = transfer_ns(bytes, bw);
                let moved = self.channels[write as usize].acquire(ready, hold, floor) + hold;
                copied.max(moved)
            }
        };
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

/// The time `bytes` take at `bw` bytes per second.
fn transfer_ns(bytes: u64, bw: u64) -> u64 {
    (bytes as u128 * 1_000_000_000 / bw.max(1) as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::config::Channel;

    #[test]
    fn queue_depth_limits_parallelism() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 1000, 1000, 4_096_000_000_000, 2));
        // Two requests run in parallel (their 1 ns transfers one after the other), the third
        // waits for the first slot.
        assert_eq!(d.submit(0, 4096, false, 0), 1001);
        assert_eq!(d.submit(0, 4096, false, 0), 1002);
        assert_eq!(d.submit(0, 4096, false, 0), 2002);
        assert_eq!(d.queue_wait_ns, 1001);
    }

    /// 1000 requests of 1 MB in flight together on a 1 GB/s device move in 1 s, not in
    /// 1000/128 request times: the queue's slots share the bandwidth.
    #[test]
    fn requests_in_flight_share_the_bandwidth() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 1000, 1000, 1_000_000_000, 128));
        let last = (0..1000)
            .map(|_| d.submit(0, 1_000_000, false, 0))
            .max()
            .unwrap();
        assert_eq!(last, 1000 + 1000 * 1_000_000);
    }

    /// A write moves on the other direction's channel, in parallel with a read.
    #[test]
    fn reads_and_writes_move_on_channels_of_their_own() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 1000, 1000, 1_000_000_000, 128));
        assert_eq!(d.submit(0, 1_000_000, false, 0), 1000 + 1_000_000);
        assert_eq!(d.submit(0, 1_000_000, true, 0), 1000 + 1_000_000);
        assert_eq!(d.submit(0, 1_000_000, true, 0), 1000 + 2_000_000);
    }

    /// Small requests keep their latency while the channel has room: 100 concurrent 4 KiB
    /// reads on a 4 GB/s device finish 1 µs apart after the 80 µs latency.
    #[test]
    fn small_requests_overlap_their_latency() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 80_000, 0, 4_096_000_000, 128));
        let done: Vec<u64> = (0..100).map(|_| d.submit(0, 4096, false, 0)).collect();
        assert_eq!(done[0], 81_000);
        assert_eq!(done[99], 80_000 + 100 * 1000);
    }

    /// A request processed after another but issued earlier moves its data in the channel's
    /// free stretch before the other's transfer, not after it.
    #[test]
    fn a_transfer_takes_the_earliest_free_stretch_of_its_channel() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 0, 0, 1_000_000_000, 128));
        assert_eq!(d.submit(10_000_000, 1_000_000, false, 0), 11_000_000);
        assert_eq!(d.submit(0, 1_000_000, false, 0), 1_000_000);
        // One that overlaps a recorded transfer waits for its end.
        assert_eq!(d.submit(9_500_000, 1_000_000, false, 0), 12_000_000);
    }

    /// A ramdisk's requests are copies by their own CPUs: 1000 of 1 MB at 1 GB/s each take
    /// 1 ms, all together. A pmem-like device's requests move at their own rate but share its
    /// channel: two 1 MB copies at 1 GB/s through a 1.5 GB/s channel end at 1 ms and 1.33 ms.
    #[test]
    fn per_cpu_copies_share_nothing_and_a_narrower_channel_limits_the_sum() {
        let mut d = BlockDev::new(DeviceProfile {
            channel: Channel::PerCpuCopy,
            ..DeviceProfile::new("t", 0, 0, 1_000_000_000, 1024)
        });
        assert!((0..1000).all(|_| d.submit(0, 1_000_000, false, 0) == 1_000_000));
        let mut d = BlockDev::new(DeviceProfile {
            channel: Channel::BytesPerSec(1_500_000_000),
            ..DeviceProfile::new("t", 0, 0, 1_000_000_000, 1024)
        });
        assert_eq!(d.submit(0, 1_000_000, false, 0), 1_000_000);
        assert_eq!(d.submit(0, 1_000_000, false, 0), 2 * 666_666);
    }

    #[test]
    fn bandwidth_adds_transfer_time() {
        let mut d = BlockDev::new(DeviceProfile::new("t", 0, 0, 4096 * 1000, 1));
        assert_eq!(d.submit(0, 4096, true, 0), 1_000_000);
    }
}
