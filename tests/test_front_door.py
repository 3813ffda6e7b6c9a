"""The core's front door is enforced, not advisory: pyproject.toml bans every module of
toolnames_core outside it (ruff's banned-api), so glue and scripts import from
toolnames_core itself; a new module must join the list, or it would be a side door."""

import tomllib

from tests.testkit import REPO_ROOT

CORE = REPO_ROOT / "addon" / "toolnames_core"


def test_every_module_of_the_core_is_banned_outside_it():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    banned = config["tool"]["ruff"]["lint"]["flake8-tidy-imports"]["banned-api"]
    modules = {
        f"toolnames_core.{path.stem if path.suffix else path.name}"
        for path in CORE.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py")
        or (path.is_dir() and (path / "__init__.py").exists())
    }
    assert modules and modules <= set(banned), sorted(modules - set(banned))


def test_inside_the_core_mitmproxy_is_banned_instead():
    config = tomllib.loads((CORE / "ruff.toml").read_text())
    assert (CORE / config["extend"]).resolve() == REPO_ROOT / "pyproject.toml"
    assert set(config["lint"]["flake8-tidy-imports"]["banned-api"]) == {"mitmproxy"}
