//! The refault feedback loop of vmscan.c's MGLRU (the PID controller): `reset_ctrl_pos`,
//! `read_ctrl_pos`, `get_tier_idx` and `get_type_to_scan`.

use super::*;

impl Mglru {
    /// `reset_ctrl_pos(carryover=true)`: fold the current counters into the averages (called
    /// just before min_seq[t] advances); NR_HIST_GENS = 1 clears them.
    pub(super) fn reset_ctrl_pos(&mut self, lv: usize, t: usize) {
        for tier in 0..MAX_NR_TIERS {
            let protected = self.protected_of(lv, t, tier);
            let g = &mut self.lruvecs[lv];
            g.avg_refaulted[t][tier] = (g.avg_refaulted[t][tier] + g.refaulted[t][tier]) / 2;
            g.avg_total[t][tier] = (g.avg_total[t][tier] + protected + g.evicted[t][tier]) / 2;
        }
        let g = &mut self.lruvecs[lv];
        g.refaulted[t] = [0; MAX_NR_TIERS];
        g.evicted[t] = [0; MAX_NR_TIERS];
        g.protected[t] = [0; MAX_NR_TIERS];
    }

    /// The `protected` count of a tier: Era A/B keep tiers 1..3 at index `tier - 1` (tier 0
    /// is never protected), Era C at index `tier` (`read_ctrl_pos`, `reset_ctrl_pos`).
    pub(super) fn protected_of(&self, lv: usize, t: usize, tier: usize) -> u64 {
        let g = &self.lruvecs[lv];
        match (self.has(Behaviour::ProtectedAtTier), tier) {
            (true, _) => g.protected[t][tier],
            (_, 0) => 0,
            _ => g.protected[t][tier - 1],
        }
    }

    /// `read_ctrl_pos`: Era C sums tiers `tier % 4 ..= min(tier, 3)` (4 = all tiers).
    pub(super) fn read_ctrl_pos(&self, lv: usize, t: usize, tier: usize, gain: u64) -> CtrlPos {
        let g = &self.lruvecs[lv];
        let mut pos = CtrlPos {
            gain,
            ..Default::default()
        };
        let range = if self.has(Behaviour::TypeSelectionAllTiers) {
            (tier % MAX_NR_TIERS)..=tier.min(MAX_NR_TIERS - 1)
        } else {
            tier..=tier
        };
        for i in range {
            pos.refaulted += g.avg_refaulted[t][i] + g.refaulted[t][i];
            pos.total += g.avg_total[t][i] + self.protected_of(lv, t, i) + g.evicted[t][i];
        }
        pos
    }

    /// `get_tier_idx`: folios in tiers above the result are protected.
    pub(super) fn get_tier_idx(&self, lv: usize, t: usize) -> usize {
        let (gsp, gpv) = if self.has(Behaviour::TypeSelectionAllTiers) {
            (2, 3)
        } else {
            (1, 2)
        };
        let sp = self.read_ctrl_pos(lv, t, 0, gsp);
        for tier in 1..MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(lv, t, tier, gpv);
            if !positive_ctrl_err(sp, pv) {
                return tier - 1;
            }
        }
        MAX_NR_TIERS - 1
    }

    /// `get_type_to_scan` (Era C: all tiers of anon vs all tiers of file; Era A/B: tier 0).
    /// Era A/B also return the tier cutoff of the chosen type, found by comparing its tiers
    /// with the other type's tier 0 at the swappiness gains.
    pub(super) fn get_type_to_scan(&self, lv: usize, swappiness: u32) -> (usize, Option<usize>) {
        if swappiness <= 1 {
            return (FILE, None);
        }
        if swappiness >= MAX_SWAPPINESS {
            return (ANON, None);
        }
        let gain = [swappiness as u64, (MAX_SWAPPINESS - swappiness) as u64];
        let tier = if self.has(Behaviour::TypeSelectionAllTiers) {
            4
        } else {
            0
        };
        let sp = self.read_ctrl_pos(lv, ANON, tier, gain[ANON]);
        let pv = self.read_ctrl_pos(lv, FILE, tier, gain[FILE]);
        let t = if positive_ctrl_err(sp, pv) {
            FILE
        } else {
            ANON
        };
        if self.has(Behaviour::TypeSelectionAllTiers) {
            return (t, None);
        }
        let sp = self.read_ctrl_pos(lv, 1 - t, 0, gain[1 - t]);
        for tier in 1..MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(lv, t, tier, gain[t]);
            if !positive_ctrl_err(sp, pv) {
                return (t, Some(tier - 1));
            }
        }
        (t, Some(MAX_NR_TIERS - 1))
    }
}
