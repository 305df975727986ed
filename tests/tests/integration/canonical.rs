//! The canonical form through the whole pipeline: the approval digest, the idempotency
//! `args_hash` and a derived key agree with each other and with the number policy. Two
//! proposals get the same three **if and only if** their arguments are equal once parsed
//! (`8`, `8.0` and `8e0` are one integer; any two distinct integers, over the whole `i64` and
//! `u64` ranges, differ), however the model spelled them.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_contract::approval::ApprovalKey;
use tool_contract::store::{Claim, ClaimRequest, IdempotencyStore, MemoryStore, StoreError};
use tool_contract::{tool, Prepared, Proposal, Registry, ToolArgs, ToolContext, ToolError};

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct RecordReadingArgs {
    /// The sensor: a 64-bit id.
    #[tool(unbounded = "sensor ids use the whole u64 range")]
    pub sensor: u64,
    /// A signed offset, in nanoseconds.
    #[tool(unbounded = "offsets use the whole i64 range")]
    pub offset_ns: i64,
    /// The samples, oldest first.
    #[schemars(length(max = 4))]
    pub samples: Vec<Sample>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// When, in nanoseconds since the Unix epoch.
    pub at: u64,
    /// The level measured.
    pub level: f64,
}

#[derive(Serialize, JsonSchema)]
pub struct Recorded {
    /// The sensor recorded.
    pub sensor: u64,
    /// Its offset.
    pub offset_ns: i64,
    /// Each sample's time and level.
    pub samples: Vec<(u64, f64)>,
}

/// Records sensor readings for good. It cannot be undone; every call needs approval.
#[tool(
    version = "1.0.0",
    effect = "irreversible_write",
    timeout_ms = 100,
    approval,
    idempotency(from = [sensor, offset_ns, samples])
)]
pub async fn record_reading(args: RecordReadingArgs) -> Result<Recorded, ToolError> {
    Ok(Recorded {
        sensor: args.sensor,
        offset_ns: args.offset_ns,
        samples: args.samples.iter().map(|s| (s.at, s.level)).collect(),
    })
}

/// The arguments' digest each claim files.
#[derive(Clone, Default)]
struct SeenHashes {
    store: Arc<MemoryStore>,
    last: Arc<Mutex<Option<String>>>,
}

#[async_trait]
impl IdempotencyStore for SeenHashes {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Claim, StoreError> {
        *self.last.lock().unwrap() = Some(req.args_hash.to_owned());
        self.store.claim(req).await
    }
    async fn complete(&self, k: &str, t: &str, e: &str, x: u64) -> Result<bool, StoreError> {
        self.store.complete(k, t, e, x).await
    }
    async fn release(&self, key: &str, token: &str) -> Result<(), StoreError> {
        self.store.release(key, token).await
    }
    async fn purge_expired(&self, now_ms: u64) -> Result<u64, StoreError> {
        self.store.purge_expired(now_ms).await
    }
}

/// What a call's arguments mean, as the handler receives them.
#[derive(Clone, Debug, PartialEq)]
struct Reading {
    sensor: u64,
    offset_ns: i64,
    samples: Vec<(u64, f64)>,
}

/// How the model spells one reading: integers plain or (where a double holds them exactly)
/// with a fraction or an exponent, keys in any order, escaped key names, any whitespace.
#[derive(Clone, Debug)]
struct Spelling {
    number_forms: Vec<u8>,
    reversed: bool,
    escaped_keys: bool,
    spaced: bool,
}

fn integer(text: String, magnitude: u128, form: u8) -> String {
    // Only where a double holds every integer: beyond that the number policy refuses a
    // fraction or exponent rather than round it, which is another test's business.
    if magnitude >= 1 << 53 {
        return text;
    }
    match form % 3 {
        0 => text,
        1 => format!("{text}.0"),
        _ => format!("{text}e0"),
    }
}

fn render(r: &Reading, s: &Spelling) -> String {
    let mut forms = s.number_forms.iter().copied().cycle();
    let mut next = || forms.next().unwrap_or(0);
    let key = |k: &str| {
        if s.escaped_keys {
            // `\u0073` is `s`: the same key, spelled otherwise.
            k.replacen('s', "\\u0073", 1)
        } else {
            k.to_owned()
        }
    };
    let gap = if s.spaced { " \n " } else { "" };
    let samples: Vec<String> = r
        .samples
        .iter()
        .map(|(at, level)| {
            let level = if level.fract() == 0.0 && level.abs() < 9e15 {
                integer(format!("{}", *level as i64), level.abs() as u128, next())
            } else {
                format!("{level:?}")
            };
            let at = integer(at.to_string(), u128::from(*at), next());
            let mut members = [
                format!("\"at\":{gap}{at}"),
                format!("\"level\":{gap}{level}"),
            ];
            if s.reversed {
                members.reverse();
            }
            format!("{{{}}}", members.join(&format!(",{gap}")))
        })
        .collect();
    let mut members = [
        format!(
            "\"{}\":{gap}{}",
            key("sensor"),
            integer(r.sensor.to_string(), u128::from(r.sensor), next())
        ),
        format!(
            "\"offset_ns\":{gap}{}",
            integer(
                r.offset_ns.to_string(),
                u128::from(r.offset_ns.unsigned_abs()),
                next()
            )
        ),
        format!(
            "\"{}\":{gap}[{}]",
            key("samples"),
            samples.join(&format!(",{gap}"))
        ),
    ];
    if s.reversed {
        members.reverse();
    }
    format!(
        r#"{{"name": "record_reading", "arguments": {{{}}}}}"#,
        members.join(&format!(",{gap}"))
    )
}

/// Integers over the whole range, with the edges and both sides of 2^53 drawn often.
fn wide_u64() -> impl Strategy<Value = u64> {
    let two53 = 1u64 << 53;
    prop_oneof![
        any::<u64>(),
        Just(0u64),
        Just(u64::MAX),
        Just(two53),
        Just(two53 + 1),
        Just(two53 - 1),
        (0u64..1000),
    ]
}

fn wide_i64() -> impl Strategy<Value = i64> {
    let two53 = 1i64 << 53;
    prop_oneof![
        any::<i64>(),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(-two53),
        Just(-two53 - 1),
        Just(two53 + 1),
        (-1000i64..1000),
    ]
}

fn level() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(8.0),
        Just(-0.5),
        Just(0.1),
        (-1000i64..1000).prop_map(|i| i as f64),
        // Below 2^52: every double above it is an integer the number policy refuses as
        // possibly rounded.
        any::<f64>().prop_filter("narrow", |f| f.abs() < 4e15),
    ]
}

fn reading() -> impl Strategy<Value = Reading> {
    (
        wide_u64(),
        wide_i64(),
        proptest::collection::vec((wide_u64(), level()), 0..3),
    )
        .prop_map(|(sensor, offset_ns, samples)| Reading {
            sensor,
            offset_ns,
            samples,
        })
}

/// A second reading: the same one, or one value nudged by one unit (or swapped for its
/// neighbour across 2^53), so near-misses are drawn as often as equals.
fn nudged(r: Reading) -> impl Strategy<Value = Reading> {
    (0u8..6).prop_map(move |what| {
        let mut r = r.clone();
        match what {
            0 | 1 => {}
            2 => r.sensor = r.sensor.wrapping_add(1),
            3 => r.offset_ns = r.offset_ns.wrapping_sub(1),
            4 => match r.samples.first_mut() {
                Some(s) => s.0 ^= 1,
                None => r.sensor ^= 1,
            },
            _ => match r.samples.first_mut() {
                Some(s) => s.1 = -s.1 - 1.0,
                None => r.offset_ns ^= 1,
            },
        }
        r
    })
}

fn spelling() -> impl Strategy<Value = Spelling> {
    (
        proptest::collection::vec(any::<u8>(), 1..8),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(number_forms, reversed, escaped_keys, spaced)| Spelling {
            number_forms,
            reversed,
            escaped_keys,
            spaced,
        })
}

/// (approval digest, derived key, args hash) of one proposal.
fn digests(raw: &str) -> (String, String, String) {
    let hashes = SeenHashes::default();
    let registry = Registry::builder()
        .tool(RecordReading)
        .idempotency_store(hashes.clone())
        .approval_key(ApprovalKey::new(&[9u8; 32]).unwrap())
        .build()
        .unwrap();
    let ctx = ToolContext::builder()
        .tenant("acme")
        .principal("user:kim")
        .build();
    let proposal =
        Proposal::parse(raw, registry.limits()).unwrap_or_else(|e| panic!("{raw}: {e:?}"));
    let validated = registry.validate(proposal, &ctx).unwrap();
    let authorized = registry.authorize(validated, &ctx).unwrap();
    let key = authorized.idempotency_key().unwrap().to_string();
    let Ok(Prepared::NeedsApproval(request)) = registry.finish(authorized, &ctx) else {
        panic!("record_reading asks for approval")
    };
    let digest = request.digest().to_owned();
    let grant = registry.grant(&request, "user:lee");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let obs = rt.block_on(registry.execute_approved(request, &grant));
    assert!(obs.ok, "{}", obs.to_value());
    let args_hash = hashes.last.lock().unwrap().clone().unwrap();
    (digest, key, args_hash)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn digests_keys_and_args_hashes_are_equal_iff_the_arguments_are(
        (a, b) in reading().prop_flat_map(|a| (Just(a.clone()), nudged(a))),
        spell_a in spelling(),
        spell_b in spelling(),
    ) {
        let (raw_a, raw_b) = (render(&a, &spell_a), render(&b, &spell_b));
        let (da, ka, ha) = digests(&raw_a);
        let (db, kb, hb) = digests(&raw_b);
        // `-0.0` is the integer 0 under the number policy, as `0.0` is.
        let equal = a.sensor == b.sensor
            && a.offset_ns == b.offset_ns
            && a.samples.len() == b.samples.len()
            && a.samples.iter().zip(&b.samples).all(|(x, y)| x.0 == y.0 && x.1 == y.1);
        prop_assert_eq!(da == db, equal, "approval digest: {} vs {}", raw_a, raw_b);
        prop_assert_eq!(ka == kb, equal, "derived key: {} vs {}", raw_a, raw_b);
        prop_assert_eq!(ha == hb, equal, "args hash: {} vs {}", raw_a, raw_b);
    }
}

#[test]
fn eight_spelled_three_ways_is_one_integer() {
    let raw = |n: &str| {
        format!(
            r#"{{"name": "record_reading", "arguments": {{"sensor": {n}, "offset_ns": -{n}, "samples": [{{"at": {n}, "level": {n}}}]}}}}"#
        )
    };
    let plain = digests(&raw("8"));
    assert_eq!(digests(&raw("8.0")), plain);
    assert_eq!(digests(&raw("8e0")), plain);
    assert_eq!(digests(&raw("80e-1")), plain);
    assert_ne!(digests(&raw("9")), plain);
}
