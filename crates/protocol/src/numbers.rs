//! Numbers as people read them in summaries and reports.

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let reversed: Vec<char> = n.to_string().chars().rev().collect();
    let groups: Vec<String> = reversed
        .chunks(3)
        .rev()
        .map(|group| group.iter().rev().collect())
        .collect();
    groups.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        let actual: Vec<String> = [0, 999, 1_000, 215_277, 7_769_374]
            .into_iter()
            .map(thousands)
            .collect();
        assert_eq!(actual, ["0", "999", "1,000", "215,277", "7,769,374"]);
    }
}
