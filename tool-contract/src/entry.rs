//! A registered tool version: its contract, its schemas compiled once, and the typed steps the
//! pipeline runs through it with the tool's argument type erased ([`Runner`]).

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::args::ArgsPlan;
use crate::context::ToolContext;
use crate::contract::ToolContract;
use crate::error::{ToolError, ValidationIssue};
use crate::flow::FlowPlan;
use crate::json::{FromTree, Tree, TreeJson};
use crate::output::{CheckedOutput, OutputContract};
use crate::tool::{ArgField, BoxFuture, DynTool, Tool};

/// Typed arguments, erased so one registry holds tools of different types.
pub(crate) struct Decoded(Box<dyn Any + Send>);

/// The registry's view of a tool: [`DynTool`] plus the typed steps of the pipeline.
pub(crate) trait Runner: DynTool {
    fn fields(&self) -> &'static [ArgField];
    /// `Ok(Err(msg))`: the arguments do not decode; `Err`: host code panicked.
    fn decode(&self, args: &Value) -> Result<Result<Decoded, String>, ToolError>;
    /// Decoding from the fast path's tree: `None` when it does not decode (or host code
    /// panicked), which hands the call to the full path to report.
    fn decode_tree(&self, args: &Tree<'_>) -> Option<Decoded>;
    fn semantic(
        &self,
        args: &Decoded,
        ctx: &ToolContext,
    ) -> Result<Vec<ValidationIssue>, ToolError>;
    fn needs_approval(&self, args: &Decoded, ctx: &ToolContext) -> Result<bool, ToolError>;
    /// Runs the handler, then serializes its output once, to the text the envelope will
    /// carry, and checks it against `output`.
    fn run<'a>(
        &'a self,
        args: Decoded,
        ctx: &'a ToolContext,
        output: &'a OutputContract,
    ) -> BoxFuture<'a, Result<CheckedOutput, ToolError>>;
}

impl<T: Tool> Runner for T {
    fn fields(&self) -> &'static [ArgField] {
        <T::Args as crate::ToolArgs>::FIELDS
    }

    fn decode(&self, args: &Value) -> Result<Result<Decoded, String>, ToolError> {
        guarded(|| {
            T::Args::deserialize(args)
                .map(|a| Decoded(Box::new(a)))
                .map_err(|e| e.to_string())
        })
    }

    fn decode_tree(&self, args: &Tree<'_>) -> Option<Decoded> {
        guarded(|| T::Args::deserialize(FromTree(args)).ok())
            .ok()
            .flatten()
            .map(|a| Decoded(Box::new(a)))
    }

    fn semantic(
        &self,
        args: &Decoded,
        ctx: &ToolContext,
    ) -> Result<Vec<ValidationIssue>, ToolError> {
        guarded(|| match args.0.downcast_ref::<T::Args>() {
            Some(a) => crate::ToolArgs::semantic_issues(a, ctx),
            None => Vec::new(),
        })
    }

    fn needs_approval(&self, args: &Decoded, ctx: &ToolContext) -> Result<bool, ToolError> {
        // A type mix-up cannot happen (each entry decodes its own args); fail safe regardless.
        guarded(|| {
            args.0
                .downcast_ref::<T::Args>()
                .is_none_or(|a| T::requires_approval(a, ctx))
        })
    }

    fn run<'a>(
        &'a self,
        args: Decoded,
        ctx: &'a ToolContext,
        output: &'a OutputContract,
    ) -> BoxFuture<'a, Result<CheckedOutput, ToolError>> {
        Box::pin(async move {
            let args = *args.0.downcast::<T::Args>().map_err(|_| {
                ToolError::internal(
                    "ARGUMENTS_TYPE_MISMATCH",
                    "the registry handed a tool arguments of another type",
                )
            })?;
            let produced = self.call(args, ctx).await?;
            T::deliver_output(&produced, output)
        })
    }
}

/// Runs host code (a `Deserialize` impl, a semantic hook, an approval condition) on model
/// data without letting a panic escape the pipeline: it becomes an `INTERNAL` error, and the
/// panic message stays out of the envelope.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, ToolError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|_| {
        ToolError::internal(
            "HOOK_PANICKED",
            "the tool failed unexpectedly while checking the arguments",
        )
    })
}

/// One registered (name, version).
pub(crate) struct Entry {
    pub(crate) runner: Arc<dyn Runner>,
    pub(crate) contract: &'static ToolContract,
    pub(crate) version: semver::Version,
    /// The input schema, over `Value`s (the full path) ...
    pub(crate) input: jsonschema::Validator,
    /// ... and over the fast path's trees: the same schema.
    pub(crate) input_tree: jsonschema::Validator<TreeJson>,
    pub(crate) output: OutputContract,
    pub(crate) plan: ArgsPlan,
    /// Flow control's rules for this tool.
    pub(crate) flow: FlowPlan,
}

impl Entry {
    /// `tool://name@version`: the envelope's source when the data names none.
    pub(crate) fn default_source(&self) -> &'static str {
        self.output.default_source
    }
}

/// Where a schema failed to compile, for the registry's build error.
pub(crate) struct SchemaError {
    pub(crate) side: &'static str,
    pub(crate) message: String,
    pub(crate) backtracking: bool,
}

impl Entry {
    /// Compiles a tool's schemas and plans, once. `escalate`: a broken flow policy asks for
    /// approval instead of refusing, even without an approval policy.
    pub(crate) fn new(
        runner: Arc<dyn Runner>,
        version: semver::Version,
        escalate: bool,
    ) -> Result<Entry, SchemaError> {
        let contract = runner.contract();
        let input = compile(jsonschema::options(), &contract.input_schema, "input")?;
        let input_tree = compile(
            jsonschema::options_for::<TreeJson>(),
            &contract.input_schema,
            "input",
        )?;
        let output = compile(
            jsonschema::options_for::<TreeJson>(),
            &contract.output_schema,
            "output",
        )?;
        let view = match &contract.model_view_schema {
            Some(schema) => Some(compile(
                jsonschema::options_for::<TreeJson>(),
                schema,
                "model view",
            )?),
            None => None,
        };
        Ok(Entry {
            plan: ArgsPlan::from_schema(&contract.input_schema),
            flow: FlowPlan::new(contract, escalate),
            output: OutputContract::new(
                output,
                view,
                contract.provenance.as_ref(),
                contract.max_output_bytes,
                intern_source(&contract.name, &contract.version),
            ),
            runner,
            contract,
            version,
            input,
            input_tree,
        })
    }
}

/// `tool://name@version`, made once per tool for the life of the process, so every envelope
/// can borrow it. The set is bounded by the tools the program defines.
fn intern_source(name: &str, version: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static SOURCES: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let key = format!("tool://{name}@{version}");
    let mut map = SOURCES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = map.get(&key) {
        return s;
    }
    let leaked: &'static str = Box::leak(key.clone().into_boxed_str());
    map.insert(key, leaked);
    leaked
}

/// Compiles a schema once: Draft 2020-12, formats asserted, linear-time regexes only, and (with
/// the crate's `default-features = false` on jsonschema) no remote or file `$ref` resolution.
fn compile<F: jsonschema::json::Json>(
    options: jsonschema::ValidationOptions<'_, Arc<dyn jsonschema::Retrieve>, F>,
    schema: &Value,
    side: &'static str,
) -> Result<jsonschema::Validator<F>, SchemaError> {
    options
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
        .map_err(|e| {
            let message = e.to_string();
            let backtracking = matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::Pattern { .. }
            ) || e.kind().keyword() == "pattern"
                || message.contains("regex");
            SchemaError {
                side,
                message,
                backtracking,
            }
        })
}
