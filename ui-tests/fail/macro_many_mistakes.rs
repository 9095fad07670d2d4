use prism::tool;

#[tool(name = "bad name", exclusiv)]
fn lookup<T>(key: &str, (a, b): (u8, u8)) -> String {
    format!("{key}{a}{b}")
}

fn main() {
    // Only the mistakes above are reported: the function and `definition` still exist.
    let _ = lookup::<u8>("x", (1, 2));
    let _ = lookup::definition();
}
