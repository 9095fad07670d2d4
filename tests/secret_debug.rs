//! `{:?}` of the public types that hold a host's credentials shows none of them: hosts print
//! their configuration in logs and panics, where a credential must not appear.

/// Asserts that `shown` holds none of `secrets`.
fn assert_hides(shown: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!shown.contains(secret), "{secret} is shown: {shown}");
    }
}

#[cfg(feature = "mcp")]
#[test]
fn a_remote_server_shows_none_of_its_credentials() {
    use prism::mcp::RemoteServer;

    let http = RemoteServer::http(
        "h",
        "https://user-1:pa55word-2@mcp.example.org/mcp?key=sk-query-3",
    )
    .header("Authorization", "Bearer sk-header-4");
    let shown = format!("{http:?}\n{http:#?}");
    assert_hides(
        &shown,
        &["user-1", "pa55word-2", "sk-query-3", "sk-header-4"],
    );
    assert!(shown.contains("mcp.example.org"), "{shown}");
    assert!(shown.contains("Authorization"), "{shown}");
    // A URL that does not parse (a missing colon) cannot be taken apart: it is not shown.
    let unparsed = RemoteServer::http("u", "https//user-1:pa55word-2@mcp.example.org/mcp");
    let shown = format!("{unparsed:?}");
    assert_hides(&shown, &["pa55word-2"]);

    let command = RemoteServer::command("c", "mcp-server")
        .arg("--verbose")
        .env("SERVICE_TOKEN", "sk-env-5");
    let shown = format!("{command:?}\n{command:#?}");
    assert_hides(&shown, &["sk-env-5"]);
    assert!(shown.contains("SERVICE_TOKEN"), "{shown}");
    assert!(shown.contains("--verbose"), "{shown}");
}

#[cfg(feature = "web")]
#[test]
fn a_searxng_backend_shows_none_of_its_credentials() {
    use prism::tools::web::SearxngBackend;

    let backend = SearxngBackend::new("https://user-1:pa55word-2@searx.example.org/").unwrap();
    let shown = format!("{backend:?}\n{backend:#?}");
    assert_hides(&shown, &["pa55word-2"]);
    assert!(shown.contains("searx.example.org"), "{shown}");
}

#[cfg(feature = "openai")]
#[test]
fn an_http_provider_shows_none_of_its_urls_credentials() {
    use prism::provider::http::{ApiKey, HttpProvider};

    let builder = HttpProvider::openai_chat("gpt-test")
        .key(ApiKey::new("sk-key-0"))
        .base_url("https://user-1:pa55word-2@gateway.example.org/v1?token=sk-query-3");
    let shown = format!("{builder:?}\n{builder:#?}");
    assert_hides(&shown, &["sk-key-0", "pa55word-2", "sk-query-3"]);
    assert!(shown.contains("gateway.example.org"), "{shown}");
    let provider = builder.build().unwrap();
    let shown = format!("{provider:?}\n{provider:#?}");
    assert_hides(&shown, &["sk-key-0", "pa55word-2", "sk-query-3"]);
    assert!(shown.contains("gateway.example.org"), "{shown}");
}
