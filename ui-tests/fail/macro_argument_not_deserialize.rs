use prism::tool;

struct Point {
    x: f64,
    y: f64,
}

/// Measures the distance of a point from the origin.
#[tool]
fn distance(point: Point) -> f64 {
    (point.x * point.x + point.y * point.y).sqrt()
}

fn main() {
    let _ = distance::definition();
}
