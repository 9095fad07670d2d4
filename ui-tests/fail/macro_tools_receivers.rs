use prism::tools;

struct Counter {
    count: u64,
}

#[tools]
impl Counter {
    /// Increments the counter.
    #[tool]
    fn increment(&mut self) -> u64 {
        self.count += 1;
        self.count
    }

    /// Consumes the counter.
    #[tool]
    fn finish(self) -> u64 {
        self.count
    }

    /// Resets the counter.
    #[tool]
    fn reset(self: &mut Self) {
        self.count = 0;
    }

    /// Shares the counter.
    #[tool]
    fn share(self: std::sync::Arc<Self>) -> u64 {
        self.count
    }

    /// Looks at the counter.
    #[tool(state = Counter)]
    fn peek(&self) -> u64 {
        self.count
    }
}

fn main() {}
