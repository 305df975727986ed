//! How a tool's contract evolved: every change between two versions of one tool, classed as
//! **major**, **major (security)**, **minor** or **patch**, with a reason a person can read.
//!
//! [`classify`] is a pure function over two contracts of the same tool, as JSON (a
//! [`ToolContract`] serialized, or a contract kept in a
//! lock file). The contract lock (the `lock` module) and the `tool-contract diff` command use it to
//! tell whether a version bump is big enough.
//!
//! | class | when | the version must |
//! | --- | --- | --- |
//! | major | the model's old calls may now fail or mean something else, or consumers of the output may break (a flow rule tightened counts: calls that passed may be refused); a lowered output size cap; an output schema opened with `open_output` (drift in the output is no longer caught); a dependency (`depends_on`) added, removed or changed unless it declares `on_change = "minor"` or `"patch"` | bump its major part |
//! | major (security) | the contract became more dangerous: effect escalated, approval weakened, a capability or an identity extractor dropped, idempotency dropped from a write, a flow rule loosened (a field now accepts output it refused, an output no longer confidential) | bump its major part, and the lock entry needs a reviewer's note |
//! | minor | compatible additions: an optional input property, a widened bound, an input enum value, an output property, a raised timeout, retries on a read, a raised output size cap, an output schema closed (every output it lets through is one consumers already expected; only the tool's own drift is now withheld) | bump at least its minor part |
//! | patch | descriptions and other annotations; an allowlist on a field that accepts any value | bump at least its patch part |
//!
//! The input schema and the output schema are read in opposite directions: accepting *more*
//! input is compatible and producing *more* kinds of output is not. Schemas are compared the way
//! schemars writes them: `$ref`/`$defs` are followed, `anyOf` with a `null` branch and
//! `"type": [T, "null"]` both mean "nullable", a `oneOf` of `const` branches (a documented
//! enum) is a set of values like `enum`, tagged variants are matched by their tag.
//!
//! Anything the classifier does not understand (an unknown keyword or contract field, a changed
//! `pattern`, a `not`) is **major** with a reason that starts with "not understood": it is never
//! silently minor. A change of meaning the schema cannot show is flagged by hand with the
//! `x-meaning` keyword (`#[schemars(extend("x-meaning" = "amounts in cents"))]`): any change
//! of its value is major.
//!
//! ```
//! use serde_json::json;
//! use tool_contract::evolve::{classify, Bump, ChangeClass, ChangeKind};
//!
//! let old = json!({
//!     "name": "search_documents", "version": "1.0.0", "effect": "pure_read",
//!     "input_schema": {"type": "object", "additionalProperties": false,
//!                      "properties": {"query": {"type": "string"}}, "required": ["query"]},
//! });
//! let mut new = old.clone();
//! new["version"] = json!("1.1.0");
//! new["input_schema"]["properties"]["lang"] = json!({"type": "string"});
//!
//! let changes = classify(&old, &new);
//! assert_eq!(changes.len(), 1);
//! assert_eq!(changes[0].kind, ChangeKind::PropertyAdded);
//! assert_eq!(changes[0].class, ChangeClass::Minor);
//! assert_eq!(changes[0].pointer, "/input_schema/properties/lang");
//! assert_eq!(tool_contract::evolve::required_bump(&changes), Some(Bump::Minor));
//!
//! // The same property, required: old calls without it now fail.
//! new["input_schema"]["required"] = json!(["query", "lang"]);
//! assert_eq!(classify(&old, &new)[0].class, ChangeClass::Major);
//! ```

mod fields;
mod flow;
mod output;
mod schema;
mod version;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ToolContract;

pub use version::{smallest_passing, Bump};

/// How big a change is, from the caller's point of view. Ordered: `Patch < Minor < Major <
/// Security`.
///
/// ```
/// use tool_contract::evolve::{Bump, ChangeClass};
/// assert!(ChangeClass::Security > ChangeClass::Major);
/// assert_eq!(ChangeClass::Security.bump(), Bump::Major);
/// assert_eq!(ChangeClass::Security.to_string(), "major (security)");
/// assert_eq!(serde_json::to_value(ChangeClass::Security).unwrap(), "major-security");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ChangeClass {
    /// Descriptions and other annotations only.
    #[serde(rename = "patch")]
    Patch,
    /// A compatible addition.
    #[serde(rename = "minor")]
    Minor,
    /// Old calls may now fail or mean something else; consumers of the output may break.
    #[serde(rename = "major")]
    Major,
    /// A more dangerous contract: needs a major bump and a reviewer's note in the lock.
    #[serde(rename = "major-security")]
    Security,
}

impl ChangeClass {
    /// The smallest version bump this class needs.
    pub const fn bump(self) -> Bump {
        match self {
            ChangeClass::Patch => Bump::Patch,
            ChangeClass::Minor => Bump::Minor,
            ChangeClass::Major | ChangeClass::Security => Bump::Major,
        }
    }

    /// The JSON spelling: `patch`, `minor`, `major` or `major-security`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChangeClass::Patch => "patch",
            ChangeClass::Minor => "minor",
            ChangeClass::Major => "major",
            ChangeClass::Security => "major-security",
        }
    }
}

impl fmt::Display for ChangeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChangeClass::Security => "major (security)",
            other => other.as_str(),
        })
    }
}

macro_rules! change_kinds {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// What changed, as a stable `snake_case` code (the `change` column of
        /// `tool-contract diff`, e.g. `property_added`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum ChangeKind {
            $($(#[$doc])* #[serde(rename = $name)] $variant,)*
        }

        impl ChangeKind {
            /// The stable code, e.g. `"bound_tightened"`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ChangeKind::$variant => $name,)*
                }
            }
        }
    };
}

change_kinds! {
    /// The tool's description changed.
    DescriptionChanged = "description_changed",
    /// A schema annotation (`description`, `title`, `examples`, ...) changed.
    AnnotationChanged = "annotation_changed",
    /// The value is written differently but means the same (`$defs` layout, key or enum order).
    Rewritten = "rewritten",
    /// A property was added.
    PropertyAdded = "property_added",
    /// A property was removed.
    PropertyRemoved = "property_removed",
    /// A property was removed and another with the same schema added.
    PropertyRenamed = "property_renamed",
    /// A property became required.
    PropertyRequired = "property_required",
    /// A property is no longer required.
    PropertyOptional = "property_optional",
    /// `additionalProperties` was closed (or given a schema where any was accepted).
    AdditionalPropertiesClosed = "additional_properties_closed",
    /// `additionalProperties` was opened (or its schema dropped).
    AdditionalPropertiesOpened = "additional_properties_opened",
    /// A type was added to `type`.
    TypeWidened = "type_widened",
    /// A type was removed from `type`.
    TypeNarrowed = "type_narrowed",
    /// `type` changed to types that do not overlap the old ones.
    TypeChanged = "type_changed",
    /// `null` is now accepted (an `Option`).
    NullAllowed = "null_allowed",
    /// `null` is no longer accepted.
    NullRefused = "null_refused",
    /// An `enum`/`const` value (or a documented enum's variant) was added.
    EnumValueAdded = "enum_value_added",
    /// An `enum`/`const` value was removed.
    EnumValueRemoved = "enum_value_removed",
    /// The values were restricted to a set (`enum` or `const` added).
    ValuesRestricted = "values_restricted",
    /// The values are no longer restricted to a set.
    ValuesUnrestricted = "values_unrestricted",
    /// A variant (a branch of `oneOf`/`anyOf`) was added.
    VariantAdded = "variant_added",
    /// A variant was removed.
    VariantRemoved = "variant_removed",
    /// A bound was added or tightened (`maxLength`, `minimum`, `maxItems`, `uniqueItems`, ...).
    BoundTightened = "bound_tightened",
    /// A bound was removed or widened.
    BoundWidened = "bound_widened",
    /// A `pattern` was added.
    PatternAdded = "pattern_added",
    /// A `pattern` was removed.
    PatternRemoved = "pattern_removed",
    /// A `pattern` changed.
    PatternChanged = "pattern_changed",
    /// A `format` was added.
    FormatAdded = "format_added",
    /// A `format` was removed.
    FormatRemoved = "format_removed",
    /// A `format` changed (a known integer or float format widened or narrowed, or another).
    FormatChanged = "format_changed",
    /// Array items must now match a schema (or a stricter one).
    ItemsChanged = "items_changed",
    /// A tuple (`prefixItems`) changed length.
    TupleChanged = "tuple_changed",
    /// A `default` was added, removed or changed.
    DefaultChanged = "default_changed",
    /// The `x-meaning` keyword changed: a change of meaning flagged by hand.
    MeaningChanged = "meaning_changed",
    /// The classifier cannot decide: treated as major.
    NotUnderstood = "not_understood",
    /// The tool's name changed.
    ToolRenamed = "tool_renamed",
    /// The effect class went up (e.g. `pure_read` to a write).
    EffectEscalated = "effect_escalated",
    /// The effect class went down.
    EffectLowered = "effect_lowered",
    /// Approval was removed or weakened.
    ApprovalWeakened = "approval_weakened",
    /// Approval was added or strengthened.
    ApprovalStrengthened = "approval_strengthened",
    /// A required capability was removed.
    CapabilityRemoved = "capability_removed",
    /// A required capability was added.
    CapabilityAdded = "capability_added",
    /// The handler takes a new trusted extractor.
    ExtractorAdded = "extractor_added",
    /// The handler no longer takes a trusted extractor.
    ExtractorRemoved = "extractor_removed",
    /// The timeout was raised.
    TimeoutRaised = "timeout_raised",
    /// The timeout was lowered.
    TimeoutLowered = "timeout_lowered",
    /// Automatic retries were added or raised.
    RetriesAdded = "retries_added",
    /// Automatic retries were removed or reduced.
    RetriesReduced = "retries_reduced",
    /// The retry backoff changed.
    RetryBackoffChanged = "retry_backoff_changed",
    /// Idempotency was removed from the tool (a key is no longer required or has no source).
    IdempotencyRemoved = "idempotency_removed",
    /// An idempotency key is now required.
    IdempotencyRequired = "idempotency_required",
    /// The idempotency key comes from somewhere else.
    IdempotencySourceChanged = "idempotency_source_changed",
    /// The host's policy version changed.
    PolicyVersionChanged = "policy_version_changed",
    /// The provenance pointers changed.
    ProvenanceChanged = "provenance_changed",
    /// Untrusted or confidential output may now steer a field it could not (flow control).
    FlowLoosened = "flow_loosened",
    /// Output that could steer a field no longer may (flow control).
    FlowTightened = "flow_tightened",
    /// A flow declaration that decides nothing changed (an allowlist on a field that accepts
    /// any value).
    FlowDocumented = "flow_documented",
    /// The output size cap was lowered: outputs that were delivered may now be withheld.
    OutputCapLowered = "output_cap_lowered",
    /// The output size cap was raised.
    OutputCapRaised = "output_cap_raised",
    /// The output schema was opened (`open_output`): drift is no longer caught.
    OutputOpened = "output_opened",
    /// The output schema was closed: undeclared output properties are refused.
    OutputClosed = "output_closed",
    /// A model view was declared: the model now sees a view of the output, not all of it.
    ModelViewAdded = "model_view_added",
    /// The model view was removed: the model now sees the whole output, including what the
    /// view withheld.
    ModelViewRemoved = "model_view_removed",
    /// A named dependency version (`depends_on`) was added.
    DependencyAdded = "dependency_added",
    /// A named dependency version was removed.
    DependencyRemoved = "dependency_removed",
    /// A named dependency's version changed.
    DependencyChanged = "dependency_changed",
    /// An error category was added to the error model.
    ErrorCategoryAdded = "error_category_added",
    /// An error category was removed from the error model.
    ErrorCategoryRemoved = "error_category_removed",
    /// Whether an error category is retryable changed.
    ErrorRetryabilityChanged = "error_retryability_changed",
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change between two contracts of a tool.
///
/// `pointer` is a JSON pointer (RFC 6901) into the new contract where the change is, or into
/// the old one for something removed; within a schema it follows `$ref`s to where the keyword
/// is written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Change {
    /// Where, e.g. `/input_schema/properties/top_k/maximum`.
    pub pointer: String,
    /// What changed.
    #[serde(rename = "change")]
    pub kind: ChangeKind,
    /// How big the change is.
    pub class: ChangeClass,
    /// Why it has this class, for a person.
    pub reason: String,
}

impl Change {
    /// A change; the classifier builds these, tests and tools may too. It displays as
    /// `major (security) /effect [effect_escalated]: <reason>`.
    pub fn new(
        pointer: impl Into<String>,
        kind: ChangeKind,
        class: ChangeClass,
        reason: impl Into<String>,
    ) -> Self {
        Change {
            pointer: pointer.into(),
            kind,
            class,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(whole contract)"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{} {pointer} [{}]: {}",
            self.class, self.kind, self.reason
        )
    }
}

/// What the classifier may assume about the host. The defaults assume nothing.
///
/// ```
/// use serde_json::json;
/// use tool_contract::evolve::{classify_with, ChangeClass, Rules};
///
/// let old = json!({"name": "t", "effect": "pure_read", "timeout_ms": 500});
/// let new = json!({"name": "t", "effect": "pure_read", "timeout_ms": 5000});
/// // A raised timeout is compatible within the caller's deadline...
/// assert_eq!(classify_with(&old, &new, &Rules::default())[0].class, ChangeClass::Minor);
/// // ...and major past it.
/// let rules = Rules::default().caller_deadline_ms(2000);
/// assert_eq!(classify_with(&old, &new, &rules)[0].class, ChangeClass::Major);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rules {
    /// The callers' deadline for one attempt, in milliseconds. A timeout raised past it is
    /// major (callers give up first); within it, or when it is `None` (the default, unknown),
    /// minor.
    pub caller_deadline_ms: Option<u64>,
}

impl Rules {
    /// Sets [`Rules::caller_deadline_ms`].
    pub fn caller_deadline_ms(mut self, ms: u64) -> Self {
        self.caller_deadline_ms = Some(ms);
        self
    }
}

/// Every change from `old` to `new`, two contracts of the same tool as JSON, with the default
/// [`Rules`]. See the [module docs](self) for the classes.
///
/// The version, the fingerprint and the schemas' `$id` (which carries the version) are not
/// compared: they are what the version bump is judged against. Two contracts that are equal
/// apart from those give no change; two that differ in anything else give at least one.
pub fn classify(old: &Value, new: &Value) -> Vec<Change> {
    classify_with(old, new, &Rules::default())
}

/// [`classify`] with explicit [`Rules`].
pub fn classify_with(old: &Value, new: &Value, rules: &Rules) -> Vec<Change> {
    let mut out = Vec::new();
    fields::compare(old, new, rules, &mut out);
    out
}

/// [`classify`] over two [`ToolContract`]s.
pub fn classify_contracts(old: &ToolContract, new: &ToolContract) -> Vec<Change> {
    let as_json = |c: &ToolContract| serde_json::to_value(c).unwrap_or(Value::Null);
    classify(&as_json(old), &as_json(new))
}

/// The smallest bump that covers every change: the largest class's, or `None` when there is
/// no change.
///
/// ```
/// use tool_contract::evolve::{required_bump, Bump, Change, ChangeClass, ChangeKind};
/// assert_eq!(required_bump(&[]), None);
/// let patch = Change::new("/description", ChangeKind::DescriptionChanged, ChangeClass::Patch, "reworded");
/// assert_eq!(required_bump(&[patch]), Some(Bump::Patch));
/// ```
pub fn required_bump(changes: &[Change]) -> Option<Bump> {
    changes.iter().map(|c| c.class.bump()).max()
}

/// The largest class among `changes`, or `None` when there is none.
pub fn largest_class(changes: &[Change]) -> Option<ChangeClass> {
    changes.iter().map(|c| c.class).max()
}

/// A JSON pointer with `segment` appended, escaped per RFC 6901.
pub(crate) fn push_pointer(base: &str, segment: &str) -> String {
    let mut out = String::with_capacity(base.len() + segment.len() + 1);
    out.push_str(base);
    out.push('/');
    for ch in segment.chars() {
        match ch {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// A short rendering of a JSON value for a reason: strings quoted, long values cut.
pub(crate) fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    }
}
