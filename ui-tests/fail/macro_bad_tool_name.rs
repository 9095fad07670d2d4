use prism::tool;

/// Reports the weather.
#[tool(name = "get weather!")]
fn get_weather(city: String) -> String {
    city
}

fn main() {
    let _ = get_weather::definition();
}
