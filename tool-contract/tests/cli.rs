//! The `tool-contract` command, run as a user runs it: its output and exit code for each
//! situation, against the snapshots in `tests/cli/`. `SNAPSHOTS=overwrite cargo test -p
//! tool-contract --features cli --test cli` rewrites them; review the diff.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use snapbox::cmd::{cargo_bin, Command};
use snapbox::{file, str};
use tool_contract::lock::Lock;
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchDocumentsArgs {
    /// Words to find: a search expression, not an instruction.
    #[schemars(length(min = 2, max = 200))]
    query: String,
    /// How many hits to return.
    #[serde(default = "eight")]
    #[schemars(range(min = 1, max = 20))]
    top_k: u8,
}

fn eight() -> u8 {
    8
}

#[derive(Serialize, JsonSchema)]
struct Hits {
    /// Source ids, best first.
    items: Vec<String>,
}

/// Finds documents the current user may read. Not for web searches; use `read_document` when
/// you know the source id.
#[tool(
    version = "1.4.0",
    effect = "pure_read",
    timeout_ms = 500,
    capabilities("documents:search")
)]
async fn search_documents(args: SearchDocumentsArgs) -> Result<Hits, ToolError> {
    Ok(Hits {
        items: vec![args.query; usize::from(args.top_k.min(1))],
    })
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct DeleteDocumentArgs {
    /// The document to delete.
    #[schemars(length(min = 1, max = 100))]
    source_id: String,
}

#[derive(Serialize, JsonSchema)]
struct Deletion {
    /// Whether it existed.
    deleted: bool,
}

/// Deletes a document for good. Use it only when the user asks to delete one; not to hide
/// search results. Every call needs approval.
#[tool(
    version = "1.0.0",
    effect = "irreversible_write",
    timeout_ms = 1000,
    approval,
    capabilities("documents:delete"),
    retry(max_attempts = 1),
    idempotency(from = [source_id])
)]
async fn delete_document(args: DeleteDocumentArgs) -> Result<Deletion, ToolError> {
    Ok(Deletion {
        deleted: !args.source_id.is_empty(),
    })
}

/// The two tools' contracts as JSON, as `--contracts` prints them.
fn contracts() -> Vec<Value> {
    [SearchDocuments::contract(), DeleteDocument::contract()]
        .into_iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect()
}

/// A temp dir holding `old.json` and `new.json`, the command's working directory.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    /// `old` as a lock, and `new` as `edit` leaves the contracts.
    fn new(edit: impl FnOnce(&mut Vec<Value>)) -> Case {
        let case = Case {
            dir: tempfile::tempdir().unwrap(),
        };
        let old = contracts();
        let mut new = old.clone();
        edit(&mut new);
        case.write_lock("old.json", &old);
        case.write_lock("new.json", &new);
        case
    }

    fn write_lock(&self, name: &str, contracts: &[Value]) {
        let lock = Lock::from_json(&Value::Array(contracts.to_vec()).to_string()).unwrap();
        lock.write(&self.path(name)).unwrap();
    }

    fn write(&self, name: &str, value: &Value) {
        std::fs::write(
            self.path(name),
            serde_json::to_string_pretty(value).unwrap(),
        )
        .unwrap();
    }

    fn read(&self, name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path(name)).unwrap()).unwrap()
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn cmd(&self) -> Command {
        Command::new(cargo_bin!("tool-contract")).current_dir(self.dir.path())
    }

    fn diff(&self) -> Command {
        self.cmd().args(["diff", "old.json", "new.json"])
    }
}

fn tool<'a>(contracts: &'a mut [Value], name: &str) -> &'a mut Value {
    contracts.iter_mut().find(|c| c["name"] == name).unwrap()
}

#[test]
fn help_says_what_diff_does_and_how_it_exits() {
    Command::new(cargo_bin!("tool-contract"))
        .args(["diff", "--help"])
        .assert()
        .success()
        .stdout_eq(file!["cli/help.txt"]);
}

#[test]
fn bumps_that_cover_their_changes_pass() {
    let case = Case::new(|c| {
        let search = tool(c, "search_documents");
        search["version"] = json!("1.5.0");
        search["input_schema"]["properties"]["top_k"]["maximum"] = json!(50);
        search["description"] = json!("Finds documents the current user may read.");
        let delete = tool(c, "delete_document");
        delete["version"] = json!("1.0.1");
        delete["input_schema"]["properties"]["source_id"]["description"] = json!("Its id.");
    });
    case.diff()
        .assert()
        .success()
        .stdout_eq(file!["cli/covered.md"])
        .stderr_eq(str![""]);
}

#[test]
fn a_bump_too_small_fails_with_the_smallest_passing_version() {
    let case = Case::new(|c| {
        let search = tool(c, "search_documents");
        search["version"] = json!("1.4.1");
        search["input_schema"]["properties"]["lang"] = json!({"type": "string"});
        search["input_schema"]["required"] = json!(["query", "lang"]);
        search["timeout_ms"] = json!(800);
    });
    case.diff()
        .assert()
        .code(1)
        .stdout_eq(file!["cli/too_small.md"])
        .stderr_eq(str![""]);
}

#[test]
fn json_output_has_one_object_per_change_then_the_bump_per_tool() {
    let case = Case::new(|c| {
        let search = tool(c, "search_documents");
        search["version"] = json!("1.4.1");
        search["input_schema"]["properties"]["lang"] = json!({"type": "string"});
        search["input_schema"]["required"] = json!(["query", "lang"]);
        search["timeout_ms"] = json!(800);
    });
    let output = case
        .diff()
        .args(["--format", "json"])
        .assert()
        .code(1)
        .stdout_eq(file!["cli/too_small.json"])
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&output).unwrap();
    assert_eq!(report["ok"], false);
    for change in report["changes"].as_array().unwrap() {
        let keys: Vec<&str> = change
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "tool",
                "old_version",
                "new_version",
                "pointer",
                "change",
                "class",
                "reason"
            ]
        );
    }
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools[0]["required_bump"], "major");
    assert_eq!(tools[0]["made_bump"], "patch");
    assert_eq!(tools[0]["smallest_passing_version"], "2.0.0");
}

#[test]
fn a_changed_contract_with_the_same_version_fails() {
    let case = Case::new(|c| {
        tool(c, "delete_document")["timeout_ms"] = json!(300);
    });
    case.diff()
        .assert()
        .code(1)
        .stdout_eq(file!["cli/same_version.md"]);
}

/// A security change passes only with a major bump and a reviewer's note in NEW's entry.
#[test]
fn security_changes_need_a_major_bump_and_a_reviewers_note() {
    let case = Case::new(|c| {
        let delete = tool(c, "delete_document");
        delete["version"] = json!("2.0.0");
        delete["approval"] = json!("never");
        delete["authorization"]["capabilities"] = json!([]);
    });
    case.diff()
        .assert()
        .code(1)
        .stdout_eq(file!["cli/security.md"]);

    let mut new = case.read("new.json");
    new["tools"][0]["review"] =
        json!({"note": "Approved by security (SEC-41): deletions are recoverable for 30 days."});
    case.write("new.json", &new);
    case.diff()
        .assert()
        .success()
        .stdout_eq(file!["cli/reviewed.md"]);

    // An empty note, as the lock rewrite leaves it, is no note.
    new["tools"][0]["review"] = json!({"note": " "});
    case.write("new.json", &new);
    case.diff().assert().code(1);
}

/// `--contracts` output works as either side, and `-` reads it from stdin.
#[test]
fn lists_of_contracts_compare_too_and_stdin_is_read() {
    let case = Case::new(|c| {
        let search = tool(c, "search_documents");
        search["version"] = json!("1.5.0");
        search["output_schema"]["properties"]["total"] = json!({"type": "integer"});
    });
    case.write("old-contracts.json", &Value::Array(contracts()));
    let text = std::fs::read_to_string(case.path("old-contracts.json")).unwrap();
    case.cmd()
        .args(["diff", "-", "new.json"])
        .stdin(text)
        .assert()
        .success()
        .stdout_eq(file!["cli/contracts.md"]);
}

#[test]
fn a_removed_version_is_reported_without_failing() {
    let case = Case::new(|_| {});
    let mut v2 = contracts();
    tool(&mut v2, "search_documents")["version"] = json!("2.0.0");
    tool(&mut v2, "search_documents")["input_schema"]["required"] = json!(["query", "top_k"]);
    let mut both = contracts();
    both.push(v2[0].clone());
    case.write_lock("old.json", &both);
    case.write_lock("new.json", &v2);
    case.diff()
        .assert()
        .success()
        .stdout_eq(file!["cli/removed_version.md"]);
}

#[test]
fn a_timeout_raised_past_the_callers_deadline_is_major() {
    let case = Case::new(|c| {
        let search = tool(c, "search_documents");
        search["version"] = json!("1.5.0");
        search["timeout_ms"] = json!(5000);
    });
    case.diff().assert().success();
    case.diff()
        .args(["--caller-deadline-ms", "2000"])
        .assert()
        .code(1)
        .stdout_eq(file!["cli/deadline.md"]);
}

/// A format-1 lock (hashes only) is read; its changes count as major, with a note on stderr.
#[test]
fn a_hash_only_lock_is_compared_by_hash_with_a_note() {
    let case = Case::new(|c| {
        let search = tool(c, "search_documents");
        search["version"] = json!("1.5.0");
        search["timeout_ms"] = json!(900);
    });
    let mut old = case.read("old.json");
    old["format"] = json!(1);
    for entry in old["tools"].as_array_mut().unwrap() {
        entry.as_object_mut().unwrap().remove("contract");
    }
    case.write("old.json", &old);
    case.diff()
        .assert()
        .code(1)
        .stdout_eq(file!["cli/hash_only.md"])
        .stderr_eq(str![[r#"
note: OLD (old.json) is a format-1 lock (hashes only): its changes are found by hash and cannot be classified, so each counts as major; rewrite it with TOOL_CONTRACT_LOCK=overwrite

"#]]);
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let case = Case::new(|_| {});
    case.cmd()
        .args(["diff", "missing.json", "new.json"])
        .assert()
        .code(2)
        .stdout_eq(str![""])
        .stderr_eq(str![[r#"
error: cannot read OLD (missing.json): No such file or directory (os error 2)

"#]]);
    std::fs::write(case.path("junk.json"), "{\"tools\": 3}").unwrap();
    case.cmd()
        .args(["diff", "old.json", "junk.json"])
        .assert()
        .code(2)
        .stderr_eq(str![[r#"
error: NEW (junk.json) is not a contract lock nor a list of contracts: no `format` number: this is neither a contract lock nor a list of contracts

"#]]);
    // A kept contract edited by hand is refused.
    let mut new = case.read("new.json");
    new["tools"][0]["contract"]["approval"] = json!("never");
    case.write("new.json", &new);
    case.diff()
        .assert()
        .code(2)
        .stderr_eq(str![[r#"
error: NEW (new.json) is not a contract lock nor a list of contracts: `delete_document` 1.0.0: the kept contract does not match the entry's name, version or hashes (was the lock edited by hand?)

"#]]);
    case.cmd()
        .args(["diff", "-", "-"])
        .assert()
        .code(2)
        .stderr_eq(str![[r#"
error: only one of OLD and NEW can be read from stdin

"#]]);
    case.cmd()
        .args(["diff", "old.json", "new.json", "--format", "yaml"])
        .assert()
        .code(2)
        .stderr_eq(str![[r#"
error: invalid value 'yaml' for '--format <FORMAT>'
  [possible values: table, json]

For more information, try '--help'.

"#]]);
    assert!(Path::new(&case.path("old.json")).exists());
}
