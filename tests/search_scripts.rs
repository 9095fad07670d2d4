//! Search in scripts written without spaces between words (Chinese, Japanese, Korean, Thai): a
//! query finds the tool whose text shares its character pairs, not just scattered characters.

use prism::ToolDefinition;
use prism::search::{SearchConfig, ToolSearch};

#[path = "support/search.rs"]
mod support;
use support::tool;

/// Each language has a tool that answers the query and one that shares many of the query's
/// characters, more often, but never two of them side by side.
fn catalog() -> Vec<ToolDefinition> {
    vec![
        tool("weather_zh", "查询城市的天气预报。"),
        tool(
            "air_zh",
            "每天报告空气质量，天天预测气温，报气象预警，观天文。",
        ),
        tool("weather_ja", "指定した都市の天気予報を取得します。"),
        tool("stars_ja", "天体の予定と報道の天文気象を毎日天に報告する。"),
        tool("upload_ja", "ファイルサーバーへ文書をアップロードします。"),
        tool("weather_ko", "도시의 현재 날씨와 기온을 조회합니다."),
        tool(
            "email_ko",
            "받는 사람에게 이메일을 보냅니다. 씨앗 날개 알림.",
        ),
        tool("weather_th", "ดูพยากรณ์อากาศของเมือง"),
        tool("prices_th", "รอราคาศาลา ยกรอยกรอรอ"),
        tool("cloud_drive", "Upload a PDF to 云盘 storage."),
        tool("rain_ja", "今日は雨ですか"),
    ]
}

fn ranked(search: &ToolSearch, tools: &[ToolDefinition], query: &str) -> Vec<String> {
    let results = search.search(query, 10, tools).expect("search works");
    results
        .hits()
        .iter()
        .map(|hit| hit.tool.name().to_owned())
        .collect()
}

fn assert_first(query: &str, expected: &str) {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let ranked = ranked(&search, &tools, query);
    assert_eq!(
        ranked.first().map(String::as_str),
        Some(expected),
        "{query:?} ranked {ranked:?}"
    );
}

#[test]
fn chinese_queries_rank_by_character_pairs() {
    assert_first("天气预报", "weather_zh");
}

#[test]
fn japanese_kanji_and_kana_queries_rank_by_character_pairs() {
    assert_first("東京の天気予報", "weather_ja");
    // A katakana word at the end of a longer katakana compound.
    assert_first("サーバー", "upload_ja");
}

#[test]
fn korean_words_match_inside_words_with_particles() {
    // "날씨를" (weather, as an object) meets "날씨와" (weather and) by their shared pair.
    assert_first("날씨를 알려줘", "weather_ko");
}

#[test]
fn thai_queries_rank_by_character_pairs() {
    assert_first("อากาศ", "weather_th");
}

#[test]
fn a_single_character_query_finds_it_inside_a_longer_run() {
    assert_first("雨", "rain_ja");
}

#[test]
fn mixed_latin_and_chinese_text_matches_on_both() {
    assert_first("把PDF上传到云盘", "cloud_drive");
    assert_first("云盘", "cloud_drive");
    assert_first("pdf", "cloud_drive");
}
