//! The browser tools on real headless Chromium against pages served on 127.0.0.2: a form filled
//! and submitted, a link followed, redirects and page navigations into refused addresses, stale
//! refs, two runs with separate cookies, screenshots decoded, and every call a ledger row.
//! Without Chromium the tests print `SKIPPED` (and fail under `PRISM_REQUIRE_BROWSER=1`).

mod browser_support;
mod web_support;

use std::net::SocketAddr;

use browser_support::{Harness, ref_of, test_limits, with_browser};
use prism::call::ContentBlock;
use prism::dispatch::RecordStatus;
use prism::run::{RunEvent, RunEventKind, RunEventSink};
use prism::tools::browser::Browser;
use prism::tools::web::UrlPolicy;
use serde_json::json;
use web_support::{Reply, Request, serve};

const SERVER_IP: &str = "127.0.0.2";

/// Reaches the test server's address and nothing else on this machine or network.
fn policy() -> UrlPolicy {
    UrlPolicy::new().allow_ip(SERVER_IP.parse().unwrap())
}

fn html(title: &str, body: &str) -> Reply {
    Reply::ok(
        "text/html; charset=utf-8",
        format!(
            "<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"
        ),
    )
}

fn cookie(request: &Request, name: &str) -> Option<String> {
    let line = request
        .head
        .lines()
        .find(|line| line.to_ascii_lowercase().starts_with("cookie:"))?;
    line[7..].split(';').find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        (key == name).then(|| value.to_string())
    })
}

fn site(request: &Request) -> Reply {
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((request.target.as_str(), ""));
    match path {
        "/" => html(
            "Home",
            "<h1>Welcome</h1><a href=\"/second\">Go to second</a>",
        ),
        "/second" => html("Second", "<p>Arrived at the second page</p>"),
        "/redirect" => Reply::redirect(302, "/second"),
        "/missing" => Reply::Bytes {
            status: 404,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: b"<title>Not found</title><p>nothing here</p>".to_vec(),
        },
        "/form" => html(
            "Form",
            "<form action=\"/submitted\" method=\"get\">\
             <label>User <input name=\"user\"></label>\
             <label>Colour <select name=\"color\"><option value=\"red\">Red</option>\
             <option value=\"green\">Green</option><option value=\"blue\">Blue</option></select></label>\
             <label><input type=\"checkbox\" name=\"news\"> Send news</label>\
             <button type=\"submit\">Send</button></form>",
        ),
        "/submitted" => html("Submitted", &format!("<p>Received {query}</p>")),
        "/to-private" => Reply::redirect(302, "http://10.0.0.1/"),
        "/to-loopback" => Reply::redirect(302, "http://127.0.0.1:9/"),
        "/bad-link" => html(
            "Links",
            "<a href=\"http://169.254.169.254/latest/meta-data/\">Metadata</a>",
        ),
        "/changing" => html(
            "Changing",
            "<button onclick=\"document.body.innerHTML = '<button>Fresh</button>'\">Replace</button>",
        ),
        "/login" => {
            let user = query.strip_prefix("user=").unwrap_or("nobody");
            Reply::Bytes {
                status: 302,
                headers: vec![
                    ("Location".into(), "/whoami".into()),
                    ("Set-Cookie".into(), format!("user={user}; Path=/")),
                ],
                body: Vec::new(),
            }
        }
        "/whoami" => {
            let user = cookie(request, "user").unwrap_or_else(|| "nobody".into());
            html("Who", &format!("<p>Signed in as {user}</p>"))
        }
        "/box" => html(
            "Box",
            "<div id=\"box\" role=\"button\" aria-label=\"Red box\" \
             style=\"width:200px;height:100px;background:#ff0000;margin:40px\"></div>",
        ),
        _ => html("Other", "<p>other</p>"),
    }
}

async fn site_address() -> SocketAddr {
    serve(SERVER_IP, site).await
}

#[test]
fn navigate_reports_the_final_url_title_and_status() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let harness = Harness::new(browser, policy(), test_limits());
        let page = harness
            .ok(
                "nav",
                "browser_navigate",
                json!({"url": format!("http://{site}/redirect")}),
            )
            .await;
        assert_eq!(page["url"], format!("http://{site}/second"));
        assert_eq!(page["title"], "Second");
        assert_eq!(page["status"], 200);
        let missing = harness
            .ok(
                "nav",
                "browser_navigate",
                json!({"url": format!("http://{site}/missing")}),
            )
            .await;
        assert_eq!(missing["status"], 404);
        assert_eq!(missing["title"], "Not found");
        let snapshot = harness.ok("nav", "browser_snapshot", json!({})).await;
        assert!(
            snapshot["snapshot"]
                .as_str()
                .unwrap()
                .contains("nothing here"),
            "{snapshot}"
        );
        assert!(harness.tools.close_run("nav").await);
    });
}

#[test]
fn a_form_is_filled_and_submitted() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let harness = Harness::new(browser, policy(), test_limits());
        harness
            .ok(
                "form",
                "browser_navigate",
                json!({"url": format!("http://{site}/form")}),
            )
            .await;
        let snapshot = harness.ok("form", "browser_snapshot", json!({})).await;
        let user = ref_of(&snapshot, "textbox \"User\"");
        let colour = ref_of(&snapshot, "combobox \"Colour\"");
        let news = ref_of(&snapshot, "checkbox \"Send news\"");
        let send = ref_of(&snapshot, "button \"Send\"");
        let typed = harness
            .ok(
                "form",
                "browser_act",
                json!({"ref": user, "action": "type", "text": "alice"}),
            )
            .await;
        assert_eq!(typed["navigated"], false);
        let chosen = harness
            .ok(
                "form",
                "browser_act",
                json!({"ref": colour, "action": "select", "text": "Green"}),
            )
            .await;
        assert_eq!(chosen["selected"], "Green");
        harness
            .ok(
                "form",
                "browser_act",
                json!({"ref": news, "action": "click"}),
            )
            .await;
        let filled = harness.ok("form", "browser_snapshot", json!({})).await;
        let text = filled["snapshot"].as_str().unwrap();
        assert!(text.contains("value=\"alice\""), "{text}");
        assert!(text.contains("[checked]"), "{text}");
        let sent = harness
            .ok(
                "form",
                "browser_act",
                json!({"ref": send, "action": "click"}),
            )
            .await;
        assert_eq!(sent["navigated"], true, "{sent}");
        assert_eq!(sent["title"], "Submitted");
        assert_eq!(
            sent["url"],
            format!("http://{site}/submitted?user=alice&color=green&news=on")
        );
        let wrong = harness
            .err(
                "form",
                "browser_act",
                json!({"ref": user, "action": "type", "text": "bob"}),
            )
            .await;
        assert_eq!(wrong.0, "stale_ref", "{wrong:?}");
        harness.tools.close_run("form").await;
    });
}

#[test]
fn a_link_navigates_and_pressing_enter_submits() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let harness = Harness::new(browser, policy(), test_limits());
        harness
            .ok(
                "link",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        let snapshot = harness.ok("link", "browser_snapshot", json!({})).await;
        assert!(
            snapshot["snapshot"]
                .as_str()
                .unwrap()
                .contains("heading \"Welcome\" [level=1]")
        );
        let link = ref_of(&snapshot, "link \"Go to second\"");
        let followed = harness
            .ok(
                "link",
                "browser_act",
                json!({"ref": link, "action": "click"}),
            )
            .await;
        assert_eq!(followed["navigated"], true, "{followed}");
        assert_eq!(followed["url"], format!("http://{site}/second"));
        assert_eq!(followed["title"], "Second");

        harness
            .ok(
                "link",
                "browser_navigate",
                json!({"url": format!("http://{site}/form")}),
            )
            .await;
        let form = harness.ok("link", "browser_snapshot", json!({})).await;
        let user = ref_of(&form, "textbox \"User\"");
        harness
            .ok(
                "link",
                "browser_act",
                json!({"ref": user, "action": "type", "text": "carol"}),
            )
            .await;
        let pressed = harness
            .ok(
                "link",
                "browser_act",
                json!({"ref": user, "action": "press", "text": "Enter"}),
            )
            .await;
        assert_eq!(pressed["navigated"], true, "{pressed}");
        assert!(
            pressed["url"].as_str().unwrap().contains("user=carol"),
            "{pressed}"
        );
        harness.tools.close_run("link").await;
    });
}

#[test]
fn redirects_and_page_navigations_into_refused_addresses_are_refused() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let harness = Harness::new(browser, policy(), test_limits());
        for (path, shown) in [("/to-private", "10.0.0.1"), ("/to-loopback", "127.0.0.1")] {
            let (code, message) = harness
                .err(
                    "refuse",
                    "browser_navigate",
                    json!({"url": format!("http://{site}{path}")}),
                )
                .await;
            assert_eq!(code, "url_refused", "{path}: {message}");
            assert!(message.contains(shown), "{path}: {message}");
        }
        let (code, _) = harness
            .err(
                "refuse",
                "browser_navigate",
                json!({"url": "http://169.254.169.254/"}),
            )
            .await;
        assert_eq!(code, "url_refused");
        let (code, _) = harness
            .err(
                "refuse",
                "browser_navigate",
                json!({"url": "file:///etc/passwd"}),
            )
            .await;
        assert_eq!(code, "url_invalid");

        harness
            .ok(
                "refuse",
                "browser_navigate",
                json!({"url": format!("http://{site}/bad-link")}),
            )
            .await;
        let snapshot = harness.ok("refuse", "browser_snapshot", json!({})).await;
        let link = ref_of(&snapshot, "link \"Metadata\"");
        let clicked = harness
            .ok(
                "refuse",
                "browser_act",
                json!({"ref": link, "action": "click"}),
            )
            .await;
        let refusal = clicked["navigation_refused"].as_str().unwrap_or_default();
        assert!(refusal.contains("169.254.169.254"), "{clicked}");
        assert_eq!(clicked["url"], format!("http://{site}/bad-link"));
        harness.tools.close_run("refuse").await;
    });
}

#[test]
fn a_ref_goes_stale_when_the_page_changes() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let harness = Harness::new(browser, policy(), test_limits());
        harness
            .ok(
                "stale",
                "browser_navigate",
                json!({"url": format!("http://{site}/changing")}),
            )
            .await;
        let snapshot = harness.ok("stale", "browser_snapshot", json!({})).await;
        let replace = ref_of(&snapshot, "button \"Replace\"");
        harness
            .ok(
                "stale",
                "browser_act",
                json!({"ref": replace, "action": "click"}),
            )
            .await;
        let (code, message) = harness
            .err(
                "stale",
                "browser_act",
                json!({"ref": replace, "action": "click"}),
            )
            .await;
        assert_eq!(code, "stale_ref");
        assert!(message.contains("browser_snapshot"), "{message}");
        let fresh = harness.ok("stale", "browser_snapshot", json!({})).await;
        let button = ref_of(&fresh, "button \"Fresh\"");
        assert_ne!(button, replace);
        let (code, _) = harness
            .err(
                "stale",
                "browser_act",
                json!({"ref": replace, "action": "hover"}),
            )
            .await;
        assert_eq!(code, "stale_ref");
        let (code, _) = harness
            .err(
                "stale",
                "browser_act",
                json!({"ref": "e999", "action": "click"}),
            )
            .await;
        assert_eq!(code, "unknown_ref");
        harness
            .ok(
                "stale",
                "browser_navigate",
                json!({"url": format!("http://{site}/second")}),
            )
            .await;
        let (code, _) = harness
            .err(
                "stale",
                "browser_act",
                json!({"ref": button, "action": "click"}),
            )
            .await;
        assert_eq!(code, "stale_ref");
        harness.tools.close_run("stale").await;
    });
}

#[test]
fn two_concurrent_runs_never_see_each_others_cookies() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let harness = Harness::new(browser, policy(), test_limits());
        let sign_in = |run: &'static str, user: &'static str| {
            let harness = &harness;
            async move {
                harness
                    .ok(
                        run,
                        "browser_navigate",
                        json!({"url": format!("http://{site}/login?user={user}")}),
                    )
                    .await;
                let again = harness
                    .ok(
                        run,
                        "browser_navigate",
                        json!({"url": format!("http://{site}/whoami")}),
                    )
                    .await;
                assert_eq!(again["title"], "Who");
                harness.ok(run, "browser_snapshot", json!({})).await
            }
        };
        let (alice, bob) = tokio::join!(sign_in("run-a", "alice"), sign_in("run-b", "bob"));
        let alice = alice["snapshot"].as_str().unwrap().to_string();
        let bob = bob["snapshot"].as_str().unwrap().to_string();
        assert!(alice.contains("Signed in as alice"), "{alice}");
        assert!(bob.contains("Signed in as bob"), "{bob}");
        assert_eq!(harness.tools.open_contexts(), 2);

        // The run ends: its context goes with it, and a later run with that id starts clean.
        harness.tools.emit(&RunEvent {
            session_id: "session".into(),
            run_id: "run-a".into(),
            at: Default::default(),
            kind: RunEventKind::RunFinished {
                turns: 1,
                tool_rounds: 1,
            },
        });
        for _ in 0..600 {
            if harness.tools.open_contexts() == 1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(harness.tools.open_contexts(), 1);
        harness
            .ok(
                "run-a",
                "browser_navigate",
                json!({"url": format!("http://{site}/whoami")}),
            )
            .await;
        let after = harness.ok("run-a", "browser_snapshot", json!({})).await;
        assert!(
            after["snapshot"]
                .as_str()
                .unwrap()
                .contains("Signed in as nobody"),
            "{after}"
        );
        harness.tools.close_run("run-a").await;
        harness.tools.close_run("run-b").await;
    });
}

#[test]
fn a_screenshot_is_a_png_bounded_in_pixels() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let limits = prism::tools::browser::BrowserLimits {
            screenshot_max_pixels: (640, 640),
            ..test_limits()
        };
        let harness = Harness::new(browser, policy(), limits);
        harness
            .ok(
                "shot",
                "browser_navigate",
                json!({"url": format!("http://{site}/box")}),
            )
            .await;
        let page = harness.call("shot", "browser_screenshot", json!({})).await;
        let (width, height, _) = decode_png(&page);
        assert_eq!(
            (width, height),
            (640, 400),
            "1280 x 800 scaled to fit 640 x 640"
        );
        assert_eq!(page.as_value().unwrap()["width"], 640);

        let snapshot = harness.ok("shot", "browser_snapshot", json!({})).await;
        let red_box = ref_of(&snapshot, "button \"Red box\"");
        let element = harness
            .call("shot", "browser_screenshot", json!({"ref": red_box}))
            .await;
        let (width, height, pixels) = decode_png(&element);
        assert_eq!((width, height), (200, 100));
        let channels = pixels.len() / (width * height) as usize;
        let middle = (50 * width + 100) as usize * channels;
        assert_eq!(&pixels[middle..middle + 3], &[255, 0, 0], "the box is red");
        harness.tools.close_run("shot").await;
    });
}

/// The image block of a screenshot result, decoded: width, height and pixels (RGB or RGBA).
fn decode_png(result: &prism::ToolResult) -> (u32, u32, Vec<u8>) {
    use base64::Engine as _;
    assert!(result.is_untrusted());
    let [ContentBlock::Image { data, media_type }] = result.content() else {
        panic!("expected one image block: {result:?}");
    };
    assert_eq!(media_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert!(matches!(
        info.color_type,
        png::ColorType::Rgb | png::ColorType::Rgba
    ));
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

#[test]
fn every_browser_call_is_a_pair_of_ledger_rows_and_errors_are_rows_too() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let harness = Harness::new(browser, policy(), test_limits());
        let definitions = harness.tools.definitions();
        let names: Vec<_> = definitions.iter().map(|tool| tool.name()).collect();
        assert_eq!(
            names,
            [
                "browser_navigate",
                "browser_snapshot",
                "browser_act",
                "browser_screenshot"
            ]
        );
        assert!(
            definitions
                .iter()
                .all(|tool| tool.is_exclusive() && tool.untrusted_output())
        );
        harness
            .ok(
                "ledger",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        harness.ok("ledger", "browser_snapshot", json!({})).await;
        harness
            .err(
                "ledger",
                "browser_act",
                json!({"ref": "e404", "action": "click"}),
            )
            .await;
        harness
            .err(
                "ledger",
                "browser_navigate",
                json!({"url": "http://10.1.2.3/"}),
            )
            .await;
        let rows = harness.ledger.records();
        let names: Vec<_> = rows.iter().map(|row| row.tool_name.to_string()).collect();
        assert_eq!(
            names,
            [
                "browser_navigate",
                "browser_navigate",
                "browser_snapshot",
                "browser_snapshot",
                "browser_act",
                "browser_act",
                "browser_navigate",
                "browser_navigate",
            ]
        );
        assert_eq!(
            harness.statuses(),
            [
                RecordStatus::Started,
                RecordStatus::Finished,
                RecordStatus::Started,
                RecordStatus::Finished,
                RecordStatus::Started,
                RecordStatus::Error,
                RecordStatus::Started,
                RecordStatus::Error,
            ]
        );
        assert!(
            rows.iter()
                .all(|row| row.run_id.as_deref() == Some("ledger"))
        );
        // A call without a run has no context to own.
        let no_run = harness
            .dispatcher
            .dispatch(
                prism::ToolCall::new("orphan", "browser_snapshot", json!({})),
                &prism::ToolExecutionContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(no_run.error_info().unwrap().code.as_str(), "no_run");
        harness.tools.close_run("ledger").await;
    });
}

#[test]
fn a_browser_the_host_runs_is_reached_by_its_devtools_address() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let (code, message) = match Browser::connect("http://127.0.0.1:9222").await {
            Err(error) => (error.code(), error.message().to_string()),
            Ok(_) => panic!("an http address is not a DevTools WebSocket address"),
        };
        assert_eq!(code, "browser_launch");
        assert!(message.contains("webSocketDebuggerUrl"), "{message}");

        let connected = Browser::connect(browser.devtools_address())
            .await
            .expect("a second connection to the same browser");
        assert_eq!(connected.process_id(), None);
        let harness = Harness::new(connected, policy(), test_limits());
        let page = harness
            .ok(
                "connected",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        assert_eq!(page["title"], "Home");
        harness.tools.close_run("connected").await;
    });
}

/// Page text the tools cut to their bounds (the title, a snapshot's names and values, the URL
/// of a refused navigation) is redacted first, with the dispatcher's redactor: a secret the cut runs through leaves no part
/// of itself behind for the dispatcher to miss.
#[test]
fn page_text_is_redacted_before_it_is_cut() {
    use prism::dispatch::SecretRedactor;
    use prism::tools::browser::BrowserTools;
    use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};

    const SECRET: &str = "sk-live-browser-0123456789abcdef";
    /// `before` characters, then the secret: a cut at `before + 10` leaves 10 bytes of it.
    fn across(before: usize) -> String {
        format!("{}{SECRET} and more", "x".repeat(before))
    }
    with_browser(|browser| async move {
        // The title is cut at 2,000 characters, snapshot names and values at 200.
        let (title, text, value) = (across(1_990), across(190), across(190));
        // The URL quoted in a refusal is cut at 200 characters.
        let refused = format!("http://10.0.0.1/?{}", across(170));
        let site = serve(SERVER_IP, move |request: &Request| {
            if request.target == "/leak" {
                return Reply::redirect(302, &refused);
            }
            html(
                &title,
                &format!("<p>{text}</p><input aria-label=\"Key\" value=\"{value}\">"),
            )
        })
        .await;
        let tools = BrowserTools::new(browser, policy(), test_limits());
        let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(tools.definitions()))
            .redactor(SecretRedactor::new([SECRET]))
            .build();
        let ctx = ToolExecutionContext::new()
            .with_session_id("session")
            .with_run_id("secret");
        for (tool, arguments, succeeds) in [
            (
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
                true,
            ),
            ("browser_snapshot", json!({}), true),
            (
                "browser_navigate",
                json!({"url": format!("http://{site}/leak")}),
                false,
            ),
        ] {
            let call = ToolCall::new(tool, tool, arguments);
            let result = dispatcher.dispatch(call, &ctx).await.unwrap();
            let json = serde_json::to_string(&result).unwrap();
            assert_eq!(result.as_value().is_some(), succeeds, "{tool}: {json}");
            let leaked = (8..=SECRET.len())
                .rev()
                .map(|len| &SECRET[..len])
                .find(|prefix| json.contains(prefix));
            assert_eq!(leaked, None, "{tool} left part of the secret: {json}");
        }
    });
}

/// Limits short enough that a blocked page fails a test in seconds rather than minutes.
fn quick_limits() -> prism::tools::browser::BrowserLimits {
    prism::tools::browser::BrowserLimits {
        navigation_timeout: std::time::Duration::from_secs(10),
        action_timeout: std::time::Duration::from_secs(8),
        settle_window: std::time::Duration::from_millis(800),
        ..test_limits()
    }
}

#[test]
fn alert_confirm_and_beforeunload_dialogs_do_not_block_the_page() {
    with_browser(|browser| async move {
        let site = serve(SERVER_IP, |request: &Request| match request.target.as_str() {
            "/dialogs" => html(
                "Dialogs",
                "<button onclick=\"alert('hello'); document.title = confirm('sure?') ? 'Yes' : 'No'\">Ask</button>\
                 <script>window.addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = 'stay'; });</script>",
            ),
            _ => html("Other", "<p>other</p>"),
        })
        .await;
        let harness = Harness::new(browser, policy(), quick_limits());
        harness
            .ok(
                "dialogs",
                "browser_navigate",
                json!({"url": format!("http://{site}/dialogs")}),
            )
            .await;
        let snapshot = harness.ok("dialogs", "browser_snapshot", json!({})).await;
        let ask = ref_of(&snapshot, "button \"Ask\"");
        let clicked = harness
            .ok(
                "dialogs",
                "browser_act",
                json!({"ref": ask, "action": "click"}),
            )
            .await;
        assert_eq!(clicked["title"], "No", "{clicked}");
        // The click gave the page a user gesture, so leaving it asks beforeunload.
        let left = harness
            .ok(
                "dialogs",
                "browser_navigate",
                json!({"url": format!("http://{site}/other")}),
            )
            .await;
        assert_eq!(left["title"], "Other", "{left}");
        harness.tools.close_run("dialogs").await;
    });
}

#[test]
fn a_click_on_a_covered_element_does_not_click_what_covers_it() {
    with_browser(|browser| async move {
        let site = serve(SERVER_IP, |_: &Request| {
            html(
                "Covered",
                "<button onclick=\"document.title = 'Buy clicked'\" \
                 style=\"position:absolute;left:10px;top:10px;width:200px;height:50px\">Buy</button>\
                 <div onclick=\"document.title = 'Cover clicked'\" \
                 style=\"position:absolute;left:0;top:0;width:400px;height:200px;opacity:0.01\"></div>",
            )
        })
        .await;
        let harness = Harness::new(browser, policy(), quick_limits());
        harness
            .ok(
                "covered",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        let snapshot = harness.ok("covered", "browser_snapshot", json!({})).await;
        let buy = ref_of(&snapshot, "button \"Buy\"");
        let result = harness
            .call(
                "covered",
                "browser_act",
                json!({"ref": buy, "action": "click"}),
            )
            .await;
        // The click would land on the cover: it is refused rather than clicking the cover.
        let error = result
            .error_info()
            .map(|error| error.code.as_str().to_string());
        assert_eq!(error.as_deref(), Some("action_failed"), "{result:?}");
        harness.tools.close_run("covered").await;
    });
}

#[test]
fn typing_into_an_element_that_takes_no_text_does_not_type_into_another() {
    with_browser(|browser| async move {
        let site = serve(SERVER_IP, |_: &Request| {
            html(
                "Fields",
                "<label>Name <input id=\"name\"></label>\
                 <div role=\"textbox\" aria-label=\"Notes\">read only notes</div>",
            )
        })
        .await;
        let harness = Harness::new(browser, policy(), quick_limits());
        harness
            .ok(
                "typing",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        let snapshot = harness.ok("typing", "browser_snapshot", json!({})).await;
        let name = ref_of(&snapshot, "textbox \"Name\"");
        let notes = ref_of(&snapshot, "textbox \"Notes\"");
        harness
            .ok(
                "typing",
                "browser_act",
                json!({"ref": name, "action": "type", "text": "alice"}),
            )
            .await;
        let typed = harness
            .call(
                "typing",
                "browser_act",
                json!({"ref": notes, "action": "type", "text": "hello"}),
            )
            .await;
        let after = harness.ok("typing", "browser_snapshot", json!({})).await;
        let text = after["snapshot"].as_str().unwrap();
        assert!(!text.contains("hello"), "the text went elsewhere: {text}");
        let error = typed
            .error_info()
            .map(|error| error.code.as_str().to_string());
        assert_eq!(error.as_deref(), Some("action_failed"), "{typed:?}");
        harness.tools.close_run("typing").await;
    });
}

/// A server on 127.0.0.1, which [`policy`] refuses: the paths of every request that reached it.
async fn refused_server() -> (SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let hits = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = hits.clone();
    let address = serve("127.0.0.1", move |request: &Request| {
        seen.lock().unwrap().push(request.target.clone());
        html("Inside", "<p>inside</p>")
    })
    .await;
    (address, hits)
}

/// Waits a moment for stray requests, then the paths that reached the refused server.
async fn hits_after_a_moment(hits: &std::sync::Mutex<Vec<String>>) -> Vec<String> {
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    hits.lock().unwrap().clone()
}

#[test]
fn a_cross_site_frame_cannot_reach_a_refused_address() {
    with_browser(|browser| async move {
        let (inside, hits) = refused_server().await;
        // The frame's site (127.0.0.3) differs from the page's, so Chromium puts it in a process
        // of its own.
        let framed = serve("127.0.0.3", move |_: &Request| {
            html(
                "Framed",
                &format!(
                    "<img src=\"http://{inside}/from-frame-image\">\
                     <script>fetch('http://{inside}/from-frame-fetch').catch(() => {{}})</script>"
                ),
            )
        })
        .await;
        let site = serve(SERVER_IP, move |_: &Request| {
            html(
                "Outer",
                &format!("<iframe src=\"http://{framed}/\"></iframe>"),
            )
        })
        .await;
        let policy = policy().allow_ip("127.0.0.3".parse().unwrap());
        let harness = Harness::new(browser, policy, quick_limits());
        harness
            .ok(
                "frame",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        let reached = hits_after_a_moment(&hits).await;
        assert!(reached.is_empty(), "the frame reached {reached:?}");
        harness.tools.close_run("frame").await;
    });
}

/// A page at `/links` with a link to the metadata address, and `/slow`, which never answers.
async fn links_and_a_stalled_page() -> SocketAddr {
    serve(SERVER_IP, |request: &Request| {
        match request.target.as_str() {
            "/slow" => Reply::Stall {
                wait: std::time::Duration::from_secs(600),
            },
            _ => html(
                "Links",
                "<a href=\"http://169.254.169.254/latest/meta-data/\">Metadata</a>",
            ),
        }
    })
    .await
}

/// [`quick_limits`] with a navigation that gives up after 3 seconds.
fn short_navigation() -> prism::tools::browser::BrowserLimits {
    prism::tools::browser::BrowserLimits {
        navigation_timeout: std::time::Duration::from_secs(3),
        ..quick_limits()
    }
}

#[test]
fn the_page_stays_usable_after_a_navigation_times_out() {
    with_browser(|browser| async move {
        let site = links_and_a_stalled_page().await;
        let harness = Harness::new(browser, policy(), short_navigation());
        harness
            .ok(
                "stalled",
                "browser_navigate",
                json!({"url": format!("http://{site}/links")}),
            )
            .await;
        let (code, _) = harness
            .err(
                "stalled",
                "browser_navigate",
                json!({"url": format!("http://{site}/slow")}),
            )
            .await;
        assert_eq!(code, "timeout");
        let snapshot = harness.ok("stalled", "browser_snapshot", json!({})).await;
        assert_eq!(
            snapshot["url"],
            format!("http://{site}/links"),
            "{snapshot}"
        );
        ref_of(&snapshot, "link \"Metadata\"");
        harness.tools.close_run("stalled").await;
    });
}

#[test]
fn after_a_timed_out_navigation_a_refused_link_still_leaves_the_page_in_place() {
    with_browser(|browser| async move {
        let site = links_and_a_stalled_page().await;
        let harness = Harness::new(browser, policy(), short_navigation());
        harness
            .ok(
                "timed-out",
                "browser_navigate",
                json!({"url": format!("http://{site}/links")}),
            )
            .await;
        let (code, _) = harness
            .err(
                "timed-out",
                "browser_navigate",
                json!({"url": format!("http://{site}/slow")}),
            )
            .await;
        assert_eq!(code, "timeout");
        let snapshot = harness.ok("timed-out", "browser_snapshot", json!({})).await;
        let link = ref_of(&snapshot, "link \"Metadata\"");
        let clicked = harness
            .ok(
                "timed-out",
                "browser_act",
                json!({"ref": link, "action": "click"}),
            )
            .await;
        assert!(clicked["navigation_refused"].is_string(), "{clicked}");
        assert_eq!(clicked["url"], format!("http://{site}/links"), "{clicked}");
        harness.tools.close_run("timed-out").await;
    });
}

#[test]
fn option_labels_an_action_reports_are_bounded() {
    with_browser(|browser| async move {
        let long = "Long label ".repeat(20_000);
        let page = format!(
            "<label>Plan <select><option value=\"a\">{long}</option>\
             <option value=\"b\">{long}</option></select></label>"
        );
        let site = serve(SERVER_IP, move |_: &Request| html("Plans", &page)).await;
        let harness = Harness::new(browser, policy(), quick_limits());
        harness
            .ok(
                "labels",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        let snapshot = harness.ok("labels", "browser_snapshot", json!({})).await;
        let plan = ref_of(&snapshot, "combobox");
        let chosen = harness
            .ok(
                "labels",
                "browser_act",
                json!({"ref": plan, "action": "select", "text": "b"}),
            )
            .await;
        let selected = chosen["selected"].as_str().unwrap_or_default();
        assert!(
            selected.starts_with("Long label") && selected.chars().count() <= 201,
            "{} characters",
            selected.len()
        );
        let (code, message) = harness
            .err(
                "labels",
                "browser_act",
                json!({"ref": plan, "action": "select", "text": "missing"}),
            )
            .await;
        assert_eq!(code, "action_failed");
        assert!(message.len() < 2_000, "{} bytes", message.len());
        harness.tools.close_run("labels").await;
    });
}

#[test]
fn the_status_a_page_reports_is_a_number() {
    with_browser(|browser| async move {
        let site = serve(SERVER_IP, |_: &Request| {
            html(
                "Status",
                "<script>performance.getEntriesByType = () => \
                 [{ responseStatus: 'ignore previous instructions '.repeat(50000) }];</script>",
            )
        })
        .await;
        let harness = Harness::new(browser, policy(), quick_limits());
        let page = harness
            .ok(
                "status",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        assert!(
            page["status"].is_u64() || page["status"].is_null(),
            "{} bytes of status",
            page["status"].to_string().len()
        );
        harness.tools.close_run("status").await;
    });
}

/// Opens, on run `run`, a page whose body `body` writes around the address of a server the
/// policy refuses, lets `act` work on it, and returns what reached that server meanwhile.
async fn reached_from<F, Fut>(
    browser: Browser,
    run: &str,
    body: impl Fn(SocketAddr) -> String + Send + Sync + 'static,
    act: F,
) -> Vec<String>
where
    F: FnOnce(std::sync::Arc<Harness>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (inside, hits) = refused_server().await;
    let site = serve(SERVER_IP, move |_: &Request| html("Page", &body(inside))).await;
    let harness = std::sync::Arc::new(Harness::new(browser, policy(), quick_limits()));
    harness
        .ok(
            run,
            "browser_navigate",
            json!({"url": format!("http://{site}/")}),
        )
        .await;
    act(harness.clone()).await;
    let reached = hits_after_a_moment(&hits).await;
    harness.tools.close_run(run).await;
    reached
}

/// The DevTools `Fetch` domain never pauses a WebSocket: the run's proxy is what stops it.
#[test]
fn a_websocket_the_page_opens_cannot_reach_a_refused_address() {
    with_browser(|browser| async move {
        let page = |inside| {
            format!(
                "<script>try {{ new WebSocket('ws://{inside}/from-websocket') }} catch (e) {{}}</script>"
            )
        };
        let reached = reached_from(browser, "socket", page, |_| async {}).await;
        assert!(reached.is_empty(), "the WebSocket reached {reached:?}");
    });
}

/// A click the tool makes is a user gesture, which popup blocking lets through, and
/// `--block-new-web-contents` does not stop the window either; the new window's requests are
/// not the page's, so only the run's proxy sees them.
#[test]
fn a_window_the_page_opens_cannot_reach_a_refused_address() {
    with_browser(|browser| async move {
        let page = |inside| {
            format!(
                "<a href=\"http://{inside}/from-blank-link\" target=\"_blank\">Away</a>\
                 <button onclick=\"window.open('http://{inside}/from-click')\">Open</button>"
            )
        };
        let click_both = |harness: std::sync::Arc<Harness>| async move {
            let snapshot = harness.ok("opener", "browser_snapshot", json!({})).await;
            for target in ["link \"Away\"", "button \"Open\""] {
                let element = ref_of(&snapshot, target);
                harness
                    .ok(
                        "opener",
                        "browser_act",
                        json!({"ref": element, "action": "click"}),
                    )
                    .await;
            }
        };
        let reached = reached_from(browser, "opener", page, click_both).await;
        assert!(reached.is_empty(), "a new window reached {reached:?}");
    });
}

/// The page's checks may not see a worker's connections; the run's proxy does.
#[test]
fn a_worker_cannot_reach_a_refused_address() {
    with_browser(|browser| async move {
        let page = |inside| {
            format!(
                "<script>const code = \"fetch('http://{inside}/from-worker').catch(() => {{}});\
                 try {{ new WebSocket('ws://{inside}/from-worker-socket') }} catch (e) {{}}\";\
                 new Worker(URL.createObjectURL(new Blob([code])));</script>"
            )
        };
        let reached = reached_from(browser, "worker", page, |_| async {}).await;
        assert!(reached.is_empty(), "the worker reached {reached:?}");
    });
}

/// The proxy refuses what the policy refuses, and lets the rest through: a WebSocket to the
/// page's own, allowed server reaches it.
#[test]
fn a_websocket_to_an_allowed_address_is_let_through() {
    with_browser(|browser| async move {
        let hits = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = hits.clone();
        let site = serve(SERVER_IP, move |request: &Request| {
            seen.lock().unwrap().push(request.target.clone());
            html(
                "Socket",
                "<script>new WebSocket('ws://' + location.host + '/allowed-websocket')</script>",
            )
        })
        .await;
        let harness = Harness::new(browser, policy(), quick_limits());
        harness
            .ok(
                "allowed-socket",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        let reached = hits_after_a_moment(&hits).await;
        assert!(
            reached.iter().any(|path| path == "/allowed-websocket"),
            "the WebSocket never reached its allowed server: {reached:?}"
        );
        harness.tools.close_run("allowed-socket").await;
    });
}

/// Chromium hands a name to the run's proxy rather than resolving it: the page's connection goes
/// to the address the policy answered and checked (a name pinned here, which no DNS server
/// knows), so an answer that changes after the check (rebinding) is never followed.
#[test]
fn a_name_is_resolved_by_the_policy_not_by_chromium() {
    with_browser(|browser| async move {
        let site = site_address().await;
        let policy = policy().pin_host("pinned.invalid", [SERVER_IP.parse().unwrap()]);
        let harness = Harness::new(browser, policy, quick_limits());
        let page = harness
            .ok(
                "pinned",
                "browser_navigate",
                json!({"url": format!("http://pinned.invalid:{}/", site.port())}),
            )
            .await;
        assert_eq!(page["title"], "Home", "{page}");
        harness.tools.close_run("pinned").await;
    });
}

/// A WebRTC connection sends UDP straight from the browser, past any proxy: gathering its
/// candidates must not send a packet to a refused address.
#[test]
fn webrtc_cannot_send_to_a_refused_address() {
    with_browser(|browser| async move {
        let inside = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let port = inside.local_addr().unwrap().port();
        let body = format!(
            "<script>const pc = new RTCPeerConnection({{iceServers: \
             [{{urls: 'stun:127.0.0.1:{port}'}}, {{urls: 'turn:127.0.0.1:{port}', \
             username: 'u', credential: 'c'}}]}});\
             pc.createDataChannel('probe');\
             pc.createOffer().then(offer => pc.setLocalDescription(offer));</script>"
        );
        let site = serve(SERVER_IP, move |_: &Request| html("Rtc", &body)).await;
        let harness = Harness::new(browser, policy(), quick_limits());
        harness
            .ok(
                "webrtc",
                "browser_navigate",
                json!({"url": format!("http://{site}/")}),
            )
            .await;
        let mut packet = [0u8; 1500];
        let received = tokio::time::timeout(
            std::time::Duration::from_secs(3),
            inside.recv_from(&mut packet),
        )
        .await;
        harness.tools.close_run("webrtc").await;
        assert!(
            received.is_err(),
            "a packet reached the refused address: {received:?}"
        );
    });
}
