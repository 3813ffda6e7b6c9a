"""The recordings most scanner tests read: the bad cases in each format the scanner reads."""

from pathlib import Path

import pytest

from tests.testkit import WRITERS
from tests.testkit import bad_flows


@pytest.fixture
def recordings(tmp_path: Path) -> dict[str, Path]:
    return {name: write(tmp_path / name, bad_flows()) for name, write in WRITERS.items()}
