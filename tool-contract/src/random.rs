//! Randomness for keys and ids: the operating system's generator, or an error. There is no
//! weaker fallback: a key or id drawn from a predictable generator is worse than refusing to
//! start.

use std::fmt;

/// The operating system's random generator failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RandomUnavailable {
    reason: String,
}

impl fmt::Display for RandomUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the operating system's random generator is unavailable ({}); no key or id is made without it",
            self.reason
        )
    }
}

impl std::error::Error for RandomUnavailable {}

impl RandomUnavailable {
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        RandomUnavailable {
            reason: reason.into(),
        }
    }
}

/// `N` bytes from the operating system's generator.
pub(crate) fn bytes<const N: usize>() -> Result<[u8; N], RandomUnavailable> {
    let mut buf = [0u8; N];
    #[cfg(test)]
    if tests::FAIL.with(std::cell::Cell::get) {
        return Err(RandomUnavailable {
            reason: "failure injected by a test".into(),
        });
    }
    getrandom::fill(&mut buf).map_err(|e| RandomUnavailable {
        reason: e.to_string(),
    })?;
    Ok(buf)
}

/// A random 128-bit id in lower-case hex.
pub(crate) fn id() -> Result<String, RandomUnavailable> {
    Ok(crate::canonical::hex(&bytes::<16>()?))
}

/// Ids unique across processes and cheap to make: a random 128-bit prefix drawn once (when the
/// registry is built, which fails if it cannot be drawn), then a counter. Used where an id
/// must never repeat but need not be unpredictable (claim tokens, grant ids: a grant is
/// protected by its MAC, not by its id).
pub(crate) struct UniqueIds {
    prefix: String,
    next: std::sync::atomic::AtomicU64,
}

impl UniqueIds {
    pub(crate) fn new() -> Result<Self, RandomUnavailable> {
        Ok(UniqueIds {
            prefix: id()?,
            next: std::sync::atomic::AtomicU64::new(0),
        })
    }

    pub(crate) fn next(&self) -> String {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{}-{n:x}", self.prefix)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Makes this thread's draws fail, to test that callers fail closed.
        pub(crate) static FAIL: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` with this thread's draws failing.
    pub(crate) fn failing<R>(f: impl FnOnce() -> R) -> R {
        FAIL.with(|c| c.set(true));
        let out = f();
        FAIL.with(|c| c.set(false));
        out
    }

    #[test]
    fn draws_differ_and_failures_are_errors() {
        assert_ne!(super::id().unwrap(), super::id().unwrap());
        assert_eq!(super::id().unwrap().len(), 32);
        let err = failing(super::id).unwrap_err();
        assert!(
            err.to_string().contains("random generator is unavailable"),
            "{err}"
        );
    }
}
