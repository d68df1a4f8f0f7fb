"""The process the hostile-pattern test runs searches in, under a memory cap:

    python -m tests.reliability.hostile_search STORE CONVERSATION CAP_BYTES < patterns.json

It opens the store (passphrase from ENGRAM_TEST_PASSPHRASE), reads the conversation once
(so the timed calls measure the search, not the first decryption), caps its own address
space with RLIMIT_AS, then runs each pattern through the agent's real tool
(`conversation_find`, pattern mode) and prints one JSON line per pattern: the seconds the
call took, the answer's kind (matches, nothing, refused) and its first words, or the
traceback of anything that escaped. After a refusal it waits for the search still
finishing in the background (RE2 cannot be interrupted) and reports how long that took.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback

from engram.model.ids import ConversationId
from engram.runtime import history, pattern_search
from engram.store.store import Store


def main(store_path: str, conversation: str, cap: int) -> int:
    patterns: list[str] = json.load(sys.stdin)
    store = Store.open(store_path, passphrase=os.environ["ENGRAM_TEST_PASSPHRASE"])
    chat = ConversationId(conversation)
    history.dispatch(store, chat, "conversation_find", {"query": "warm up"})
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    for pattern in patterns:
        started = time.perf_counter()
        try:
            answer = history.dispatch(
                store, chat, "conversation_find", {"query": pattern, "mode": "pattern"}
            )
        except BaseException:  # what the suite counts: nothing may escape the tool
            report = {"traceback": traceback.format_exc()}
        else:
            report = {
                "outcome": "refused"
                if "error" in answer
                else ("matched" if answer["matches"] else "nothing"),
                "said": answer.get("error", ""),
                "matches": len(answer.get("matches", [])),
            }
        report["seconds"] = time.perf_counter() - started
        report["pattern"] = pattern
        waited = time.perf_counter()
        report["settled"] = pattern_search.settle(60)
        report["background_seconds"] = time.perf_counter() - waited
        print(json.dumps(report), flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
