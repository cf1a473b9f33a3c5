"""Cairn's error root, its fixed table of codes, and the environment-versus-caller split.

Every error Cairn raises on purpose is a `CairnError` carrying one `ErrorCode`. Anything else that
escapes is a bug and goes to a crash path. Adapters (socket, CLI, windows) translate a `CairnError`
into their own shape at their edge, using the code's number and its exit status.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class ErrorCode(Enum):
    """The fixed table of error codes: JSON-RPC number, CLI exit status, and short name."""

    # JSON-RPC 2.0's own codes.
    PARSE_ERROR = (-32700, 65, "parse_error")
    INVALID_REQUEST = (-32600, 65, "invalid_request")
    METHOD_NOT_FOUND = (-32601, 64, "method_not_found")
    INVALID_PARAMS = (-32602, 65, "invalid_params")
    INTERNAL_ERROR = (-32603, 70, "internal_error")
    # Cairn's codes: the caller asked for something that cannot be done as asked.
    NOT_FOUND = (-32001, 66, "not_found")
    CONFLICT = (-32002, 67, "conflict")
    IDEMPOTENCY_MISMATCH = (-32003, 67, "idempotency_mismatch")
    POLICY_REFUSED = (-32004, 77, "policy_refused")
    CAPTURE_PAUSED = (-32005, 77, "capture_paused")
    SCOPE_DENIED = (-32006, 77, "scope_denied")
    TOO_LARGE = (-32007, 65, "too_large")
    AGENT_PAUSED = (-32008, 77, "agent_paused")
    AGENT_REVOKED = (-32009, 77, "agent_revoked")
    RATE_LIMITED = (-32010, 75, "rate_limited")
    NOT_READY = (-32011, 75, "not_ready")
    UNAUTHENTICATED = (-32012, 77, "unauthenticated")
    FORBIDDEN = (-32013, 77, "forbidden")
    FORGOTTEN = (-32014, 77, "forgotten")
    # The environment's fault: nothing the caller can fix by asking differently.
    STORE_BUSY = (-32020, 75, "store_busy")
    STORE_UNAVAILABLE = (-32021, 74, "store_unavailable")
    INTEGRITY = (-32022, 74, "integrity")
    SCHEMA_TOO_NEW = (-32023, 74, "schema_too_new")
    CONFIG_INVALID = (-32024, 78, "config_invalid")
    ALREADY_RUNNING = (-32025, 69, "already_running")
    NOT_RUNNING = (-32026, 69, "not_running")
    KEYCHAIN = (-32027, 74, "keychain")
    IO = (-32028, 74, "io_error")
    RUNTIME_UNSAFE = (-32029, 77, "runtime_unsafe")
    CLOCK_WRONG = (-32030, 75, "clock_wrong")

    @property
    def rpc_code(self) -> int:
        return self.value[0]

    @property
    def exit_status(self) -> int:
        return self.value[1]

    @property
    def label(self) -> str:
        return self.value[2]


class CairnError(Exception):
    """Root of every error Cairn raises on purpose.

    Args:
        message: one clear sentence for a human or an agent; never memory content or query text.
        data: small structured details that are safe to show (ids, field names, limits).
    """

    code: ErrorCode = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, *, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data: dict[str, Any] = dict(data or {})


class CallerError(CairnError):
    """The request cannot be carried out as asked; asking differently may succeed."""


class InvalidInput(CallerError):
    code = ErrorCode.INVALID_PARAMS


class TooLarge(CallerError):
    code = ErrorCode.TOO_LARGE


class NotFound(CallerError):
    code = ErrorCode.NOT_FOUND


class Conflict(CallerError):
    code = ErrorCode.CONFLICT


class IdempotencyMismatch(CallerError):
    code = ErrorCode.IDEMPOTENCY_MISMATCH


class ScopeDenied(CallerError):
    code = ErrorCode.SCOPE_DENIED


class Forbidden(CallerError):
    code = ErrorCode.FORBIDDEN


class ForgottenMemory(CallerError):
    code = ErrorCode.FORGOTTEN


class NotReady(CallerError):
    code = ErrorCode.NOT_READY


class Unauthenticated(CallerError):
    code = ErrorCode.UNAUTHENTICATED


class AgentPaused(CallerError):
    code = ErrorCode.AGENT_PAUSED


class AgentRevoked(CallerError):
    code = ErrorCode.AGENT_REVOKED


class RateLimited(CallerError):
    code = ErrorCode.RATE_LIMITED


class MethodNotFound(CallerError):
    code = ErrorCode.METHOD_NOT_FOUND


class InvalidRequest(CallerError):
    code = ErrorCode.INVALID_REQUEST


class ParseError(CallerError):
    code = ErrorCode.PARSE_ERROR


class EnvironmentFault(CairnError):
    """The machine or the store is in a state the caller cannot fix by asking differently."""


class StoreBusy(EnvironmentFault):
    code = ErrorCode.STORE_BUSY


class StoreUnavailable(EnvironmentFault):
    code = ErrorCode.STORE_UNAVAILABLE


class IntegrityFailure(EnvironmentFault):
    code = ErrorCode.INTEGRITY


class SchemaTooNew(EnvironmentFault):
    code = ErrorCode.SCHEMA_TOO_NEW


class ConfigInvalid(EnvironmentFault):
    code = ErrorCode.CONFIG_INVALID


class AlreadyRunning(EnvironmentFault):
    code = ErrorCode.ALREADY_RUNNING


class IOFault(EnvironmentFault):
    code = ErrorCode.IO


class RuntimeUnsafe(EnvironmentFault):
    code = ErrorCode.RUNTIME_UNSAFE


class ClockWrong(EnvironmentFault):
    """The computer's clock reads before the earliest time Cairn trusts (`core.clock.FLOOR_MS`):
    a write is refused rather than stamped with it."""

    code = ErrorCode.CLOCK_WRONG


class KeychainFault(EnvironmentFault):
    code = ErrorCode.KEYCHAIN


class NotRunning(EnvironmentFault):
    code = ErrorCode.NOT_RUNNING


class ConnectionClosed(NotRunning):
    """Cairn closed the connection before it answered (it stopped, or ended the connection
    without a word): it was running when the request went out."""


class NoAnswer(NotRunning):
    """Cairn took the request but did not answer it in time: running, but stuck or stopped
    (SIGSTOP). What was asked may or may not have been carried out."""
