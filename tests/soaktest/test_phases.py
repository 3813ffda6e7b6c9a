"""The soak's checks (soaktest.phases); the phases themselves run in tests/e2e/test_soak_quick.py."""

from soaktest.drive import RssSample
from soaktest.phases import memory_check


def samples(*kib: int) -> list[RssSample]:
    return [RssSample(100 * (i + 1), k) for i, k in enumerate(kib)]


def test_memory_is_flat_within_the_allowed_growth_after_the_warm_up():
    # The first sample is still the warm-up; from 10% of the flows (200) on, memory counts.
    assert memory_check(samples(50_000, 100_000, 105_000, 114_000), 2000, 0.15).ok
    assert not memory_check(samples(50_000, 100_000, 105_000, 116_000), 2000, 0.15).ok


def test_too_few_samples_are_not_judged():
    check = memory_check(samples(1, 2), 1000, 0.0)

    assert check.ok and "not checked" in check.detail
