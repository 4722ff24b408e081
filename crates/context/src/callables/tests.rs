use pretty_assertions::assert_eq;

use super::*;

/// (owner, name, nested) of each callable, and the text of the one named `span_of`.
fn found(
    lang: Language,
    source: &str,
    span_of: &str,
) -> (Vec<(Option<String>, String, bool)>, String) {
    let all = callables(lang, source);
    let text = all
        .iter()
        .find(|c| c.name == span_of)
        .and_then(|c| source.get(c.span.clone()))
        .unwrap_or_default()
        .to_string();
    (
        all.into_iter()
            .map(|c| (c.owner, c.name, c.nested))
            .collect(),
        text,
    )
}

fn top(name: &str) -> (Option<String>, String, bool) {
    (None, name.to_string(), false)
}

fn of(owner: &str, name: &str, nested: bool) -> (Option<String>, String, bool) {
    (Some(owner.to_string()), name.to_string(), nested)
}

#[test]
fn python_nested_functions_and_methods_of_nested_classes() {
    let source = "class Shop:\n    class Till:\n        def open(self):\n            pass\n\n    @property\n    def total(self):\n        return 1\n\n\ndef count_nums(arr):\n    def digits_sum(n):\n        return n\n    return len([digits_sum(i) for i in arr])\n";
    let (names, span) = found(Language::Python, source, "total");
    assert_eq!(
        names,
        vec![
            of("Till", "open", false),
            of("Shop", "total", false),
            top("count_nums"),
            of("count_nums", "digits_sum", true),
        ]
    );
    assert_eq!(span, "def total(self):\n        return 1");
}

#[test]
fn rust_functions_in_modules_impls_and_traits() {
    let source = "pub fn add(a: i32) -> i32 { a }\n\nimpl Display for Invoice {\n    fn fmt(&self) {}\n}\n\ntrait Priced {\n    fn price(&self) -> u32;\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1), 1);\n    }\n}\n";
    let (names, span) = found(Language::Rust, source, "adds");
    assert_eq!(
        names,
        vec![
            top("add"),
            of("Display for Invoice", "fmt", false),
            of("Priced", "price", false),
            of("tests", "adds", false),
        ]
    );
    assert_eq!(
        span,
        "fn adds() {\n        assert_eq!(super::add(1), 1);\n    }"
    );
}

#[test]
fn go_methods_are_owned_by_their_receiver() {
    let source = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc (s *Store) Total() int {\n\treturn 0\n}\n\nfunc (l List[T]) Len() int {\n\treturn 0\n}\n";
    let (names, _) = found(Language::Go, source, "Total");
    assert_eq!(
        names,
        vec![
            top("Add"),
            of("Store", "Total", false),
            of("List", "Len", false)
        ]
    );
}

#[test]
fn javascript_functions_in_every_form() {
    let source = "function add(a, b) {\n  return a - b;\n}\nconst total = (xs) => xs.length;\nclass Cart {\n  count() { return 0; }\n  handle = () => {};\n}\nconst api = {\n  fetch() {},\n  parse: function (x) { return x; },\n};\nmodule.exports.sum = function (xs) { return 0; };\nCart.prototype.empty = function () {};\n";
    let (names, span) = found(Language::JavaScript, source, "total");
    assert_eq!(
        names,
        vec![
            top("add"),
            top("total"),
            of("Cart", "count", false),
            of("Cart", "handle", false),
            top("fetch"),
            top("parse"),
            top("sum"),
            of("Cart", "empty", false),
        ]
    );
    assert_eq!(span, "const total = (xs) => xs.length;");
}

#[test]
fn typescript_and_java_methods() {
    let ts = "export function add(a: number): number { return a; }\nnamespace Tax {\n  export function rate(): number { return 0; }\n}\n";
    let (names, _) = found(Language::TypeScript, ts, "add");
    assert_eq!(names, vec![top("add"), of("Tax", "rate", false)]);
    let java = "class Calc {\n  Calc() {}\n  int add(int a) { return a; }\n  static class Inner {\n    void run() {}\n  }\n}\n";
    let (names, _) = found(Language::Java, java, "add");
    assert_eq!(
        names,
        vec![
            of("Calc", "Calc", false),
            of("Calc", "add", false),
            of("Inner", "run", false),
        ]
    );
}

#[test]
fn c_and_cpp_functions_and_methods_with_their_owners() {
    let c = "static int total(int n);\n\nint *first(int *xs) { return xs; }\n\nstatic int total(int n) {\n    return n;\n}\n";
    let (names, span) = found(Language::C, c, "total");
    assert_eq!(names, vec![top("first"), top("total")]);
    assert_eq!(span, "static int total(int n) {\n    return n;\n}");

    let cpp = "namespace billing {\nclass Ledger {\n  int total() const { return 0; }\n};\nvoid Ledger::post(int a) { (void)a; }\n}\n";
    let (names, span) = found(Language::Cpp, cpp, "post");
    assert_eq!(
        names,
        vec![of("Ledger", "total", false), of("Ledger", "post", false)]
    );
    assert_eq!(span, "void Ledger::post(int a) { (void)a; }");
}
