"""`memory_recall` as an agent tool (R1, R2): its specification, for every face that offers
it (MCP, the Agents SDK adapter)."""

from __future__ import annotations

from engram.engine.recall import RecallStatus
from engram.runtime.tool_calls import LIMIT_SCHEMA, ToolSpec, answer_object

_NOTE = answer_object(
    {
        "id": {"type": "string"},
        "kind": {"type": "string"},
        "scope": {"type": "string"},
        "confidence_bp": {"type": "integer"},
        "text": {"type": "string"},
    },
    ["id", "kind", "scope", "text"],
)
RECALL = ToolSpec(
    "memory_recall",
    "Recall what is remembered",
    "What is remembered about the person you are talking with that this conversation may "
    "use, best first.",
    {"limit": {**LIMIT_SCHEMA, "description": "12 by default, 25 at most"}},
    [],
    answer_object(
        {
            "status": {"enum": [s.value for s in RecallStatus]},
            "message": {"type": ["string", "null"]},
            "notes": {"type": "array", "items": _NOTE},
            "digest": {"type": "array", "items": {"type": "string"}},
        },
        ["status", "notes", "digest"],
    ),
    read_only=True,
    idempotent=True,
)
