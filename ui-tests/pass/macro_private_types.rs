//! Public tools whose argument, output and state types are private to their module.

mod inner {
    use prism::{State, tool};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize, JsonSchema)]
    struct Filter {
        prefix: String,
    }

    #[derive(Serialize)]
    struct Count(usize);

    struct Store {
        names: Vec<String>,
    }

    /// Counts names with a prefix.
    #[tool]
    #[allow(private_interfaces)]
    pub fn count(filter: Filter, store: State<Store>) -> Count {
        Count(store.names.iter().filter(|name| name.starts_with(&filter.prefix)).count())
    }

    pub fn definition() -> prism::ToolDefinition {
        count::definition(Store { names: vec!["ann".into(), "bob".into()] })
    }
}

fn main() {
    assert_eq!(inner::definition().name(), "count");
}
