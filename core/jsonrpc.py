"""JSON-RPC 2.0 on the wire: parsing and checking one frame, shaping answers and error objects.

Hostile input is parsed here, in order: encoding, JSON, shape (the frame's size is the
connection's to check, before; the method's version and parameters are `core.protocol`'s,
after). A frame that fails says what is wrong in an `RpcError`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.errors import ErrorCode


class RpcError(Exception):
    """A request-level failure to answer with a JSON-RPC error object."""

    def __init__(
        self, code: ErrorCode, message: str, req_id: Any = None, *, notification: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.req_id = req_id
        self.notification = notification  # a request without an id: never answered


def error_object(
    code: ErrorCode, message: str, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "code": code.rpc_code,
        "message": message,
        "data": {"error": code.label, **(data or {})},
    }


def response_error(
    req_id: Any, code: ErrorCode, message: str, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "error": error_object(code, message, data)}


# Made once: json.dumps and json.loads with any option build a new encoder or decoder per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode(message: dict[str, Any]) -> bytes:
    """One message as the line that carries it: compact UTF-8 JSON and a newline."""
    return (_ENCODER.encode(message) + "\n").encode("utf-8")


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _not_json(name: str) -> Any:
    """`NaN`, `Infinity` and `-Infinity`: Python's parser takes them, JSON has no such words."""
    raise ValueError(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_constant=_not_json)


def _loads(text: str) -> Any:
    """json.loads(text, parse_constant=_not_json) with one decoder made once, not one per call."""
    if text.startswith("\ufeff"):  # json.loads refuses it so; the decoder alone says less
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


def _holds_lone_surrogate(message: Any) -> bool:
    """Whether a parsed frame holds a string UTF-8 cannot encode (JSON lets `\\ud800` through)."""
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_frame(frame: bytes) -> tuple[Any, str, dict[str, Any], bool]:
    """(id, method, params, is_notification) of one frame, or RpcError naming what is wrong.
    Order: encoding, JSON, shape."""
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RpcError(
            ErrorCode.PARSE_ERROR, f"frame is not valid UTF-8 (byte {e.start})"
        ) from None
    try:
        message = _loads(text)
    except RecursionError:
        raise RpcError(ErrorCode.PARSE_ERROR, "frame is nested too deeply") from None
    except ValueError as e:
        raise RpcError(ErrorCode.PARSE_ERROR, f"frame is not valid JSON: {e}") from None
    if _ESCAPED_SURROGATE.search(text) and _holds_lone_surrogate(message):
        rest = (
            {k: v for k, v in message.items() if k != "params"}
            if isinstance(message, dict)
            else None
        )
        in_params = rest is not None and not _holds_lone_surrogate(rest)
        req_id = rest.get("id") if rest is not None and in_params else None
        raise RpcError(
            ErrorCode.INVALID_PARAMS if in_params else ErrorCode.INVALID_REQUEST,
            "frame holds an unpaired surrogate (an escaped \\ud800-\\udfff without its pair): "
            "not Unicode text",
            req_id if isinstance(req_id, str | int) and not isinstance(req_id, bool) else None,
        )
    if isinstance(message, list):
        raise RpcError(
            ErrorCode.INVALID_REQUEST, "batches are not supported; send one request per line"
        )
    if not isinstance(message, dict):
        raise RpcError(ErrorCode.INVALID_REQUEST, "a request must be a JSON object")
    notification = "id" not in message
    req_id = message.get("id")
    valid_id = req_id is None or (isinstance(req_id, str | int) and not isinstance(req_id, bool))
    if not notification and not valid_id:
        raise RpcError(ErrorCode.INVALID_REQUEST, "id must be a string, an integer or null")
    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(ErrorCode.INVALID_REQUEST, "method must be a non-empty string", req_id)
    # From here on a frame without an id is a notification: a mistake in it gets no answer.
    if message.get("jsonrpc") != "2.0":
        raise RpcError(
            ErrorCode.INVALID_REQUEST, 'jsonrpc must be "2.0"', req_id, notification=notification
        )
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(
            ErrorCode.INVALID_PARAMS,
            "params must be an object (named parameters)",
            req_id,
            notification=notification,
        )
    unknown = set(message) - {"jsonrpc", "id", "method", "params"}
    if unknown:
        raise RpcError(
            ErrorCode.INVALID_REQUEST,
            f"unknown member {sorted(unknown)[0]!r}",
            req_id,
            notification=notification,
        )
    return req_id, method, params, notification


__all__ = ["RpcError", "encode", "error_object", "parse_frame", "response_error"]
