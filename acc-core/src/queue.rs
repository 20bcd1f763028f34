//! Asynchronous activity queues (OpenACC 3.3 section 2.16).
//!
//! An async argument is a queue number (>= 0) or one of the two special values below. Operations
//! on one queue complete in the order they were enqueued; different queues are independent.

/// `acc_async_noval`: the queue named by `acc-default-async-var` (an `async` clause without an
/// argument).
pub const ASYNC_NOVAL: i32 = -1;
/// `acc_async_sync`: run synchronously (what no `async` clause means).
pub const ASYNC_SYNC: i32 = -2;

/// Where an operation runs, after resolving `ASYNC_NOVAL` against the default async queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Queue {
    /// Synchronously: the host waits for the operation.
    Sync,
    /// On activity queue `n`.
    Async(u32),
}

// `Queue::resolve` and `Queue::for_wait` read the default async ICV: they are in `icv.rs`.

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_special_values() {
        assert_eq!(Queue::resolve(None).unwrap(), Queue::Sync);
        assert_eq!(Queue::resolve(Some(3)).unwrap(), Queue::Async(3));
        assert_eq!(
            Queue::resolve(Some(ASYNC_SYNC as i64)).unwrap(),
            Queue::Sync
        );
        assert_eq!(
            Queue::resolve(Some(ASYNC_NOVAL as i64)).unwrap(),
            Queue::Async(0)
        );
        assert!(Queue::resolve(Some(-7)).is_err());
        assert!(Queue::for_wait(ASYNC_SYNC as i64).is_err());
    }
}
