//! The session record: what the user (or host) said, and every observation the model was given,
//! indexed by value.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::leaves::leaves_of;
use super::trace::{atoms, normalize, MIN_TRACED_CHARS};

/// How much a [`Session`] keeps, and so how much memory it can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLimits {
    /// Most observations kept (default 1,000).
    pub max_observations: usize,
    /// Most bytes of observed string values kept, over all observations (default 8 MiB). An
    /// observation not indexed yet counts its JSON text instead (see [`Session`]).
    pub max_observed_bytes: usize,
    /// Most bytes of trusted intent kept (default 1 MiB).
    pub max_intent_bytes: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max_observations: 1_000,
            max_observed_bytes: 8 << 20,
            max_intent_bytes: 1 << 20,
        }
    }
}

impl SessionLimits {
    /// Sets the observation cap.
    #[must_use]
    pub fn max_observations(mut self, n: usize) -> Self {
        self.max_observations = n;
        self
    }
    /// Sets the cap on observed bytes.
    #[must_use]
    pub fn max_observed_bytes(mut self, n: usize) -> Self {
        self.max_observed_bytes = n;
        self
    }
    /// Sets the cap on trusted intent bytes.
    #[must_use]
    pub fn max_intent_bytes(mut self, n: usize) -> Self {
        self.max_intent_bytes = n;
        self
    }
}

/// Where an observation came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservationSource {
    /// The tool (or, for an external observation, the source the host names).
    pub tool: String,
    /// The tool's version, when it ran in this registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The call id the model saw.
    pub call_id: String,
}

/// One observation as the session keeps it: its source, labels and string leaves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Observation {
    /// The JSON text the model was given, until the observation is indexed; its leaves are
    /// read from it then (never persisted: a snapshot indexes first).
    #[serde(skip)]
    pending: Option<Box<str>>,
    source: ObservationSource,
    /// JSON pointers (patterns allowed: `*` for any segment) of confidential values; `[""]` for
    /// the whole output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    confidential: Vec<String>,
    /// `(pointer, value)` of every string leaf, normalized.
    leaves: Vec<(String, String)>,
}

impl Observation {
    fn bytes(&self) -> usize {
        let held = match &self.pending {
            Some(text) => text.len(),
            None => self.leaves.iter().map(|(p, v)| p.len() + v.len()).sum(),
        };
        held + 64
    }

    fn is_confidential(&self, pointer: &str) -> bool {
        self.confidential
            .iter()
            .any(|pattern| pattern.is_empty() || super::pointer_matches(pattern, pointer))
    }
}

/// One place a value was seen: an observation (by sequence number) and its leaf.
#[derive(Clone, Copy, Debug)]
struct Seen {
    seq: u64,
    leaf: u32,
}

/// What a traced value resolved to in the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sighting {
    pub(crate) source: ObservationSource,
    pub(crate) pointer: String,
    pub(crate) confidential: bool,
}

#[derive(Debug)]
struct State {
    limits: SessionLimits,
    strict: bool,
    /// The trusted intent, each normalized and lower-cased for containment.
    intent: VecDeque<String>,
    intent_bytes: usize,
    observations: VecDeque<(u64, Observation)>,
    observed_bytes: usize,
    next_seq: u64,
    /// Whether an observation was ever dropped for space.
    evicted: bool,
    /// Observations from this sequence number on are not in the index yet.
    indexed_to: u64,
    /// Normalized values and atoms → where they were seen. Keys are keyed hashes: a collision can
    /// only make a value look observed (a refusal, never an acceptance).
    index: HashMap<u64, Vec<Seen>>,
    keys: RandomState,
    /// Index entries that point at dropped observations.
    stale: usize,
}

/// The record of one conversation (or one MCP session) that flow control reads: the **trusted
/// intent** (what the user or the host said, added by the host) and every **observation** the
/// model was given (the tool, the call id, each string value with its JSON pointer, and its
/// labels). Cheap to clone: clones share one record.
///
/// The registry reads it when it prepares a call (see
/// [`ToolContextBuilder::session`](crate::ToolContextBuilder::session)) and records each tool result into it; observations
/// from tools that do not run in the registry (another MCP server's tool, a retrieval step, a
/// web fetch) are recorded with [`record_external`](Self::record_external), so the same policy
/// guards what the model copies from them.
///
/// Recording is cheap and indexing is deferred: a result is kept as the JSON text the model was
/// given, and its string values are read and indexed the first time a check needs the index
/// (a call whose fields refuse untrusted values, [`observed`](Self::observed) or
/// [`to_json`](Self::to_json)). A session that only serves reads never pays for indexing.
///
/// Memory is bounded ([`SessionLimits`]). Past a bound the **oldest observations are dropped**;
/// a value from a dropped observation can no longer be traced, so from then on the session
/// behaves as [strict](Self::strict): a write whose values are not all traced to the intent or
/// to an allowlisted source needs approval. Past the intent bound the oldest intent is dropped
/// (fewer values count as trusted, never more).
///
/// ```
/// use tool_contract::flow::Session;
///
/// let session = Session::new();
/// session.add_user_message("Reply to alice@example.com about the refund.");
/// let json = session.to_json();
/// let restored = Session::from_json(&json, Default::default()).unwrap();
/// assert_eq!(restored.to_json(), json);
/// ```
#[derive(Clone)]
pub struct Session {
    state: Arc<Mutex<State>>,
}

impl Default for Session {
    fn default() -> Self {
        Session::with_limits(SessionLimits::default())
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("Session")
            .field("intent", &s.intent.len())
            .field("observations", &s.observations.len())
            .field("strict", &s.strict)
            .field("evicted", &s.evicted)
            .finish()
    }
}

impl Session {
    /// An empty session with the default limits.
    pub fn new() -> Self {
        Session::default()
    }

    /// An empty session with `limits`.
    pub fn with_limits(limits: SessionLimits) -> Self {
        Session {
            state: Arc::new(Mutex::new(State {
                limits,
                strict: false,
                intent: VecDeque::new(),
                intent_bytes: 0,
                observations: VecDeque::new(),
                observed_bytes: 0,
                next_seq: 0,
                evicted: false,
                indexed_to: 0,
                index: HashMap::new(),
                keys: RandomState::new(),
                stale: 0,
            })),
        }
    }

    /// Strict mode: once any observation entered the session, every write (and every external
    /// read) needs approval unless each of its string values traces to the trusted intent or
    /// to a source its field allowlists.
    #[must_use]
    pub fn strict(self, on: bool) -> Self {
        self.lock().strict = on;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves the record consistent (every update is a
        // single push or pop), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a message the user wrote (or a value the user picked in a UI): every value in it
    /// counts as the user's own. Only the host adds intent, never from tool output.
    pub fn add_user_message(&self, text: &str) {
        self.lock().add_intent(text);
    }

    /// Adds one value the host or the user chose (a recipient picked from an address book, an
    /// id from the URL the user opened).
    pub fn add_trusted_value(&self, value: &str) {
        self.lock().add_intent(value);
    }

    /// Records an observation of a tool that does not run in this registry: `data` is what the
    /// model was given; `confidential` marks all of it confidential.
    pub fn record_external(&self, source: &str, call_id: &str, data: &Value, confidential: bool) {
        let source = ObservationSource {
            tool: source.to_owned(),
            version: None,
            call_id: call_id.to_owned(),
        };
        let confidential = if confidential {
            vec![String::new()]
        } else {
            Vec::new()
        };
        self.record(source, confidential, &data.to_string());
    }

    /// Records what the model was given from a tool call: `json` is its text.
    pub(crate) fn record(&self, source: ObservationSource, confidential: Vec<String>, json: &str) {
        let observation = Observation {
            pending: Some(json.into()),
            source,
            confidential,
            leaves: Vec::new(),
        };
        self.lock().push(observation);
    }

    /// Whether any observation entered the session (or was dropped from it).
    pub fn has_observations(&self) -> bool {
        let s = self.lock();
        !s.observations.is_empty() || s.evicted
    }

    /// Whether the session is strict, by choice or because an observation had to be dropped.
    pub fn is_strict(&self) -> bool {
        let s = self.lock();
        s.strict || s.evicted
    }

    /// How many observations are kept, and how many bytes of values they hold.
    pub fn observed(&self) -> (usize, usize) {
        let mut s = self.lock();
        s.catch_up();
        (s.observations.len(), s.observed_bytes)
    }

    /// Whether `value` (normalized) is part of the trusted intent, as whole words.
    pub(crate) fn in_intent(&self, value: &str) -> bool {
        self.lock().in_intent(&normalize(value))
    }

    /// Where `value` was seen in observations: by its whole value (when long enough) and by
    /// every atom in it that the user did not say. An atom the user said (an address, an
    /// IBAN) is theirs wherever else it also appears, so it does not make the text around it
    /// an observation's.
    pub(crate) fn sightings(&self, value: &str) -> Vec<Sighting> {
        let mut s = self.lock();
        s.catch_up();
        if s.index.is_empty() {
            return Vec::new();
        }
        let normalized = normalize(value);
        let mut out = Vec::new();
        if normalized.chars().count() >= MIN_TRACED_CHARS {
            s.look_up(&whole_key(&s.keys, &normalized), &mut out);
        }
        atoms(&normalized, |atom| {
            if !s.in_intent(atom) {
                s.look_up(&s.key(atom), &mut out);
            }
        });
        out
    }

    /// Where a value too short to be traced was seen as a whole value. Only an allowlist
    /// consults this: a short value is never *refused* for being observed (`"p1"` could come
    /// from anywhere), but one an allowlisted field holds (an event id `"e7"`) is accepted
    /// as coming from there.
    pub(crate) fn short_sightings(&self, value: &str) -> Vec<Sighting> {
        let normalized = normalize(value);
        if normalized.is_empty() || normalized.chars().count() >= MIN_TRACED_CHARS {
            return Vec::new();
        }
        let mut s = self.lock();
        s.catch_up();
        let mut out = Vec::new();
        s.look_up(&whole_key(&s.keys, &normalized), &mut out);
        out
    }

    /// The session as JSON, to persist between turns and restore with
    /// [`from_json`](Self::from_json) in another process.
    pub fn to_json(&self) -> String {
        let mut s = self.lock();
        s.catch_up();
        let snapshot = Snapshot {
            version: SNAPSHOT_VERSION,
            strict: s.strict,
            evicted: s.evicted,
            intent: s.intent.iter().cloned().collect(),
            observations: s.observations.iter().map(|(_, o)| o.clone()).collect(),
        };
        serde_json::to_string(&snapshot).unwrap_or_default()
    }

    /// A session restored from [`to_json`](Self::to_json) text under `limits`. A text that is
    /// malformed, of another version, or larger than the limits allow is an error (nothing is
    /// restored); a session you already hold is never touched.
    pub fn from_json(text: &str, limits: SessionLimits) -> Result<Session, SessionError> {
        let cap = limits
            .max_observed_bytes
            .saturating_mul(2)
            .saturating_add(limits.max_intent_bytes.saturating_mul(2))
            .saturating_add(limits.max_observations.saturating_mul(256))
            .saturating_add(4096);
        if text.len() > cap {
            return Err(SessionError::TooLarge {
                bytes: text.len(),
                max_bytes: cap,
            });
        }
        let snapshot: Snapshot =
            serde_json::from_str(text).map_err(|e| SessionError::Malformed(e.to_string()))?;
        if snapshot.version != SNAPSHOT_VERSION {
            return Err(SessionError::UnsupportedVersion(snapshot.version));
        }
        if snapshot.observations.len() > limits.max_observations {
            return Err(SessionError::TooLarge {
                bytes: text.len(),
                max_bytes: cap,
            });
        }
        for o in &snapshot.observations {
            for (pointer, _) in &o.leaves {
                if !pointer.is_empty() && !pointer.starts_with('/') {
                    return Err(SessionError::Malformed(format!(
                        "`{pointer}` is not a JSON pointer"
                    )));
                }
            }
        }
        let session = Session::with_limits(limits);
        {
            let mut s = session.lock();
            s.strict = snapshot.strict;
            s.evicted = snapshot.evicted;
            for text in &snapshot.intent {
                s.add_intent(text);
            }
            for o in snapshot.observations {
                s.push(o);
            }
        }
        Ok(session)
    }
}

impl State {
    fn key(&self, text: &str) -> u64 {
        self.keys.hash_one(text)
    }

    /// Whether `needle` (normalized) occurs in the intent as whole words: not inside a longer
    /// word, so `ice@example.com` is not the user's because they wrote `alice@example.com`.
    fn in_intent(&self, needle: &str) -> bool {
        let needle = needle.to_lowercase();
        !needle.is_empty() && self.intent.iter().any(|text| contains_words(text, &needle))
    }

    fn add_intent(&mut self, text: &str) {
        let text = normalize(text).to_lowercase();
        if text.is_empty() {
            return;
        }
        self.intent_bytes += text.len();
        self.intent.push_back(text);
        while self.intent_bytes > self.limits.max_intent_bytes {
            match self.intent.pop_front() {
                Some(dropped) => self.intent_bytes -= dropped.len(),
                None => break,
            }
        }
    }

    /// Appends an observation (indexed later, by [`catch_up`](Self::catch_up)) and drops the
    /// oldest past the limits.
    fn push(&mut self, observation: Observation) {
        let seq = self.next_seq;
        self.next_seq += 1;
        // `bytes()` changes only in `catch_up`, which moves the total with it, so what a
        // drop takes off is what was added.
        self.observed_bytes += observation.bytes();
        self.observations.push_back((seq, observation));
        self.evict();
    }

    /// Drops the oldest observations while the session is over its limits.
    fn evict(&mut self) {
        while self.observations.len() > self.limits.max_observations
            || self.observed_bytes > self.limits.max_observed_bytes
        {
            let Some((seq, dropped)) = self.observations.pop_front() else {
                break;
            };
            self.observed_bytes -= dropped.bytes();
            if seq < self.indexed_to {
                self.stale += dropped.leaves.len();
            }
            self.evicted = true;
        }
        if self.stale > 1024 && self.stale > self.live_leaves() {
            self.sweep();
        }
    }

    /// Indexes every observation recorded since the last call: reads the string leaves of
    /// those still held as text, and adds each whole value and each atom to the index.
    fn catch_up(&mut self) {
        if self.indexed_to == self.next_seq {
            return;
        }
        let State {
            observations,
            index,
            keys,
            observed_bytes,
            indexed_to,
            ..
        } = self;
        // Sequence numbers are consecutive from the front, so the unindexed ones are a tail.
        let first = observations.front().map_or(*indexed_to, |(seq, _)| *seq);
        let skip = usize::try_from(indexed_to.saturating_sub(first)).unwrap_or(usize::MAX);
        let mut hashes = Vec::new();
        for (seq, observation) in observations.iter_mut().skip(skip) {
            if let Some(text) = observation.pending.as_deref() {
                let leaves = leaves_of(text);
                *observed_bytes -= observation.bytes();
                observation.pending = None;
                observation.leaves = leaves;
                *observed_bytes += observation.bytes();
            }
            for (i, (_, value)) in observation.leaves.iter().enumerate() {
                let seen = Seen {
                    seq: *seq,
                    leaf: u32::try_from(i).unwrap_or(u32::MAX),
                };
                hashes.clear();
                hashes.push(whole_key(keys, value));
                atoms(value, |atom| hashes.push(keys.hash_one(atom)));
                hashes.sort_unstable();
                hashes.dedup();
                for &key in &hashes {
                    index.entry(key).or_default().push(seen);
                }
            }
        }
        *indexed_to = self.next_seq;
        // The leaves may take more room than the text did.
        self.evict();
    }

    fn live_leaves(&self) -> usize {
        self.observations.iter().map(|(_, o)| o.leaves.len()).sum()
    }

    /// Drops index entries of dropped observations.
    fn sweep(&mut self) {
        let first = self
            .observations
            .front()
            .map_or(self.next_seq, |(seq, _)| *seq);
        self.index.retain(|_, seen| {
            seen.retain(|s| s.seq >= first);
            !seen.is_empty()
        });
        self.stale = 0;
    }

    fn look_up(&self, key: &u64, out: &mut Vec<Sighting>) {
        let Some(seen) = self.index.get(key) else {
            return;
        };
        let first = self.observations.front().map_or(u64::MAX, |(seq, _)| *seq);
        for s in seen {
            if s.seq < first {
                continue;
            }
            let Some((_, o)) = usize::try_from(s.seq - first)
                .ok()
                .and_then(|i| self.observations.get(i))
            else {
                continue;
            };
            let Some((pointer, _)) = o.leaves.get(s.leaf as usize) else {
                continue;
            };
            let sighting = Sighting {
                source: o.source.clone(),
                pointer: pointer.clone(),
                confidential: o.is_confidential(pointer),
            };
            if !out.contains(&sighting) {
                out.push(sighting);
            }
        }
    }
}

/// Tags the index keys of short whole values (see [`whole_key`]).
const SHORT: u8 = 0;

/// The index key of a whole value. A value too short to be traced gets a key apart from every
/// other (tagged [`SHORT`]), so only [`Session::short_sightings`], which an allowlist consults,
/// finds it.
fn whole_key(keys: &RandomState, value: &str) -> u64 {
    if value.chars().count() >= MIN_TRACED_CHARS {
        keys.hash_one(value)
    } else {
        keys.hash_one((SHORT, value))
    }
}

/// Whether `needle` occurs in `text` with no letter or digit right before or after it (where
/// its own first or last character is one).
fn contains_words(text: &str, needle: &str) -> bool {
    let word = |c: char| c.is_alphanumeric();
    let starts_word = needle.starts_with(word);
    let ends_word = needle.ends_with(word);
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        (!starts_word || !before.is_some_and(word)) && (!ends_word || !after.is_some_and(word))
    })
}

const SNAPSHOT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Snapshot {
    version: u32,
    strict: bool,
    evicted: bool,
    intent: Vec<String>,
    observations: Vec<Observation>,
}

/// A session could not be restored.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionError {
    /// The text is larger than the limits allow.
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The largest accepted.
        max_bytes: usize,
    },
    /// The text is not a session record.
    Malformed(String),
    /// The record is of a version this crate does not read.
    UnsupportedVersion(u32),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::TooLarge { bytes, max_bytes } => write!(
                f,
                "the session record has {bytes} bytes, more than the {max_bytes} its limits allow"
            ),
            SessionError::Malformed(msg) => write!(f, "the session record is malformed: {msg}"),
            SessionError::UnsupportedVersion(v) => {
                write!(f, "the session record has version {v}; this crate reads version {SNAPSHOT_VERSION}")
            }
        }
    }
}

impl std::error::Error for SessionError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recording_defers_indexing_until_a_check_needs_it() {
        let session = Session::new();
        session.record_external(
            "web",
            "call_1",
            &serde_json::json!({"items": [{"to": "Mallory@Evil.test"}]}),
            false,
        );
        assert!(
            session.lock().index.is_empty(),
            "recording alone indexes nothing"
        );
        let seen = session.sightings("mallory@evil.test");
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].pointer, "/items/0/to");
        assert_eq!(seen[0].source.call_id, "call_1");
    }

    #[test]
    fn a_pending_observation_counts_its_text_and_is_dropped_past_the_limit() {
        let session = Session::with_limits(SessionLimits::default().max_observations(2));
        for i in 0..3 {
            session.record_external(
                "web",
                &format!("call_{i}"),
                &serde_json::json!({"url": format!("https://site{i}.test/page")}),
                false,
            );
        }
        let (count, bytes) = session.observed();
        assert_eq!(count, 2);
        assert!(
            session.is_strict(),
            "a dropped observation makes the session strict"
        );
        assert!(
            session.sightings("site0.test/page").is_empty(),
            "the oldest was dropped"
        );
        assert_eq!(session.sightings("https://site2.test/page").len(), 1);
        // Indexed, each observation counts its pointer and value plus a fixed overhead.
        assert_eq!(bytes, 2 * ("/url".len() + "site1.test/page".len() + 64));
    }

    /// Indexing resumes where it stopped, also after older observations were dropped, and
    /// the byte total follows each observation from text to leaves and out again.
    #[test]
    fn indexing_resumes_after_drops_and_the_byte_total_stays_exact() {
        let session = Session::with_limits(SessionLimits::default().max_observations(3));
        let record = |i: usize| {
            session.record_external(
                "web",
                &format!("call_{i}"),
                &serde_json::json!({"url": format!("https://site{i}.test/page")}),
                false,
            );
        };
        record(0);
        record(1);
        assert_eq!(session.sightings("site1.test/page").len(), 1);
        for i in 2..5 {
            record(i);
        }
        // 0 and 1 were dropped (1 indexed, 0 too); 2, 3 and 4 wait as text.
        assert!(session.sightings("site1.test/page").is_empty());
        for i in 2..5 {
            let seen = session.sightings(&format!("site{i}.test/page"));
            assert_eq!(seen.len(), 1, "site{i}");
            assert_eq!(seen[0].source.call_id, format!("call_{i}"));
        }
        let (count, bytes) = session.observed();
        assert_eq!(count, 3);
        assert_eq!(bytes, 3 * ("/url".len() + "site2.test/page".len() + 64));
        for i in 5..8 {
            record(i);
        }
        let (_, bytes) = session.observed();
        assert_eq!(bytes, 3 * ("/url".len() + "site5.test/page".len() + 64));
    }
}
