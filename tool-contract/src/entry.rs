//! A registered tool version: its contract, its schemas compiled once, and the typed steps the
//! pipeline runs through it with the tool's argument type erased ([`Runner`]).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::Value;

use crate::args::ArgsPlan;
use crate::context::ToolContext;
use crate::contract::ToolContract;
use crate::error::{ToolError, ValidationIssue};
use crate::flow::FlowPlan;
use crate::json::{FromTree, Tree, TreeJson};
use crate::output::{unserializable, CheckedOutput, OutputContract};
use crate::tool::{ArgField, BoxFuture, DynTool, Tool};

/// Typed arguments, erased so one registry holds tools of different types.
pub(crate) struct Decoded(Box<dyn Any + Send>);

/// The registry's view of a tool: [`DynTool`] plus the typed steps of the pipeline.
pub(crate) trait Runner: DynTool {
    fn fields(&self) -> &'static [ArgField];
    /// Decodes the arguments from a tree (the fast path's, or one built over the full path's
    /// `Value` by [`decode_value`]), as serde_json decodes them from a `Value`.
    /// `Ok(Err(msg))`: they do not decode (serde_json's message); `Err`: host code panicked.
    fn decode(&self, args: &Tree<'_>) -> Result<Result<Decoded, String>, ToolError>;
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

    fn decode(&self, args: &Tree<'_>) -> Result<Result<Decoded, String>, ToolError> {
        // One deserializer for both paths: each argument type's `Deserialize` is compiled
        // once per tool, not once per representation.
        // Written as plain matches, here and in `guarded`: every combinator with a closure is
        // one more generic instance per tool in the registering crate.
        guarded(|| match T::Args::deserialize(FromTree(args)) {
            Ok(a) => Ok(Decoded(Box::new(a))),
            Err(e) => Err(e.to_string()),
        })
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
        guarded(|| match args.0.downcast_ref::<T::Args>() {
            Some(a) => T::requires_approval(a, ctx),
            None => true,
        })
    }

    fn run<'a>(
        &'a self,
        args: Decoded,
        ctx: &'a ToolContext,
        output: &'a OutputContract,
    ) -> BoxFuture<'a, Result<CheckedOutput, ToolError>> {
        Box::pin(async move {
            let Ok(args) = args.0.downcast::<T::Args>() else {
                return Err(type_mismatch());
            };
            match self.call(*args, ctx).await {
                Ok(produced) => T::deliver_output(&produced, output),
                Err(err) => Err(err),
            }
        })
    }
}

// Here rather than beside the trait: every tool's `call_value` is the pipeline's own steps.
impl<T: Tool> DynTool for T {
    fn contract(&self) -> &'static ToolContract {
        T::contract()
    }

    fn call_value<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        // Through the pipeline's own typed steps (decoding, the handler, serializing), behind
        // `dyn`: this entry point compiles no code of its own per tool.
        call_value(self, args, ctx)
    }
}

/// Decodes arguments held as a `Value` (the full path's, or a retry's): through a tree that
/// borrows the value's strings, so that every path decodes with [`Runner::decode`].
pub(crate) fn decode_value(
    runner: &dyn Runner,
    args: &Value,
) -> Result<Result<Decoded, String>, ToolError> {
    crate::json::with_arena(|bump| runner.decode(&Tree::from_value(args, bump)))
}

/// [`DynTool::call_value`] for every tool: decodes `args`, runs the handler and gives back
/// its full output, with the pipeline's own typed steps and no output contract (the caller
/// asked for the handler alone).
pub(crate) fn call_value<'a>(
    runner: &'a dyn Runner,
    args: Value,
    ctx: &'a ToolContext,
) -> BoxFuture<'a, Result<Value, ToolError>> {
    Box::pin(async move {
        let decoded = decode_value(runner, &args)?.map_err(|_| {
            ToolError::invalid_input(
                "ARGUMENTS_UNREADABLE",
                "the arguments do not match the input schema",
            )
        })?;
        // It checks and caps nothing: `Invalid` and `TooLarge` cannot come back.
        let Some(contract) = unchecked() else {
            return Err(unserializable());
        };
        let text = match runner.run(decoded, ctx, contract).await? {
            CheckedOutput::Valid(text, _) | CheckedOutput::Viewed { full: text, .. } => text,
            CheckedOutput::Invalid(_) | CheckedOutput::TooLarge(_) => return Err(unserializable()),
        };
        serde_json::from_str(text.get()).map_err(|_| unserializable())
    })
}

/// An output contract that accepts any output (and any model view) of any size; `None` only
/// if jsonschema refused to compile the schema `true`.
fn unchecked() -> Option<&'static OutputContract> {
    static UNCHECKED: OnceLock<Option<OutputContract>> = OnceLock::new();
    let anything = || {
        jsonschema::options_for::<TreeJson>()
            .build(&Value::Bool(true))
            .ok()
    };
    UNCHECKED
        .get_or_init(|| {
            Some(OutputContract::new(
                anything()?,
                Some(anything()?),
                None,
                u64::MAX,
                "tool://unchecked",
            ))
        })
        .as_ref()
}

/// Runs host code (a `Deserialize` impl, a semantic hook, an approval condition) on model
/// data without letting a panic escape the pipeline: it becomes an `INTERNAL` error, and the
/// panic message stays out of the envelope.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, ToolError> {
    // The unwinding machinery is compiled once, behind `dyn`, not once per tool and step.
    let mut f = Some(f);
    let mut out = None;
    catch(&mut || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    });
    match out {
        Some(out) => Ok(out),
        None => Err(hook_panicked()),
    }
}

#[cold]
fn hook_panicked() -> ToolError {
    ToolError::internal(
        "HOOK_PANICKED",
        "the tool failed unexpectedly while checking the arguments",
    )
}

#[cold]
fn type_mismatch() -> ToolError {
    ToolError::internal(
        "ARGUMENTS_TYPE_MISMATCH",
        "the registry handed a tool arguments of another type",
    )
}

/// Runs `f`, containing a panic; whether it returned is told by what it wrote.
fn catch(f: &mut dyn FnMut()) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
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
