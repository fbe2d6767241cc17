//! `relay`: the ceiling of the stack for the capacity measurements — a bare
//! tokio-tungstenite server with no HTTP API, no rules and no storage.
//!
//! A socket opened at `/relay/{group}` joins that group; every text message
//! it sends is handed to every socket of the group (itself included). Each
//! connection is built like the game server's: a reader in its own task, a
//! writer task fed by a bounded queue (a full queue drops the message), the
//! same WebSocket buffer sizes. `loadgen --mode relay` drives it with the
//! shape of a game (three sockets per group, one sender at a time).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// Messages queued towards one connection (the server's default).
const QUEUE: usize = 256;

/// Senders of each group's connections, by connection id.
type Groups = Arc<Mutex<HashMap<String, Vec<(u64, mpsc::Sender<Message>)>>>>;

// The handshake callback's error type is tungstenite's (an HTTP response).
#[allow(clippy::result_large_err)]
async fn connection(stream: TcpStream, groups: Groups, id: u64) -> Result<()> {
    let mut path = String::new();
    let config = WebSocketConfig::default()
        .read_buffer_size(2 * 1024)
        .write_buffer_size(8 * 1024)
        .max_frame_size(Some(64 * 1024))
        .max_message_size(Some(64 * 1024));
    let ws = tokio_tungstenite::accept_hdr_async_with_config(
        stream,
        |req: &Request, resp: Response| {
            path = req.uri().path().to_owned();
            Ok(resp)
        },
        Some(config),
    )
    .await
    .context("handshake")?;
    let group = path
        .strip_prefix("/relay/")
        .filter(|g| !g.is_empty())
        .ok_or_else(|| anyhow!("path {path} is not /relay/GROUP"))?
        .to_owned();
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::channel::<Message>(QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            if sink.send(m).await.is_err() {
                break;
            }
        }
    });
    groups
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(group.clone())
        .or_default()
        .push((id, tx));
    while let Some(Ok(msg)) = stream.next().await {
        if let Message::Text(_) = msg {
            let members: Vec<mpsc::Sender<Message>> = groups
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&group)
                .map(|m| m.iter().map(|(_, tx)| tx.clone()).collect())
                .unwrap_or_default();
            for tx in members {
                let _ = tx.try_send(msg.clone());
            }
        }
    }
    {
        let mut g = groups.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(members) = g.get_mut(&group) {
            members.retain(|(c, _)| *c != id);
            if members.is_empty() {
                g.remove(&group);
            }
        }
    }
    writer.abort();
    Ok(())
}

fn main() -> Result<()> {
    let mut listen = "127.0.0.1:9090".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next().ok_or_else(|| anyhow!("--listen needs a value"))?,
            "-h" | "--help" => {
                println!("usage: relay [--listen ADDR]   (default 127.0.0.1:9090; sockets at /relay/GROUP)");
                return Ok(());
            }
            other => bail!("unknown argument {other}"),
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = TcpListener::bind(&listen)
            .await
            .with_context(|| format!("binding {listen}"))?;
        eprintln!("relay: listening on {}", listener.local_addr()?);
        let groups: Groups = Arc::default();
        let next = AtomicU64::new(1);
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            let (groups, id) = (groups.clone(), next.fetch_add(1, Ordering::Relaxed));
            tokio::spawn(async move {
                if let Err(e) = connection(stream, groups, id).await {
                    eprintln!("relay: connection {id}: {e:#}");
                }
            });
        }
    })
}
