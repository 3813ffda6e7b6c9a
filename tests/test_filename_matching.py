"""Tests mirror the source tree, as mitmproxy's test/filename_matching.py holds its own:
every module of the addon and of the scripts' packages has its test module at the same
place under tests/, and every test module either mirrors a source module or is named here."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Source roots and where their tests live.
ROOTS = {
    REPO / "addon" / "toolnames_core": REPO / "tests" / "core",
    REPO / "addon" / "toolnames_mitm": REPO / "tests" / "mitm",
    REPO / "scripts" / "scanner": REPO / "tests" / "scanner",
    REPO / "scripts" / "standin": REPO / "tests" / "standin",
    REPO / "scripts" / "samples": REPO / "tests" / "samples",
    REPO / "scripts" / "harness": REPO / "tests" / "harness",
    REPO / "scripts" / "benchmark": REPO / "tests" / "benchmark",
    REPO / "scripts" / "soaktest": REPO / "tests" / "soaktest",
    REPO / "scripts" / "walkthrough": REPO / "tests" / "walkthrough",
}
NOT_MODULES = {"__init__.py", "__main__.py"}
# Test modules about more than one module: properties over every format, processes end to end.
CROSS_CUTTING = {
    REPO / "tests" / "core" / "test_properties.py",
    REPO / "tests" / "e2e",
    REPO / "tests" / "test_citations.py",  # every tracked file
    REPO / "tests" / "test_front_door.py",  # the core's imports from outside, by lint
    REPO / "tests" / "test_behaviour.py",  # the whole addon, before and after the house moves
}


def expected_tests() -> dict[Path, Path]:
    expected = {REPO / "addon" / "toolnames.py": REPO / "tests" / "test_toolnames.py"}
    for source_root, test_root in ROOTS.items():
        for source in source_root.rglob("*.py"):
            if source.name not in NOT_MODULES:
                relative = source.relative_to(source_root)
                expected[source] = test_root / relative.parent / f"test_{relative.name}"
    return expected


def test_every_source_module_has_its_test_module():
    missing = [
        f"{test.relative_to(REPO)} (for {source.relative_to(REPO)})"
        for source, test in expected_tests().items()
        if not test.exists()
    ]
    assert not missing, "missing test modules: " + ", ".join(missing)


def test_every_test_module_mirrors_a_source_module_or_is_cross_cutting():
    mirrored = set(expected_tests().values()) | {Path(__file__).resolve()}
    strays = [
        str(test.relative_to(REPO))
        for test in (REPO / "tests").rglob("test_*.py")
        if test not in mirrored
        and "node_modules" not in test.parts
        and not any(test == c or c in test.parents for c in CROSS_CUTTING)
    ]
    assert not strays, "test modules that mirror no source module: " + ", ".join(strays)


def test_every_script_module_is_in_a_package_with_its_tests():
    # scripts/ holds entry points (shell) over packages: a loose module would have no mirror.
    loose = [
        str(source.relative_to(REPO))
        for source in (REPO / "scripts").rglob("*.py")
        if not any(root in source.parents for root in ROOTS)
    ]
    assert not loose, "modules in scripts/ outside the tested packages: " + ", ".join(loose)
