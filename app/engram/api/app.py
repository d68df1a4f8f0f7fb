"""`engram serve`'s FastAPI application: thin routes over MemoryApi (routes.py), the
pydantic models (models.py) and one-sentence refusals for every error.

OpenAPI is at /openapi.json and the interactive docs at /docs (docs_page.py: served from
Engram's own files, nothing from another host). Store work runs on
FastAPI's worker threads (plain `def` routes), so a request waiting on the database never
holds up the event loop.
"""

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
from fastapi import Body, Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from engram import __version__
from engram.api import models
from engram.api.conversation_app import install_conversation_routes
from engram.api.conversation_routes import ConversationApi
from engram.api.docs_page import new_app
from engram.api.routes import PERSON_HEADER, Call, MemoryApi, status_of
from engram.api.threaded import threaded
from engram.engine.extraction import Extractor
from engram.engine.rule_extractor import RuleExtractor
from engram.model.errors import EngramError
from engram.runtime.extraction import HostPolicy
from engram.runtime.usage_writer import UsageWriter
from engram.store.errors import OperationalError, is_busy
from engram.store.store import Store

log = logging.getLogger(__name__)
PREFIX = "/v1/memory/agents/{agent}/memory"
_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {"model": models.ErrorAnswer, "description": what}
    for code, what in (
        (400, "The request is malformed; the sentence says what to fix."),
        (401, "No valid project API key."),
        (
            403,
            "A rule refuses it (the agent may not write that kind, the person is not in "
            "that conversation, …).",
        ),
        (404, "No such agent, note, candidate or conversation for this person."),
        (409, "A stale revision, or the item is no longer in a state that allows it."),
        (413, "The body is too large."),
        (431, "The headers are too large."),
        (503, "The store is busy with another writer, or cannot be written; try again."),
    )
}
BUSY_RETRY_SECONDS = 1
BODY_NOT_JSON = "The request body must be a JSON object (Content-Type: application/json)."
_PERSONISH = re.compile(r"person|user", re.IGNORECASE)
_bearer = HTTPBearer(auto_error=False, description="A project API key from `engram keys create`.")

AgentName = Annotated[str, Path(min_length=1, max_length=120)]
ItemId = Annotated[str, Path(min_length=1, max_length=120)]


def build_app(
    store: Store, *, extractor: Extractor | None = None, host: HostPolicy | None = None
) -> FastAPI:
    """The application for one open store; learning after committed exchanges uses
    `extractor` (the offline rule extractor by default), unless `host` turns it off."""
    usage = UsageWriter(store)  # reads answer at once; their usage is written after them
    api = MemoryApi(store, usage)
    conversations = ConversationApi(store, extractor or RuleExtractor(), host or HostPolicy())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:  # what an earlier run left unlearned is queued before the first request
            await anyio.to_thread.run_sync(conversations.catch_up)
        except Exception:  # a store that cannot be read now is said by every request
            log.exception("could not look for learning an earlier run left pending")
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(conversations.stop_learning)
            await anyio.to_thread.run_sync(usage.close)  # pending usage is written first

    app = new_app(
        lifespan=lifespan,
        title="Engram typed memory API",
        version=__version__,
        description=(
            "What an AI agent remembers about the people who use an application. Every "
            "memory route needs a project API key (`Authorization: Bearer …`) and the "
            f"person in the trusted `{PERSON_HEADER}` header, set by the application's "
            'server code — never from the body. Refusals are `{"error": one sentence}`.'
        ),
        responses=_REFUSALS,
    )
    app.state.usage = usage

    async def caller(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> str:
        scheme = credentials.scheme if credentials else ""
        token = credentials.credentials if credentials else ""
        return await anyio.to_thread.run_sync(api.caller, f"{scheme} {token}")

    async def person_header(
        request: Request,
        person: Annotated[
            str | None,
            Header(
                alias=PERSON_HEADER,
                description="Whose memory this is; set by trusted server code only.",
            ),
        ] = None,
    ) -> list[str]:
        return request.headers.getlist(PERSON_HEADER)

    Actor = Annotated[str, Depends(caller)]
    People = Annotated[list[str], Depends(person_header)]

    async def call(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        people: People,
        agent: AgentName,
    ) -> Call:
        # The key, the person and the agent in one worker-thread hop.
        scheme = credentials.scheme if credentials else ""
        token = credentials.credentials if credentials else ""

        authorization = f"{scheme} {token}"
        kept = api.bind_kept(authorization, people, agent)  # nothing committed since
        if kept is not None:
            return kept
        return await anyio.to_thread.run_sync(api.bind, authorization, people, agent)

    Bound = Annotated[Call, Depends(call)]

    async def new_person_call(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        people: People,
        agent: AgentName,
    ) -> Call:
        scheme = credentials.scheme if credentials else ""
        token = credentials.credentials if credentials else ""

        def bound() -> Call:
            return api.open(api.caller(f"{scheme} {token}"), people, agent, new_person=True)

        return await anyio.to_thread.run_sync(bound)

    NewPerson = Annotated[Call, Depends(new_person_call)]

    @app.get("/v1/health", response_model=models.Health, tags=["health"])
    async def health() -> dict[str, Any]:  # no store, no blocking: no worker thread either
        """Whether the server is up (no key needed)."""
        return {"ok": True}

    @app.get(f"{PREFIX}/items", response_model=models.ItemPage, tags=["items"])
    async def list_items(
        bound: Bound,
        cursor: Annotated[str | None, Query(max_length=200)] = None,
        limit: Annotated[int, Query(ge=1, le=100)] = 50,
        status: Annotated[str, Query(pattern="^(active|all)$")] = "active",
    ) -> Response:
        """Notes in creation order, one keyset page at a time: pages never skip or repeat
        a note when others are added or deleted in between."""
        kept = api.kept_json(bound, api.items_question(cursor, limit, status))
        if kept is None:  # read on a worker thread; what was kept is given from memory
            kept = await anyio.to_thread.run_sync(api.list_items_json, bound, cursor, limit, status)
        return _json(kept)

    @app.post(f"{PREFIX}/items", status_code=201, response_model=models.ItemDetail, tags=["items"])
    @threaded
    def create_item(
        actor: Actor, people: People, agent: AgentName, body: models.NewItem
    ) -> dict[str, Any]:
        """Add a note to the person's memory (the person is created on first write)."""
        api.check_new_item(agent, body)
        return api.create_item(api.open(actor, people, agent, new_person=True), body)

    @app.post(f"{PREFIX}/search", response_model=models.SearchAnswer, tags=["items"])
    async def search(bound: Bound, body: models.SearchRequest) -> Response:
        """Notes sharing words with the query, best first."""
        kept = api.kept_json(bound, api.search_question(body))
        if kept is None:
            kept = await anyio.to_thread.run_sync(api.search_json, bound, body)
        return _json(kept)

    @app.post(f"{PREFIX}/assemble", response_model=models.AssembleAnswer, tags=["turns"])
    @threaded
    def assemble(bound: Bound, body: models.TurnRequest) -> dict[str, Any]:
        """The system block the agent runtime gives a turn in the conversation: only what
        its audience may receive. The person must take part in the conversation; the notes
        placed are recorded as used."""
        return api.assemble(bound, body)

    @app.post(f"{PREFIX}/recall", response_model=models.RecallAnswer, tags=["turns"])
    @threaded
    def recall(bound: Bound, body: models.RecallRequest) -> dict[str, Any]:
        """What memory_recall gives the agent in the conversation, best first: only what
        its audience may receive. The person must take part; the notes are recorded as used."""
        return api.recall(bound, body)

    @app.get(f"{PREFIX}/items/{{item_id}}", response_model=models.ItemDetail, tags=["items"])
    @threaded
    def show_item(bound: Bound, item_id: ItemId) -> dict[str, Any]:
        """One note with its versions, sources, confidence arithmetic and usage."""
        return api.show_item(bound, item_id)

    @app.get(f"{PREFIX}/items/{{item_id}}/usage", response_model=models.UsageAnswer, tags=["items"])
    @threaded
    def item_usage(bound: Bound, item_id: ItemId) -> dict[str, Any]:
        """Every turn and tool answer that used the note."""
        return api.usage(bound, item_id)

    @app.patch(f"{PREFIX}/items/{{item_id}}", response_model=models.ItemDetail, tags=["items"])
    @threaded
    def patch_item(bound: Bound, item_id: ItemId, body: models.ItemPatch) -> dict[str, Any]:
        """Correct a note (a new version; the old one is closed) or change its scope."""
        return api.patch_item(bound, item_id, body)

    @app.delete(f"{PREFIX}/items/{{item_id}}", response_model=models.Deleted, tags=["items"])
    @threaded
    def delete_item(
        bound: Bound,
        item_id: ItemId,
        body: Annotated[models.ItemDelete | None, Body()] = None,
    ) -> dict[str, Any]:
        """Close a note's interval; its record stays."""
        return api.delete_item(bound, item_id, body or models.ItemDelete())

    @app.get(f"{PREFIX}/candidates", response_model=models.CandidateList, tags=["candidates"])
    @threaded
    def list_candidates(
        bound: Bound,
        status: Annotated[
            str | None, Query(pattern="^(pending|approved|rejected|applied)$")
        ] = None,
    ) -> dict[str, Any]:
        """The person's suggested notes, oldest first."""
        return api.candidates(bound, status)

    @app.post(
        f"{PREFIX}/candidates/{{candidate_id}}/decision",
        response_model=models.Candidate,
        tags=["candidates"],
    )
    @threaded
    def decide(bound: Bound, candidate_id: ItemId, body: models.Decision) -> dict[str, Any]:
        """Approve or reject the revision you reviewed; a stale revision is a 409."""
        return api.decide(bound, candidate_id, body)

    @app.post(
        f"{PREFIX}/candidates/{{candidate_id}}/apply",
        response_model=models.Candidate,
        tags=["candidates"],
    )
    @threaded
    def apply(bound: Bound, candidate_id: ItemId) -> dict[str, Any]:
        """Turn an approved candidate into a note."""
        return api.apply(bound, candidate_id)

    install_conversation_routes(app, PREFIX, conversations, Bound, NewPerson)
    install_refusals(app)
    return app


def _json(body: bytes) -> Response:
    """An answer already checked against its model and encoded (MemoryApi.answer_json)."""
    return Response(body, media_type="application/json")


def install_refusals(app: FastAPI) -> None:
    """Every error becomes {"error": one sentence} with the right status."""

    @app.exception_handler(EngramError)
    async def refused(_: Request, error: EngramError) -> JSONResponse:
        # The operators of an HTTP deployment configure it from the command line.
        return refusal(status_of(error), error.for_command_line())

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        return refusal(400, validation_sentence(error.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        if error.status_code == 404:
            return refusal(404, f"There is no {request.url.path}.")
        if error.status_code == 400:  # a body FastAPI could not read or parse
            cause = error.__cause__
            if isinstance(cause, EngramError):  # too large, or stopped arriving
                return refusal(status_of(cause), str(cause))
            return refusal(400, BODY_NOT_JSON)
        if error.status_code == 405:  # with the methods it does answer (RFC 9110 §15.5.6)
            answer = refusal(405, f"{request.url.path} does not answer {request.method}.")
            answer.headers["Allow"] = ", ".join(allowed_methods(request))
            return answer
        return refusal(error.status_code, str(error.detail))

    @app.exception_handler(OperationalError)
    async def database_failed(request: Request, error: OperationalError) -> JSONResponse:
        if is_busy(error):  # the write rolled back: nothing of it was kept
            answer = refusal(
                503,
                "The store is busy with another writer; nothing was written — try again "
                "in a moment.",
            )
            answer.headers["Retry-After"] = str(BUSY_RETRY_SECONDS)
            return answer
        return await failed(request, error)

    @app.exception_handler(Exception)
    async def failed(request: Request, _: Exception) -> JSONResponse:
        log.exception("the API failed on %s %s", request.method, request.url.path)
        return refusal(500, "Something went wrong inside Engram; see its log.")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app answers at this path (Starlette's own 405 names
    only the first route's, and GET and POST of one path are two routes here)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


def refusal(status: int, sentence: str) -> JSONResponse:
    """One refusal."""
    return JSONResponse({"error": sentence}, status_code=status)


def validation_sentence(errors: Any) -> str:
    """pydantic's complaints as one sentence naming the field."""
    first = next(iter(errors), None)
    if first is None:
        return "The request is not valid."
    loc = list(first.get("loc", ()))
    if loc and loc[0] in ("body", "query", "path", "header"):  # where it came, not a field
        loc = loc[1:]
    where = [str(part) for part in loc]
    field = where[-1] if where else ""
    kind = first.get("type", "")
    if kind == "extra_forbidden":
        if _PERSONISH.search(field):
            return f"The person comes from the {PERSON_HEADER} header, never from the body."
        return f"The request has no field {field!r}; check its spelling against /docs."
    if kind in ("json_invalid", "model_attributes_type", "dict_type") or not field:
        return BODY_NOT_JSON
    if kind == "string_unicode":
        return f"{field!r} holds characters that are not valid Unicode; nothing was written."
    if kind == "missing":
        return f"Send {field!r}; it is required."
    return f"{field!r}: {first.get('msg', 'not valid')}."
