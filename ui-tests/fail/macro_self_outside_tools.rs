use prism::tool;

struct Calculator;

impl Calculator {
    /// Adds two integers.
    #[tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    let _ = Calculator.add(1, 2);
}
