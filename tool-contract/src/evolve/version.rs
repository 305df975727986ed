//! Version bumps: which one two versions make, and the smallest version that makes a given one.
//!
//! Versions follow semver as Cargo reads it: below 1.0.0 the left-most non-zero part is the
//! major one (`0.3.1 -> 0.4.0` is a major bump, `0.3.1 -> 0.3.2` a minor one, and every bump
//! of `0.0.z` is major). A pre-release promises nothing, so any later version bumps it by a
//! major step.

use std::fmt;

use semver::{BuildMetadata, Prerelease, Version};
use serde::{Deserialize, Serialize};

/// A version bump. Ordered: `Patch < Minor < Major`.
///
/// ```
/// use tool_contract::evolve::Bump;
/// assert_eq!(Bump::between("2.1.0", "2.1.1"), Some(Bump::Patch));
/// assert_eq!(Bump::between("2.1.0", "2.2.0"), Some(Bump::Minor));
/// assert_eq!(Bump::between("2.1.0", "3.0.0"), Some(Bump::Major));
/// assert_eq!(Bump::between("0.3.1", "0.4.0"), Some(Bump::Major));
/// assert_eq!(Bump::between("0.3.1", "0.3.2"), Some(Bump::Minor));
/// assert_eq!(Bump::between("2.0.0-rc.1", "2.0.0"), Some(Bump::Major));
/// assert_eq!(Bump::between("2.1.0", "2.1.0"), None);
/// assert_eq!(Bump::between("2.1.0", "2.0.9"), None);
/// assert_eq!(Bump::between("two", "three"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bump {
    /// The patch part went up.
    Patch,
    /// The minor part went up (the patch part below 1.0.0).
    Minor,
    /// The major part went up (the minor part below 1.0.0, any part below 0.1.0).
    Major,
}

impl Bump {
    /// The bump from `old` to `new`; `None` when `new` is not a higher semantic version.
    pub fn between(old: &str, new: &str) -> Option<Bump> {
        let (old, new) = (Version::parse(old).ok()?, Version::parse(new).ok()?);
        // Build metadata does not order versions (semver's precedence).
        if new.cmp_precedence(&old).is_le() {
            return None;
        }
        if !old.pre.is_empty() {
            return Some(Bump::Major);
        }
        Some(if new.major != old.major {
            Bump::Major
        } else if old.major == 0 {
            if new.minor != old.minor || old.minor == 0 {
                Bump::Major
            } else {
                Bump::Minor
            }
        } else if new.minor != old.minor {
            Bump::Minor
        } else {
            Bump::Patch
        })
    }

    /// `patch`, `minor` or `major`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The smallest version after `old` whose bump is at least `needed`, or `None` when `old` is
/// not a semantic version.
///
/// ```
/// use tool_contract::evolve::{smallest_passing, Bump};
/// assert_eq!(smallest_passing("2.1.3", Bump::Major).as_deref(), Some("3.0.0"));
/// assert_eq!(smallest_passing("2.1.3", Bump::Minor).as_deref(), Some("2.2.0"));
/// assert_eq!(smallest_passing("2.1.3", Bump::Patch).as_deref(), Some("2.1.4"));
/// assert_eq!(smallest_passing("0.3.1", Bump::Major).as_deref(), Some("0.4.0"));
/// assert_eq!(smallest_passing("0.3.1", Bump::Minor).as_deref(), Some("0.3.2"));
/// assert_eq!(smallest_passing("0.0.7", Bump::Patch).as_deref(), Some("0.0.8"));
/// assert_eq!(smallest_passing("2.0.0-rc.1", Bump::Major).as_deref(), Some("2.0.0"));
/// ```
pub fn smallest_passing(old: &str, needed: Bump) -> Option<String> {
    let old = Version::parse(old).ok()?;
    let (major, minor, patch) = (old.major, old.minor, old.patch);
    let next = if !old.pre.is_empty() {
        (major, minor, patch)
    } else if major == 0 && minor == 0 {
        (0, 0, patch.checked_add(1)?)
    } else if major == 0 {
        match needed {
            Bump::Major => (0, minor.checked_add(1)?, 0),
            Bump::Minor | Bump::Patch => (0, minor, patch.checked_add(1)?),
        }
    } else {
        match needed {
            Bump::Major => (major.checked_add(1)?, 0, 0),
            Bump::Minor => (major, minor.checked_add(1)?, 0),
            Bump::Patch => (major, minor, patch.checked_add(1)?),
        }
    };
    let version = Version {
        major: next.0,
        minor: next.1,
        patch: next.2,
        pre: Prerelease::EMPTY,
        build: BuildMetadata::EMPTY,
    };
    Some(version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest passing version always makes at least the bump asked for, and one step
    /// less than it (where there is one) does not.
    #[test]
    fn the_smallest_passing_version_passes() {
        let olds = [
            "0.0.3",
            "0.2.5",
            "1.0.0",
            "2.7.9",
            "3.0.0-rc.2",
            "0.4.0-alpha",
        ];
        for old in olds {
            for needed in [Bump::Patch, Bump::Minor, Bump::Major] {
                let v = smallest_passing(old, needed).unwrap();
                let made = Bump::between(old, &v).unwrap();
                assert!(made >= needed, "{old} -> {v}: {made:?} < {needed:?}");
            }
        }
        assert_eq!(Bump::between("2.1.0", "2.1.1+build.5"), Some(Bump::Patch));
        assert_eq!(Bump::between("2.1.0", "2.1.0+build.5"), None);
        assert_eq!(smallest_passing("not-semver", Bump::Patch), None);
    }
}
