//! The load's numbers: per kind counts and latency percentiles, throughput, and the process-wide
//! checks, as a table and as JSON.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::cache::CacheReport;
use super::host::Memory;
use super::mix::Kind;
use super::runner::Outcome;

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct KindStats {
    pub kind: Kind,
    pub runs: usize,
    pub failed: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    /// For killed jails: the slowest disappearance of their processes, ms.
    pub max_gone_ms: Option<f64>,
}

/// The launcher process before and after.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessCheck {
    pub fds_after_warmup: usize,
    pub fds_at_end: usize,
    pub after_warmup: Memory,
    pub at_end: Memory,
    pub growth_limit_kib: u64,
    /// The allocator setting the load ran under.
    pub malloc_arena_max: Option<String>,
    /// Memory sampled every 5 % of the runs, while runs were in flight (diagnostic only).
    pub curve: Vec<Memory>,
}

/// Everything `--json` writes.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub seed: u64,
    pub jobs: usize,
    pub runs: usize,
    pub warmup_runs: usize,
    /// Wall time of the runs (warm-up included, set-up and final checks not).
    pub wall_s: f64,
    pub runs_per_s: f64,
    pub kinds: Vec<KindStats>,
    pub process: ProcessCheck,
    pub probe_cache: CacheReport,
    /// Every failure, one line each.
    pub failures: Vec<String>,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn kind_stats(outcomes: &[Outcome]) -> Vec<KindStats> {
    let mut by: BTreeMap<Kind, Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        by.entry(o.kind).or_default().push(o);
    }
    by.into_iter()
        .map(|(kind, list)| {
            let mut lat: Vec<f64> = list.iter().map(|o| ms(o.latency)).collect();
            lat.sort_by(f64::total_cmp);
            KindStats {
                kind,
                runs: list.len(),
                failed: list.iter().filter(|o| !o.problems.is_empty()).count(),
                p50_ms: percentile(&lat, 50.0),
                p95_ms: percentile(&lat, 95.0),
                max_gone_ms: list
                    .iter()
                    .filter_map(|o| o.gone_after.map(ms))
                    .max_by(f64::total_cmp),
            }
        })
        .collect()
}

impl Report {
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<16} {:>5} {:>7} {:>9} {:>9} {:>12}\n",
            "kind", "runs", "failed", "p50 ms", "p95 ms", "gone ≤ ms"
        );
        for k in &self.kinds {
            s.push_str(&format!(
                "{:<16} {:>5} {:>7} {:>9.1} {:>9.1} {:>12}\n",
                k.kind.name(),
                k.runs,
                k.failed,
                k.p50_ms,
                k.p95_ms,
                k.max_gone_ms.map_or("-".into(), |g| format!("{g:.0}"))
            ));
        }
        let p = &self.process;
        s.push_str(&format!(
            "\n{} runs, {} at a time (seed {}, {} warm-up): {:.1} s, {:.1} runs/s\n",
            self.runs, self.jobs, self.seed, self.warmup_runs, self.wall_s, self.runs_per_s
        ));
        s.push_str(&format!(
            "launcher process: {} -> {} descriptors; VmRSS {} -> {} KiB, VmHWM {} -> {} KiB, \
             RssAnon {} -> {} KiB (limit +{} KiB; MALLOC_ARENA_MAX={})\n",
            p.fds_after_warmup,
            p.fds_at_end,
            p.after_warmup.vm_rss,
            p.at_end.vm_rss,
            p.after_warmup.vm_hwm,
            p.at_end.vm_hwm,
            p.after_warmup.rss_anon,
            p.at_end.rss_anon,
            p.growth_limit_kib,
            p.malloc_arena_max.as_deref().unwrap_or("unset")
        ));
        let c = &self.probe_cache;
        s.push_str(&format!(
            "probe cache: {} CLIs at once with no cache file, {} succeeded in {:.0} ms; left {:?}, {}\n",
            c.processes,
            c.succeeded,
            c.wall_ms,
            c.cache_dir_entries,
            if c.cache_valid { "valid" } else { "NOT VALID" }
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 10.0);
        assert_eq!(percentile(&v, 95.0), 19.0);
        assert_eq!(percentile(&[3.0], 95.0), 3.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
