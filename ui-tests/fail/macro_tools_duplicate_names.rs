use prism::tools;

struct Search;

#[tools]
impl Search {
    /// Searches the web.
    #[tool(name = "search")]
    fn web(&self, query: String) -> String {
        query
    }

    /// Searches the documents.
    #[tool(name = "search")]
    fn documents(&self, query: String) -> String {
        query
    }
}

fn main() {}
