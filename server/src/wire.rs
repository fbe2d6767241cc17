//! A client's TCP connection, which a game's room can also write to.
//!
//! Every accepted connection is a [`Wire`]: the byte stream that hyper (and,
//! after an upgrade, tungstenite) reads and writes. A game socket's room
//! writes its messages straight onto the same stream through a
//! [`WireHandle`] ([`WireHandle::write_text`]): the WebSocket frame's header
//! and the shared message, in one `sendmsg`, from the room's task. The
//! connection's own task is then not woken for the message, and nothing is
//! copied into a per-socket buffer first.
//!
//! The two writers never interleave inside a frame: every write takes the
//! connection's lock, and what the kernel does not take at once waits, in
//! order, in that connection's pending list until the connection's task
//! flushes it (its writes wait behind it). A write through the stream is
//! taken whole or not at all ([`Wire::poll_write`]), so the frames that
//! tungstenite writes (its pongs, the closing handshake) and the room's stay
//! whole and in the order they were written.
//!
//! Server frames are never masked, and a text frame is its header (2, 4 or
//! 10 bytes, RFC 6455 §5.2) and its payload: that is all [`WireHandle`]
//! writes. Only an HTTP/1.1 upgrade may be written to this way; an HTTP/2
//! WebSocket is a stream inside the connection (`ws.rs` checks).

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

use crate::cutoff::Door;

/// At most this many pieces go to one `sendmsg` when flushing.
const MAX_SLICES: usize = 32;

/// The connection as hyper and tungstenite see it.
#[derive(Debug)]
pub struct Wire {
    /// Read through tokio's own `poll_read`: into the caller's buffer as it
    /// is, with no `recv` that only finds the socket empty after a short read.
    read: OwnedReadHalf,
    shared: Arc<Shared>,
}

/// Another writer's hold on a connection: cheap to clone. It keeps the
/// socket's descriptor open, but once the [`Wire`] is dropped the
/// connection is shut down and what is written fails.
#[derive(Debug, Clone)]
pub struct WireHandle {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// Written to under `out`'s lock only.
    tcp: OwnedWriteHalf,
    out: Mutex<Out>,
}

/// What was accepted for writing and the kernel has not taken yet.
#[derive(Debug, Default)]
struct Out {
    pending: VecDeque<Chunk>,
    /// Text frames written through a handle among `pending`.
    frames: usize,
}

/// A piece of the outgoing stream: a frame's header (empty for what came
/// through [`Wire::poll_write`]) and its body, `done` bytes of which were
/// written.
#[derive(Debug)]
struct Chunk {
    head: Head,
    body: Bytes,
    done: usize,
    /// A text frame written through a handle (counted in `Out::frames`).
    frame: bool,
}

impl Chunk {
    fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// The parts not written yet.
    fn rest(&self) -> (&[u8], &[u8]) {
        let head = self.head.bytes();
        if self.done < head.len() {
            (&head[self.done..], &self.body)
        } else {
            (&[], &self.body[self.done - head.len()..])
        }
    }
}

/// A WebSocket frame's header, as the server writes it (not masked).
#[derive(Debug, Clone, Copy, Default)]
struct Head {
    bytes: [u8; 10],
    len: u8,
}

impl Head {
    /// The header of an unfragmented text frame of `len` bytes, as
    /// tungstenite formats it.
    fn text(len: usize) -> Head {
        let header = FrameHeader {
            opcode: OpCode::Data(Data::Text),
            ..FrameHeader::default()
        };
        let mut out = io::Cursor::new([0u8; 10]);
        // Ten bytes hold any header without a mask (RFC 6455 §5.2): the
        // write into them cannot fail.
        let _ = header.format(len as u64, &mut out);
        Head {
            len: out.position() as u8,
            bytes: out.into_inner(),
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    fn len(&self) -> usize {
        usize::from(self.len)
    }
}

/// What became of a message written through a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// The kernel took all of it.
    Written,
    /// It waits, whole or in part, for the connection's task to flush it.
    Pending,
    /// As many frames as allowed already wait: nothing was written.
    Full,
}

impl Out {
    fn push(&mut self, chunk: Chunk) {
        if chunk.frame {
            self.frames += 1;
        }
        self.pending.push_back(chunk);
    }

    /// `n` more bytes of the front of `pending` were written.
    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.pending.front_mut() else { return };
            let left = front.len() - front.done;
            if n < left {
                front.done += n;
                return;
            }
            n -= left;
            if front.frame {
                self.frames -= 1;
            }
            self.pending.pop_front();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Out> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One `sendmsg` of `slices`, without waiting (`WouldBlock`, and the
    /// socket's readiness cleared, if it takes nothing). Not tokio's
    /// `try_write_vectored`: its `writev` goes through the file layer too
    /// (`vfs_writev`, `fdget_pos`: ~2.5 µs of a move's three sends in one
    /// `perf record` each, docs/CAPACITY.md).
    fn send(&self, slices: &[IoSlice<'_>]) -> io::Result<usize> {
        let tcp = self.tcp.as_ref();
        tcp.try_io(Interest::WRITABLE, || socket2::SockRef::from(tcp).send_vectored(slices))
    }

    /// Writes what is pending, waiting for the socket to take it.
    fn drain(&self, out: &mut Out, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !out.pending.is_empty() {
            ready!(self.tcp.as_ref().poll_write_ready(cx))?;
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let mut k = 0;
            for chunk in out.pending.iter() {
                if k + 2 > MAX_SLICES {
                    break;
                }
                let (head, body) = chunk.rest();
                for part in [head, body] {
                    if !part.is_empty() {
                        slices[k] = IoSlice::new(part);
                        k += 1;
                    }
                }
            }
            match self.send(&slices[..k]) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => out.advance(n),
                // Not writable after all: the next turn waits for it.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl Wire {
    /// Wraps an accepted connection.
    pub fn new(tcp: TcpStream) -> Wire {
        let (read, write) = tcp.into_split();
        Wire {
            read,
            shared: Arc::new(Shared {
                tcp: write,
                out: Mutex::default(),
            }),
        }
    }

    /// A writer beside this stream.
    pub fn handle(&self) -> WireHandle {
        WireHandle {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        // Handles may outlive the stream (a room lets its connections go a
        // moment later): the client is not kept waiting for them.
        let _ = socket2::SockRef::from(self.read.as_ref()).shutdown(std::net::Shutdown::Both);
    }
}

impl WireHandle {
    /// Writes `text` as one WebSocket text frame, behind whatever waits.
    /// What the kernel does not take at once waits for the connection's
    /// task to flush it, unless `max_pending` frames already wait.
    pub fn write_text(&self, text: Bytes, max_pending: usize) -> Sent {
        let head = Head::text(text.len());
        let mut out = self.shared.lock();
        let done = if out.pending.is_empty() {
            match self.shared.send(&[IoSlice::new(head.bytes()), IoSlice::new(&text)]) {
                Ok(n) if n == head.len() + text.len() => return Sent::Written,
                Ok(n) => n,
                // A broken connection's error comes out of the flush.
                Err(_) => 0,
            }
        } else if out.frames >= max_pending {
            return Sent::Full;
        } else {
            0
        };
        out.push(Chunk {
            head,
            body: text,
            done,
            frame: true,
        });
        Sent::Pending
    }

    /// Drops what waits, except the rest of a frame partly written (the
    /// stream stays whole for the closing handshake).
    pub fn discard(&self) {
        let mut out = self.shared.lock();
        let keep = out.pending.front().is_some_and(|c| c.done > 0);
        out.pending.truncate(usize::from(keep));
        out.frames = out.pending.iter().filter(|c| c.frame).count();
    }

    /// Text frames waiting to be written.
    #[cfg(test)]
    fn pending_frames(&self) -> usize {
        self.shared.lock().frames
    }
}

impl AsyncRead for Wire {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.read).poll_read(cx, buf)
    }
}

impl AsyncWrite for Wire {
    /// Takes all of `buf` or none of it: what waits is written first, and
    /// what the kernel does not take of `buf` waits after it (a copy) until
    /// the next write or flush.
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let shared = &*self.shared;
        let mut out = shared.lock();
        ready!(shared.drain(&mut out, cx))?;
        let n = match shared.send(&[IoSlice::new(buf)]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(e) => return Poll::Ready(Err(e)),
        };
        if n < buf.len() {
            out.push(Chunk {
                head: Head::default(),
                body: Bytes::copy_from_slice(&buf[n..]),
                done: 0,
                frame: false,
            });
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let shared = &*self.shared;
        let mut out = shared.lock();
        shared.drain(&mut out, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let shared = &*self.shared;
        {
            let mut out = shared.lock();
            ready!(shared.drain(&mut out, cx))?;
        }
        socket2::SockRef::from(shared.tcp.as_ref()).shutdown(std::net::Shutdown::Write)?;
        Poll::Ready(Ok(()))
    }
}

/// What a request knows of its connection (axum's `ConnectInfo<Peer>`):
/// the peer's address, and a writer beside the connection's stream (always
/// there for a request the server accepted; a request made up in a test may
/// have none).
#[derive(Debug, Clone)]
pub struct Peer {
    pub addr: SocketAddr,
    pub wire: Option<WireHandle>,
}

impl Connected<IncomingStream<'_, Door>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Door>) -> Peer {
        Peer {
            addr: *stream.remote_addr(),
            wire: Some(stream.io().handle()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn pair() -> (Wire, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (Wire::new(server), client)
    }

    #[test]
    fn headers_take_the_shortest_length_form() {
        assert_eq!(Head::text(0).bytes(), [0x81, 0]);
        assert_eq!(Head::text(125).bytes(), [0x81, 125]);
        assert_eq!(Head::text(126).bytes(), [0x81, 126, 0, 126]);
        assert_eq!(Head::text(1530).bytes(), [0x81, 126, 0x05, 0xfa]);
        assert_eq!(Head::text(65_535).bytes(), [0x81, 126, 0xff, 0xff]);
        assert_eq!(Head::text(65_536).bytes(), [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0]);
    }

    #[tokio::test]
    async fn frames_and_stream_writes_arrive_whole_and_in_order() {
        let (mut wire, mut client) = pair().await;
        let handle = wire.handle();
        wire.write_all(b"raw1").await.unwrap();
        assert_eq!(handle.write_text(Bytes::from_static(b"hello"), 4), Sent::Written);
        wire.write_all(b"raw2").await.unwrap();
        wire.flush().await.unwrap();
        let mut got = vec![0u8; 4 + 7 + 4];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got[..4], b"raw1");
        assert_eq!(&got[4..11], b"\x81\x05hello");
        assert_eq!(&got[11..], b"raw2");
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_gets_frames_queued_up_to_the_limit_then_all_in_order() {
        let (mut wire, mut client) = pair().await;
        let handle = wire.handle();
        let body = Bytes::from(vec![b'x'; 60_000]);
        // Fill the kernel's buffers until a frame waits.
        let mut written = 0usize;
        loop {
            match handle.write_text(body.clone(), 3) {
                Sent::Written => written += 1,
                Sent::Pending => break,
                Sent::Full => panic!("nothing waited yet"),
            }
            assert!(written < 10_000, "the kernel took everything");
        }
        assert_eq!(handle.write_text(body.clone(), 3), Sent::Pending);
        assert_eq!(handle.write_text(body.clone(), 3), Sent::Pending);
        assert_eq!(handle.pending_frames(), 3);
        assert_eq!(
            handle.write_text(body.clone(), 3),
            Sent::Full,
            "a fourth frame is refused"
        );
        // A stream write waits behind them.
        let reader = tokio::spawn(async move {
            let frames = written + 3;
            let mut buf = vec![0u8; 4 + 60_000];
            for _ in 0..frames {
                client.read_exact(&mut buf).await.unwrap();
                assert_eq!(&buf[..4], &[0x81, 126, 0xea, 0x60]);
                assert!(buf[4..].iter().all(|&b| b == b'x'));
            }
            let mut tail = [0u8; 3];
            client.read_exact(&mut tail).await.unwrap();
            assert_eq!(&tail, b"end");
        });
        wire.write_all(b"end").await.unwrap();
        wire.flush().await.unwrap();
        assert_eq!(handle.pending_frames(), 0);
        reader.await.unwrap();
    }

    #[tokio::test]
    async fn discarding_keeps_a_frame_begun_and_dropping_the_stream_shuts_the_connection() {
        let (wire, mut client) = pair().await;
        let handle = wire.handle();
        let body = Bytes::from(vec![b'y'; 60_000]);
        while handle.write_text(body.clone(), 8) == Sent::Written {}
        handle.write_text(body.clone(), 8);
        handle.write_text(body.clone(), 8);
        handle.discard();
        assert!(handle.pending_frames() <= 1, "only a frame begun stays");
        drop(wire);
        // The client reads to the end: the connection was shut down though a handle lives.
        let mut all = Vec::new();
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), client.read_to_end(&mut all)).await;
        assert!(read.is_ok(), "the stream ended");
    }
}
