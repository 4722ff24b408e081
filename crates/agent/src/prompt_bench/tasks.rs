//! The one-file tasks the prompt is measured and snapshotted on: the same bug (a volume tier
//! that applies only past its threshold, not from it) in Python, Rust and JavaScript, each with
//! a ticket and the twelve replies the scripted model gives.

use std::path::{Path, PathBuf};

use plumb_model::ScriptTurn;
use plumb_protocol::ToolCall;
use serde_json::{Value, json};

pub(super) struct Task {
    /// The fixture's folder under `fixtures/`, also the run's repository label.
    pub name: &'static str,
    pub ticket: &'static str,
    pub script: fn() -> Vec<ScriptTurn>,
}

impl Task {
    pub fn fixture(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(self.name)
            .join("repo")
    }
}

pub(super) fn python() -> Task {
    Task {
        name: "one_file_task",
        ticket: "Orders of exactly 50 or 100 units get the lower volume discount.\n\nAn order of 100 units at 1.00 each should cost 85.00 (15% off), but apply_discounts returns 90.00. The same happens at 50 units: 45.00 expected, 50.00 returned. Orders of 60 or 150 units are right.",
        script: python_script,
    }
}

pub(super) fn rust() -> Task {
    Task {
        name: "one_file_rust",
        ticket: "Orders of exactly 50 or 100 units get the lower volume discount.\n\nAn order of 100 units at 1.00 each should cost 85.00 (15% off), but apply_discounts returns 90.00. The same happens at 50 units: 45.00 expected, 50.00 returned. Orders of 60 or 150 units are right.",
        script: rust_script,
    }
}

pub(super) fn javascript() -> Task {
    Task {
        name: "one_file_js",
        ticket: "Orders of exactly 50 or 100 units get the lower volume discount.\n\nAn order of 100 units at 1.00 each should cost 85.00 (15% off), but applyDiscounts returns 90. The same happens at 50 units: 45 expected, 50 returned. Orders of 60 or 150 units are right.",
        script: javascript_script,
    }
}

/// One reply: a thought and one call (its id given by [`numbered`]).
fn turn(thought: &str, name: &str, arguments: Value) -> ScriptTurn {
    ScriptTurn {
        content: thought.to_string(),
        tool_calls: vec![ToolCall {
            id: String::new(),
            name: name.to_string(),
            arguments,
        }],
        alternatives: Vec::new(),
    }
}

/// The replies with their calls numbered in order, the same on every run.
fn numbered(mut turns: Vec<ScriptTurn>) -> Vec<ScriptTurn> {
    for (n, turn) in turns.iter_mut().enumerate() {
        for call in &mut turn.tool_calls {
            call.id = format!("call_{n}");
        }
    }
    turns
}

/// `apply_discounts` as the model rewrites it, with `tiers` the volume check it tries.
fn python_apply_discounts(tiers: &str) -> String {
    format!(
        r#"def apply_discounts(order):
    """The order's total after discounts, rounded to cents.

    The volume rate, the coupon rate and the loyalty bonus add up, but the
    sum never passes MAX_DISCOUNT. Lines with a zero price are free samples
    and count neither for the volume tier nor for the total.
    """
    paid_lines = [line for line in order.lines if line.unit_price > 0]
    quantity = 0
    subtotal = 0.0
    for line in paid_lines:
        quantity += line.quantity
        subtotal += line_total(line)
{tiers}
    if order.coupon:
        rate += coupon_rate(order.coupon)
    if order.loyal:
        rate += LOYALTY_BONUS
    if rate > MAX_DISCOUNT:
        rate = MAX_DISCOUNT
    discount = subtotal * rate
    total = subtotal - discount
    if total < 0:
        total = 0.0
    return round(total, 2)
"#
    )
}

/// Twelve replies as the embedded model gives them on this task: it reads, runs the failing
/// tests, rewrites the whole function twice without fixing it, reads the same file again, and
/// gets it right on the third rewrite; then a test and `done`.
fn python_script() -> Vec<ScriptTurn> {
    let wrong_1 = python_apply_discounts(
        "    rate = volume_rate(quantity)\n    if quantity == 100:\n        rate = 0.15",
    );
    let wrong_2 = python_apply_discounts(
        "    rate = 0.0\n    for threshold, tier_rate in VOLUME_TIERS:\n        if quantity > threshold or quantity == 100:\n            rate = tier_rate\n            break",
    );
    let right = python_apply_discounts(
        "    rate = 0.0\n    for threshold, tier_rate in VOLUME_TIERS:\n        if quantity >= threshold:\n            rate = tier_rate\n            break",
    );
    numbered(vec![
        turn(
            "The ticket is about apply_discounts in pricing/discounts.py. I read the file first.",
            "read_file",
            json!({"path": "pricing/discounts.py"}),
        ),
        turn("I run the tests to see which fail.", "run_tests", json!({})),
        turn(
            "The tiers come from VOLUME_TIERS; I look where it is used.",
            "search_code",
            json!({"query": "VOLUME_TIERS"}),
        ),
        turn(
            "volume_rate misses the tier at exactly the threshold; I pass one more unit.",
            "replace_function",
            json!({"path": "pricing/discounts.py", "name": "apply_discounts", "code": wrong_1}),
        ),
        turn(
            "I run the volume tests again.",
            "run_tests",
            json!({"tests": ["tests/test_discounts.py"]}),
        ),
        turn(
            "The tests still fail at 50 units; I read the function again.",
            "read_file",
            json!({"path": "pricing/discounts.py", "start_line": 40}),
        ),
        turn(
            "I write the tier check inside apply_discounts.",
            "replace_function",
            json!({"path": "pricing/discounts.py", "name": "apply_discounts", "code": wrong_2}),
        ),
        turn(
            "I look at the tests that fail.",
            "read_file",
            json!({"path": "tests/test_discounts.py"}),
        ),
        turn(
            "I read the discounts file once more to see the tiers.",
            "read_file",
            json!({"path": "pricing/discounts.py", "start_line": 40}),
        ),
        turn(
            "A tier applies from its threshold on: the check must be >=.",
            "replace_function",
            json!({"path": "pricing/discounts.py", "name": "apply_discounts", "code": right}),
        ),
        turn(
            "I add a test for exactly 100 units.",
            "edit_file",
            json!({
                "path": "tests/test_discounts.py",
                "old_text": "def test_unknown_coupon():",
                "new_text": "def test_exactly_one_hundred_units_get_fifteen_percent():\n    assert apply_discounts(order((\"a\", 100, 1.0))) == 85.0\n\n\ndef test_unknown_coupon():",
            }),
        ),
        turn(
            "The fix and its test are in place.",
            "done",
            json!({"summary": "A volume tier now applies from its threshold on (>=)."}),
        ),
    ])
}

/// What the Rust and JavaScript scripts differ in: where the code and its tests are, the
/// function's name, how the model writes it, and the test it adds.
struct Steps {
    source: &'static str,
    function: &'static str,
    /// The function as the model rewrites it, with the tier check it tries.
    rewrite: fn(&str) -> String,
    /// `==` in Rust, `===` in JavaScript.
    equals: &'static str,
    /// What `run_tests` is asked to run after the first rewrite.
    rerun: &'static str,
    /// The line the function's window starts at.
    function_line: u32,
    /// The read that shows the failing tests.
    tests_view: Value,
    /// The edit that adds a test: path, old text, new text.
    new_test: (&'static str, &'static str, &'static str),
}

/// The Python script's steps on a compiled-or-node task: the function rewritten twice wrong,
/// then right, a test added beside the others, `done`.
fn script_of(steps: &Steps) -> Vec<ScriptTurn> {
    let Steps {
        source,
        function,
        rewrite,
        equals,
        rerun,
        function_line,
        ..
    } = *steps;
    let (test_path, old_text, new_text) = steps.new_test;
    numbered(vec![
        turn(
            &format!("The ticket is about the volume discount in {source}. I read the file first."),
            "read_file",
            json!({"path": source}),
        ),
        turn("I run the tests to see which fail.", "run_tests", json!({})),
        turn(
            "The tiers come from VOLUME_TIERS; I look where it is used.",
            "search_code",
            json!({"query": "VOLUME_TIERS"}),
        ),
        turn(
            &format!("{function} misses the tier at exactly 100 units."),
            "replace_function",
            json!({"path": source, "name": function, "code": rewrite(&format!("quantity > threshold || quantity {equals} 100"))}),
        ),
        turn(
            "I run the volume tests again.",
            "run_tests",
            json!({"tests": [rerun]}),
        ),
        turn(
            "The test still fails at 50 units; I read the function again.",
            "read_file",
            json!({"path": source, "start_line": function_line}),
        ),
        turn(
            "I add the tier at 50 units too.",
            "replace_function",
            json!({"path": source, "name": function, "code": rewrite(&format!("quantity > threshold || quantity {equals} 50"))}),
        ),
        turn(
            "I look at the tests that fail.",
            "read_file",
            steps.tests_view.clone(),
        ),
        turn(
            &format!("I read {function} once more to see the tiers."),
            "read_file",
            json!({"path": source, "start_line": function_line}),
        ),
        turn(
            "A tier applies from its threshold on: the check must be >=.",
            "replace_function",
            json!({"path": source, "name": function, "code": rewrite("quantity >= threshold")}),
        ),
        turn(
            "I add a test for exactly 100 units.",
            "edit_file",
            json!({"path": test_path, "old_text": old_text, "new_text": new_text}),
        ),
        turn(
            "The fix and its test are in place.",
            "done",
            json!({"summary": "A volume tier now applies from its threshold on (>=)."}),
        ),
    ])
}

/// `volume_rate` as the model rewrites it, with `check` the tier test it tries.
fn rust_volume_rate(check: &str) -> String {
    format!(
        "/// The volume discount for a number of units: the highest tier reached.\npub fn volume_rate(quantity: u32) -> f64 {{\n    for (threshold, rate) in VOLUME_TIERS {{\n        if {check} {{\n            return rate;\n        }}\n    }}\n    0.0\n}}\n"
    )
}

/// The Rust task's script: its tests are the `mod tests` of `src/lib.rs`.
fn rust_script() -> Vec<ScriptTurn> {
    script_of(&Steps {
        source: "src/lib.rs",
        function: "volume_rate",
        rewrite: rust_volume_rate,
        equals: "==",
        rerun: "tests::volume_tier_at_fifty_units",
        function_line: 30,
        tests_view: json!({"path": "src/lib.rs", "start_line": 86}),
        new_test: (
            "src/lib.rs",
            "    #[test]\n    fn invoice_ends_with_the_total() {",
            "    #[test]\n    fn exactly_one_hundred_units_get_fifteen_percent() {\n        assert_eq!(apply_discounts(&order(&[(\"a\", 100, 1.0)])), 85.0);\n    }\n\n    #[test]\n    fn invoice_ends_with_the_total() {",
        ),
    })
}

/// `volumeRate` as the model rewrites it, with `check` the tier test it tries.
fn javascript_volume_rate(check: &str) -> String {
    format!(
        "// The volume discount for a number of units: the highest tier reached.\nfunction volumeRate(quantity) {{\n  for (const [threshold, rate] of VOLUME_TIERS) {{\n    if ({check}) {{\n      return rate;\n    }}\n  }}\n  return 0;\n}}\n"
    )
}

/// The JavaScript task's script: its tests are `test/discounts.test.js`.
fn javascript_script() -> Vec<ScriptTurn> {
    script_of(&Steps {
        source: "src/discounts.js",
        function: "volumeRate",
        rewrite: javascript_volume_rate,
        equals: "===",
        rerun: "test/discounts.test.js",
        function_line: 20,
        tests_view: json!({"path": "test/discounts.test.js"}),
        new_test: (
            "test/discounts.test.js",
            "test('unknown coupon', () => {",
            "test('exactly one hundred units get fifteen percent', () => {\n  assert.strictEqual(applyDiscounts(order([['a', 100, 1]])), 85);\n});\n\ntest('unknown coupon', () => {",
        ),
    })
}
