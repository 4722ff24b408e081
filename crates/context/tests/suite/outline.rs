use plumb_context::outline::{DefKind, Definition, definitions};
use plumb_context::syntax::Language;
use pretty_assertions::assert_eq;

fn def(kind: DefKind, name: &str, line: usize, depth: usize) -> Definition {
    Definition {
        kind,
        name: name.to_string(),
        line,
        depth,
    }
}

#[test]
fn python_definitions() {
    let source = r#"import os

TAX_RATE = 0.2
counter = 0


@dataclass
class InvoiceCalculator:
    RATE = 1

    def __init__(self, lines):
        self.lines = lines

    @property
    def total(self):
        def inner():
            pass
        return sum(self.lines)

    class Meta:
        def hidden(self):
            pass


async def compute_totals(invoices):
    return [i.total for i in invoices]
"#;
    let actual = definitions(Language::Python, source);
    let expected = vec![
        def(DefKind::Const, "TAX_RATE", 3, 0),
        def(DefKind::Class, "InvoiceCalculator", 8, 0),
        def(DefKind::Method, "__init__", 11, 1),
        def(DefKind::Method, "total", 15, 1),
        def(DefKind::Class, "Meta", 20, 1),
        def(DefKind::Function, "compute_totals", 25, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn rust_definitions() {
    let source = r#"use std::fmt;

pub const MAX: usize = 3;
static NAME: &str = "x";

#[derive(Debug)]
pub struct Invoice {
    lines: Vec<u32>,
}

enum Kind { A, B }

pub trait Total {
    fn total(&self) -> u32;
    fn twice(&self) -> u32 { self.total() * 2 }
}

impl Invoice {
    pub const ZERO: u32 = 0;
    pub fn new() -> Self { Invoice { lines: Vec::new() } }
}

impl fmt::Display for Invoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { Ok(()) }
}

type Lines = Vec<u32>;

macro_rules! total { () => {} }

mod tests {
    fn hidden() {}
}

fn main() {}
"#;
    let actual = definitions(Language::Rust, source);
    let expected = vec![
        def(DefKind::Const, "MAX", 3, 0),
        def(DefKind::Static, "NAME", 4, 0),
        def(DefKind::Struct, "Invoice", 7, 0),
        def(DefKind::Enum, "Kind", 11, 0),
        def(DefKind::Trait, "Total", 13, 0),
        def(DefKind::Method, "total", 14, 1),
        def(DefKind::Method, "twice", 15, 1),
        def(DefKind::Impl, "Invoice", 18, 0),
        def(DefKind::Const, "ZERO", 19, 1),
        def(DefKind::Method, "new", 20, 1),
        def(DefKind::Impl, "fmt::Display for Invoice", 23, 0),
        def(DefKind::Method, "fmt", 24, 1),
        def(DefKind::Type, "Lines", 27, 0),
        def(DefKind::Macro, "total", 29, 0),
        def(DefKind::Module, "tests", 31, 0),
        def(DefKind::Function, "main", 35, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn javascript_definitions() {
    let source = r#"import x from "y";

export const TAX_RATE = 0.2;
let notConst = 1;

export function computeTotals(invoices) {
  return invoices.map((i) => i.total);
}

function* ids() {}

export default class InvoiceCalculator extends Base {
  total() {
    return 1;
  }
  static create() {}
  handleClick = () => {};
  count = 0;
}

const format = (n) => n.toFixed(2);
var legacy = function () {};
const Widget = class {};
"#;
    let actual = definitions(Language::JavaScript, source);
    let expected = vec![
        def(DefKind::Const, "TAX_RATE", 3, 0),
        def(DefKind::Function, "computeTotals", 6, 0),
        def(DefKind::Function, "ids", 10, 0),
        def(DefKind::Class, "InvoiceCalculator", 12, 0),
        def(DefKind::Method, "total", 13, 1),
        def(DefKind::Method, "create", 16, 1),
        def(DefKind::Method, "handleClick", 17, 1),
        def(DefKind::Function, "format", 21, 0),
        def(DefKind::Function, "legacy", 22, 0),
        def(DefKind::Class, "Widget", 23, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn typescript_definitions() {
    let source = r#"export interface Invoice {
  total(): number;
}

export type Lines = number[];

enum Kind { A, B }

export abstract class Base {
  abstract total(): number;
  protected name: string = "";
  helper = (x: number): number => x;
}

namespace Billing {
  export const x = 1;
}

declare function external(x: number): void;

export const computeTotals = async (invoices: Invoice[]): Promise<number> => 0;
"#;
    let actual = definitions(Language::TypeScript, source);
    let expected = vec![
        def(DefKind::Interface, "Invoice", 1, 0),
        def(DefKind::Type, "Lines", 5, 0),
        def(DefKind::Enum, "Kind", 7, 0),
        def(DefKind::Class, "Base", 9, 0),
        def(DefKind::Method, "total", 10, 1),
        def(DefKind::Method, "helper", 12, 1),
        def(DefKind::Module, "Billing", 15, 0),
        def(DefKind::Function, "external", 19, 0),
        def(DefKind::Function, "computeTotals", 21, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn tsx_definitions() {
    let source = r#"type Props = { total: number };

export function Total({ total }: Props) {
  return <span className="total">{total}</span>;
}

export const Row = (props: Props) => <div><Total {...props} /></div>;
"#;
    let actual = definitions(Language::Tsx, source);
    let expected = vec![
        def(DefKind::Type, "Props", 1, 0),
        def(DefKind::Function, "Total", 3, 0),
        def(DefKind::Function, "Row", 7, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn go_definitions() {
    let source = r#"package billing

import "fmt"

const (
	TaxRate = 0.2
	a, b    = 1, 2
)

type Invoice struct {
	Lines []int
}

type Totaler interface {
	Total() int
}

type Cents int

type Alias = Invoice

func (i *Invoice) Total() int {
	return 0
}

func ComputeTotals(invoices []Invoice) int {
	fmt.Println()
	return 0
}
"#;
    let actual = definitions(Language::Go, source);
    let expected = vec![
        def(DefKind::Const, "TaxRate", 6, 0),
        def(DefKind::Const, "a", 7, 0),
        def(DefKind::Const, "b", 7, 0),
        def(DefKind::Struct, "Invoice", 10, 0),
        def(DefKind::Interface, "Totaler", 14, 0),
        def(DefKind::Type, "Cents", 18, 0),
        def(DefKind::Type, "Alias", 20, 0),
        def(DefKind::Method, "Total", 22, 0),
        def(DefKind::Function, "ComputeTotals", 26, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn java_definitions() {
    let source = r#"package billing;

import java.util.List;

public class InvoiceCalculator {
    private final List<Integer> lines;

    public InvoiceCalculator(List<Integer> lines) {
        this.lines = lines;
    }

    public int total() {
        return 0;
    }

    static class Line {
        int amount() { return 0; }
    }
}

interface Totaler {
    int total();
}

enum Kind {
    A, B;

    boolean isA() { return this == A; }
}

record Pair(int a, int b) {}
"#;
    let actual = definitions(Language::Java, source);
    let expected = vec![
        def(DefKind::Class, "InvoiceCalculator", 5, 0),
        def(DefKind::Method, "InvoiceCalculator", 8, 1),
        def(DefKind::Method, "total", 12, 1),
        def(DefKind::Class, "Line", 16, 1),
        def(DefKind::Interface, "Totaler", 21, 0),
        def(DefKind::Method, "total", 22, 1),
        def(DefKind::Enum, "Kind", 25, 0),
        def(DefKind::Method, "isA", 28, 1),
        def(DefKind::Class, "Pair", 31, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn c_definitions() {
    let source = r#"#include <stdio.h>

typedef struct {
    int cents;
} Money;

struct line {
    int amount;
};

enum kind { GOODS, SERVICES };

typedef unsigned long size;

static int total(const struct line *lines, int n);

int *first(int *xs) { return xs; }

static int total(const struct line *lines, int n) {
    return n;
}

#ifdef WITH_TAX
int tax(int amount) { return amount / 10; }
#endif
"#;
    let actual = definitions(Language::C, source);
    let expected = vec![
        def(DefKind::Struct, "Money", 3, 0),
        def(DefKind::Struct, "line", 7, 0),
        def(DefKind::Enum, "kind", 11, 0),
        def(DefKind::Type, "size", 13, 0),
        def(DefKind::Function, "first", 17, 0),
        def(DefKind::Function, "total", 19, 0),
        def(DefKind::Function, "tax", 24, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn cpp_definitions() {
    let source = r#"#include <vector>

namespace billing {

class Ledger {
public:
    Ledger();
    int total() const { return 0; }
    void post(int amount);
private:
    std::vector<int> lines_;
};

template <typename T>
T twice(T x) { return x + x; }

void Ledger::post(int amount) { lines_.push_back(amount); }

}  // namespace billing

extern "C" {
int c_total(void);
}
"#;
    let actual = definitions(Language::Cpp, source);
    let expected = vec![
        def(DefKind::Module, "billing", 3, 0),
        def(DefKind::Class, "Ledger", 5, 0),
        def(DefKind::Method, "Ledger", 7, 1),
        def(DefKind::Method, "total", 8, 1),
        def(DefKind::Method, "post", 9, 1),
        def(DefKind::Function, "twice", 15, 0),
        def(DefKind::Function, "Ledger::post", 17, 0),
        def(DefKind::Function, "c_total", 22, 0),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn broken_source_still_yields_what_parsed() {
    let source = "def ok():\n    pass\n\ndef broken(:\n    pass\n\nclass After:\n    pass\n";
    let actual: Vec<String> = definitions(Language::Python, source)
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(actual, ["ok", "broken", "After"]);
}
