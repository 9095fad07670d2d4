use prism::{State, tool};

struct App;
struct Database;

/// Looks a row up.
#[tool(state = App)]
fn lookup(id: u64, db: State<Database>) -> u64 {
    let _ = db;
    id
}

fn main() {
    let _ = lookup::definition(App);
}
