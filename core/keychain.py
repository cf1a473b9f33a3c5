"""Where agents' tokens are kept: the OS keychain through keyring, or - when the machine has no
keychain (a headless Linux has none) - owner-only files, a stated fallback reported in health.

Never a silent plaintext keyring: keyring backends that store secrets in clear text
(`keyrings.alt` plaintext and the like) count as "no keychain", and the file fallback says what it
is and where it lives.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from pathlib import Path
from typing import Protocol

from core.atomic_file import write_atomically
from core.errors import KeychainFault
from core.paths import Paths, ensure_private_dir
from core.runtime import check_private_dir

# keyring is imported where a token is read or kept, not here: importing it costs a command
# 0.05-0.13 s, and a person's commands, which present no token, never need it.

log = logging.getLogger(__name__)

_PLAINTEXT_BACKENDS = ("plaintext", "uncrypted", "unencrypted", "null", "fail")


class TokenStore(Protocol):
    """Keeps agent tokens so local clients (the CLI, the MCP bridge) can present them."""

    kind: str  # "keychain" or "file"
    where: str  # a human-readable location

    def get(self, agent: str) -> str | None: ...

    def set(self, agent: str, token: str) -> None:
        """Keep `token` for `agent`. Raises KeychainFault (the keychain refused) or IOFault (the
        token file could not be written: a full disk)."""
        ...

    def delete(self, agent: str) -> None: ...


class KeychainTokens:
    kind = "keychain"

    def __init__(self, service: str) -> None:
        import keyring

        self._service = service
        self.where = f"the OS keychain ({keyring.get_keyring().name}), service {service!r}"

    def get(self, agent: str) -> str | None:
        import keyring.errors

        try:
            return keyring.get_password(self._service, agent)
        except keyring.errors.KeyringError as e:
            raise KeychainFault(f"the keychain could not be read: {e}") from e

    def set(self, agent: str, token: str) -> None:
        import keyring.errors

        try:
            keyring.set_password(self._service, agent, token)
        except keyring.errors.KeyringError as e:
            raise KeychainFault(f"the keychain could not be written: {e}") from e

    def delete(self, agent: str) -> None:
        import keyring.errors

        with contextlib.suppress(keyring.errors.PasswordDeleteError):
            keyring.delete_password(self._service, agent)


_FOLDER = "token folder"  # how messages name it


class FileTokens:
    """One owner-only file per agent in an owner-only directory."""

    kind = "file"

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self.where = f"owner-only files in {directory}"

    def _path(self, agent: str) -> Path:
        return self._dir / f"{agent}.token"

    def get(self, agent: str) -> str | None:
        """The token kept for `agent`, or None.

        Raises:
            KeychainFault: its file cannot be read (one of another user's - left by a Cairn
                run with sudo - or not readable): until 2026-12-01 a traceback.
            IOFault: a file is where the token folder should be.
        """
        path = self._path(agent)
        try:
            return path.read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            # a file where the token folder should be: that file is what to move (until
            # 2026-12-02 "cannot be read: Not a directory", and to issue a new token)
            check_private_dir(self._dir, _FOLDER)
            raise
        except OSError as e:
            raise KeychainFault(
                f"the token file {path} cannot be read: {e.strerror or e}; make it readable for "
                "your user (a Cairn run with sudo leaves files of root's), or issue the agent "
                f"a new one (`cairn agent revoke {agent}`, then `cairn agent add {agent}`)",
                data={"path": str(path)},
            ) from e

    def set(self, agent: str, token: str) -> None:
        ensure_private_dir(self._dir)
        check_private_dir(self._dir, _FOLDER)
        path = self._path(agent)
        write_atomically(path, token + "\n", what="token file", mode=0o600)

    def delete(self, agent: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(agent).unlink()


def keychain_usable() -> bool:
    """A real keychain backend: not keyring's `fail` backend, not a plaintext file backend."""
    import keyring

    backend = keyring.get_keyring()
    name = f"{type(backend).__module__}.{type(backend).__name__}".lower()
    if any(word in name for word in _PLAINTEXT_BACKENDS):
        return False
    try:
        return float(backend.priority) > 0
    except Exception:  # noqa: BLE001 - a backend whose priority cannot be read is not trusted
        return False


def open_token_store(paths: Paths) -> tuple[TokenStore, str | None]:
    """The keychain when there is one, else owner-only files; the second value is the health
    warning to show when falling back (None with a keychain)."""
    # One service name per store, so two Cairns (CAIRN_HOME) never share tokens.
    service = "cairn-" + hashlib.sha256(str(paths.database).encode()).hexdigest()[:12]
    if keychain_usable():
        return KeychainTokens(service), None
    store = FileTokens(paths.state / "tokens")
    warning = (
        "no keychain is available, so agent tokens are kept in owner-only files in "
        f"{paths.state / 'tokens'} (readable by your user account only)"
    )
    return store, warning
