//! Pacing a window: its chunks stop once it is a megabyte behind, or once a pane floods it past
//! its allowance, and it is caught up with the pane's model as it stands, at most once a frame,
//! never dropped and never out of step.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crossbeam_channel::Receiver;

use super::{Allowance, PaneFeed, Window, BEHIND_FRAMES, CATCH_UP_EVERY, FLOOD_BURST, FLOOD_RATE};
use crate::ctl::replicas::{Applied, Replicas};
use crate::ctl::wire::ToWindow;
use crate::mux::PaneId;
use crate::term::{TermConfig, TermSize, Terminal};
use std::time::{Duration, Instant};

const PANE: u32 = 7;

type Queue = Receiver<(Arc<[u8]>, bool)>;

/// A window whose writer is the test: nothing is taken off its queue until the test reads it.
fn window() -> (Arc<Window>, Queue) {
    let (frames, queued) = crossbeam_channel::bounded(super::QUEUED_FRAMES);
    (Arc::new(Window::new(None, frames)), queued)
}

/// What the window's writer would send now, as its replica takes it.
fn read(window: &Window, queue: &Queue, replicas: &mut Replicas) -> Vec<Applied> {
    let mut applied = Vec::new();
    while let Ok((frame, asked)) = queue.try_recv() {
        if asked {
            window.asked_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
        }
        window.queued_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
        let frame = ToWindow::decode(&frame[4..]).expect("a frame");
        applied.push(replicas.apply(frame).expect("the replica follows"));
    }
    applied
}

/// A pane's model followed by `window`, which holds its replica already.
fn followed(window: &Arc<Window>, queue: &Queue, replicas: &mut Replicas) -> Arc<Mutex<Terminal>> {
    let term = Arc::new(Mutex::new(Terminal::new(TermSize::new(40, 8), TermConfig::default())));
    let mut model = term.lock().unwrap();
    window.send(&super::pane_frame(PANE, &model));
    assert_eq!(read(window, queue, replicas), vec![Applied::Pane(PANE)]);
    let subscribers = Arc::new(Mutex::new(vec![window.clone()]));
    model.set_follower(Some(Box::new(PaneFeed { pane: PANE, subscribers })));
    drop(model);
    term
}

fn same(term: &Mutex<Terminal>, replicas: &Replicas) {
    let server = term.lock().unwrap();
    let replica = replicas.get(PANE).expect("a replica").lock().unwrap();
    assert_eq!(replica.screen_text(), server.screen_text());
    let held = replica.scrollback_len();
    assert!(replica.snapshot(held) == server.snapshot(held), "the replicas' snapshots differ");
}

/// Output far faster than the window reads: `lines` numbered lines, one chunk each.
fn flood(term: &Mutex<Terminal>, lines: std::ops::Range<usize>) {
    for n in lines {
        let line = format!("{n:07} the quick brown fox jumps over\r\n");
        term.lock().unwrap().advance(line.as_bytes());
    }
}

#[test]
fn a_window_that_falls_behind_is_skipped_then_caught_up_with_the_model_as_it_stands() {
    let (window, queue) = window();
    let mut replicas = Replicas::default();
    let term = followed(&window, &queue, &mut replicas);

    flood(&term, 0..5000);
    // The window stopped taking chunks once it was behind, long before its queue was full.
    assert!(queue.len() <= BEHIND_FRAMES + 1, "{} frames queued", queue.len());
    assert!(window.behind.lock().unwrap().since.contains_key(&PANE));
    assert!(!window.gone.load(Ordering::Acquire), "a slow window is paced, not dropped");
    let applied = read(&window, &queue, &mut replicas);
    assert!(applied.iter().all(|a| *a == Applied::Output(PANE)), "{applied:?}");

    // Drained, and a frame's time on: the next chunk gives way to the pane's snapshot, with
    // everything skipped.
    std::thread::sleep(CATCH_UP_EVERY);
    flood(&term, 5000..5001);
    assert_eq!(read(&window, &queue, &mut replicas), vec![Applied::Pane(PANE)]);
    same(&term, &replicas);
    assert!(replicas.get(PANE).unwrap().lock().unwrap().screen_text().contains("0005000 the"));
    // With a page of scrollback rows: older ones come when the window asks for them.
    let replica = replicas.get(PANE).unwrap().lock().unwrap();
    assert_eq!(replica.scrollback_len(), replica.size().lines);
    drop(replica);

    // And chunks follow on from it.
    flood(&term, 5001..5003);
    let applied = read(&window, &queue, &mut replicas);
    assert_eq!(applied, vec![Applied::Output(PANE); 2]);
    same(&term, &replicas);
}

#[test]
fn a_pane_gone_quiet_is_caught_up_when_the_window_drains() {
    let (window, queue) = window();
    let mut replicas = Replicas::default();
    let term = followed(&window, &queue, &mut replicas);
    flood(&term, 0..3000);
    read(&window, &queue, &mut replicas);
    // No more output: the writer's word (or the tick) sends what the pane shows now, once a
    // frame's time has passed since the pane went behind.
    let model = |pane: PaneId| (pane.0 == PANE).then_some(&*term);
    let went = *window.behind.lock().unwrap().since.get(&PANE).expect("behind");
    window.send_behind(Some(went), &model);
    assert!(read(&window, &queue, &mut replicas).is_empty(), "not due yet");
    assert!(!window.catch_up_due(went));
    assert!(window.catch_up_due(went + CATCH_UP_EVERY));
    window.send_behind(Some(went + CATCH_UP_EVERY), &model);
    assert_eq!(read(&window, &queue, &mut replicas), vec![Applied::Pane(PANE)]);
    same(&term, &replicas);
    assert!(replicas.get(PANE).unwrap().lock().unwrap().screen_text().contains("0002999 the"));
    // Nothing is owed twice.
    window.send_behind(None, &model);
    assert!(read(&window, &queue, &mut replicas).is_empty());
}

#[test]
fn rows_a_window_asked_for_do_not_count_as_falling_behind() {
    let (window, queue) = window();
    let mut replicas = Replicas::default();
    let term = followed(&window, &queue, &mut replicas);
    let rows: Arc<[u8]> = vec![0u8; 4 << 20].into();
    window.queue(&rows, true);
    flood(&term, 0..3);
    assert!(window.behind.lock().unwrap().since.is_empty());
    assert_eq!(queue.len(), 4, "the rows, then every chunk");
}

#[test]
fn a_flood_the_window_keeps_up_with_is_sent_as_snapshots_once_a_frame_not_parsed_twice() {
    let (window, queue) = window();
    let mut replicas = Replicas::default();
    let term = followed(&window, &queue, &mut replicas);
    let line_len = "0000000 the quick brown fox jumps over\r\n".len();
    let lines = 3 * FLOOD_BURST / line_len;
    let mut chunks = 0;
    let mut snapshots = 0;
    let started = Instant::now();
    // The window reads every frame as soon as it is queued: only the allowance limits it.
    for n in 0..lines {
        flood(&term, n..n + 1);
        for applied in read(&window, &queue, &mut replicas) {
            match applied {
                Applied::Output(PANE) => chunks += 1,
                Applied::Pane(PANE) => snapshots += 1,
                other => panic!("{other:?}"),
            }
        }
    }
    let took = started.elapsed();
    // The allowance and what it refilled while this ran, and not a line more, went as chunks.
    let refilled = took.as_secs_f64() * FLOOD_RATE as f64;
    let most = (FLOOD_BURST as f64 + refilled) / line_len as f64 + 1.0;
    assert!(chunks >= FLOOD_BURST / line_len && (chunks as f64) <= most, "{chunks} chunks");
    // The rest as snapshots, no closer together than a frame.
    let frames = took.as_secs_f64() / CATCH_UP_EVERY.as_secs_f64();
    assert!(snapshots >= 1, "a flood of {lines} lines in {took:?} was never caught up");
    assert!((snapshots as f64) <= frames + 1.0, "{snapshots} snapshots in {took:?}");
    // The pane went quiet: its last snapshot once due, and the replica is the model.
    std::thread::sleep(CATCH_UP_EVERY);
    let model = |pane: PaneId| (pane.0 == PANE).then_some(&*term);
    window.send_behind(Some(Instant::now()), &model);
    read(&window, &queue, &mut replicas);
    same(&term, &replicas);
    let last = format!("{:07} the", lines - 1);
    assert!(replicas.get(PANE).unwrap().lock().unwrap().screen_text().contains(&last));
}

#[test]
fn an_allowance_refills_at_its_rate_up_to_its_burst_and_a_flood_leaves_no_debt() {
    let start = Instant::now();
    let mut allowance = Allowance::full(start);
    assert!(allowance.spend(FLOOD_BURST, start));
    assert!(!allowance.spend(1, start), "empty");
    // A flood far past it owes nothing afterwards: a second's refill is there a second later.
    assert!(!allowance.spend(100 * FLOOD_BURST, start));
    let second = start + Duration::from_secs(1);
    assert!(allowance.spend(FLOOD_RATE.min(FLOOD_BURST), second));
    // Never more than the burst, however long it rests.
    let later = second + Duration::from_secs(3600);
    assert!(!allowance.spend(FLOOD_BURST + 1, later));
    assert!(allowance.spend(FLOOD_BURST, later + Duration::from_secs(3600)));
}
