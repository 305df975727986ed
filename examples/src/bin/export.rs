//! Writes the document service's tools in one prompt-schema dialect, to stdout or a file.
//!
//! ```text
//! cargo run -p tool-contract-examples --bin export -- --dialect openai [--out FILE]
//!     [--non-strict] [--non-strict-fallback]
//! ```
//!
//! Exit codes: 0 written, 1 the export failed (a tool the dialect cannot express), 2 bad flags.

use std::process::ExitCode;

use tool_contract::export::{Dialect, Exporter};
use tool_contract::Registry;

const USAGE: &str = "\
usage: export --dialect <DIALECT> [--out FILE] [--non-strict] [--non-strict-fallback]

  --dialect <DIALECT>      json_schema, openai, openai_responses, anthropic, gemini,
                           gemini_openapi or mcp
  --out FILE               write to FILE instead of stdout
  --non-strict             export without strict mode (openai, anthropic)
  --non-strict-fallback    export a tool strict mode cannot express without strict mode
                           instead of failing (a warning goes to stderr)
  -h, --help               show this help";

#[derive(Debug, PartialEq)]
struct Args {
    dialect: Dialect,
    out: Option<String>,
    strict: bool,
    fallback: bool,
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut dialect = None;
    let mut out = None;
    let mut strict = true;
    let mut fallback = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--dialect" => {
                let v = value("--dialect")?;
                dialect = Some(v.parse::<Dialect>().map_err(|e| e.to_string())?);
            }
            "--out" => out = Some(value("--out")?),
            "--non-strict" => strict = false,
            "--non-strict-fallback" => fallback = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let dialect = dialect.ok_or("--dialect is required")?;
    Ok(Some(Args {
        dialect,
        out,
        strict,
        fallback,
    }))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("error: {msg}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let registry = Registry::builder()
        .toolset(tool_contract_examples::toolset())
        .build()
        .map_err(|e| e.to_string())?;
    let export = Exporter::new(args.dialect)
        .strict(args.strict)
        .fallback_non_strict(args.fallback)
        .export_registry(&registry)
        .map_err(|e| e.to_string())?;
    for warning in &export.warnings {
        eprintln!("warning: {warning}");
    }
    for r in &export.renamed {
        eprintln!("note: `{}` is exported as `{}`", r.tool, r.exported);
    }
    let text = serde_json::to_string_pretty(&export.to_value()).map_err(|e| e.to_string())? + "\n";
    match &args.out {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}")),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Option<Args>, String> {
        parse(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn flags_parse_and_bad_ones_are_named() {
        let a = p(&[
            "--dialect",
            "anthropic",
            "--out=x.json",
            "--non-strict-fallback",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.dialect, Dialect::Anthropic);
        assert_eq!(a.out.as_deref(), Some("x.json"));
        assert!(a.strict && a.fallback);
        assert!(
            !p(&["--dialect=openai", "--non-strict"])
                .unwrap()
                .unwrap()
                .strict
        );
        assert_eq!(p(&["--help"]).unwrap(), None);
        assert_eq!(p(&[]).unwrap_err(), "--dialect is required");
        assert_eq!(p(&["--dialect"]).unwrap_err(), "--dialect needs a value");
        assert!(p(&["--dialect", "gpt"])
            .unwrap_err()
            .contains("unknown dialect `gpt`"));
        assert_eq!(
            p(&["--dialect", "mcp", "--pretty"]).unwrap_err(),
            "unknown argument `--pretty`"
        );
    }
}
