use super::*;

fn round_trip_window(frame: ToWindow) {
    let bytes = frame.encode();
    let mut buf = Vec::new();
    let read = read_frame(&mut &bytes[..], MAX_FRAME, &mut buf).unwrap();
    assert_eq!(ToWindow::decode(read).unwrap(), frame);
}

#[test]
fn every_frame_reads_back_as_written() {
    for frame in [
        ToWindow::Hello { version: VERSION, server_pid: 42 },
        ToWindow::Pane { pane: 3, snapshot: vec![1, 2, 3] },
        ToWindow::Chunk {
            pane: 7,
            masked: true,
            bytes: b"hello\x1b[m".to_vec(),
            edits: vec![0, 0],
        },
        ToWindow::Closed { pane: 9 },
        ToWindow::View { json: b"{}".to_vec() },
        ToWindow::Rows { pane: 2, first: 1 << 40, rows: vec![4, 5] },
        ToWindow::Refused { reason: "no".into() },
        ToWindow::Said { text: "cannot split".into() },
        ToWindow::Opened { request: 4, pane: 12, withheld: vec![] },
        ToWindow::Opened {
            request: 4,
            pane: 12,
            withheld: vec![("k".into(), "pinned to claude".into())],
        },
        ToWindow::Program { request: 6, found: Ok(("/usr/bin/tool".into(), "ab12".into())) },
        ToWindow::Program { request: 7, found: Err("no program \"x\" here".into()) },
        ToWindow::NotOpened { request: 5, reason: "threads[0].lock: no".into() },
    ] {
        round_trip_window(frame);
    }
    for frame in [
        ToServer::Hello { version: VERSION },
        ToServer::Input { pane: 1, bytes: b"ls\r".to_vec() },
        ToServer::Detach,
        ToServer::Area { cols: 200, rows: 50 },
        ToServer::Scrollback { pane: 3, before: 12_345, count: 100 },
        ToServer::Act(WindowAction::Divider { pane: 2, index: 1, ratio: 0.25 }),
        ToServer::Act(WindowAction::NewTab { from: None }),
        ToServer::Act(WindowAction::OpenThread {
            request: 1,
            thread: "(name: \"a\", command: [\"sh\"])".into(),
            cols: 120,
            rows: 40,
        }),
        ToServer::Act(WindowAction::SizePane { pane: 3, cols: 80, rows: 24 }),
        ToServer::Act(WindowAction::Fingerprint { request: 2, program: "claude".into() }),
        ToServer::Secrets { request: 1, handed: handed() },
    ] {
        let bytes = frame.encode();
        let mut buf = Vec::new();
        let read = read_frame(&mut &bytes[..], MAX_FRAME, &mut buf).unwrap();
        assert_eq!(ToServer::decode(read).unwrap(), frame);
    }
}

fn handed() -> Handed {
    let approved =
        ApprovedProgram { path: "/bin/tool".into(), sha256: "ff".into(), approved_at: "t".into() };
    Handed {
        host: "box".into(),
        secrets: vec![
            HandedSecret {
                name: "k".into(),
                value: SecretBytes::new(b"s3cr3t\0\n"),
                approved: vec![],
            },
            HandedSecret {
                name: "p".into(),
                value: SecretBytes::new(b"v2"),
                approved: vec![approved],
            },
        ],
        withheld: vec![("q".into(), "pinned".into())],
    }
}

/// A frame of secrets cut anywhere, or claiming more secrets than it holds, is refused.
#[test]
fn a_secrets_frame_cut_short_is_an_error() {
    let frame = ToServer::Secrets { request: 1, handed: handed() }.encode();
    for len in 1..frame.len() - 4 {
        assert!(ToServer::decode(&frame[4..4 + len]).is_err(), "cut to {len}");
    }
    let mut claims = ToServer::Secrets { request: 1, handed: Handed::default() }.encode();
    let count_at = claims.len() - 8;
    claims[count_at..count_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(ToServer::decode(&claims[4..]).is_err());
    // Its Debug shows no value.
    let shown = format!("{:?}", ToServer::Secrets { request: 1, handed: handed() });
    assert!(!shown.contains("s3cr3t") && !shown.contains("115, 51"), "{shown}");
}

#[test]
fn bad_frames_are_errors() {
    let frame = ToServer::Input { pane: 1, bytes: b"abc".to_vec() }.encode();
    for len in 1..frame.len() - 4 {
        assert!(ToServer::decode(&frame[4..4 + len]).is_err(), "cut to {len}");
    }
    assert!(ToServer::decode(&[200]).is_err());
    assert!(ToServer::decode(&[]).is_err());
    let mut longer = frame[4..].to_vec();
    longer.push(0);
    assert!(ToServer::decode(&longer).is_err());
    // A length past the limit is refused before anything is read or allocated.
    let mut buf = Vec::new();
    let huge = [0xff, 0xff, 0xff, 0x7f, 1];
    assert!(matches!(read_frame(&mut &huge[..], MAX_FRAME, &mut buf), Err(WireError::TooLarge(_))));
    assert!(buf.capacity() < 1024);
    assert!(matches!(read_frame(&mut &[][..], MAX_FRAME, &mut buf), Err(WireError::Closed)));
    let input = ToServer::Input { pane: 1, bytes: vec![0; MAX_INPUT + 1] }.encode();
    assert!(matches!(ToServer::decode(&input[4..]), Err(WireError::TooLarge(_))));
    // An action that is not one, or names a field no action has.
    for json in [&b"{}"[..], br#"{"action":"explode"}"#, br#"{"action":"close","pane":1,"x":2}"#] {
        let mut frame = vec![6];
        frame.extend_from_slice(&(json.len() as u32).to_le_bytes());
        frame.extend_from_slice(json);
        assert!(ToServer::decode(&frame).is_err(), "{}", String::from_utf8_lossy(json));
    }
}

#[cfg(unix)]
#[test]
fn a_server_that_closes_with_input_unread_is_read_to_its_last_frame_then_closed() {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    let (mut window, mut server) = UnixStream::pair().unwrap();
    // The window says something the server never reads; the server says farewell and goes.
    window.write_all(&ToServer::Detach.encode()).unwrap();
    let farewell = ToWindow::Said { text: "bye".into() };
    write_frames(&mut server, &[&farewell.encode()]).unwrap();
    drop(server);
    let mut buf = Vec::new();
    let read = read_frame(&mut window, MAX_FRAME, &mut buf).unwrap();
    assert_eq!(ToWindow::decode(read).unwrap(), farewell);
    // Linux says the connection was reset here; either way it is closed, not a failure.
    assert!(matches!(read_frame(&mut window, MAX_FRAME, &mut buf), Err(WireError::Closed)));
}
