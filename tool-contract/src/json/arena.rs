//! The thread's arena for trees: a tree's strings and containers cost one bump each instead of
//! an allocation and a free, and the whole tree is freed at once when its use ends.

use std::cell::{RefCell, RefMut};

use bumpalo::Bump;

/// Runs `f` with this thread's tree arena, reset afterwards: a tree's strings and containers
/// cost one bump each instead of an allocation and a free. A tree lives only while it is
/// checked (and, for an output, written), with no `.await` in between: the proposal's until
/// its arguments are decoded, the output's until its text is written. A nested use on the
/// same thread (a `Serialize` or `Deserialize` impl that runs a tool) gets an arena of its
/// own.
pub(crate) fn with_arena<R>(f: impl FnOnce(&Bump) -> R) -> R {
    // An arena grown past this by one large tree is dropped rather than kept for the thread.
    const KEEP: usize = 1 << 20;
    /// Empties the arena when the use ends, also when a host impl panicked: an idle thread
    /// must not keep a large tree.
    struct Reset<'a>(RefMut<'a, Bump>);
    impl Drop for Reset<'_> {
        fn drop(&mut self) {
            if self.0.allocated_bytes() > KEEP {
                *self.0 = Bump::new();
            } else {
                self.0.reset();
            }
        }
    }
    thread_local!(static BUMP: RefCell<Bump> = RefCell::new(Bump::new()));
    BUMP.with(|cell| match cell.try_borrow_mut() {
        Ok(bump) => {
            let guard = Reset(bump);
            f(&guard.0)
        }
        Err(_) => f(&Bump::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each use of the thread's arena starts empty, and a nested use gets its own.
    #[test]
    fn the_arena_is_reset_and_nests() {
        let nested_ok = with_arena(|bump| {
            let _ = bump.alloc_str("first use");
            with_arena(|nested| {
                assert!(!std::ptr::eq(bump, nested));
                super::super::to_tree(&"nested", nested).is_some()
            })
        });
        assert!(nested_ok);
        let fresh = with_arena(|bump| {
            let room = bump.chunk_capacity();
            let _ = bump.alloc_str(&"x".repeat(100));
            room
        });
        assert!(fresh > 100);
        assert_eq!(with_arena(|bump| bump.chunk_capacity()), fresh);

        // A panic inside (a host `Serialize` impl) still empties the arena.
        let panicked = std::panic::catch_unwind(|| {
            with_arena(|bump| {
                let _ = bump.alloc_str(&"y".repeat(100));
                panic!("a Serialize impl failed");
            })
        });
        assert!(panicked.is_err());
        assert_eq!(with_arena(|bump| bump.chunk_capacity()), fresh);
    }
}
