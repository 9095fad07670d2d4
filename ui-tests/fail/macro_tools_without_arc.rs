use prism::tools;

struct Calculator;

#[tools]
impl Calculator {
    /// Adds two integers.
    #[tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    let calculator = Calculator;
    let _ = calculator.tools();
}
