//! stdin and stdout for the MCP session, read and written on the async thread when they are
//! pipes or sockets.
//!
//! tokio's `stdin()`/`stdout()` hand every read and every write to the blocking pool: two
//! thread hand-offs per request, which were a large part of a small call's round trip.
//! When a descriptor is a pipe (what the rmcp and Python SDK clients give) or a Unix socket
//! (what Node's `child_process` gives), it is set non-blocking and driven by the runtime's
//! event loop instead. Anything else (a terminal, a regular file) keeps tokio's blocking
//! stdin/stdout.
//!
//! | descriptor | reader / writer |
//! |---|---|
//! | pipe (FIFO) | `tokio::net::unix::pipe` |
//! | Unix stream socket | `tokio::net::UnixStream` |
//! | anything else | `tokio::io::stdin()` / `stdout()` (blocking pool) |
//!
//! The non-blocking flag is set on the open file description, which only this process and
//! the client's end of its own pipe share; children never inherit it, since every process
//! `kun-tools` starts gets its own stdin and stdout.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// The session's input.
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The session's output.
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// What kind of descriptor stdin or stdout is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pipe or FIFO.
    Pipe,
    /// A Unix socket.
    Socket,
    /// A terminal, a file or anything else: tokio's blocking stdin/stdout.
    Other,
}

/// stdin and stdout as the session's transport (see the module table). Must run inside
/// the runtime.
#[must_use]
pub fn transport() -> (Reader, Writer) {
    (reader(), writer())
}

/// What `fd` is.
#[must_use]
pub fn kind(fd: impl AsFd) -> Kind {
    let Ok(owned) = fd.as_fd().try_clone_to_owned() else {
        return Kind::Other;
    };
    match File::from(owned).metadata().map(|meta| meta.file_type()) {
        Ok(kind) if kind.is_fifo() => Kind::Pipe,
        Ok(kind) if kind.is_socket() => Kind::Socket,
        _ => Kind::Other,
    }
}

fn reader() -> Reader {
    let stdin = std::io::stdin();
    let evented = match kind(&stdin) {
        Kind::Pipe => duplicate(&stdin)
            .and_then(pipe::Receiver::from_owned_fd)
            .map(|receiver| Box::new(receiver) as Reader),
        Kind::Socket => duplicate(&stdin)
            .and_then(socket)
            .map(|stream| Box::new(stream) as Reader),
        Kind::Other => return Box::new(tokio::io::stdin()),
    };
    evented.unwrap_or_else(|err| {
        tracing::debug!("stdin stays on the blocking pool: {err}");
        Box::new(tokio::io::stdin())
    })
}

fn writer() -> Writer {
    let stdout = std::io::stdout();
    let evented = match kind(&stdout) {
        Kind::Pipe => duplicate(&stdout)
            .and_then(pipe::Sender::from_owned_fd)
            .map(|sender| Box::new(sender) as Writer),
        Kind::Socket => duplicate(&stdout)
            .and_then(socket)
            .map(|stream| Box::new(stream) as Writer),
        Kind::Other => return Box::new(tokio::io::stdout()),
    };
    evented.unwrap_or_else(|err| {
        tracing::debug!("stdout stays on the blocking pool: {err}");
        Box::new(tokio::io::stdout())
    })
}

fn duplicate(fd: impl AsFd) -> std::io::Result<OwnedFd> {
    fd.as_fd().try_clone_to_owned()
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[test]
    fn pipes_sockets_and_files_are_told_apart() {
        let (read, write) = std::io::pipe().unwrap();
        assert_eq!(kind(&read), Kind::Pipe);
        assert_eq!(kind(&write), Kind::Pipe);
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(kind(&a), Kind::Socket);
        let file = tempfile::tempfile().unwrap();
        assert_eq!(kind(&file), Kind::Other);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_socket_end_carries_bytes_both_ways_on_the_event_loop() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut stream = socket(OwnedFd::from(ours)).unwrap();
        let mut theirs = socket(OwnedFd::from(theirs)).unwrap();
        stream.write_all(b"{\"jsonrpc\":\"2.0\"}\n").await.unwrap();
        let mut line = [0u8; 18];
        theirs.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"{\"jsonrpc\":\"2.0\"}\n");
    }
}
