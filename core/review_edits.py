"""A person's edits of a proposal and the options of adopting one: the fields an edit may
change or empty, what adopting feedback may do, the options a proposal does not take, and an edit
in the shape the memory keeps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import InvalidInput
from core.model import Scope
from core.suggestions import Op, Suggestion
from core.validation import check_importance

EDITABLE = ("content", "summary", "kind", "scope", "tags", "importance", "keywords")
# The fields an edit may empty: None (or a blank text) clears them. An update leaves a field
# given as None unchanged and clears one given as "".
CLEARABLE = ("summary", "keywords")
FEEDBACK_ACTIONS = ("archive", "forget", "edit")


def effective_edits(s: Suggestion, edits: dict[str, Any]) -> dict[str, Any]:
    """The person's edits that change the proposal, in the shape the memory keeps, in the
    order given."""
    changes: dict[str, Any] = {}
    for name, raw in edits.items():
        value = edit_value(name, raw)
        if value != getattr(s, name):
            changes[name] = value
    return changes


def refuse_what_does_not_apply(
    s: Suggestion, *, edits: Mapping[str, Any], if_revision: int | None, action: str | None
) -> None:
    """An option the proposal does not take is refused, never dropped: until 2026-11-30 an add
    proposal adopted with action 'forget' was stored, and feedback adopted with edits and action
    'archive' was archived without them.

    Raises:
        InvalidInput: naming the option (`action`, `if_revision`, `edits`) and the proposal.
    """
    kind = f"{s.id} is {_a(s.op.value)} proposal"
    if action is not None and s.op is not Op.FEEDBACK:
        raise InvalidInput(
            f"action applies to feedback proposals only; {kind}", data={"field": "action"}
        )
    if if_revision is not None and s.op is Op.ADD:
        raise InvalidInput(
            f"if_revision applies to a proposal about a memory or an identity document; {kind} "
            "(a new memory has no revision yet)",
            data={"field": "if_revision"},
        )
    if edits and s.op is Op.FORGET:
        raise InvalidInput(
            f"edits do not apply to a proposal to forget ({s.id}): adopt or reject it as it is",
            data={"field": next(iter(edits))},
        )
    if edits and s.op is Op.FEEDBACK and action in ("archive", "forget"):
        raise InvalidInput(
            f"edits are not applied with action {action!r}; to change the memory, adopt "
            f"{s.id} with action 'edit'",
            data={"field": "edits"},
        )


def _a(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def edit_value(name: str, raw: Any) -> Any:
    """A person's edit in the shape the memory keeps (a Scope, a tuple of tags).

    Raises:
        InvalidInput: an unknown scope; an importance that is not a whole number from 1 to 5
            (until 2026-11-30 an emptied one was stored as the default 3 or dropped, and "4"
            crashed).
    """
    if name == "importance":
        return check_importance(
            raw, f"importance takes a whole number from 1 to 5 and cannot be emptied, not {raw!r}"
        )
    if name == "scope" and raw is not None and not isinstance(raw, Scope):
        try:
            return Scope(raw)
        except ValueError as e:
            raise InvalidInput(f"unknown scope {raw!r}", data={"field": "scope"}) from e
    if name == "tags" and raw is not None:
        return tuple(raw)
    if name in CLEARABLE and isinstance(raw, str) and not raw.strip():
        return None  # emptied: the same edit as None
    return raw


def cleared(name: str, value: Any) -> Any:
    """An edited value as an update takes it: an emptied summary or keywords is "" (cleared),
    not None (which an update reads as "unchanged")."""
    return "" if value is None and name in CLEARABLE else value
