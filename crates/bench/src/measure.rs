//! Timing: repeat a measurement N times and keep every sample (milliseconds, from `Instant`), then
//! report the median and the minimum. Spawned processes are timed whole (spawn to exit) and must
//! succeed; git children get an isolated environment so no user or system config changes the work.

use std::io;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// The samples of one measurement, in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Samples(Vec<f64>);

impl Samples {
    pub fn push(&mut self, ms: f64) {
        self.0.push(ms);
    }

    /// The middle sample (the mean of the two middle ones for an even count); 0 when empty.
    pub fn median(&self) -> f64 {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        match n {
            0 => 0.0,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        }
    }

    pub fn min(&self) -> f64 {
        self.0.iter().copied().reduce(f64::min).unwrap_or(0.0)
    }
}

/// Runs `once` `runs` times; each call returns the duration it measured (its set-up excluded).
pub fn repeat(runs: usize, mut once: impl FnMut(usize) -> Result<Duration>) -> Result<Samples> {
    let mut samples = Samples::default();
    for index in 0..runs {
        samples.push(ms(once(index)?));
    }
    Ok(samples)
}

/// Times a closure.
pub fn timed<T>(work: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let started = Instant::now();
    let value = work()?;
    Ok((value, started.elapsed()))
}

pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// Runs `cmd` to the end with its output discarded, timed from spawn to exit; it must succeed.
pub fn run_quiet(cmd: &mut Command) -> Result<Duration> {
    let started = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("starting {cmd:?}"))?;
    let took = started.elapsed();
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(took)
}

/// Runs `cmd` with its stdout read to the end through a pipe (the way a harness would consume it,
/// and so no tool can notice `/dev/null` and stop early), timed from spawn to exit. Exit codes 0
/// and 1 (grep's "no match") count as success.
pub fn run_drained(cmd: &mut Command) -> Result<Duration> {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    if let Some(mut stdout) = child.stdout.take() {
        io::copy(&mut stdout, &mut io::sink())?;
    }
    let status = child.wait()?;
    let took = started.elapsed();
    if !matches!(status.code(), Some(0 | 1)) {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(took)
}

/// Gives a git command an environment that reads no system or global config and has a fixed
/// identity and date.
pub fn isolated_git(cmd: &mut Command) -> &mut Command {
    let date = "2024-01-01T00:00:00Z";
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "plumb bench")
        .env("GIT_AUTHOR_EMAIL", "bench@plumb.invalid")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_NAME", "plumb bench")
        .env("GIT_COMMITTER_EMAIL", "bench@plumb.invalid")
        .env("GIT_COMMITTER_DATE", date)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn samples(values: &[f64]) -> Samples {
        Samples(values.to_vec())
    }

    #[test]
    fn median_and_min() {
        let actual = [
            (
                samples(&[5.0, 1.0, 3.0]).median(),
                samples(&[5.0, 1.0, 3.0]).min(),
            ),
            (
                samples(&[4.0, 1.0, 3.0, 2.0]).median(),
                samples(&[4.0, 2.0]).min(),
            ),
            (Samples::default().median(), Samples::default().min()),
        ];
        assert_eq!(actual, [(3.0, 1.0), (2.5, 2.0), (0.0, 0.0)]);
    }
}
