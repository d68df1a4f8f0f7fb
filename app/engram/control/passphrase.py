"""A store's passphrase: how strong a new one must be, changing it, forgetting the key.

The strength comes from zxcvbn (Dropbox's estimator: dictionary words, names, keyboard
patterns, dates, l33t), not from rules about digits and capitals. A copied store can be
attacked offline, guess after guess, with nothing in the way but Argon2id's half second per
guess, so the least a new passphrase may score is zxcvbn's 3 of 4 (about 10^8 guesses).
The window's New store and Change passphrase dialogs and the command line's `init` and
passphrase change ask this one function (issue 20 item 7).
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.model.errors import InvalidInput
from engram.store.crypto import KdfParams
from engram.store.unlocked import UnlockedStore

MINIMUM_SCORE = 3
ESTIMATED_CHARS = 100  # zxcvbn slows down on very long input; what is beyond adds only strength
SCORE_WORDS = ("very weak", "weak", "fair", "strong", "very strong")
WHY_THE_MINIMUM = (
    "Anyone with a copy of the store can try passphrases offline, as fast as their "
    "computers allow; only the passphrase's strength stands in the way. A passphrase needs "
    "the estimator's score 3 of 4 (strong, about 10^8 guesses), for example four or five "
    "unrelated words."
)


@dataclass(frozen=True, slots=True)
class Strength:
    """How guessable a passphrase is, in words."""

    score: int
    enough: bool
    text: str
    hint: str = ""

    def refusal(self) -> str:
        """Why a new passphrase this weak is refused, in one sentence."""
        said = [part.strip().rstrip(".") for part in self.hint.split(". ") if part.strip()]
        words = "; ".join(part[:1].lower() + part[1:] for part in said)
        hint = f" ({words})" if words else ""
        return (
            f"The passphrase is too easy to guess: its strength is {SCORE_WORDS[self.score]}"
            f"{hint}, and anyone with a copy of the store could try passphrases offline until "
            f"one works, so a new one needs a score of {MINIMUM_SCORE} of 4, for example four "
            "or five unrelated words."
        )


def passphrase_strength(passphrase: str) -> Strength:
    """zxcvbn's estimate of `passphrase`, and whether it meets the minimum."""
    if not passphrase:
        return Strength(0, False, "")
    from zxcvbn import zxcvbn  # 60 ms of word lists: only where a new passphrase is judged

    result = zxcvbn(passphrase[:ESTIMATED_CHARS])
    score = int(result["score"])
    feedback = result["feedback"]
    hint = str(feedback.get("warning") or " ".join(feedback.get("suggestions") or []))
    text = f"Strength: {SCORE_WORDS[score]}."
    if score < MINIMUM_SCORE:
        text += f" {hint}" if hint else " Add another word or two."
    return Strength(score, score >= MINIMUM_SCORE, text.strip(), hint)


def check_new_passphrase(passphrase: str, *, allow_weak: bool = False) -> None:
    """Refuse (InvalidInput, one sentence) a new passphrase below the minimum, unless the
    caller said a weak one is meant (sample data, tests)."""
    if not passphrase:
        raise InvalidInput("The passphrase is empty; choose one with some characters.")
    strength = passphrase_strength(passphrase)
    if not strength.enough and not allow_weak:
        raise InvalidInput(strength.refusal())


def change_passphrase(
    store: UnlockedStore, passphrase: str, *, allow_weak: bool = False, kdf: KdfParams | None = None
) -> str:
    """Seal the store's key under `passphrase` instead of the old one (or give a store
    that had none a passphrase), in one transaction; the key itself, and so the data and
    any keyring entry, stay as they were. Returns what was done, in one sentence."""
    check_new_passphrase(passphrase, allow_weak=allow_weak)
    had = store.info.kek_by_passphrase is not None
    store.change_passphrase(passphrase, kdf=kdf)
    if had:
        return (
            "The store's passphrase was changed: the old one no longer opens it (a copy made "
            "before now still opens with the old one)."
        )
    return "The store now has a passphrase, which opens it on any computer."


def forget_key(store: UnlockedStore, passphrase: str) -> str:
    """Remove this store's key from this computer's OS keyring, once `passphrase` is shown
    to open the store; refused for a store with no passphrase, which nothing else would
    open. Returns what was done, in one sentence."""
    if not store.forget_key(passphrase):
        return (
            "This computer's keyring holds no key for this store, so nothing was removed: "
            "only its passphrase opens it."
        )
    return (
        "The store's key was removed from this computer's keyring: from now on only its "
        "passphrase opens it."
    )
