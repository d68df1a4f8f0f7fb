"""Issue 17 item 14: an access report is signed with the store's Ed25519 key over every
byte the person sees, and checking it needs only the store's id and public key."""

from __future__ import annotations

import pytest

from engram.control.report_signature import (
    MARKER,
    Verdict,
    check_report,
    key_fingerprint,
    sign_report,
)
from engram.store.crypto import Signer

CONTENT = b"%PDF-1.4\n...every byte of the report...\n%%EOF\n"


@pytest.fixture
def signer() -> Signer:
    return Signer.generate()


def test_item14_a_signed_report_verifies_and_keeps_its_content_first(signer: Signer) -> None:
    signed = sign_report(CONTENT, "s_store", signer)
    assert signed.startswith(CONTENT) and signed.endswith(b"%%EOF\n")
    check = check_report(signed, "s_store", signer.verify_key)
    assert check.ok and check.verdict is Verdict.VERIFIED
    assert (
        check.sentence == "This report came from this store and is unaltered since it was signed."
    )


@pytest.mark.parametrize("where", [0, 9, len(CONTENT) - 2])
def test_item14_any_flipped_byte_of_the_content_fails(signer: Signer, where: int) -> None:
    signed = bytearray(sign_report(CONTENT, "s_store", signer))
    signed[where] ^= 0x01
    check = check_report(bytes(signed), "s_store", signer.verify_key)
    assert check.verdict is Verdict.ALTERED and not check.ok
    assert "changed after it was signed" in check.sentence


def test_item14_a_changed_signature_block_fails(signer: Signer) -> None:
    signed = sign_report(CONTENT, "s_store", signer)
    tail = signed.rfind(b"%signature ") + len(b"%signature ")
    forged = (
        signed[:tail] + (b"0" if signed[tail : tail + 1] != b"0" else b"1") + signed[tail + 1 :]
    )
    assert check_report(forged, "s_store", signer.verify_key).verdict is Verdict.ALTERED
    cut = signed[: len(signed) - 7]
    assert check_report(cut, "s_store", signer.verify_key).verdict is Verdict.ALTERED


def test_item14_content_rehashed_by_someone_else_fails(signer: Signer) -> None:
    """Changing the text and its digest line is not enough: the signature is the store's."""
    other = Signer.generate()
    forged = sign_report(CONTENT + b"% one more line\n", "s_store", other)
    assert check_report(forged, "s_store", signer.verify_key).verdict is Verdict.ALTERED


def test_item14_another_stores_report_and_an_unsigned_file_fail(signer: Signer) -> None:
    theirs = sign_report(CONTENT, "s_other", Signer.generate())
    check = check_report(theirs, "s_store", signer.verify_key)
    assert check.verdict is Verdict.OTHER_STORE and "another Engram store" in check.sentence
    unsigned = check_report(CONTENT, "s_store", signer.verify_key)
    assert unsigned.verdict is Verdict.UNSIGNED and "no Engram signature" in unsigned.sentence
    assert MARKER not in CONTENT


def test_item14_the_fingerprint_is_short_and_stable(signer: Signer) -> None:
    printed = key_fingerprint(signer.verify_key)
    assert printed == key_fingerprint(signer.verify_key)
    assert len(printed.split()) == 8 and all(len(g) == 4 for g in printed.split())
