//! One invocation, two doors: each tool run from the command line and over
//! MCP ends the same way (exit code 0 ⇔ not `isError`) and says the same
//! thing (the CLI's stdout and stderr are the tool result's text). Build's
//! door-specific wording is checked in mcp_spec.rs.

use std::path::Path;

use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};
use test_support::cli::{self, Run};

#[path = "support/mcp.rs"]
mod support;
use support::{args, connect, example_project, text, BIN};

/// What a call through one door said and how it ended.
#[derive(Debug)]
struct Said {
    failed: bool,
    text: String,
}

fn through_cli(project: &Path, trust: bool, argv: &[&str]) -> (Said, i32) {
    let mut command = cli::command(Path::new(BIN), project);
    if trust {
        command.arg("--trust");
    }
    let run = Run::of(command.env_remove("UNITY_ASSETS_TRUST").args(argv));
    let text = [run.stdout.trim_end(), run.stderr.trim_end()]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    (
        Said {
            failed: run.code != 0,
            text,
        },
        run.code,
    )
}

async fn through_mcp(project: &Path, trust: bool, tool: &str, arguments: Value) -> Said {
    let client = connect(project, trust).await;
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
        .await
        .expect("tools/call");
    client.cancel().await.ok();
    Said {
        failed: result.is_error == Some(true),
        text: text(&result),
    }
}

/// Both doors, compared; the CLI's exit code for the caller to check.
async fn both(project: &Path, trust: bool, argv: &[&str], tool: &str, arguments: Value) -> i32 {
    let (cli, code) = through_cli(project, trust, argv);
    let mcp = through_mcp(project, trust, tool, arguments).await;
    assert_eq!(
        cli.failed, mcp.failed,
        "{argv:?}: exit {code} but isError {}\ncli: {}\nmcp: {}",
        mcp.failed, cli.text, mcp.text
    );
    assert_eq!(cli.text, mcp.text, "{argv:?}: the doors say different things");
    code
}

#[tokio::test]
async fn every_tool_ends_and_speaks_the_same_through_both_doors() {
    let project = example_project();
    let dir = project.path();
    let query = "zombie enemy character";
    assert_eq!(
        both(dir, true, &["search", query], "search", json!({ "query": query })).await,
        0
    );
    assert_eq!(
        both(dir, true, &["search", "!!"], "search", json!({"query": "!!"})).await,
        2
    );
    // Too long for any input: refused before anything runs, the same way.
    let long = "zombie ".repeat(3000);
    assert_eq!(
        both(dir, true, &["search", &long], "search", json!({ "query": long })).await,
        2
    );
    assert_eq!(
        both(dir, true, &["pick", "abc"], "pick", json!({"index": "abc"})).await,
        2
    );
    assert_eq!(both(dir, true, &["pick", "7"], "pick", json!({"index": "7"})).await, 1);
    assert_eq!(both(dir, true, &["pick", "0"], "pick", json!({"index": "0"})).await, 0);
    assert_eq!(
        both(dir, true, &["web-search", "ab"], "web_search", json!({"query": "ab"})).await,
        2
    );
    // References refuse alike: a path outside the project, or (at minimal depth) no references read.
    assert_ne!(
        both(
            dir,
            true,
            &["refs", "../outside.mat"],
            "refs",
            json!({"asset": "../outside.mat"})
        )
        .await,
        0
    );
    assert_ne!(
        both(
            dir,
            true,
            &["unused", "--roots", "../x"],
            "unused",
            json!({"roots": ["../x"]})
        )
        .await,
        0
    );
    // The project adds an exec stage: untrusted, every run is refused alike.
    assert_eq!(
        both(dir, false, &["search", query], "search", json!({ "query": query })).await,
        3
    );
    assert_eq!(both(dir, false, &["pick", "0"], "pick", json!({"index": "0"})).await, 3);
    // Doctor reports on an untrusted project instead of refusing it.
    assert_eq!(
        both(dir, false, &["doctor", "--offline"], "doctor", json!({"offline": true})).await,
        0
    );
    assert_eq!(
        both(dir, true, &["doctor", "--offline"], "doctor", json!({"offline": true})).await,
        0
    );
    // The index line ends with the run's time (`0.29s`): the one thing two
    // runs of the same index say differently.
    let untimed = |said: &str| -> String {
        let timing = |w: &str| w.strip_suffix('s').is_some_and(|n| n.parse::<f64>().is_ok());
        said.split(' ')
            .map(|w| if timing(w) { "Ns" } else { w })
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (argv, tool) in [("index", "index"), ("reindex", "reindex")] {
        let (cli, code) = through_cli(dir, true, &[argv]);
        let mcp = through_mcp(dir, true, tool, json!({})).await;
        assert_eq!(
            (code, mcp.failed),
            (0, false),
            "{argv}\ncli: {}\nmcp: {}",
            cli.text,
            mcp.text
        );
        assert_eq!(untimed(&cli.text), untimed(&mcp.text), "{argv}");
    }
}
