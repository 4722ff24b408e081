//! A slice mapped on scoped threads, each pulling the next index from a shared counter, so a few
//! large items (a big file among small ones) do not leave the other threads idle.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item, in order, on up to `threads` threads (one when there is a single item or a
/// single thread). An item whose thread panicked is `None`: the panic is not the caller's to rethrow.
pub(crate) fn map_slice<T, R, F>(items: &[T], threads: usize, f: F) -> Vec<Option<R>>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(|item| Some(f(item))).collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(index) else {
                            return mine;
                        };
                        mine.push((index, f(item)));
                    }
                })
            })
            .collect();
        for worker in workers {
            for (index, result) in worker.join().unwrap_or_default() {
                if let Some(slot) = results.get_mut(index) {
                    *slot = Some(result);
                }
            }
        }
    });
    results
}

/// The threads a pool should use: the cores there are, at most `max`.
pub(crate) fn threads(max: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_mapped_in_order_on_one_thread_or_many() {
        let items: Vec<u64> = (0..100).collect();
        for threads in [1, 2, 8] {
            let squares = map_slice(&items, threads, |n| n * n);
            let want: Vec<Option<u64>> = items.iter().map(|n| Some(n * n)).collect();
            assert_eq!(squares, want, "{threads} threads");
        }
        assert!(map_slice(&[] as &[u64], 4, |n| *n).is_empty());
    }
}
