"""The one table that decides a memory's author tier, and the function that reads it.

Retrieval leans on the tier (context bundles take only `human` and `explicit` by default), so the
tier must mean something: it records whose words these are and who vouched for them.

    human     a person wrote or edited the words (windows, CLI, notes folder, import of plain
              memories, or an adoption where the human changed the proposal)
    explicit  a verified agent was asked to remember this and policy let it land, or a human
              adopted an agent's proposal exactly as proposed
    derived   an agent that is not verified by a token (a declared name only) wrote it and policy
              let it land; or Cairn produced it by a deterministic process
    llm       a model extracted it on its own (the agent declared `origin: extracted`) and no
              human has vouched for it
"""

from __future__ import annotations

from enum import StrEnum

from core.model import Origin, Surface, Tier


class Decision(StrEnum):
    """How a write came to land."""

    AUTO = "auto"  # policy let it land without review
    ADOPTED = "adopted"  # a human adopted the proposal as proposed
    ADOPTED_EDITED = "adopted_edited"  # a human adopted the proposal after changing it


# (surface, decision, verified agent, declared origin) -> tier. Every combination that can occur is
# listed; `None` in the origin column means "not applicable" (human surfaces declare no origin).
TIER_TABLE: dict[tuple[Surface, Decision, bool, Origin | None], Tier] = {
    # People writing directly.
    (Surface.HUMAN, Decision.AUTO, False, None): Tier.HUMAN,
    (Surface.NOTES, Decision.AUTO, False, None): Tier.HUMAN,
    (Surface.IMPORT, Decision.AUTO, False, None): Tier.HUMAN,
    # Cairn itself (migrations, janitor): deterministic, no person's words.
    (Surface.SYSTEM, Decision.AUTO, False, None): Tier.DERIVED,
    # Agents whose write landed under policy.
    (Surface.AGENT, Decision.AUTO, True, Origin.EXPLICIT): Tier.EXPLICIT,
    (Surface.AGENT, Decision.AUTO, False, Origin.EXPLICIT): Tier.DERIVED,
    (Surface.AGENT, Decision.AUTO, True, Origin.EXTRACTED): Tier.LLM,
    (Surface.AGENT, Decision.AUTO, False, Origin.EXTRACTED): Tier.LLM,
    # Agent proposals a human adopted unchanged: the human vouched, the words are the agent's.
    (Surface.AGENT, Decision.ADOPTED, True, Origin.EXPLICIT): Tier.EXPLICIT,
    (Surface.AGENT, Decision.ADOPTED, False, Origin.EXPLICIT): Tier.EXPLICIT,
    (Surface.AGENT, Decision.ADOPTED, True, Origin.EXTRACTED): Tier.EXPLICIT,
    (Surface.AGENT, Decision.ADOPTED, False, Origin.EXTRACTED): Tier.EXPLICIT,
    # Agent proposals a human changed before adopting: the words are now the human's.
    (Surface.AGENT, Decision.ADOPTED_EDITED, True, Origin.EXPLICIT): Tier.HUMAN,
    (Surface.AGENT, Decision.ADOPTED_EDITED, False, Origin.EXPLICIT): Tier.HUMAN,
    (Surface.AGENT, Decision.ADOPTED_EDITED, True, Origin.EXTRACTED): Tier.HUMAN,
    (Surface.AGENT, Decision.ADOPTED_EDITED, False, Origin.EXTRACTED): Tier.HUMAN,
}


def author_tier(
    surface: Surface, decision: Decision, verified: bool, origin: Origin | None
) -> Tier:
    """Look up the tier for one write. Raises KeyError for a combination the table does not list."""
    if surface is not Surface.AGENT:
        verified, origin = False, None
    elif origin is None:
        origin = Origin.EXPLICIT
    return TIER_TABLE[(surface, decision, verified, origin)]


def render_table() -> str:
    """The table as markdown, for `docs/data-model.md` (a test keeps the two identical)."""
    lines = [
        "| surface | decision | verified agent | declared origin | tier |",
        "|---|---|---|---|---|",
    ]
    for (surface, decision, verified, origin), tier in TIER_TABLE.items():
        shown_verified = ("yes" if verified else "no") if surface is Surface.AGENT else "-"
        shown_origin = origin.value if origin else "-"
        lines.append(
            f"| {surface.value} | {decision.value} | {shown_verified} | {shown_origin} "
            f"| **{tier.value}** |"
        )
    return "\n".join(lines) + "\n"
