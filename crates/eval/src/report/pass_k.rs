//! The two estimators over `n` finished attempts of which `c` resolved:
//!
//! - pass@k, "at least one of k attempts resolves" (Chen et al. 2021, the Codex paper):
//!   `1 − C(n−c, k) / C(n, k)`, computed as the paper's product `1 − Π_{i=n−c+1..n} (1 − k/i)` so
//!   that no binomial coefficient overflows;
//! - pass^k, "all of k attempts resolve" (τ-bench, Yao et al. 2024): `C(c, k) / C(n, k)`, as
//!   `Π_{i=0..k−1} (c−i)/(n−i)`.
//!
//! Both are unbiased when `n ≥ k`, and undefined (`None`) when fewer attempts finished: a task
//! whose attempts failed on the infrastructure says nothing about the model.

/// pass@k of one task; `None` when `n < k` or `k == 0`.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    let all_fail: f64 = (n - c + 1..=n)
        .map(|i| 1.0 - f64::from(k) / f64::from(i))
        .product();
    Some(1.0 - all_fail)
}

/// pass^k of one task; `None` when `n < k` or `k == 0`.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    Some(
        (0..k)
            .map(|i| f64::from(c - i) / f64::from(n - i))
            .product(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Rounded to 12 places, so hand-computed fractions compare exactly.
    fn r(x: Option<f64>) -> Option<f64> {
        x.map(|x| (x * 1e12).round() / 1e12)
    }

    #[test]
    fn pass_at_k_matches_hand_computed_values() {
        // n=5, c=2, k=2: 1 − C(3,2)/C(5,2) = 1 − 3/10.
        // n=5, c=2, k=1: c/n. n=5, c=2, k=4: C(3,4) = 0, so 1. n=5, c=0: 0. n=3, c=3, k=3: 1.
        // n=10, c=3, k=5: 1 − C(7,5)/C(10,5) = 1 − 21/252. n=2, k=3: undefined.
        let cases = [
            (5, 2, 2),
            (5, 2, 1),
            (5, 2, 4),
            (5, 0, 2),
            (3, 3, 3),
            (10, 3, 5),
            (2, 1, 3),
        ];
        let actual: Vec<Option<f64>> = cases
            .iter()
            .map(|&(n, c, k)| r(pass_at_k(n, c, k)))
            .collect();
        let expected = vec![
            Some(0.7),
            Some(0.4),
            Some(1.0),
            Some(0.0),
            Some(1.0),
            r(Some(1.0 - 21.0 / 252.0)),
            None,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn pass_hat_k_matches_hand_computed_values() {
        // n=5, c=2, k=2: C(2,2)/C(5,2) = 1/10. n=5, c=2, k=1: 2/5. n=5, c=4, k=3: C(4,3)/C(5,3)
        // = 4/10. n=5, c=2, k=3: 0. n=3, c=3, k=3: 1. k=0 and n<k: undefined.
        let cases = [
            (5, 2, 2),
            (5, 2, 1),
            (5, 4, 3),
            (5, 2, 3),
            (3, 3, 3),
            (3, 3, 0),
            (1, 1, 2),
        ];
        let actual: Vec<Option<f64>> = cases
            .iter()
            .map(|&(n, c, k)| r(pass_hat_k(n, c, k)))
            .collect();
        let expected = vec![
            Some(0.1),
            Some(0.4),
            Some(0.4),
            Some(0.0),
            Some(1.0),
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }
}
