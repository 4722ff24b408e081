//! Peak resident memory of this process, read from `/proc/self/status` (`VmHWM`).

/// The peak resident set size in KiB, or `None` where `/proc` is unavailable.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::parse_vm_hwm;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_vm_hwm_in_kib() {
        let status =
            "Name:\tplumb-llm\nVmPeak:\t  900000 kB\nVmHWM:\t  612345 kB\nVmRSS:\t  500000 kB\n";

        let actual = (parse_vm_hwm(status), parse_vm_hwm("Name:\tx\n"));

        assert_eq!(actual, (Some(612_345), None));
    }
}
