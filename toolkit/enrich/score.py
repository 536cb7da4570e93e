"""The quality score: one documented function, 0-100, from a listing's metrics."""

from __future__ import annotations

import math

__all__ = ["quality_score", "WEIGHTS"]

# Each component is brought to 0..1, then weighted; the weights sum to 1.
WEIGHTS = {
    "trust_flow": 0.28,
    "citation_flow": 0.07,
    "domain_authority": 0.15,
    "referring_domains": 0.20,
    "backlinks_count": 0.03,
    "edu_gov": 0.05,
    "age": 0.12,
    "wayback_snapshots": 0.10,
}


_W_TF, _W_CF, _W_DA, _W_RD, _W_BL, _W_EG, _W_AGE, _W_SNAP = WEIGHTS.values()
_LOG_1000, _LOG_100000, _LOG_30 = math.log10(1001), math.log10(100_001), math.log10(31)


def _log_share(value: float | None, log_full: float) -> float:
    """log10(1 + value) / log10(1 + full), capped at 1: diminishing returns."""
    if not value or value <= 0:
        return 0.0
    share = math.log10(1 + value) / log_full
    return share if share < 1.0 else 1.0


def _linear(value: float | None, full: float) -> float:
    if not value or value <= 0:
        return 0.0
    share = value / full
    return share if share < 1.0 else 1.0


def quality_score(
    *,
    trust_flow: int | None,
    citation_flow: int | None,
    domain_authority: int | None,
    referring_domains: int | None,
    backlinks_count: int | None,
    ref_domains_edu: int | None,
    ref_domains_gov: int | None,
    age: int | None,
    wayback_snapshots: int | None,
    is_spammy: bool | None,
    **_ignored: object,
) -> int | None:
    """Quality score 0-100 of a domain, or None when it is not enriched.

    Not enriched means none of Trust Flow, Citation Flow, Domain Authority and referring
    domains is known. Otherwise a missing input counts as 0 and

        base = 100 * ( 0.28 * min(TF / 50, 1)
                     + 0.07 * min(CF / 50, 1)
                     + 0.15 * min(DA / 60, 1)
                     + 0.20 * min(log10(1 + RD) / log10(1 + 1000), 1)
                     + 0.03 * min(log10(1 + backlinks) / log10(1 + 100000), 1)
                     + 0.05 * min(log10(1 + edu + 2 * gov) / log10(1 + 30), 1)
                     + 0.12 * min(age / 20, 1)
                     + 0.10 * min(log10(1 + snapshots) / log10(1 + 1000), 1) )

    Penalties, applied in this order:
      - link-manipulation shape: CF >= 15 and TF < 0.25 * CF  ->  base * (0.7 + 1.2 * TF / CF)
        (0.7 at TF = 0, rising to 1.0 at TF = 0.25 * CF, so the score never falls as TF rises);
      - flagged spammy  ->  min(base * 0.4, 15).

    The result is rounded to an integer in 0..100. It never decreases when TF, DA, RD,
    backlinks, edu/gov links, age or snapshots increase (CF alone may lower it through the
    manipulation penalty). Extra keyword arguments (any other metric) are ignored, so a
    whole record can be passed as `quality_score(**record)`.
    """
    if trust_flow is None and citation_flow is None and domain_authority is None and referring_domains is None:
        return None
    tf = trust_flow or 0
    cf = citation_flow or 0
    edu_gov = (ref_domains_edu or 0) + 2 * (ref_domains_gov or 0)
    base = 100 * (
        _W_TF * _linear(tf, 50)
        + _W_CF * _linear(cf, 50)
        + _W_DA * _linear(domain_authority, 60)
        + _W_RD * _log_share(referring_domains, _LOG_1000)
        + _W_BL * _log_share(backlinks_count, _LOG_100000)
        + _W_EG * _log_share(edu_gov, _LOG_30)
        + _W_AGE * _linear(age, 20)
        + _W_SNAP * _log_share(wayback_snapshots, _LOG_1000)
    )
    if cf >= 15 and tf < 0.25 * cf:
        base *= 0.7 + 1.2 * tf / cf
    if is_spammy:
        base = min(base * 0.4, 15.0)
    return max(0, min(100, int(round(base))))
