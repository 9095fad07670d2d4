//! Search disclosure: ranking, limits, fail-closed paths, determinism and non-ASCII text.

use prism::search::{
    BlendedScorer, Bm25, FullDisclosureReason, MAX_INDEXED_TOOLS, MAX_TOP_K, SEARCH_TOOLS_NAME,
    ScoreError, ScoreRequest, SearchConfig, SearchLimits, SharedActivatedTools, ToolScorer,
    check_reserved_name,
};

#[path = "support/search.rs"]
mod support;
use support::{catalog, names, tool};

#[test]
fn a_turn_discloses_ranked_and_activated_tools_in_input_order() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let activated = SharedActivatedTools::default();
    activated.activate_all(["translate_text", "no_longer_registered"]);

    let turn = search.disclose(&tools, "email the weather forecast to Ana", &activated);
    assert_eq!(
        names(turn.tools()),
        ["send_email", "read_inbox", "get_weather", "translate_text"]
    );
    assert_eq!(turn.search_tool().unwrap().name(), SEARCH_TOOLS_NAME);
    assert_eq!(
        names(&turn.request_tools()).last(),
        Some(&SEARCH_TOOLS_NAME)
    );
    assert!(turn.full_disclosure_reason().is_none() && !turn.query_truncated());
}

#[test]
fn parameter_names_and_nested_descriptions_are_indexed() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let hits = search.search("passport number", 5, &tools).unwrap();
    assert_eq!(hits.hits()[0].tool.name(), "book_flight");
    assert_eq!(
        &*hits.hits()[0].matched,
        ["passport", "number"].map(Box::from)
    );
}

#[test]
fn disclosure_never_leaves_the_input_list() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let activated = SharedActivatedTools::default();
    activated.activate_all(["send_email"]);
    // The turn was narrowed to two tools: neither the best match nor the activated tool is shown.
    let narrowed = vec![tools[3].clone(), tools[4].clone()];
    let turn = search.disclose(&narrowed, "send an email", &activated);
    assert!(turn.tools().is_empty());
    let turn = search.disclose(&narrowed, "stock price", &activated);
    assert_eq!(names(turn.tools()), ["stock_quote"]);
}

#[test]
fn top_k_bounds_the_ranked_tools_and_is_capped() {
    let tools: Vec<_> = (0..100)
        .map(|i| tool(&format!("report_{i}"), "Builds a sales report."))
        .collect();
    let nothing_active = SharedActivatedTools::default();

    let search = SearchConfig::default().index(&tools);
    assert_eq!(
        search
            .disclose(&tools, "sales report", &nothing_active)
            .tools()
            .len(),
        16
    );

    let config = SearchConfig::default().with_limits(SearchLimits::default().with_top_k(500));
    let search = config.index(&tools);
    let turn = search.disclose(&tools, "sales report", &nothing_active);
    assert_eq!(turn.tools().len(), MAX_TOP_K);
    // Equal scores keep snapshot order.
    assert_eq!(turn.tools()[0].name(), "report_0");
    assert_eq!(turn.tools()[63].name(), "report_63");
}

#[test]
fn more_tools_than_the_index_cap_are_disclosed_in_full() {
    let tools: Vec<_> = (0..=MAX_INDEXED_TOOLS)
        .map(|i| tool(&format!("t{i}"), "Does a thing."))
        .collect();
    let turn = SearchConfig::default().index(&tools).disclose(
        &tools,
        "thing",
        &SharedActivatedTools::default(),
    );
    assert_eq!(turn.tools().len(), MAX_INDEXED_TOOLS + 1);
    assert!(turn.search_tool().is_none());
    let reason = turn.full_disclosure_reason().unwrap();
    assert_eq!(reason, &FullDisclosureReason::TooManyTools { count: 1025 });
    assert_eq!(reason.code(), "too_many_tools");
    assert!(reason.to_string().contains("1024"));

    // Exactly at the cap, search works.
    let at_cap = &tools[..MAX_INDEXED_TOOLS];
    let turn = SearchConfig::default().index(at_cap).disclose(
        at_cap,
        "thing",
        &SharedActivatedTools::default(),
    );
    assert!(turn.full_disclosure_reason().is_none());
    assert_eq!(turn.tools().len(), 16);
}

#[test]
fn an_input_tool_missing_from_the_index_discloses_in_full() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools[..3]);
    let turn = search.disclose(&tools, "email", &SharedActivatedTools::default());
    assert_eq!(names(turn.tools()), names(&tools));
    assert_eq!(
        turn.full_disclosure_reason(),
        Some(&FullDisclosureReason::NotIndexed("stock_quote".into()))
    );
    // A different definition under an indexed name is not the indexed tool either.
    let replaced = vec![tool("send_email", "A different tool.")];
    let turn = search.disclose(&replaced, "email", &SharedActivatedTools::default());
    assert_eq!(names(turn.tools()), ["send_email"]);
    assert!(turn.full_disclosure_reason().is_some());
}

#[test]
fn the_reserved_name_is_refused() {
    let mut tools = catalog();
    tools.push(tool(SEARCH_TOOLS_NAME, "A host tool that took the name."));
    let error = check_reserved_name(&tools).unwrap_err();
    assert!(error.to_string().contains("`search_tools` is reserved"));
    assert!(check_reserved_name(&catalog()).is_ok());

    // Should a run skip the check, disclosure still refuses to add a second `search_tools`.
    let turn = SearchConfig::default().index(&tools).disclose(
        &tools,
        "email",
        &SharedActivatedTools::default(),
    );
    assert_eq!(
        turn.full_disclosure_reason(),
        Some(&FullDisclosureReason::ReservedName)
    );
    assert_eq!(turn.request_tools().len(), tools.len());
}

struct Failing;
impl ToolScorer for Failing {
    fn score(&self, _: &ScoreRequest<'_>, _: &mut [f32]) -> Result<(), ScoreError> {
        Err(ScoreError::new("embedding service unavailable"))
    }
}

struct Panicking;
impl ToolScorer for Panicking {
    fn score(&self, _: &ScoreRequest<'_>, _: &mut [f32]) -> Result<(), ScoreError> {
        panic!("scorer bug")
    }
}

struct NotANumber;
impl ToolScorer for NotANumber {
    fn score(&self, _: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError> {
        scores[0] = f32::NAN;
        Ok(())
    }
}

/// Scores every tool of the snapshot, including tools outside the turn's input list.
struct Everything;
impl ToolScorer for Everything {
    fn score(&self, _: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError> {
        scores.fill(1.0);
        Ok(())
    }
}

#[test]
fn scorer_failures_disclose_the_whole_input_list_and_nothing_more() {
    let tools = catalog();
    let input = &tools[1..4];
    let cases = [
        (
            SearchConfig::default().with_scorer(Failing),
            FullDisclosureReason::ScorerFailed("embedding service unavailable".into()),
        ),
        (
            SearchConfig::default().with_scorer(Panicking),
            FullDisclosureReason::ScorerPanicked,
        ),
        (
            SearchConfig::default().with_scorer(NotANumber),
            FullDisclosureReason::InvalidScore,
        ),
    ];
    for (config, expected) in cases {
        let search = config.index(&tools);
        let turn = search.disclose(input, "email", &SharedActivatedTools::default());
        assert_eq!(names(turn.tools()), names(input));
        assert!(turn.search_tool().is_none());
        assert_eq!(turn.full_disclosure_reason(), Some(&expected));
    }
    // A blend fails when one of its parts fails.
    let blend = BlendedScorer::new()
        .with(1.0, Bm25::default())
        .with(1.0, Failing);
    let turn = SearchConfig::default()
        .with_scorer(blend)
        .index(&tools)
        .disclose(input, "email", &SharedActivatedTools::default());
    assert_eq!(names(turn.tools()), names(input));
}

#[test]
fn a_scorer_cannot_widen_the_disclosed_list() {
    let tools = catalog();
    let input = &tools[2..4];
    let search = SearchConfig::default()
        .with_scorer(Everything)
        .index(&tools);
    let turn = search.disclose(input, "anything", &SharedActivatedTools::default());
    assert_eq!(names(turn.tools()), names(input));
    assert!(turn.full_disclosure_reason().is_none());
}

#[test]
fn an_over_long_query_is_cut_at_a_char_boundary_and_says_so() {
    let tools = catalog();
    let limits = SearchLimits::default().with_max_query_bytes(10);
    let search = SearchConfig::default().with_limits(limits).index(&tools);
    // "weather" fits; the 'é' straddles byte 10 and "email" is past the limit.
    let turn = search.disclose(&tools, "weather é email", &SharedActivatedTools::default());
    assert!(turn.query_truncated());
    assert_eq!(names(turn.tools()), ["get_weather"]);

    let default = SearchConfig::default().index(&tools);
    let long = format!("weather {}", "x".repeat(5000));
    assert!(
        default
            .disclose(&tools, &long, &SharedActivatedTools::default())
            .query_truncated()
    );
    assert!(
        !default
            .disclose(&tools, "weather", &SharedActivatedTools::default())
            .query_truncated()
    );
}

#[test]
fn rankings_are_deterministic_and_ties_follow_snapshot_order() {
    // Names of equal length with no stop word in them: every tool scores the same.
    let tools: Vec<_> = ["south", "north", "east"]
        .map(|name| tool(&format!("weather_{name}"), "Weather report."))
        .into();
    let first = SearchConfig::default().index(&tools);
    let second = SearchConfig::default().index(&tools);
    let rank = |search: &prism::search::ToolSearch| {
        search
            .search("weather report", 3, &tools)
            .unwrap()
            .hits()
            .iter()
            .map(|hit| (hit.tool.name().to_owned(), hit.score.to_bits()))
            .collect::<Vec<_>>()
    };
    let ranking = rank(&first);
    assert_eq!(
        ranking
            .iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>(),
        ["weather_south", "weather_north", "weather_east"]
    );
    assert!(
        ranking.windows(2).all(|pair| pair[0].1 == pair[1].1),
        "a real tie"
    );
    for _ in 0..20 {
        assert_eq!(rank(&first), ranking);
        assert_eq!(rank(&second), ranking);
    }
}

#[test]
fn non_ascii_descriptions_and_queries_match() {
    let tools = vec![
        tool(
            "météo",
            "Prévisions météorologiques pour une ville française.",
        ),
        tool("погода", "Прогноз погоды для Москвы."),
        tool("天気", "東京の天気予報"),
        tool("emoji_mood", "Tracks your mood 😀 every day."),
    ];
    let search = SearchConfig::default().index(&tools);
    let top = |query: &str| {
        search
            .search(query, 1, &tools)
            .unwrap()
            .hits()
            .first()
            .map(|hit| hit.tool.name().to_owned())
    };
    assert_eq!(top("PRÉVISIONS à Lyon").as_deref(), Some("météo"));
    assert_eq!(top("прогноз").as_deref(), Some("погода"));
    assert_eq!(top("天気").as_deref(), Some("天気"));
    assert_eq!(top("my mood 😀").as_deref(), Some("emoji_mood"));
    assert_eq!(top("🙂🙂🙂"), None);
}

#[test]
fn empty_inputs_and_queries_are_handled() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let turn = search.disclose(&[], "email", &SharedActivatedTools::default());
    assert!(turn.tools().is_empty() && turn.search_tool().is_some());
    let turn = search.disclose(&tools, "", &SharedActivatedTools::default());
    assert!(turn.tools().is_empty());
    let empty = SearchConfig::default().index(&[]);
    assert!(
        empty
            .disclose(&[], "", &SharedActivatedTools::default())
            .full_disclosure_reason()
            .is_none()
    );
}

struct Verbose;
impl ToolScorer for Verbose {
    fn score(&self, _: &ScoreRequest<'_>, _: &mut [f32]) -> Result<(), ScoreError> {
        Err(ScoreError::new("é".repeat(1000)))
    }
}

#[test]
fn a_scorer_message_reaches_the_host_whole() {
    let tools = catalog();
    let search = SearchConfig::default().with_scorer(Verbose).index(&tools);
    let turn = search.disclose(&tools, "email", &SharedActivatedTools::default());
    let Some(FullDisclosureReason::ScorerFailed(message)) = turn.full_disclosure_reason() else {
        panic!(
            "expected a scorer failure, got {:?}",
            turn.full_disclosure_reason()
        );
    };
    // A run cuts it only once redacted, so that a cut secret cannot slip past the redactor.
    assert_eq!(&**message, "é".repeat(1000));
}

#[test]
fn a_tool_given_twice_is_disclosed_once_at_its_first_place() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let activated = SharedActivatedTools::default();
    activated.activate_all(["translate_text"]);
    let twice = vec![
        tools[2].clone(),
        tools[0].clone(),
        tools[4].clone(),
        tools[2].clone(),
        tools[0].clone(),
    ];
    let query = "email the weather forecast to Ana";
    let turn = search.disclose(&twice, query, &activated);
    assert!(turn.full_disclosure_reason().is_none());
    assert_eq!(
        names(turn.tools()),
        ["get_weather", "send_email", "translate_text"]
    );
    let again = search.disclose(&twice, query, &activated);
    assert_eq!(names(again.tools()), names(turn.tools()));
    let hits = search.search(query, 8, &twice).unwrap();
    let hit_names: Vec<_> = hits.hits().iter().map(|hit| hit.tool.name()).collect();
    assert_eq!(hit_names, ["get_weather", "send_email"]);
    // Disclosed in full, each tool is listed once too.
    let with_reserved = vec![
        tools[0].clone(),
        tools[0].clone(),
        tool(SEARCH_TOOLS_NAME, "A host tool under the reserved name."),
    ];
    let turn = search.disclose(&with_reserved, query, &activated);
    assert!(turn.full_disclosure_reason().is_some());
    assert_eq!(names(turn.tools()), ["send_email", SEARCH_TOOLS_NAME]);
}

/// Out-of-range BM25 parameters are read within range, as field weights and limits are, rather
/// than giving every turn non-finite or negative scores.
#[test]
fn bm25_parameters_out_of_range_are_read_within_it() {
    let tools = catalog();
    let query = "email the weather forecast to Ana";
    let ranked = |scorer: Bm25| {
        let search = SearchConfig::default().with_scorer(scorer).index(&tools);
        let turn = search.disclose(&tools, query, &SharedActivatedTools::default());
        assert_eq!(turn.full_disclosure_reason(), None, "{scorer:?}");
        let hits = search.search(query, 8, &tools).unwrap();
        hits.hits()
            .iter()
            .map(|hit| (hit.tool.name().to_owned(), hit.score))
            .collect::<Vec<_>>()
    };
    for (set, read_as) in [
        (Bm25 { k1: -1.0, b: 0.2 }, Bm25 { k1: 0.0, b: 0.2 }),
        (Bm25 { k1: -3.0, b: 0.2 }, Bm25 { k1: 0.0, b: 0.2 }),
        (
            Bm25 {
                k1: f32::NAN,
                b: 0.2,
            },
            Bm25 { k1: 0.0, b: 0.2 },
        ),
        (
            Bm25 {
                k1: f32::INFINITY,
                b: 0.2,
            },
            Bm25 { k1: 1000.0, b: 0.2 },
        ),
        (Bm25 { k1: 2.0, b: -0.5 }, Bm25 { k1: 2.0, b: 0.0 }),
        (
            Bm25 {
                k1: 2.0,
                b: f32::NAN,
            },
            Bm25 { k1: 2.0, b: 0.0 },
        ),
        (
            Bm25 {
                k1: 2.0,
                b: f32::NEG_INFINITY,
            },
            Bm25 { k1: 2.0, b: 0.0 },
        ),
        (Bm25 { k1: 2.0, b: 3.0 }, Bm25 { k1: 2.0, b: 1.0 }),
    ] {
        let got = ranked(set);
        assert!(!got.is_empty(), "{set:?}");
        assert_eq!(got, ranked(read_as), "{set:?}");
    }
}
