//! Items the macros' expansions call. Not public API: no semver guarantees.
//!
//! Keeping the real work in functions here keeps expansions small and lets the logic be tested
//! in this crate (schemars `_private`).

pub use core;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::effect::{ExternalRead, IrreversibleWrite, PureRead, ReversibleWrite};
pub use crate::output::{CheckedOutput, OutputContract};
pub use crate::tool::{ArgField, FieldFlowSpec};

use crate::context::ToolContext;
pub use crate::contract::{DependencyChange, DEFAULT_MAX_OUTPUT_BYTES};

use crate::contract::{
    ApprovalPolicy, Authorization, Dependency, ErrorModel, FieldFlow, FieldPolicy, Fingerprint,
    FlowContract, IdempotencyPolicy, IdempotencySource, RetryPolicy, ToolContract,
};
use crate::effect::{Effect, EffectClass};
use crate::error::ToolError;
use crate::extract::FromToolContext;
use crate::schema::{schema_from, schema_hash, tool_schema, Direction, SchemaFns};
use crate::tool::{ApprovalCondition, Tool, ToolArgs};

/// Where `#[tool]` was told the idempotency key comes from.
#[derive(Clone, Copy, Debug)]
pub enum IdempotencySpec {
    /// From the args' `#[tool(idempotency_key)]` field, if there is one.
    ArgsField,
    /// A canonical hash of these Rust field names.
    Derived(&'static [&'static str]),
    /// From the host.
    Host,
}

/// The attribute's data, as a `const` in the expansion.
#[derive(Clone, Copy, Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub version: &'static str,
    pub description: &'static str,
    pub effect: Effect,
    pub capabilities: &'static [&'static str],
    pub approval: ApprovalPolicy,
    pub timeout_ms: u64,
    pub retry: RetryPolicy,
    pub idempotency: IdempotencySpec,
    pub policy_version: Option<&'static str>,
    pub extractors: &'static [&'static str],
    pub provenance: Option<(&'static str, Option<&'static str>)>,
    /// `#[tool(confidential)]` (`[""]`) or `#[tool(confidential("/pointer", ...))]`.
    pub confidential: &'static [&'static str],
    /// `max_output_bytes = N`, or [`DEFAULT_MAX_OUTPUT_BYTES`].
    pub max_output_bytes: u64,
    /// `open_output = "why"`.
    pub open_output: Option<&'static str>,
    /// `depends_on(name = "version", name(version = "...", on_change = "minor"))`.
    pub depends_on: &'static [(&'static str, &'static str, DependencyChange)],
    /// `model_view = f`: the view's schema, for the tool's name and version.
    pub model_view: Option<fn(&str, &str) -> serde_json::Value>,
    pub crate_name: &'static str,
    pub crate_version: &'static str,
    pub git_revision: Option<&'static str>,
}

/// The contract in `cell`, built by `build` on first use. Not generic, so the `OnceLock`
/// machinery is compiled once, not once per tool.
pub fn contract_once(
    cell: &'static OnceLock<ToolContract>,
    build: fn(&ToolSpec) -> ToolContract,
    spec: &ToolSpec,
) -> &'static ToolContract {
    cell.get_or_init(|| build(spec))
}

/// Builds the contract of `T` from its spec. Called once per tool, behind a `OnceLock`.
///
/// Generic only where it must be (the two schemas, the args' field table): the rest is
/// `assemble_contract`, compiled once in this crate rather than once per tool in every crate
/// that defines tools.
pub fn build_contract<T: Tool>(spec: &ToolSpec) -> ToolContract {
    assemble_contract(
        spec,
        <T::Effect as EffectClass>::EFFECT,
        SchemaFns::of::<T::Args>(),
        SchemaFns::of::<T::Output>(),
        <T::Args as ToolArgs>::FIELDS,
        T::Args::idempotency_key_field(),
    )
}

fn assemble_contract(
    spec: &ToolSpec,
    effect: Effect,
    input: SchemaFns,
    output: SchemaFns,
    fields: &'static [ArgField],
    key_field: Option<&'static str>,
) -> ToolContract {
    debug_assert_eq!(spec.effect, effect);
    let input_schema = schema_from(input, spec.name, spec.version, Direction::Input);
    let mut output_schema = schema_from(output, spec.name, spec.version, Direction::Output);
    let mut model_view_schema = spec
        .model_view
        .map(|schema| schema(spec.name, spec.version));
    if spec.open_output.is_none() {
        crate::schema::close_output(&mut output_schema);
        if let Some(view) = &mut model_view_schema {
            crate::schema::close_output(view);
        }
    }
    let depends_on: std::collections::BTreeMap<String, Dependency> = spec
        .depends_on
        .iter()
        .map(|&(name, version, on_change)| (name.to_owned(), Dependency::new(version, on_change)))
        .collect();
    let source = match spec.idempotency {
        IdempotencySpec::ArgsField => match key_field {
            Some(field) => IdempotencySource::Field {
                field: field.to_owned(),
            },
            None => IdempotencySource::None,
        },
        IdempotencySpec::Derived(names) => IdempotencySource::Derived {
            fields: names
                .iter()
                .map(|f| wire_name(fields, f).to_owned())
                .collect(),
        },
        IdempotencySpec::Host => IdempotencySource::Host,
    };
    let implementation = match spec.git_revision {
        Some(rev) if !rev.is_empty() => {
            format!("{}@{}+git.{rev}", spec.crate_name, spec.crate_version)
        }
        _ => format!("{}@{}", spec.crate_name, spec.crate_version),
    };
    let policy_version = spec.policy_version.map(str::to_owned);
    let flow = flow_contract(fields, spec.confidential);
    let mut contract = ToolContract {
        name: spec.name.to_owned(),
        version: spec.version.to_owned(),
        description: spec.description.to_owned(),
        error_model: ErrorModel::for_retry(&spec.retry),
        effect: spec.effect,
        authorization: Authorization {
            capabilities: spec.capabilities.iter().map(|c| (*c).to_owned()).collect(),
            extractors: spec.extractors.iter().map(|c| (*c).to_owned()).collect(),
        },
        approval: spec.approval,
        timeout_ms: spec.timeout_ms,
        retry: spec.retry,
        idempotency: IdempotencyPolicy {
            source,
            required: spec.effect.is_write(),
        },
        policy_version: policy_version.clone(),
        provenance: spec
            .provenance
            .map(|(source, revision)| crate::contract::ProvenanceSpec {
                source: source.to_owned(),
                revision: revision.map(str::to_owned),
            }),
        flow,
        max_output_bytes: spec.max_output_bytes,
        open_output: spec.open_output.map(str::to_owned),
        fingerprint: Fingerprint {
            input_schema_sha256: schema_hash(&input_schema),
            output_schema_sha256: schema_hash(&output_schema),
            contract_sha256: String::new(),
            implementation,
            policy_version,
            dependencies: depends_on
                .iter()
                .map(|(name, d)| (name.clone(), d.version.clone()))
                .collect(),
        },
        depends_on,
        input_schema,
        output_schema,
        model_view_schema,
    };
    contract.fingerprint.contract_sha256 = contract_hash(&contract);
    contract
}

/// The schema of a model view `f`'s output: `#[tool(model_view = f)]` names a function, and
/// this reads its return type's schema without the macro having to name it.
pub fn view_schema<O, V: ModelViewOutput>(
    _view: fn(&O) -> V,
    tool: &str,
    version: &str,
) -> serde_json::Value {
    tool_schema::<V>(tool, version, Direction::Output)
}

/// Delivers `output` and its model view `view(output)`, each checked against its schema.
pub fn deliver_view<O: serde::Serialize, V: ModelViewOutput>(
    contract: &crate::output::OutputContract,
    output: &O,
    view: fn(&O) -> V,
) -> Result<crate::output::CheckedOutput, ToolError> {
    contract.deliver_viewed(output, &view(output))
}

/// What a `model_view` function returns.
#[diagnostic::on_unimplemented(
    message = "model view `{Self}` needs `Serialize` and `JsonSchema`",
    label = "the model view's schema is generated from this function's return type",
    note = "add `#[derive(serde::Serialize, schemars::JsonSchema)]` to `{Self}`"
)]
pub trait ModelViewOutput: serde::Serialize + schemars::JsonSchema {}
impl<T: serde::Serialize + schemars::JsonSchema> ModelViewOutput for T {}

/// The flow declarations of a tool's fields and output.
fn flow_contract(fields: &[ArgField], confidential: &[&str]) -> FlowContract {
    let fields = fields
        .iter()
        .filter(|f| f.flow.is_declared())
        .map(|f| {
            let policy = match (f.flow.trusted_only, f.flow.accepts_untrusted) {
                (true, _) => FieldPolicy::TrustedOnly,
                (false, Some(reason)) => FieldPolicy::AcceptsUntrusted {
                    reason: reason.to_owned(),
                },
                (false, None) => FieldPolicy::Default,
            };
            let flow = FieldFlow {
                policy,
                flows_from: f.flow.flows_from.iter().map(|s| (*s).to_owned()).collect(),
                url_or_command: f.flow.url_or_command,
            };
            (f.wire_name.to_owned(), flow)
        })
        .collect();
    FlowContract {
        fields,
        confidential: confidential.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// Hash of everything in the contract that defines behaviour: the fingerprint itself is left
/// out, and so is the implementation id, which changes with every commit.
pub(crate) fn contract_hash(contract: &ToolContract) -> String {
    let mut value = serde_json::to_value(contract).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("fingerprint");
    }
    crate::canonical::sha256(&value)
}

fn wire_name(fields: &'static [ArgField], rust_name: &'static str) -> &'static str {
    fields
        .iter()
        .find(|f| f.rust_name == rust_name)
        .map_or(rust_name, |f| f.wire_name)
}

/// Marks args that have a `#[tool(idempotency_key)]` field; emitted by `#[derive(ToolArgs)]`.
#[diagnostic::on_unimplemented(
    message = "this write tool has no idempotency key source",
    label = "a write effect needs an idempotency key",
    note = "`{Self}` has no field marked `#[tool(idempotency_key)]`",
    note = "mark a field with `#[tool(idempotency_key)]`, derive the key with `idempotency(from = [field, ...])`, or take it from the host with `idempotency(host)`"
)]
pub trait HasIdempotencyKeyField {}

/// The handler's return type: `Result<T, ToolError>`.
#[diagnostic::on_unimplemented(
    message = "a #[tool] handler must return `Result<_, ToolError>`, not `{Self}`",
    label = "change the return type to `Result<Output, tool_contract::ToolError>`"
)]
pub trait ToolReturn {
    type Output;
    fn into_result(self) -> Result<Self::Output, ToolError>;
}

impl<T> ToolReturn for Result<T, ToolError> {
    type Output = T;
    #[inline]
    fn into_result(self) -> Result<T, ToolError> {
        self
    }
}

/// The handler's output must serialize and have a schema.
#[diagnostic::on_unimplemented(
    message = "tool output `{Self}` needs `Serialize` and `JsonSchema`",
    label = "the output schema is generated from this type",
    note = "add `#[derive(serde::Serialize, schemars::JsonSchema)]` to `{Self}`"
)]
pub trait ToolOutput: serde::Serialize + schemars::JsonSchema + Send + 'static {}
impl<T: serde::Serialize + schemars::JsonSchema + Send + 'static> ToolOutput for T {}

// Never-called functions whose bounds carry the cross-item checks; the expansion calls them with
// spans on the attribute tokens, so the error lands where the fix is.
pub const fn assert_tool_args<T: ToolArgs>() {}
pub const fn assert_output<T: ToolOutput>() {}
pub const fn assert_extractor<T: FromToolContext>() {}
pub const fn assert_idempotency_key_field<T: HasIdempotencyKeyField>() {}
pub const fn assert_approval_condition<T: ApprovalCondition>() {}

#[inline]
pub fn requires_approval_conditional<A: ApprovalCondition>(args: &A, ctx: &ToolContext) -> bool {
    args.requires_approval(ctx)
}

#[inline]
pub fn extract<T: FromToolContext>(ctx: &ToolContext) -> Result<T, ToolError> {
    T::from_tool_context(ctx)
}

pub use std::sync::OnceLock;
pub use std::vec::Vec;
