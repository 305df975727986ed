// `execute` takes only a `PreparedCall`, and only `Registry::prepare` can make one: a call that
// skipped validation cannot be built, so it cannot run.
use tool_contract::{PreparedCall, Registry};

async fn run_unchecked(registry: &Registry) {
    let forged = PreparedCall { call_id: "call_1".to_owned() };
    let _ = registry.execute(forged).await;
}

fn main() {
    let _ = run_unchecked;
}
