"""Expired Domains Toolkit: a local, queryable mirror of expired-domain listings.

    from toolkit import Mirror, ApiError
    m = Mirror("data/mirror.db")
    page = m.search_domains({"tld": ".fr", "tf_min": "20"}, plan="authority")
"""

from .errors import ApiError
from .params import DOMAIN_PARAMS, FREE_PARAMS, PENDING_PARAMS, Param
from .plans import PLANS, normalize_plan
from .query import Mirror

__all__ = [
    "ApiError",
    "DOMAIN_PARAMS",
    "FREE_PARAMS",
    "Mirror",
    "PENDING_PARAMS",
    "PLANS",
    "Param",
    "normalize_plan",
]

__version__ = "0.1.0"
