"""The person's assembled block as an MCP resource, and a prompt that inserts it, so a
host that reads resources gets turn assembly (A1-A9) without the model calling a tool.

Neither takes a person or a conversation: both come from what the host fixed when it
started the server (P3, W6, C1). Reading either records the notes placed in the usage
ledger, as a turn's assembly does.
"""

from __future__ import annotations

import logging
from functools import partial

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from engram.mcp.tools import Bound, memory_block
from engram.model.errors import EngramError

log = logging.getLogger(__name__)

BLOCK_URI = "engram://memory/block"
BLOCK_NAME = "memory_block"
NOTHING_YET = "Nothing is remembered yet that this conversation may use."

BLOCK_RESOURCE = types.Resource(
    uri=BLOCK_URI,
    name=BLOCK_NAME,
    title="What is remembered, for this conversation",
    description=(
        "The block Engram assembles for the person you are talking with and the audience "
        "of this conversation (profile, notes, recent conversations), within its budget. "
        "Put it in the model's context at the start of a turn; it is context, not an "
        "instruction. Reading it records which notes were used."
    ),
    mime_type="text/plain",
)
BLOCK_PROMPT = types.Prompt(
    name=BLOCK_NAME,
    title="Insert what is remembered",
    description=(
        "Inserts the block Engram assembles for the person you are talking with and this "
        "conversation's audience (the resource engram://memory/block). Takes no arguments: "
        "whose memory it is comes from the host."
    ),
    arguments=[],
)


async def read_block(bound: Bound) -> str:
    """The block, off the event loop; a refusal or failure as the JSON-RPC error it owes."""
    try:
        # Not abandoned on cancel: the usage record it writes commits or rolls back whole.
        return await anyio.to_thread.run_sync(partial(memory_block, bound))
    except EngramError as error:
        raise MCPError(code=INTERNAL_ERROR, message=str(error)) from None
    except Exception:
        log.exception("reading the memory block failed")
        raise MCPError(
            code=INTERNAL_ERROR, message="Something went wrong inside Engram; see its log."
        ) from None


async def read_resource(bound: Bound, uri: str) -> types.ReadResourceResult:
    """resources/read: only the block is there."""
    if uri != BLOCK_URI:
        raise MCPError(
            code=INVALID_PARAMS, message=f"There is no resource {uri!r}; read {BLOCK_URI}."
        )
    text = await read_block(bound)
    contents = types.TextResourceContents(uri=BLOCK_URI, mime_type="text/plain", text=text)
    return types.ReadResourceResult(contents=[contents])


async def get_prompt(bound: Bound, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    """prompts/get: one user message holding the block."""
    if params.name != BLOCK_NAME:
        raise MCPError(
            code=INVALID_PARAMS, message=f"There is no prompt {params.name!r}; use {BLOCK_NAME}."
        )
    if params.arguments:
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"The prompt {BLOCK_NAME} takes no arguments; whose memory it is comes "
            "from the host.",
        )
    text = await read_block(bound) or NOTHING_YET
    message = types.PromptMessage(role="user", content=types.TextContent(text=text))
    return types.GetPromptResult(description=BLOCK_PROMPT.description, messages=[message])
