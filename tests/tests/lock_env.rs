//! `TOOL_CONTRACT_LOCK` read by `tool_contract::lock::check`, in a binary of its own: the
//! environment is process-wide, and no other test may see it set.

use tool_contract::lock::{check, Lock, LockError};
use tool_contract::Registry;
use tool_contract_examples::{SearchDocuments, SendEmail};

#[test]
fn the_env_var_rewrites_the_lock_and_other_values_are_refused() {
    let path = std::env::temp_dir().join(format!("tc-lock-env-{}.json", std::process::id()));
    let one = Registry::builder().tool(SearchDocuments).build().unwrap();
    let two = Registry::builder()
        .tool(SearchDocuments)
        .tool(SendEmail)
        .build()
        .unwrap();

    std::env::set_var("TOOL_CONTRACT_LOCK", "overwrite");
    assert!(check(&one, &path).unwrap().rewritten);
    std::env::remove_var("TOOL_CONTRACT_LOCK");
    check(&one, &path).unwrap();
    assert!(matches!(check(&two, &path), Err(LockError::Mismatch(_))));

    std::env::set_var("TOOL_CONTRACT_LOCK", "overwrite");
    check(&two, &path).unwrap();
    assert_eq!(Lock::read(&path).unwrap(), Lock::from_registry(&two));

    std::env::set_var("TOOL_CONTRACT_LOCK", "yes");
    let err = check(&two, &path).unwrap_err();
    assert_eq!(
        err.to_string(),
        "TOOL_CONTRACT_LOCK=\"yes\" is not understood; use TOOL_CONTRACT_LOCK=overwrite or unset it"
    );
    std::env::remove_var("TOOL_CONTRACT_LOCK");
    std::fs::remove_file(&path).unwrap();
}
