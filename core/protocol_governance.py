"""The protocol's governance methods - capture policy, the review queue, the scanner's allowlist,
identity documents - each a handler like those in `core.protocol_memory`; `core.protocol` lists
them in its method table (with who may call them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import CairnError, InvalidInput
from core.model import REASON_CODES, Scope, Surface
from core.policy import Mode
from core.requests import (
    check_fields,
    choice,
    choices,
    flag,
    integer,
    opt_integer,
    opt_text,
    strings,
    text,
)
from core.suggestions import Op

if TYPE_CHECKING:
    from core.app import Cairn
    from core.protocol import Session

Handler = Callable[["Cairn", "Session", Mapping[str, Any]], dict[str, Any]]


# -- governance -------------------------------------------------------------------------------


def policy_get(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    """The policy in effect - for an agent, also what it means for that agent."""
    check_fields(p, frozenset(), required=())
    policy = cairn.policy.current()
    out = policy.to_dict()
    caller = s.bound()
    if caller.surface is Surface.AGENT:

        def mode(**what: Any) -> str:
            return policy.rule(
                agent=caller.agent, verified=caller.registered, extracted=False, **what
            ).mode.value

        out["for_this_agent"] = {
            "verified": caller.verified,
            "self_enrolled": caller.self_enrolled,
            "kinds": {k: mode(kind=k, scope=None) for k in cairn.memories.limits.kinds},
            "scopes": {sc.value: mode(kind=None, scope=sc) for sc in (Scope.GLOBAL, Scope.USER)},
            "extracted": policy.rule(
                agent=caller.agent,
                verified=caller.registered,
                kind=None,
                scope=None,
                extracted=True,
            ).mode.value,
        }
    else:
        out["file"] = str(cairn.policy.path)
        # what the file says may not be what is in effect: the person is told, here too
        out["file_warning"] = cairn.warnings.snapshot().get(cairn.policy.WARNING)
    return out


def policy_set(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"setting", "value"}), required=("setting", "value"))
    setting = text(p, "setting")
    raw = p["value"]
    if setting == "paused":
        if not isinstance(raw, bool):
            raise InvalidInput("paused takes true or false", data={"field": "value"})
        value: Mode | bool = raw
    else:
        value = choice(raw, "value", Mode)
    return cairn.policy.set(s.bound(), setting, value).to_dict()


def review_list(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"limit", "offset", "agent", "kind", "reason"}), required=())
    agent, kind, reason = opt_text(p, "agent"), opt_text(p, "kind"), opt_text(p, "reason")
    # a proposal is filed under its kind, else its memory's (every other operation has one),
    # else its operation: identity
    kinds = (*cairn.memories.limits.kinds, Op.IDENTITY.value)
    for name, value, known in (("kind", kind, kinds), ("reason", reason, REASON_CODES)):
        if value is not None and value not in known:
            raise InvalidInput(
                f"{name} must be one of {', '.join(known)}, not {value!r}", data={"field": name}
            )
    items = cairn.review.pending(
        s.bound(),
        limit=integer(p, "limit", default=200),
        offset=integer(p, "offset", default=0),
        agent=agent,
        kind=kind,
        reason=reason,
    )
    return {"items": items, "total": cairn.review.count(agent=agent, kind=kind, reason=reason)}


def review_get(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id"}), required=("id",))
    return cairn.review.get(s.bound(), text(p, "id"))


def review_adopt(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(
        p,
        frozenset({"id", "edits", "if_revision", "allow_flags", "action"}),
        required=("id",),
    )
    edits = p.get("edits") or {}
    if not isinstance(edits, Mapping):
        raise InvalidInput("edits must be an object of fields to change", data={"field": "edits"})
    return cairn.review.adopt(
        s.bound(),
        text(p, "id"),
        edits=edits,
        if_revision=opt_integer(p, "if_revision"),
        allow_flags=flag(p, "allow_flags", default=False),
        action=opt_text(p, "action"),
    ).to_dict()


def review_reject(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id", "reason"}), required=("id",))
    return cairn.review.reject(s.bound(), text(p, "id"), opt_text(p, "reason")).to_dict()


def review_many(adopt: bool) -> Handler:
    def handler(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
        check_fields(p, frozenset({"ids", "reason"}), required=("ids",))
        ids = strings(p.get("ids"), "ids")
        if not 1 <= len(ids) <= 500:
            raise InvalidInput("give between 1 and 500 ids", data={"field": "ids"})
        results = cairn.review.decide_many(
            s.bound(), ids, adopt=adopt, reason=opt_text(p, "reason")
        )
        return {
            "results": [
                r.to_dict()
                if not isinstance(r, CairnError)
                else {"error": {"error": r.code.label, "message": r.message}}
                for r in results
            ]
        }

    return handler


def scanner_allow(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"fingerprint", "rule", "note"}), required=("fingerprint", "rule"))
    cairn.allowlist.allow(s.bound(), text(p, "fingerprint"), text(p, "rule"), opt_text(p, "note"))
    return {"allowed": text(p, "fingerprint")}


def scanner_unallow(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"fingerprint"}), required=("fingerprint",))
    cairn.allowlist.remove(s.bound(), text(p, "fingerprint"))
    return {"removed": text(p, "fingerprint")}


def scanner_allowed(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return {"items": cairn.allowlist.entries(s.bound())}


# -- identity documents ---------------------------------------------------------------------


def identity_get(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"doc"}), required=())
    return cairn.identity.get(s.bound(), text(p, "doc") if "doc" in p else "soul").to_dict()


def identity_propose(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"doc", "content", "reason"}), required=("doc", "content"))
    return cairn.identity.propose(
        s.bound(), text(p, "doc"), p["content"], opt_text(p, "reason")
    ).to_dict()


def identity_list(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return {"documents": [d.to_dict() for d in cairn.identity.documents(s.bound())]}


def identity_history(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"doc"}), required=("doc",))
    return {"versions": [v.to_dict() for v in cairn.identity.history(s.bound(), text(p, "doc"))]}


def identity_edit(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(
        p,
        frozenset({"doc", "content", "if_version", "reason"}),
        required=("doc", "content", "if_version"),
    )
    return cairn.identity.edit(
        s.bound(),
        text(p, "doc"),
        p["content"],
        if_version=integer(p, "if_version"),
        reason=opt_text(p, "reason"),
    ).to_dict()


def identity_revert_preview(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"doc", "version"}), required=("doc", "version"))
    return cairn.identity.revert_preview(s.bound(), text(p, "doc"), integer(p, "version")).to_dict()


def identity_revert_apply(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"token"}), required=("token",))
    return cairn.identity.revert_apply(s.bound(), p["token"]).to_dict()


# -- workspaces ---------------------------------------------------------------------------------


def workspace_list(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return {"workspaces": cairn.lifecycle.workspaces(s.bound())}


def workspace_move(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"workspace", "to"}), required=("workspace", "to"))
    return cairn.lifecycle.move_workspace(s.bound(), text(p, "workspace"), text(p, "to"))


def workspace_merge(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"workspace", "into"}), required=("workspace", "into"))
    return cairn.lifecycle.merge_workspaces(s.bound(), text(p, "workspace"), text(p, "into"))


# -- backups and archives -----------------------------------------------------------------------


def backup_create(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return cairn.backups.backup("manual").to_dict()


def archive_export(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"out", "scopes", "workspaces"}), required=("out",))
    return cairn.archive.export(
        s.bound(),
        Path(text(p, "out")),
        scopes=choices(p.get("scopes"), "scopes", Scope),
        workspace_ids=cairn.archive.workspace_ids(strings(p.get("workspaces"), "workspaces")),
    ).to_dict()


def archive_import(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"path", "dry_run", "workspace"}), required=("path",))
    dry_run = flag(p, "dry_run", default=False)
    return cairn.archive.import_(
        s.bound(), Path(text(p, "path")), dry_run=dry_run, workspace=opt_text(p, "workspace")
    ).to_dict()
