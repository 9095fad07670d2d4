use prism::{State, tool};

struct AppState;
struct Users;
struct Orders;

/// Lists a user's orders.
#[tool(state = AppState)]
fn orders(user: String, users: State<Users>, orders: State<Orders>) -> String {
    let _ = (users, orders);
    user
}

fn main() {
    let _ = orders::definition(AppState);
}
