//! What passes through a tunnel the broker opens: a request body searched for placeholders on
//! its way out (`Scanned`), a response body with values replaced on its way back
//! (`Returned`), and the program's end of the tunnel, counted (`Counted`).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body, Bytes, Frame, Incoming};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::forward::{BoxError, PaneBroker};
use super::scan::{Replacer, Scanner};
use super::Place;

/// A request body on its way out, searched for the pane's placeholders: one found stops it.
pub(super) struct Scanned {
    pub(super) inner: Incoming,
    pub(super) scanner: Scanner,
    pub(super) broker: Arc<PaneBroker>,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) blocked: Arc<AtomicBool>,
}

impl Body for Scanned {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                // Trailers are headers too: each name and value is looked at.
                let in_trailers = frame.trailers_ref().and_then(|trailers| {
                    trailers.iter().find_map(|(name, value)| {
                        let grants = this.broker.grants();
                        grants
                            .found_in(name.as_str().as_bytes())
                            .or(grants.found_in(value.as_bytes()))
                    })
                });
                let found = frame.data_ref().and_then(|data| this.scanner.feed(data));
                if let Some(grant) = found.or(in_trailers) {
                    this.blocked.store(true, Ordering::Release);
                    this.broker.attempt(grant, &this.host, this.port, Place::Body);
                    return Poll::Ready(Some(Err(
                        "a brokered secret's placeholder in the body".into()
                    )));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// A response body on its way back to the pane, with every secret value in it replaced by
/// its placeholder.
pub(super) struct Returned {
    pub(super) inner: Incoming,
    pub(super) replacer: Replacer,
    pub(super) broker: Arc<PaneBroker>,
    pub(super) host: String,
    pub(super) port: u16,
    /// Whether replacing changes the body's length.
    pub(super) resized: bool,
    /// Trailers that came while some text was held back: sent after it.
    pub(super) trailers: Option<Frame<Bytes>>,
    pub(super) ended: bool,
}

impl Body for Returned {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Some(trailers) = this.trailers.take() {
            return Poll::Ready(Some(Ok(trailers)));
        }
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(None) => {
                    this.ended = true;
                    let held = this.replacer.finish();
                    if held.is_empty() {
                        return Poll::Ready(None);
                    }
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(held)))));
                }
                Poll::Ready(Some(Ok(frame))) => frame,
            };
            match frame.into_data() {
                Ok(data) => {
                    let pairs = this.broker.grants().pairs();
                    if this.replacer.passes(&pairs, &data) {
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                    let (out, replaced) = this.replacer.feed(&pairs, &data);
                    if replaced {
                        this.broker.echoed(&data, &this.host, this.port);
                    }
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
                    }
                }
                Err(trailers) => {
                    // Trailers are headers: a value in them is replaced, as in the head.
                    let trailers = match trailers.into_trailers() {
                        Ok(mut fields) => {
                            let pairs = this.broker.grants().pairs();
                            if let Some(text) = super::forward::mask_headers(&mut fields, &pairs) {
                                this.broker.echoed(&text, &this.host, this.port);
                            }
                            Frame::trailers(fields)
                        }
                        Err(other) => other,
                    };
                    let held = this.replacer.finish();
                    if held.is_empty() {
                        return Poll::Ready(Some(Ok(trailers)));
                    }
                    this.trailers = Some(trailers);
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(held)))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.trailers.is_none()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self.resized {
            true => hyper::body::SizeHint::default(),
            false => self.inner.size_hint(),
        }
    }
}

/// Bytes read from and written to the program's end, and when anything last moved.
pub(super) struct Counts {
    pub(super) read: AtomicU64,
    pub(super) written: AtomicU64,
    pub(super) start: Instant,
    /// Milliseconds from `start`.
    pub(super) last: AtomicU64,
}

impl Counts {
    pub(super) fn new() -> Counts {
        Counts {
            read: AtomicU64::new(0),
            written: AtomicU64::new(0),
            start: Instant::now(),
            last: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn touch(&self) {
        self.last.store(self.now(), Ordering::Relaxed);
    }

    pub(super) fn idle_for(&self) -> Duration {
        Duration::from_millis(self.now().saturating_sub(self.last.load(Ordering::Relaxed)))
    }
}

/// A stream that counts what passes.
pub(super) struct Counted<S> {
    pub(super) inner: S,
    pub(super) counts: Arc<Counts>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let moved = buf.filled().len() - before;
        if moved > 0 {
            self.counts.read.fetch_add(moved as u64, Ordering::Relaxed);
            self.counts.touch();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &polled {
            self.counts.written.fetch_add(*n as u64, Ordering::Relaxed);
            self.counts.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
