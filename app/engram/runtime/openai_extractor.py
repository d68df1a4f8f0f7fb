"""An extractor behind any OpenAI-compatible chat endpoint (llama.cpp, Ollama, vLLM…).

It sends exactly the bounded request — the visible turns (each marked as the person's own
or not) and the notes shown for restating or contradicting — and asks for JSON back. The
answer is parsed strictly; whatever it proposes still goes through `admit`, so a model can
no more widen what learning does than the rule extractor can (W3, W8).
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram.engine.digest import DigestRequest, tidy_line
from engram.engine.extraction import ExtractionRequest, Proposal
from engram.model.errors import EngramError
from engram.model.ids import NoteId, TurnId
from engram.model.scope import Durability, Kind
from engram.model.sensitivity import LABELS, SensitiveCategory, parse_category

log = logging.getLogger(__name__)
MAX_ANSWER_BYTES = 256 * 1024

# P5: the categories the model is asked to name, id and meaning.
CATEGORY_LIST = "; ".join(f"{c.value} ({LABELS[c]})" for c in SensitiveCategory)

SYSTEM_PROMPT = (
    """You extract durable notes about one person from a conversation.
Only the turns marked "by_subject": true are that person's own words; never record what
anyone else, including the assistant, claims about them. Propose a note only for something
the person clearly stated about themself. Kinds: fact, preference, open_thread, style.
You are shown some notes already kept; if a turn repeats one, restate it by id; if it
replaces one (a move, a new job, a changed taste), contradict it by id.
Answer with one JSON object and nothing else:
{"notes": [{"kind": "fact", "text": "Lives in Porto.", "turn": "<turn id>",
  "durability": "lasting" | "transient", "confidence_bp": 0-10000,
  "restates": "<note id>" | null, "contradicts": "<note id>" | null,
  "sensitive": true | false, "category": "<category>" | null, "reason": "<why>" | null,
  "ambiguous": true | false}]}
Write each note's text in the third person, short, ending with a period. A note is
sensitive when it touches one of these categories; then give its category and, in a few
words, the reason: """
    + CATEGORY_LIST
    + """. Mark hedged statements as
ambiguous. If there is nothing to keep, answer {"notes": []}."""
)


DIGEST_PROMPT = """You write one line for a digest of recent conversations with one person.
Only the turns marked "by_subject": true are that person's own words. In at most 20 words,
say what the conversation was about, from what the person said (not what the assistant
claimed), without health, beliefs, money, credentials, addresses or anything about a
child. Answer with one JSON object and nothing else: {"line": "Planned a trip to Porto."}
or {"line": null} if there is nothing worth a line."""


class ExtractorFailed(EngramError):
    """The endpoint could not be reached or answered with something unusable."""


@dataclass(frozen=True, slots=True)
class OpenAIExtractor:
    """POSTs to `{base_url}/chat/completions`; `api_key` is optional (local servers)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 60.0
    name: str = "openai-compatible"

    def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
        answer = self._post(
            {
                "model": self.model,
                "temperature": 0,
                "response_format": {"type": "json_object"},
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": json.dumps(request_json(request))},
                ],
            }
        )
        try:
            content = answer["choices"][0]["message"]["content"]
            notes = json.loads(content)["notes"]
            if not isinstance(notes, list):
                raise TypeError("'notes' is not a list")
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise ExtractorFailed(
                f"The extractor at {self.base_url} answered in an unexpected shape ({error}); "
                "nothing was learned and the turns stay pending."
            ) from None
        proposals = []
        for item in notes:  # one malformed note costs only itself
            try:
                proposals.append(_proposal(item))
            except (KeyError, TypeError, ValueError) as error:
                log.warning("the extractor proposed a malformed note (%s); it was skipped", error)
        return proposals

    def digest_line(self, request: DigestRequest) -> str | None:
        """M4: the model's one line for a conversation (None when it offers none)."""
        turns = [
            {"role": t.role, "by_subject": t.by_subject, "text": t.text} for t in request.turns
        ]
        answer = self._post(
            {
                "model": self.model,
                "temperature": 0,
                "response_format": {"type": "json_object"},
                "messages": [
                    {"role": "system", "content": DIGEST_PROMPT},
                    {"role": "user", "content": json.dumps({"turns": turns})},
                ],
            }
        )
        try:
            line = json.loads(answer["choices"][0]["message"]["content"])["line"]
            if line is not None and not isinstance(line, str):
                raise TypeError("'line' is not text")
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise ExtractorFailed(
                f"The extractor at {self.base_url} answered the digest in an unexpected "
                f"shape ({error}); no digest line was written."
            ) from None
        return tidy_line(line)

    def _post(self, payload: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        http = urllib.request.Request(
            self.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(payload).encode(),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(http, timeout=self.timeout_s) as response:
                raw = response.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as error:
            raise ExtractorFailed(
                f"The extractor at {self.base_url} refused the request (HTTP {error.code}); "
                "the turns stay pending."
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ExtractorFailed(
                f"Cannot reach the extractor at {self.base_url} ({reason}); the turns stay pending."
            ) from None
        if len(raw) > MAX_ANSWER_BYTES:
            raise ExtractorFailed(f"The extractor at {self.base_url} answered too much.")
        try:
            return json.loads(raw)
        except ValueError:
            raise ExtractorFailed(
                f"The extractor at {self.base_url} did not answer with JSON."
            ) from None


def request_json(request: ExtractionRequest) -> dict[str, Any]:
    """Exactly what the model is shown: nothing beyond the bounded request."""
    return {
        "kinds": sorted(k.value for k in request.kinds),
        "turns": [
            {"turn": t.turn, "role": t.role, "by_subject": t.by_subject, "text": t.text}
            for t in request.turns
        ],
        "notes": [{"id": n.id, "kind": n.kind.value, "text": n.text} for n in request.notes],
    }


def _proposal(item: Any) -> Proposal:
    if not isinstance(item, dict):
        raise TypeError("a note is not an object")
    confidence = item.get("confidence_bp", 6_000)
    category = parse_category(item.get("category"))
    flagged = bool(item.get("sensitive", False)) or category is not None
    if not isinstance(confidence, int) or isinstance(confidence, bool):
        raise TypeError("confidence_bp is not a whole number")
    return Proposal(
        kind=Kind(item["kind"]),
        text=str(item["text"]),
        turn=TurnId(str(item["turn"])),
        durability=Durability(item.get("durability") or Durability.LASTING.value),
        confidence_bp=confidence,
        restates=NoteId(str(item["restates"])) if item.get("restates") else None,
        contradicts=NoteId(str(item["contradicts"])) if item.get("contradicts") else None,
        sensitive=flagged,
        ambiguous=bool(item.get("ambiguous", False)),
        category=category.value if category else None,
        reason=str(item["reason"])[:300] if flagged and item.get("reason") else None,
    )
