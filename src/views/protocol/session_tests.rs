use serde_json::{json, Value};

use super::*;
use crate::views::protocol::{CallView, HostAction, HostLook, Input, Output};

fn call() -> CallView {
    CallView {
        alias: "vanilla".into(),
        tool: json!({ "name": "get-time" }),
        arguments: json!({ "tz": "UTC" }),
        upstream_id: Some(json!(7)),
        result: None,
        cancelled: None,
        csp_allowed: json!({ "connectDomains": [] }),
    }
}

fn tools(name: &str) -> Option<Value> {
    match name {
        "get-time" => Some(json!({ "name": "get-time" })),
        "app-only" => {
            Some(json!({ "name": "app-only", "_meta": { "ui": { "visibility": ["app"] } } }))
        }
        "model-only" => {
            Some(json!({ "name": "model-only", "_meta": { "ui": { "visibility": ["model"] } } }))
        }
        _ => None,
    }
}

fn run(session: &mut Session, input: Input) -> Vec<Output> {
    session.handle(input, &tools)
}

fn request(id: u64, method: &str, params: Value) -> Input {
    Input::FromView(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
}

fn notify(method: &str, params: Value) -> Input {
    Input::FromView(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
}

fn to_view(out: &[Output]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Output::ToView(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

fn methods(out: &[Output]) -> Vec<String> {
    to_view(out)
        .iter()
        .filter_map(|v| v["method"].as_str().map(str::to_string))
        .collect()
}

fn answer(out: &[Output], id: u64) -> Value {
    to_view(out)
        .into_iter()
        .find(|v| v["id"] == json!(id))
        .unwrap_or_else(|| panic!("no answer to {id} in {out:?}"))
}

fn initialize(session: &mut Session, modes: Value) -> Vec<Output> {
    let mut out = run(
        session,
        request(
            1,
            "ui/initialize",
            json!({
                "appInfo": { "name": "app", "version": "1" },
                "appCapabilities": { "availableDisplayModes": modes },
                "protocolVersion": "2026-01-26",
            }),
        ),
    );
    out.extend(run(
        session,
        notify("ui/notifications/initialized", json!({})),
    ));
    out
}

#[test]
fn initialize_answers_version_host_info_capabilities_and_context() {
    let mut session = Session::new(call(), HostLook::default());
    let out = run(
        &mut session,
        request(
            1,
            "ui/initialize",
            json!({ "protocolVersion": "1999-01-01" }),
        ),
    );
    let result = &answer(&out, 1)["result"];
    assert_eq!(result["protocolVersion"], "2026-01-26");
    assert_eq!(result["hostInfo"]["name"], "calyx");
    assert_eq!(result["hostInfo"]["version"], env!("CARGO_PKG_VERSION"));
    let caps = &result["hostCapabilities"];
    assert_eq!(caps["serverTools"]["listChanged"], true);
    assert_eq!(
        caps["sandbox"]["permissions"],
        json!({ "clipboardWrite": {} })
    );
    assert_eq!(caps["sandbox"]["csp"], json!({ "connectDomains": [] }));
    assert!(caps.get("sampling").is_none());
    let context = &result["hostContext"];
    assert_eq!(context["toolInfo"]["id"], 7);
    assert_eq!(context["toolInfo"]["tool"]["name"], "get-time");
    assert_eq!(context["theme"], "dark");
    assert_eq!(context["displayMode"], "inline");
    assert_eq!(
        context["availableDisplayModes"],
        json!(["inline", "fullscreen", "pip"])
    );
    assert_eq!(context["platform"], "web");
    assert_eq!(
        context["userAgent"],
        format!("calyx/{}", env!("CARGO_PKG_VERSION"))
    );
    assert!(context["styles"]["variables"]["--color-background-primary"].is_string());
}

#[test]
fn nothing_reaches_the_view_before_initialized() {
    let mut done = call();
    done.result = Some(json!({ "content": [] }));
    let mut session = Session::new(done.clone(), HostLook::default());
    let out = run(
        &mut session,
        Input::ServerNotification(
            json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" }),
        ),
    );
    assert!(out.is_empty(), "{out:?}");
    let out = run(&mut session, request(1, "ui/initialize", json!({})));
    assert_eq!(
        methods(&out),
        Vec::<String>::new(),
        "only the answer goes out"
    );
    let out = run(&mut session, Input::Record(done));
    assert!(to_view(&out).is_empty(), "{out:?}");
    let out = run(
        &mut session,
        notify("ui/notifications/initialized", json!({})),
    );
    assert_eq!(
        methods(&out),
        [
            "notifications/tools/list_changed",
            "ui/notifications/tool-input",
            "ui/notifications/tool-result"
        ]
    );
}

#[test]
fn tool_input_goes_once_then_the_result_once() {
    let mut session = Session::new(call(), HostLook::default());
    let out = initialize(&mut session, json!([]));
    assert_eq!(methods(&out), ["ui/notifications/tool-input"]);
    assert_eq!(
        to_view(&out)[1]["params"]["arguments"],
        json!({ "tz": "UTC" })
    );
    let mut done = call();
    done.result =
        Some(json!({ "content": [{ "type": "text", "text": "12:00" }], "isError": true }));
    let out = run(&mut session, Input::Record(done.clone()));
    assert_eq!(methods(&out), ["ui/notifications/tool-result"]);
    assert_eq!(
        to_view(&out)[0]["params"],
        done.result.clone().unwrap_or_default()
    );
    let out = run(&mut session, Input::Record(done));
    assert!(methods(&out).is_empty(), "the result goes once: {out:?}");
    let out = run(
        &mut session,
        notify("ui/notifications/initialized", json!({})),
    );
    assert!(
        methods(&out).is_empty(),
        "a second initialized replays nothing"
    );
}

#[test]
fn a_late_page_gets_input_and_cancellation_replayed() {
    let mut cancelled = call();
    cancelled.cancelled = Some("the agent cancelled".into());
    let mut session = Session::new(cancelled, HostLook::default());
    let out = initialize(&mut session, json!([]));
    let sent = to_view(&out);
    assert_eq!(
        methods(&out),
        [
            "ui/notifications/tool-input",
            "ui/notifications/tool-cancelled"
        ]
    );
    assert_eq!(sent[2]["params"]["reason"], "the agent cancelled");
}

#[test]
fn a_cancellation_after_initialized_is_sent_and_a_later_result_is_not() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    let mut cancelled = call();
    cancelled.cancelled = Some("session closed".into());
    let out = run(&mut session, Input::Record(cancelled.clone()));
    assert_eq!(methods(&out), ["ui/notifications/tool-cancelled"]);
    cancelled.result = Some(json!({}));
    assert!(methods(&run(&mut session, Input::Record(cancelled))).is_empty());
}

#[test]
fn teardown_waits_for_the_answer() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    let out = run(&mut session, Input::Teardown);
    assert_eq!(methods(&out), ["ui/resource-teardown"]);
    assert!(out.contains(&Output::TeardownStarted));
    assert!(!session.is_closed());
    let id = to_view(&out)[0]["id"].clone();
    // Meanwhile the view is heard only for its reply: no request is answered or acted on.
    assert!(run(&mut session, request(5, "ping", json!({}))).is_empty());
    let link = request(6, "ui/open-link", json!({ "url": "https://example.com" }));
    assert!(run(&mut session, link).is_empty());
    let other_reply = json!({ "jsonrpc": "2.0", "id": "not-the-teardown", "result": {} });
    assert!(run(&mut session, Input::FromView(other_reply)).is_empty());
    assert!(!session.is_closed());
    let out = run(
        &mut session,
        Input::FromView(json!({ "jsonrpc": "2.0", "id": id, "result": {} })),
    );
    assert_eq!(out, [Output::Closed]);
    assert!(session.is_closed());
    assert!(run(&mut session, Input::TeardownTimeout).is_empty());
}

#[test]
fn teardown_closes_after_the_timeout_without_an_answer() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    run(&mut session, Input::Teardown);
    assert!(run(&mut session, Input::Teardown).is_empty(), "sent once");
    assert_eq!(run(&mut session, Input::TeardownTimeout), [Output::Closed]);
    assert!(run(&mut session, request(5, "ping", json!({}))).is_empty());
    assert_eq!(TEARDOWN_TIMEOUT, std::time::Duration::from_secs(2));
}

#[test]
fn teardown_before_initialized_closes_at_once() {
    let mut session = Session::new(call(), HostLook::default());
    assert_eq!(run(&mut session, Input::Teardown), [Output::Closed]);
}

#[test]
fn display_mode_switches_only_to_declared_modes() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!(["inline", "fullscreen"]));
    let out = run(
        &mut session,
        request(2, "ui/request-display-mode", json!({ "mode": "pip" })),
    );
    assert_eq!(answer(&out, 2)["result"], json!({ "mode": "inline" }));
    assert_eq!(methods(&out), Vec::<String>::new());
    let out = run(
        &mut session,
        request(
            3,
            "ui/request-display-mode",
            json!({ "mode": "fullscreen" }),
        ),
    );
    assert_eq!(answer(&out, 3)["result"], json!({ "mode": "fullscreen" }));
    assert!(out.contains(&Output::ToPage(
        json!({ "type": "display-mode", "mode": "fullscreen" })
    )));
    let changed = to_view(&out)
        .into_iter()
        .find(|v| v["method"] == "ui/notifications/host-context-changed")
        .unwrap_or_default();
    assert_eq!(changed["params"]["displayMode"], "fullscreen");
    assert!(
        changed["params"].get("theme").is_none(),
        "only changed fields"
    );
    assert_eq!(session.display_mode(), "fullscreen");
    // The page's own × goes back to inline.
    let out = run(&mut session, Input::FromPage(json!({ "calyx": "inline" })));
    assert!(out.contains(&Output::ToPage(
        json!({ "type": "display-mode", "mode": "inline" })
    )));
}

#[test]
fn a_repeated_initialize_replaces_the_declared_modes() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!(["pip"]));
    run(
        &mut session,
        request(4, "ui/initialize", json!({ "appCapabilities": {} })),
    );
    let out = run(
        &mut session,
        request(5, "ui/request-display-mode", json!({ "mode": "pip" })),
    );
    assert_eq!(answer(&out, 5)["result"]["mode"], "inline");
}

#[test]
fn view_tool_calls_need_app_visibility() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    for (id, name) in [(2, "model-only"), (3, "missing")] {
        let out = run(
            &mut session,
            request(id, "tools/call", json!({ "name": name })),
        );
        assert_eq!(answer(&out, id)["error"]["code"], -32602, "{name}");
    }
    let out = run(&mut session, request(4, "tools/call", json!({})));
    assert_eq!(answer(&out, 4)["error"]["code"], -32602);
    for (id, name) in [(5, "app-only"), (6, "get-time")] {
        let out = run(
            &mut session,
            request(id, "tools/call", json!({ "name": name })),
        );
        let Some(Output::Upstream {
            key,
            method,
            params,
        }) = out.first().cloned()
        else {
            panic!("not forwarded: {out:?}");
        };
        assert_eq!(method, "tools/call");
        assert_eq!(params["name"], name);
        let out = run(
            &mut session,
            Input::Reply {
                key,
                result: Ok(json!({ "content": [] })),
            },
        );
        assert_eq!(answer(&out, id)["result"], json!({ "content": [] }));
    }
}

#[test]
fn resources_and_prompts_are_forwarded_and_errors_come_back() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    for (id, method) in [
        (2, "resources/read"),
        (3, "resources/list"),
        (4, "resources/templates/list"),
        (5, "prompts/list"),
    ] {
        let out = run(
            &mut session,
            request(id, method, json!({ "uri": "ui://x" })),
        );
        let Some(Output::Upstream {
            key, method: sent, ..
        }) = out.first().cloned()
        else {
            panic!("not forwarded: {out:?}");
        };
        assert_eq!(sent, method);
        let out = run(
            &mut session,
            Input::Reply {
                key,
                result: Err(JsonRpcError::new(-32002, "no such resource")),
            },
        );
        assert_eq!(answer(&out, id)["error"]["code"], -32002);
    }
}

#[test]
fn sampling_and_unknown_methods_are_not_found() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    for (id, method) in [(2, "sampling/createMessage"), (3, "nope/what")] {
        let out = run(&mut session, request(id, method, json!({})));
        assert_eq!(answer(&out, id)["error"]["code"], -32601);
    }
    let out = run(&mut session, request(4, "ping", json!({})));
    assert_eq!(answer(&out, 4)["result"], json!({}));
}

#[test]
fn at_most_eight_requests_in_flight() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    let mut keys = Vec::new();
    for id in 10..18 {
        let out = run(&mut session, request(id, "resources/list", json!({})));
        let Some(Output::Upstream { key, .. }) = out.first().cloned() else {
            panic!("not forwarded: {out:?}");
        };
        keys.push(key);
    }
    let out = run(&mut session, request(18, "resources/list", json!({})));
    let refused = answer(&out, 18);
    assert_eq!(refused["error"]["code"], -32000);
    assert_eq!(refused["error"]["message"], "too many requests in flight");
    run(
        &mut session,
        Input::Reply {
            key: keys[0],
            result: Ok(json!({})),
        },
    );
    let out = run(&mut session, request(19, "resources/list", json!({})));
    assert!(matches!(out.first(), Some(Output::Upstream { .. })));
}

#[test]
fn model_context_is_stored_up_to_one_mebibyte() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    let context = json!({ "content": [{ "type": "text", "text": "budget 10" }] });
    let out = run(
        &mut session,
        request(2, "ui/update-model-context", context.clone()),
    );
    assert_eq!(answer(&out, 2)["result"], json!({}));
    assert_eq!(session.model_context(), Some(&context));
    assert!(out.contains(&Output::Action {
        key: None,
        action: HostAction::ModelContext {
            params: context.clone()
        }
    }));
    let huge = json!({ "content": [{ "type": "text", "text": "x".repeat(1024 * 1024) }] });
    let out = run(&mut session, request(3, "ui/update-model-context", huge));
    assert_eq!(answer(&out, 3)["error"]["code"], -32000);
    assert_eq!(session.model_context(), Some(&context), "the old one stays");
}

#[test]
fn log_lines_are_kept_up_to_two_hundred() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    for n in 0..205 {
        let out = run(
            &mut session,
            notify(
                "notifications/message",
                json!({ "level": "info", "data": n }),
            ),
        );
        assert!(matches!(
            out.as_slice(),
            [Output::Action {
                action: HostAction::Log { .. },
                ..
            }]
        ));
    }
    let kept: Vec<_> = session.logs().map(|l| l["data"].clone()).collect();
    assert_eq!(kept.len(), 200);
    assert_eq!(kept[0], 5);
    assert_eq!(kept[199], 204);
}

#[test]
fn open_link_allows_only_http_https_and_mailto() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    for (id, url) in [
        (2, "javascript:alert(1)".to_string()),
        (3, "file:///etc/passwd".to_string()),
        (4, "http:evil".to_string()),
        (8, "https://".to_string()),
        (9, "https://a\nb".to_string()),
        (5, format!("https://example.com/{}", "a".repeat(8 * 1024))),
    ] {
        let out = run(
            &mut session,
            request(id, "ui/open-link", json!({ "url": url })),
        );
        let refused = answer(&out, id);
        assert_eq!(
            refused["error"]["message"],
            "Policy violation: only http, https and mailto links"
        );
    }
    let out = run(
        &mut session,
        request(6, "ui/open-link", json!({ "url": "https://example.com/a" })),
    );
    let Some(Output::Action {
        key: Some(key),
        action,
    }) = out.first().cloned()
    else {
        panic!("no prompt: {out:?}");
    };
    assert_eq!(
        action,
        HostAction::OpenLink {
            url: "https://example.com/a".into()
        }
    );
    let out = run(
        &mut session,
        Input::Reply {
            key,
            result: Ok(json!({})),
        },
    );
    assert!(out.contains(&Output::ToPage(
        json!({ "type": "open-link", "url": "https://example.com/a" })
    )));
    assert_eq!(answer(&out, 6)["result"], json!({}));
    // Denied: the error goes back, the page opens nothing.
    let out = run(
        &mut session,
        request(7, "ui/open-link", json!({ "url": "mailto:a@b.c" })),
    );
    let Some(Output::Action { key: Some(key), .. }) = out.first().cloned() else {
        panic!("no prompt: {out:?}");
    };
    let denied = JsonRpcError::new(-32000, "Link opening denied by user");
    let out = run(
        &mut session,
        Input::Reply {
            key,
            result: Err(denied),
        },
    );
    assert_eq!(out.len(), 1);
    assert_eq!(
        answer(&out, 7)["error"]["message"],
        "Link opening denied by user"
    );
}

#[test]
fn messages_downloads_and_teardown_requests_become_actions() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    let message = json!({ "role": "user", "content": [{ "type": "text", "text": "hi" }] });
    let out = run(&mut session, request(2, "ui/message", message.clone()));
    assert!(matches!(
        out.as_slice(),
        [Output::Action { key: Some(_), action: HostAction::SendMessage { params } }] if *params == message
    ));
    let download = json!({ "contents": [{ "type": "resource", "resource": { "uri": "file:///r.txt", "text": "x" } }] });
    let out = run(&mut session, request(3, "ui/download-file", download));
    let Some(Output::ToPage(offer)) = out.first().cloned() else {
        panic!("no offer: {out:?}");
    };
    assert_eq!(offer["type"], "download");
    let out = run(
        &mut session,
        Input::FromPage(json!({ "calyx": "download-done", "key": offer["key"], "ok": false })),
    );
    assert_eq!(answer(&out, 3)["result"], json!({ "isError": true }));
    let out = run(
        &mut session,
        notify("ui/notifications/request-teardown", json!({})),
    );
    assert_eq!(
        out,
        [Output::Action {
            key: None,
            action: HostAction::TeardownRequested
        }]
    );
    let out = run(
        &mut session,
        notify("ui/notifications/size-changed", json!({ "height": 320 })),
    );
    assert_eq!(
        out,
        [Output::ToPage(json!({ "type": "size", "height": 320.0 }))]
    );
}

#[test]
fn context_changes_send_only_the_changed_fields() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    let light = HostLook {
        theme: "light".into(),
        ..HostLook::default()
    };
    let out = run(&mut session, Input::Look(light.clone()));
    let sent = to_view(&out);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "ui/notifications/host-context-changed");
    assert_eq!(sent[0]["params"], json!({ "theme": "light" }));
    assert!(to_view(&run(&mut session, Input::Look(light))).is_empty());
    let hello = json!({
        "calyx": "hello",
        "locale": "de-DE",
        "timeZone": "Europe/Berlin",
        "sizes": { "inline": { "width": 800, "maxHeight": 600 }, "viewport": { "width": 1200, "height": 900 } },
    });
    let out = run(&mut session, Input::FromPage(hello));
    let params = &to_view(&out)[0]["params"];
    assert_eq!(params["locale"], "de-DE");
    assert_eq!(
        params["containerDimensions"],
        json!({ "width": 800.0, "maxHeight": 600.0 })
    );
}

#[test]
fn the_pages_close_button_and_resizes() {
    let mut session = Session::new(call(), HostLook::default());
    initialize(&mut session, json!([]));
    let out = run(&mut session, Input::FromPage(json!({ "calyx": "close" })));
    assert_eq!(
        out,
        [Output::Action {
            key: None,
            action: HostAction::TeardownRequested
        }]
    );
    let sizes = json!({ "inline": { "width": 640, "maxHeight": 480 }, "viewport": { "width": 1000, "height": 700 } });
    let out = run(
        &mut session,
        Input::FromPage(json!({ "calyx": "resize", "sizes": sizes })),
    );
    let sent = to_view(&out);
    assert_eq!(
        sent[0]["params"],
        json!({ "containerDimensions": { "width": 640.0, "maxHeight": 480.0 } })
    );
    // The page cannot switch modes by itself, only back to inline.
    assert!(run(&mut session, Input::FromPage(json!({ "calyx": "inline" }))).is_empty());
    assert!(run(
        &mut session,
        Input::FromPage(json!({ "calyx": "fullscreen" }))
    )
    .is_empty());
}

#[test]
fn the_upstream_id_arriving_later_is_a_context_change() {
    let mut early = call();
    early.upstream_id = None;
    let mut session = Session::new(early, HostLook::default());
    let out = initialize(&mut session, json!([]));
    assert_eq!(
        answer(&out, 1)["result"]["hostContext"]["toolInfo"]["id"],
        Value::Null
    );
    let out = run(&mut session, Input::Record(call()));
    let changed = to_view(&out)
        .into_iter()
        .find(|v| v["method"] == "ui/notifications/host-context-changed")
        .unwrap_or_default();
    assert_eq!(changed["params"]["toolInfo"]["id"], 7);
}

fn initialize_with_tools(session: &mut Session) -> Vec<Output> {
    let mut out = run(
        session,
        request(
            1,
            "ui/initialize",
            json!({ "appCapabilities": { "tools": { "listChanged": true } } }),
        ),
    );
    out.extend(run(
        session,
        notify("ui/notifications/initialized", json!({})),
    ));
    out
}

fn respond(id: &Value, result: Value) -> Input {
    Input::FromView(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

#[test]
fn a_view_with_tools_is_asked_for_them_after_initialized_and_on_change() {
    let mut session = Session::new(call(), HostLook::default());
    let out = initialize_with_tools(&mut session);
    let list = to_view(&out)
        .into_iter()
        .find(|v| v["method"] == "tools/list")
        .unwrap_or_else(|| panic!("no tools/list: {out:?}"));
    let tools = json!({ "tools": [{ "name": "get-allocations" }, { "nameless": true }] });
    let out = run(&mut session, respond(&list["id"], tools));
    assert_eq!(
        out,
        [Output::Action {
            key: None,
            action: HostAction::AppTools {
                tools: vec![json!({ "name": "get-allocations" })]
            }
        }]
    );
    assert!(session.published_app_tools());
    let out = run(
        &mut session,
        notify("notifications/tools/list_changed", json!({})),
    );
    assert_eq!(methods(&out), ["tools/list"]);
    // A view without the capability is never asked.
    let mut plain = Session::new(call(), HostLook::default());
    let out = initialize(&mut plain, json!([]));
    assert!(!methods(&out).contains(&"tools/list".to_string()));
}

#[test]
fn app_tool_calls_go_to_the_view_and_come_back() {
    let mut session = Session::new(call(), HostLook::default());
    let out = run(
        &mut session,
        Input::CallAppTool {
            key: 5,
            name: "get-allocations".into(),
            arguments: json!({}),
        },
    );
    assert!(
        matches!(
            &out[..],
            [Output::AppToolResult {
                key: 5,
                result: Err(_)
            }]
        ),
        "not open yet: {out:?}"
    );
    let out = initialize_with_tools(&mut session);
    let list = to_view(&out)
        .into_iter()
        .find(|v| v["method"] == "tools/list")
        .unwrap_or_default();
    run(
        &mut session,
        respond(
            &list["id"],
            json!({ "tools": [{ "name": "get-allocations" }] }),
        ),
    );
    let out = run(
        &mut session,
        Input::CallAppTool {
            key: 6,
            name: "get-allocations".into(),
            arguments: json!({ "year": 2026 }),
        },
    );
    let sent = to_view(&out);
    assert_eq!(sent[0]["method"], "tools/call");
    assert_eq!(
        sent[0]["params"],
        json!({ "name": "get-allocations", "arguments": { "year": 2026 } })
    );
    let result = json!({ "content": [{ "type": "text", "text": "40%" }] });
    let out = run(&mut session, respond(&sent[0]["id"], result.clone()));
    assert_eq!(
        out,
        [Output::AppToolResult {
            key: 6,
            result: Ok(result)
        }]
    );
    // An error answer comes back as the error.
    let out = run(
        &mut session,
        Input::CallAppTool {
            key: 7,
            name: "x".into(),
            arguments: json!({}),
        },
    );
    let id = to_view(&out)[0]["id"].clone();
    let out = run(
        &mut session,
        Input::FromView(
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32602, "message": "no such tool" } }),
        ),
    );
    assert!(matches!(
        &out[..],
        [Output::AppToolResult { key: 7, result: Err(e) }] if e.code == -32602 && e.message == "no such tool"
    ));
    // An answer to nothing is ignored.
    assert!(run(&mut session, respond(&json!("calyx-call-99"), json!({}))).is_empty());
}
