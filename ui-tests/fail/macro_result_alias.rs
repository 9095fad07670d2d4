use prism::tool;

type AppResult<T> = Result<T, String>;

/// Divides two integers.
#[tool]
fn divide(a: i64, b: i64) -> AppResult<i64> {
    if b == 0 {
        return Err("division by zero".into());
    }
    Ok(a / b)
}

fn main() {
    let _ = divide::definition();
}
