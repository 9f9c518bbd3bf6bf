//! Order statistics over timing samples.

use serde::Serialize;

/// Median, tail and spread of a sample set (all in the samples' unit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// 50th percentile.
    pub median: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

impl Summary {
    /// Summarize `samples`; `None` when there are none (or only NaNs).
    pub fn of(samples: &[f64]) -> Option<Self> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        Some(Self {
            n,
            median: percentile(&sorted, 50.0),
            p99: percentile(&sorted, 99.0),
            mean: sorted.iter().sum::<f64>() / n as f64,
            min: sorted[0],
            max: sorted[n - 1],
        })
    }
}

/// Nearest-rank percentile of an ascending, non-empty slice.
pub fn percentile(sorted: &[f64], pct: f64) -> f64 {
    let rank = (pct / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<f64> = (1..=1000).rev().map(f64::from).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!(
            (s.n, s.median, s.p99, s.min, s.max),
            (1000, 500.0, 990.0, 1.0, 1000.0)
        );
        assert!((s.mean - 500.5).abs() < 1e-9);
    }

    #[test]
    fn empty_and_nan_only_samples_have_no_summary() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[f64::NAN]).is_none());
        assert!((Summary::of(&[7.0]).unwrap().p99 - 7.0).abs() < f64::EPSILON);
    }
}
