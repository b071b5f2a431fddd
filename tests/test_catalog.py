"""The composition root: loading every tool module and building the app leaves the heavy libraries unloaded.

The loading runs in a fresh interpreter: the suite's own process has imported most of these libraries already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Libraries only some tools use; their modules import them on first use, which keeps `toolhost serve`'s idle
# memory within bench/idle_rss.py's target (150 MB). A top-level import of any of them brings them back.
DEFERRED_LIBRARIES = frozenset(
    {
        "av",
        "boto3",
        "coloraide",
        "croniter",
        "emoji",
        "feedparser",
        "jinja2",
        "jsonschema",
        "lxml",
        "markdown_it",
        "networkx",
        "numpy",
        "redis",
        "selectolax",
        "nltk",
        "swagger_ui",
        "textblob",
        "trafilatura",
        "twitter_text",
        "yake",
    }
)

LOAD_EVERYTHING = """
import json, sys
import toolhost.cli
from toolhost.app import create_app
from toolhost.catalog import build_registry, load_models
build_registry()
load_models()
create_app()
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


@pytest.mark.slow
def test_the_tools_and_the_app_load_without_the_libraries_deferred_to_first_use(tmp_path: Path) -> None:
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith("TOOLHOST_")},
        "TOOLHOST_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'catalog.db'}",
        "TOOLHOST_MEDIA__ROOT": str(tmp_path / "media"),
    }
    completed = subprocess.run(
        [sys.executable, "-c", LOAD_EVERYTHING],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    loaded = set(json.loads(completed.stdout.strip().splitlines()[-1]))
    assert sorted(loaded & DEFERRED_LIBRARIES) == []
