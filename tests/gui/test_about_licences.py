"""Issue 20 item 3: Help › About lists every component the third-party notices list, with
its licence, and says where their licence texts are."""

from __future__ import annotations

import html

from engram.control import package_data
from engram.gui.about import about_text


def test_issue20_item3_about_lists_every_third_party_component() -> None:
    shown = html.unescape(about_text(None))
    listed = package_data.third_party_index()
    assert len(listed) > 40  # the whole dependency tree, not a handful
    for name, licence in listed:
        assert f"{name} " in shown and f"({licence})" in shown, name
    assert str(package_data.third_party_notices()) in shown
    assert "LGPL" in shown and "Apache License 2.0" in shown
