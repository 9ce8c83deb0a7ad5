//! Latency samples and their percentiles, kept exactly (runs are thousands of samples, not millions).

use std::time::Duration;

/// Durations measured for one figure, in any order.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    values: Vec<Duration>,
}

impl Samples {
    pub fn with_capacity(n: usize) -> Self {
        Samples {
            values: Vec::with_capacity(n),
        }
    }

    pub fn push(&mut self, value: Duration) {
        self.values.push(value);
    }

    pub fn extend(&mut self, other: Samples) {
        self.values.extend(other.values);
    }

    /// The `p`-th percentile (0..=100), nearest-rank; zero when there are no samples.
    pub fn percentile(&self, p: f64) -> Duration {
        if self.values.is_empty() {
            return Duration::ZERO;
        }
        let mut sorted = self.values.clone();
        sorted.sort_unstable();
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    pub fn p50(&self) -> Duration {
        self.percentile(50.0)
    }

    pub fn p99(&self) -> Duration {
        self.percentile(99.0)
    }
}

/// Median of a few per-run figures (throughputs of repeated runs).
pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut samples = Samples::default();
        for ms in 1..=100 {
            samples.push(Duration::from_millis(ms));
        }
        assert_eq!(samples.p50(), Duration::from_millis(50));
        assert_eq!(samples.p99(), Duration::from_millis(99));
        assert_eq!(samples.percentile(100.0), Duration::from_millis(100));
        assert_eq!(Samples::default().p99(), Duration::ZERO);
    }

    #[test]
    fn median_of_runs() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![]), 0.0);
    }
}
