"""Plans, what each may see, and requests per minute (docs/reference/plans.md)."""

from __future__ import annotations

from .errors import ApiError

__all__ = [
    "CAPABILITIES",
    "PLANS",
    "PLAN_LABELS",
    "RATE_LIMITS",
    "REQUIREMENTS",
    "normalize_plan",
    "plan_allows",
    "require",
]

PLANS: tuple[str, ...] = ("free", "pro", "authority", "authority_plus", "business", "enterprise")
PLAN_LABELS = {
    "free": "Free",
    "pro": "Pro",
    "authority": "Authority",
    "authority_plus": "Authority+",
    "business": "Business",
    "enterprise": "Enterprise",
}

# Requests per minute per key. Enterprise is configurable; None means "as configured".
RATE_LIMITS: dict[str, int | None] = {
    "free": 3,
    "pro": 15,
    "authority": 60,
    "authority_plus": 60,
    "business": 300,
    "enterprise": None,
}

# The lowest plan for each capability.
REQUIREMENTS: dict[str, str] = {
    "domains": "pro",
    "results": "pro",  # an extension: the auctions the mirror saw end, on the plans that list them
    "regfree": "authority",
    "pending_delete": "authority_plus",
    "export": "business",
    "webhook": "enterprise",
}

# What each capability lets a key do (the 403 message says it).
CAPABILITIES = {
    "domains": "access /api/domains",
    "results": "access /api/results",
    "regfree": "access source=regfree",
    "pending_delete": "access /api/pending-delete",
    "export": "access /api/export",
    "webhook": "register a new-domain webhook",
}


def normalize_plan(plan: str) -> str:
    """`Authority+`, `authority-plus`, `AUTHORITY_PLUS` -> `authority_plus`."""
    key = str(plan).strip().lower().replace("+", "_plus").replace("-", "_").replace(" ", "_")
    key = key.replace("__", "_")
    if key not in PLANS:
        raise ValueError(f"unknown plan {plan!r}: use one of {', '.join(PLANS)}")
    return key


def plan_allows(plan: str, capability: str) -> bool:
    return PLANS.index(normalize_plan(plan)) >= PLANS.index(REQUIREMENTS[capability])


def require(plan: str, capability: str) -> None:
    """Raise the API's 403 `plan_required` when `plan` is below what `capability` needs."""
    if not plan_allows(plan, capability):
        needed = REQUIREMENTS[capability]
        raise ApiError(
            403,
            {
                "error": "plan_required",
                "message": f"{PLAN_LABELS[needed]} plan required to {CAPABILITIES[capability]}",
                "required_plan": needed,
            },
        )
