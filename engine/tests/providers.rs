//! The LLM providers against a scripted local server (and a fake `claude`):
//! the exact requests each vendor documents, and what each provider makes of
//! good answers, misbehaving servers and a server echoing the key back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::io::Limits;
use engine::llm::{check, connect_with_env, LlmConfig, LlmError, LlmRequest, Provider, Tier, Usage};
use serde_json::{json, Value};
use test_support::llm_server::{LlmServer, Recorded, Reply};

const KEY: &str = "sk-test-SECRET-4f9c2a71";

fn routing_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"intent": {"type": "string"}},
        "required": ["intent"],
        "additionalProperties": false,
    })
}

fn request() -> LlmRequest {
    LlmRequest {
        stage: "route".into(),
        system: Some("You route asset queries.".into()),
        cached: Some("INDEX: 459 assets ...".into()),
        user: "find a top-down zombie".into(),
        schema: Some(routing_schema()),
        schema_name: "search-routing.schema.json".into(),
        tier: Tier::Fast,
        max_tokens: None,
    }
}

/// A provider from YAML config pointed at `base_url`, with [`KEY`] in the
/// standard key variables.
fn provider(yaml: &str, base_url: &str) -> Arc<dyn Provider> {
    let config: LlmConfig = serde_yaml::from_str(&format!("base_url: {base_url}\n{yaml}")).expect("test config parses");
    let env = |name: &str| matches!(name, "ANTHROPIC_API_KEY" | "OPENAI_API_KEY").then(|| KEY.to_owned());
    connect_with_env(&config, 4, &Limits::default(), &engine::Product::NEUTRAL, env)
        .expect("provider connects")
        .expect("not builtin")
}

/// Asserts the key appears in neither the message nor the Debug form.
fn assert_no_key(error: &LlmError) {
    assert!(!error.to_string().contains(KEY), "key in message: {error}");
    assert!(!format!("{error:?}").contains(KEY), "key in Debug: {error:?}");
}

mod anthropic {
    use super::*;

    const CONFIG: &str = "provider: anthropic\nretries: 2\ntimeout_s: 1";

    fn tool_reply() -> Reply {
        Reply::anthropic_tool(
            "search-routing_schema_json",
            json!({"intent": "zombie"}),
            json!({"input_tokens": 12, "output_tokens": 7, "cache_creation_input_tokens": 900, "cache_read_input_tokens": 0}),
        )
    }

    #[tokio::test]
    async fn sends_the_documented_request_and_reads_the_forced_tool_call() {
        let server = LlmServer::start(vec![tool_reply()]).await;
        let reply = provider(CONFIG, &server.url())
            .complete(&request())
            .await
            .expect("valid answer");

        assert_eq!(reply.value, json!({"intent": "zombie"}));
        assert_eq!(reply.model, "claude-test-served");
        assert_eq!(reply.retries, 0);
        let expected_usage = Usage {
            input_tokens: 12,
            output_tokens: 7,
            cache_read_tokens: 0,
            cache_write_tokens: 900,
        };
        assert_eq!(reply.usage, expected_usage);

        let [sent] = server.requests().try_into().expect("one request");
        assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/messages"));
        assert_eq!(sent.header("x-api-key"), Some(KEY));
        assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(sent.header("content-type"), Some("application/json"));
        assert_eq!(sent.header("authorization"), None);
        assert_eq!(
            sent.body,
            json!({
                "model": "claude-haiku-4-5",
                "max_tokens": 4096,
                "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "INDEX: 459 assets ...", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "find a top-down zombie"},
                ]}],
                "system": "You route asset queries.",
                "tools": [{
                    "name": "search-routing_schema_json",
                    "description": "Record the answer of stage `route`; its input is the answer.",
                    "input_schema": routing_schema(),
                }],
                "tool_choice": {"type": "tool", "name": "search-routing_schema_json"},
            })
        );
    }

    #[tokio::test]
    async fn a_fenced_text_answer_is_extracted_when_no_tool_was_called() {
        let fenced = "Sure! Here it is:\n```json\n{\"intent\": \"zombie\"}\n```";
        let server = LlmServer::start(vec![Reply::anthropic_text(fenced, "end_turn")]).await;
        let reply = provider(CONFIG, &server.url())
            .complete(&request())
            .await
            .expect("fenced JSON");
        assert_eq!(reply.value, json!({"intent": "zombie"}));
    }

    #[tokio::test]
    async fn a_cut_off_answer_says_to_raise_max_tokens() {
        let server = LlmServer::start(vec![Reply::anthropic_text("{\"intent\": \"zom", "max_tokens")]).await;
        let mut request = request();
        request.max_tokens = Some(16);
        let error = provider(CONFIG, &server.url()).complete(&request).await.unwrap_err();
        assert!(matches!(error, LlmError::NoJson { .. }));
        assert!(error.to_string().contains("cut off at max_tokens (16)"), "{error}");
        assert_eq!(server.requests()[0].body["max_tokens"], 16);
    }

    #[tokio::test]
    async fn a_non_object_schema_travels_wrapped_and_comes_back_unwrapped() {
        let answer = Reply::anthropic_tool("tags", json!({"value": ["zombie", "enemy"]}), json!({}));
        let server = LlmServer::start(vec![answer]).await;
        let mut request = request();
        request.schema = Some(json!({"type": "array", "items": {"type": "string"}}));
        request.schema_name = "tags".into();
        let reply = provider(CONFIG, &server.url())
            .complete(&request)
            .await
            .expect("wrapped answer");
        assert_eq!(reply.value, json!(["zombie", "enemy"]));
        let input_schema = &server.requests()[0].body["tools"][0]["input_schema"];
        assert_eq!(input_schema["type"], "object");
        assert_eq!(input_schema["properties"]["value"]["type"], "array");
    }

    #[tokio::test]
    async fn a_429_waits_the_retry_after_it_names() {
        let limited = Reply::error(429, "rate limited").with_header("retry-after", "1");
        let server = LlmServer::start(vec![limited, tool_reply()]).await;
        let started = Instant::now();
        let reply = provider(CONFIG, &server.url())
            .complete(&request())
            .await
            .expect("second try");
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "waited {:?}",
            started.elapsed()
        );
        assert_eq!(reply.retries, 1);
        assert_eq!(server.requests().len(), 2);
    }

    #[tokio::test]
    async fn a_500_is_retried_with_backoff() {
        let server = LlmServer::start(vec![Reply::error(500, "internal"), tool_reply()]).await;
        let reply = provider(CONFIG, &server.url())
            .complete(&request())
            .await
            .expect("second try");
        assert_eq!((reply.retries, reply.value), (1, json!({"intent": "zombie"})));
    }

    #[tokio::test]
    async fn persistent_5xx_gives_up_after_the_configured_retries() {
        let server = LlmServer::start(vec![Reply::error(503, "overloaded")]).await;
        let yaml = "provider: anthropic\nretries: 1";
        let error = provider(yaml, &server.url()).complete(&request()).await.unwrap_err();
        assert_eq!(error.retries(), 1);
        assert_eq!(
            error.to_string(),
            "anthropic: HTTP 503: overloaded (gave up after 1 retry)"
        );
        assert_eq!(server.requests().len(), 2);
    }

    #[tokio::test]
    async fn a_silent_server_times_out_each_attempt() {
        let server = LlmServer::start(vec![Reply::Silence]).await;
        let yaml = "provider: anthropic\nretries: 1\ntimeout_s: 1";
        let error = provider(yaml, &server.url()).complete(&request()).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "anthropic: request timed out after 1s (gave up after 1 retry)"
        );
        assert_eq!(server.requests().len(), 2);
    }

    #[tokio::test]
    async fn a_truncated_body_is_a_transport_failure_and_retried() {
        let truncated = Reply::Truncated {
            body: "{\"content\": [".into(),
        };
        let server = LlmServer::start(vec![truncated.clone(), tool_reply()]).await;
        let reply = provider(CONFIG, &server.url())
            .complete(&request())
            .await
            .expect("second try");
        assert_eq!(reply.retries, 1);

        let server = LlmServer::start(vec![truncated]).await;
        let yaml = "provider: anthropic\nretries: 0";
        let error = provider(yaml, &server.url()).complete(&request()).await.unwrap_err();
        assert!(matches!(error, LlmError::Transport { .. }), "{error:?}");
        assert!(
            error.to_string().starts_with("anthropic: the answer broke off"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_non_json_answer_fails_at_once_naming_its_content_type() {
        let proxy_page = Reply::text(
            200,
            "text/html",
            "<html><body>Please sign in to the proxy</body></html>",
        );
        let server = LlmServer::start(vec![proxy_page]).await;
        let error = provider(CONFIG, &server.url()).complete(&request()).await.unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("content-type: text/html") && message.contains("Please sign in"),
            "{message}"
        );
        assert_eq!(server.requests().len(), 1, "not retried");
    }

    #[tokio::test]
    async fn a_json_answer_under_a_wrong_content_type_is_still_read() {
        let Reply::Respond { body, .. } = tool_reply() else {
            unreachable!("tool_reply responds")
        };
        let server = LlmServer::start(vec![Reply::text(200, "text/plain", &body)]).await;
        let reply = provider(CONFIG, &server.url())
            .complete(&request())
            .await
            .expect("lenient on content type");
        assert_eq!(reply.value, json!({"intent": "zombie"}));
    }

    #[tokio::test]
    async fn a_401_echoing_the_key_is_not_retried_and_never_shows_the_key() {
        let echo = Reply::json(
            401,
            json!({"type": "error", "error": {"type": "authentication_error", "message": format!("invalid x-api-key: {KEY}")}}),
        );
        let server = LlmServer::start(vec![echo]).await;
        let provider = provider(CONFIG, &server.url());
        let error = provider.complete(&request()).await.unwrap_err();
        assert_no_key(&error);
        assert_eq!(
            error.to_string(),
            "anthropic: HTTP 401: invalid x-api-key: [redacted]; check the key in $ANTHROPIC_API_KEY"
        );
        assert_eq!(server.requests().len(), 1, "a 4xx is not retried");

        let report = check(provider.as_ref(), &[]).await;
        let shown = format!("{report:?} {}", serde_json::to_string(&report).unwrap());
        assert!(!shown.contains(KEY), "{shown}");
        assert!(report.error.expect("the check fails").contains("HTTP 401"));
    }

    #[tokio::test]
    async fn an_unreachable_server_is_a_retried_connection_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let yaml = "provider: anthropic\nretries: 1";
        let error = provider(yaml, &format!("http://127.0.0.1:{port}"))
            .complete(&request())
            .await
            .unwrap_err();
        assert_eq!(error.retries(), 1);
        assert!(
            error
                .to_string()
                .contains(&format!("cannot reach http://127.0.0.1:{port}/v1/messages")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn check_makes_one_tiny_call_and_reports_success() {
        let ok = Reply::anthropic_tool(
            "check",
            json!({"ok": true}),
            json!({"input_tokens": 3, "output_tokens": 1}),
        );
        let server = LlmServer::start(vec![ok]).await;
        let report = check(provider(CONFIG, &server.url()).as_ref(), &[]).await;
        assert_eq!(
            (report.provider.as_str(), report.model.as_str(), report.error),
            ("anthropic", "claude-test-served", None)
        );
        let [sent] = server.requests().try_into().expect("one call");
        assert_eq!(sent.body["model"], "claude-sonnet-4-5");
        assert_eq!(sent.body["max_tokens"], 64);
        assert_eq!(sent.body["tool_choice"], json!({"type": "tool", "name": "check"}));
        assert!(sent.body.get("system").is_none());
        assert_eq!(sent.body["messages"][0]["content"].as_array().map(Vec::len), Some(1));
    }
}

mod openai {
    use super::*;

    /// `providers check` sends each stage schema the way the stage does, so
    /// an endpoint rejecting one fails the check, naming it.
    #[tokio::test]
    async fn check_sends_each_stage_schema_and_names_the_one_rejected() {
        let server = LlmServer::respond_with(Arc::new(|r: &Recorded| {
            match r.body["response_format"]["json_schema"]["name"].as_str() {
                Some("build-plan") => Reply::error(400, "Invalid schema for response_format 'build-plan'"),
                Some("check") => Reply::openai_content("{\"ok\": true}", usage()),
                _ => Reply::openai_content("{\"rows\": []}", usage()),
            }
        }))
        .await;
        let schemas = [
            (
                "index-tags".to_owned(),
                json!({"type": "object", "properties": {"rows": {"type": "array"}}}),
            ),
            (
                "build-plan".to_owned(),
                json!({"type": "object", "properties": {"calls": {"type": "array"}}}),
            ),
        ];
        let report = check(provider("provider: openai", &server.url()).as_ref(), &schemas).await;
        assert_eq!(report.error, None);
        assert_eq!(report.schemas[0], ("index-tags".to_owned(), None));
        let (name, error) = &report.schemas[1];
        assert_eq!(name, "build-plan");
        assert!(
            error.as_deref().unwrap().contains("HTTP 400: Invalid schema"),
            "{error:?}"
        );
        assert_eq!(server.requests().len(), 3);
    }

    fn usage() -> Value {
        json!({"prompt_tokens": 130, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 100}})
    }

    #[tokio::test]
    async fn sends_the_documented_request_with_a_strict_json_schema() {
        let server = LlmServer::start(vec![Reply::openai_content("{\"intent\":\"zombie\"}", usage())]).await;
        let reply = provider("provider: openai", &format!("{}/v1", server.url()))
            .complete(&request())
            .await
            .expect("valid answer");

        assert_eq!(reply.value, json!({"intent": "zombie"}));
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 30,
                output_tokens: 9,
                cache_read_tokens: 100,
                cache_write_tokens: 0
            }
        );
        assert_eq!(reply.model, "gpt-test-served");
        let [sent] = server.requests().try_into().expect("one request");
        assert_eq!(
            (sent.method.as_str(), sent.path.as_str()),
            ("POST", "/v1/chat/completions")
        );
        assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        assert_eq!(sent.header("content-type"), Some("application/json"));
        assert_eq!(
            sent.body,
            json!({
                "model": "gpt-4.1-mini",
                "max_tokens": 4096,
                "messages": [
                    {"role": "system", "content": "You route asset queries."},
                    {"role": "user", "content": "INDEX: 459 assets ...\n\nfind a top-down zombie"},
                ],
                "response_format": {"type": "json_schema", "json_schema": {
                    "name": "search-routing_schema_json", "strict": true, "schema": routing_schema(),
                }},
            })
        );
    }

    #[tokio::test]
    async fn a_local_server_without_a_key_gets_no_authorization_header() {
        let server = LlmServer::start(vec![Reply::openai_content("{\"intent\":\"x\"}", json!({}))]).await;
        let config: LlmConfig = serde_yaml::from_str(&format!("provider: openai\nbase_url: {}", server.url())).unwrap();
        let provider = connect_with_env(&config, 1, &Limits::default(), &engine::Product::NEUTRAL, |_| None)
            .unwrap()
            .unwrap();
        provider.complete(&request()).await.expect("answer");
        assert_eq!(server.requests()[0].header("authorization"), None);
    }

    #[tokio::test]
    async fn plain_mode_sends_the_schema_as_instructions_and_extracts_fenced_json() {
        let fenced = "The routing is:\n```json\n{\"intent\": \"zombie\"}\n```\nHope this helps.";
        let server = LlmServer::start(vec![Reply::openai_content(fenced, usage())]).await;
        let reply = provider("provider: openai\njson_mode: plain", &server.url())
            .complete(&request())
            .await
            .expect("fenced JSON");
        assert_eq!(reply.value, json!({"intent": "zombie"}));
        let body = &server.requests()[0].body;
        assert!(body.get("response_format").is_none(), "{body}");
        let user = body["messages"][1]["content"].as_str().unwrap();
        assert!(user.starts_with("INDEX: 459 assets ...\n\nfind a top-down zombie\n\nAnswer with one JSON value only"));
        assert!(
            user.contains("\"additionalProperties\":false"),
            "compact, not pretty-printed: {user}"
        );
    }

    #[tokio::test]
    async fn a_401_echoing_the_bearer_key_never_shows_it() {
        let echo = Reply::json(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {KEY}."), "type": "invalid_request_error", "code": "invalid_api_key"}}),
        );
        let server = LlmServer::start(vec![echo]).await;
        let error = provider("provider: openai", &server.url())
            .complete(&request())
            .await
            .unwrap_err();
        assert_no_key(&error);
        assert_eq!(
            error.to_string(),
            "openai: HTTP 401: Incorrect API key provided: [redacted].; check the key in $OPENAI_API_KEY"
        );
    }

    #[tokio::test]
    async fn a_non_json_error_body_is_quoted_and_scrubbed() {
        let echo = Reply::text(502, "text/plain", &format!("bad gateway (auth {KEY})"));
        let server = LlmServer::start(vec![echo]).await;
        let error = provider("provider: openai\nretries: 0", &server.url())
            .complete(&request())
            .await
            .unwrap_err();
        assert_no_key(&error);
        assert_eq!(error.to_string(), "openai: HTTP 502: bad gateway (auth [redacted])");
    }
}

#[cfg(unix)]
mod claude_code {
    use std::path::{Path, PathBuf};

    use super::*;

    /// Writes a fake `claude` script; it is run through `sh`, which also
    /// exercises a configured command that carries its own arguments.
    fn fake_claude(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("claude");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write fake claude");
        path
    }

    fn claude_provider(command: &Path, extra: &str) -> Arc<dyn Provider> {
        let yaml = format!("provider: claude-code\ncommand: [sh, '{}']\n{extra}", command.display());
        let config: LlmConfig = serde_yaml::from_str(&yaml).expect("config parses");
        connect_with_env(&config, 2, &Limits::default(), &engine::Product::NEUTRAL, |_| None)
            .unwrap()
            .unwrap()
    }

    #[tokio::test]
    async fn the_prompt_goes_on_stdin_and_the_envelope_result_is_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let script = format!(
            r#"printf '%s\n' "$@" > '{log}.args'
pwd > '{log}.pwd'; ls -A > '{log}.ls'; echo "$PWD" >> '{log}.pwd'
cat > '{log}.stdin'
cat <<'JSON'
{{"type":"result","subtype":"success","is_error":false,"result":"Here:\n```json\n{{\"intent\": \"zombie\"}}\n```","usage":{{"input_tokens":40,"output_tokens":6,"cache_read_input_tokens":300,"cache_creation_input_tokens":0}}}}
JSON"#,
            log = log.display()
        );
        let provider = claude_provider(&fake_claude(dir.path(), &script), "");
        let reply = provider.complete(&request()).await.expect("envelope parsed");

        assert_eq!(reply.value, json!({"intent": "zombie"}));
        assert_eq!(reply.model, "haiku");
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 40,
                output_tokens: 6,
                cache_read_tokens: 300,
                cache_write_tokens: 0
            }
        );
        let args = std::fs::read_to_string(format!("{}.args", log.display())).unwrap();
        assert_eq!(
            args,
            "-p\n--output-format\njson\n--model\nhaiku\n--tools\n\n--disable-slash-commands\n--setting-sources\nuser\n\
             --strict-mcp-config\n--mcp-config\n{\"mcpServers\":{}}\n--no-session-persistence\n"
        );
        // An empty folder of its own, not where unity-assets runs (the project).
        let pwd = std::fs::read_to_string(format!("{}.pwd", log.display())).unwrap();
        let here = std::env::current_dir().unwrap();
        assert!(pwd.lines().all(|l| !l.is_empty() && Path::new(l) != here), "{pwd}");
        assert_eq!(std::fs::read_to_string(format!("{}.ls", log.display())).unwrap(), "");
        let stdin = std::fs::read_to_string(format!("{}.stdin", log.display())).unwrap();
        assert!(stdin.starts_with("You route asset queries.\n\nINDEX: 459 assets ...\n\nfind a top-down zombie\n\n"));
        assert!(stdin.contains("JSON Schema") && stdin.contains("\"intent\""), "{stdin}");
    }

    /// The real CLI (tests/plugin.rs installs it in CI) accepts the isolating
    /// flags: logged out, it answers with its result envelope, not a usage error.
    #[tokio::test]
    async fn the_real_cli_accepts_the_isolating_flags() {
        let on_path = std::process::Command::new("claude").arg("--version").output();
        if !on_path.is_ok_and(|o| o.status.success()) {
            eprintln!("skipped: the `claude` command is not installed");
            return;
        }
        let home = tempfile::tempdir().unwrap();
        let yaml = format!(
            "provider: claude-code\ncommand: [env, -u, ANTHROPIC_API_KEY, -u, CLAUDE_CODE_OAUTH_TOKEN, HOME={home}, CLAUDE_CONFIG_DIR={home}/.claude, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, claude]\n",
            home = home.path().display()
        );
        let config: LlmConfig = serde_yaml::from_str(&yaml).unwrap();
        let provider = connect_with_env(&config, 1, &Limits::default(), &engine::Product::NEUTRAL, |_| None)
            .unwrap()
            .unwrap();
        let message = provider.complete(&request()).await.unwrap_err().to_string();
        assert!(message.contains("reported an error"), "{message}");
    }

    #[tokio::test]
    async fn a_missing_command_says_how_to_fix_it() {
        let config: LlmConfig =
            serde_yaml::from_str("provider: claude-code\ncommand: claude-not-installed-here").unwrap();
        let provider = connect_with_env(&config, 1, &Limits::default(), &engine::Product::NEUTRAL, |_| None)
            .unwrap()
            .unwrap();
        let error = provider.complete(&request()).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "claude-code: command `claude-not-installed-here` not found; install Claude Code or set llm.command"
        );
    }

    #[tokio::test]
    async fn not_logged_in_reports_the_cli_text_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let script = r#"cat > /dev/null
echo '{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}'
exit 1"#;
        let error = claude_provider(&fake_claude(dir.path(), script), "")
            .complete(&request())
            .await
            .unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("reported an error: Invalid API key · Please run /login"),
            "{message}"
        );
        assert!(message.contains("run `claude` once and use /login"), "{message}");
        assert_eq!(error.retries(), 0);
    }

    #[tokio::test]
    async fn a_failure_without_an_envelope_quotes_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let script = "echo 'error: unknown option --output-format' >&2\nexit 2";
        let error = claude_provider(&fake_claude(dir.path(), script), "")
            .complete(&request())
            .await
            .unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("exited with exit status: 2: error: unknown option --output-format"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_hung_cli_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let provider = claude_provider(&fake_claude(dir.path(), "exec sleep 30"), "timeout_s: 1\nretries: 0");
        let error = provider.complete(&request()).await.unwrap_err();
        assert_eq!(error.to_string(), "claude-code: request timed out after 1s");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
