use super::*;

fn code_of(line: &str) -> ErrorCode {
    match parse_request(line.as_bytes()) {
        Ok(request) => panic!("{line:?} parsed as {request:?}"),
        Err(e) => e.code,
    }
}

#[test]
fn every_request_round_trips_through_its_wire_form() {
    let requests = [
        Request::Ls,
        Request::New { thread: Some("agent".into()), cwd: Some("/tmp".into()), command: vec![] },
        Request::Split { pane: 2, direction: SplitDirection::Down, command: vec!["vim".into()] },
        Request::Send { pane: 1, text: None, keys: Some("C-c".into()) },
        Request::Send { pane: 1, text: Some("a\"b\n".into()), keys: None },
        Request::Capture { pane: 4, scrollback: true },
        Request::Focus { pane: 1 },
        Request::Close { pane: 1 },
        Request::Kill { pane: 1 },
        Request::Resize { pane: 1, cols: 100, rows: 30 },
        Request::Reconnect { host: "build-box".into() },
        Request::Stop,
    ];
    for request in requests {
        let line = encode_request(&request).expect("encode");
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'), "{line:?}");
        assert_eq!(parse_request(line.trim_end().as_bytes()), Ok(request));
    }
}

#[test]
fn bad_lines_get_the_error_code_that_says_why() {
    let cases = [
        ("", ErrorCode::Malformed),
        ("{", ErrorCode::Malformed),
        ("\u{0}\u{1}garbage", ErrorCode::Malformed),
        ("[1,2]", ErrorCode::Malformed),
        ("\"ls\"", ErrorCode::Malformed),
        (r#"{"verb":"ls"}"#, ErrorCode::Version),
        (r#"{"protocol":2,"verb":"ls"}"#, ErrorCode::Version),
        (r#"{"protocol":"1","verb":"ls"}"#, ErrorCode::Version),
        (r#"{"protocol":1}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":7}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"rm -rf"}"#, ErrorCode::UnknownVerb),
        (r#"{"protocol":1,"verb":"send","pane":1}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"send","pane":1,"text":"a","keys":"b"}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"focus"}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"focus","pane":-1}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"focus","pane":99999999999}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"focus","pane":1,"extra":true}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"split","pane":1,"direction":"up"}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"new","command":"vim"}"#, ErrorCode::BadRequest),
        (r#"{"protocol":1,"verb":"resize","pane":1,"cols":1e99,"rows":2}"#, ErrorCode::BadRequest),
    ];
    for (line, code) in cases {
        assert_eq!(code_of(line), code, "{line}");
    }
}

#[test]
fn deeply_nested_json_is_an_error_not_a_stack_overflow() {
    let line = "[".repeat(100_000);
    assert_eq!(code_of(&line), ErrorCode::Malformed);
}

#[test]
fn replies_from_newer_instances_still_parse() {
    let line = r#"{"protocol":1,"ok":false,"error":{"code":"brand_new","message":"m"},"extra":{}}"#;
    let reply: Reply = serde_json::from_str(line).expect("parse");
    assert_eq!(reply.error.map(|e| e.code), Some(ErrorCode::Other));
}

#[test]
fn an_error_reply_names_its_code_on_the_wire() {
    let line = Reply::error(ErrorCode::NoSuchPane, "no pane 9").to_line();
    assert_eq!(
        line,
        "{\"protocol\":1,\"ok\":false,\"error\":{\"code\":\"no_such_pane\",\"message\":\"no pane 9\"}}\n"
    );
}
