use prism::tool;

struct Db;

/// Looks a user up, reading the database only in some builds.
#[tool]
fn lookup(user: String, #[cfg(any())] db: prism::State<Db>) -> String {
    user
}

fn main() {
    let _ = lookup::definition(Db);
}
