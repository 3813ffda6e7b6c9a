"""scripts/soak's command line (soaktest.cli)."""

import pytest

from soaktest.cli import main


def test_help_tells_the_phases_options(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--help"])

    out = capsys.readouterr().out
    assert caught.value.code == 0
    for option in ("--flows", "--kill-flows", "--rss-growth", "--no-kill", "--control"):
        assert option in out


@pytest.mark.e2e
def test_a_short_soak_passes_and_says_so(capsys, tmp_path):
    code = main(["--flows", "140", "--kill-flows", "140", "--workdir", str(tmp_path)])

    out = capsys.readouterr().out
    assert code == 0, out
    assert "all checks passed" in out and "FAIL" not in out
