"""The front doors are enforced, not advisory: pyproject.toml bans every module of
toolnames_core and of toolnames_mitm outside its package (ruff's banned-api), so glue and
scripts import from toolnames_core itself, and the script, harness and scanner from
toolnames_mitm; a new module must join the list, or it would be a side door."""

import tomllib

import pytest

from tests.testkit import REPO_ROOT

ADDON = REPO_ROOT / "addon"
CORE = ADDON / "toolnames_core"
GLUE = ADDON / "toolnames_mitm"


def banned(config_file) -> dict:
    config = tomllib.loads(config_file.read_text())
    lint = config["lint"] if "lint" in config else config["tool"]["ruff"]["lint"]
    return lint["flake8-tidy-imports"]["banned-api"]


def modules_of(package) -> set[str]:
    return {
        f"{package.name}.{path.stem if path.suffix else path.name}"
        for path in package.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py")
        or (path.is_dir() and (path / "__init__.py").exists())
    }


@pytest.mark.parametrize("package", [CORE, GLUE], ids=lambda p: p.name)
def test_every_module_of_a_package_is_banned_outside_it(package):
    modules = modules_of(package)
    listed = set(banned(REPO_ROOT / "pyproject.toml"))
    assert modules and modules <= listed, sorted(modules - listed)


def test_inside_the_core_mitmproxy_and_the_glue_are_banned_instead():
    config = tomllib.loads((CORE / "ruff.toml").read_text())
    assert (CORE / config["extend"]).resolve() == REPO_ROOT / "pyproject.toml"
    assert set(banned(CORE / "ruff.toml")) == {"mitmproxy", "toolnames_mitm"}


def test_inside_the_glue_only_the_cores_front_door_rule_holds():
    config = tomllib.loads((GLUE / "ruff.toml").read_text())
    assert (GLUE / config["extend"]).resolve() == REPO_ROOT / "pyproject.toml"
    project = banned(REPO_ROOT / "pyproject.toml")
    assert banned(GLUE / "ruff.toml") == {
        name: rule for name, rule in project.items() if name.startswith("toolnames_core.")
    }
