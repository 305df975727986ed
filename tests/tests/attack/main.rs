//! The prompt-injection suite: four domains of tools, benign user tasks and attacker goals
//! placed in tool outputs, run through the real registry pipeline with flow control on (a
//! session) and off (no session). `cargo test -p tool-contract-tests --test attack -- --nocapture`
//! prints the results.

mod banking;
mod chat;
mod harness;
mod workspace;

use harness::{run_suite, Mode, Tally};

#[test]
fn flow_control_stops_every_injection_and_keeps_the_tasks() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for mode in [Mode::On, Mode::Off] {
        let mut total = Tally::default();
        let tallies = vec![
            ("workspace", run_suite(&rt, &workspace::suite(), mode)),
            ("banking", run_suite(&rt, &banking::suite(), mode)),
            ("chat", run_suite(&rt, &chat::suite(), mode)),
        ];
        for (name, tally) in &tallies {
            println!("{}", tally.line(name, mode));
            for why in &tally.false_refusals {
                println!("  false refusal: {why}");
            }
            if mode == Mode::On {
                for pair in &tally.successes {
                    println!("  attack succeeded: {pair}");
                }
            }
            total.add(tally);
        }
        println!("{}", total.line("total", mode));
    }
}
