"""The tamper harness: change a real demo store behind Engram's back, every way we can
think of, and see whether `verify` notices.

For a store built by `engram demo` (plus one active and one revoked API key, so every table
has rows), it enumerates every table and column from SQLite's own catalogue and applies:

- bit flips: one bit of one cell (text cells flip a bit of their UTF-8 bytes, so some
  become invalid UTF-8; NULL cells get a value instead);
- row deletions: every row of every table;
- row swaps: two rows of a table exchange one column's values;
- raw byte flips: one bit in each page of the file, past SQLite's header;
- truncation: the file cut short at a few places.

Each mutation is applied to a fresh copy (its checkpoint beside it), which is then opened
and verified through the Python API and through the CLI (in-process). The verdict is:

- `detected`: verify reported a problem, or opening refused in one sentence;
- `harmless`: verify passed, and everything a person or agent can see — every person's
  export, the person list, agents and their history, API keys and which keys are accepted,
  the store's info — is identical to the untouched store's;
- `undetected`: verify passed but something visible changed;
- `traceback`: anything raised that is not one of Engram's sentences, or the CLI printed a
  traceback, or the CLI's exit code disagreed with the report.

Run it: `python -m tests.reliability.tamper [--full] [--out report.json]`
(or ENGRAM_RELIABILITY_FULL=1 for the pytest wrapper to run every mutation).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASSPHRASE = "tamper harness passphrase"
PASSPHRASE_ENV = "ENGRAM_TAMPER_PASSPHRASE"
SIDE = ("-wal", "-shm", "-journal", ".checkpoint.damaged", ".checkpoint.lock", ".checkpoint.tmp")

Apply = Callable[[Path], None]


@dataclass(frozen=True)
class Mutation:
    """One change to a store file."""

    kind: str  # bitflip | delete | swap | page | truncate
    table: str
    column: str
    what: str
    apply: Apply = field(compare=False, repr=False)


@dataclass
class Outcome:
    """What verify made of one mutation."""

    mutation: Mutation
    verdict: str  # detected | harmless | undetected | traceback | not-applicable
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        """As recorded in the report."""
        m = self.mutation
        return {
            "kind": m.kind,
            "table": m.table,
            "column": m.column,
            "what": m.what,
            "verdict": self.verdict,
            "detail": self.detail,
        }


@dataclass
class Report:
    """Every outcome, and the untouched copy's verdict."""

    baseline_ok: bool
    baseline_problems: list[str]
    outcomes: list[Outcome]
    seconds: float

    def counts(self) -> dict[str, int]:
        """How many mutations got each verdict."""
        return dict(Counter(o.verdict for o in self.outcomes))

    def by_kind(self) -> dict[str, dict[str, int]]:
        """Verdict counts per kind of mutation."""
        out: dict[str, Counter[str]] = {}
        for o in self.outcomes:
            out.setdefault(o.mutation.kind, Counter())[o.verdict] += 1
        return {k: dict(v) for k, v in sorted(out.items())}

    def failures(self) -> list[Outcome]:
        """Undetected changes and tracebacks: the goal is none."""
        return [o for o in self.outcomes if o.verdict in ("undetected", "traceback")]

    def to_json(self) -> dict[str, Any]:
        """The whole report, failures listed."""
        return {
            "baseline_ok": self.baseline_ok,
            "baseline_problems": self.baseline_problems,
            "mutations": len(self.outcomes),
            "counts": self.counts(),
            "by_kind": self.by_kind(),
            "tables": sorted({o.mutation.table for o in self.outcomes}),
            "seconds": round(self.seconds, 1),
            "failures": [o.to_json() for o in self.failures()],
            # what verify let pass, each shown to change nothing visible
            "harmless": [o.to_json() for o in self.outcomes if o.verdict == "harmless"],
        }


# ---- the store under test --------------------------------------------------------------


def build_store(folder: Path) -> tuple[Path, list[str]]:
    """A demo store, plus one active and one revoked API key, closed and checkpointed;
    returns its path and the two keys as a caller would present them."""
    import keyring
    import keyring.backends.fail

    from engram.control.demo import build_demo
    from engram.runtime import api_keys
    from engram.store import crypto
    from engram.store.store import Store

    keyring.set_keyring(keyring.backends.fail.Keyring())  # never touch a real keyring
    path = folder / "pristine.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        _, active = api_keys.create_key(store, "active key", "staff:ops")
        revoked_id, revoked = api_keys.create_key(store, "revoked key", "staff:ops")
        api_keys.revoke_key(store, revoked_id)
    finally:
        store.close()
    return path, [active, revoked]


def _copy(source: Path, target: Path) -> None:
    for suffix in ("", ".checkpoint", *SIDE):
        leftover = target.with_name(target.name + suffix)
        leftover.unlink(missing_ok=True)
    shutil.copyfile(source, target)
    shutil.copyfile(
        source.with_name(source.name + ".checkpoint"),
        target.with_name(target.name + ".checkpoint"),
    )


# ---- what a person or agent can see ----------------------------------------------------


def fingerprint(path: Path, keys: list[str]) -> dict[str, Any]:
    """Everything visible through Engram's faces, errors included (as their class)."""
    from engram.control import forensics, persons
    from engram.control.session import PersonSession
    from engram.model.errors import EngramError
    from engram.runtime import agents, api_keys
    from engram.store.store import Store

    seen: dict[str, Any] = {}

    def look(name: str, read: Callable[[], Any]) -> None:
        try:
            seen[name] = read()
        except EngramError as error:
            seen[name] = f"refused: {type(error).__name__}"

    try:
        store = Store.open(str(path), passphrase=PASSPHRASE)
    except EngramError as error:
        return {"open": f"refused: {type(error).__name__}"}
    try:
        info = store.info
        seen["info"] = [info.id, info.format_version, info.created_at, info.keyring_backend]
        look("persons", lambda: [p.to_json() for p in persons.list_persons(store)])
        with store.read() as conn:
            from engram.store import people

            everyone = [str(p) for p in people.all_ids(conn)]
        for person in sorted(set(everyone) | {"maya", "sam", "ines"}):

            def export(person: str = person) -> dict[str, Any]:
                data = forensics.export_person(PersonSession.open(store, person))
                data.pop("exported_at", None)
                return data

            look(f"export:{person}", export)
        look("agents", lambda: agents.list_agents(store))
        for row in seen.get("agents") or []:
            if isinstance(row, dict):
                look(f"history:{row['name']}", lambda n=row["name"]: agents.agent_history(store, n))
        look("keys", lambda: api_keys.list_keys(store))
        look("accepted", lambda: [api_keys.check_key(store, k) is not None for k in keys])
    finally:
        store.close()
    return json.loads(json.dumps(seen, default=str))


# ---- mutations -------------------------------------------------------------------------


def _catalogue(path: Path) -> dict[str, tuple[list[str], list[int]]]:
    """Every table: its columns and its rowids."""
    with contextlib.closing(sqlite3.connect(path)) as raw:
        tables = [
            name
            for (name,) in raw.execute(
                "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' "
                "order by name"
            )
        ]
        out = {}
        for table in tables:
            columns = [r[1] for r in raw.execute(f'pragma table_info("{table}")')]
            rowids = [r[0] for r in raw.execute(f'select rowid from "{table}" order by rowid')]
            out[table] = (columns, rowids)
    return out


def _flipped(value: Any, bit: int) -> tuple[str, Any]:
    """One bit of a cell flipped, and the SQL expression that stores it with its type."""
    if value is None:
        return "?", 1
    if isinstance(value, int):
        return "?", value ^ (1 << (bit % 62))
    if isinstance(value, float):
        return "?", -value if value else 1.0
    data = bytearray(value if isinstance(value, bytes) else str(value).encode("utf-8"))
    if not data:
        return ("?", b"\x01") if isinstance(value, bytes) else ("?", "\x01")
    data[(bit // 8) % len(data)] ^= 1 << (bit % 8)
    # text stays text, even when the flip made it invalid UTF-8 (item 6's case)
    return ("?", bytes(data)) if isinstance(value, bytes) else ("cast(? as text)", bytes(data))


def _execute(path: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    with contextlib.closing(sqlite3.connect(path)) as raw, raw:
        raw.execute(sql, params)


def bitflip(table: str, column: str, rowid: int, bit: int) -> Apply:
    """Flip one bit of one cell."""

    def apply(path: Path) -> None:
        with contextlib.closing(sqlite3.connect(path)) as raw:
            (value,) = raw.execute(
                f'select "{column}" from "{table}" where rowid = ?', (rowid,)
            ).fetchone()
        expression, new = _flipped(value, bit)
        _execute(
            path, f'update "{table}" set "{column}" = {expression} where rowid = ?', (new, rowid)
        )

    return apply


def delete(table: str, rowid: int) -> Apply:
    """Delete one row."""
    return lambda path: _execute(path, f'delete from "{table}" where rowid = ?', (rowid,))


def swap(table: str, column: str, first: int, second: int) -> Apply:
    """Exchange one column's values between two rows."""

    def apply(path: Path) -> None:
        with contextlib.closing(sqlite3.connect(path)) as raw, raw:
            get = f'select "{column}" from "{table}" where rowid = ?'
            (a,) = raw.execute(get, (first,)).fetchone()
            (b,) = raw.execute(get, (second,)).fetchone()
            if a == b:
                raise NotApplicable("the two values are equal")
            put = f'update "{table}" set "{column}" = ? where rowid = ?'
            # through a placeholder of the same type, so key columns can trade places too
            raw.execute(put, (_placeholder(a if a is not None else b), first))
            raw.execute(put, (a, second))
            raw.execute(put, (b, first))

    return apply


def _placeholder(value: Any) -> Any:
    if isinstance(value, bytes):
        return b"\x00tamper-swap"
    if isinstance(value, int | float):
        return -(10**15) - 7
    return "\x00tamper-swap"


def page_flip(page: int, page_size: int, bit: int) -> Apply:
    """Flip one bit in one page of the file (page 1's first 100 bytes are SQLite's header)."""

    def apply(path: Path) -> None:
        data = bytearray(path.read_bytes())
        low = (page - 1) * page_size + (100 if page == 1 else 0)
        offset = low + (bit // 8) % (page_size - (100 if page == 1 else 0))
        data[offset] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))

    return apply


def truncate(fraction: float) -> Apply:
    """Cut the file short."""

    def apply(path: Path) -> None:
        size = path.stat().st_size
        with open(path, "r+b") as handle:
            handle.truncate(int(size * fraction))

    return apply


class NotApplicable(Exception):
    """SQLite refused the change (a constraint), or it would change nothing."""


def mutations(path: Path, *, full: bool, sample: int, seed: int = 9) -> list[Mutation]:
    """Every mutation of the store's cells, rows and pages; a seeded sample unless `full`."""
    rng = random.Random(seed)
    out: list[Mutation] = []
    for table, (columns, rowids) in _catalogue(path).items():
        for column in columns:
            for rowid in rowids:
                bit = rng.randrange(1 << 16)
                out.append(
                    Mutation(
                        "bitflip",
                        table,
                        column,
                        f"row {rowid} bit {bit}",
                        bitflip(table, column, rowid, bit),
                    )
                )
            for first, second in itertools.pairwise(rowids):
                out.append(
                    Mutation(
                        "swap",
                        table,
                        column,
                        f"rows {first}<->{second}",
                        swap(table, column, first, second),
                    )
                )
        for rowid in rowids:
            out.append(Mutation("delete", table, "*", f"row {rowid}", delete(table, rowid)))
    with contextlib.closing(sqlite3.connect(path)) as raw:
        (page_size,) = raw.execute("pragma page_size").fetchone()
        (pages,) = raw.execute("pragma page_count").fetchone()
    for page in range(1, pages + 1):
        bit = rng.randrange(page_size * 8)
        out.append(
            Mutation(
                "page", "(file)", "*", f"page {page} bit {bit}", page_flip(page, page_size, bit)
            )
        )
    for fraction in (0.0, 0.01, 0.5, 0.9, 0.999):
        out.append(Mutation("truncate", "(file)", "*", f"to {fraction:.1%}", truncate(fraction)))
    if full or len(out) <= sample:
        return out
    # every table and every kind appears in a sample; the rest is drawn at random
    must: dict[tuple[str, str], Mutation] = {}
    for m in out:
        must.setdefault((m.kind, m.table), m)
    rest = [m for m in out if m not in must.values()]
    return list(must.values()) + rng.sample(rest, max(0, sample - len(must)))


# ---- running ---------------------------------------------------------------------------


def _cli_verify(path: Path) -> tuple[int, str, str]:
    from engram.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(
                ["--store", str(path), "--passphrase-env", PASSPHRASE_ENV, "verify", "--json"]
            )
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        except Exception:
            traceback.print_exc(file=err)
            code = -1
    return code, out.getvalue(), err.getvalue()


def _api_verify(path: Path) -> tuple[str, list[str]]:
    """("ok" | "problems" | "refused", problems or the refusal)."""
    from engram.model.errors import EngramError
    from engram.store.store import Store
    from engram.store.verify import verify

    try:
        store = Store.open(str(path), passphrase=PASSPHRASE)
    except EngramError as error:
        return "refused", [str(error)]
    try:
        report = verify(store)
    finally:
        store.close()
    return ("ok" if report.ok else "problems"), report.problems


def judge(
    work: Path, pristine: Path, mutation: Mutation, seen: dict[str, Any], keys: list[str], cli: bool
) -> Outcome:
    """Apply one mutation to a fresh copy and classify what verify made of it."""
    _copy(pristine, work)
    try:
        mutation.apply(work)
    except (NotApplicable, sqlite3.IntegrityError) as error:
        return Outcome(mutation, "not-applicable", str(error))
    try:
        state, problems = _api_verify(work)
    except Exception as error:
        return Outcome(mutation, "traceback", f"verify raised {type(error).__name__}: {error}")
    if cli:
        _copy(pristine, work)
        mutation.apply(work)
        code, out, err = _cli_verify(work)
        expected = {"ok": 0, "problems": 3, "refused": 1}[state]
        if "Traceback" in err or code != expected:
            return Outcome(
                mutation, "traceback", f"CLI exit {code} (expected {expected}): {err[-300:]}"
            )
        if state != "refused" and json.loads(out)["problems"] != problems:
            return Outcome(mutation, "traceback", "the CLI and the API reported differently")
    if state != "ok":
        return Outcome(mutation, "detected", problems[0] if problems else "")
    try:
        after = fingerprint(work, keys)
    except Exception as error:
        return Outcome(mutation, "traceback", f"reading raised {type(error).__name__}: {error}")
    if after == seen:
        return Outcome(mutation, "harmless", "verify passed and nothing visible changed")
    changed = sorted(k for k in set(after) | set(seen) if after.get(k) != seen.get(k))
    return Outcome(mutation, "undetected", f"visible change in {', '.join(changed)}")


def run(
    *,
    full: bool = False,
    sample: int = 150,
    cli_every: int = 1,
    folder: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Build a demo store and run the harness over it."""
    os.environ[PASSPHRASE_ENV] = PASSPHRASE
    started = time.monotonic()
    with _folder(folder) as where:
        pristine, keys = build_store(where)
        work = where / "work.engram"
        _copy(pristine, work)
        state, problems = _api_verify(work)
        seen = fingerprint(work, keys)
        outcomes = []
        chosen = mutations(pristine, full=full, sample=sample)
        for done, mutation in enumerate(chosen, start=1):
            outcomes.append(judge(work, pristine, mutation, seen, keys, cli=done % cli_every == 0))
            if progress:
                progress(done, len(chosen))
    return Report(state == "ok", problems, outcomes, time.monotonic() - started)


@contextlib.contextmanager
def _folder(folder: Path | None) -> Iterator[Path]:
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="engram-tamper-") as name:
        yield Path(name)


def main(argv: list[str] | None = None) -> int:
    """Command line: print the figures, write the full report, exit 1 on any failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every mutation, not a sample")
    parser.add_argument("--sample", type=int, default=150)
    parser.add_argument("--cli-every", type=int, default=1, help="run the CLI on every Nth")
    parser.add_argument("--out", type=Path, help="write the JSON report here")
    args = parser.parse_args(argv)
    full = args.full or os.environ.get("ENGRAM_RELIABILITY_FULL") == "1"

    def tick(done: int, total: int) -> None:
        if done % 100 == 0 or done == total:
            print(f"  {done}/{total}", file=sys.stderr, flush=True)

    report = run(full=full, sample=args.sample, cli_every=args.cli_every, progress=tick)
    data = report.to_json()
    if args.out:
        args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(
        json.dumps({k: v for k, v in data.items() if k not in ("failures", "harmless")}, indent=2)
    )
    for failure in data["failures"][:20]:
        print(failure)
    return 0 if report.baseline_ok and not data["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
