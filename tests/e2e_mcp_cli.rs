//! `calyx mcp` as scripts use it: every command that prints takes `--json` and prints one JSON
//! document on stdout (the outcome, or `{"error", "exit"}` with the sentence also on stderr),
//! never a secret value; and each bad input of issue 16's "Errors" list that the shell can give
//! prints its one sentence naming the input, exit 2.

use crate::common::Env;
use crate::e2e_mcp_hosted::{calyx, calyx_ok, stderr, stdout, world};

use serde_json::{json, Value};

fn document(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("one JSON document on stdout ({e}): {}", stdout(out)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changing_commands_print_their_outcome_as_json() {
    let env = world("");
    let out = calyx(
        &env,
        &[
            "mcp",
            "add",
            "ev",
            "--json",
            "--env",
            "API_KEY=sk-calyx-test-secret",
            "--",
            "calyx-no-such-test-server",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        document(&out),
        json!({"alias": "ev", "result": "added", "warnings": []})
    );
    assert!(!stdout(&out).contains("sk-calyx-test-secret"));

    // A warning comes in the list.
    let out = calyx(
        &env,
        &[
            "mcp",
            "add",
            "web",
            "--json",
            "--url",
            "http://calyx-no-such-host.invalid/mcp",
        ],
    )
    .await;
    let added = document(&out);
    assert_eq!(added["result"], "added");
    assert!(
        added["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("plain http")),
        "{added}"
    );

    for (args, result) in [
        (
            vec!["mcp", "edit", "ev", "--name", "Ev 2", "--json"],
            "changed",
        ),
        (vec!["mcp", "disable", "ev", "--json"], "disabled"),
        (vec!["mcp", "enable", "ev", "--json"], "enabled"),
        (vec!["mcp", "retry", "ev", "--json"], "reconnecting"),
        (vec!["mcp", "remove", "web", "--json"], "removed"),
    ] {
        let out = calyx(&env, &args).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(
            document(&out),
            json!({"alias": args[2], "result": result, "warnings": []}),
            "{args:?}"
        );
    }

    // A failure: the sentence on stderr, the same in a JSON document on stdout, the exit code.
    let out = calyx(&env, &["mcp", "enable", "nosuch", "--json"]).await;
    assert_eq!(out.status.code(), Some(2));
    let failed = document(&out);
    assert_eq!(failed["exit"], 2);
    let sentence = failed["error"].as_str().unwrap_or_default().to_string();
    assert!(
        sentence.contains("no hosted server has the alias `nosuch`"),
        "{failed}"
    );
    assert!(stderr(&out).contains(&sentence), "{}", stderr(&out));

    // Import: the dry run's preview, then the outcome, each one document.
    let file = env.path().join("claude.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {
            "ev": {"command": "calyx-no-such-test-server", "alwaysAllow": ["x"]},
            "github": {"command": "gh-mcp",
                       "env": {"GITHUB_TOKEN": "${CALYX_TEST_UNSET_TOKEN}", "PLAIN": "plain-secret"}}}})
        .to_string(),
    )
    .expect("write");
    let file = file.display().to_string();
    let out = calyx(&env, &["mcp", "import", &file, "--dry-run", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let preview = document(&out);
    assert_eq!(preview["dry_run"], true);
    assert_eq!(preview["imported"], json!([]));
    let servers = preview["servers"].as_array().cloned().unwrap_or_default();
    let ev = servers.iter().find(|s| s["key"] == "ev").expect("ev");
    assert_eq!(ev["action"], "rename");
    assert_eq!(ev["alias"], "ev2");
    assert_eq!(ev["renamed_from"], "ev");
    assert_eq!(ev["ignored"], json!(["alwaysAllow"]));
    let github = servers
        .iter()
        .find(|s| s["key"] == "github")
        .expect("github");
    assert_eq!(github["action"], "add");
    assert_eq!(github["enabled"], false);
    assert_eq!(github["unresolved"], json!(["CALYX_TEST_UNSET_TOKEN"]));
    assert!(!stdout(&out).contains("plain-secret"), "{}", stdout(&out));

    let out = calyx(&env, &["mcp", "import", &file, "--yes", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let outcome = document(&out);
    assert_eq!(outcome["dry_run"], false);
    assert_eq!(outcome["imported"], json!(["ev2", "github"]));
    assert!(!stdout(&out).contains("plain-secret"));
    assert!(
        stderr(&out).contains("add as `ev2`"),
        "the text preview goes to stderr: {}",
        stderr(&out)
    );

    // Without --json the text stays as it was.
    let text = calyx_ok(&env, &["mcp", "disable", "ev2"]).await;
    assert_eq!(text, "`ev2` disabled\n");
    let list = calyx_ok(&env, &["mcp", "list"]).await;
    assert!(
        list.lines()
            .last()
            .is_some_and(|l| l.starts_with("secrets: ")),
        "the list ends with the secret store's line: {list}"
    );
}

#[test]
fn bad_input_from_the_shell_names_it_and_exits_2() {
    let env = Env::new();
    let long = "n".repeat(65);
    let bad_json = env.path().join("bad.json");
    std::fs::write(&bad_json, "{\n  \"mcpServers\": {,\n}").expect("write");
    let wrong_type = env.path().join("wrong.json");
    std::fs::write(&wrong_type, r#"{"x": {"url": 5}}"#).expect("write");
    let missing = env.path().join("no-such-dir").display().to_string();
    let bad_json = bad_json.display().to_string();
    let wrong_type = wrong_type.display().to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["mcp", "add", "ev", "--name", &long, "--", "node"],
            "the name of `ev` has 65 characters: shorten it to 64 at most".into(),
        ),
        (
            vec!["mcp", "edit", "ev", "--name", &long],
            "the name of `ev` has 65 characters: shorten it to 64 at most".into(),
        ),
        (
            vec!["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "Bad Name: x"],
            "the header name `Bad Name` of `web` is invalid: use letters, digits and !#$%&'*+-.^_`|~ only".into(),
        ),
        (
            vec!["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "X-Team: a\nb"],
            "the value of header `X-Team` of `web` contains a line break: enter it on one line".into(),
        ),
        (
            vec!["mcp", "add", "ev", "--cwd", &missing, "--", "node"],
            format!("the working directory `{missing}` of `ev` does not exist: create it or choose another"),
        ),
        (
            vec!["mcp", "edit", "ev", "--cwd", &missing],
            format!("the working directory `{missing}` of `ev` does not exist: create it or choose another"),
        ),
        (
            vec!["mcp", "import", &bad_json, "--dry-run"],
            "the import JSON does not parse at line 2, column 18".into(),
        ),
        (
            vec!["mcp", "import", &wrong_type, "--dry-run"],
            r#"server 'x': "url" must be a string"#.into(),
        ),
    ];
    for (args, sentence) in cases {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&sentence),
            "{args:?}: wanted {sentence:?} in {}",
            stderr(&out)
        );
    }
    assert!(
        !env.path().join("run/calyx/server.sock").exists(),
        "bad input starts no server"
    );
}
