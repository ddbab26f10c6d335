"""Shared test configuration.

Hypothesis runs derandomized by default so that CI is reproducible: the same examples on
every run. Set HYPOTHESIS_PROFILE=explore for fresh random examples while developing.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
