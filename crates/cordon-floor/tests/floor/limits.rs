//! Hostile sizes and shapes: the floor answers quickly, never overflows its stack, and refuses
//! what it will not examine instead of allowing it.

use std::time::{Duration, Instant};

use cordon_floor::{Floor, FloorConfig, Rule};

/// Far above what a linear pass needs even in a debug build on a busy machine; a quadratic
/// blow-up takes minutes.
const SLOW: Duration = Duration::from_secs(60);

fn timed(command: &str) -> Option<Rule> {
    let floor = Floor::new(FloorConfig::default());
    let start = Instant::now();
    let rule = floor.check(command).rule();
    let took = start.elapsed();
    assert!(took < SLOW, "{} bytes took {took:?}", command.len());
    rule
}

#[test]
fn long_inputs_are_linear() {
    assert_eq!(timed(&"echo a; ".repeat(50_000)), None);
    assert_eq!(timed(&format!("echo {}", "a".repeat(1_000_000))), None);
    assert_eq!(timed(&format!("{}cat", "cat | ".repeat(20_000))), None);
    assert_eq!(
        timed(&format!(
            "python3 -c \"{}pass\"",
            "while True: ".repeat(50_000)
        )),
        None
    );
    let script = format!("cat <<'EOF' > big.sh\n{}EOF\n", "rm -rf /\n".repeat(50_000));
    assert_eq!(timed(&script), None);
    // The dangerous command at the end of a long line is still found.
    assert_eq!(
        timed(&format!("{}rm -rf /", "echo a; ".repeat(50_000))),
        Some(Rule::RecursiveDelete)
    );
}

#[test]
fn deep_nesting_is_refused_not_followed() {
    for command in [
        format!("echo {}x{}", "$(".repeat(10_000), ")".repeat(10_000)),
        format!("{}rm -rf /tmp/x{}", "(".repeat(10_000), ")".repeat(10_000)),
        format!("echo {}x{}", "${a:-".repeat(10_000), "}".repeat(10_000)),
        format!("{}ls", "nice ".repeat(1_000)),
        format!("{}x{}", "f(){ ".repeat(5_000), "; }".repeat(5_000)),
        "sh -c \"sh -c \\\"".repeat(50),
        format!("echo {}", "`echo ".repeat(5_000)),
    ] {
        let rule = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || timed(&command))
            .unwrap()
            .join()
            .expect("the floor overflowed a 2 MiB stack");
        assert!(matches!(rule, Some(Rule::NestingDepth) | None), "{rule:?}");
    }
}

#[test]
fn readings_past_the_cap_are_refused() {
    assert_eq!(
        timed(&format!("rm -rf {}", "${a:-x}${b:-y}".repeat(10))),
        Some(Rule::TooComplex)
    );
    assert_eq!(
        timed(&format!("ls {}", "{a,b}".repeat(12))),
        Some(Rule::TooComplex)
    );
    assert_eq!(
        timed(&format!("timeout {}x ls", "-Z ".repeat(30))),
        Some(Rule::TooComplex)
    );
}
