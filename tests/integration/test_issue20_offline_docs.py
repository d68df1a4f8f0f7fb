"""Issue 20 item 14: offline API docs. A real `engram serve` answers /docs with a page whose
every script, style sheet and icon it serves itself; nothing on the page names another host,
and Swagger UI's validator badge (which would call validator.swagger.io) is off."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from tests.serve_process import served_store


class _References(HTMLParser):
    """Every address the page loads: src and href attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value for name, value in attrs if name in ("src", "href") and value]


def test_issue20_item14_docs_and_every_asset_come_from_the_server(tmp_path: Path) -> None:
    with served_store(tmp_path, {}) as served, httpx.Client(base_url=served.url) as http:
        page = http.get("/docs")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert re.findall(r"https?://", page.text) == []  # no address of any host at all
        assert '"validatorUrl": null' in page.text  # the badge would send ours to a third party
        references = _References()
        references.feed(page.text)
        assert len(references.found) == 3, references.found  # style sheet, icon, script
        ours = urlsplit(served.url).netloc
        loaded = []
        for reference in references.found:
            address = urljoin(f"{served.url}/docs", reference)
            assert urlsplit(address).netloc == ours, reference
            asset = http.get(address)
            assert asset.status_code == 200, reference
            assert len(asset.content) > 1000, reference  # a real asset, not an error page
            loaded.append(asset)
        styles = [a.text for a in loaded if "css" in a.headers["content-type"]]
        assert styles and all(
            set(re.findall(r"url\(\s*[\"']?([a-z]+):", css)) <= {"data"} for css in styles
        )  # the style sheet's images are inline, not fetched
        assert any(
            "SwaggerUIBundle" in a.text for a in loaded if "javascript" in a.headers["content-type"]
        )
        assert http.get("/openapi.json").status_code == 200  # what the page shows
        assert http.get("/redoc").status_code == 404  # FastAPI's other CDN page is off
