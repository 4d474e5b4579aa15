//! The message assembly, the page's answers and the images' files, without the owner loop
//! (`server::app_requests_tests` drives the rest through it).

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::message::{assemble, image_ext, MAX_MESSAGE_BYTES};
use super::*;
use crate::approvals::Silence;

fn no_images(_: &[u8], _: &'static str) -> Result<String, JsonRpcError> {
    panic!("no image in this message")
}

#[test]
fn text_blocks_are_joined_by_blank_lines_and_links_are_their_uri() {
    let params = json!({"role": "user", "content": [
        {"type": "text", "text": "first"},
        {"type": "resource_link", "uri": "file:///r.txt", "name": "r"},
        {"type": "resource", "resource": {"uri": "ui://x", "text": "embedded"}},
        {"type": "text", "text": "last"},
    ]});
    assert_eq!(
        assemble(&params, no_images).as_deref(),
        Ok("first\n\nfile:///r.txt\n\nembedded\n\nlast")
    );
}

#[test]
fn images_become_the_paths_they_were_saved_to() {
    let params = json!({"role": "user", "content": [
        {"type": "text", "text": "see"},
        {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
        {"type": "image", "data": "AAEC", "mimeType": "image/jpeg"},
    ]});
    let mut saved = Vec::new();
    let text = assemble(&params, |data, ext| {
        saved.push((data.to_vec(), ext));
        Ok(format!("/tmp/{}.{ext}", saved.len()))
    });
    assert_eq!(text.as_deref(), Ok("see\n\n/tmp/1.png\n\n/tmp/2.jpg"));
    assert_eq!(
        saved,
        vec![(b"hello".to_vec(), "png"), (vec![0, 1, 2], "jpg")]
    );
    assert_eq!(image_ext("image/unknown"), "img");
}

#[test]
fn audio_long_messages_and_bad_blocks_are_refused() {
    let audio = json!({"role": "user", "content": [
        {"type": "text", "text": "hi"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
    ]});
    let err = assemble(&audio, no_images).expect_err("audio refused");
    assert_eq!(err.code, -32000);
    let long = json!({"role": "user", "content": [
        {"type": "text", "text": "x".repeat(MAX_MESSAGE_BYTES)},
        {"type": "text", "text": "y"},
    ]});
    assert_eq!(assemble(&long, no_images).map_err(|e| e.code), Err(-32000));
    let exact = json!({"role": "user", "content": [{"type": "text", "text": "x".repeat(MAX_MESSAGE_BYTES)}]});
    assert!(
        assemble(&exact, no_images).is_ok(),
        "64 KiB exactly is fine"
    );
    for bad in [
        json!({"role": "assistant", "content": [{"type": "text", "text": "x"}]}),
        json!({"role": "user", "content": "x"}),
        json!({"role": "user", "content": [{"type": "image", "data": "not base64!"}]}),
        json!({"role": "user", "content": [{"type": "video"}]}),
    ] {
        assert_eq!(
            assemble(&bad, no_images).map_err(|e| e.code),
            Err(-32602),
            "{bad}"
        );
    }
    let empty = json!({"role": "user", "content": []});
    assert_eq!(assemble(&empty, no_images).map_err(|e| e.code), Err(-32000));
}

#[test]
fn only_an_allow_is_an_empty_answer_and_the_pane_gone_says_so() {
    use crate::approvals::Outcome::{Decided, NoDecision};
    assert_eq!(
        page_answer(AppKind::OpenLink, Some(Decided(Decision::Allow))),
        Ok(json!({}))
    );
    assert_eq!(
        page_answer(AppKind::SendMessage, Some(Decided(Decision::AllowAlways))),
        Ok(json!({}))
    );
    let gone = Decision::Deny {
        message: Some(PANE_GONE.into()),
    };
    assert_eq!(
        page_answer(AppKind::SendMessage, Some(Decided(gone))),
        Err(JsonRpcError::new(-32000, PANE_GONE))
    );
    let denied = Err(JsonRpcError::new(-32000, "Link opening denied by user"));
    for outcome in [
        Some(Decided(Decision::Deny { message: None })),
        Some(Decided(Decision::DenyAndStop {
            message: Some("no".into()),
        })),
        Some(NoDecision(Silence::Expired)),
        Some(NoDecision(Silence::Withdrawn)),
        None,
    ] {
        assert_eq!(page_answer(AppKind::OpenLink, outcome), denied);
    }
    assert_eq!(
        page_answer(AppKind::CopyMessage, None),
        Err(JsonRpcError::new(-32000, "Message sending denied"))
    );
}

#[test]
fn images_are_private_numbered_and_never_overwritten() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("calyx-mcp-apps");
    let view = ViewId(4);
    let first = images::save(&root, view, 1, b"one", "png").expect("saved");
    assert_eq!(first, root.join("4").join("1.png"));
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .ok()
    };
    assert_eq!(mode(&first), Some(0o600));
    assert_eq!(mode(&root), Some(0o700));
    assert_eq!(mode(&root.join("4")), Some(0o700));
    assert!(images::save(&root, view, 1, b"two", "png").is_err());
    assert_eq!(std::fs::read(&first).ok(), Some(b"one".to_vec()));
    // A symlink where the view's directory goes is not followed.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("dir");
    std::os::unix::fs::symlink(&elsewhere, root.join("5")).expect("symlink");
    assert!(images::save(&root, ViewId(5), 1, b"x", "png").is_err());
    assert!(std::fs::read_dir(&elsewhere).map(|d| d.count()).ok() == Some(0));
}

#[tokio::test]
async fn ask_saves_a_message_image_where_the_message_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let apps = AppRequests::new(tx).with_image_root(dir.path().to_path_buf());
    let hub = crate::views::hub::ViewHub::new();
    let created = hub
        .create(
            crate::views::registry::NewView {
                pane: Some(3),
                alias: "Everything".into(),
                published_tool: "Everything-show".into(),
                original_tool: "show".into(),
                agent: None,
                conversation: None,
            },
            json!({}),
            json!({}),
        )
        .expect("created");
    let view = hub.get(created.id).expect("view");
    let action = HostAction::SendMessage {
        params: json!({"role": "user", "content": [
            {"type": "image", "data": "aGk=", "mimeType": "image/gif"}]}),
    };
    let asking = tokio::spawn(async move { apps.ask(view, action).await });
    let Some(Msg::App(AppMsg::Ask(ask))) = rx.recv().await else {
        panic!("an app request for the owner");
    };
    let path = dir.path().join(created.id.to_string()).join("1.gif");
    assert_eq!(ask.target.text, path.display().to_string());
    assert_eq!(ask.target.kind, AppKind::SendMessage);
    assert_eq!(ask.target.pane, Some(3));
    assert_eq!(std::fs::read(&path).ok(), Some(b"hi".to_vec()));
    let _ = ask.answer.send(Outcome::Decided(Decision::Allow));
    assert_eq!(asking.await.ok(), Some(Ok(json!({}))));
}

#[tokio::test]
async fn a_removed_views_always_choices_and_images_go_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("calyx-mcp-apps");
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let apps = AppRequests::new(tx).with_image_root(root.clone());
    let hub = ViewHub::new();
    apps.follow_removals(&hub);
    let origin = crate::views::registry::NewView {
        pane: None,
        alias: "vanilla".into(),
        published_tool: "vanilla-get-time".into(),
        original_tool: "get-time".into(),
        agent: None,
        conversation: None,
    };
    let kept = hub
        .create(origin.clone(), json!({}), json!({}))
        .expect("view")
        .id;
    let gone = hub.create(origin, json!({}), json!({})).expect("view").id;
    for view in [kept, gone] {
        apps.lock().always.insert((view, AppKind::OpenLink));
        images::save(&root, view, 1, b"img", "png").expect("saved");
    }
    // A symlink in a removed view's place is not followed.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("dir");
    std::fs::write(elsewhere.join("keep"), b"x").expect("file");

    hub.remove(gone);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while root.join(gone.to_string()).exists() {
        assert!(tokio::time::Instant::now() < deadline, "the images stayed");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(!apps.always_allowed(gone, AppKind::OpenLink));
    assert!(apps.always_allowed(kept, AppKind::OpenLink));
    assert!(root.join(kept.to_string()).join("1.png").exists());

    std::os::unix::fs::symlink(&elsewhere, root.join("99")).expect("symlink");
    apps.view_removed(ViewId(99));
    assert!(elsewhere.join("keep").exists(), "a symlink is not followed");
}
