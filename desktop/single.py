"""One tray per user: the running tray listens on a local socket in Cairn's private runtime
directory; a second launch asks it to come forward (or to quit) instead of starting again."""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from core.paths import Paths
from core.runtime import socket_peer

log = logging.getLogger(__name__)

LOCAL_NAME = "tray.sock"
COMMANDS = ("show", "quit")
_REPLY_OK = b"ok\n"


def local_name(paths: Paths) -> str:
    """The tray's local socket: a full path, so it lives in the 0700 runtime directory."""
    return str(paths.runtime / LOCAL_NAME)


def ask(name: str, command: str, *, timeout_ms: int = 2000) -> bool:
    """Send `command` to the tray listening at `name`; True when it answered (it acted)."""
    sock = QLocalSocket()
    sock.connectToServer(name)
    if not sock.waitForConnected(timeout_ms):
        return False
    try:
        sock.write(command.encode("ascii") + b"\n")
        if not sock.waitForBytesWritten(timeout_ms):
            return False
        reply = b""
        while not reply.endswith(b"\n"):
            if not sock.waitForReadyRead(timeout_ms):
                return False
            reply += bytes(sock.readAll().data())
        return reply == _REPLY_OK
    finally:
        sock.abort()


def holder(name: str) -> int | None:
    """The pid of the tray listening at `name` - answering or not (a busy or suspended tray
    still has its socket) - or None when no tray listens there (a socket file left by a tray
    that died refuses the connection)."""
    try:
        peer = socket_peer(name, timeout_s=1.0)
    except BlockingIOError:
        return -1  # its queue is full: a tray that has not answered for a while
    except OSError:
        return None
    return peer.pid if peer is not None and peer.pid is not None else -1


class Listener(QObject):
    """The running tray's end: each connection sends one command line and gets `ok`."""

    command = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)

    def listen(self) -> None:
        """Start listening. Call it only while holding the store's lock: a socket left at the
        name then belongs to a tray that died, and is removed.

        Raises:
            OSError: the local socket cannot be created.
        """
        QLocalServer.removeServer(self._name)
        if not self._server.listen(self._name):
            raise OSError(f"cannot listen on {self._name}: {self._server.errorString()}")

    def close(self) -> None:
        """Stop listening; Qt removes the socket file."""
        self._server.close()

    @Slot()
    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            sock = self._server.nextPendingConnection()
            sock.setParent(self)
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(sock.deleteLater)

    def _read(self, sock: QLocalSocket) -> None:
        if not sock.canReadLine():
            if sock.bytesAvailable() > 64:  # not one of ours: nothing this long is a command
                sock.abort()
            return
        line = bytes(sock.readLine(64).data()).strip().decode("ascii", "replace")
        if line not in COMMANDS:
            log.warning("ignored an unknown command on the tray's local socket")
            sock.abort()
            return
        sock.write(_REPLY_OK)
        sock.flush()
        self.command.emit(line)
